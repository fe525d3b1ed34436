"""s1/2048-v0: the 2048 sliding-tile game (4x4).

Rules of Gabriele Cirulli's original game (MIT licence, github.com/gabrielecirulli/2048):
a move slides every tile as far as it goes in one direction; two equal tiles
that meet merge into one of their sum, each tile merges at most once per move,
and the pair nearest the wall the tiles move towards merges first
(``[2, 2, 2, 2]`` left -> ``[4, 4, 0, 0]``, ``[4, 4, 8, 0]`` -> ``[8, 8, 0, 0]``).
A move that changes nothing is not a move. After each move one tile appears on
a uniformly random empty cell: a 2 with probability 9/10, else a 4. The game
starts with two such tiles. A merge scores the new tile's value (game points).

Actions: four fixed slots, 0 up, 1 down, 2 left, 3 right (N = 4; index i
always means the same direction, ``info["candidates"]`` lists the four); the
mask marks the moves that change the board and ``env.candidates`` lists
those. The game is lost when none does. Reaching ``target`` (default 2048)
wins and ends the episode.

Score (the contract's progress in [0, 1]): ``log2(largest tile) / log2(target)``
capped at 1, i.e. ``log2(max_tile) / 11`` for 2048: 2 -> 0.09, 256 -> 0.73,
2048 -> 1. Reward = change in that score (the core contract), so a move's
reward is ``1/11`` when it doubles the largest tile and 0 otherwise; the game
points (the classic score) are ``info["game_score"]`` and this move's points
``info["points"]``. ``info["max_tile"]`` is the largest tile.

Implementation: the board is one int, 4 bits per cell, and moves are table
lookups (:mod:`.board2048`: the merge rule, the tables, packing).

Randomness: tile spawns come from PCG32 (:mod:`.pcg32`; ``pcg32_srandom(seed,
54)`` of pcg-c-basic) held as one int, seeded with the reset seed (``reset()``
without a seed draws one from ``env.np_random``). Every policy therefore meets
the same tile draws for the same moves. The spawn draws a cell index below the
number of empty cells (unbiased: rejection sampling as in
``pcg32_boundedrand``), then the value (a 4 when a draw below 10 is 0).

``fork()`` copies the env's attributes: board, score and PCG32 state are
ints, so nothing else needs copying, and the Gymnasium generator
(``env.np_random``, only used to seed a seedless reset) is shared
copy-on-access: a fork or its parent copies it the first time it reads it.
That keeps ``fork()`` several times cheaper than the base class's, which copies
the generator eagerly (docs/benchmarks.md, "Figures behind the code").

A planner's fork (``planning_fork()``, what Search and Lookahead step) keeps the board but draws its
spawns from a fresh PCG32 stream (``chance_events``): it shows where tiles could appear, never where the
real game's next tile will.

``reset(options={"board": [[2, 0, 0, 2], ...]})`` starts from a given board
(tile values, 0 for empty; no tiles are added).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any, ClassVar

import numpy as np

from s1gym.core import Progress, S1Env
from s1gym.tasks.games.board2048 import (
    MAX_EXPONENT,
    MOVES,
    _all_moves,
    _Tables,
    _tables,
    exponents,
    pack_board,
    slide_row,
    slides,
)
from s1gym.tasks.games.pcg32 import PCG32, PCG_STREAM, pcg32_below, pcg32_next, pcg32_seed

__all__ = ["PCG32", "Game2048Env", "exponents", "pack_board", "pcg32_below", "pcg32_next", "pcg32_seed",
           "slide_row", "slides"]

#: The Rule baseline's preference order.
RULE_ORDER = ("down", "left", "right", "up")
_PCG_INC = (PCG_STREAM << 1) | 1  # the increment of every env's stream


@cache
def _row_text(row: int) -> str:
    """One row of the grid, each cell right-aligned in 5 characters (``.`` for empty); cached per row."""
    return " ".join(f"{(1 << e) if e else '.':>5}" for e in ((row >> (4 * c)) & 0xF for c in range(4)))


class Game2048Env(S1Env):
    """2048 on a 4x4 board (rules, score, RNG and fork in the module docstring)."""

    task_name = "2048"
    default_max_candidates = 4
    default_max_steps = 2000
    #: tile spawns: a planner's fork draws them from a fresh stream (:meth:`_reseed_chance`)
    chance_events = True
    _t: ClassVar[_Tables]
    option_help: ClassVar[Mapping[str, str]] = {
        "max_steps": "move limit (truncation), default 2000",
        "target": "tile that wins and ends the game, a power of two from 4 to 32768 (default 2048); "
        "score = log2(largest tile) / log2(target)",
    }

    def __init__(
        self,
        *,
        target: int = 2048,
        max_candidates: int | None = None,
        max_steps: int | None = None,
        render_mode: str | None = None,
    ) -> None:
        if (
            isinstance(target, bool)
            or not isinstance(target, (int, np.integer))
            or target < 4
            or target & (target - 1)
            or target > 2**MAX_EXPONENT
        ):
            raise ValueError(f"2048: target must be a power of two from 4 to 32768, got {target!r}")
        super().__init__(
            max_candidates=max_candidates, max_steps=max_steps, render_mode=render_mode, action_slots=MOVES
        )
        self.target = int(target)
        self._intro = (
            "2048: slide all tiles up, down, left or right; two equal tiles that meet merge into their sum. "
            f"Make a {self.target} tile."
        )
        self._target_exponent = self.target.bit_length() - 1
        # The move tables live on the class (built on first use), not in the instance, so that
        # copy.deepcopy and pickling of an env do not copy 65 536-row tables.
        type(self)._t = _tables()
        self._board = 0
        self._rng = 0  # PCG32 state (the increment is fixed: stream 54)
        self._game_score = 0
        self._points = 0
        self._moves: dict[str, tuple[int, int]] = {}

    # ----------------------------------------------------------- spawning
    def _spawn(self, board: int) -> tuple[int, int, int]:
        """Add a tile from the PCG32 stream: ``(board, cell, value)``."""
        empty = self._t.empty
        n_empty = (
            empty[board & 0xFFFF]
            + empty[(board >> 16) & 0xFFFF]
            + empty[(board >> 32) & 0xFFFF]
            + empty[board >> 48]
        )
        state, ten = pcg32_below(self._rng, _PCG_INC, 10)
        self._rng, j = pcg32_below(state, _PCG_INC, n_empty)
        four = ten == 0
        p = 0
        while True:
            if not (board >> (4 * p)) & 0xF:
                if j == 0:
                    break
                j -= 1
            p += 1
        return board | ((2 if four else 1) << (4 * p)), p, 4 if four else 2

    # ---------------------------------------------------------------- hooks
    def _new_game(self, seed: int | None, options: dict[str, Any]) -> str:
        unknown = set(options) - {"board"}
        if unknown:
            raise ValueError(f"2048: unknown reset option(s) {sorted(unknown)}; the only one is 'board'")
        if seed is None:
            seed = int(self.np_random.integers(2**63))
        self._rng = pcg32_seed(seed)
        self._game_score = 0
        self._points = 0
        if "board" in options:
            self._board = pack_board(options["board"])
        else:
            board, _, _ = self._spawn(0)
            self._board, _, _ = self._spawn(board)
        self._moves = _all_moves(self._board, self._t)
        return "New game."

    def _legal_moves(self) -> list[str]:
        return list(self._moves)

    def _play(self, move: str) -> str:
        board, points = self._moves[move]
        self._board, cell, value = self._spawn(board)
        self._points = points
        self._game_score += points
        self._moves = _all_moves(self._board, self._t)
        gained = f" (+{points} points)" if points else ""
        return f"You moved {move}{gained}. A {value} appeared in row {cell // 4 + 1}, column {cell % 4 + 1}."

    def _describe(self) -> str:
        b = self._board
        lines = [
            self._intro,
            f"Score: {self._game_score}   Largest tile: {self.max_tile}   Move {self._steps} of {self.max_steps}",
            _row_text(b & 0xFFFF),
            _row_text((b >> 16) & 0xFFFF),
            _row_text((b >> 32) & 0xFFFF),
            _row_text(b >> 48),
        ]
        if self._won:
            lines.append(f"You made a {self.target} tile: you win!")
        elif self._lost:
            lines.append("No move changes the board: game over.")
        return "\n".join(lines)

    def _progress(self) -> Progress:
        top = self._max_exponent()
        won = top >= self._target_exponent
        return Progress(min(1.0, top / self._target_exponent), won=won, lost=(not won) and not self._moves)

    def _extra_info(self) -> dict[str, Any]:
        return {"game_score": self._game_score, "max_tile": self.max_tile, "points": self._points}

    def state_key(self) -> str:
        """The board alone: the game score and move count do not change what can happen next."""
        return f"{self._board:016x}"

    # ------------------------------------------------------------ baseline
    def rule_action(self) -> str:
        """The fixed-order baseline: the first of down, left, right, up that changes the board."""
        self._require_started()
        for move in RULE_ORDER:
            if move in self._moves:
                return move
        raise ValueError("2048: the game is over; there is no move")

    def expert_action(self) -> str:
        return self.rule_action()

    # ----------------------------------------------------------------- fork
    def _reseed_chance(self, seed: int) -> None:
        self._rng = pcg32_seed(seed)

    def _fork_into(self, clone: S1Env) -> None:
        """Nothing to copy: every game attribute is an immutable int or tuple (the Gymnasium generator is
        shared until read, as every fork shares it: :meth:`s1gym.core.forks.Forks.fork`)."""

    # ------------------------------------------------------------- helpers
    def _max_exponent(self) -> int:
        top = self._t.top
        b = self._board
        return max(top[b & 0xFFFF], top[(b >> 16) & 0xFFFF], top[(b >> 32) & 0xFFFF], top[b >> 48])

    @property
    def max_tile(self) -> int:
        e = self._max_exponent()
        return 1 << e if e else 0

    @property
    def game_score(self) -> int:
        return self._game_score

    @property
    def board(self) -> np.ndarray:
        """The tiles as a 4x4 int array (0 = empty); a copy."""
        return np.array([(1 << e) if e else 0 for e in exponents(self._board)], dtype=np.int64).reshape(4, 4)

    @classmethod
    def summarize_episodes(cls, final_infos: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """Distribution of the largest tile and the mean game score."""
        tiles = [int(i["max_tile"]) for i in final_infos if "max_tile" in i]
        if not tiles:
            return {}
        scores = [int(i.get("game_score", 0)) for i in final_infos if "max_tile" in i]
        counts = Counter(tiles)
        return {
            "max_tile_counts": {str(k): counts[k] for k in sorted(counts)},
            "mean_game_score": float(np.mean(scores)),
            "mean_log2_max_tile": float(np.mean([math.log2(t) for t in tiles])),
        }
