"""``s1/ScienceWorld-v0``: ScienceWorld's 30 science-experiment task types on the real simulator."""

from __future__ import annotations

import functools
import json
from collections.abc import Hashable, Mapping
from importlib import resources
from typing import Any, ClassVar

from s1gym.core import Progress, charset_for
from s1gym.engines.base import EngineEnv
from s1gym.tasks.scienceworld.candidates import ambiguity_answers, gold_candidate, narrow_ids, room_of
from s1gym.tasks.scienceworld.engine import Answer, Game, SWEngine, cached_variation, valid_list

__all__ = ["FOLDS", "REPLAN_OFFSETS", "SIMPLIFICATIONS", "TASKS", "ScienceWorldEnv"]


def _task_names() -> tuple[str, ...]:
    """ScienceWorld's 30 task names, in its own order (its ``tasks.json``; no JVM needed)."""
    rows = json.loads(resources.files("scienceworld").joinpath("tasks.json").read_text(encoding="utf-8"))
    return tuple(row["task_name"] for row in rows)


#: ScienceWorld's task names (``boil``, ``melt``, ... ``use-thermometer``), in its order: the rows
TASKS: tuple[str, ...] = _task_names()
#: ScienceWorld's own variation split
FOLDS = ("train", "dev", "test")
#: where the expert's replan takes up the gold path, after ``j`` (the index of the next gold move the player
#: did not play), in the order tried: the rest as it was, the last gold move again (undone by the player's
#: move), the next skipped (done by the player's move), then two back and two ahead (the way back to the
#: gold path's room comes first and the undo of the player's move after ``+0``: ``ScienceWorldEnv._replan``)
REPLAN_OFFSETS = (0, -1, 1, -2, 2)
#: ScienceWorld's simplifications; ``easy`` is all of them but ``noElectricalAction`` on electrical tasks
SIMPLIFICATIONS = ("teleportAction", "selfWateringFlowerPots", "openContainers", "openDoors",
                   "noElectricalAction")


#: distinct (valid list, look, inventory, cap) narrowings kept (:func:`narrowed`)
NARROWED = 128


@functools.lru_cache(maxsize=NARROWED)
def narrowed(valid_text: str, look: str, inventory: str, cap: int) -> dict[str, tuple[int, ...]]:
    """:func:`~.candidates.narrow_ids` of the valid list the JVM sent as ``valid_text`` (its JSON or the
    helper's compact form: :func:`~.engine.valid_list`), remembered for the last :data:`NARROWED` distinct
    arguments: the narrowing is a function of exactly these, and a search's sibling children often show the
    same list (a ``look at`` changes nothing it lists), so their answers are neither parsed nor narrowed
    again. The dict is shared by the states that show that list: never changed."""
    return narrow_ids(valid_list(valid_text), look, inventory, cap)


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

    ``Discrete(max_candidates)`` (default 2048) over the narrowed moves, ordered by kind then text; the mask
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
    list draws from that generator), which is exact too, and slower. A planner's fork (``Situation.fork``,
    what Search and Lookahead step) does not play ``focus on`` (:meth:`is_answer_move`): a wrong focus fails
    the task and the right one scores or wins, so stepping it would tell the planner the answer.

    ## Episode end

    Terminated when ScienceWorld completes the task (``won``) or fails it (``lost``); truncated at
    ``max_steps`` (default 250; the longest gold paths take about 180 moves).

    ## Arguments

    ``gym.make("s1/ScienceWorld-v0", task="boil", fold="train", simplifications="easy", max_steps=250)``.

    ## Version history

    - v0: first version (scienceworld 1.2.3); the cap N went from 1024 to 2048 on 2026-12-06 (a dev
      mendelian-genetics-unknown-plant state off the gold path offered 1,026 moves).
    """

    task_name = "ScienceWorld"
    default_max_candidates = 2048
    default_max_steps = 250
    engine_capacity: ClassVar[int] = 1  # the JVM-global random generator: one live game per process
    #: the expert's replan tries undoing the player's last move (:meth:`_undo_moves`); off: the bench's A/B
    replan_undo: ClassVar[bool] = True
    option_help: ClassVar[Mapping[str, str]] = {
        "task": "ScienceWorld's task name (boil, melt, ..., use-thermometer); default: drawn per seed",
        "fold": "ScienceWorld's variation split the seeds pick from: train (default), dev or test",
        "simplifications": "easy (default: all of ScienceWorld's simplifications), '' (none) or a comma list",
        "max_steps": "step limit (default 250)",
        "max_candidates": "candidate cap N (default 2048)",
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
        #: the expert's plan: the moves from the game's start, those played and those it will play (the gold
        #: path's moves mapped to candidates as their states come, or after a replan a plan checked to win)
        self._expert_path: tuple[str, ...] = ()
        #: after a replan, the gold path's index each move of the plan plays (-1: a move played before it)
        self._expert_gold: tuple[int, ...] = ()
        #: the plan was checked on forks to win (a replan), so it holds to its end
        self._expert_checked = False
        #: the moves at which a replan found no rest of the gold path that wins (the expert is lost there
        #: and at every state after them)
        self._expert_lost: tuple[str, ...] | None = None
        #: replans, the fork steps they took and the try the last one took (``"back"``: the way back to the
        #: gold path's room, ``"undo"``, else the offset ``"+0"``, ``"-1"``, ...; ``None``: none wins); for the bench,
        #: privileged, never observed
        self.replans = self.replan_steps = 0
        self.replan_offset: str | None = None
        #: the room the game started in (where the gold path is before its first ``go to``)
        self._start_room = ""

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
        self._game, self._expert_path, self._expert_gold = game, (), ()
        self._expert_checked, self._expert_lost = False, None
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

    def _on_start(self, raw: Answer) -> str:
        self._desc = raw["task"].strip()
        self._accept(raw)
        self._start_room = room_of(self._look)
        return ""

    def _on_step(self, move: str, raw: Answer) -> str:
        self._accept(raw)
        text = raw["observation"].strip()
        return "" if text == self._look else text  # look around repeats the view the observation shows

    def _accept(self, r: Answer) -> None:
        self._look, self._inventory = r["look"].strip(), r["inventory"].strip()
        self._raw_score, self._completed = r["score"], r["completed"]
        self.variation = r["variation"]
        answers = ambiguity_answers(r.get("observation", ""))  # ScienceWorld asks which object a move meant
        # the narrowed moves with their object ids (kept, never changed: the expert maps a gold move by them;
        # shared with every state that shows the same valid list, look and inventory)
        self._move_ids = narrowed(r.valid_text, self._look, self._inventory, self.max_candidates - len(answers))
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

    def is_answer_move(self, move: str) -> bool:
        """``focus on X`` states the answer: ScienceWorld scores or wins it when X is the object the task
        means and fails the task when it is not, so a planning fork does not play it."""
        return move.startswith("focus on ")

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
        """The next move of the expert's plan (privileged). While every move so far is the expert's (or
        Rule's), the plan is ScienceWorld's gold path, each gold string mapped to a candidate as its state
        comes (:func:`~.candidates.gold_candidate`); ``RuntimeError`` where a gold move names no candidate or
        the path is played out.

        Once the player left the plan the expert replans (:meth:`_replan`): from the gold path's index ``j``
        of the next plan move not played, it plays the rest of the gold path from ``j`` and from the indices
        near it (:data:`REPLAN_OFFSETS`; also after the way back to the gold path's room, or after a move
        undoing the player's last one) on forks of this state, each gold string mapped to the fork's
        candidates as it goes, and keeps the first rest that wins the game within the step limit: a plan
        checked to win, which it then follows at no cost while the player does. Forks never touch this
        env's game (the engine is given back its state). ``RuntimeError`` when no rest wins: the expert is
        lost for this state and every state after it (it does not try again there)."""
        moves = self.game_state.moves
        k = len(moves)
        if not self._on_expert_path():
            self._replan()
        elif self._expert_checked:  # following a plan checked to win
            if k >= len(self._expert_path):
                raise RuntimeError("ScienceWorld: the expert's plan is played out")
            return self._expert_path[k]
        else:
            gold = self.gold_path()
            if k >= len(gold):
                raise RuntimeError("ScienceWorld: the gold path is played out")
            move = self._gold_move(gold[k])
            if move is None:
                raise RuntimeError(f"ScienceWorld: gold move {gold[k]!r} names no candidate")
            self._expert_path = (*moves, move)
            return move
        if k >= len(self._expert_path):  # pragma: no cover - a checked plan wins before it runs out
            raise RuntimeError("ScienceWorld: the expert's plan is played out")
        return self._expert_path[k]

    def rule_action(self) -> str:
        """The ``Rule`` baseline: the expert, privileged as ALFWorld's and TextWorldExpress's rule baselines
        are (ScienceWorld ships no hand-written player; a table reports Rule as the gold path's reference,
        not as a player that sees only the observation). Where the expert has no move Rule goes on instead
        of failing the episode: a gold move that names no candidate is passed with ``look around`` (it
        takes no tick and changes nothing; the gold path's next move comes next); once the player left the
        plan, Rule plays the expert's checked replan (:meth:`expert_action`) and, where the expert is lost
        or the gold path is played out with the game still on, ``wait1`` (time passes, so a process under
        way can still finish) until the step limit."""
        moves = self.game_state.moves
        k = len(moves)
        if not self._on_expert_path() or self._expert_checked:
            try:
                return self.expert_action()
            except RuntimeError:
                return "wait1"
        gold = self.gold_path()
        if k >= len(gold):
            return "wait1"
        move = self._gold_move(gold[k]) or "look around"
        self._expert_path = (*moves, move)
        return move

    def _replan(self) -> None:
        """The expert's plan after the player left it (:meth:`expert_action`); ``RuntimeError`` when lost.

        ``j``: the gold index of the plan's first move the player did not play (the moves agree with the
        plan up to there; past the plan's end, the index after its last move). Tried in order: when the
        player is in another room than the gold path at ``j`` (the room of its last ``go to``/``teleport
        to`` before ``j``, else the room the game started in), first the way back (``teleport to`` that room,
        else ``go to`` it, when a candidate) and the rest from ``j``; then, for each ``d`` of
        :data:`REPLAN_OFFSETS` with ``j + d`` within the gold path, the rest from ``j + d``, where after the
        first (``+0``) come the moves that undo the player's last move (:meth:`_undo_moves`), each followed by
        the rest from ``j`` (``undo``). A try plays on a
        fork of this state gold moves from its start, each mapped to the fork's candidates (one that names
        none is skipped), until the game ends or the path runs out; the first that ends won is the plan.
        Deterministic: the forks are exact."""
        moves = self.game_state.moves
        lost = self._expert_lost
        if lost is not None and moves[:len(lost)] == lost:
            raise RuntimeError("ScienceWorld: the player left the gold path and no rest of it wins from here; "
                               "the expert is lost")
        gold = self.gold_path()
        path = self._expert_path
        m = 0
        while m < min(len(moves), len(path)) and moves[m] == path[m]:
            m += 1
        if not self._expert_checked:  # the gold path itself: its i-th move stands for gold move i
            j = m
        else:
            j = self._expert_gold[m] if m < len(path) else self._expert_gold[-1] + 1
        self.replans += 1
        self.replan_offset = None
        tries: list[tuple[str, str | None, int]] = []
        room = self._gold_room(gold, j)
        if room and room != room_of(self._look):
            back = next((w for w in (f"teleport to {room}", f"go to {room}") if w in self._candidates), None)
            if back is not None:
                tries.append(("back", back, j))
        offsets = [(f"{d:+d}", None, j + d) for d in REPLAN_OFFSETS if 0 <= j + d < len(gold)]
        undo = [("undo", w, j) for w in self._undo_moves(moves[m:])] if self.replan_undo and j < len(gold) else []
        tries += offsets[:1] + undo + offsets[1:]
        try:
            for label, first, i in tries:
                rest = self._rest_wins(gold, i, first)
                if rest is not None:
                    self._expert_path = (*moves, *(move for move, _ in rest))
                    self._expert_gold = (*(-1 for _ in moves), *(g for _, g in rest))
                    self._expert_checked, self.replan_offset = True, label
                    return
        finally:
            self.engine()  # this env's engine holds its state again (a fork took it)
        self._expert_lost = moves
        raise RuntimeError("ScienceWorld: the player left the gold path and no rest of it wins from here; "
                           "the expert is lost")

    def _undo_moves(self, off: tuple[str, ...]) -> list[str]:
        """Candidates that undo the last of the player's moves ``off`` (those off the plan): ``close`` what
        it opened and back, ``deactivate`` what it activated and back, ``put down`` what it picked up and
        back, ``disconnect`` the objects a ``connect`` joined (the one it connected to first)."""
        if not off:
            return []
        last = off[-1]
        pairs = (("open ", "close "), ("close ", "open "), ("activate ", "deactivate "),
                 ("deactivate ", "activate "), ("pick up ", "put down "), ("put down ", "pick up "))
        out: list[str] = []
        for verb, inverse in pairs:
            if last.startswith(verb):
                thing = last[len(verb):]
                out += [f"{inverse}{name}" for name in (thing, thing.split(" in ")[0])]
        if last.startswith("connect ") and " to " in last:
            a, b = last[len("connect "):].split(" to ", 1)
            for part in (b, a):  # the object a terminal belongs to: the longest disconnect name it holds
                names = [c[len("disconnect "):] for c in self._candidates if c.startswith("disconnect ")]
                held = [n for n in names if f" {n} " in f" {part} "]
                if held:
                    out.append("disconnect " + max(held, key=len))
        return [m for m in dict.fromkeys(out) if m in self._candidates]

    def _gold_room(self, gold: tuple[str, ...], j: int) -> str:
        """The room the gold path is in before its ``j``-th move: where its last ``go to`` or ``teleport to``
        before ``j`` led, else the room the game started in."""
        for move in reversed(gold[:j]):
            for verb in ("teleport to ", "go to "):
                if move.startswith(verb):
                    return move[len(verb):].strip()
        return self._start_room

    def _rest_wins(self, gold: tuple[str, ...], start: int,
                   first: str | None = None) -> list[tuple[str, int]] | None:
        """The gold path's moves from ``start`` mapped to candidates on a fork of this state (after the move
        ``first``, when given), with their gold indices (``first`` stands for ``start``), when playing them
        wins the game before the step limit (``None``: it does not)."""
        fork = self.fork()
        rest: list[tuple[str, int]] = []
        try:
            if first is not None:
                fork.step_move(first)
                self.replan_steps += 1
                rest.append((first, start))
            for g in range(start, len(gold)):
                if fork.done:
                    break
                move = fork._gold_move(gold[g])
                if move is None:
                    continue
                fork.step_move(move)
                self.replan_steps += 1
                rest.append((move, g))
            return rest if fork.won else None
        finally:
            fork.close()

    def _on_expert_path(self) -> bool:
        """Whether every move so far is the expert's (or Rule's) mapped gold move."""
        moves = self.game_state.moves
        return len(self._expert_path) >= len(moves) and moves == self._expert_path[:len(moves)]

    def _gold_move(self, gold: str) -> str | None:
        """The candidate naming ScienceWorld's gold string ``gold`` in this state (``None``: none does)."""
        return gold_candidate(gold, self._candidates, self._move_ids, self._referents())
