"""Baselines that need no model: flat odds, a seeded random player, each task's rule."""

from __future__ import annotations

import hashlib

import numpy as np

from s1gym.core import BasePolicy, Decision, Situation, Usage
from s1gym.policies.common import flat_decision, require_candidates
from s1gym.policies.errors import PolicyConfigError, PolicyError

__all__ = ["Random", "Rule", "Uniform"]

#: Every decision is one call of the decision model, whatever it costs: Search budgets and the
#: tables count calls the same way for flat odds as for a hosted model.
ONE_CALL = Usage(calls=1)


class Uniform(BasePolicy):
    """Flat odds over the candidates; the pick is always index 0 (the first, as ties go).

    Uniform is the "no knowledge" prior for ``Search(Uniform())``, where only
    the odds matter. To *play* without knowledge, use :class:`Random`.
    """

    name = "uniform"

    def decide(self, situation: Situation) -> Decision:
        return flat_decision(require_candidates(situation, self.name), ONE_CALL, info={"policy": self.name})


class Random(BasePolicy):
    """A uniformly random player, reproducible from ``seed``.

    Its odds are flat (it *is* the flat distribution); the chosen index is a
    draw from them. The draw is keyed by ``(seed, task, observation, step)``
    rather than taken from one stream, so the same seed gives the same games
    no matter in which order the runner plays seeds S..S+N-1, whether a job
    was resumed, how many episodes ran concurrently, or how often a wrapper
    (Search, Lookahead) consulted the policy in between. The step count in the
    key keeps a revisited state from always getting the same move (no forced
    loops). ``reset()`` therefore has nothing to reseed.
    """

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise ValueError(f"Random(seed=...) needs an integer seed, got {seed!r}")
        self.seed = int(seed)

    def decide(self, situation: Situation) -> Decision:
        n = require_candidates(situation, self.name)
        key = "\x1f".join(
            (str(self.seed), situation.task, situation.observation, str(len(situation.history)))
        ).encode("utf-8", "surrogatepass")
        digest = hashlib.blake2b(key, digest_size=16).digest()
        rng = np.random.default_rng(int.from_bytes(digest, "little"))
        action = int(rng.integers(n))
        return Decision(np.full(n, 1.0 / n), action, ONE_CALL, {"policy": self.name, "seed": self.seed})

    def options(self) -> dict[str, int]:
        return {"seed": self.seed}

    def __repr__(self) -> str:
        return f"Random(seed={self.seed})"


class Rule(BasePolicy):
    """Each task's hand-written baseline: ``situation.privileged.rule_action()``.

    One-hot on that move. The baseline reads the env through the situation's
    explicit :class:`~s1gym.core.Privileged` handle (never stepping it), so
    Rule needs a situation that comes from a live env.
    """

    name = "rule"

    def decide(self, situation: Situation) -> Decision:
        n = require_candidates(situation, self.name)
        if situation.privileged is None:
            raise PolicyConfigError(
                f"Rule: this {situation.task!r} situation has no env behind it (situation.privileged is None); "
                "build situations with env.situation()"
            )
        try:
            move = situation.privileged.rule_action()
        except NotImplementedError as error:
            raise PolicyConfigError(
                f"Rule: task {situation.task!r} has no rule baseline ({error}); choose another policy"
            ) from None
        texts = situation.texts
        if move not in texts:
            raise PolicyError(
                f"Rule: task {situation.task!r} suggested {move!r}, which is not among the "
                f"{n} candidates of this situation (a bug in the task's rule_action)"
            )
        index = texts.index(move)
        p = np.zeros(n)
        p[index] = 1.0
        return Decision(p, index, ONE_CALL, {"policy": self.name, "move": move})
