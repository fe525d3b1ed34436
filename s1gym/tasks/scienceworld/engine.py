"""ScienceWorld's simulator in this process's one JVM, and the engine ScienceWorld envs stand on.

The ``scienceworld`` wheel ships its JAR (Scala and py4j inside); :func:`get_jvm` starts it once per
process with the family's heap (:data:`HEAP`) and every engine is a Scala ``PythonInterface`` in it. The
simulator keeps a JVM-global random generator that ``load`` seeds with the variation index, so a game is
the same game only when nothing else loads or steps in between: the family runs **one** engine per process
(``engine_capacity = 1``) and a state another env holds is restored from a snapshot taken in the JVM, or
rebuilt by a replay (``load`` and the moves, with every read the engine made in between: reading
ScienceWorld's valid list draws from that random generator).

With the family's Java helper (:mod:`.helper`) a step and all its reads are one round trip and a state is
snapshotted and restored in the JVM (``can_snapshot``), and it steps a state's children in one round trip per
32 (``can_step_children``: see :class:`SWEngine`); without it (no ``javac``) each read is a py4j call of its
own and forks replay.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import orjson

from s1gym.engines.base import Engine
from s1gym.tasks.scienceworld.helper import Helper, Snapshot, helper_classpath

__all__ = ["HEAP", "Answer", "Game", "SWEngine", "get_jvm", "valid_list"]

#: the JVM's heap limit (``-Xmx``): the simulator grows past 3 GB on long runs without one
HEAP = "2g"
#: every object's identity hash the same: the simulator lists a room's objects and names look-alikes in the
#: order of hash sets keyed by identity, which otherwise changes from one ``load`` to the next (the same game
#: would read differently after a replay); with one hash the order is the order of insertion
IDENTITY_HASH = ("-XX:+UnlockExperimentalVMOptions", "-XX:hashCode=2")
#: ``(task, fold, index, simplifications)``: the ``index``-th variation of ``task`` in ScienceWorld's
#: ``fold`` split (train, dev or test), under the comma-separated simplifications
Game = tuple[str, str, int, str]


class _JVM:
    """One ScienceWorld JVM (py4j gateway) and the lock that serialises calls into it."""

    def __init__(self) -> None:
        from py4j.java_gateway import GatewayParameters, JavaGateway, launch_gateway
        from scienceworld.constants import BASEPATH, JAR_PATH

        extra = helper_classpath(JAR_PATH)
        classpath = JAR_PATH if extra is None else JAR_PATH + os.pathsep + extra
        port, proc = launch_gateway(classpath=classpath, die_on_exit=True, cwd=BASEPATH, return_proc=True,
                                    javaopts=[f"-Xmx{HEAP}", *IDENTITY_HASH])
        self.gateway = JavaGateway(gateway_parameters=GatewayParameters(auto_field=True, port=port),
                                   java_process=proc)
        #: the family's helper in this JVM (:mod:`.helper`), ``None`` without it
        self.helper = Helper.of(self.gateway, extra)
        self.process = proc
        self.pid = os.getpid()  # a forked child (a vector env's worker) starts its own JVM
        self.lock = threading.RLock()
        #: (task, simplifications) -> {"train": [...], "dev": [...], "test": [...]} variation indices
        self.folds: dict[tuple[str, str], dict[str, list[int]]] = {}
        #: (task, variation, simplifications) -> the gold action sequence
        self.gold: dict[tuple[str, int, str], tuple[str, ...]] = {}

    def interface(self) -> Any:
        return self.gateway.jvm.scienceworld.runtime.pythonapi.PythonInterface()

    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self) -> None:
        with contextlib.suppress(Exception):  # the JVM may be gone already
            self.gateway.shutdown()
        if self.process.poll() is None:
            self.process.kill()


_jvm: _JVM | None = None
_jvm_lock = threading.Lock()


def get_jvm() -> _JVM:
    """The process's ScienceWorld JVM, started on first use (about 4 s cold)."""
    global _jvm
    with _jvm_lock:
        if _jvm is None or _jvm.pid != os.getpid() or not _jvm.alive():
            _jvm = _JVM()
        return _jvm


@atexit.register
def _close_jvm() -> None:
    if _jvm is not None and _jvm.pid == os.getpid():
        _jvm.close()


class SWEngine(Engine):
    """One ScienceWorld game (a Scala ``PythonInterface``). An answer is an :class:`Answer` (a read-only
    mapping whose valid list is parsed when read, from the text the JVM sent): ``observation`` (the
    step's text), ``look``, ``inventory``, ``score`` (ScienceWorld's, -1..1), ``completed``,
    ``variation`` and ``valid`` (ScienceWorld's valid action-object combinations as ``[text, template id,
    object ids, type ids]``); a new game's answer adds ``task`` (the task description).

    The reads are ScienceWorld's own calls, made in the same order with or without the helper (the valid
    list, look, inventory, score, completion): the same moves give the same answers and the same random
    draws either way."""

    label = "ScienceWorld JVM"

    def __init__(self) -> None:
        self.jvm = get_jvm()
        self.server = self.jvm.interface()
        self.helper = self.jvm.helper
        self.can_snapshot = self.helper is not None
        #: a state's children in one round trip per 32 (:meth:`step_children`), on unless ``S1GYM_SW_CHILDREN=0``:
        #: with the compact valid list a search(local) decision took 5-11 % less than with a fork and a step per
        #: child, which also snapshots every child (docs/benchmarks.md, "A cheaper search(local) decision"); with
        #: ScienceWorld's 100 KB JSON answers it was no faster ("Children in one JVM round trip"); the bench
        #: and the tests switch this attribute on a live engine
        self.can_step_children = self.helper is not None and os.environ.get(
            "S1GYM_SW_CHILDREN", "1").strip().lower() not in ("0", "false", "no", "off")
        self.loaded: Game | None = None
        self.variation = -1
        #: the moves played since the game was loaded (a snapshot keeps them, to replay it in another JVM)
        self.moves: tuple[str, ...] = ()

    # ------------------------------------------------------------ games
    def folds(self, task: str, simplifications: str) -> dict[str, list[int]]:
        """ScienceWorld's train/dev/test variation indices of ``task`` (a load of variation 0, once)."""
        key = (task, simplifications)
        if key not in self.jvm.folds:
            with self.jvm.lock:
                self._load(task, 0, simplifications, False)
                self.jvm.folds[key] = {fold: [int(v) for v in getter()] for fold, getter in (
                    ("train", self.server.getVariationsTrain), ("dev", self.server.getVariationsDev),
                    ("test", self.server.getVariationsTest))}
            self.loaded = None
        return self.jvm.folds[key]

    def variation_of(self, game: Game) -> int:
        task, fold, index, simplifications = game
        variations = self.folds(task, simplifications)[fold]
        return variations[index % len(variations)]

    def _load(self, task: str, variation: int, simplifications: str, gold: bool) -> None:
        # object ids come from a JVM-global counter and order what ``look`` lists: restart it, so a game
        # loaded again (a replay) gets the same ids and lists its objects in the same order
        self.jvm.gateway.jvm.util.UniqueIdentifier.reset()
        msg = self.server.load(task, variation, simplifications, gold)
        if msg and str(msg).strip():
            raise ValueError(f"ScienceWorld rejected {task} variation {variation} ({simplifications!r}): {msg}")

    def gold_path(self, game: Game) -> tuple[str, ...]:
        """ScienceWorld's gold action sequence of ``game`` (cached per process). Generating it loads the game
        again, so the engine is then at the start of ``game``, before its first read (the caller restores or
        replays its state)."""
        variation = self.variation_of(game)
        key = (game[0], variation, game[3])
        if key not in self.jvm.gold:
            with self.jvm.lock:
                self._load(game[0], variation, game[3], True)
                self.jvm.gold[key] = tuple(str(a) for a in self.server.getGoldActionSequence())
                self.loaded, self.variation, self.moves = game, variation, ()
        return self.jvm.gold[key]

    def new_game(self, game: Game) -> dict[str, Any]:
        with self.jvm.lock:
            self._start(game)
            out = self._read("")
            out._fields["task"] = str(self.server.freeActionTaskDesc())
        return out

    def _start(self, game: Game) -> None:
        self.variation = self.variation_of(game)
        self._load(game[0], self.variation, game[3], False)
        # ``load`` leaves the score and the completion of the previous game until the first step: reset them
        getattr(self.server, "score_$eq")(0.0)
        getattr(self.server, "isComplete_$eq")(False)
        self.loaded, self.moves = game, ()

    def step(self, move: str) -> Answer:
        with self.jvm.lock:
            self.moves = (*self.moves, move)
            if self.helper is not None:
                return self._unpack(self.helper.step(self.server, move))
            return self._read(str(self.server.step(move)))

    def replay(self, game: Game, moves: tuple[str, ...]) -> None:
        """``load`` and the moves, with every read :meth:`new_game` and :meth:`step` make in between (the
        valid list draws from the global random generator: without them the state would differ)."""
        with self.jvm.lock:
            if self.helper is None or any("\n" in m for m in moves):
                self.new_game(game)
                for move in moves:
                    self.step(move)
                return
            self.variation = self.variation_of(game)
            msg = str(self.helper.replay(self.server, game[0], self.variation, game[3], "\n".join(moves), True))
            if msg.strip():
                raise ValueError(f"ScienceWorld rejected {game[0]} variation {self.variation} ({game[3]!r}): {msg}")
            self.loaded, self.moves = game, tuple(moves)

    def snapshot(self) -> Snapshot:
        with self.jvm.lock:
            return self.helper.take(self.server, self.loaded, self.moves)

    def restore(self, game: Game, snapshot: Snapshot) -> None:
        with self.jvm.lock:
            variation = self.variation_of(game)  # first: reading a fold's list may load a game
            if self.helper is not None and self.helper.restore(self.server, snapshot):
                self.loaded, self.moves, self.variation = game, snapshot.moves, variation
            else:  # taken in a JVM that has gone, or the copy failed
                self.replay(game, snapshot.moves)

    def step_children(self, game: Game, snapshot: Snapshot,
                      moves: Sequence[str]) -> list[tuple[Snapshot, dict[str, Any]]] | None:
        """Every child of ``snapshot`` in one round trip (:meth:`.helper.Helper.children`): per move the
        child's snapshot (held as ``snapshot`` and the move until a restore steps it again) and exactly the
        answer ``restore`` then ``step`` would give. The engine is then at ``snapshot`` (the JVM restored it
        last), which ``loaded`` and ``moves`` record; ``None`` when the helper cannot (a snapshot of a JVM that
        has gone, a move with a newline, a failed copy: the caller steps the children one by one and restores
        the engine first, as ``loaded = None`` says it must)."""
        with self.jvm.lock:
            variation = self.variation_of(game)  # first: reading a fold's list may load a game
            kids = self.helper.children(self.server, snapshot, moves) if self.helper is not None else None
            if kids is None:
                self.loaded = None
                return None
            self.loaded, self.moves, self.variation = game, snapshot.moves, variation
            return [(snap, self._unpack(fields)) for snap, fields in kids]

    def _read(self, observation: str) -> Answer:
        if self.helper is not None:
            return self._unpack(self.helper.read(self.server, observation))
        s = self.server
        valid = str(s.getValidActionObjectCombinationsJSON())
        return self._answer(observation, valid, str(s.freeActionLook()), str(s.freeActionInventory()),
                            float(s.getScore()), bool(s.getCompleted()))

    def _unpack(self, fields: list[str]) -> Answer:
        observation, valid, look, inventory, score, completed = fields
        return self._answer(observation, valid, look, inventory, float(score), completed == "1")

    def _answer(self, observation: str, valid: str, look: str, inventory: str, score: float,
                completed: bool) -> Answer:
        return Answer({"observation": observation, "look": look, "inventory": inventory, "score": score,
                       "completed": completed, "variation": self.variation}, valid)

    def alive(self) -> bool:
        return self.jvm.alive()

    def close(self) -> None:
        self.loaded = None  # the JVM is the process's: it ends with the process


def valid_list(valid: str) -> list[tuple[str, int, tuple[int, ...], tuple[int, ...]]]:
    """ScienceWorld's valid list as ``(text, template id, object ids, type ids)`` rows, from its JSON or from
    the helper's compact form of the same rows (``S1ScienceWorld.validWire``: a JSON array of ``[text,
    template id, [object ids], [type ids]]``)."""
    parsed = orjson.loads(valid)
    if isinstance(parsed, list):
        return [(text, template, tuple(ids), tuple(types)) for text, template, ids, types in parsed]
    return [(str(a["action"]), int(a["template_id"]), tuple(a["obj_ids"]), tuple(a["type_ids"]))
            for a in parsed["validActions"]]


class Answer(Mapping[str, Any]):
    """The engine's answer to a step (or a new game, or a child of :meth:`SWEngine.step_children`): the
    fields :class:`SWEngine` names, with the valid list kept as the text the JVM sent (``valid_text``: the
    helper's compact form, or ScienceWorld's JSON) and parsed each time ``"valid"`` is read. The env narrows
    it to candidates once per distinct text (:func:`~.env.narrowed`: sibling children often show the same
    list), so most answers are never parsed; a state's children waiting together keep only their texts
    (parsed up front, hundreds of valid lists stayed alive together and Python's collector walked them
    again and again: docs/benchmarks.md, "Children in one JVM round trip")."""

    __slots__ = ("_fields", "valid_text")

    def __init__(self, fields: dict[str, Any], valid: str) -> None:
        self._fields, self.valid_text = fields, valid

    def __getitem__(self, key: str) -> Any:
        return valid_list(self.valid_text) if key == "valid" else self._fields[key]

    def __iter__(self) -> Iterator[str]:
        return iter((*self._fields, "valid"))

    def __len__(self) -> int:
        return len(self._fields) + 1


def cached_variation(game: Game) -> int | None:
    """:meth:`SWEngine.variation_of` when this process read the game's fold list already (no engine is
    touched, so a live game keeps its engine), else ``None``."""
    task, fold, index, simplifications = game
    jvm = _jvm if _jvm is not None and _jvm.pid == os.getpid() else None
    variations = jvm.folds.get((task, simplifications), {}).get(fold) if jvm is not None else None
    return None if variations is None else variations[index % len(variations)]
