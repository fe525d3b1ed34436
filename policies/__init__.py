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
from s1gym.policies import errors
from s1gym.policies.basic import Random, Rule, Uniform
from s1gym.policies.chat import Chat
from s1gym.policies.errors import (  # noqa: F401 (re-exported: __all__ takes the error types from errors)
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
from s1gym.policies.registry import Registry

#: ``make_policy`` names -> constructors; the one list the command line and the runner check names against.
POLICIES: Registry[Callable[..., BasePolicy]] = Registry(
    "policy",
    {
        "jev": Jev,
        "chat": Chat,
        "local": Local,
        "uniform": Uniform,
        "random": Random,
        "rule": Rule,
    },
)


def make_policy(name: str, **kwargs: Any) -> BasePolicy:
    """A policy by name (``jev``, ``chat``, ``local``, ``uniform``, ``random``, ``rule``; any case)."""
    return POLICIES.make(name, **kwargs)


__all__ = [
    "POLICIES",
    "Chat",
    "Jev",
    "Local",
    "Random",
    "Registry",
    "Rule",
    "Uniform",
    "make_policy",
]
# Every error type of s1gym.policies.errors, but not its redact helper. ``+=`` and ``remove`` are the forms
# type checkers read, so the error types stay visible as this package's exports.
__all__ += errors.__all__
__all__.remove("redact")
