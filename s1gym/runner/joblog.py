"""The job's log file, ``<job>/job.log``: every failure in full, so the terminal gets one line a failed trial.

While a job runs, :func:`capture` sends this process's log records (a library's tracebacks: py4j logs one per
failed call to a dead JVM), exceptions nobody could raise (finalizers, threads) and the runner's own notes
(each failed or retried trial with its traceback) to the file instead of the terminal. A worker process
sends its whole stderr there (:func:`redirect_stderr`), and the engines it starts (a JVM, a browser) inherit
it. Ray workers' output stays on the cluster (``log_to_driver=False``); their trials carry their tracebacks.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

__all__ = ["LOG_NAME", "capture", "log", "note_trial", "redirect_stderr"]

LOG_NAME = "job.log"
log = logging.getLogger("s1gym.run")
_FORMAT = "%(asctime)s %(levelname)s %(name)s [pid %(process)d] %(message)s"


@contextlib.contextmanager
def capture(path: Path) -> Iterator[Path]:
    """Log records, unraisable exceptions and uncaught thread exceptions go to ``path`` for the block."""
    handler = logging.FileHandler(path, encoding="utf-8", delay=True)
    handler.setFormatter(logging.Formatter(_FORMAT))
    root = logging.getLogger()
    root.addHandler(handler)
    level = log.level
    log.setLevel(logging.INFO)
    old_unraisable, old_thread = sys.unraisablehook, threading.excepthook

    def unraisable(args: Any) -> None:
        exc = args.exc_value if args.exc_value is not None else args.exc_type
        log.warning("exception ignored in %r: %s", args.object, args.err_msg or "",
                    exc_info=(args.exc_type, exc, args.exc_traceback) if exc is not None else None)

    def thread_exception(args: Any) -> None:
        if args.exc_type is SystemExit:
            return
        name = args.thread.name if args.thread is not None else "?"
        log.error("uncaught exception in thread %s", name,
                  exc_info=(args.exc_type, args.exc_value, args.exc_traceback))

    sys.unraisablehook, threading.excepthook = unraisable, thread_exception
    try:
        yield path
    finally:
        sys.unraisablehook, threading.excepthook = old_unraisable, old_thread
        log.setLevel(level)
        root.removeHandler(handler)
        handler.close()


def redirect_stderr(path: Path | str) -> None:
    """This process's stderr (file descriptor 2, so its children's too) appends to ``path`` from now on."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        sys.stderr.flush()
        os.dup2(fd, 2)
    finally:
        os.close(fd)
    logging.basicConfig(level=logging.WARNING, format=_FORMAT, stream=sys.stderr)


def note_trial(result: Mapping[str, Any]) -> str | None:
    """Log a failed or retried trial in full (every attempt's traceback); the one line for the terminal."""
    name, seed = result.get("trial_name", "?"), (result.get("config") or {}).get("task", {}).get("seed")
    retries = list(result.get("retries") or ())
    for attempt in retries:
        log.warning("%s (seed %s): attempt %s failed (%s), played again:\n%s", name, seed,
                    attempt.get("attempt"), attempt.get("kind"),
                    attempt.get("exception_traceback") or attempt.get("exception_message"))
    info = result.get("exception_info")
    if info:
        log.error("%s (seed %s) failed:\n%s", name, seed,
                  info.get("exception_traceback") or f"{info['exception_type']}: {info['exception_message']}")
        again = f" after {len(retries)} retr{'y' if len(retries) == 1 else 'ies'}" if retries else ""
        return (f"{name} (seed {seed}) failed{again}: {info['exception_type']}: "
                f"{_first_line(info['exception_message'])}")
    if retries:
        last = retries[-1]
        return (f"{name} (seed {seed}) completed on attempt {len(retries) + 1} after "
                f"{last['exception_type']}: {_first_line(last['exception_message'])}")
    return None


def _first_line(text: str, limit: int = 240) -> str:
    line = (str(text).strip().splitlines() or [""])[0]
    return line if len(line) <= limit else line[: limit - 3] + "..."
