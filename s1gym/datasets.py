"""What every data-driven task shares: reading a user's rows, the cache folder, the one error.

A family's loaders (the trivia bank: :mod:`s1gym.tasks.games.trivia`; the labelled texts:
:mod:`s1gym.tasks.text.data_files`) read their files with :func:`read_rows`, key their caches with
:func:`file_key` and fail with a :class:`DataError` that names the file, the problem and the fix: a
missing file, a missing column (:func:`require`), an empty set. Data a family ships lives in its own
``data/`` folder (:meth:`s1gym.family.Family.data`); what is fetched or built later goes under
:func:`cache_root`.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from s1gym.errors import S1GymError

__all__ = ["DataError", "cache_root", "file_key", "read_rows", "require"]


class DataError(S1GymError, ValueError):
    """A data file cannot be used; the message names the file, the problem and the fix."""


def cache_root() -> Path:
    """s1gym's cache folder: ``$S1GYM_CACHE``, else ``$XDG_CACHE_HOME/s1gym`` (``~/.cache/s1gym``)."""
    root = (
        os.environ.get("S1GYM_CACHE")
        or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "s1gym"
    )
    return Path(root)


# ------------------------------------------------------------------- rows
def read_rows(path: str | os.PathLike[str], *, what: str = "data") -> tuple[list[dict[str, Any]], list[str]]:
    """Rows of a JSONL or CSV file (by suffix) and the column names seen.

    ``what`` names the option the file came from, so errors point at it.
    """
    path = Path(path).expanduser()
    if not path.is_file():
        hint = " (it is a directory)" if path.is_dir() else ""
        raise DataError(
            f"{what}: file {str(path)!r} does not exist{hint}; pass the path of a .jsonl or .csv file"
        )
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        rows = []
        with path.open(encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as e:
                    raise DataError(f"{what}: {path} line {number} is not valid JSON ({e.msg})") from None
                if not isinstance(row, dict):
                    raise DataError(
                        f"{what}: {path} line {number} is a JSON {type(row).__name__}, not an object"
                    )
                rows.append(row)
        columns = sorted({k for row in rows for k in row})
    elif suffix in (".csv", ".tsv"):
        with path.open(encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f, delimiter="\t" if suffix == ".tsv" else ",")
            rows = list(reader)
            columns = list(reader.fieldnames or [])
    else:
        raise DataError(
            f"{what}: {path} has suffix {suffix!r}; use .jsonl (one JSON object a line) or .csv with a header"
        )
    if not rows:
        raise DataError(f"{what}: {path} is empty (no rows); it needs at least one labelled row")
    return rows, columns


def file_key(path: str | os.PathLike[str]) -> tuple[str, int]:
    """Cache key of a file: resolved path and modification time (a missing file raises the clear error).

    A loader caches what it read under this key (``functools.lru_cache``), so making many envs, or
    forking them, never re-reads a file, and an edited file is read again."""
    p = Path(path).expanduser()
    try:
        return str(p.resolve()), p.stat().st_mtime_ns
    except OSError:
        read_rows(p)  # raises the DataError naming the missing file
        raise


def require(
    row: Mapping[str, Any], column: str, number: int, path: Path, columns: Sequence[str], what: str
) -> Any:
    """Row ``number``'s value in ``column``; a :class:`DataError` naming the file, row and column otherwise."""
    value = row.get(column)
    if value is None:
        if column not in columns:
            raise DataError(
                f"{what}: {path} has no column {column!r}; its columns are {list(columns)}. "
                f"Name the right one with the task's *_column option."
            )
        raise DataError(f"{what}: {path} row {number} has no value in column {column!r}")
    return value
