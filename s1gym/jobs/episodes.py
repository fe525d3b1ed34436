"""The episode file (``agent/episode.json``): format 2 stores each distinct text and list once;
:func:`read_episode` is the one reader (formats 1 and 2)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from s1gym.jobs.files import read_json

__all__ = ["EPISODE_FORMAT", "compact_episode", "expand_episode", "frame_path", "read_episode",
           "with_frame_path"]

#: The episode file format :func:`compact_episode` writes (files without ``format`` are format 1).
EPISODE_FORMAT = 2
#: Tick fields holding text (stored as lists of paragraph ids) and lists (stored as ids into ``lists``).
_TEXT_FIELDS = ("observation", "feedback")
_LIST_FIELDS = ("candidates", "probabilities")


def compact_episode(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The episode document in format 2: every distinct paragraph and list stored once.

    Format 1 repeated the whole observation, the candidate list and the
    probabilities at every tick (a 100-tick CookingWorld episode of the flat-odds
    policy was 254 KB). Format 2 keeps a ``texts`` table of the distinct
    paragraphs (observations split at blank lines) and a ``lists`` table of the
    distinct candidate and probability lists; a tick's ``observation`` and
    ``feedback`` are lists of paragraph ids, its ``candidates`` and
    ``probabilities`` ids into ``lists``; ``final.observation`` likewise.
    Lossless: :func:`expand_episode` gives back the format-1 document exactly.
    """
    texts: dict[str, int] = {}
    lists: dict[tuple[Any, ...], int] = {}

    def paragraphs(text: str) -> list[int]:
        return [texts.setdefault(p, len(texts)) for p in text.split("\n\n")]

    def compact(record: Mapping[str, Any]) -> dict[str, Any]:
        out = dict(record)
        for key in _TEXT_FIELDS:
            if isinstance(out.get(key), str):
                out[key] = paragraphs(out[key])
        for key in _LIST_FIELDS:
            if isinstance(out.get(key), list):
                out[key] = lists.setdefault(tuple(out[key]), len(lists))
        return out

    ticks = [compact(t) for t in doc.get("ticks") or ()]
    final = compact(doc.get("final") or {})
    head = {k: v for k, v in doc.items() if k not in ("format", "ticks", "final")}
    return {"format": EPISODE_FORMAT, **head, "texts": list(texts), "lists": [list(x) for x in lists],
            "ticks": ticks, "final": final}


def expand_episode(doc: Mapping[str, Any]) -> dict[str, Any]:
    """An episode document with every text and list in place (format 1), from format 1 or 2."""
    version = doc.get("format", 1)
    if version == 1:
        return dict(doc)
    if version != EPISODE_FORMAT:
        raise ValueError(
            f"episode file format {version!r} is not known to this s1gym (it reads 1 and {EPISODE_FORMAT}); "
            "upgrade s1gym to read it"
        )
    texts, lists = doc["texts"], doc["lists"]

    def expand(record: Mapping[str, Any]) -> dict[str, Any]:
        out = dict(record)
        for key in _TEXT_FIELDS:
            if isinstance(out.get(key), list):
                out[key] = "\n\n".join(texts[i] for i in out[key])
        for key in _LIST_FIELDS:
            if isinstance(out.get(key), int):
                out[key] = list(lists[out[key]])
        return out

    head = {k: v for k, v in doc.items() if k not in ("format", "texts", "lists", "ticks", "final")}
    return {**head, "ticks": [expand(t) for t in doc["ticks"]], "final": expand(doc.get("final") or {})}


def read_episode(path: Path | str) -> dict[str, Any]:
    """A trial's episode (``path``: the trial folder or its ``agent/episode.json``), texts and lists in
    place whatever format wrote it; every reader of episode files goes through here."""
    path = Path(path)
    if path.is_dir():
        path = path / "agent" / "episode.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no episode file; pass a trial folder (<job>/<task>__<seed>) or its agent/episode.json")
    return expand_episode(read_json(path))


def frame_path(index: int) -> str:
    """Where screenshot ``index`` of a trial lives, relative to its ``agent/`` folder."""
    return f"frames/{index:04d}.png"


def with_frame_path(record: Mapping[str, Any]) -> dict[str, Any]:
    """``record`` with its frame index (an int) as the frame's path in the trial folder (no frame: none)."""
    out = dict(record)
    if isinstance(out.get("frame"), int):
        out["frame"] = frame_path(out["frame"])
    elif "frame" in out and out["frame"] is None:
        del out["frame"]
    return out
