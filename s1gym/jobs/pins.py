"""What a rerun needs pinned: the versions and file hashes a job's config.json records (``pins``), and how
they differ from this install.

A score moves with more than the seeds: an engine upgrade changes the games (ALFWorld's scores moved with
its library until users pinned it), a refitted model file changes Local's decisions, a chat model's
temperature changes its replies. The job records, when it starts:

- ``s1gym``: its version and, where known, the git commit of the source it ran from (a checkout, or the
  commit pip recorded for a VCS install) and whether that checkout had local changes;
- ``python``: the interpreter's version;
- ``packages``: the installed version of every distribution the family's distribution requires (s1gym's
  dependencies and extras, or a third-party family's), found through ``importlib.metadata``: the engines
  (textworld-express, alfworld, rlcard, miniwob, mujoco...), the model runtimes (torch, onnxruntime...) and
  the libraries around them; a distribution that is not installed is left out;
- ``files``: the SHA-256 of every file in the family's ``data/`` folder (fitted models, shipped games and
  scenes, data sets), by its path ``<package>/data/<name>``; ``model_files`` names the ones the agent reads
  as its model (Local's fitted model, Search's progress estimate);
- ``policy``: the innermost policy's sampling settings when it has any (``sampling()``: a chat model's
  name, temperature, token limits and the SHA-256 of its prompt; never a key).

The policy's and wrappers' resolved options are in the config's ``agents`` already. :func:`differences` lists
every pin that differs from this install, one line each, for ``s1 rerun``.
"""

from __future__ import annotations

import hashlib
import json
import platform
import re
import subprocess
from collections.abc import Mapping
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from s1gym import registration
from s1gym._version import __version__
from s1gym.family import Family

__all__ = ["differences", "job_pins", "sha256_file", "source_commit"]

#: The distribution s1gym's own families live in.
OWN = "s1gym"


def sha256_file(path: Path | str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@cache
def source_commit() -> dict[str, Any]:
    """``{"commit": sha, "dirty": bool}`` of the git checkout s1gym is imported from, else the commit pip
    recorded for a VCS install (``direct_url.json``), else ``{}``."""
    root = Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10, check=True).stdout.strip()
        status = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no", "--",
                                 "s1gym", "policies", "wrappers"], capture_output=True, text=True, timeout=30,
                                check=True).stdout
        if re.fullmatch(r"[0-9a-f]{40}", head):
            return {"commit": head, "dirty": bool(status.strip())}
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        direct = json.loads(metadata.distribution(OWN).read_text("direct_url.json") or "{}")
    except (metadata.PackageNotFoundError, ValueError):
        return {}
    commit = (direct.get("vcs_info") or {}).get("commit_id")
    return {"commit": commit} if commit else {}


#: Extras that hold tools around s1gym (tests, docs), not what an episode runs on: their packages are not pinned.
TOOL_EXTRAS = ("test", "tests", "dev", "docs", "lint")


def _requirement_name(line: str) -> str:
    """The distribution name of a requirement line (``torch>=2.2; extra == "local"`` -> ``torch``); ``""``
    for a requirement of a tool extra (:data:`TOOL_EXTRAS`)."""
    extra = re.search(r"extra\s*==\s*['\"]([^'\"]+)['\"]", line)
    if extra and extra.group(1) in TOOL_EXTRAS:
        return ""
    return re.split(r"[\s<>=!~;\[(@]", line.strip(), maxsplit=1)[0]


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def family_distribution(family_name: str) -> str:
    """The distribution declaring family ``family_name`` (s1gym for its own; a family added at run time
    without a package counts as s1gym's)."""
    for point in metadata.entry_points(group=registration.GROUP):
        if point.name == family_name and point.dist is not None:
            return point.dist.name
    return OWN


@cache
def package_versions(distribution: str) -> dict[str, str]:
    """The installed version of ``distribution`` and of every distribution it requires (any extra), by name."""
    names = {distribution}
    try:
        names.update(_requirement_name(r) for r in metadata.requires(distribution) or ())
    except metadata.PackageNotFoundError:
        pass
    out = {}
    for name in sorted(n for n in names if n):
        version = _version(name)
        if version is not None:
            out[name] = version
    return out


def _data_files(family: Family) -> dict[str, str]:
    """SHA-256 of every file in the family's ``data/`` folder, by ``<package>/data/<relative path>``."""
    try:
        root = family.data_folder
    except (ModuleNotFoundError, TypeError):
        return {}
    if not root.is_dir():
        return {}
    out = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        if path.suffix in (".py", ".pyc"):
            continue
        out[f"{family.package}/data/{path.relative_to(root).as_posix()}"] = sha256_file(path)
    return out


def _model_files(task: str, agent: Mapping[str, Any]) -> list[str]:
    """The family data files (their ``files`` keys) the agent reads as its model."""
    from s1gym.jobs.provenance import _models_used

    wrappers = [(str(w.get("kind")), dict(w.get("options") or {})) for w in agent.get("wrappers") or ()]
    used = _models_used(task, str(agent.get("policy", "?")), dict(agent.get("policy_options") or {}), wrappers)
    found = registration.task_named(task)
    if found is None:
        return []
    family = found[0]
    root = family.data_folder
    return sorted({f"{family.package}/data/{path.relative_to(root).as_posix()}" for _what, path in used
                   if path.is_relative_to(root)})


def _sampling(policy: Any) -> dict[str, Any]:
    """The innermost policy's ``sampling()`` (a chat model's settings), or ``{}``."""
    inner = policy
    while getattr(inner, "policy", None) is not None and hasattr(inner, "kind"):
        inner = inner.policy  # a wrapper: its policy
    method = getattr(inner, "sampling", None)
    if not callable(method):
        return {}
    try:
        return dict(method() or {})
    except Exception:  # noqa: BLE001 - a user policy's sampling() must not stop a job
        return {}


def job_pins(task: str, agent: Mapping[str, Any], policy: Any = None) -> dict[str, Any]:
    """The pins of a job playing task ``task`` (its name as policies see it, or its id) with the agent
    described by ``agent`` (:meth:`AgentDescription.as_dict`); ``policy``, the built policy, gives its
    sampling settings."""
    found = registration.task_named(task)
    family = found[0] if found is not None else None
    pins: dict[str, Any] = {
        "s1gym": {"version": __version__, **source_commit()},
        "python": platform.python_version(),
        "packages": package_versions(family_distribution(family.name) if family else OWN),
        "files": _data_files(family) if family else {},
        "model_files": _model_files(found[1].task_name, agent) if found else [],
    }
    sampling = _sampling(policy)
    if sampling:
        pins["policy"] = sampling
    return pins


def differences(recorded: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    """One line per pin of ``recorded`` (a job's ``pins``) that differs in ``current`` (this install's, from
    :func:`job_pins` with the same task and agent); ``[]`` when every pin matches."""
    lines = []
    was, now = recorded.get("s1gym") or {}, current.get("s1gym") or {}
    if was.get("version") != now.get("version"):
        lines.append(f"s1gym version: job {was.get('version')}, here {now.get('version')}")
    if was.get("commit") and was.get("commit") != now.get("commit"):
        lines.append(f"s1gym commit: job {was.get('commit')}, here {now.get('commit') or 'unknown'}")
    if recorded.get("python") and recorded.get("python") != current.get("python"):
        lines.append(f"python: job {recorded.get('python')}, here {current.get('python')}")
    for group, what in (("packages", "package"), ("files", "file")):
        old, new = recorded.get(group) or {}, current.get(group) or {}
        for name in sorted(set(old) | set(new)):
            if old.get(name) == new.get(name):
                continue
            if group == "files":
                lines.append(f"{what} {name}: " + ("changed (SHA-256 differs)" if name in old and name in new
                                                   else "not in the job" if name in new else "missing here"))
            else:
                lines.append(f"{what} {name}: job {old.get(name, 'not installed')}, here "
                             f"{new.get(name, 'not installed')}")
    old_policy, new_policy = recorded.get("policy") or {}, current.get("policy") or {}
    for key in sorted(set(old_policy) | set(new_policy)):
        if old_policy.get(key) != new_policy.get(key):
            lines.append(f"policy {key}: job {old_policy.get(key)!r}, here {new_policy.get(key)!r}")
    return lines
