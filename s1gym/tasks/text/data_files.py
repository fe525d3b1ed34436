"""The labelled-text tasks' rows: texts with labels from a user's JSONL or CSV file (TicketRouter's tickets,
InjectionGuard's texts), each checked against the task's labels.

Loaded sets are cached by (path, modification time, arguments) (:func:`s1gym.datasets.file_key`); every
problem is a :class:`s1gym.datasets.DataError` naming the file, the row and the fix.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from s1gym.datasets import DataError, file_key, read_rows, require

__all__ = ["LabelledText", "load_labelled_texts"]


@dataclass(frozen=True)
class LabelledText:
    """One text with its (already mapped) label."""

    text: str
    label: str


def load_labelled_texts(
    path: str | os.PathLike[str],
    *,
    text_column: str = "text",
    label_column: str = "label",
    labels: Sequence[str] | None = None,
    label_map: Callable[[Any], str | None] | None = None,
    what: str = "data",
) -> tuple[LabelledText, ...]:
    """Texts with labels from a JSONL or CSV file.

    ``label_map`` turns a raw cell into a label (``None``: unknown); ``labels``
    restricts the labels that may occur. Either way an unknown label is an
    error that names the row, the value and the allowed ones. Other columns
    (e.g. the ticket set's ``response``) are never read.
    """
    key = file_key(path)
    return _load_labelled(
        key, text_column, label_column, tuple(labels) if labels is not None else None, label_map, what
    )


@lru_cache(maxsize=16)
def _load_labelled(
    key: tuple[str, int],
    text_column: str,
    label_column: str,
    labels: tuple[str, ...] | None,
    label_map: Callable[[Any], str | None] | None,
    what: str,
) -> tuple[LabelledText, ...]:
    path = Path(key[0])
    rows, columns = read_rows(path, what=what)
    allowed = set(labels) if labels is not None else None
    out = []
    for number, row in enumerate(rows, 1):
        text = str(require(row, text_column, number, path, columns, what)).strip()
        raw = require(row, label_column, number, path, columns, what)
        label = label_map(raw) if label_map is not None else str(raw).strip()
        if label is None or label == "" or (allowed is not None and label not in allowed):
            shown = sorted(allowed) if allowed is not None else "a non-empty value"
            raise DataError(
                f"{what}: {path} row {number} has unknown label {raw!r} in column {label_column!r}; "
                f"allowed: {shown}. Fix the row or the task's label options."
            )
        if not text:
            raise DataError(f"{what}: {path} row {number} has an empty text in column {text_column!r}")
        out.append(LabelledText(text, label))
    return tuple(out)
