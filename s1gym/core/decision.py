"""What a policy answers: :class:`Decision` (one probability per candidate, the chosen index, what it cost
in :class:`Usage`, whether it gives up), the :class:`Policy` protocol and :class:`BasePolicy`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from s1gym.core.situation import Situation

__all__ = ["BasePolicy", "Decision", "Policy", "Usage"]


@dataclass(frozen=True)
class Usage:
    """What a decision cost."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        if not isinstance(other, Usage):
            return NotImplemented
        return Usage(
            calls=self.calls + other.calls,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cost_usd=self.cost_usd + other.cost_usd,
            latency_s=self.latency_s + other.latency_s,
        )

    @staticmethod
    def total(usages: Iterable[Usage]) -> Usage:
        out = Usage()
        for u in usages:
            out = out + u
        return out

    def as_dict(self) -> dict[str, float]:
        return {
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": self.cost_usd,
            "latency_s": self.latency_s,
        }


@dataclass(frozen=True)
class Decision:
    """A policy's answer: one probability per candidate and the chosen index.

    ``give_up`` says the policy will not try further this episode (Search's
    episode budget is spent, Rethink's stalls ran out): the runner ends the
    episode unsolved instead of playing ``action``. ``planning_s`` is the time
    the policy spent planning for this decision (Search's own search; ``None``
    when it did not plan, e.g. it followed a plan made before): the runner
    records it per tick and the job summary averages it. Every wrapper
    forwards its inner decision's ``give_up`` and ``planning_s``. ``info`` is
    free-form diagnostics (plans, search statistics); no signal travels there.
    """

    probabilities: np.ndarray
    action: int
    usage: Usage = Usage()
    info: Mapping[str, Any] = field(default_factory=dict)
    give_up: bool = False
    planning_s: float | None = None

    def __post_init__(self) -> None:
        p = np.asarray(self.probabilities, dtype=np.float64)
        if p.ndim != 1 or p.size == 0:
            raise ValueError(f"Decision.probabilities must be a non-empty 1-D array, got shape {p.shape}")
        if not (0 <= int(self.action) < p.size):
            raise ValueError(f"Decision.action {self.action} is outside 0..{p.size - 1}")
        object.__setattr__(self, "probabilities", p)
        object.__setattr__(self, "action", int(self.action))
        object.__setattr__(self, "give_up", bool(self.give_up))

    @staticmethod
    def from_probabilities(
        probabilities: Sequence[float] | np.ndarray,
        usage: Usage = Usage(calls=1),
        info: Mapping[str, Any] | None = None,
        action: int | None = None,
        give_up: bool = False,
    ) -> Decision:
        """Build a decision that picks the most likely candidate (first on ties).

        ``usage`` defaults to one model call, so a user policy built this way
        counts its decisions in Search budgets and tables like the shipped ones.
        """
        p = np.asarray(probabilities, dtype=np.float64)
        return Decision(p, int(np.argmax(p)) if action is None else action, usage, dict(info or {}), give_up)


@runtime_checkable
class Policy(Protocol):
    """A decision model: one probability per candidate."""

    name: str

    def decide(self, situation: Situation) -> Decision: ...

    def reset(self) -> None: ...

    def decide_many(self, situations: Sequence[Situation]) -> list[Decision]: ...


class BasePolicy:
    """Convenience base: a name, a no-op ``reset`` and a sequential ``decide_many``.

    Policies that can run requests concurrently (Jev, Chat) override
    ``decide_many``; wrappers pass it through to the policy they hold.
    """

    name: str = "policy"

    def decide(self, situation: Situation) -> Decision:
        raise NotImplementedError

    def reset(self) -> None:
        return None

    def options(self) -> dict[str, Any]:
        """The settings that make this policy what it is (recorded in job folders; ``s1 table`` keeps
        policies with different options in different rows). Override it when your policy has any."""
        return {}

    def decide_many(self, situations: Sequence[Situation]) -> list[Decision]:
        return [self.decide(s) for s in situations]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"
