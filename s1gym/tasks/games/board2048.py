"""The 2048 board as one int and its moves: the merge rule, the move tables and board packing.

The board is one Python int, 4 bits per cell holding the tile's exponent (cell ``4*row + col`` at bits
``4*(4*row + col)``), as in nneonneo's 2048-ai. Moves are lookups in tables of all 65 536 rows, built once
with numpy; per-move numpy calls on a 4x4 array would cost microseconds each. Tiles stop at 2^15 = 32768
(two of them do not merge; unreachable in practice: it needs some 16 000 moves).

:func:`slide_row` is the reference merge rule (the tables are checked against it in the tests);
:func:`slides` gives every move's result for a packed board. The game around it: :mod:`.game2048`.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import NamedTuple

import numpy as np

__all__ = ["MAX_EXPONENT", "MOVES", "exponents", "pack_board", "slide_row", "slides"]

MOVES = ("up", "down", "left", "right")
MAX_EXPONENT = 15


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

