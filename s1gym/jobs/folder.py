"""A job folder: found (discovery), opened new or resumed, trials written as they finish, the summary at the end."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

from s1gym.errors import S1GymError
from s1gym.jobs.files import (
    atomic_write_bytes,
    atomic_write_json,
    now_iso,
    read_json,
    remove_stale_temp_files,
    scrub,
)
from s1gym.jobs.harbor import eval_key, job_result, new_id, seed_of, trial_metadata, trial_name
from s1gym.jobs.provenance import config_notices
from s1gym.jobs.remote import Mirror, is_remote
from s1gym.jobs.summary import summarize_trials

__all__ = [
    "JobFolder", "JobFolderError", "JobWriteError", "KeptTrial", "check_job_name", "find_jobs", "is_job_dir",
    "iter_job_trials", "load_trials", "summary_digest", "trial_digest",
]


def default_job_name() -> str:
    """Harbor's default job name: the local start time."""
    return datetime.now().strftime("%Y-%m-%d__%H-%M-%S")


def _fresh_job_path(out: Path) -> Path:
    """A new, empty ``out/<start time>`` folder, made atomically; a job started in the same second (two
    quick runs in a row, or in parallel) gets ``<start time>-2``, ``-3``... instead of failing."""
    base = default_job_name()
    for k in range(1, 10_000):
        path = out / (base if k == 1 else f"{base}-{k}")
        try:
            path.mkdir(parents=True)
            return path
        except FileExistsError:
            continue
        except OSError as exc:
            raise JobFolderError(_unwritable(path, exc)) from exc
    raise JobFolderError(f"{out}: 10,000 jobs started at {base}; pass --job NAME")


def is_job_dir(folder: Path) -> bool:
    config = folder / "config.json"
    if not config.is_file():
        return False
    try:
        data = read_json(config)
    except (OSError, json.JSONDecodeError):
        return False
    return isinstance(data, dict) and "job_name" in data and "s1gym" in data


def find_jobs(roots: Iterable[Path | str]) -> list[Path]:
    """Every s1gym job folder at or under ``roots`` (not descending into jobs), sorted. A root may be an
    fsspec URL (``s3://bucket/jobs``): its jobs are read from a local mirror (:mod:`s1gym.jobs.remote`)."""
    found: list[Path] = []
    for root in roots:
        root = Mirror(str(root)).pull() if is_remote(root) else Path(root)
        if not root.exists():
            raise FileNotFoundError(
                f"{root}: no such folder; pass a job folder or a folder of jobs (e.g. ./jobs)"
            )
        if not root.is_dir():
            raise NotADirectoryError(
                f"{root} is a file, not a folder; pass a job folder or a folder of jobs (e.g. ./jobs)"
            )
        if is_job_dir(root):
            found.append(root)
            continue
        for dirpath, dirnames, _ in os.walk(root):
            here = Path(dirpath)
            if here != root and is_job_dir(here):
                found.append(here)
                dirnames[:] = []
            else:
                dirnames.sort()
    return sorted(set(found))


def load_trials(job_dir: Path, digest: Callable[[dict[str, Any]], dict[str, Any]] | None = None
                ) -> list[dict[str, Any]]:
    """The finished trials of a job (their ``result.json``), sorted by seed; ``digest`` (e.g.
    :func:`summary_digest`) keeps part of each as it is read, so a job of many trials is summarised in
    little memory."""
    trials = []
    for result in job_dir.glob("*/result.json"):
        try:
            data = read_json(result)
        except (OSError, json.JSONDecodeError):
            continue  # cannot happen with atomic writes; a hand-edited file is skipped, not fatal
        if isinstance(data, dict) and "trial_name" in data:
            trials.append(digest(data) if digest else data)
    return sorted(trials, key=lambda t: (seed_of(t), t["trial_name"]))


def iter_job_trials(job_dirs: Iterable[Path], digest: Callable[[dict[str, Any]], dict[str, Any]] | None = None
                    ) -> Iterator[tuple[dict[str, Any], list[dict[str, Any]]]]:
    for job_dir in job_dirs:
        yield read_json(job_dir / "config.json"), load_trials(job_dir, digest)


class KeptTrial(NamedTuple):
    """What a running job keeps in memory of a finished trial: its name, seed, reward, error, tokens, cost
    and calls, which its result.json, ``pending``, ``errors`` and the progress bar read -- not its
    per-decision lists (latencies, search times) or final info; a tuple of a few hundred bytes, the repeated
    values shared, so the driver of a job of 100,000 episodes stays the same size. The summary reads the
    trials' files (:func:`load_trials` with :func:`summary_digest`)."""

    name: str
    seed: int
    reward: float | None  # verifier_result.rewards.reward; None: the trial has no verifier_result
    error: tuple[Any, Any, Any] | None  # exception_type, exception_message, kind
    usage: tuple[Any, Any, Any, Any]  # n_input_tokens, n_output_tokens, cost_usd, n_calls

    @classmethod
    def of(cls, result: Mapping[str, Any]) -> KeptTrial:
        usage = result.get("agent_result") or {}
        error = result.get("exception_info")
        verifier = result.get("verifier_result")
        reward = ((verifier.get("rewards") or {}).get("reward") if isinstance(verifier, Mapping) else None)
        return cls(result["trial_name"], seed_of(result), _shared(reward),
                   tuple(error.get(k) for k in ("exception_type", "exception_message", "kind")) if error else None,
                   _shared((usage.get("n_input_tokens"), usage.get("n_output_tokens"), usage.get("cost_usd"),
                            trial_metadata(result).get("n_calls"))))

    def as_result(self) -> dict[str, Any]:
        """The trial as a result.json's readers see it (:func:`trial_digest`'s shape)."""
        tin, tout, cost, calls = self.usage
        return {
            "trial_name": self.name,
            "config": {"task": {"seed": self.seed}},
            "verifier_result": None if self.reward is None else {"rewards": {"reward": self.reward}},
            "exception_info": (dict(zip(("exception_type", "exception_message", "kind"), self.error, strict=True))
                               if self.error else None),
            "agent_result": {"n_input_tokens": tin, "n_output_tokens": tout, "cost_usd": cost,
                             "metadata": {"n_calls": calls}},
        }


_SHARED: dict[Any, Any] = {}


def _shared(value: Any) -> Any:
    """One object for each of the first 4,096 distinct values kept (rewards, usage tuples repeat)."""
    try:
        return _SHARED.setdefault(value, value) if len(_SHARED) < 4096 else _SHARED.get(value, value)
    except TypeError:  # an unhashable value (a hand-edited result.json) is kept as it is
        return value


def trial_digest(result: Mapping[str, Any]) -> dict[str, Any]:
    """A trial's name, seed, reward, usage, calls and error in result.json's shape (:class:`KeptTrial`)."""
    return KeptTrial.of(result).as_result()


def summary_digest(result: Mapping[str, Any]) -> dict[str, Any]:
    """What a summary or a table row reads of a trial (:func:`s1gym.jobs.summary.summarize_trials`): the
    :func:`trial_digest`, the whole ``metadata``, the kinds of its earlier attempts and when it finished --
    not its config, agent description or tracebacks (most of a result.json, the same in every trial)."""
    out = trial_digest(result)
    out["agent_result"]["metadata"] = dict(trial_metadata(result))
    out["retries"] = [{"kind": a.get("kind")} for a in result.get("retries") or ()]
    out["finished_at"] = result.get("finished_at")
    return out


class JobFolderError(S1GymError, ValueError):
    """A job folder cannot be used as asked (exists, is a file, ran something else); the message says how."""


class JobWriteError(S1GymError, OSError):
    """A file of a running job could not be written (a full disk, an I/O error): the job stops, the files
    written before stay complete, ``--resume`` continues once the cause is fixed."""

    def __init__(self, job: Path, what: str, cause: OSError) -> None:
        reason = cause.strerror or str(cause) or type(cause).__name__
        super().__init__(
            cause.errno, f"cannot write {what} in {job} ({reason}); the trials written before are complete: "
            f"fix the cause (free space on that disk, or pass another --out) and rerun with --resume"
        )
        self.job, self.what = job, what

    def __str__(self) -> str:
        return str(self.strerror)


#: The parts of a job config that must match to resume it (not the orchestrator).
RESUME_KEYS = ("agents", "tasks", "seeds")


class JobFolder:
    """One job's folder: opened (new or resumed), trials written as they finish, the summary at the end.

    Only the driver process uses it. ``trials`` are the finished trials on disk
    (their ``result.json``), by trial name.
    """

    #: How often a running job rewrites its result.json (it grows with the job).
    RESULT_EVERY_S = 1.0

    def __init__(self, path: Path, config: Mapping[str, Any], job_id: str, started_at: str,
                 mirror: Mirror | None = None) -> None:
        self.path = path
        self.config = dict(config)
        self.id = job_id
        self.started_at = started_at
        #: the finished trials by name, as :class:`KeptTrial` keeps them
        self.trials: dict[str, KeptTrial] = {t["trial_name"]: KeptTrial.of(t) for t in load_trials(path)}
        self._last_write = 0.0
        #: the remote folder of jobs this one lives in (``--out s3://...``): every file written goes up
        self.mirror = mirror

    @property
    def location(self) -> str:
        """Where the job lives: its folder, or its URL for a job at a remote ``--out``."""
        return self.mirror.url_of(self.path) if self.mirror else str(self.path)

    @classmethod
    def open(cls, out: Path | str, name: str | None, config: Mapping[str, Any], *, resume: bool) -> JobFolder:
        """A new job folder ``out/name`` (default name: the start time), or, with ``resume``, the job of
        that name or the latest job in ``out`` that ran the same task, options, agent and seeds. ``out`` may
        be an fsspec URL (``s3://bucket/jobs``): the job runs on a local mirror of it and every file written
        goes up at once (:mod:`s1gym.jobs.remote`)."""
        if name is not None:
            check_job_name(name)
        if not is_remote(out):
            return cls._open(Path(out), str(out), name, config, resume, None)
        mirror = Mirror(str(out), private=True)
        try:
            return cls._open(mirror.pull(), str(out), name, config, resume, mirror)
        except JobFolderError as exc:  # said of the URL, not of the mirror's folder
            mirror.discard()
            raise JobFolderError(str(exc).replace(str(mirror.local), mirror.url)) from None
        except BaseException:
            mirror.discard()
            raise

    @classmethod
    def _open(cls, out: Path, jobs_dir: str, name: str | None, config: Mapping[str, Any], resume: bool,
              mirror: Mirror | None) -> JobFolder:
        found = _resumable(out, name, config) if resume else None
        _check_out_dir(out)
        path = found or (out / name if name else _fresh_job_path(out))
        config = {**config, "job_name": path.name, "jobs_dir": jobs_dir}
        if _unborn(path):  # a run killed while writing the job's first file left only its temp file
            remove_stale_temp_files(path)
        empty = path.is_dir() and not any(path.iterdir())  # nothing recorded: the job starts from its first trial
        previous: dict[str, Any] = {}
        if resume and path.exists() and not empty:
            if not is_job_dir(path):
                raise JobFolderError(f"--resume: {path} is not a job folder (no config.json with job_name)")
            if _comparable(read_json(path / "config.json")) != _comparable(config):
                raise JobFolderError(
                    f"--resume: {path} ran a different task, options, policy or seed range; "
                    "start a new job (another --job NAME) instead"
                )
            remove_stale_temp_files(path)
            previous = read_json(path / "result.json") if (path / "result.json").exists() else {}
        elif path.exists() and not empty:
            raise JobFolderError(f"{path} already exists; pass --resume to continue it or another --job NAME")
        try:
            if not previous or read_json(path / "config.json") != config:  # a resume leaves an equal config be
                atomic_write_json(path / "config.json", config)
        except OSError as exc:
            raise JobFolderError(_unwritable(path, exc)) from exc
        folder = cls(path, config, previous.get("id") or new_id(), previous.get("started_at") or now_iso(), mirror)
        folder.push(path / "config.json")
        folder.write_result(None)  # counts from the trials on disk (a killed run may have left more)
        return folder

    def push(self, path: Path) -> None:
        """Upload a file or folder of this job to its remote ``--out`` (nothing for a local job)."""
        if self.mirror is not None:
            self.mirror.push(path)

    def pending(self, seeds: Iterable[int], env_id: str, retry_errors: bool = False) -> list[int]:
        """The seeds without a finished trial (``retry_errors``: errored trials count as not finished)."""
        if retry_errors:
            self.trials = {k: t for k, t in self.trials.items() if not t.error}
        return [s for s in seeds if trial_name(env_id, s) not in self.trials]

    def write_trial(self, files: Mapping[str, Any]) -> None:
        """config first, the screenshots and the episode next, ``result.json`` last: its presence marks
        a finished trial. Each file is written whole or not at all (temp file, ``os.replace``); a
        write that fails (a full disk, an I/O error) is a :class:`JobWriteError` and leaves the files
        written before intact."""
        trial_dir = self.path / files["name"]
        try:
            atomic_write_json(trial_dir / "config.json", files["config"])
            frames_dir = trial_dir / "agent" / "frames"
            if frames_dir.is_dir():  # a replayed trial: frames of an earlier attempt must not linger
                for old in frames_dir.glob("*.png"):
                    old.unlink()
            for rel, png in (files.get("frames") or {}).items():
                atomic_write_bytes(trial_dir / "agent" / rel, png)
            atomic_write_json(trial_dir / "agent" / "episode.json", files["episode"], indent=None)
            atomic_write_json(trial_dir / "result.json", files["result"])
        except OSError as exc:
            raise JobWriteError(self.path, trial_dir.name, exc) from exc
        self.push(trial_dir)
        self.trials[files["name"]] = KeptTrial.of(files["result"])
        try:
            self.write_result(None, every_s=self.RESULT_EVERY_S)
        except OSError as exc:
            raise JobWriteError(self.path, "result.json", exc) from exc

    def write_result(self, finished_at: str | None, every_s: float = 0.0) -> None:
        """The job's result.json from the trials on hand; while running at most once per ``every_s``."""
        if finished_at is None and time.monotonic() - self._last_write < every_s:
            return
        self._last_write = time.monotonic()
        agent = (self.config.get("agents") or [{}])[0]
        task = (self.config.get("tasks") or [{}])[0]
        atomic_write_json(
            self.path / "result.json",
            job_result(
                job_id=self.id,
                started_at=self.started_at,
                finished_at=finished_at,
                n_total_trials=int((self.config.get("seeds") or {}).get("count", len(self.trials))),
                trials=[t.as_result() for t in self.trials.values()],
                key=eval_key(str(agent.get("name", "?")), str(task.get("name", "?"))),
            ),
        )
        self.push(self.path / "result.json")

    def finish(self, summary: Mapping[str, Any], env_cls: type | None) -> dict[str, Any]:
        """Write the final result.json and summary.json; returns the summary (scrubbed)."""
        self.write_result(now_iso())
        full = {**summary, "job_name": self.path.name, "job_dir": self.location,
                **summarize_trials(load_trials(self.path, summary_digest), env_cls),
                "fitted_on_played": config_notices(self.config, env_cls)}
        atomic_write_json(self.path / "summary.json", full)
        self.push(self.path / "summary.json")
        return scrub(full)

    def close(self) -> None:
        """Done with the folder: a remote job's own mirror goes (everything in it was pushed)."""
        if self.mirror is not None:
            self.mirror.discard()

    def errors(self) -> dict[str, list[str]]:
        """Distinct error messages of the errored trials -> the trials that raised them."""
        out: dict[str, list[str]] = {}
        for name, t in sorted(self.trials.items()):
            if t.error:
                out.setdefault(f"{t.error[0]}: {t.error[1]}", []).append(name)
        return out


def check_job_name(name: str) -> None:
    """A job name is one folder name inside the jobs folder: not empty, no path separator, not ``.`` or
    ``..`` (so ``--job`` never writes outside ``--out``)."""
    seps = {"/", os.sep, os.altsep} - {None}
    if not isinstance(name, str) or name in ("", ".", "..") or any(sep in name for sep in seps) or "\0" in name:
        raise JobFolderError(
            f"--job {name!r}: a job name is one folder name inside --out (no '/', not '.' or '..', not an "
            "absolute path), e.g. --job cooking-local; choose the parent folder with --out"
        )


def _resumable(out: Path, name: str | None, config: Mapping[str, Any]) -> Path:
    """The job ``--resume`` continues, which must exist: the one named, else the latest that ran the same
    setup."""
    if name is None:
        found = _find_resumable(out, config)
        if found is None:
            raise JobFolderError(
                f"--resume: no job in {out} ran this task, options, policy and seeds; drop --resume to start a "
                "new job, or name the job to continue with --job NAME"
            )
        return found
    if not (out / name).exists():
        jobs = sorted(d.name for d in out.iterdir() if is_job_dir(d)) if out.is_dir() else []
        raise JobFolderError(
            f"--resume: there is no job {name!r} in {out} (its jobs: {', '.join(jobs[:10]) or 'none'}"
            f"{' ...' if len(jobs) > 10 else ''}); drop --resume to start it, or pass the --out and --job of "
            "the job to continue"
        )
    return out / name


def _unborn(path: Path) -> bool:
    """A job folder holding nothing but the temp files of a run killed before its config.json was whole."""
    try:
        entries = list(path.iterdir())
    except OSError:
        return False
    return bool(entries) and all(e.is_file() and e.name.startswith(".") and e.name.endswith(".tmp") for e in entries)


def _check_out_dir(out: Path) -> None:
    """A clear error when the jobs folder cannot hold jobs (a file, unwritable, a missing parent we cannot make)."""
    if out.exists() and not out.is_dir():
        raise JobFolderError(f"--out {out} is a file, not a folder; pass a folder for the job folders (e.g. --out jobs)")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise JobFolderError(_unwritable(out, exc)) from exc
    if not os.access(out, os.W_OK | os.X_OK):
        raise JobFolderError(f"--out {out}: no permission to write there; pass a folder you can write (e.g. --out jobs)")


def _unwritable(path: Path, exc: OSError) -> str:
    return (
        f"cannot write the job folder at {path} ({exc.strerror or exc}); "
        "pass --out with a folder you can write (e.g. --out jobs or --out ~/s1gym-jobs)"
    )


def _comparable(config: Mapping[str, Any]) -> dict[str, Any]:
    data = scrub(config)
    return {k: data.get(k) for k in RESUME_KEYS}


def _find_resumable(out: Path, config: Mapping[str, Any]) -> Path | None:
    if not out.is_dir():
        return None
    want = _comparable(config)
    matches = [d for d in out.iterdir() if is_job_dir(d) and _comparable(read_json(d / "config.json")) == want]
    return max(matches, key=lambda d: d.stat().st_mtime, default=None)
