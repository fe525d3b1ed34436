"""What a task family declares: its tasks as rows, and for each task what the generic layers read.

A family is a folder (``s1gym/tasks/<family>/``, or a package of its own) holding everything it knows. It
declares one :class:`Family` in a module that imports nothing heavy, and names it in the entry-point group
``s1gym.families`` of its distribution's metadata (s1gym's own families are declared that way too)::

    [project.entry-points."s1gym.families"]
    race = "s1race.family:FAMILY"

:mod:`s1gym.registration` finds every declared family, registers its gym ids and answers the generic
layers' questions by a task's name (``Situation.task``): Local's fitted model (:attr:`Task.model`),
Search's progress estimate (:attr:`Task.progress_tokens`), Rethink's stall patience, the replay's view. The
env itself carries none of these settings: they belong to the family's declaration, read in one place.

Strings of the form ``"module:attr"`` name code that is imported on first use, so declaring a family (and
``import s1gym``) loads no engine.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from importlib import import_module, resources
from pathlib import Path
from typing import Any

from s1gym.checks import non_negative_float
from s1gym.errors import S1GymError

__all__ = ["GAIN_PATIENCE", "Family", "FamilyError", "StateFeatures", "Task", "resolve"]


#: Search's ``gain_patience`` on a task whose family declares none (:attr:`Task.gain_patience`)
GAIN_PATIENCE = 1.0


class FamilyError(S1GymError, ValueError):
    """A family's declaration is malformed, or names code or data that is not there."""


def resolve(ref: str | Any) -> Any:
    """``"module:attr"`` imported (``attr`` may be dotted); anything else is returned as it is."""
    if not isinstance(ref, str):
        return ref
    module, sep, attr = ref.partition(":")
    if not sep or not module or not attr:
        raise FamilyError(f"{ref!r} is not a 'module:attr' reference")
    obj: Any = import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


@dataclass(frozen=True)
class StateFeatures:
    """A task's structured state as a fixed-size vector in [0, 1] (what an RL agent reads instead of the
    text): ``read(env)`` gives ``size`` floats from the unwrapped env's public state."""

    size: int
    read: Callable[[Any], Any]


@dataclass(frozen=True)
class Task:
    """One gym id of a family and what the generic layers read about it."""

    #: the gym id (``s1/CookingWorld-v0``; a third-party family may use its own namespace)
    id: str
    #: ``"module:Class"`` of the env (imported by ``gym.make``)
    entry_point: str
    #: the task's name as policies see it (``Situation.task``); default: the id without namespace and version
    name: str | None = None
    #: keyword arguments ``gym.make`` passes (an id that names one task of a family env: a MiniWoB++ page)
    options: Mapping[str, Any] = field(default_factory=dict)
    #: listed by ``s1 list`` and walked by the contract tests (an alias of a listed id is not)
    listed: bool = True
    #: the family's data file (in its ``data/`` folder) holding Local's fitted model of this task; its
    #: ``"progress"`` object, when present, is Search's learned progress estimate
    model: str | None = None
    #: how the estimate in :attr:`model` reads a situation (a function or ``"module:function"`` returning
    #: the situation's tokens); ``None``: the task ships no progress estimate (Search uses the score)
    progress_tokens: Callable[..., Any] | str | None = None
    #: Search's progress estimate given as code instead (a ``callable(situation) -> moves left >= 0`` or its
    #: ``"module:function"``); it wins over :attr:`model`'s ``"progress"`` weights
    progress: Callable[..., float] | str | None = None
    #: Rethink's stall patience (acts without a score change); ``None``: the task never stalls
    stall_patience: int | None = None
    #: Search's ``gain_patience`` on this task when the search's options leave it to the task (their default):
    #: after a gain found in c calls, at most this times c more calls; ``None``: the whole budget
    gain_patience: float | None = GAIN_PATIENCE
    #: the replay's view of a position (``"module:function"``, :mod:`s1gym.reporting.replay.views`); ``None``:
    #: the transcript
    view: str | None = None
    #: Local's dense feature weights on this task when it plays without a fitted model (``"module:ATTR"``)
    weights: str | None = None
    #: the task's structured state as numbers for RL (``"module:ATTR"`` of a :class:`StateFeatures`;
    #: :class:`s1gym.rl.TaskFeatures` reads it); ``None``: only the text
    features: str | None = None

    def __post_init__(self) -> None:
        if self.gain_patience is not None:
            try:
                non_negative_float("gain_patience", self.gain_patience)
            except ValueError:
                raise FamilyError(f"task {self.id!r} declares gain_patience={self.gain_patience!r}: give a number "
                                  ">= 0 (Search's calls after a gain, as a share of the calls before it) or None "
                                  "(the whole budget)") from None

    @property
    def short(self) -> str:
        """The id without its namespace and version (``CookingWorld``)."""
        tail = self.id.rsplit("/", 1)[-1]
        head, sep, version = tail.rpartition("-v")
        return head if sep and version.isdigit() else tail

    @property
    def task_name(self) -> str:
        return self.name or self.short


#: the fields of a :class:`Task` that name code (``"module:attr"``)
_REFERENCES = ("entry_point", "progress_tokens", "progress", "view", "weights", "features")


@dataclass(frozen=True)
class Family:
    """A family's declaration: its name, the package holding its folder, its tasks, its model classes."""

    #: the family's name (``twx``, ``alfworld``, ...): ``s1 list`` groups by it
    name: str
    #: the import package of the family's folder; its data files are in ``<package>/data/``
    package: str
    tasks: tuple[Task, ...]
    #: a model file's ``"kind"`` -> ``"module:Class"`` of the :class:`s1gym.models.fitted.FittedModel` reading it
    models: Mapping[str, str] = field(default_factory=dict)
    #: one line on what the family is
    doc: str = ""

    def __post_init__(self) -> None:
        ids = [t.id for t in self.tasks]
        if len(set(ids)) != len(ids):
            raise FamilyError(f"family {self.name!r} declares an id twice: {sorted({i for i in ids if ids.count(i) > 1})}")
        # "module:attr" references may be relative to the family's package (".env:MyEnv")
        absolute = self._absolute
        object.__setattr__(self, "tasks", tuple(
            replace(t, **{f: absolute(getattr(t, f)) for f in _REFERENCES if isinstance(getattr(t, f), str)})
            for t in self.tasks))
        object.__setattr__(self, "models", {kind: absolute(ref) for kind, ref in self.models.items()})

    @classmethod
    def here(cls, module: str, tasks: tuple[Task, ...], **declared: Any) -> Family:
        """The family whose ``family.py`` is ``module`` (pass ``__name__``): named after its folder, its
        package that folder's (so its references may be relative: ``".env:MyEnv"``)."""
        package = module.rpartition(".")[0]
        return cls(name=package.rpartition(".")[2], package=package, tasks=tasks, **declared)

    def _absolute(self, ref: str) -> str:
        return f"{self.package}{ref}" if ref.startswith(".") else ref

    @property
    def data_folder(self) -> Path:
        """The family's ``data/`` folder, shipped with its package (its fitted models, games, data sets)."""
        return Path(str(resources.files(self.package) / "data"))

    def data(self, name: str) -> Path:
        """The path of the family's data file ``name`` (in ``<package>/data/``, shipped with the package)."""
        ref = self.data_folder / name
        if not ref.is_file():
            raise FamilyError(f"family {self.name!r}: its data file {self.package}/data/{name} is missing; "
                              "reinstall the package that provides it")
        return Path(str(ref))
