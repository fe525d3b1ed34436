"""Small statistics for eval summaries: bootstrap intervals and robust aggregates.

The bootstrap uses a fixed RNG seed so the same scores always give the same
interval: two runs of ``s1 table`` over the same folders print the same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["bootstrap_ci", "mean", "median"]

#: Resamples of the percentile bootstrap; 10k keeps the interval's own noise
#: well below the third decimal for [0, 1] scores.
N_RESAMPLES = 10_000
#: Resamples drawn per chunk, so memory stays bounded for large jobs.
_CHUNK = 1_000


def mean(values: Sequence[float]) -> float | None:
    """The mean, or ``None`` for no values (a job whose episodes all errored has no score)."""
    return float(np.mean(values)) if len(values) else None


def median(values: Sequence[float]) -> float | None:
    return float(np.median(values)) if len(values) else None


def bootstrap_ci(
    values: Sequence[float],
    confidence: float = 0.95,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
) -> tuple[float | None, float | None]:
    """Percentile bootstrap interval of the mean, deterministic for a given ``seed``.

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
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples, dtype=np.float64)
    for start in range(0, n_resamples, _CHUNK):
        stop = min(start + _CHUNK, n_resamples)
        idx = rng.integers(0, x.size, size=(stop - start, x.size))
        means[start:stop] = x[idx].mean(axis=1)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    return float(low), float(high)
