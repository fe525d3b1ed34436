"""The s1gym contract: what every task env and every policy agrees on.

A task is an :class:`S1Env`: a Gymnasium env with a text observation, a
``Discrete(N)`` action space over a short, deterministically ordered list of
candidate moves, an action mask, and :meth:`S1Env.fork`, an independent copy of
the game in exactly the same state (RNG included).

A policy turns a :class:`Situation` (what a player may know) into a
:class:`Decision` (one probability per candidate, the chosen index, the cost,
and whether it gives up).

This package is the contract's home: the docstrings of :class:`S1Env` (its
hooks, ``reset``, ``step``, ``info``, masks, fixed action slots, ``fork``),
:class:`Situation` and :class:`Decision` say what every task and policy
promises. docs/architecture.md draws the layers on one screen.
"""

from s1gym.core.decision import BasePolicy, Decision, Policy, Usage
from s1gym.core.env import S1Env
from s1gym.core.helpers import BASE_CHARSET, charset_for, copy_generator, text_atoms
from s1gym.core.progress import Progress, TooManyCandidatesError
from s1gym.core.situation import Candidate, Privileged, Situation

__all__ = [
    "BASE_CHARSET",
    "BasePolicy",
    "Candidate",
    "Decision",
    "Policy",
    "Privileged",
    "Progress",
    "S1Env",
    "Situation",
    "TooManyCandidatesError",
    "Usage",
    "charset_for",
    "copy_generator",
    "text_atoms",
]
