"""ALFWorld's engine: textworld's ``PddlEnv`` with alfworld's ``AlfredDemangler``, the game state in a private
copy of the compiled Fast Downward library, saved and restored as *snapshots* (the library's state vector
plus textworld's Python-side fact sets; see :mod:`s1gym.tasks.alfworld.env`). The PDDL->SAS translation and
the game logic parse are cached per game, so resets cost one restore. The memos of textworld's slow steps are
:mod:`.speedups`; a child's state vector computed from its parent's is :mod:`.sas`."""

from __future__ import annotations

import ctypes
import functools
import hashlib
import json
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from s1gym.engines.base import Engine, close_pools
from s1gym.tasks.alfworld.sas import sas_task
from s1gym.tasks.alfworld.speedups import CommandTexts, install_caches

__all__ = ["ENGINE_CAPACITY", "INSTALL_HINT", "ALFEngine", "EngineAnswer", "close_engines", "import_engine"]

INSTALL_HINT = (
    "install the optional extra: pip install 'alfworld==0.4.2' (it builds with cmake, g++ and make)"
)


def import_engine():
    try:
        import fast_downward  # noqa: F401
        import textworld
        from alfworld.agents.environment.alfred_tw_env import AlfredDemangler
        from textworld.envs.pddl import PddlEnv
        from textworld.envs.pddl import logic as pddl_logic
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError(f"s1/ALFWorld-v0 needs the ALFWorld engine: {INSTALL_HINT} ({exc})") from exc
    install_caches(pddl_logic)
    return textworld, PddlEnv, AlfredDemangler, pddl_logic


@lru_cache(maxsize=16)
def _game_data(gamefile: str) -> dict:
    with open(gamefile) as f:
        return json.load(f)


@lru_cache(maxsize=16)
def _game_logic(domain: str, grammar: str):
    _, _, _, pddl_logic = import_engine()
    logic = pddl_logic.GameLogic(domain=domain, grammar=grammar)
    logic.grammar.derive = CommandTexts(logic)
    return logic


@dataclass(frozen=True)
class _Snapshot:
    """A game state that can be restored into any engine that has the game loaded."""

    values: str  # the SAS state vector, one value per variable, newline separated
    facts: tuple  # textworld's fact bookkeeping (facts, vars by name, vars by type, var counts)
    feedback: str  # the text the state was reached with
    #: textworld's infos of the state (its valid actions and their commands) and the applicable operators
    #: they refer to, so that a restore need not derive them again (about a third of the CPU of a fork and
    #: a step: docs/benchmarks.md).
    #: ``None``: derive them.
    derived: tuple[Mapping[str, Any], Mapping[int, Any]] | None = field(default=None, compare=False, repr=False)
    #: where the state lies in the state registry of the engine that took the snapshot: (that registry's
    #: token, the state's id). Restoring into the same registry sets the state by its id instead of
    #: reloading the whole task (``load_sas``). ``None``: reload.
    registered: tuple[object, int] | None = field(default=None, compare=False, repr=False)

    @property
    def key(self) -> str:
        return hashlib.sha1(self.values.encode()).hexdigest()


@dataclass(frozen=True)
class EngineAnswer:
    """What the engine answers to a new game or a move: textworld's state and what the player holds."""

    state: Any
    holding: str


def _fails_engine(method: Any) -> Any:
    """A call into the game that raises leaves the engine :attr:`ALFEngine.failed` (never used again)."""

    @functools.wraps(method)
    def call(self: ALFEngine, *args: Any) -> Any:
        try:
            return method(self, *args)
        except Exception:
            self.failed = True
            raise

    return call


class ALFEngine(Engine):
    """One live ALFWorld game: a ``PddlEnv`` (own libdownward copy) wrapped in alfworld's demangler."""

    can_snapshot = True
    close_at_exit = False  # nothing to do at exit: a library copy is never unloaded (see _SPARE_LIBRARIES)
    label = "ALFWorld engine"
    #: set when a call into the game raised: its planner state is unknown, so the game cannot continue here
    failed = False

    def __init__(self, facts: bool) -> None:
        textworld, PddlEnv, AlfredDemangler, _ = import_engine()
        infos = textworld.EnvInfos(won=True, admissible_commands=True, facts=facts)
        # PddlEnv.__init__, with a spare library copy taken before a new one is loaded
        self.pddl = PddlEnv.__new__(PddlEnv)
        super(PddlEnv, self.pddl).__init__(infos)
        self.pddl.downward_lib = _SPARE_LIBRARIES.pop() if _SPARE_LIBRARIES else _load_library()
        self.env = AlfredDemangler(self.pddl, shuffle=False)
        self.gamefile: str | None = None
        self.state: Any = None
        lib = self.pddl.downward_lib
        lib.get_state_id.restype = ctypes.c_int
        lib.set_state_id.argtypes = [ctypes.c_int]
        lib.set_state_id.restype = None
        #: Fast Downward's state registry in this engine's library: every state a move reaches is kept
        #: there under an id until the task is loaded again (``load_sas``), which starts a new registry and
        #: a new token. ``None``: ids are not trusted (the planner ran here; see :meth:`replan`).
        self._registry: object | None = object()
        #: get_state's output buffer (one fixed-size name per SAS variable), kept between snapshots
        self._atoms: Any = None
        #: the current state's vector, followed move by move (``None``: read it from the library)
        self._values: bytes | None = None

    def load(self, gamefile: str) -> None:
        if self.gamefile == gamefile:
            return
        data = _game_data(gamefile)
        # PddlEnv.load, with the parsed logic cached per game (the pddl2sas cache covers the state).
        pddl = self.pddl
        pddl._game_file, pddl._game_data, pddl.walkthrough = gamefile, data, data.get("walkthrough")
        _, _, _, pddl_logic = import_engine()
        pddl._logic = _game_logic(data["pddl_domain"], data["grammar"])
        pddl._pddl_state = pddl_logic.PddlState(pddl.downward_lib, data["pddl_problem"], pddl._logic)
        self._new_registry()
        self._values = None
        pddl._entity_infos = pddl._get_entity_infos()
        from alfworld.agents.utils.misc import Demangler

        demangler = Demangler(game_infos=pddl._entity_infos, shuffle=False)
        for info in pddl._entity_infos.values():
            info.name = demangler.demangle_alfred_name(info.id)
        self.gamefile = gamefile

    @_fails_engine
    def new_game(self, gamefile: str) -> EngineAnswer:
        self.load(gamefile)
        self.state = self.env.reset()  # a new PddlState: the task is loaded again
        self._new_registry()
        self._values = None
        return self._answer()

    @_fails_engine
    def step(self, move: str) -> EngineAnswer:
        values, task = self._values, sas_task(self.pddl._pddl_state)
        if values is not None and task is not None:
            commands = self.pddl.state["_valid_commands"]
            command = move.strip()
            if command in commands:  # else textworld answers "Nothing happens." and the state stays
                values = task.successor(values, self.pddl.state["_valid_actions"][commands.index(command)].id)
        self.state, _, _ = self.env.step(move)
        self._values = values if task is not None else None
        return self._answer()

    def _answer(self) -> EngineAnswer:
        ps = self.pddl._pddl_state
        infos = self.pddl._entity_infos
        held = sorted(infos[f.arguments[1].name].name for f in ps.facts if f.name == "holds")
        return EngineAnswer(self.state, ", ".join(held))

    def snapshot(self) -> _Snapshot:
        ps = self.pddl._pddl_state
        facts = (
            {k: frozenset(v) for k, v in ps._facts.items()},
            dict(ps._vars_by_name),
            {k: frozenset(v) for k, v in ps._vars_by_type.items()},
            dict(ps._var_counts),
        )
        registered = None if self._registry is None else (self._registry, self.pddl.downward_lib.get_state_id())
        # Textworld never changes the infos or operators once gathered (a step builds new ones): shared.
        return _Snapshot(
            self._state_values(), facts, self.state["feedback"], (dict(self.pddl.state), dict(ps._operators)),
            registered,
        )

    def _state_values(self) -> str:
        """The SAS state vector, one digit a variable (0: its atom holds, else 1): followed move by move from
        the library's own reading at the game's start (:class:`~s1gym.tasks.alfworld.sas.SasTask`), read again
        where it cannot be.

        Textworld's fact sets are not a substitute: they take a conditional effect's both branches (``use
        desklamp`` leaves the lamp off there, on in the library)."""
        if self._values is None:
            self._values = self._library_values()
        return "\n".join(self._values.decode())

    def _library_values(self) -> bytes:
        """The state vector as the library reports it (``get_state`` writes a 1 KB name per variable; the
        names are compared as one array rather than decoded one by one)."""
        import numpy as np
        from fast_downward import Atom

        lib = self.pddl.downward_lib
        n = lib.get_state_size()
        if self._atoms is None or len(self._atoms) != n:
            self._atoms = (Atom * n)()
        lib.get_state(self._atoms)
        names = np.frombuffer(self._atoms, dtype=np.uint8).reshape(n, -1)
        holds = (names[:, :5] == np.frombuffer(b"Atom ", dtype=np.uint8)).all(axis=1)
        return np.where(holds, ord("0"), ord("1")).astype(np.uint8).tobytes()

    @_fails_engine
    def restore(self, gamefile: str, snap: _Snapshot) -> None:
        import textworld

        self.load(gamefile)
        if self.pddl._pddl_state is None or self.state is None:
            self.new_game(gamefile)
        ps = self.pddl._pddl_state
        if snap.registered is not None and self._registry is not None and snap.registered[0] is self._registry:
            ps.downward_lib.set_state_id(snap.registered[1])  # taken here, since the last load: no reload
        else:
            head, rest = ps.sas.split("begin_state\n", 1)
            _, tail = rest.split("end_state\n", 1)
            ps.downward_lib.load_sas(f"{head}begin_state\n{snap.values}\nend_state\n{tail}".encode())
            self._new_registry()
        self._values = snap.values[::2].encode()
        facts, by_name, by_type, counts = snap.facts
        ps._facts = defaultdict(set, {k: set(v) for k, v in facts.items()})
        ps._vars_by_name = dict(by_name)
        ps._vars_by_type = defaultdict(set, {k: set(v) for k, v in by_type.items()})
        ps._var_counts = type(ps._var_counts)(counts)
        self.pddl.prev_state = None
        self.pddl._last_action = None
        infos, operators = snap.derived or ({}, {})
        self.pddl.state = textworld.core.GameState(infos)
        self.pddl.state.feedback = self.pddl.state.raw = snap.feedback
        if snap.derived is None:
            self.pddl._gather_infos()
        else:
            ps._operators = dict(operators)
        self.state = self.pddl.state

    def replan(self) -> list[str]:
        """Fast Downward's plan from the current state (its moves' texts). Planning runs a search inside the
        library whose effect on the state registry is not documented, so this engine stops trusting state
        ids from then on (restores reload the task, as before ids were used)."""
        self._registry = None
        return self.pddl._pddl_state.replan(self.pddl._entity_infos)

    def _new_registry(self) -> None:
        if self._registry is not None:
            self._registry = object()

    def alive(self) -> bool:
        """False once closed (its library copy may serve another engine by then) or once a call into the
        game raised (:attr:`failed`)."""
        return self.pddl.downward_lib is not None and not self.failed

    def close(self) -> None:
        """Free the task the library holds and keep the library copy for the next engine (never unloaded)."""
        lib, self.pddl.downward_lib = self.pddl.downward_lib, None
        if lib is not None:
            lib.cleanup()
            _SPARE_LIBRARIES.append(lib)


def _load_library() -> Any:
    import fast_downward

    return fast_downward.load_lib()


#: Library copies of closed engines, handed to the next engine instead of a new copy. A copy is never unloaded:
#: libdownward's plugin registry is one process-wide (GNU unique) object that every copy adds entries to, so
#: unloading any copy but the first leaves entries whose code is gone, and the registry's destructor then
#: crashes the interpreter's exit (SIGSEGV, exit code 139). Reusing copies also bounds how many a process
#: loads: loading and unloading copies repeatedly crashed in ``dlopen`` by the third round of twelve.
_SPARE_LIBRARIES: list[Any] = []


#: Engines per pool: each holds a private copy of libdownward (tens of MB).
ENGINE_CAPACITY = 6


def close_engines() -> None:
    """Close every pooled engine: each frees its game and parks its libdownward copy for the next engine
    (copies are never unloaded; see ``_SPARE_LIBRARIES``); envs load their game again on demand."""
    close_pools(lambda key: isinstance(key, tuple) and key[:1] == ("alfworld",))
