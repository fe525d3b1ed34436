"""``s1/ScienceWorld-v0``: ScienceWorld's 30 science-experiment task types on the real simulator."""

from __future__ import annotations

import json
from collections.abc import Hashable, Mapping
from importlib import resources
from typing import Any, ClassVar

from s1gym.core import Progress, charset_for
from s1gym.engines.base import EngineEnv
from s1gym.tasks.scienceworld.candidates import ambiguity_answers, gold_candidate, narrow_ids
from s1gym.tasks.scienceworld.engine import Game, SWEngine, cached_variation

__all__ = ["FOLDS", "SIMPLIFICATIONS", "TASKS", "ScienceWorldEnv"]


def _task_names() -> tuple[str, ...]:
    """ScienceWorld's 30 task names, in its own order (its ``tasks.json``; no JVM needed)."""
    rows = json.loads(resources.files("scienceworld").joinpath("tasks.json").read_text(encoding="utf-8"))
    return tuple(row["task_name"] for row in rows)


#: ScienceWorld's task names (``boil``, ``melt``, ... ``use-thermometer``), in its order: the rows
TASKS: tuple[str, ...] = _task_names()
#: ScienceWorld's own variation split
FOLDS = ("train", "dev", "test")
#: ScienceWorld's simplifications; ``easy`` is all of them but ``noElectricalAction`` on electrical tasks
SIMPLIFICATIONS = ("teleportAction", "selfWateringFlowerPots", "openContainers", "openDoors",
                   "noElectricalAction")


class ScienceWorldEnv(EngineEnv):
    """ScienceWorld (Wang et al. 2022): 30 elementary-science task types in a simulated house on its JVM.

    ## Description

    Boil water, grow a plant, test an object's conductivity, work out a genotype: each task type has
    variations (7,207 in all) that ScienceWorld splits into train, dev and test. The observation is the
    task description, the last feedback, what is in view (``look around``) and the inventory, then the
    moves. Candidates are ScienceWorld's valid action-object combinations narrowed to the moves that apply
    to what is in view and in hand (:mod:`s1gym.tasks.scienceworld.candidates`); more than ``max_candidates``
    raises ``TooManyCandidatesError``.

    ## Action space

    ``Discrete(max_candidates)`` (default 1024) over the narrowed moves, ordered by kind then text; the mask
    marks the ones this state has.

    ## Observation space

    ``Text``: ``Task: ...``, the feedback, the room as ``look around`` shows it, the inventory, ``Moves: ...``.

    ## Rewards

    ScienceWorld's score (0-100) divided by 100; the reward is its change. A failed task (ScienceWorld's
    score below zero, e.g. focusing on the wrong thing) ends the episode ``lost`` with score 0.

    ## Starting state

    ``reset(seed=s)`` loads the game with ScienceWorld's ``load`` and nothing else (no extra ``look around``
    step: ScienceWorld's own ``reset()`` adds one, which breaks time-sensitive gold paths). With ``task``
    set, seed ``s`` plays that task's variation ``fold[s % n]``; without it the seed picks the task as well,
    ``TASKS[s % 30]`` and variation ``fold[(s // 30) % n]``. ``fork()`` snapshots the game inside the JVM
    (the family's Java helper: the game, the simulator's global random generator, id counter and
    simplifications) and a fork or the original restores that copy when it needs the process's one engine;
    without ``javac`` the state is replayed from ``load`` with every read made in between (reading the valid
    list draws from that generator), which is exact too, and slower.

    ## Episode end

    Terminated when ScienceWorld completes the task (``won``) or fails it (``lost``); truncated at
    ``max_steps`` (default 250; the longest gold paths take about 180 moves).

    ## Arguments

    ``gym.make("s1/ScienceWorld-v0", task="boil", fold="train", simplifications="easy", max_steps=250)``.

    ## Version history

    - v0: first version (scienceworld 1.2.3).
    """

    task_name = "ScienceWorld"
    default_max_candidates = 1024
    default_max_steps = 250
    engine_capacity: ClassVar[int] = 1  # the JVM-global random generator: one live game per process
    option_help: ClassVar[Mapping[str, str]] = {
        "task": "ScienceWorld's task name (boil, melt, ..., use-thermometer); default: drawn per seed",
        "fold": "ScienceWorld's variation split the seeds pick from: train (default), dev or test",
        "simplifications": "easy (default: all of ScienceWorld's simplifications), '' (none) or a comma list",
        "max_steps": "step limit (default 250)",
        "max_candidates": "candidate cap N (default 1024)",
    }

    def __init__(self, *, task: str | None = None, fold: str = "train", simplifications: str = "easy",
                 max_candidates: int | None = None, max_steps: int | None = None,
                 render_mode: str | None = None) -> None:
        if task is not None and task not in TASKS:
            raise ValueError(f"ScienceWorld: unknown task {task!r}; use one of {list(TASKS)}")
        if fold not in FOLDS:
            raise ValueError(f"ScienceWorld: fold must be one of {list(FOLDS)}, got {fold!r}")
        parts = [p for p in simplifications.split(",") if p]
        bad = [p for p in parts if p not in ("easy", *SIMPLIFICATIONS)]
        if bad:
            raise ValueError(f"ScienceWorld: unknown simplifications {bad}; use 'easy', '' or a comma list of "
                             f"{list(SIMPLIFICATIONS)}")
        super().__init__(max_candidates=max_candidates, max_steps=max_steps, render_mode=render_mode,
                         charset=charset_for(["\t\n"]))
        self.task, self.fold, self.simplifications = task, fold, simplifications
        self._game: Game | None = None
        self._desc = ""
        self._look = self._inventory = ""
        self._raw_score, self._completed = 0.0, False
        self._moves_now: tuple[str, ...] = ()
        self._move_ids: dict[str, tuple[int, ...]] = {}
        self.variation = -1
        #: the gold path's moves mapped to candidates so far (the expert's plan while the player follows it)
        self._expert_path: tuple[str, ...] = ()

    # ------------------------------------------------------------ engine hooks
    def _pool_key(self) -> Hashable:
        return ScienceWorldEnv

    def _open_engine(self) -> SWEngine:
        return SWEngine()

    def _choose_game(self, seed: int | None, options: dict[str, Any]) -> Game:
        if options:
            raise ValueError(f"ScienceWorld: reset takes no options, got {sorted(options)}; pass task=, fold= "
                             "and simplifications= to gym.make")
        game = self._game_for(int(self.np_random.integers(2**31)) if seed is None else int(seed))
        self._game, self._expert_path = game, ()
        return game

    def _game_for(self, seed: int) -> Game:
        if seed < 0:
            raise ValueError(f"ScienceWorld: seed must be >= 0, got {seed}")
        if self.task is None:
            return (TASKS[seed % len(TASKS)], self.fold, seed // len(TASKS), self.simplifications)
        return (self.task, self.fold, seed, self.simplifications)

    def game_of(self, seed: int) -> str:
        """The task and variation ``seed`` plays: a task's fold holds a fixed list of variations and the
        seeds wrap around it (a variation's index is the seed, or the seed // 30 when tasks are drawn)."""
        game = self._game_for(int(seed))
        variation = cached_variation(game)  # after a reset of this task, always: the runner asks per episode
        if variation is None:
            pool = self._pool()
            with pool.lock:  # an engine of the pool reads the fold's list (a state it held is restored when needed)
                engine = pool.acquire()
                try:
                    variation = engine.variation_of(game)
                finally:
                    pool.release(engine)
        return f"{game[0]} variation {variation}"

    def _on_start(self, raw: dict[str, Any]) -> str:
        self._desc = raw["task"].strip()
        self._accept(raw)
        return ""

    def _on_step(self, move: str, raw: dict[str, Any]) -> str:
        self._accept(raw)
        text = raw["observation"].strip()
        return "" if text == self._look else text  # look around repeats the view the observation shows

    def _accept(self, r: dict[str, Any]) -> None:
        self._look, self._inventory = r["look"].strip(), r["inventory"].strip()
        self._raw_score, self._completed = r["score"], r["completed"]
        self.variation = r["variation"]
        answers = ambiguity_answers(r.get("observation", ""))  # ScienceWorld asks which object a move meant
        # the narrowed moves with their object ids (kept, never changed: the expert maps a gold move by them)
        self._move_ids = narrow_ids(r["valid"], self._look, self._inventory, self.max_candidates - len(answers))
        self._moves_now = (*answers, *self._move_ids)

    # ------------------------------------------------------------ S1Env hooks
    def _legal_moves(self) -> list[str]:
        return list(self._moves_now)

    def _describe(self) -> str:
        return "\n\n".join(p for p in (self._desc, self._look, self._inventory) if p)

    def _progress(self) -> Progress:
        lost = self._raw_score < 0
        won = self._completed and not lost and self._raw_score >= 1.0
        score = min(1.0, max(0.0, self._raw_score))
        return Progress(0.0 if lost else score, won=won, lost=lost, over=self._completed and not (won or lost))

    def _fork_into(self, clone: EngineEnv) -> None:
        super()._fork_into(clone)  # every attribute of the game is a str, a float or a tuple: shared safely

    def _extra_info(self) -> dict[str, Any]:
        game = self._game
        return {"task": game[0] if game else "", "variation": int(self.variation)}

    def state_key(self) -> str:
        return f"{self._game}|{self._describe()}"

    # ------------------------------------------------------------ expert
    def gold_path(self) -> tuple[str, ...]:
        """ScienceWorld's gold action sequence of this game (privileged: for the expert and tests)."""
        engine = self.engine()
        state = self.game_state
        with engine.jvm.lock:
            key = (state.game[0], engine.variation_of(state.game), state.game[3])
            fresh = key not in engine.jvm.gold
            snap = engine.snapshot() if fresh and engine.can_snapshot else None
            path = engine.gold_path(state.game)
            if fresh:  # generating it loaded the game again: bring the engine back to this state
                if snap is not None:
                    engine.restore(state.game, snap)
                else:
                    engine.replay(state.game, state.moves)
        return path

    def _referents(self) -> dict[int, tuple[str, ...]]:
        """Every name ScienceWorld's parser accepts for each object of this state, by object id (privileged,
        for the expert's map of gold strings only; the read draws nothing from the game's random generator)."""
        engine = self.engine()
        with engine.jvm.lock:
            lut = json.loads(str(engine.server.getAllObjectIdsTypesReferentsLUTJSON()))
        return {int(i): tuple(entry.get("referents", ())) for i, entry in lut.items()}

    def expert_action(self) -> str:
        """The next gold move mapped to a candidate (:func:`~.candidates.gold_candidate`), while every move
        so far followed the mapped gold path; ``RuntimeError`` once the player left it (the expert is lost:
        the gold path holds for its own start only)."""
        moves = self.game_state.moves
        k = len(moves)
        if not self._on_expert_path():
            raise RuntimeError("ScienceWorld: the player left the gold path; the expert is lost")
        gold = self.gold_path()
        if k >= len(gold):
            raise RuntimeError("ScienceWorld: the gold path is played out")
        move = self._gold_move(gold[k])
        if move is None:
            raise RuntimeError(f"ScienceWorld: gold move {gold[k]!r} names no candidate")
        self._expert_path = (*moves, move)
        return move

    def rule_action(self) -> str:
        """The ``Rule`` baseline: the expert, privileged as ALFWorld's and TextWorldExpress's rule baselines
        are (ScienceWorld ships no hand-written player; a table reports Rule as the gold path's reference,
        not as a player that sees only the observation). Where the expert has no move Rule goes on instead
        of failing the episode: a gold move that names no candidate is passed with ``look around`` (it
        takes no tick and changes nothing; the gold path's next move comes next), and once the player left
        the gold path or the path is played out with the game still on, Rule plays ``wait1`` (time passes,
        so a process under way can still finish) until the step limit."""
        moves = self.game_state.moves
        k = len(moves)
        if not self._on_expert_path():
            return "wait1"
        gold = self.gold_path()
        if k >= len(gold):
            return "wait1"
        move = self._gold_move(gold[k]) or "look around"
        self._expert_path = (*moves, move)
        return move

    def _on_expert_path(self) -> bool:
        """Whether every move so far is the expert's (or Rule's) mapped gold move."""
        moves = self.game_state.moves
        return len(self._expert_path) >= len(moves) and moves == self._expert_path[:len(moves)]

    def _gold_move(self, gold: str) -> str | None:
        """The candidate naming ScienceWorld's gold string ``gold`` in this state (``None``: none does)."""
        return gold_candidate(gold, self._candidates, self._move_ids, self._referents())
