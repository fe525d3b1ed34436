"""Blackjack and 2048 read as feature names, for Local's fitted models of these games.

Everything is read off the text a player sees (:attr:`Situation.state_text`): Blackjack's hand and the
dealer's up card; 2048's board, on which each move's slide is computed (the tile the game spawns next is not
known, so it is not read). A fitted model weighs these names (:mod:`.model`).
"""

from __future__ import annotations

import re

from s1gym.core import Situation
from s1gym.models.token_model import per_move
from s1gym.tasks.games.game2048 import exponents, pack_board, slides

__all__ = ["blackjack_tokens", "board_tokens", "read_board", "read_hand"]

_HAND = re.compile(r"^Your hand: .*\((soft|hard) (\d+)", re.MULTILINE)
_UP = re.compile(r"^Dealer shows: (A|J|Q|K|\d+)", re.MULTILINE)


def read_hand(text: str) -> tuple[str, int, int] | None:
    """``(soft|hard, total, dealer's up card 1..10)`` of an open Blackjack hand; ``None`` once it is settled."""
    hand, up = _HAND.search(text), _UP.search(text)
    if hand is None or up is None:
        return None
    return hand[1], int(hand[2]), {"A": 1, "J": 10, "Q": 10, "K": 10}.get(up[1]) or int(up[1])


def blackjack_tokens(situation: Situation) -> list[list[str]]:
    """Per move: the move, the move with the hand, with the up card, and with both (a cell of the chart)."""
    return per_move(situation, read_hand, _hand_names)


def _hand_names(m: str, hand: tuple[str, int, int]) -> list[str]:
    kind, total, up = hand
    return [m, f"{m}|{kind}{total}", f"{m}|up{up}", f"{m}|{kind}{total}|up{up}"]


_CELL = re.compile(r"^\s*(\.|\d+)\s+(\.|\d+)\s+(\.|\d+)\s+(\.|\d+)\s*$")


def read_board(text: str) -> int | None:
    """The packed 2048 board (:mod:`s1gym.tasks.games.game2048`) of the four grid rows in ``text``."""
    rows = [[0 if v == "." else int(v) for v in m.groups()] for line in text.splitlines() if (m := _CELL.match(line))]
    return pack_board(rows[:4]) if len(rows) >= 4 else None


def _monotone_lines(cells: list[int]) -> int:
    """Rows and columns whose exponents never rise or never fall along them (0..8)."""
    lines = [cells[4 * r:4 * r + 4] for r in range(4)] + [cells[c::4] for c in range(4)]
    return sum(all(a >= b for a, b in zip(v, v[1:])) or all(a <= b for a, b in zip(v, v[1:])) for v in lines)


_CORNERS = {0: "tl", 3: "tr", 12: "bl", 15: "br"}


def board_tokens(situation: Situation) -> list[list[str]]:
    """Per move, names for the board after its slide (before the spawn): the move, empty cells, merges, rows
    and columns in order, where the largest tile sits (a corner, an edge) and whether a corner's largest tile
    leaves it; the move paired with the corner the largest tile is in now."""
    board = read_board(situation.state_text or "")
    if board is None:
        return [[c.text] for c in situation.candidates]
    after = slides(board)
    before = exponents(board)
    top = max(before)
    corner_now = next((name for p, name in _CORNERS.items() if before[p] == top), "none")
    occupied = sum(v > 0 for v in before)
    rows = []
    for c in situation.candidates:
        m = c.text
        names = [m, f"{m}|corner:{corner_now}"]
        if m in after:
            cells = exponents(after[m][0])
            empty = cells.count(0)
            at = [p for p, v in enumerate(cells) if v == max(cells)]
            in_corner = any(p in _CORNERS for p in at)
            names += [f"empty:{min(empty, 10)}", f"merges:{min(occupied - (16 - empty), 4)}",
                      f"monotone:{_monotone_lines(cells)}", f"top_corner:{in_corner}",
                      f"top_edge:{any(p % 4 in (0, 3) or p // 4 in (0, 3) for p in at)}"]
            if corner_now != "none" and not in_corner:
                names.append("top_leaves_corner")
        rows.append(names)
    return rows
