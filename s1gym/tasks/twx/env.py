"""The TextWorldExpress base env (TWXEnv): CookingWorld and the other TWX games (:mod:`.games`) on it.

Engine: the Scala simulator shipped in ``textworld-express`` (1.1.0), reached
through py4j. Unlike ``textworld_express.TextWorldExpressEnv`` (one JVM per env,
``clone()`` = new JVM + replay; docs/benchmarks.md), every env and fork of a process
shares one JVM (:mod:`s1gym.engines.jvm`) and owns its own Scala
``PythonInterface`` game object in it. The game generator of each
``(game, params)`` is loaded once per JVM and shared.

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

Fork. TWX envs stand on the engine seam (:mod:`s1gym.engines.base`): an
engine is one Scala game object; :meth:`S1Env.fork` is lazy (the fork copies
the Python state and holds no game object until it is stepped), then takes a
game object from the pool of its ``(game, params)`` and replays the move
history (TWX has no state copy; bench/twx.py measures a replayed move).
``close()`` (or garbage collection) makes the game object idle for others; the
JVM lives on for the other envs.

Experts: TWX's gold path and the CookingWorld planner live in
:mod:`s1gym.tasks.twx.expert`.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Mapping
from typing import Any, ClassVar

import orjson

from s1gym.core import Progress
from s1gym.engines import jvm as _jvm
from s1gym.engines.base import EngineEnv
from s1gym.tasks.twx import expert as twx_expert
from s1gym.tasks.twx.engine import GameGenerator, TWXEngine, game_generator, get_jvm
from s1gym.tasks.twx.games import GAMES, Param, Preset, TWXGame
from s1gym.tasks.twx.view import room_in

__all__ = ["ENVS", "TWXEnv", "shutdown_jvm"]

FOLDS = ("train", "dev", "test")
#: Game objects per (game, params) alive at once; more envs replay their games on demand.
ENGINE_CAPACITY = 256
shutdown_jvm = _jvm.shutdown_jvm


_EXITS_RE = re.compile(r"(To the|Through an? )", re.IGNORECASE)
_STATE_VERBS = ("open", "close", "put", "drop", "take")


class TWXEnv(EngineEnv):
    """A TextWorldExpress game behind the s1gym contract. Each game is a row of
    :data:`s1gym.tasks.twx.games.GAMES`; :data:`ENVS` holds the class of each (``CookingWorldEnv``, ...),
    which sets the attributes below from its row."""

    #: The game's row (name, parameters, cap N, what the player remembers).
    row: ClassVar[TWXGame | None] = None
    #: TWX's game name (``cookingworld``, ``coin``, ...).
    game: ClassVar[str] = ""
    #: The game's parameters exposed as options.
    params: ClassVar[tuple[Param, ...]] = ()
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
        preset = self.row.preset if self.row is not None else None
        if preset is not None:
            options, preset_cap = self._apply_preset(preset, options)
            max_candidates = preset_cap if max_candidates is None else max_candidates
        if self.row is not None and self.row.limits is not None:
            cap, steps = self.row.limits(options)
            max_candidates = cap if max_candidates is None else max_candidates
            max_steps = steps if max_steps is None else max_steps
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
        self._gen = game_generator(self.game, self._param_str)
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

    def _apply_preset(self, preset: Preset, options: dict[str, Any]) -> tuple[dict[str, Any], int]:
        """The options with the preset's parameters under them, and the cap N they call for."""
        options = dict(options)
        choice = options.pop(preset.option, preset.default)
        if choice not in preset.choices:
            raise ValueError(
                f"{self.task_name}: {preset.option} must be one of {list(preset.choices)}, got {choice!r}"
            )
        explicit = any(k in options for k in preset.choices[choice])
        options = {**preset.choices[choice], **options}
        setattr(self, preset.option, choice)
        return options, preset.custom_cap if explicit or options.get("include_doors") else preset.caps[choice]

    @classmethod
    def resolve_options(cls, options: Mapping[str, Any]) -> dict[str, Any]:
        out = super().resolve_options({})
        preset = cls.row.preset if cls.row is not None else None
        if preset is not None:
            choice = options.get(preset.option, preset.default)
            out[preset.option] = choice
            options = {**preset.choices.get(choice, {}), **options}
        return {**out, **{p.option: p.default for p in cls.params}, **options}

    @classmethod
    def of(cls, row: TWXGame) -> type[TWXEnv]:
        """The env class of one game's row."""
        preset_help = {row.preset.option: row.preset.help} if row.preset is not None else {}
        attrs: dict[str, Any] = {
            "__doc__": row.doc,
            "__module__": __name__,
            "__qualname__": row.class_name,
            "row": row,
            "task_name": row.task_name,
            "game": row.game,
            "params": row.params,
            "default_max_candidates": row.cap,
            "remembered_moves": row.remembered_moves,
            "remember_latest": row.remember_latest,
            "exclusive": row.exclusive,
            "feedback_in_state": row.feedback_in_state,
            # the preset, the game's parameters, then the options every TWX game takes
            "option_help": {
                **preset_help,
                **{p.option: p.help for p in row.params},
                **cls._common_help,
                **row.extra_help,
            },
        }
        return type(row.class_name, (cls,), attrs)

    # ----------------------------------------------------------- engine
    def _generator(self) -> GameGenerator:
        """This env's generator in the live JVM (a new one after a JVM restart)."""
        if self._gen.jvm is not _jvm.current_jvm():
            self._gen = game_generator(self.game, self._param_str)
        return self._gen

    def _pool_key(self) -> Hashable:
        return ("twx", self._generator())

    def _open_engine(self) -> TWXEngine:
        return TWXEngine(self._generator())

    @property
    def moves(self) -> tuple[str, ...]:
        """The moves played since the start of the game."""
        return self.game_state.moves

    def _accept(self, raw: str | dict[str, Any]) -> None:
        r = orjson.loads(raw) if isinstance(raw, str) else raw  # a step's JSON, or already parsed
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

    def game_of(self, seed: int) -> str:
        """The fold's game ``seed`` plays: a fold holds a fixed list of games and seed s plays game
        ``s % len(fold)``."""
        seeds = self._generator().fold_seeds[self.fold]
        return f"{self.fold} game {int(seed) % len(seeds)} of {len(seeds)}"

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

    def _on_step(self, move: str, raw: str | dict[str, Any]) -> str:
        """``raw``: the step's JSON, or already parsed (a child stepped with its siblings: ``fork_steps``)."""
        if move.startswith(_STATE_VERBS):
            self._note_fact(move)  # reads the view before the move
        r = orjson.loads(raw) if isinstance(raw, str) else raw
        if move in self.remembered_moves:
            self._remember(r["observation"])
        room = self._room()
        self._accept(r)
        feedback = self._feedback_of(self._r)
        if not feedback and self._room() != room:
            # TWX answers a move with the new room's view, which the observation shows anyway; the feedback
            # keeps where the move led and the room's exits ("You are in the pantry.\nTo the West you see
            # the kitchen."), so the history holds the map a player would remember.
            exits = [line.strip() for line in self._r["look"].splitlines()[1:] if _EXITS_RE.match(line.strip())]
            feedback = "\n".join([f"You are in the {self._room()}.", *exits])
        return feedback

    def _room(self) -> str:
        return room_in(self._r.get("look", ""))

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
        the gold path's next move while on it, else the game's planner (:mod:`s1gym.tasks.twx.expert`)."""
        self._require_started()
        move, self._plan = twx_expert.expert_action(self)
        return move

    def expert_view(self) -> twx_expert.TWXExpertView:
        """What the experts read beyond the public state (privileged; never in observations)."""
        look = self._r.get("look", "")
        return twx_expert.TWXExpertView(self._seed, look, self._plan, self._generator().rooms)

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


#: The env class of every game of :data:`~s1gym.tasks.twx.games.GAMES`, by class name (the gym entry points).
ENVS: dict[str, type[TWXEnv]] = {row.class_name: TWXEnv.of(row) for row in GAMES}


def __getattr__(name: str) -> type[TWXEnv]:
    """``s1gym.tasks.twx.env.CookingWorldEnv`` and the other games' classes (what gym.make imports)."""
    try:
        return ENVS[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
