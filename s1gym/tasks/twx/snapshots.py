"""TextWorldExpress snapshots inside the JVM: a fork restores a copy of the game object instead of replaying.

TWX has no state copy, so a fork used to regenerate its game and send every move again, one py4j round trip
each (the cost grew with depth: docs/benchmarks.md). ``S1Snapshots.java`` (beside this file) deep-copies a
``PythonInterface``'s game object inside the JVM (with the shared copier, ``s1gym/engines/S1DeepCopy.java``:
a snapshot restored more than once keeps the plan of its copy, so a restore fills a copy from arrays instead
of walking the game with an identity table); this module compiles both at first use with ``javac`` into
s1gym's cache folder (``$S1GYM_CACHE/java/<hash>``; scripts/setup.sh installs a JDK) and the TWX JVM starts
with that folder on its classpath (:func:`helper_classpath`). Without ``javac`` TWX forks replay as before
(one warning says so); ``S1GYM_TWX_SNAPSHOTS=0`` turns snapshots off (A/B runs).

A snapshot lives in the JVM under an int id; :class:`Snapshot` is its Python handle. Dropping the handle
queues the id, and the next call to the helper frees the queued ids in the same round trip (py4j would
otherwise free each Java object with a round trip of its own). The helper also turns Nagle's algorithm off
on the py4j connections it serves: an answer longer than 8 KB (CookingWorld's object tree, which the expert
reads) waited up to 40 ms for a delayed ACK.

A node's children are stepped in one round trip (:meth:`Snapshots.children`): the parent's copy restored and
the move played for each, every child kept as a snapshot; Search and Lookahead get them through
:meth:`s1gym.engines.base.EngineEnv.fork_steps`.

``S1CookingTree.java``, compiled with it, writes CookingWorld's object tree with only what the expert's planner
reads (:meth:`Snapshots.cooking_tree`), and can send it back with a step (:meth:`Snapshots.step_and_cooking_tree`).
"""

from __future__ import annotations

import logging
import os
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from s1gym.engines.jvm import DEEP_COPY_SOURCE, compile_helper

__all__ = ["Snapshot", "Snapshots", "helper_classpath"]

log = logging.getLogger(__name__)

SOURCE = Path(__file__).with_name("S1Snapshots.java")
#: Every helper class, compiled together: the snapshots, CookingWorld's planner tree (S1CookingTree.java) and
#: the deep copier the snapshots use, shared with the other JVM families (s1gym/engines/S1DeepCopy.java)
SOURCES = (SOURCE, Path(__file__).with_name("S1CookingTree.java"), DEEP_COPY_SOURCE)
CLASS = "s1gym.twx.S1Snapshots"
_lock = threading.Lock()
_built: dict[str, str | None] = {}


def enabled() -> bool:
    return os.environ.get("S1GYM_TWX_SNAPSHOTS", "1").strip().lower() not in ("0", "false", "no", "off")


def helper_classpath(jar: str) -> str | None:
    """The folder holding the compiled helper for ``jar`` (compiled now if needed), ``None`` without javac."""
    if not enabled():
        return None
    with _lock:
        if jar in _built:
            return _built[jar]
        _built[jar] = out = compile_helper(SOURCES, jar, "s1gym.twx", "twx", "TextWorldExpress forks replay their "
                                           "moves (slower than in-JVM snapshots)")
        return out


class Snapshot:
    """A game object's state held in the JVM (by id), and the moves that reached it (a JVM that died took
    the snapshot with it: the state is then replayed)."""

    __slots__ = ("__weakref__", "id", "moves", "owner")

    def __init__(self, owner: Snapshots, snap_id: int, moves: tuple[str, ...]) -> None:
        self.owner = owner
        self.id = snap_id
        self.moves = moves
        weakref.finalize(self, owner.pending.append, snap_id)  # freed with the helper's next call


class Snapshots:
    """The helper class in one JVM (one per JVM: ``jvm.cache``), ``None`` when the JVM lacks it."""

    def __init__(self, jvm: Any) -> None:
        from py4j.java_gateway import JavaClass

        self.jvm = jvm
        self.cls = jvm.jvm.s1gym.twx.S1Snapshots
        if not isinstance(self.cls, JavaClass):  # py4j names a missing class as a package
            raise LookupError(f"{CLASS} is not on the JVM's classpath")
        # py4j looks a static member up with a round trip of its own each time: look each up once
        self._take, self._restore = self.cls.take, self.cls.restore
        self._restore_step, self._held = self.cls.restoreStep, self.cls.held
        self._object_tree, self._children = self.cls.objectTree, self.cls.children
        cooking = jvm.jvm.s1gym.twx.S1CookingTree
        self._cooking_tree, self._step_tree = cooking.tree, cooking.step
        self.cls.noDelay()  # long answers on this connection arrive without Nagle's wait (S1Snapshots.java)
        #: ids whose handles were dropped, freed by the next call
        self.pending: list[int] = []

    @classmethod
    def of(cls, jvm: Any) -> Snapshots | None:
        key = "twx-snapshots"
        if key not in jvm.cache:
            helper = None
            if enabled():
                try:
                    helper = cls(jvm)
                except Exception as exc:  # noqa: BLE001 - the helper is an optimisation: replay without it
                    log.warning("s1gym: the TWX snapshot helper did not load (%s); forks replay", exc)
            jvm.cache[key] = helper
        return jvm.cache[key]

    def _frees(self) -> str:
        if not self.pending:
            return ""
        ids, self.pending[:] = list(self.pending), []
        return ",".join(map(str, ids))

    def take(self, pi: Any, moves: tuple[str, ...]) -> Snapshot:
        with self.jvm.lock:
            return Snapshot(self, int(self._take(pi, self._frees())), moves)

    def restore(self, pi: Any, snap: Snapshot) -> bool:
        """``pi`` brought to ``snap``; False when this JVM does not hold it."""
        if snap.owner is not self:
            return False
        with self.jvm.lock:
            return bool(self._restore(pi, snap.id, self._frees()))

    def restore_step(self, pi: Any, snap: Snapshot, move: str) -> str | None:
        """``pi`` brought to ``snap`` and ``move`` played, in one round trip (the step's JSON); ``None`` when
        this JVM does not hold ``snap``."""
        if snap.owner is not self:
            return None
        with self.jvm.lock:
            out = self._restore_step(pi, snap.id, move, self._frees())
        return None if out is None else str(out)

    def children(self, pi: Any, parent: Snapshot, moves: Sequence[str]) -> list[tuple[Snapshot, dict[str, Any]]] | None:
        """For each of ``moves``, ``pi`` brought to ``parent`` and the move played, all in one round trip: the
        child's snapshot and the step's answer (parsed JSON), in order; ``None`` when this JVM does not hold
        ``parent``. ``pi`` is left without a game: restore it before using it again."""
        if parent.owner is not self:
            return None
        if any("\n" in m for m in moves):
            raise ValueError(f"a TWX move holds a newline: {[m for m in moves if chr(10) in m]}")
        with self.jvm.lock:
            out = self._children(pi, parent.id, "\n".join(moves), self._frees())
        if out is None:
            return None
        return [(Snapshot(self, int(i), (*parent.moves, m)), r)
                for m, (i, r) in zip(moves, orjson.loads(str(out)), strict=True)]

    def object_tree(self, pi: Any) -> str:
        """TWX's object tree of ``pi``'s game (JSON) in one round trip, without Nagle's wait."""
        return str(self._object_tree(pi))

    def cooking_tree(self, pi: Any) -> str | None:
        """CookingWorld's object tree with only what the expert's planner reads (S1CookingTree.java: a tenth
        of the full tree's size), ``None`` for other games."""
        out = self._cooking_tree(pi)
        return None if out is None else str(out)

    def step_and_cooking_tree(self, pi: Any, move: str) -> tuple[str, str | None]:
        """``pi.stepJSON(move)`` and then :meth:`cooking_tree`, in one round trip: (the step's JSON, the tree)."""
        out = str(self._step_tree(pi, move))
        colon = out.index(":")
        n = int(out[:colon])
        return out[colon + 1 + n:], (out[colon + 1:colon + 1 + n] if n else None)

    def held(self) -> int:
        """Snapshots the JVM holds (after freeing the dropped ones)."""
        with self.jvm.lock:
            return int(self._held(self._frees()))
