"""The registry of task families: found through the ``s1gym.families`` entry-point group, registered with
Gymnasium, and asked by the generic layers about a task by its name.

Every family (s1gym's own too) names its :class:`~s1gym.family.Family` in its distribution's metadata, the
way pytest finds its plugins; a pip-installed package adds tasks, models and replay views without touching
s1gym. Envs are registered with ``order_enforce=False`` and ``disable_env_checker=True`` and no
``max_episode_steps`` (each task handles its own step limit), so ``gym.make`` returns the task env itself
and ``env.fork()`` is a direct call. ``gym.make("s1gym:s1/CookingWorld-v0")`` works too (Gymnasium imports
the module named before the colon).

The questions the generic layers ask, each answered from the family's declaration: :func:`local_model`
(Local), :func:`progress_estimate` and :func:`gain_patience` (Search), :func:`stall_patience` (Rethink),
:func:`replay_view` (``s1 replay``), :func:`local_weights` (Local without a fitted model), :func:`model_file`
(job provenance).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Mapping
from functools import cache
from importlib import import_module, metadata
from pathlib import Path
from typing import Any

import gymnasium as gym

from s1gym.family import GAIN_PATIENCE, Family, FamilyError, Task, resolve

__all__ = ["GROUP", "add_family", "remove_family", "aliases", "env_class", "env_class_or_none", "families",
           "family_of", "gain_patience", "load_model", "local_model", "local_weights", "model_file",
           "progress_estimate", "register_all", "replay_view", "resolve_id", "stall_patience",
           "state_features", "task_ids", "task_named"]

#: The entry-point group every family is declared in.
GROUP = "s1gym.families"


#: families added at run time (:func:`add_family`), after the declared ones
_added: list[Family] = []


def add_family(family: Family) -> None:
    """Add a family without an installed package (a notebook, a test): its ids are registered now, and the
    generic layers find its declarations like a declared family's. A family of the same name is replaced."""
    if not isinstance(family, Family):
        raise FamilyError(f"add_family takes an s1gym.family.Family, got {type(family).__name__}")
    _added[:] = [f for f in _added if f.name != family.name] + [family]
    _forget()
    register_all()


def remove_family(name: str) -> None:
    """Take back a family :func:`add_family` added (its gym ids stay registered with Gymnasium)."""
    _added[:] = [f for f in _added if f.name != name]
    _forget()


def _forget() -> None:
    for cached in (families, _tasks, _by_name, model_classes, local_model, progress_estimate):
        cached.cache_clear()


@cache
def families() -> tuple[Family, ...]:
    """Every declared family, s1gym's own first, each once (a family that fails to load is left out with a
    warning naming it, so one broken plugin never stops ``import s1gym``)."""
    points = sorted(metadata.entry_points(group=GROUP), key=lambda ep: (ep.dist is None or ep.dist.name != "s1gym",))
    found: dict[str, Family] = {}
    for point in points:
        try:
            family = point.load()
            family = family() if callable(family) and not isinstance(family, Family) else family
            if not isinstance(family, Family):
                raise FamilyError(f"{point.value} is a {type(family).__name__}, not an s1gym.family.Family")
        except Exception as err:  # noqa: BLE001 - a broken plugin is reported, the rest still register
            warnings.warn(f"s1gym: the family {point.name!r} ({point.value}) did not load and is left out: {err}",
                          stacklevel=2)
            continue
        if family.name in found:
            warnings.warn(f"s1gym: two families are named {family.name!r}; {point.value} is left out (the "
                          f"first is {found[family.name].package})", stacklevel=2)
            continue
        found[family.name] = family
    found.update({family.name: family for family in _added})
    if not found:
        warnings.warn("s1gym: no task family is declared in the 's1gym.families' entry-point group; s1gym's "
                      "metadata is missing (install it: pip install -e . or pip install s1gym)", stacklevel=2)
    return tuple(found.values())


@cache
def _tasks() -> dict[str, tuple[Family, Task]]:
    """gym id -> (family, task), every declared id."""
    out: dict[str, tuple[Family, Task]] = {}
    for family in families():
        for task in family.tasks:
            if task.id in out:
                warnings.warn(f"s1gym: {task.id} is declared by the families {out[task.id][0].name!r} and "
                              f"{family.name!r}; the first is kept", stacklevel=2)
                continue
            out[task.id] = (family, task)
    return out


@cache
def _by_name() -> dict[str, tuple[Family, Task]]:
    """Situation.task -> (family, task); a listed id wins over an alias of the same name."""
    out: dict[str, tuple[Family, Task]] = {}
    for family, task in sorted(_tasks().values(), key=lambda ft: not ft[1].listed):
        out.setdefault(task.task_name, (family, task))
    return out


def register_all() -> None:
    """Register every declared id with Gymnasium (ids already registered are left as they are)."""
    for _family, task in _tasks().values():
        if task.id not in gym.registry:
            gym.register(id=task.id, entry_point=task.entry_point, kwargs=dict(task.options),
                         order_enforce=False, disable_env_checker=True)


def task_ids() -> list[str]:
    """The listed ids (``s1 list``), family by family."""
    return [task.id for _family, task in _tasks().values() if task.listed]


def aliases() -> dict[str, tuple[str, dict[str, Any]]]:
    """Ids that name one task of a listed id: alias -> (the listed id with the same entry point, options)."""
    listed = {task.entry_point: task.id for _f, task in _tasks().values() if task.listed}
    return {task.id: (listed.get(task.entry_point, task.id), dict(task.options))
            for _f, task in _tasks().values() if not task.listed}


def task_named(name: str) -> tuple[Family, Task] | None:
    """The family and row of a task by its name as policies see it (``Situation.task``), or by its id."""
    return _by_name().get(name) or _tasks().get(name)


def family_of(name: str) -> Family | None:
    found = task_named(name)
    return found[0] if found else None


def env_class(env_id: str) -> type:
    """The env class behind an id without making an env: s1gym's short names and ids, any registered
    id, or ``module:id`` (the module registers the id when imported)."""
    module, sep, short = env_id.partition(":")
    if sep and module != "s1gym":
        import_module(module)
        env_id = short
    else:
        try:
            env_id = resolve_id(env_id)
        except ValueError:
            if env_id not in gym.registry:
                raise
    entry = _tasks()[env_id][1].entry_point if env_id in _tasks() else gym.spec(env_id).entry_point
    cls = resolve(entry) if isinstance(entry, str) else entry
    if not isinstance(cls, type):
        raise ValueError(f"{env_id}: its entry point {entry!r} is not a class")
    return cls


def env_class_or_none(env_id: str) -> type | None:
    """:func:`env_class`, or ``None`` when the id cannot be resolved (readers of old job folders)."""
    try:
        return env_class(env_id)
    except Exception:  # noqa: BLE001 - an unknown or unimportable task only loses its task metrics
        return None


def resolve_id(task: str) -> str:
    """Accept ``s1/CookingWorld-v0``, ``CookingWorld-v0`` or ``CookingWorld`` (any case), and the
    per-task aliases (``MiniWoB-click-button``)."""
    wanted = task.lower().removeprefix("s1gym:")
    for env_id in _tasks():
        full = env_id.lower()
        short = full.rsplit("/", 1)[-1]
        if wanted in (full, short, short.removesuffix("-v0")):
            return env_id
    known = ", ".join(task.short for _f, task in _tasks().values() if task.listed)
    raise ValueError(f"unknown task {task!r}; known tasks: {known}")


# ---------------------------------------------------------------- what the generic layers ask


def model_file(name: str) -> Path | None:
    """The data file holding Local's shipped model (and Search's estimate) of task ``name``, or ``None``."""
    found = task_named(name)
    if found is None or found[1].model is None:
        return None
    family, task = found
    return family.data(task.model)


@cache
def model_classes() -> dict[str, type]:
    """A model file's ``kind`` -> the class reading it, over every family."""
    out: dict[str, type] = {}
    for family in families():
        for kind, ref in family.models.items():
            out.setdefault(kind, ref)
    return out


def load_model(path: str | Path) -> Any:
    """The fitted model in a model file of any family, read by the class its ``kind`` names."""
    data = json.loads(Path(path).read_text())
    kind = data.get("kind") if isinstance(data, Mapping) else None
    known = model_classes()
    if kind not in known:
        raise FamilyError(f"{path}: its model kind {kind!r} is not one a family declares "
                          f"(known: {', '.join(sorted(known))}); install the family that fits it, or refit the file")
    return resolve(known[kind]).from_json(data, path)


@cache
def local_model(name: str) -> Any:
    """Local's shipped fitted model of task ``name`` (loaded once), or ``None`` when it has none."""
    path = model_file(name)
    return None if path is None else load_model(path)


def local_weights(name: str) -> Mapping[str, float] | None:
    """Local's dense weights for task ``name`` without a fitted model, when the family declares some."""
    found = task_named(name)
    return None if found is None or found[1].weights is None else resolve(found[1].weights)


@cache
def progress_estimate(name: str) -> Callable[[Any], float] | None:
    """Search's learned progress estimate of task ``name`` (moves left, >= 0), or ``None`` when it ships none."""
    from s1gym.core.estimates import load_progress

    found = task_named(name)
    if found is not None and found[1].progress is not None:
        return resolve(found[1].progress)
    if found is None or found[1].progress_tokens is None or found[1].model is None:
        return None
    family, task = found
    return load_progress(family.data(task.model), resolve(task.progress_tokens))


def state_features(name: str) -> Any:
    """The structured state features of task ``name`` (a :class:`s1gym.family.StateFeatures`), or ``None``."""
    found = task_named(name)
    return None if found is None or found[1].features is None else resolve(found[1].features)


def stall_patience(name: str) -> int | None:
    """Rethink's stall patience on task ``name`` (``None``: it never stalls, or the task is not declared)."""
    found = task_named(name)
    return None if found is None else found[1].stall_patience


def gain_patience(name: str) -> float | None:
    """Search's gain patience on task ``name`` as its family declares it (:data:`s1gym.family.GAIN_PATIENCE`
    for a task not declared)."""
    found = task_named(name)
    return GAIN_PATIENCE if found is None else found[1].gain_patience


def replay_view(name: str) -> tuple[str, Callable[..., Any]] | None:
    """(view kind, function) the replay draws task ``name`` with, or ``None`` for the transcript."""
    found = task_named(name)
    if found is None or found[1].view is None:
        return None
    ref = found[1].view
    return ref.rpartition(":")[2].removeprefix("view_"), resolve(ref)
