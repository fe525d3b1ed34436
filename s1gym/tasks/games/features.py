"""The games' structured states as numbers for RL (:class:`s1gym.rl.TaskFeatures` reads them through the
family's declaration): 2048's board as one-hot tile exponents, Blackjack's hand as its total, softness and
the dealer's up card."""

from __future__ import annotations

from typing import Any

import numpy as np

from s1gym.family import StateFeatures

__all__ = ["BOARD", "HAND"]


def board_features(env: Any) -> np.ndarray:
    """16 cells x 16 exponents, one-hot (an empty cell is exponent 0)."""
    board = env.board.ravel()
    exponents = np.zeros(16, dtype=np.int64)
    nonzero = board > 0
    exponents[nonzero] = np.log2(board[nonzero]).astype(np.int64)
    out = np.zeros((16, 16), dtype=np.float32)
    out[np.arange(16), exponents] = 1.0
    return out.ravel()


def hand_features(env: Any) -> np.ndarray:
    """The player's total one-hot (0..31), soft or not, and the dealer's up card one-hot (ace, 2..10)."""
    total, soft, dealer_up = env.hand_values
    out = np.zeros(43, dtype=np.float32)
    out[min(total, 31)] = 1.0
    out[32] = float(soft)
    out[32 + dealer_up] = 1.0  # 33..42: ace, 2..10
    return out


BOARD = StateFeatures(256, board_features)
HAND = StateFeatures(43, hand_features)
