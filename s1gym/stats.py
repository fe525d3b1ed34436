"""Small statistics for eval summaries: bootstrap intervals and robust aggregates.

The bootstrap uses a fixed RNG seed so the same scores always give the same
interval: two runs of ``s1 table`` over the same folders print the same numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["bootstrap_ci", "bootstrap_interval", "mean", "median"]

#: Resamples of the percentile bootstrap; 10k keeps the interval's own noise
#: well below the third decimal for [0, 1] scores.
N_RESAMPLES = 10_000
#: Resamples drawn per chunk, so memory stays bounded for large jobs ...
_CHUNK = 1_000
#: ... and at most this many resampled observations a chunk (8 MB of indices): a job of 20,000 episodes
#: once took 320 MB a chunk. NumPy draws the same index stream whatever the chunks, so the interval is too.
_CELLS = 1_000_000


def mean(values: Sequence[float]) -> float | None:
    """The mean, or ``None`` for no values (a job whose episodes all errored has no score)."""
    return float(np.mean(values)) if len(values) else None


def median(values: Sequence[float]) -> float | None:
    return float(np.median(values)) if len(values) else None


def bootstrap_interval(
    sample: Sequence[Any] | np.ndarray,
    statistic: Callable[[np.ndarray], np.ndarray],
    confidence: float = 0.95,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic``, deterministic for a given ``seed``.

    ``sample`` is indexed by observation on axis 0; ``statistic`` gets a batch
    of resamples (resample on axis 0, observation on axis 1) and returns one
    value per resample, e.g. ``lambda r: r.mean(axis=1)``. Resamples are drawn
    in chunks, so memory stays bounded for large jobs.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    x = np.asarray(sample)
    rng = np.random.default_rng(seed)
    values = np.empty(n_resamples, dtype=np.float64)
    chunk = max(1, min(_CHUNK, _CELLS // max(1, len(x))))
    for start in range(0, n_resamples, chunk):
        stop = min(start + chunk, n_resamples)
        idx = rng.integers(0, len(x), size=(stop - start, len(x)))
        values[start:stop] = statistic(x[idx])
    alpha = (1 - confidence) / 2
    low, high = np.quantile(values, [alpha, 1 - alpha])
    return float(low), float(high)


def bootstrap_ci(
    values: Sequence[float],
    confidence: float = 0.95,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
) -> tuple[float | None, float | None]:
    """Percentile bootstrap interval of the mean (see :func:`bootstrap_interval`).

    Returns ``(None, None)`` for no values and a zero-width interval for one
    value (there is nothing to resample). The percentile method is what eval
    harnesses usually report; it needs no normality assumption, which matters
    for win/lose scores piled at 0 and 1.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    x = np.asarray(values, dtype=np.float64)
    if x.size == 0:
        return None, None
    if x.size == 1 or np.all(x == x[0]):
        return float(x[0]), float(x[0])
    return bootstrap_interval(x, lambda r: r.mean(axis=1), confidence, n_resamples, seed)
