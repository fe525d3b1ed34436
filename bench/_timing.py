"""Timing helpers the benchmark scripts share."""

from __future__ import annotations

import math
import time
from collections.abc import Callable


def cpu_us(fn: Callable[[], object], n: int, repeat: int = 5) -> float:
    """Best of ``repeat`` CPU-time means of ``n`` calls, in µs.

    CPU time (``time.process_time``) rather than wall time: these machines are
    shared, and another process's load inflates wall time but not our CPU time.
    """
    best = math.inf
    for _ in range(repeat):
        t0 = time.process_time()
        for _ in range(n):
            fn()
        best = min(best, (time.process_time() - t0) / n * 1e6)
    return best
