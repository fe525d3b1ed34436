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

Implementation: the board is one Python int, 4 bits per cell holding the
tile's exponent (cell ``4*row + col`` at bits ``4*(4*row + col)``), as in
nneonneo's 2048-ai. Moves are lookups in tables of all 65 536 rows, built once
with numpy; per-move numpy calls on a 4x4 array would cost microseconds each.
Tiles stop at 2^15 = 32768 (two of them do not merge; unreachable in
practice: it needs some 16 000 moves).

Randomness: tile spawns come from PCG32 (M. E. O'Neill, "PCG: A Family of
Simple Fast Space-Efficient Statistically Good Algorithms for Random Number
Generation", 2014; ``pcg32_srandom(seed, 54)`` of pcg-c-basic) held as one int,
seeded with the reset seed (``reset()`` without a seed draws one from
``env.np_random``). Every policy therefore meets the same tile draws for the
same moves. The spawn draws a cell index below the number of empty cells
(unbiased: rejection sampling as in ``pcg32_boundedrand``), then the value
(a 4 when a draw below 10 is 0).

``fork()`` copies the env's attributes: board, score and PCG32 state are
ints, so nothing else needs copying, and the Gymnasium generator
(``env.np_random``, only used to seed a seedless reset) is shared
copy-on-access: a fork or its parent copies it the first time it reads it.
That keeps ``fork()`` several times cheaper than the base class's, which copies
the generator eagerly (docs/benchmarks.md, "Figures behind the code").

``reset(options={"board": [[2, 0, 0, 2], ...]})`` starts from a given board
(tile values, 0 for empty; no tiles are added).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any, ClassVar, NamedTuple

import gymnasium as gym
import numpy as np

from s1gym.core import Progress, S1Env, copy_generator

__all__ = ["PCG32", "Game2048Env", "exponents", "pack_board", "pcg32_below", "pcg32_next", "pcg32_seed",
           "slide_row", "slides"]

MOVES = ("up", "down", "left", "right")
#: The Rule baseline's preference order.
RULE_ORDER = ("down", "left", "right", "up")
MAX_EXPONENT = 15
_MASK64 = (1 << 64) - 1
_MASK32 = 0xFFFFFFFF


# --------------------------------------------------------------------------- rules
def slide_row(row: Sequence[int]) -> tuple[list[int], int]:
    """Slide one row of tile values towards index 0: ``(new row, points)``.

    The reference implementation of the merge rule (the tables are built
    vectorised and checked against it in the tests).
    """
    tiles = [v for v in row if v]
    out: list[int] = []
    points = 0
    i = 0
    while i < len(tiles):
        if i + 1 < len(tiles) and tiles[i] == tiles[i + 1] and tiles[i] < 2**MAX_EXPONENT:
            out.append(2 * tiles[i])
            points += 2 * tiles[i]
            i += 2
        else:
            out.append(tiles[i])
            i += 1
    return out + [0] * (len(row) - len(out)), points


class _Tables(NamedTuple):
    left: list[int]  # row -> row slid towards nibble 0
    right: list[int]  # row -> row slid towards nibble 3
    col_up: list[int]  # row (a column read top to bottom) -> slid up, spread to bits 0, 16, 32, 48
    col_down: list[int]
    points_left: list[int]
    points_right: list[int]
    empty: list[int]  # empty cells of the row
    top: list[int]  # largest exponent of the row


@cache
def _tables() -> _Tables:
    """Every 16-bit row's result of each move, vectorised with numpy (computed once per process)."""
    rows = np.arange(1 << 16, dtype=np.int64)
    cells = (rows[:, None] >> (4 * np.arange(4))) & 0xF
    out = np.zeros_like(cells)
    write = np.zeros(rows.size, dtype=np.int64)  # next free slot
    last = np.zeros(rows.size, dtype=np.int64)  # exponent of the last placed tile that may still merge
    points = np.zeros(rows.size, dtype=np.int64)
    for c in range(4):
        v = cells[:, c]
        merge = (v != 0) & (last == v) & (v < MAX_EXPONENT)
        place = (v != 0) & ~merge
        i = np.nonzero(merge)[0]
        out[i, write[i] - 1] += 1
        points[i] += 1 << (v[i] + 1)
        last[i] = 0
        i = np.nonzero(place)[0]
        out[i, write[i]] = v[i]
        write[i] += 1
        last[i] = v[i]
    shifts4 = 4 * np.arange(4)
    left = (out << shifts4).sum(axis=1)
    reverse = (cells[:, ::-1] << shifts4).sum(axis=1)  # row -> its mirror image
    right = reverse[left[reverse]]
    spread = (np.uint64(1) << (16 * np.arange(4, dtype=np.uint64))).astype(np.uint64)

    def as_column(r: np.ndarray) -> list[int]:
        nib = ((r[:, None] >> shifts4) & 0xF).astype(np.uint64)
        return (nib * spread).sum(axis=1, dtype=np.uint64).tolist()

    return _Tables(
        left=left.tolist(),
        right=right.tolist(),
        col_up=as_column(left),
        col_down=as_column(right),
        points_left=points.tolist(),
        points_right=points[reverse].tolist(),
        empty=(cells == 0).sum(axis=1).tolist(),
        top=cells.max(axis=1).tolist(),
    )


def _transpose(x: int) -> int:
    """Swap rows and columns of a packed board (nneonneo's 2048-ai bit trick)."""
    a = (x & 0xF0F00F0FF0F00F0F) | ((x & 0x0000F0F00000F0F0) << 12) | ((x & 0x0F0F00000F0F0000) >> 12)
    return (a & 0xFF00FF0000FF00FF) | ((a & 0x00FF00FF00000000) >> 24) | ((a & 0x00000000FF00FF00) << 24)


def _all_moves(board: int, t: _Tables) -> dict[str, tuple[int, int]]:
    """``move -> (board after the slide, points)`` for the moves that change the board, in MOVES order."""
    r0, r1, r2, r3 = board & 0xFFFF, (board >> 16) & 0xFFFF, (board >> 32) & 0xFFFF, board >> 48
    c = _transpose(board)
    c0, c1, c2, c3 = c & 0xFFFF, (c >> 16) & 0xFFFF, (c >> 32) & 0xFFFF, c >> 48
    L, R, U, D, PL, PR = t.left, t.right, t.col_up, t.col_down, t.points_left, t.points_right
    results = (
        ("up", U[c0] | U[c1] << 4 | U[c2] << 8 | U[c3] << 12, PL[c0] + PL[c1] + PL[c2] + PL[c3]),
        ("down", D[c0] | D[c1] << 4 | D[c2] << 8 | D[c3] << 12, PR[c0] + PR[c1] + PR[c2] + PR[c3]),
        ("left", L[r0] | L[r1] << 16 | L[r2] << 32 | L[r3] << 48, PL[r0] + PL[r1] + PL[r2] + PL[r3]),
        ("right", R[r0] | R[r1] << 16 | R[r2] << 32 | R[r3] << 48, PR[r0] + PR[r1] + PR[r2] + PR[r3]),
    )
    return {move: (after, points) for move, after, points in results if after != board}


@cache
def _row_text(row: int) -> str:
    """One row of the grid, each cell right-aligned in 5 characters (``.`` for empty); cached per row."""
    return " ".join(f"{(1 << e) if e else '.':>5}" for e in ((row >> (4 * c)) & 0xF for c in range(4)))


def slides(board: int) -> dict[str, tuple[int, int]]:
    """``move -> (board after the slide, points)`` for the moves that change the packed ``board`` (no spawn)."""
    return _all_moves(board, _tables())


def exponents(board: int) -> list[int]:
    """The 16 cells' exponents of a packed board (0 = empty), row by row."""
    return [(board >> (4 * p)) & 0xF for p in range(16)]


def pack_board(values: Sequence[Sequence[int]]) -> int:
    """Tile values (4x4, 0 = empty) -> packed board; clear errors for anything else."""
    grid = np.asarray(values)
    if grid.shape != (4, 4) or not np.issubdtype(grid.dtype, np.integer):
        raise ValueError(f"2048: options['board'] must be 4x4 integers (0 = empty), got {values!r}")
    board = 0
    for p, v in enumerate(int(v) for v in grid.flat):
        e = v.bit_length() - 1
        if v != 0 and (v < 2 or v & (v - 1) or e > MAX_EXPONENT):
            raise ValueError(f"2048: board tiles must be 0 or powers of two from 2 to 32768, got {v}")
        board |= (e if v else 0) << (4 * p)
    return board


# --------------------------------------------------------------------------- RNG
_PCG_MULTIPLIER = 6364136223846793005
#: The stream of every env (pcg-c-basic's demo stream), i.e. the increment ``2 * 54 + 1``.
PCG_STREAM = 54


def pcg32_seed(seed: int, stream: int = PCG_STREAM) -> int:
    """The PCG32 state after ``pcg32_srandom(seed, stream)``."""
    inc = ((stream << 1) | 1) & _MASK64
    state = (inc + (seed & _MASK64)) & _MASK64  # state 0 stepped once is inc
    return (state * _PCG_MULTIPLIER + inc) & _MASK64


def pcg32_next(state: int, inc: int) -> tuple[int, int]:
    """PCG-XSH-RR: ``(next state, 32-bit output)``."""
    xorshifted = (((state >> 18) ^ state) >> 27) & _MASK32
    rot = state >> 59
    return (state * _PCG_MULTIPLIER + inc) & _MASK64, (
        (xorshifted >> rot) | (xorshifted << ((-rot) & 31))
    ) & _MASK32


def pcg32_below(state: int, inc: int, bound: int) -> tuple[int, int]:
    """``(next state, uniform int in [0, bound))`` without modulo bias (``pcg32_boundedrand``)."""
    threshold = (1 << 32) % bound  # == (2**32 - bound) % bound
    while True:
        state, r = pcg32_next(state, inc)
        if r >= threshold:
            return state, r % bound


class PCG32:
    """A PCG32 stream object (for tests and benchmarks; the env keeps only the int state)."""

    def __init__(self, seed: int, stream: int = PCG_STREAM) -> None:
        self.inc = ((stream << 1) | 1) & _MASK64
        self.state = pcg32_seed(seed, stream)

    def next(self) -> int:
        self.state, out = pcg32_next(self.state, self.inc)
        return out

    def below(self, bound: int) -> int:
        self.state, out = pcg32_below(self.state, self.inc, bound)
        return out


# --------------------------------------------------------------------------- env
class Game2048Env(S1Env):
    """2048 on a 4x4 board (rules, score, RNG and fork in the module docstring)."""

    task_name = "2048"
    #: Local's fitted model (bench/others_local.py: one-step rollout improvement of the rule, train seeds)
    local_model = "local_2048.json"
    default_max_candidates = 4
    default_max_steps = 2000
    stall_patience = 6
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
        self._shared_np_random: np.random.Generator | None = None

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
    def fork(self) -> Game2048Env:
        """An independent env in this state: every game attribute is an immutable int or tuple.

        The Gymnasium generator is shared until either env reads ``np_random``
        (copy-on-access), which keeps a fork cheap (docs/benchmarks.md).
        """
        self._require_started()
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        if self._np_random is not None:
            self._shared_np_random = clone._shared_np_random = self._np_random
        return clone

    @property
    def np_random(self) -> np.random.Generator:
        if self._np_random is not None and self._np_random is self._shared_np_random:
            self._np_random = copy_generator(self._np_random)
            self._shared_np_random = None
        return gym.Env.np_random.fget(self)

    @np_random.setter
    def np_random(self, value: np.random.Generator) -> None:
        gym.Env.np_random.fset(self, value)

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


_PCG_INC = (PCG_STREAM << 1) | 1
