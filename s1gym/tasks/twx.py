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

Fork. :meth:`S1Env.fork` is lazy (copy on first step): the fork copies the
Python state (cached texts, candidates, history) and holds no game object
until it is stepped; then it takes a game object from a per-JVM pool, makes
the same game and replays the move history (about 0.3 ms a move). An
unstepped fork costs a few microseconds, and forks never touch each other's
game objects. ``close()`` (or garbage collection) returns the game object to
the pool; the JVM lives on for the other envs.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import orjson

from s1gym.core import S1Env
from s1gym.tasks import _jvm

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
_POOL_MAX = 64  # idle game objects kept per (game, params)
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
    """One loaded TWX game generator (per JVM and ``(game, params)``), a pool of game objects."""

    def __init__(self, jvm: _jvm.JVM, game: str, params: str) -> None:
        self.jvm = jvm
        #: Exclusive games only: the handle whose game object is the live one.
        self.active: _Handle | None = None
        self.template = jvm.jvm.textworldexpress.runtime.PythonInterface()
        msg = self.template.load(game, params)
        if msg:
            raise ValueError(f"TextWorldExpress rejected {game} with {params!r}: {msg}")
        self.generator = self.template.gameGenerator()
        self.fold_seeds: dict[str, list[int]] = {}
        self.pool: list[Any] = []
        self.gold: dict[tuple[int, str], tuple[str, ...]] = {}
        self.rooms: dict[tuple[int, str], dict[str, dict[str, str]]] = {}
        for fold, getter in (("train", "getSeedsTrain"), ("dev", "getSeedsDev"), ("test", "getSeedsTest")):
            text = str(getattr(self.template, getter)().toString())  # one py4j call, not one per element
            self.fold_seeds[fold] = [int(x) for x in text.strip("[]").split(",") if x.strip()]

    def acquire(self) -> Any:
        with self.jvm.lock:
            if self.pool:
                return self.pool.pop()
        pi = self.jvm.jvm.textworldexpress.runtime.PythonInterface()
        getattr(pi, "gameGenerator_$eq")(self.generator)  # share the loaded generator (Scala setter)
        return pi

    def give_back(self, pi: Any) -> None:
        with self.jvm.lock:
            if len(self.pool) < _POOL_MAX:
                self.pool.append(pi)

    def gold_path(self, seed: int, fold: str) -> tuple[str, ...]:
        key = (seed, fold)
        if key not in self.gold:
            with self.jvm.lock:
                self.template.generateNewGame(seed, fold, True)
                self.gold[key] = tuple(str(a) for a in self.template.getGoldActionSequence())
                self.active = None  # exclusive games: the template's game just replaced the live one
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


@dataclass
class _Handle:
    """An env's own game object and the generator (hence JVM) it lives in (stale after a JVM restart)."""

    pi: Any
    gen: _Generator


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
_STATE_VERBS = ("open", "close", "put", "drop", "take")


class TWXEnv(S1Env):
    """A TextWorldExpress game behind the s1gym contract (subclasses name the game and its options)."""

    #: TWX's game name (``cookingworld``, ``coin``, ...).
    game: ClassVar[str] = ""
    #: The game's parameters exposed as options.
    params: ClassVar[tuple[_Param, ...]] = ()
    #: SimonSays: the feedback (Simon's order) is part of the state.
    feedback_in_state: ClassVar[bool] = False
    #: Games of which only one live game may exist per JVM (TWX Sorting: two live games change each
    #: other's objects): a game object is rebuilt by replay whenever another game of the kind was used.
    exclusive: ClassVar[bool] = False
    #: Moves whose feedback is knowledge the player keeps (CookingWorld's recipe): once played, their
    #: last feedback stays in the observation, which would otherwise forget it (Markov observation).
    remembered_moves: ClassVar[tuple[str, ...]] = ()
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
        self._handle: _Handle | None = None
        self._seed = -1
        self._task = ""
        self._r: dict[str, Any] = {}
        self._moves: tuple[str, ...] = ()
        self._candidates_sorted: list[str] = []
        self._desc = ""
        self._key: str | None = None
        self._facts: dict[str, str] = {}
        self._known: tuple[str, ...] = ()
        self._plan: tuple[int, tuple[str, ...]] | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "option_help" not in cls.__dict__:  # the game's parameters, then the options every TWX game takes
            cls.option_help = {**{p.option: p.help for p in cls.params}, **TWXEnv._common_help}

    # ----------------------------------------------------------- engine
    def _game_object(self) -> Any:
        """This env's own game object, made and replayed to the current state when it has none."""
        h = self._handle
        if h is not None and h.gen.jvm is _jvm.current_jvm():
            if not self.exclusive or h.gen.active is h:
                return h.pi
        else:
            gen = self._gen if self._gen.jvm is _jvm.current_jvm() else _generator(self.game, self._param_str)
            self._gen = gen
            h = self._handle = _Handle(gen.acquire(), gen)
        h.pi.generateNewGame(self._seed, self.fold, False)
        for move in self._moves:
            h.pi.step(move)
        if self.exclusive:
            h.gen.active = h
        return h.pi

    def _release_handle(self) -> None:
        h, self._handle = self._handle, None
        if h is not None and h.gen.jvm is _jvm.current_jvm():
            h.gen.give_back(h.pi)

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
    def _new_game(self, seed: int | None, options: dict[str, Any]) -> str:
        if options:
            raise ValueError(f"{self.task_name}: reset takes no options, got {sorted(options)}")
        if self._gen.jvm is not _jvm.current_jvm():
            self._gen = _generator(self.game, self._param_str)
            self._handle = None
        seeds = self._gen.fold_seeds[self.fold]
        index = int(self.np_random.integers(len(seeds))) if seed is None else int(seed) % len(seeds)
        self._seed = seeds[index]
        self.game_index = index
        self._moves = ()
        self._facts = {}
        self._known = ()
        self._plan = None
        if self._handle is None:
            self._handle = _Handle(self._gen.acquire(), self._gen)
        pi = self._handle.pi
        raw = pi.generateNewGameJSON(self._seed, self.fold, False)
        if self.exclusive:
            self._gen.active = self._handle
        self._task = str(pi.getTaskDescription()).strip()
        self._accept(raw)
        return self._feedback_of(self._r)

    def _legal_moves(self) -> list[str]:
        return self._candidates_sorted

    def _play(self, move: str) -> str:
        pi = self._game_object()
        if move.startswith(_STATE_VERBS):
            self._note_fact(move)
        raw = pi.stepJSON(move)
        if move in self.remembered_moves:
            self._remember(orjson.loads(raw)["observation"])
        self._accept(raw)
        self._moves = self._moves + (move,)
        return self._feedback_of(self._r)

    def _remember(self, text: str) -> None:
        entry = "You remember: " + text.strip()
        if text.strip() and entry not in self._known:
            self._known = (*self._known, entry)

    def _describe(self) -> str:
        return self._desc

    def _progress(self) -> tuple[float, bool, bool]:
        r = self._r
        return min(1.0, max(0.0, float(r["score"]))), bool(r["tasksuccess"]), bool(r["taskfailure"])

    def _fork_into(self, clone: S1Env) -> None:
        assert isinstance(clone, TWXEnv)
        clone._handle = None  # lazy: made and replayed on the fork's first step
        clone._facts = dict(self._facts)
        if clone._jvm_ref is not None:
            clone._jvm_ref.retain()

    def _extra_info(self) -> dict[str, Any]:
        return {"game": self.game, "game_seed": self._seed}

    # ------------------------------------------------------- state key
    def _note_fact(self, move: str) -> None:
        """Remember the last hidden-state change per object (see :meth:`state_key`)."""
        verb, _, rest = move.partition(" ")
        m = _ROOM_RE.search(self._r.get("look", ""))
        room = m.group(1) if m else ""
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
        return self._gen.gold_path(self._seed, self.fold)

    def expert_action(self) -> str:
        """The next move of a winning plan from the current state (privileged; never in observations).

        On TWX's gold path it is the gold path's next move; off it, a plan the
        task computes from the current state (:meth:`_replan`) is followed
        while the game follows it.
        """
        self._require_started()
        if not self._candidates:
            raise RuntimeError(f"{self.task_name}: the game is over; there is no expert move")
        gold = self.gold_path()
        n = len(self._moves)
        if self._moves == gold[:n] and n < len(gold) and gold[n] in self._candidates:
            return gold[n]
        if self._plan is not None:
            start, plan = self._plan
            k = n - start
            if 0 <= k < len(plan) and self._moves[start:] == plan[:k]:
                move = self._next_in_plan(plan, k, start)
                if move is not None:
                    return move
        plan = self._replan()
        self._plan = (n, plan)
        move = self._next_in_plan(plan, 0, n) if plan else None
        if move is None:
            raise RuntimeError(
                f"{self.task_name}: the expert found no winning plan from this state (game seed {self._seed}, "
                f"moves so far {list(self._moves)})"
            )
        return move

    def _next_in_plan(self, plan: tuple[str, ...], k: int, start: int) -> str | None:
        move = plan[k]
        if move.startswith("move "):  # a closed door on the way ("move" is listed anyway): open it first
            direction = move.removeprefix("move ")
            door = "open door to " + direction
            if door in self._candidates and re.search(
                rf"To the {direction} you see a closed [^.]*door", self._r["look"], re.IGNORECASE
            ):
                self._plan = (start, plan[:k] + (door,) + plan[k:])
                return door
        return move if move in self._candidates else None

    def _replan(self) -> tuple[str, ...]:
        raise RuntimeError(
            f"{self.task_name}: the expert knows TWX's gold path only; this state is off it. "
            "Use another policy than Rule from off-path states."
        )

    # ---------------------------------------------------------- closing
    def close(self) -> None:
        self._release_handle()
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
_CUTS = {"chopped": "chop", "sliced": "slice", "diced": "dice"}
#: Cooking -> the devices that do it (a one-room game grills with the toaster; there is no barbeque).
_COOKS = {"fried": ("stove",), "roasted": ("oven",), "grilled": ("barbeque", "toaster")}
_CUT_FLAGS = {"chopped": "isChopped", "sliced": "isSliced", "diced": "isDiced"}
_COOK_FLAGS = {"fried": "isFried", "roasted": "isRoasted", "grilled": "isGrilled"}
_DIRECTIONS = ("north", "south", "east", "west")


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

    def __init__(self, *, size: str = "medium", max_candidates: int | None = None, **options: Any) -> None:
        if size not in _SIZES:
            raise ValueError(f"CookingWorld: size must be one of {list(_SIZES)}, got {size!r}")
        explicit = {k for k in ("num_locations", "num_ingredients", "num_distractors") if k in options}
        options = {**_SIZES[size], **options}
        if max_candidates is None:
            max_candidates = _CUSTOM_CAP if explicit or options.get("include_doors") else _SIZE_CAPS[size]
        self.size = size
        super().__init__(max_candidates=max_candidates, **options)

    # The expert off the gold path: a planner over the full game state (TWX's object tree).
    def _replan(self) -> tuple[str, ...]:
        tree = orjson.loads(str(self._game_object().game().getObjectTree()))
        graph = self._room_graph()
        here = tree["player_location"]
        held = tree["inventory"]
        plan: list[str] = []
        if "meal" in held:
            return ("eat meal",)

        where: dict[str, tuple[str, list[tuple[str, bool]]]] = {}
        objects: dict[str, Mapping[str, Any]] = dict(held)

        def index(node: Mapping[str, Any], room: str, chain: list[tuple[str, bool]]) -> None:
            for name, obj in node.get("contents", {}).items():
                where.setdefault(name, (room, chain))
                objects.setdefault(name, obj)
                index(obj, room, chain + [(name, bool(obj["isOpen"]) or not obj["isOpenable"])])

        for room, node in tree["locations"].items():
            index(node, room, [])
        opened: set[str] = set()

        def go(room: str) -> None:
            nonlocal here
            if room != here:
                plan.extend(_path(graph, here, room))
                here = room

        def fetch(item: str) -> None:
            room, chain = where[item]
            go(room)
            for container, is_open in chain:
                if not is_open and f"{room}/{container}" not in opened:
                    plan.append(f"open {container}")
                    opened.add(f"{room}/{container}")
            plan.append(f"take {item}")

        recipe = [(i["name"], [p.strip() for p in i["preparation"].split(",")]) for i in tree["recipe"]]
        needs_knife = any(p in _CUTS for _, preps in recipe for p in preps)
        if needs_knife and "knife" not in held:
            fetch("knife")
        for name, _ in recipe:
            if name not in held:
                fetch(name)
        for name, preps in recipe:
            obj = objects.get(name, {})
            for p in preps:
                if p in _CUTS and not obj.get(_CUT_FLAGS[p]):
                    plan.append(f"{_CUTS[p]} {name}")
        for name, preps in recipe:
            obj = objects.get(name, {})
            for p in preps:
                if p in _COOKS and not obj.get(_COOK_FLAGS[p]):
                    device = min(
                        (d for d in _COOKS[p] if d in where), key=lambda d: len(_path(graph, here, where[d][0]))
                    )
                    go(where[device][0])
                    plan.append(f"cook {name} in {device}")
        go("kitchen")
        plan += ["prepare meal", "eat meal"]
        return tuple(plan)

    def _room_graph(self) -> dict[str, dict[str, str]]:
        """room -> {direction: neighbour}, explored once per game with forks (the map never changes)."""
        key = (self._seed, self.fold)
        graph = self._gen.rooms.get(key)
        if graph is not None:
            return graph
        probe = self.fork()
        try:
            probe._moves, probe._handle = (), None  # from the start of the game
            start = _room_of(probe)
            graph, frontier = {}, deque([(start, probe)])
            while frontier:
                room, env = frontier.popleft()
                if room in graph:
                    continue
                graph[room] = {}
                for d in _DIRECTIONS:
                    if f"move {d}" not in _moves_now(env) and f"open door to {d}" not in _moves_now(env):
                        continue
                    child = env.fork()
                    if f"open door to {d}" in _moves_now(child):
                        child._play(f"open door to {d}")
                    child._play(f"move {d}")
                    graph[room][d] = _room_of(child)
                    frontier.append((graph[room][d], child))
        finally:
            probe.close()
        self._gen.rooms[key] = graph
        return graph


def _moves_now(env: TWXEnv) -> set[str]:
    return set(env._r["validActions"])


def _room_of(env: TWXEnv) -> str:
    if not env._moves:
        pi = env._game_object()
        env._accept(pi.generateNewGameJSON(env._seed, env.fold, False))
    m = _ROOM_RE.search(env._r["look"])
    return m.group(1) if m else ""


def _path(graph: Mapping[str, Mapping[str, str]], start: str, goal: str) -> list[str]:
    prev: dict[str, tuple[str, str] | None] = {start: None}
    queue = deque([start])
    while queue:
        room = queue.popleft()
        if room == goal:
            break
        for d, nxt in graph.get(room, {}).items():
            if nxt not in prev:
                prev[nxt] = (room, d)
                queue.append(nxt)
    if goal not in prev:
        raise RuntimeError(f"CookingWorld expert: no path from {start} to {goal}")
    moves = []
    node = goal
    while prev[node] is not None:
        room, d = prev[node]
        moves.append(f"move {d}")
        node = room
    return moves[::-1]


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
    default_max_candidates = 48  # measured max 31
