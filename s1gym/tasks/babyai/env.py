"""s1/BabyAI-v0: minigrid's BabyAI levels as text, the seven actions as fixed slots (:class:`BabyAIEnv`)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any, ClassVar

from s1gym.core import BASE_CHARSET, Progress, S1Env
from s1gym.tasks.babyai.expert import BotShadow
from s1gym.tasks.babyai.memory import Memory
from s1gym.tasks.babyai.view import describe_world, object_name
from s1gym.tasks.babyai.world import (
    ACTIONS,
    DEFAULT_LEVELS,
    DONE,
    DROP,
    PICKUP,
    TOGGLE,
    check_level,
    copy_world,
    legal_actions,
    make_level,
    reset_world,
)

__all__ = ["FOLDS", "BabyAIEnv", "clause_flags", "clauses_done", "mission_clauses", "parts_line"]

#: a fold's seeds play minigrid seeds ``seed + FOLDS[fold]``: the folds never share a game
FOLDS: dict[str, int] = {"train": 0, "dev": 1_000_000_000, "test": 2_000_000_000}


def clause_flags(instr: Any, finished: bool = False) -> tuple[bool, ...]:
    """Whether each clause of a BabyAI instruction is done, in the mission's text order ("go to X and pick
    up Y": 2 clauses), read from minigrid's verifier (a sequence marks a side done with ``a_done``/``b_done
    == "success"``; the mission's text is ``a``'s then ``b``'s)."""
    from minigrid.envs.babyai.core.verifier import SeqInstr

    if not isinstance(instr, SeqInstr):
        return (finished,)
    return (clause_flags(instr.instr_a, finished or instr.a_done == "success")
            + clause_flags(instr.instr_b, finished or instr.b_done == "success"))


def clauses_done(instr: Any, finished: bool = False) -> tuple[int, int]:
    """``(done, total)`` clauses of a BabyAI instruction (:func:`clause_flags` counted)."""
    flags = clause_flags(instr, finished)
    return sum(flags), len(flags)


def mission_clauses(mission: str) -> list[str]:
    """The mission's clauses in its text order (minigrid writes a sequence as ``a`` joined to ``b`` by
    ", then ", " after you " or " and "; no object description holds those words)."""
    return [c for part in re.split(r", then | after you ", mission) for c in part.split(" and ")]


def parts_line(world: Any) -> str:
    """``"Parts of the mission done: 1 of 2 (go to a red ball)."``, the parts done named in the mission's
    order ("; " between them); ``""`` for a mission of one part."""
    flags = clause_flags(world.instrs)
    if len(flags) < 2:
        return ""
    texts = mission_clauses(str(world.mission))
    done = [t for t, f in zip(texts, flags, strict=False) if f] if len(texts) == len(flags) else []
    named = f" ({'; '.join(done)})" if done else ""
    return f"Parts of the mission done: {sum(flags)} of {len(flags)}{named}."


class BabyAIEnv(S1Env):
    """BabyAI (minigrid 3.2): follow a mission in a grid world seen from the agent's eyes, as text.

    ## Description

    Each seed plays one BabyAI game: a level of minigrid's BabyAI suite ("go to the red ball", "put the
    blue key next to the grey box", "open the door on your left, then pick up a purple ball") on a grid of
    rooms. The agent sees a 7x7 square ahead of it; the observation writes that view as text (the view is
    written here: minigrid has none), with what it saw before and cannot see now placed from where it
    stands (GoToLocal, train seed 7, after one move, two remembered objects of five shown)::

        You turn right.

        Level: GoToLocal.

        Mission: go to a purple ball
        In view:
        - a purple ball in your row, 2 to the left (2 moves away, first turn left)
        - a yellow box 2 steps ahead, 1 to the left (3 moves away, first move forward)
        - a blue box 1 step ahead, 3 to the left (4 moves away, first move forward)
        Seen before, out of view now:
        - a red key 2 steps behind, 1 to the left (4 moves away, first turn left)
        - a purple ball 3 steps behind (4 moves away, first turn left)
        Cells seen so far: 53.
        Nearest unseen cell: 4 moves away, first turn left.
        In front of you: nothing (the cell is free).
        Walls: ahead 3 steps away, left none in view, right 1 step away.
        You carry nothing.

        Moves: turn left, turn right, move forward

    "F steps ahead (behind), S to the left/right" is F cells forward (back), then S cells sideways; the note
    after it counts the moves (turns, steps, opening a door) to stand facing the object by the shortest way over
    the cells seen so far, and names the first ("no known way" when the cells seen give none); "Nearest unseen
    cell" is the same for the nearest cell not seen yet. When the mission places an object from the agent's
    start ("the box on your left"), each note adds where the object lay seen from the start ("at the start:
    behind, on your left"; "another room": outside the start room, where minigrid places nothing). Doors read locked,
    closed or open; "Walls" gives the nearest wall straight ahead and to each side within view. A mission
    of several parts ("go to the red ball, then open a door") adds, under the level, how many parts are
    done, naming them ("Parts of the mission done: 1 of 2 (go to the red ball)."; "; " between several).

    ## Action space

    ``Discrete(7)``, fixed slots in minigrid's order: 0 ``turn left``, 1 ``turn right``, 2 ``move
    forward``, 3 ``pick up``, 4 ``drop``, 5 ``toggle``, 6 ``done``. The mask keeps the ones that can
    change anything: moving forward onto a free cell or through an open door, picking up a key, ball or box
    in front with empty hands, dropping onto the free cell in front, toggling a door (a locked one only
    while carrying its key) or a box, and ``done`` only when it completes the mission (a "go to" clause
    whose object is in front as the clause before it completes); turning is always legal.

    ## Observation space

    ``Text`` (printable ASCII): the last feedback ("You pick up the red ball."), the level, the view above,
    then ``Moves:`` and the legal moves.

    ## Rewards

    The score is 1 once the mission is done; before, the fraction of the mission's clauses done ("go to
    the red ball and pick up a key" is 2 clauses: 0.5 after the first); the reward is its change. minigrid's
    own reward (1 - 0.9 * steps / max_steps on success) is in ``info["engine_reward"]``.

    ## Starting state

    ``reset(seed=s)`` plays minigrid's game ``s + offset`` of the chosen level, the offset by fold (train
    0, dev 1e9, test 2e9), so the folds share no game. Without ``level``, seed s plays level
    ``DEFAULT_LEVELS[s % 7]`` (GoToLocal, PickupLoc, PutNextLocal, Open, UnlockPickup, GoToSeq, SynthSeq).
    Resets are silent (minigrid's "Sampling rejected" prints are swallowed). Nothing is random after the
    reset. ``fork()`` copies the grid's movable objects and doors, the agent, the carried object, the
    mission's verifier and the RNG (walls are shared), so it is exact and costs about a step; a fork
    reveals nothing the player could not find by walking, so ``fork_reveals_answer`` is False.

    ## Episode end

    Terminated when the mission is done (``won``) or failed (``lost``: a level's strict clause broken);
    truncated at the level's own step limit (minigrid's ``max_steps``, e.g. 64 on GoToLocal) unless
    ``max_steps`` is given.

    ## Arguments

    ``gym.make("s1/BabyAI-v0", level="PutNextLocal", fold="test", max_steps=None)``: ``level`` any BabyAI
    level minigrid registers (``None``: drawn per seed); ``fold`` train, dev or test.

    ## Version history

    - v0: first version (minigrid 3.2.0).
    """

    task_name = "BabyAI"
    default_max_candidates = len(ACTIONS)
    default_max_steps = 64
    option_help: ClassVar[Mapping[str, str]] = {
        "level": "a BabyAI level (GoToLocal, PickupLoc, ...; any minigrid registers); default: seed s plays "
                 "GoToLocal, PickupLoc, PutNextLocal, Open, UnlockPickup, GoToSeq, SynthSeq [s % 7]",
        "fold": "which games the seeds pick: train (default), dev or test (minigrid seed + 0, 1e9, 2e9)",
        "max_steps": "step limit (default: the level's own, e.g. 64 on GoToLocal)",
    }

    def __init__(self, *, level: str | None = None, fold: str = "train", max_steps: int | None = None,
                 max_candidates: int | None = None, render_mode: str | None = None) -> None:
        super().__init__(max_candidates=max_candidates, max_steps=max_steps, charset=BASE_CHARSET,
                         render_mode=render_mode, action_slots=ACTIONS)
        if fold not in FOLDS:
            raise ValueError(f"BabyAI: fold must be one of {list(FOLDS)}, got {fold!r}")
        self.level_option = None if level is None else check_level(level)
        self.fold = fold
        self._max_steps_option = max_steps
        self._templates: dict[str, Any] = {}  # level -> the world minigrid generates games in
        self.level = ""
        self.world: Any = None
        self._start: Any = None  # the game at reset (never stepped: the expert's replays start here)
        self._moves: tuple[int, ...] = ()
        self._shadow: BotShadow | None = None
        self._status = ""  # "won" or "lost" once the mission ends
        self._engine_reward = 0.0
        self._text: str | None = None
        self._memory: Memory | None = None
        self._view: Any = None  # the agent's view now: gen_obs_grid's grid and mask, and its size

    def _look(self) -> None:
        """Take the agent's view now and remember what it shows."""
        grid, vis = self.world.gen_obs_grid()
        self._view = (grid, vis, self.world.agent_view_size)
        assert self._memory is not None
        self._memory.look(self.world, self._view)

    # ---------------------------------------------------------------- hooks
    def _new_game(self, seed: int | None, options: dict[str, Any]) -> str:
        if options:
            raise ValueError(f"BabyAI: unknown reset option(s) {sorted(options)}; it takes none "
                             "(choose the level with gym.make('s1/BabyAI-v0', level=...))")
        if seed is None:
            seed = int(self.np_random.integers(FOLDS["dev"]))
        self.level = self.level_option or DEFAULT_LEVELS[seed % len(DEFAULT_LEVELS)]
        template = self._templates.get(self.level)
        if template is None:
            template = self._templates[self.level] = make_level(self.level)
        reset_world(template, seed + FOLDS[self.fold])
        self._start = copy_world(template)
        self.world = copy_world(self._start)
        self.max_steps = self._max_steps_option or int(self.world.max_steps)
        self._moves, self._shadow, self._status, self._engine_reward, self._text = (), None, "", 0.0, None
        self._memory = Memory(self.world.width, self.world.height)
        self._memory.set_origin(self.world)
        self._look()
        return f"A new mission (level {self.level})."

    def _legal_moves(self) -> list[str]:
        return [ACTIONS[a] for a in legal_actions(self.world)]

    def _play(self, move: str) -> str:
        action = ACTIONS.index(move)
        world = self.world
        front = world.grid.get(*world.front_pos)
        before = (object_name(front) if front is not None else "", world.carrying)
        _obs, reward, terminated, _truncated, _ = world.step(action)
        self._moves = self._moves + (action,)
        self._text = None
        self._look()
        text = self._feedback_for(action, before)
        if terminated:
            self._status = "won" if reward > 0 else "lost"
            self._engine_reward = float(reward)
            text += " Mission complete." if reward > 0 else " Mission failed."
        return text

    def _feedback_for(self, action: int, before: tuple[str, Any]) -> str:
        front_name, carried = before
        if action == PICKUP:
            return f"You pick up the {object_name(self.world.carrying)}."
        if action == DROP:
            return f"You drop the {object_name(carried)}."
        if action == TOGGLE:
            now = self.world.grid.get(*self.world.front_pos)
            if front_name.endswith("box"):
                inside = "nothing" if now is None else f"a {object_name(now)}"
                return f"You open the {front_name}: it held {inside}."
            door = front_name.split(" ", 1)[1]
            verb = {"locked": "unlock and open", "closed": "open", "open": "close"}[front_name.split(" ", 1)[0]]
            return f"You {verb} the {door}."
        if action == DONE:
            return "You say you are done."
        return f"You {ACTIONS[action]}."

    def _describe(self) -> str:
        if self._text is None:
            parts = parts_line(self.world)
            parts = f"\n{parts}" if parts else ""
            self._text = f"Level: {self.level}.{parts}\n\n{describe_world(self.world, self._memory, self._view)}"
        return self._text

    def _progress(self) -> Progress:
        if self._status == "won":
            return Progress(1.0, won=True)
        done, total = clauses_done(self.world.instrs)
        return Progress(done / total if total else 0.0, lost=self._status == "lost")

    def _fork_into(self, clone: S1Env) -> None:
        assert isinstance(clone, BabyAIEnv)
        clone.world = copy_world(self.world)
        clone._memory = None if self._memory is None else self._memory.copy()
        clone._shadow = None  # a fork asked for the expert replays the moves from the reset state

    def _extra_info(self) -> dict[str, Any]:
        return {"level": self.level, "mission": str(self.world.mission), "engine_reward": self._engine_reward}

    def state_key(self) -> str:
        """The whole state (the view shows only part of it): agent, carried object, every cell, the
        mission's clauses done."""
        w = self.world
        digest = hashlib.blake2b(w.grid.encode().tobytes(), digest_size=12).hexdigest()
        carry = object_name(w.carrying) if w.carrying is not None else "-"
        return f"{self.level}|{w.agent_pos}|{w.agent_dir}|{carry}|{digest}|{clause_flags(w.instrs)}|{self._status}"

    # ------------------------------------------------------------ baseline
    def expert_action(self) -> str:
        """minigrid's ``BabyAIBot``'s move (:mod:`.expert`), always a candidate: when the bot names a move
        that changes nothing (it lost track after moves off its plan), a fresh bot from this state is asked;
        when that one has no advice either, the first legal move."""
        if self._over:
            return self.action_slots[0] if self.action_slots else ""
        if self._shadow is None:
            self._shadow = BotShadow.replay(self._start, self._moves)
        action = self._shadow.follow(self._moves)
        move = ACTIONS[action] if 0 <= action < len(ACTIONS) else ""
        if move not in self._candidates:  # the bot lost track (a move off its plan): a fresh bot from here
            action = self._shadow.restart()
            move = ACTIONS[action] if 0 <= action < len(ACTIONS) else ""
        return move if move in self._candidates else self._candidates[0]
