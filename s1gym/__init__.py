"""s1gym: text decision tasks as Gymnasium envs for System One decision models.

``import s1gym`` registers every task under ``s1/`` (``gym.make("s1/CookingWorld-v0")``).
"""

from __future__ import annotations

from s1gym.core import (
    BASE_CHARSET,
    BasePolicy,
    Candidate,
    Decision,
    Policy,
    S1Env,
    Situation,
    TooManyCandidatesError,
    Usage,
)
from s1gym.registration import register_all, task_ids

from s1gym._version import __version__

register_all()


def evaluate(task, policy, **kwargs):
    """Play seeds and write a job folder; see :func:`s1gym.runner.spec.evaluate`."""
    # Imported on call, not for a circle (the runner reads the version from s1gym._version): the runner
    # pulls in every policy and wrapper, which ``import s1gym`` (registering the tasks) does not need.
    from s1gym.runner.spec import evaluate as _evaluate

    return _evaluate(task, policy, **kwargs)


__all__ = [
    "BASE_CHARSET",
    "BasePolicy",
    "Candidate",
    "Decision",
    "Policy",
    "S1Env",
    "Situation",
    "TooManyCandidatesError",
    "Usage",
    "evaluate",
    "register_all",
    "task_ids",
]
