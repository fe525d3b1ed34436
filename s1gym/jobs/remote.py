"""Job folders at an fsspec URL (``s3://bucket/jobs``, ``gs://...``, ``memory://...``): where a cluster's
driver writes and every node and a laptop read.

A remote folder of jobs is worked on through a local mirror: :meth:`Mirror.pull` makes the mirror hold what
the remote holds (bringing down the files it lacks or holds at another size, dropping those the remote no
longer has), the job runs on the mirror exactly as on a local disk (atomic writes, resume, tables, replays),
and every file it writes goes up at once with :meth:`Mirror.push` -- a trial's files as it finishes,
``result.json`` when it is rewritten, ``summary.json`` at the end. A job killed mid-way has on the remote
every trial it finished, and ``--resume`` from any machine pulls them and plays the rest. Readers (``s1
table``, ``s1 replay``) share one mirror a URL in s1gym's cache (``$S1GYM_CACHE/remote/<hash of the URL>``); a
running job gets a mirror of its own there, removed when the job finishes, so a table read meanwhile never
touches the files of a job being written.

Credentials and the endpoint come from the storage's own settings, never from s1gym's options (so they never
reach a job folder): for S3, ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY`` and, for an S3-compatible server
such as SeaweedFS or MinIO, ``AWS_ENDPOINT_URL``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from s1gym.datasets import cache_root
from s1gym.errors import S1GymError

__all__ = ["Mirror", "RemoteJobsError", "is_remote"]


class RemoteJobsError(S1GymError, ValueError):
    """A folder of jobs at a URL cannot be reached (no fsspec driver for it, or the storage refused); the
    message says what to install or check."""


def is_remote(location: str | Path) -> bool:
    """A URL of an fsspec storage other than the local disk (``s3://...``; not ``file://`` or a path)."""
    text = str(location)
    return "://" in text and not text.startswith("file://") and not isinstance(location, Path)


class Mirror:
    """A local mirror of the folder of jobs at ``url`` (see the module docstring)."""

    def __init__(self, url: str, *, private: bool = False) -> None:
        try:
            import fsspec

            self.fs, self.root = fsspec.core.url_to_fs(url)
        except ImportError as exc:  # fsspec knows the protocol but its driver is not installed
            raise RemoteJobsError(
                f"{url}: this storage needs a package s1gym does not have here ({exc}); for s3:// install "
                "the remote extra: pip install 's1gym[remote]'"
            ) from None
        except ValueError as exc:
            raise RemoteJobsError(f"{url}: not a storage URL fsspec knows ({exc}); use e.g. s3://bucket/jobs") from None
        self.url = url.rstrip("/")
        self.root = self.root.rstrip("/")
        shared = cache_root() / "remote" / hashlib.sha256(self.url.encode()).hexdigest()[:16]
        if private:  # a running job's own mirror (see the module docstring)
            (shared / "runs").mkdir(parents=True, exist_ok=True)
            self.local = Path(tempfile.mkdtemp(prefix=f"{os.getpid()}-", dir=shared / "runs"))
        else:
            self.local = shared / "shared"
        self.private = private

    def __repr__(self) -> str:
        return f"Mirror({self.url!r} -> {self.local})"

    def pull(self) -> Path:
        """Bring the remote folder's files down into the mirror (those it lacks or holds at another size);
        returns the mirror's folder. A remote folder that does not exist yet is an empty one."""
        try:
            remote = self.fs.find(self.root, detail=True) if self.fs.exists(self.root) else {}
        except Exception as exc:  # noqa: BLE001  (botocore, aiohttp, gcsfs... each raise their own)
            raise self._unreachable("read", exc) from None
        self.local.mkdir(parents=True, exist_ok=True)
        wanted = {path[len(self.root):].lstrip("/"): info for path, info in remote.items()
                  if info.get("type") != "directory"}
        for f in [p for p in self.local.rglob("*") if p.is_file()]:
            if f.relative_to(self.local).as_posix() not in wanted:
                f.unlink()  # gone from the remote
        for rel, info in wanted.items():
            path, target = f"{self.root}/{rel}", self.local / rel
            if target.is_file() and target.stat().st_size == info.get("size"):
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                self.fs.get_file(path, str(target))
            except Exception as exc:  # noqa: BLE001
                raise self._unreachable("read", exc) from None
        return self.local

    def push(self, local: Path) -> None:
        """Upload ``local`` (a file or a folder inside the mirror) to the same place on the remote."""
        local = Path(local)
        files = [local] if local.is_file() else sorted(p for p in local.rglob("*") if p.is_file())
        for f in files:
            rel = f.relative_to(self.local).as_posix()
            if f.name.startswith(".") and f.name.endswith(".tmp"):
                continue  # an atomic write's temp file
            try:
                self.fs.put_file(str(f), f"{self.root}/{rel}")
            except Exception as exc:  # noqa: BLE001
                raise self._unreachable("write", exc) from None

    def discard(self) -> None:
        """Remove a running job's own mirror (everything in it is on the remote)."""
        if self.private:
            shutil.rmtree(self.local, ignore_errors=True)

    def url_of(self, local: Path) -> str:
        """The URL of a path inside the mirror."""
        rel = Path(local).relative_to(self.local).as_posix()
        return self.url if rel == "." else f"{self.url}/{rel}"

    def _unreachable(self, what: str, exc: Any) -> RemoteJobsError:
        return RemoteJobsError(
            f"cannot {what} {self.url} ({type(exc).__name__}: {exc}); check the storage's address and credentials "
            "(for S3: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, and AWS_ENDPOINT_URL for an S3-compatible server) "
            "and that the bucket exists; a job stopped by it continues with --resume"
        )
