"""Decision models (``s1gym.policies``): Jev, Chat, Local, Uniform, Random, Rule.

Every policy is an :class:`s1gym.core.BasePolicy` that turns a
:class:`~s1gym.core.Situation` into a :class:`~s1gym.core.Decision`. Heavy
dependencies (the TypeSafe SDK, httpx, torch) load only when a model that
needs them is constructed, so importing this package is cheap.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from s1gym.core import BasePolicy
from s1gym.policies.basic import Random, Rule, Uniform
from s1gym.policies.chat import Chat
from s1gym.policies.errors import (
    PolicyAuthError,
    PolicyConfigError,
    PolicyConnectionError,
    PolicyError,
    PolicyRateLimitError,
    PolicyRequestError,
    PolicyResponseError,
    PolicyServerError,
    PolicyTimeoutError,
)
from s1gym.policies.jev import Jev
from s1gym.policies.local import Local

#: ``make_policy`` names -> constructors.
POLICIES: dict[str, Callable[..., BasePolicy]] = {
    "jev": Jev,
    "chat": Chat,
    "local": Local,
    "uniform": Uniform,
    "random": Random,
    "rule": Rule,
}


def make_policy(name: str, **kwargs: Any) -> BasePolicy:
    """A policy by name (``jev``, ``chat``, ``local``, ``uniform``, ``random``, ``rule``; any case)."""
    key = str(name).strip().lower()
    if key not in POLICIES:
        raise ValueError(f"unknown policy {name!r}; choose one of: {', '.join(POLICIES)}")
    return POLICIES[key](**kwargs)


__all__ = [
    "POLICIES",
    "Chat",
    "Jev",
    "Local",
    "PolicyAuthError",
    "PolicyConfigError",
    "PolicyConnectionError",
    "PolicyError",
    "PolicyRateLimitError",
    "PolicyRequestError",
    "PolicyResponseError",
    "PolicyServerError",
    "PolicyTimeoutError",
    "Random",
    "Rule",
    "Uniform",
    "make_policy",
]
