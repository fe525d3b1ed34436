"""Solve-rate curves: the share of an arm's games won within b inner-policy calls, for every budget b.

:func:`solve_curve` builds one from the calls each game used and whether it was won (why one run at the
largest cap gives the whole curve is in its docstring); :mod:`s1gym.reporting.drawing` draws them.
Only numpy: nothing here imports matplotlib.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["Curve", "solve_curve"]


@dataclass(frozen=True)
class Curve:
    """The share of an arm's games won within b inner-policy calls, for b from 1 on.

    A step function kept at its steps: ``solve_rate[i]`` holds for ``budgets[i] <= b <
    budgets[i+1]`` (and past the last step); ``budgets`` starts at 1 and, for capped games, ends
    at the cap. Use :meth:`at` for any b.
    """

    label: str
    budgets: np.ndarray
    solve_rate: np.ndarray
    games: int
    won: int
    #: the call cap the games were played under: the curve says nothing past it; ``None`` when they
    #: had none (more calls would not change them, so the curve holds for every budget)
    cap: int | None

    def at(self, budget: int | Sequence[int] | np.ndarray) -> np.ndarray:
        """The solve rate within ``budget`` calls (0 below 1 call; past the cap unknown: ValueError)."""
        b = np.asarray(budget)
        if self.cap is not None and np.any(b > self.cap):
            raise ValueError(f"{self.label}: the curve ends at {self.cap} calls (its games' call cap)")
        i = np.searchsorted(self.budgets, b, side="right") - 1
        return np.where(i >= 0, self.solve_rate[np.maximum(i, 0)], 0.0)


def solve_curve(calls: Sequence[int], won: Sequence[bool], cap: int | None = None, label: str = "") -> Curve:
    """The solve-rate curve of games that used ``calls[i]`` inner-policy calls and were ``won[i]``.

    A game won with c calls counts as solved for every budget b >= c (one with 0 calls, from b = 1),
    over all the games: the curve rises from the share won within 1 call to the share won in the
    end. Why one run at the largest cap gives the whole curve, rather than one run per cap: Search
    is deterministic and its expansion order does not depend on the call cap, only where it stops.
    A cap below the cap it ran under cuts the same sequence of calls short (each search's budget is
    ``min(budget, calls left)`` and grows by doubling only up to what is left), so a game won with c
    calls under a 1000-call cap is won, move for move, under any cap >= c, and a game not won within
    c calls is not won under a cap of c. A policy without Search is the same: a cap only ends its
    episode early. This holds for deterministic (or seeded) policies and without ``max_seconds``,
    whose stop depends on the machine's speed. ``cap`` is the call cap the games were played under
    (``None``: none, so the curve holds for every budget).
    """
    name = f"solve_curve ({label})" if label else "solve_curve"
    calls_a = np.asarray(calls, dtype=np.int64)
    won_a = np.asarray(won, dtype=bool)
    if calls_a.shape != won_a.shape or calls_a.ndim != 1:
        raise ValueError(
            f"{name}: calls and won must be equal-length lists, got {calls_a.shape} and {won_a.shape}"
        )
    if len(calls_a) == 0:
        raise ValueError(f"{name}: no games to draw a curve from")
    wins = np.sort(np.maximum(calls_a[won_a], 1))
    if cap is not None:
        cap = int(cap)
        if cap < 1:
            raise ValueError(f"{name}: the call cap must be at least 1, got {cap}")
        if wins.size and wins[-1] > cap:
            raise ValueError(
                f"{name}: a game was won with {wins[-1]} calls, past the call cap {cap}; "
                "give the call cap the games were played under"
            )
    budgets = np.unique(np.concatenate([[1], wins, [cap] if cap is not None else []]))
    rate = np.searchsorted(wins, budgets, side="right") / len(calls_a)
    return Curve(label, budgets, rate, len(calls_a), int(wins.size), cap)
