"""Argument checks shared by every module: one wording for one mistake.

Each returns the value in its canonical type or raises ``ValueError`` naming
the argument, what it must be and what was given.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["fraction", "non_negative_float", "non_negative_int", "positive_float", "positive_int"]


def _is_int(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, np.integer))


def positive_int(name: str, value: Any, default: int | None = None, *, optional: bool = False) -> int | None:
    """``value`` as an int >= 1; ``None`` gives ``default`` (or stays ``None`` when ``optional``)."""
    if value is None:
        if default is not None or optional:
            return default
        raise ValueError(f"{name} must be a positive integer, got None")
    if not _is_int(value) or value < 1:
        tail = " or None" if optional else ""
        raise ValueError(f"{name} must be a positive integer{tail}, got {value!r}")
    return int(value)


def non_negative_int(name: str, value: Any) -> int:
    """``value`` as an int >= 0."""
    if not _is_int(value) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return int(value)


def _real(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float, np.integer, np.floating)) and math.isfinite(
        float(value)
    )


def fraction(name: str, value: Any) -> float:
    """``value`` as a float in [0, 1]."""
    if not _real(value) or not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"{name} must be a number in [0, 1], got {value!r}")
    return float(value)


def non_negative_float(name: str, value: Any) -> float:
    """``value`` as a finite float >= 0."""
    if not _real(value) or float(value) < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return float(value)


def positive_float(name: str, value: Any, *, optional: bool = False) -> float | None:
    """``value`` as a finite float > 0 (``None`` allowed when ``optional``)."""
    if value is None and optional:
        return None
    if not _real(value) or float(value) <= 0:
        tail = " or None" if optional else ""
        raise ValueError(f"{name} must be a finite number > 0{tail}, got {value!r}")
    return float(value)
