"""What every wrapper shares: a Policy that holds a Policy."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from s1gym.core import BasePolicy, Decision, Policy, S1Env, Situation
from s1gym.errors import S1GymError

class WrapperOrderError(S1GymError, ValueError):
    """A wrapper stack that cannot work, e.g. Search around Rethink."""


class Wrapper(BasePolicy):
    """A policy around ``policy``; ``name`` reads ``kind(inner name)``, e.g. ``search(lookahead(local))``.

    Class attributes let a stack check itself when it is built (:class:`WrapperOrderError`):

    - ``episodic``: the wrapper keeps a memory of the real episode (Rethink) and must see each real
      turn exactly once, so no wrapper that asks about hypothetical states may sit above it;
    - ``asks_hypothetical``: the wrapper asks its inner policy about states the game has not
      reached (Search's nodes);
    - ``refuses_inside``: wrapper kinds that must not sit anywhere below this one, with the reason
      (Lookahead around Search would show outcomes that Search never reads).
    """

    kind: str = "wrapper"
    episodic: bool = False
    asks_hypothetical: bool = False
    #: wrapper kinds this one refuses to hold (anywhere below it), with the reason
    refuses_inside: dict[str, str] = {}

    def __init__(self, policy: Policy, allow_oracle: bool = False) -> None:
        if not callable(getattr(policy, "decide", None)):
            raise TypeError(
                f"{type(self).__name__} wraps a policy (an object with decide(situation)), got {policy!r}"
            )
        self.policy = policy
        #: Look ahead even where forks know the answer (see :func:`fork_of`).
        self.allow_oracle = bool(allow_oracle)
        self.name = f"{self.kind}({getattr(policy, 'name', type(policy).__name__.lower())})"
        self._check_order()

    @classmethod
    def option_names(cls) -> tuple[str, ...]:
        """The keyword options this wrapper takes (what ``wrap`` routes to it)."""
        import inspect

        params = list(inspect.signature(cls.__init__).parameters.values())[2:]  # drop self and policy
        return tuple(p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))

    def _check_order(self) -> None:
        for inner in inner_wrappers(self):
            if self.asks_hypothetical and inner.episodic:
                raise WrapperOrderError(
                    f"{type(self).__name__} cannot hold {type(inner).__name__}: {type(self).__name__} asks its "
                    f"inner policy about states the game never reaches, which would corrupt "
                    f"{type(inner).__name__}'s memory of the real episode. Put {type(inner).__name__} outside, "
                    f"e.g. {inner.kind}({self.kind}(...)) (wrap(p, [{inner.kind!r}, {self.kind!r}]))."
                )
            if inner.kind in self.refuses_inside:
                raise WrapperOrderError(
                    f"{type(self).__name__} cannot hold {type(inner).__name__}: {self.refuses_inside[inner.kind]}"
                )

    def options(self) -> dict[str, object]:
        """Settings that change what this wrapper does (``allow_oracle`` when on)."""
        return {"allow_oracle": True} if self.allow_oracle else {}

    def fork(self, situation: Situation) -> S1Env:
        return fork_of(situation, self.name, self.allow_oracle)

    def reset(self) -> None:
        reset = getattr(self.policy, "reset", None)
        if callable(reset):
            reset()

    def inner_many(self, situations: Sequence[Situation]) -> list[Decision]:
        """The inner policy's ``decide_many`` when it has one (it may run them concurrently)."""
        many = getattr(self.policy, "decide_many", None)
        if callable(many):
            out = list(many(list(situations)))
        else:
            out = [self.policy.decide(s) for s in situations]
        if len(out) != len(situations):
            raise RuntimeError(
                f"{self.name}: the inner policy answered {len(out)} decisions for {len(situations)} situations"
            )
        return out


def inner_wrappers(policy: object) -> list[Wrapper]:
    """The wrappers below ``policy`` (itself excluded), outermost first."""
    out = []
    inner = getattr(policy, "policy", None) if isinstance(policy, Wrapper) else None
    while isinstance(inner, Wrapper):
        out.append(inner)
        inner = inner.policy
    return out


class OracleForkError(S1GymError, ValueError):
    """A wrapper was asked to look ahead on a task whose forks know the answer."""


def fork_of(situation: Situation, who: str, allow_oracle: bool = False) -> S1Env:
    """An independent env in the situation's state; a clear error when there is none.

    Tasks whose forks know the answer (``S1Env.fork_reveals_answer``: quiz,
    ticket and injection labels) would turn Lookahead and Search into oracles
    (a wrong answer loses in the fork); that is refused unless ``allow_oracle``.
    On tasks where only some moves are answers (``S1Env.is_answer_move``), the
    fork does not play those; ``allow_oracle`` lets it (the oracle, on purpose).
    """
    if situation.fork is None:
        raise ValueError(
            f"{who} needs a situation with an env behind it (situation.fork is None); "
            f"build situations with env.situation() on a task that supports fork()"
        )
    env = situation.fork()
    if allow_oracle:
        env.reveal_answers()  # answer moves are played on it too (``S1Env.is_answer_move``)
    if env.fork_reveals_answer and not allow_oracle:
        env.close()
        raise OracleForkError(
            f"{who} on {situation.task}: a fork of this task knows the right answer, so looking ahead "
            f"would read it (the score is the oracle's, not the model's). Evaluate the decision model "
            f"without Search/Lookahead here, or pass allow_oracle=True to measure that oracle on purpose."
        )
    return env


def normalised(p: np.ndarray) -> np.ndarray:
    """``p`` scaled to sum 1; flat odds when it has no mass."""
    p = np.clip(np.asarray(p, dtype=np.float64), 0.0, None)
    total = p.sum()
    return p / total if total > 0 else np.full(p.size, 1.0 / p.size)


def situation_key(situation: Situation) -> str:
    """The task's state key, or (for situations without one) the observation and candidates."""
    return situation.state_key or situation.observation + "\n#" + "|".join(situation.texts)


def favourite_groups(probabilities: Sequence[float], width: int) -> list[list[int]]:
    """The indices of ``probabilities`` in groups of ``width``, most probable first (ties: the earlier index),
    each group in index order: the ``width`` favourites, the next ``width``, ... Search and Lookahead step the
    first group and the next only while everything stepped so far was pruned or lost, so a node whose
    favourites all end the game still shows the moves that do not."""
    order = np.argsort(-np.asarray(probabilities, dtype=np.float64), kind="stable")
    return [sorted(int(j) for j in order[k:k + width]) for k in range(0, len(order), width)]
