"""Timing helpers the benchmark scripts share."""

from __future__ import annotations

import math
import os
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


def cpu_s(*pids: int) -> float:
    """CPU seconds so far of this process and of the processes ``pids`` (e.g. the TWX JVM; Linux: /proc, in
    clock ticks, so coarse)."""
    ticks = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        ticks += int(fields[11]) + int(fields[12])
    return time.process_time() + ticks / os.sysconf("SC_CLK_TCK")
