"""CookingWorld and the other TextWorldExpress (TWX) games as s1gym envs.

Engine: the Scala simulator shipped in ``textworld-express`` (1.1.0), reached
through py4j. Unlike ``textworld_express.TextWorldExpressEnv`` (one JVM per env,
``clone()`` = new JVM + replay, about 1.3 s), every env and fork of a process
shares one JVM (:mod:`s1gym.tasks._jvm`) and owns its own Scala
``PythonInterface`` game object in it. The game generator of each
``(game, params)`` is loaded once per JVM (about 25 ms) and shared.

Games and seeds. ``reset(seed=s)`` plays TWX game ``s mod 1000`` of the chosen
fold (TWX seeds 0-999 are train, 10000-10999 dev, 20000-20999 test), so a seed
always names the same game. The default fold is ``train`` (seed 207 of the
medium CookingWorld is the chopped orange bell pepper + grilled carrot game);
benchmarks of search use ``fold="test"``. ``reset()`` without a seed draws the
game from the env's RNG.

Observation (Markov): the last feedback, the task description, what is visible
(TWX's ``look``), the inventory and the moves. Candidates are TWX's valid
actions, de-duplicated (SimonSays lists some twice) and sorted alphabetically,
so a seed plus indices replays the same game.

Fork. TWX envs stand on the engine seam (:mod:`s1gym.tasks.engine`): an
engine is one Scala game object; :meth:`S1Env.fork` is lazy (the fork copies
the Python state and holds no game object until it is stepped), then takes a
game object from the pool of its ``(game, params)`` and replays the move
history (TWX has no state copy; bench/twx.py measures a replayed move).
``close()`` (or garbage collection) makes the game object idle for others; the
JVM lives on for the other envs.

Experts: TWX's gold path and the CookingWorld planner live in
:mod:`s1gym.tasks.twx_expert`.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import orjson

from s1gym.core import Progress
from s1gym.tasks import _jvm, twx_expert
from s1gym.tasks.engine import Engine, EngineEnv

__all__ = [
    "ArithmeticEnv",
    "CoinCollectorEnv",
    "CookingWorldEnv",
    "MapReaderEnv",
    "PeckingOrderEnv",
    "SimonSaysEnv",
    "SortingEnv",
    "TWCEnv",
    "TWXEnv",
    "shutdown_jvm",
]

FOLDS = ("train", "dev", "test")
#: Game objects per (game, params) alive at once; more envs replay their games on demand.
ENGINE_CAPACITY = 256
shutdown_jvm = _jvm.shutdown_jvm


def _jar() -> tuple[str, str]:
    from textworld_express.constants import BASEPATH, JAR_PATH

    return JAR_PATH, BASEPATH


def get_jvm() -> _jvm.JVM:
    return _jvm.get_jvm(*_jar())


# --------------------------------------------------------------------------
# Game generators and game objects in the shared JVM
# --------------------------------------------------------------------------


class _Generator:
    """One loaded TWX game generator per JVM and ``(game, params)``: the fold seeds, gold paths, maps."""

    def __init__(self, jvm: _jvm.JVM, game: str, params: str) -> None:
        self.jvm = jvm
        self.template = jvm.jvm.textworldexpress.runtime.PythonInterface()
        msg = self.template.load(game, params)
        if msg:
            raise ValueError(f"TextWorldExpress rejected {game} with {params!r}: {msg}")
        self.generator = self.template.gameGenerator()
        self.fold_seeds: dict[str, list[int]] = {}
        self.gold: dict[tuple[int, str], tuple[str, ...]] = {}
        #: Per game, the room graph the CookingWorld planner explored (the map never changes).
        self.rooms: dict[tuple[int, str], dict[str, dict[str, str]]] = {}
        for fold, getter in (("train", "getSeedsTrain"), ("dev", "getSeedsDev"), ("test", "getSeedsTest")):
            text = str(getattr(self.template, getter)().toString())  # one py4j call, not one per element
            self.fold_seeds[fold] = [int(x) for x in text.strip("[]").split(",") if x.strip()]

    def new_game_object(self) -> Any:
        pi = self.jvm.jvm.textworldexpress.runtime.PythonInterface()
        getattr(pi, "gameGenerator_$eq")(self.generator)  # share the loaded generator (Scala setter)
        return pi

    def gold_path(self, seed: int, fold: str) -> tuple[str, ...]:
        key = (seed, fold)
        if key not in self.gold:
            with self.jvm.lock:
                self.template.generateNewGame(seed, fold, True)
                self.gold[key] = tuple(str(a) for a in self.template.getGoldActionSequence())
        return self.gold[key]


def _generator(game: str, params: str) -> _Generator:
    jvm = get_jvm()
    key = ("twx-generator", game, params)
    gen = jvm.cache.get(key)
    if gen is None:
        with jvm.lock:
            gen = jvm.cache.get(key)
            if gen is None:
                gen = jvm.cache[key] = _Generator(jvm, game, params)
    return gen


class _TWXEngine(Engine):
    """One Scala game object sharing its generator; replays with TWX's plain (non-JSON) calls."""

    def __init__(self, gen: _Generator) -> None:
        self.gen = gen
        self.pi = gen.new_game_object()

    def new_game(self, game: tuple[int, str]) -> tuple[str, str]:
        """The game's first state (JSON) and its task description."""
        seed, fold = game
        raw = self.pi.generateNewGameJSON(seed, fold, False)
        return raw, str(self.pi.getTaskDescription()).strip()

    def step(self, move: str) -> str:
        return self.pi.stepJSON(move)

    def replay(self, game: tuple[int, str], moves: tuple[str, ...]) -> None:
        seed, fold = game
        self.pi.generateNewGame(seed, fold, False)
        for move in moves:
            self.pi.step(move)

    def alive(self) -> bool:
        return self.gen.jvm is _jvm.current_jvm()


# --------------------------------------------------------------------------
# Options
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Param:
    """A TWX game parameter exposed as a gym.make option."""

    option: str
    twx: str
    lo: int
    hi: int
    default: int
    help: str
    boolean: bool = False

    def value(self, raw: Any, task: str) -> int:
        if self.boolean:
            if isinstance(raw, bool) or raw in (0, 1):
                return int(raw)
            raise ValueError(f"{task}: {self.option} must be True or False, got {raw!r}")
        if isinstance(raw, bool) or not isinstance(raw, int) or not (self.lo <= raw <= self.hi):
            raise ValueError(
                f"{task}: {self.option} must be an integer in {self.lo}..{self.hi}, got {raw!r}"
            )
        return int(raw)


def _doors(default: int = 0) -> _Param:
    return _Param("include_doors", "includeDoors", 0, 1, default, "rooms are joined by doors to open", True)


def _inventory_limit(default: int = 0) -> _Param:
    return _Param(
        "limit_inventory_size", "limitInventorySize", 0, 1, default, "the inventory holds a few items only", True
    )


_ROOM_RE = re.compile(r"You are in the ([^.]+)\.")
_EXITS_RE = re.compile(r"(To the|Through an? )", re.IGNORECASE)
_STATE_VERBS = ("open", "close", "put", "drop", "take")


class TWXEnv(EngineEnv):
    """A TextWorldExpress game behind the s1gym contract (subclasses name the game and its options)."""

    #: TWX's game name (``cookingworld``, ``coin``, ...).
    game: ClassVar[str] = ""
    #: The game's parameters exposed as options.
    params: ClassVar[tuple[_Param, ...]] = ()
    #: SimonSays: the feedback (Simon's order) is part of the state.
    feedback_in_state: ClassVar[bool] = False
    #: Games of which only one live game may exist per JVM (TWX Sorting: two live games change each
    #: other's objects): their pool holds one game object, rebuilt by replay whenever another env used it.
    exclusive: ClassVar[bool] = False
    engine_capacity: ClassVar[int] = ENGINE_CAPACITY
    #: Moves whose feedback is knowledge the player keeps (CookingWorld's recipe, MapReader's map, the
    #: math problem): once played, their feedback stays in the observation, which would otherwise forget it
    #: (Markov observation).
    remembered_moves: ClassVar[tuple[str, ...]] = ()
    #: Keep only the latest remembered text (PeckingOrder's book names the current instruction only).
    remember_latest: ClassVar[bool] = False
    stall_patience: ClassVar[int | None] = 6
    _common_help: ClassVar[dict[str, str]] = {
        "fold": "which TWX games the seeds pick: train (default; seeds 0-999), dev or test",
        "max_steps": "step limit (truncation)",
        "max_candidates": "the candidate cap N (Discrete(N)); more legal moves raise TooManyCandidatesError",
    }

    def __init__(
        self,
        *,
        fold: str = "train",
        max_steps: int | None = None,
        max_candidates: int | None = None,
        render_mode: str | None = None,
        **options: Any,
    ) -> None:
        super().__init__(max_candidates=max_candidates, max_steps=max_steps, render_mode=render_mode)
        if fold not in FOLDS:
            raise ValueError(f"{self.task_name}: fold must be one of {list(FOLDS)}, got {fold!r}")
        known = {p.option: p for p in self.params}
        unknown = sorted(set(options) - set(known))
        if unknown:
            allowed = sorted([*known, *self._common_help, "render_mode"])
            raise ValueError(f"{self.task_name}: unknown option(s) {unknown}; allowed options are {allowed}")
        values = {p.twx: p.value(options.get(p.option, p.default), self.task_name) for p in self.params}
        self.fold = fold
        self.game_params: dict[str, int] = values
        self._param_str = ",".join(f"{k}={v}" for k, v in values.items())
        self._jvm_ref: _jvm.JVM | None = get_jvm()
        self._jvm_ref.retain()
        self._gen = _generator(self.game, self._param_str)
        if self.exclusive:
            self.engine_capacity = 1
        self._seed = -1
        self.game_index = -1
        self._task = ""
        self._r: dict[str, Any] = {}
        self._candidates_sorted: list[str] = []
        self._desc = ""
        self._key: str | None = None
        self._facts: dict[str, str] = {}
        self._known: tuple[str, ...] = ()
        #: The expert's current plan off the gold path: (moves played when it was made, plan).
        self._plan: tuple[int, tuple[str, ...]] | None = None

    @classmethod
    def resolve_options(cls, options: Mapping[str, Any]) -> dict[str, Any]:
        return {**super().resolve_options({}), **{p.option: p.default for p in cls.params}, **options}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "option_help" not in cls.__dict__:  # the game's parameters, then the options every TWX game takes
            cls.option_help = {**{p.option: p.help for p in cls.params}, **TWXEnv._common_help}

    # ----------------------------------------------------------- engine
    def _generator(self) -> _Generator:
        """This env's generator in the live JVM (a new one after a JVM restart)."""
        if self._gen.jvm is not _jvm.current_jvm():
            self._gen = _generator(self.game, self._param_str)
        return self._gen

    def _pool_key(self) -> Hashable:
        return ("twx", self._generator())

    def _open_engine(self) -> _TWXEngine:
        return _TWXEngine(self._generator())

    @property
    def moves(self) -> tuple[str, ...]:
        """The moves played since the start of the game."""
        return self.game_state.moves

    def _accept(self, raw: str) -> None:
        r = orjson.loads(raw)
        self._r = r
        self._candidates_sorted = sorted(set(r["validActions"]))
        parts = [f"Task: {self._task}"] if self._task else []
        parts.extend(self._known)
        if r["look"].strip():
            parts.append(r["look"].strip())
        if r["inventory"].strip():
            parts.append(r["inventory"].strip())
        self._desc = "\n\n".join(parts)
        self._key = None

    def _feedback_of(self, r: Mapping[str, Any]) -> str:
        obs = r["observation"].strip()
        return "" if obs == r["look"].strip() else obs  # "look around" repeats the view already shown

    # ------------------------------------------------------------ hooks
    def _choose_game(self, seed: int | None, options: dict[str, Any]) -> tuple[int, str]:
        if options:
            raise ValueError(f"{self.task_name}: reset takes no options, got {sorted(options)}")
        seeds = self._generator().fold_seeds[self.fold]
        index = int(self.np_random.integers(len(seeds))) if seed is None else int(seed) % len(seeds)
        self._seed = seeds[index]
        self.game_index = index
        self._facts = {}
        self._known = ()
        self._plan = None
        return (self._seed, self.fold)

    def _on_start(self, raw: tuple[str, str]) -> str:
        state, self._task = raw
        self._accept(state)
        return self._feedback_of(self._r)

    def _on_step(self, move: str, raw: str) -> str:
        if move.startswith(_STATE_VERBS):
            self._note_fact(move)  # reads the view before the move
        if move in self.remembered_moves:
            self._remember(orjson.loads(raw)["observation"])
        room = self._room()
        self._accept(raw)
        feedback = self._feedback_of(self._r)
        if not feedback and self._room() != room:
            # TWX answers a move with the new room's view, which the observation shows anyway; the feedback
            # keeps where the move led and the room's exits ("You are in the pantry.\nTo the West you see
            # the kitchen."), so the history holds the map a player would remember.
            exits = [line.strip() for line in self._r["look"].splitlines()[1:] if _EXITS_RE.match(line.strip())]
            feedback = "\n".join([f"You are in the {self._room()}.", *exits])
        return feedback

    def _room(self) -> str:
        m = _ROOM_RE.search(self._r.get("look", ""))
        return m.group(1) if m else ""

    def _legal_moves(self) -> list[str]:
        return self._candidates_sorted

    def _remember(self, text: str) -> None:
        entry = "You remember: " + text.strip()
        if text.strip() and entry not in self._known:
            self._known = (entry,) if self.remember_latest else (*self._known, entry)

    def _describe(self) -> str:
        return self._desc

    def _progress(self) -> Progress:
        r = self._r
        return Progress(min(1.0, max(0.0, float(r["score"]))), bool(r["tasksuccess"]), bool(r["taskfailure"]))

    def _fork_into(self, clone: EngineEnv) -> None:
        assert isinstance(clone, TWXEnv)
        super()._fork_into(clone)
        clone._facts = dict(self._facts)
        if clone._jvm_ref is not None:
            clone._jvm_ref.retain()

    def _extra_info(self) -> dict[str, Any]:
        return {"game": self.game, "game_seed": self._seed}

    # ------------------------------------------------------- state key
    def _note_fact(self, move: str) -> None:
        """Remember the last hidden-state change per object (see :meth:`state_key`)."""
        verb, _, rest = move.partition(" ")
        room = self._room()
        if verb in ("open", "close"):
            self._facts[f"{room}/{rest}"] = verb
        elif verb == "put" and " in " in rest:
            item, _, place = rest.rpartition(" in ")
            self._facts[item] = f"{room}/{place}"
        elif verb == "drop":
            self._facts[rest] = f"{room}/floor"
        elif verb == "take":
            self._facts.pop(rest, None)

    def state_key(self) -> str:
        """The state as text, independent of the path that reached it (cached per state).

        It holds what is visible (look), the inventory, the raw score, and, for
        what the current view hides, the last open/close of each container or
        door and where each moved item was put or dropped (kept from the moves).
        Two different states could share a key only if they differ in something
        none of these record; in these games every state change is made by a
        move that either shows in look/inventory/score or is one of those
        remembered verbs, so they do not. The converse can happen: taking an
        item and putting it back where it was gives a different key for the
        same state (duplicate detection then merely misses a duplicate).
        SimonSays adds the current order (the feedback) to the key.
        """
        if self._key is None:
            r = self._r
            facts = ";".join(f"{k}={v}" for k, v in sorted(self._facts.items()))
            extra = f"\n{self._feedback}" if self.feedback_in_state else ""
            known = "\n".join(self._known)
            self._key = f"{r['look']}\n{r['inventory']}\nscore={r['scoreRaw']}\n{facts}\n{known}{extra}"
        return self._key

    # ----------------------------------------------------------- expert
    def gold_path(self) -> tuple[str, ...]:
        """TWX's winning move sequence from the start of this game (privileged)."""
        self._require_started()
        gen = self._generator()
        fresh = (self._seed, self.fold) not in gen.gold
        path = gen.gold_path(self._seed, self.fold)
        if fresh and self.exclusive:
            self._pool().forget_states()  # the template's new game changed the live game's objects
        return path

    def expert_action(self) -> str:
        """The next move of a winning plan from the current state (privileged; never in observations):
        the gold path's next move while on it, else the game's planner (:mod:`s1gym.tasks.twx_expert`)."""
        self._require_started()
        return twx_expert.expert_action(self)

    # ---------------------------------------------------------- closing
    def close(self) -> None:
        ref, self._jvm_ref = getattr(self, "_jvm_ref", None), None
        if ref is not None:
            ref.release()
        super().close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


# --------------------------------------------------------------------------
# CookingWorld
# --------------------------------------------------------------------------

_SIZES: dict[str, dict[str, int]] = {
    "small": {"num_locations": 1, "num_ingredients": 1, "num_distractors": 2},
    "medium": {"num_locations": 3, "num_ingredients": 2, "num_distractors": 5},
    "large": {"num_locations": 6, "num_ingredients": 3, "num_distractors": 5},
}
#: Candidate caps N per size; measured maxima (200 games a size, gold paths and item-hoarding random
#: walks): small 80, medium 120, large 134, 11 rooms/5 ingredients/10 distractors 148.
_SIZE_CAPS = {"small": 128, "medium": 192, "large": 256}
_CUSTOM_CAP = 256


class CookingWorldEnv(TWXEnv):
    """TWX CookingWorld: find the recipe's ingredients, cut and cook them, prepare and eat the meal."""

    task_name = "CookingWorld"
    game = "cookingworld"
    remembered_moves = ("read cookbook",)
    default_max_candidates = _SIZE_CAPS["medium"]
    default_max_steps = 100
    params = (
        _Param("num_locations", "numLocations", 1, 11, 3, "rooms (1-11)"),
        _Param("num_ingredients", "numIngredients", 1, 5, 2, "recipe ingredients (1-5)"),
        _Param("num_distractors", "numDistractorItems", 0, 10, 5, "distractor items (0-10)"),
        _doors(0),
        _inventory_limit(0),
    )
    option_help = {
        "size": "small (1 room, 1 ingredient, 2 distractors), medium (3, 2, 5; default) or large (6, 3, 5); no doors",
        **{p.option: p.help for p in params},
        **TWXEnv._common_help,
    }

    @classmethod
    def resolve_options(cls, options: Mapping[str, Any]) -> dict[str, Any]:
        size = options.get("size", "medium")
        return super().resolve_options({"size": size, **_SIZES.get(size, {}), **options})

    def __init__(self, *, size: str = "medium", max_candidates: int | None = None, **options: Any) -> None:
        if size not in _SIZES:
            raise ValueError(f"CookingWorld: size must be one of {list(_SIZES)}, got {size!r}")
        explicit = {k for k in ("num_locations", "num_ingredients", "num_distractors") if k in options}
        options = {**_SIZES[size], **options}
        if max_candidates is None:
            max_candidates = _CUSTOM_CAP if explicit or options.get("include_doors") else _SIZE_CAPS[size]
        self.size = size
        super().__init__(max_candidates=max_candidates, **options)


# --------------------------------------------------------------------------
# The other TWX games
# --------------------------------------------------------------------------


class CoinCollectorEnv(TWXEnv):
    """TWX Coin Collector: explore the house and take the coin."""

    task_name = "CoinCollector"
    game = "coin"
    default_max_candidates = 32  # measured max 16
    params = (
        _Param("num_locations", "numLocations", 1, 11, 11, "rooms (1-11)"),
        _Param("num_distractors", "numDistractorItems", 0, 10, 0, "distractor items (0-10)"),
        _doors(1),
        _inventory_limit(1),
    )


class TWCEnv(TWXEnv):
    """TWX TextWorld Commonsense: put the misplaced items where they belong."""

    task_name = "TWC"
    game = "twc"
    default_max_candidates = 96  # measured max 46
    params = (
        _Param("num_locations", "numLocations", 1, 3, 3, "rooms (1-3)"),
        _Param("num_items", "numItemsToPutAway", 1, 4, 4, "items to put away (1-4)"),
        _doors(0),
        _inventory_limit(0),
    )


class MapReaderEnv(TWXEnv):
    """TWX Map Reader: read the map, fetch the coin, bring it to the box."""

    task_name = "MapReader"
    game = "mapreader"
    remembered_moves = ("read map",)
    default_max_candidates = 64  # measured max 28
    params = (
        _Param("num_locations", "numLocations", 2, 30, 15, "rooms (2-30)"),
        _Param("max_distance", "maxDistanceApart", 1, 8, 4, "most rooms between coin and box (1-8)"),
        _Param("max_distractors", "maxDistractorItemsPerLocation", 0, 3, 3, "most distractor items a room (0-3)"),
        _doors(0),
        _inventory_limit(0),
    )


class ArithmeticEnv(TWXEnv):
    """TWX Arithmetic: solve the math problem, put the item with that quantity in the box."""

    task_name = "Arithmetic"
    game = "arithmetic"
    remembered_moves = ("read math problem",)
    default_max_candidates = 96  # measured max 59


class SortingEnv(TWXEnv):
    """TWX Sorting: put the items in the box from the smallest quantity up."""

    task_name = "Sorting"
    game = "sorting"
    exclusive = True
    default_max_candidates = 64  # measured max 42


class SimonSaysEnv(TWXEnv):
    """TWX Simon Says: do exactly what Simon says."""

    task_name = "SimonSays"
    game = "simonsays"
    feedback_in_state = True
    stall_patience = None
    params = (
        _Param("game_length", "gameLength", 1, 1000, 5, "orders in a game (1-1000)"),
        _Param("num_distractors", "numDistractors", 0, 5, 3, "distractor moves (0-5)"),
    )
    option_help = {
        **{p.option: p.help for p in params},
        **TWXEnv._common_help,
        "max_candidates": "the candidate cap N; default game_length + num_distractors + 8",
    }

    def __init__(self, *, max_candidates: int | None = None, max_steps: int | None = None, **options: Any) -> None:
        length = options.get("game_length", 5)
        distractors = options.get("num_distractors", 3)
        if max_candidates is None and isinstance(length, int) and isinstance(distractors, int):
            max_candidates = max(16, length + distractors + 8)  # TWX lists every order and distractor
        if max_steps is None and isinstance(length, int):
            max_steps = max(100, 2 * length)
        super().__init__(max_candidates=max_candidates, max_steps=max_steps, **options)


class PeckingOrderEnv(TWXEnv):
    """TWX Pecking Order: read the instructions book and follow it, again and again."""

    task_name = "PeckingOrder"
    game = "peckingorder"
    remembered_moves = ("read instructions book",)
    remember_latest = True
    default_max_candidates = 48  # measured max 31
