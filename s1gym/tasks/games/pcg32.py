"""PCG32, the random stream 2048's tile spawns come from.

M. E. O'Neill, "PCG: A Family of Simple Fast Space-Efficient Statistically Good Algorithms for Random
Number Generation", 2014: PCG-XSH-RR as in pcg-c-basic (``pcg32_srandom``, ``pcg32_random``,
``pcg32_boundedrand``). The functions take and return the state as an int, so an env holds its stream
as one int (cheap to fork); :class:`PCG32` wraps them in an object for tests and benchmarks.
"""

from __future__ import annotations

__all__ = ["PCG32", "PCG_STREAM", "pcg32_below", "pcg32_next", "pcg32_seed"]

_MASK64 = (1 << 64) - 1
_MASK32 = 0xFFFFFFFF
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
