"""s1race/Race-v0: race to a goal total against a house that plays a stated, deterministic rule."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from s1gym.core import BASE_CHARSET, Progress, S1Env

__all__ = ["MOVES", "RaceEnv", "expert_move", "house_move"]

#: the three moves, in slot order: ``add k`` adds k to the total
MOVES = ("add 1", "add 2", "add 3")
#: the goals a seed picks from (inclusive)
GOALS = (15, 31)


def house_move(total: int, goal: int) -> int:
    """What the house adds: 1 while the total is at most half the goal; past half, what leaves a multiple
    of 4 to go (the winning reply), or 1 when the total already leaves one."""
    left = (goal - total) % 4
    return left if 2 * total > goal and left else 1


def expert_move(total: int, goal: int) -> str:
    """The expert's move: leave a multiple of 4 to go (whatever the house adds, the expert can restore it,
    and 0 to go is a multiple of 4); when the total already leaves one, add 1 and wait for the house's 1."""
    left = (goal - total) % 4
    return MOVES[(left or 1) - 1]


class RaceEnv(S1Env):
    """Race to N: you and the house take turns adding 1, 2 or 3 to a running total; reaching the goal wins.

    ## Description

    A Nim variant without chance. The total starts at 0; whoever brings it to exactly ``goal`` wins, and no
    move may pass the goal. The house's rule is fixed and stated in the observation: it adds 1 while the
    total is at most half the goal, then plays the winning reply (leave a multiple of 4 to go) when there is
    one, else 1. Its reply happens inside the step that plays your move. The seed picks the goal (15 to 31)
    and who starts; when the house starts, its first move is part of the reset.

    ## Action space

    ``Discrete(3)``, fixed slots: 0 ``add 1``, 1 ``add 2``, 2 ``add 3``; a move that would pass the goal is
    masked.

    ## Observation space

    ``Text`` (printable ASCII): the last moves (yours and the house's reply), the rules with the house's
    rule, the total and what is left to go (or the result), then ``Moves: add 1, add 2, add 3``.

    ## Rewards

    The score is 0 while the game runs, 1 once you win (0 when you lose); the reward is its change, so the
    episode's rewards sum to the final score.

    ## Starting state

    Total 0. The goal and who starts come from a PCG64 generator seeded with the reset seed (``reset()``
    without one draws it from ``np_random``); nothing random happens after the reset. ``fork()`` is exact,
    and a fork reveals nothing a player could not compute: the game and the house's stated rule are
    deterministic, so ``fork_reveals_answer`` is False and Lookahead and Search may look ahead freely.

    ## Episode end

    Terminated when either side reaches the goal (``won`` or ``lost``); truncated at ``max_steps``.

    ## Arguments

    ``gym.make("s1race/Race-v0", max_steps=40)``.

    ## Version history

    - v0: first version.
    """

    task_name = "Race"
    default_max_candidates = 3
    default_max_steps = 40
    option_help: ClassVar[Mapping[str, str]] = {
        "max_steps": "step limit (default 40; a game takes at most 16 of your moves)",
    }

    def __init__(self, *, max_candidates: int | None = None, max_steps: int | None = None,
                 render_mode: str | None = None) -> None:
        # every text is printable ASCII; a task printing more would pass charset_for(its texts)
        super().__init__(max_candidates=max_candidates, max_steps=max_steps, charset=BASE_CHARSET,
                         render_mode=render_mode, action_slots=MOVES)
        self.goal, self.total, self.you_started = GOALS[0], 0, True
        self._winner = ""  # "you" or "house" once the goal is reached

    # ---------------------------------------------------------------- hooks
    def _new_game(self, seed: int | None, options: dict[str, Any]) -> str:
        if options:
            raise ValueError(f"Race: unknown reset option(s) {sorted(options)}; it takes none")
        if seed is None:
            seed = int(self.np_random.integers(2**63))
        draw = np.random.Generator(np.random.PCG64(seed))
        self.goal = int(draw.integers(GOALS[0], GOALS[1] + 1))
        self.you_started = bool(draw.integers(2))
        self.total, self._winner = 0, ""
        if self.you_started:
            return "New game: you start."
        return f"New game: the house starts. {self._house_turn()}"

    def _legal_moves(self) -> list[str]:
        return list(MOVES[: min(3, self.goal - self.total)])

    def _play(self, move: str) -> str:
        self.total += MOVES.index(move) + 1
        text = f"You add {MOVES.index(move) + 1}: total {self.total}."
        if self.total >= self.goal:
            self._winner = "you"
            return text
        return f"{text} {self._house_turn()}"

    def _house_turn(self) -> str:
        """The house's move, as one sentence."""
        added = house_move(self.total, self.goal)
        self.total += added
        if self.total >= self.goal:
            self._winner = "house"
        return f"The house adds {added}: total {self.total}."

    def _describe(self) -> str:
        rules = (f"Race to {self.goal} against the house. You and the house take turns adding 1, 2 or 3 to "
                 f"the total; whoever brings it to exactly {self.goal} wins (no move may pass it). The house "
                 "adds 1 while the total is at most half the goal; past half it adds what leaves a multiple "
                 "of 4 to go, or 1 when the total already leaves one.")
        return f"{rules}\n{self._status()}"

    def _status(self) -> str:
        """Who won, or the total so far (the line :func:`s1race.model.read_total` reads)."""
        if self._winner == "you":
            return f"You reach {self.goal}: you win."
        if self._winner == "house":
            return f"The house reaches {self.goal}: the house wins."
        return f"Total: {self.total} of {self.goal} ({self.goal - self.total} to go)."

    def _progress(self) -> Progress:
        won, lost = self._winner == "you", self._winner == "house"
        return Progress(1.0 if won else 0.0, won=won, lost=lost)

    def _fork_into(self, clone: S1Env) -> None:
        # the state is ints, a bool and a str (shared safely): nothing mutable to copy
        pass

    def _extra_info(self) -> dict[str, Any]:
        return {"goal": self.goal, "total": self.total}

    def state_key(self) -> str:
        """Goal and total: who added what to reach the total does not change the state."""
        return f"{self.goal}|{self.total}"

    # ------------------------------------------------------------ baseline
    def expert_action(self) -> str:
        """:func:`expert_move` on the total (it reads only what the player sees, so Rule plays it too)."""
        return expert_move(self.total, self.goal)
