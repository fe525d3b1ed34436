"""ALFWorld's engine: textworld's ``PddlEnv`` with alfworld's ``AlfredDemangler``, the game state in a private
copy of the compiled Fast Downward library, saved and restored as *snapshots* (the library's state vector
plus textworld's Python-side fact sets; see :mod:`s1gym.tasks.alfworld.env`). The PDDL->SAS translation and
the game logic parse are cached per game, so resets cost one restore."""

from __future__ import annotations

import copy
import ctypes
import hashlib
import json
import re
import sys
import threading
from collections import OrderedDict, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from s1gym.engines.base import Engine, close_pools

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
    _install_caches(pddl_logic)
    return textworld, PddlEnv, AlfredDemangler, pddl_logic


class _CachedTranslation:
    """Stands in for the ``fast_downward`` module inside textworld's PDDL logic, memoising ``pddl2sas``.

    Why: textworld re-translates the PDDL problem twice on every reset (0.2-2 s
    of pure Python). The translation is a pure function of the texts and its
    result is only read, so one translation per game serves every reset.
    """

    def __init__(self, module: Any) -> None:
        self._module = module
        self._cache: OrderedDict[tuple, Any] = OrderedDict()
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)

    def pddl2sas(self, domain: str, problem: str, verbose: bool = False, optimize: bool = False):
        key = (
            hashlib.sha1(domain.encode()).hexdigest(),
            hashlib.sha1(problem.encode()).hexdigest(),
            optimize,
        )
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        argv = list(sys.argv)  # fast_downward's translator overwrites sys.argv; keep the host's
        try:
            out = self._module.pddl2sas(domain, problem, verbose=verbose, optimize=optimize)
        finally:
            sys.argv[:] = argv
        with self._lock:
            self._cache[key] = out
            while len(self._cache) > 64:
                self._cache.popitem(last=False)
        return out


class _CachedQueries:
    """Stands in for ``textworld.logic.Rule`` inside the text grammar, memoising ``parse_conjunctive_query``.

    Why: the grammar re-parses the same few condition strings (with tatsu) for
    every admissible command at every step; the parsed rule is only read.
    """

    def __init__(self, rule_class: Any) -> None:
        self._rule_class = rule_class
        self.parse_conjunctive_query = lru_cache(maxsize=4096)(rule_class.parse_conjunctive_query)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._rule_class, name)


def _memo_parse(parse: Any) -> Any:
    """Memoise textgen's ``_parse_and_convert`` (tatsu, about half of a step); callers mutate, so hand out copies."""
    cache: dict[tuple, Any] = {}

    def parse_and_convert(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("trace"):
            return parse(*args, **kwargs)
        key = (args, tuple(sorted(kwargs.items())))
        if key not in cache:
            if len(cache) > 20_000:
                cache.clear()
            cache[key] = parse(*args, **kwargs)
        return copy.deepcopy(cache[key])

    parse_and_convert.s1gym_memo = True  # type: ignore[attr-defined]
    return parse_and_convert


def _install_caches(pddl_logic: Any) -> None:
    """Memoise textworld's pure, slow parsing steps (same results, read-only use) once per process."""
    from textworld.envs.pddl import textgen

    if not isinstance(pddl_logic.fast_downward, _CachedTranslation):
        pddl_logic.fast_downward = _CachedTranslation(pddl_logic.fast_downward)
    if not isinstance(textgen.Rule, _CachedQueries):
        textgen.Rule = _CachedQueries(textgen.Rule)
    if not getattr(textgen._parse_and_convert, "s1gym_memo", False):
        textgen._parse_and_convert = _memo_parse(textgen._parse_and_convert)
    if not getattr(textgen.copy_context, "s1gym_memo", False):
        textgen.copy_context = _copy_context


def _copy_context(context: dict) -> dict:
    """textgen's ``copy_context`` with shallow copies of the two dicts it deep-copies.

    The derivation only adds keys to those dicts; the entity infos and
    variables in them are read, never changed, so copying the dicts is enough
    (a large share of a step was spent deep-copying them: docs/benchmarks.md). bench/alfworld.py checks
    that feedback and admissible commands stay identical to the raw engine's.
    """
    return {
        "state": context["state"],
        "facts": context["facts"],
        "variables": dict(context["variables"]),
        "mapping": dict(context["mapping"]),
        "entity_infos": context["entity_infos"],
    }


_copy_context.s1gym_memo = True  # type: ignore[attr-defined]


@lru_cache(maxsize=16)
def _game_data(gamefile: str) -> dict:
    with open(gamefile) as f:
        return json.load(f)


@lru_cache(maxsize=16)
def _game_logic(domain: str, grammar: str):
    _, _, _, pddl_logic = import_engine()
    logic = pddl_logic.GameLogic(domain=domain, grammar=grammar)
    logic.grammar.derive = _CommandTexts(logic)
    return logic


class _CommandTexts:
    """Stands in for the grammar's ``derive``, memoising the text of every legal move.

    Why: textworld derives the text of every applicable action at every step,
    running the template's state query (``go to`` lists the receptacles at a
    location) for each: most of the CPU of a step in a room with many moves
    (docs/benchmarks.md). A move's text is a function of its template, the
    action's arguments, the entity names and, for a template with a query, the
    facts of the predicates the query reads; the key holds all four, so the
    memo answers exactly what a derivation would. Other texts (the feedback of
    a move, the intro) read more of the state and are derived every time.
    """

    def __init__(self, logic: Any) -> None:
        self._derive = logic.grammar.derive
        #: template -> names of the predicates its queries read (empty: no query)
        self._templates = {a.template: _query_predicates(a.template) for a in logic.actions.values()}
        #: id(entity infos) -> (the infos, pinned so that the id stays theirs; their texts by key)
        self._texts: OrderedDict[int, tuple[Any, dict]] = OrderedDict()

    def __call__(self, start: str, context: dict = {}) -> str:  # noqa: B006 - textgen's signature
        predicates = self._templates.get(start)
        if predicates is None:
            return self._derive(start, context)
        infos = context["entity_infos"]
        pinned = self._texts.get(id(infos))
        if pinned is None or pinned[0] is not infos:
            pinned = self._texts[id(infos)] = (infos, {})
            while len(self._texts) > 8:
                self._texts.popitem(last=False)
        facts = ()
        if predicates:
            facts = frozenset(
                p for sig, props in context["state"]._facts.items() if sig.name in predicates for p in props
            )
        key = (start, tuple(sorted((ph.name, var.name) for ph, var in context["mapping"].items())), facts)
        texts = pinned[1]
        if key not in texts:
            if len(texts) > 50_000:
                texts.clear()
            texts[key] = self._derive(start, context)
        return texts[key]


def _query_predicates(template: str) -> frozenset[str]:
    """Names of the predicates the queries of a move template read (``{r.name | pred(r:t, x:u)}``)."""
    queries = re.findall(r"\|([^}]*)\}", template)
    return frozenset(name for q in queries for name in re.findall(r"([A-Za-z_][\w-]*)\s*\(", q))


class _SasTask:
    """Fast Downward's semantics of a translated task's operators and axioms, over state vectors.

    Why: reading the state from the library (``get_state``) formats a 1 KB name for each of up to 3,000
    variables, most of the CPU of a Search child in a large room once the rest was cached
    (docs/benchmarks.md). A successor's vector follows from its parent's and the operator: each effect
    whose conditions hold in the parent sets its variable, then the axioms give the derived variables
    (their default, or a rule's value where its body holds, layer by layer to a fixpoint). Vectors are
    ``bytes``, one digit (the value's index) per variable. :meth:`parse` answers ``None`` for a task
    with a variable that is not binary; its states are read from the library.
    """

    def __init__(self, effects: list, rules: list, defaults: dict[int, int]) -> None:
        #: per operator: (conditions ((var, value), ...), var, value) for each effect
        self.effects = effects
        #: (layer, conditions, var, value), in layer order
        self.rules = rules
        #: derived variable -> its default value
        self.defaults = defaults

    @classmethod
    def parse(cls, sas: str) -> _SasTask | None:
        layers = []
        for block in sas.split("begin_variable\n")[1:]:
            lines = block.split("\n", 3)
            if lines[2] != "2":
                return None
            layers.append(int(lines[1]))
        init = sas.split("begin_state\n", 1)[1].split("\nend_state", 1)[0].split("\n")
        effects = []
        for block in sas.split("begin_operator\n")[1:]:
            lines = block.split("\n")
            n_prevail = int(lines[1])
            n_effects = int(lines[2 + n_prevail])
            op = []
            for line in lines[3 + n_prevail : 3 + n_prevail + n_effects]:
                f = [int(x) for x in line.split()]
                conds = tuple((f[1 + 2 * i], f[2 + 2 * i]) for i in range(f[0]))
                op.append((conds, f[1 + 2 * f[0]], f[3 + 2 * f[0]]))  # ... var, pre, post
            effects.append(tuple(op))
        rules = []
        for block in sas.split("begin_rule\n")[1:]:
            lines = block.split("\n")
            n = int(lines[0])
            conds = tuple(tuple(int(x) for x in line.split()) for line in lines[1 : 1 + n])
            var, _, new = (int(x) for x in lines[1 + n].split())
            rules.append((layers[var], conds, var, new))
        rules.sort(key=lambda r: r[0])
        defaults = {v: int(init[v]) for v, layer in enumerate(layers) if layer >= 0}
        return cls(effects, rules, defaults)

    def successor(self, values: bytes, operator: int) -> bytes:
        new = bytearray(values)
        for conds, var, value in self.effects[operator]:
            if all(values[c] == 48 + v for c, v in conds):
                new[var] = 48 + value
        if self.defaults:
            for var, value in self.defaults.items():
                new[var] = 48 + value
            changed = True
            while changed:
                changed = False
                for _, conds, var, value in self.rules:
                    if new[var] != 48 + value and all(new[c] == 48 + v for c, v in conds):
                        new[var] = 48 + value
                        changed = True
        return bytes(new)


def _sas_task(ps: Any) -> _SasTask | None:
    """``ps``'s task as a :class:`_SasTask`, parsed once per loaded task (``None``: not binary)."""
    task = getattr(ps, "_s1gym_sas_task", False)
    if task is False:
        task = ps._s1gym_sas_task = _SasTask.parse(ps.sas)
    return task


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


class ALFEngine(Engine):
    """One live ALFWorld game: a ``PddlEnv`` (own libdownward copy) wrapped in alfworld's demangler."""

    can_snapshot = True
    close_at_exit = False  # nothing to do at exit: a library copy is never unloaded (see _SPARE_LIBRARIES)

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

    def new_game(self, gamefile: str) -> EngineAnswer:
        self.load(gamefile)
        self.state = self.env.reset()  # a new PddlState: the task is loaded again
        self._new_registry()
        self._values = None
        return self._answer()

    def step(self, move: str) -> EngineAnswer:
        values, task = self._values, _sas_task(self.pddl._pddl_state)
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
        the library's own reading at the game's start (:class:`_SasTask`), read again where it cannot be.

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
        """False once closed: its library copy may serve another engine by then."""
        return self.pddl.downward_lib is not None

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
