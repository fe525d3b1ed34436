"""Files that survive a killed run and never leak a secret: scrubbing, atomic writes, JSON reads."""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import os
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["REDACTED", "atomic_write_bytes", "atomic_write_json", "now_iso", "read_json", "remove_stale_temp_files",
           "scrub", "to_jsonable"]

REDACTED = "[REDACTED]"
#: Keys whose (non-numeric) values are never written: API keys, tokens, secrets,
#: auth headers, passwords. ``max_tokens`` or ``n_input_tokens`` do not match.
_SECRET_KEY = re.compile(
    r"(^|[_\-.])(api[_\-]?key|key|token|access[_\-]?token|secret|client[_\-]?secret|authorization|"
    r"password|passwd|cookie|bearer)$|^x[_\-]api[_\-]key$|secret",
    re.IGNORECASE,
)
#: Environment variables whose values count as secrets wherever they appear.
_SECRET_ENV = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|AUTH|COOKIE|CREDENTIAL", re.IGNORECASE)
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=\-]{8,}")
#: Shortest env value treated as a secret (shorter ones, like "1", would redact noise).
_MIN_SECRET_LEN = 8


def now_iso() -> str:
    """An aware UTC timestamp, ISO 8601 (what Harbor's pydantic models serialize)."""
    return datetime.now(UTC).isoformat()


def to_jsonable(value: Any, _scrub_keys: bool = False) -> Any:
    """Plain JSON types from numpy arrays/scalars, dataclasses, tuples, sets, paths.

    Anything else becomes its ``repr`` so an unexpected object in a wrapper's
    info never aborts a trial. With ``_scrub_keys`` the same walk also redacts
    values under secret-looking keys (one pass: this runs on every tick).
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            k = str(k)
            if _scrub_keys and _is_secret_key(k) and not isinstance(v, (bool, int, float, type(None))):
                out[k] = REDACTED
            else:
                out[k] = to_jsonable(v, _scrub_keys)
        return out
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_jsonable(v, _scrub_keys) for v in value]
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist(), _scrub_keys)
    if isinstance(value, np.generic):
        return to_jsonable(value.item())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_jsonable({f.name: getattr(value, f.name) for f in dataclasses.fields(value)}, _scrub_keys)
    if isinstance(value, Path):
        return str(value)
    return repr(value)


@functools.lru_cache(maxsize=4096)
def _is_secret_key(key: str) -> bool:
    return bool(_SECRET_KEY.search(key))


def _secret_values() -> list[str]:
    """The values of secret-looking environment variables, longest first. Read on every file a job writes,
    so the list is kept while the environment is unchanged (a compare of CPython's byte mapping, not a
    walk of ``os.environ``, which decodes every variable)."""
    global _secrets_for, _secrets
    data = getattr(os.environ, "_data", None)
    if data is not None and data == _secrets_for:
        return _secrets
    values = {v for k, v in os.environ.items() if _SECRET_ENV.search(k) and len(v.strip()) >= _MIN_SECRET_LEN}
    _secrets = sorted(values, key=len, reverse=True)
    _secrets_for = dict(data) if data is not None else None
    return _secrets


_secrets_for: dict[Any, Any] | None = None
_secrets: list[str] = []


def scrub(value: Any) -> Any:
    """A JSON-able copy with secrets removed.

    Three layers, because a secret can hide anywhere: values under secret-looking
    keys (``api_key``, ``Authorization``...) become ``[REDACTED]``; ``Bearer``/``Basic``
    credentials inside any string are cut; and the value of every secret-looking
    environment variable (``TYPESAFE_API_KEY``...) is replaced wherever it occurs.
    """
    return json.loads(_dumps(value, indent=None))


def _dumps(value: Any, indent: int | None) -> str:
    separators = (",", ":") if indent is None else None  # compact files (episodes) without padding
    return _scrub_text(
        json.dumps(to_jsonable(value, _scrub_keys=True), indent=indent, separators=separators, ensure_ascii=False)
    )


def _scrub_text(text: str) -> str:
    for secret in _secret_values():
        for form in {secret, json.dumps(secret, ensure_ascii=False)[1:-1]}:
            if form in text:
                text = text.replace(form, REDACTED)
    return _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", text)


def atomic_write_json(path: Path | str, data: Any, *, indent: int | None = 2, fsync: bool = False) -> None:
    """Write scrubbed JSON to ``path`` via a temp file in the same folder and ``os.replace``.

    ``os.replace`` is atomic on POSIX and Windows within one file system, so a
    reader (or a resumed run after SIGKILL) sees the old file or the new one.
    That covers killed runs without ``fsync`` (which costs more per file than a
    whole Blackjack hand: docs/benchmarks.md); pass ``fsync=True`` to also survive power loss.
    ``indent=None`` writes compact JSON with the C encoder (episode logs).
    """
    atomic_write_bytes(path, (_dumps(data, indent) + "\n").encode("utf-8"), fsync=fsync)


def atomic_write_bytes(path: Path | str, data: bytes, *, fsync: bool = False) -> None:
    """Write ``data`` to ``path`` atomically (temp file in the same folder, then ``os.replace``), the folder
    made if missing. The temp file is created with mode 0666 less the umask, as ``open()`` would make it."""
    path = Path(path)
    tmp, fd = _create_temp(path)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            if fsync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _create_temp(path: Path) -> tuple[str, int]:
    """A new ``.NAME.XXXXXXXX.tmp`` beside ``path`` (a random name; ``O_EXCL``, so never another's file)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        tmp = os.path.join(path.parent, f".{path.name}.{os.urandom(4).hex()}.tmp")
        try:
            return tmp, os.open(tmp, flags, 0o666)
        except FileExistsError:
            continue
        except FileNotFoundError:
            path.parent.mkdir(parents=True, exist_ok=True)
    raise FileExistsError(f"no free temporary name beside {path} after 100 tries")


def read_json(path: Path | str) -> Any:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def remove_stale_temp_files(folder: Path) -> int:
    """Delete ``.*.tmp`` files a killed run left behind; returns how many."""
    n = 0
    for tmp in folder.rglob(".*.tmp"):
        tmp.unlink(missing_ok=True)
        n += 1
    return n
