"""The family's Java helper (``S1ScienceWorld.java``, beside this file): a step and its reads in one round trip,
exact replays, and snapshots of a game inside the JVM.

The Python ``scienceworld`` API makes one py4j round trip per read, and py4j's Java side sent the valid list
(about 27 KB) in 8 KB pieces that each waited up to 40 ms for a delayed ACK (Nagle's algorithm). The helper
answers a step with everything the engine reads, on a connection with Nagle's algorithm off, and deep-copies a
game (global random generator, id counter and simplifications included; the copy is the families' shared
``s1gym/engines/S1DeepCopy.java``, compiled with it) so a fork restores a copy instead of replaying its moves
(docs/benchmarks.md, ScienceWorld). This module compiles it at first use with ``javac``
into s1gym's cache folder (``$S1GYM_CACHE/java/<hash>``) and the engine's JVM starts with that folder on its
classpath. Without ``javac`` (one warning says so) or with ``S1GYM_SW_HELPER=0`` the engine reads through
ScienceWorld's own calls and forks replay, as before.

The valid list travels as compact rows (``S1ScienceWorld.validWire``: a JSON array of each row's text, template
id, object ids and type ids; ScienceWorld's JSON repeats its four keys on every row and is twice as long),
made by the same call with the same draws; :func:`.engine.valid_list` reads either form. A list the Python
side holds already (the last one sent in full: sibling children often show the same list) is named by its
number instead of being sent again (``S1ScienceWorld.sent``, :meth:`Helper._valid`).

A snapshot lives in the JVM under an int id; :class:`Snapshot` is its Python handle. Dropping the handle
queues the id and the helper's next call frees it in the same round trip.

A state's children are stepped in one round trip (:meth:`Helper.children`: for each move the parent restored
and the move stepped with every read; a child is kept as its parent and its move until it is restored), as
TextWorldExpress's helper does; Lookahead and Search get them through
:meth:`s1gym.engines.base.EngineEnv.fork_steps`.
"""

from __future__ import annotations

import logging
import os
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from s1gym.engines.jvm import DEEP_COPY_SOURCE, compile_helper

__all__ = ["RS", "SAME", "SEP", "Helper", "Snapshot", "helper_classpath"]

log = logging.getLogger(__name__)

SOURCE = Path(__file__).with_name("S1ScienceWorld.java")
#: the separator of the helper's answer's fields (no ScienceWorld text holds it)
SEP = "\x01"
#: the separator of :meth:`Helper.children`'s answers (no ScienceWorld text holds it either)
RS = "\x02"
#: marks a valid list's number in an answer (``S1ScienceWorld.sent``)
SAME = "\x06"
#: children stepped per JVM call (:meth:`Helper.children`): one answer of hundreds of children (tens of MB)
#: cost more to build, send and split than the round trips it saved (docs/benchmarks.md)
CHILDREN_PER_CALL = 32
_lock = threading.Lock()
_built: dict[str, str | None] = {}


def enabled() -> bool:
    return os.environ.get("S1GYM_SW_HELPER", "1").strip().lower() not in ("0", "false", "no", "off")


def helper_classpath(jar: str) -> str | None:
    """The folder holding the compiled helper for ``jar`` (compiled now if needed); ``None`` without javac or
    when ``S1GYM_SW_HELPER=0``."""
    if not enabled():
        return None
    with _lock:
        if jar not in _built:
            _built[jar] = compile_helper([SOURCE, DEEP_COPY_SOURCE], jar, "s1gym.scienceworld", "scienceworld",
                                         "ScienceWorld steps read through py4j one call at a time and forks replay "
                                         "(slower)")
        return _built[jar]


class Snapshot:
    """A game's state held in the JVM (by id), with the game and the moves that reached it (a JVM that died
    took the snapshot with it: the state is then replayed).

    A child stepped with its siblings (:meth:`Helper.children`) is held as its ``parent`` and its move (``id``
    None): its first restore steps the move again from the parent, with every read, and snapshots the state
    it reaches (a state's hundreds of children are rarely all stepped further: Lookahead drops them all)."""

    __slots__ = ("__weakref__", "game", "id", "moves", "owner", "parent")

    def __init__(self, owner: Helper, snap_id: int | None, game: Any, moves: tuple[str, ...],
                 parent: Snapshot | None = None) -> None:
        self.owner, self.game, self.moves, self.parent = owner, game, moves, parent
        self.id: int | None = None
        if snap_id is not None:
            self.hold(snap_id)

    def hold(self, snap_id: int) -> None:
        """This snapshot is the JVM's ``snap_id`` (freed with the helper's next call once the handle is dropped)."""
        self.id, self.parent = snap_id, None
        weakref.finalize(self, self.owner.pending.append, snap_id)


class Helper:
    """The helper class in one JVM (``None`` from :meth:`of` when the JVM lacks it)."""

    def __init__(self, gateway: Any) -> None:
        from py4j.java_gateway import JavaClass

        cls = gateway.jvm.s1gym.scienceworld.S1ScienceWorld
        if not isinstance(cls, JavaClass):  # py4j names a missing class as a package
            raise LookupError("s1gym.scienceworld.S1ScienceWorld is not on the JVM's classpath")  # noqa: TRY004
        # py4j looks a static member up with a round trip of its own each time: look each up once
        self._read, self._step, self.replay = cls.read, cls.step, cls.replay
        self._take, self._restore, self._held, self._children = cls.take, cls.restore, cls.held, cls.children
        self._step_take = cls.stepTake
        cls.noDelay()
        #: ids whose handles were dropped, freed by the next call
        self.pending: list[int] = []
        #: the last valid list the JVM sent in full and its number (``S1ScienceWorld.sent``): an answer showing
        #: the same list names the number instead of sending it again
        self.valid_held: tuple[int, str] = (0, "")

    def read(self, pi: Any, observation: str) -> list[str]:
        """The helper's ``read``: the fields of the answer (:data:`SEP`), its valid list's text resolved."""
        return self._fields(str(self._read(pi, observation, self.valid_held[0])))

    def step(self, pi: Any, move: str) -> list[str]:
        """The helper's ``step`` (the move and every read): the fields of the answer, as :meth:`read`."""
        return self._fields(str(self._step(pi, move, self.valid_held[0])))

    def _fields(self, packed: str) -> list[str]:
        fields = packed.split(SEP)
        fields[1] = self._valid(fields[1])
        return fields

    def _valid(self, sent: str) -> str:
        """The valid list's text from what the JVM sent: the text and its number (kept), or the number of the
        list held already (the very same ``str``, so the env's narrowing cache finds it without hashing it)."""
        if not sent.startswith(SAME):
            raise RuntimeError(f"ScienceWorld helper: a valid list without its number: {sent[:80]!r}")
        number, full, text = sent[1:].partition(SAME)
        if full:
            self.valid_held = (int(number), text)
            return text
        if int(number) != self.valid_held[0]:  # never: the JVM names only the number it was given
            raise RuntimeError(f"ScienceWorld helper: valid list {number} is not the one held "
                               f"({self.valid_held[0]})")
        return self.valid_held[1]

    @classmethod
    def of(cls, gateway: Any, classpath: str | None) -> Helper | None:
        if classpath is None:
            return None
        try:
            return cls(gateway)
        except Exception as exc:  # noqa: BLE001 - the helper is an optimisation: read and replay without it
            log.warning("s1gym: the ScienceWorld helper did not load (%s); forks replay", exc)
            return None

    def _frees(self) -> str:
        if not self.pending:
            return ""
        ids, self.pending[:] = list(self.pending), []
        return ",".join(map(str, ids))

    def take(self, pi: Any, game: Any, moves: tuple[str, ...]) -> Snapshot:
        """A snapshot of ``pi``'s game; one the JVM holds nothing for (id -1: restoring it replays the moves)
        when the copy failed (collections kept moving objects during it: S1DeepCopy, keyed by address)."""
        return Snapshot(self, self._take_id(pi), game, moves)

    def _take_id(self, pi: Any) -> int:
        from py4j.protocol import Py4JJavaError

        try:
            return int(self._take(pi, self._frees()))
        except Py4JJavaError as exc:
            log.warning("s1gym: a ScienceWorld snapshot failed (%s); that state will be replayed",
                        str(exc).strip().splitlines()[0][:200])
            return -1

    def restore(self, pi: Any, snap: Snapshot) -> bool:
        """``pi`` brought to ``snap``; False when this JVM does not hold it or the copy failed (``pi`` is then
        unchanged: the copy comes before any change). A child held as its parent and its move is brought to
        its parent, steps the move (with every read: the same state) and is snapshotted from then on, in one
        round trip that sends no answer back (the caller has the child's answer already: ``stepTake``); False
        there when it failed in the JVM (the caller replays: ``pi`` may be anywhere)."""
        from py4j.protocol import Py4JJavaError

        if snap.owner is not self:
            return False
        if snap.id is None:
            parent = snap.parent
            if parent is None or (parent.id is None and not self.restore(pi, parent)):
                return False
            if parent.id is None or parent.id < 0:
                return False
            try:
                snap_id = int(self._step_take(pi, parent.id, snap.moves[-1], self._frees()))
            except Py4JJavaError as exc:
                log.warning("s1gym: stepping a ScienceWorld child again failed (%s); replaying it",
                            str(exc).strip().splitlines()[0][:200])
                return False
            if snap_id == 0:  # the JVM does not hold the parent
                return False
            if snap_id < 0:
                log.warning("s1gym: a ScienceWorld snapshot failed; that state will be replayed")
            snap.hold(snap_id)
            return True
        if snap.id < 0:
            return False
        try:
            return bool(self._restore(pi, snap.id, self._frees()))
        except Py4JJavaError as exc:
            log.warning("s1gym: restoring a ScienceWorld snapshot failed (%s); replaying it",
                        str(exc).strip().splitlines()[0][:200])
            return False

    def children(self, pi: Any, parent: Snapshot,
                 moves: Sequence[str]) -> list[tuple[Snapshot, list[str]]] | None:
        """For each of ``moves``, ``pi`` brought to ``parent`` and the move stepped with every read (exactly
        ``restore`` then ``step``), in one round trip per :data:`CHILDREN_PER_CALL` moves: the child's snapshot
        (held as ``parent`` and the move: :class:`Snapshot`) and the step's answer's fields (``step``'s), in
        order; then ``pi`` and the JVM's global state are at ``parent``. ``None`` when this JVM does not hold ``parent`` or a move holds a
        newline (the helper's separator); or when a copy failed in the JVM: then ``pi`` is in no known state
        (the caller restores it before using it)."""
        from py4j.protocol import Py4JJavaError

        if parent.owner is not self or not moves or any("\n" in m for m in moves):
            return None
        if parent.id is None and not self.restore(pi, parent):  # a child itself: snapshotted first
            return None
        if parent.id is None or parent.id < 0:
            return None
        answers: list[list[str]] = []
        for start in range(0, len(moves), CHILDREN_PER_CALL):
            chunk = moves[start:start + CHILDREN_PER_CALL]
            try:
                out = self._children(pi, parent.id, "\n".join(chunk), self._frees(), self.valid_held[0])
            except Py4JJavaError as exc:
                log.warning("s1gym: stepping ScienceWorld children in one call failed (%s); stepping them one by "
                            "one", str(exc).strip().splitlines()[0][:200])
                return None
            if out is None:
                return None
            answers += [self._fields(packed) for packed in str(out).split(RS)]  # in order: the lists they name
        if len(answers) != len(moves):
            raise RuntimeError(f"ScienceWorld helper: {len(answers)} answers for {len(moves)} moves")
        return [(Snapshot(self, None, parent.game, (*parent.moves, move), parent), answer)
                for move, answer in zip(moves, answers, strict=True)]

    def held(self) -> int:
        """Snapshots the JVM holds (after freeing the dropped ones)."""
        return int(self._held(self._frees()))
