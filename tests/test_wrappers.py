"""``wrap`` and the wrappers together, on the toy tasks of tests/toy_tasks.py and on real tasks.

Composition and its order errors, give-up, reset, usage and planning time passing through every layer;
then Search and Lookahead on CookingWorld (a real TextWorldExpress JVM), and the refusal of tasks whose
forks know the answer (Millionaire, Blackjack). Search alone is in test_search.py, Lookahead and Rethink
alone in test_lookahead_rethink.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from s1gym.core import BasePolicy, Decision
from s1gym.policies import Rule, Uniform
from s1gym.wrappers import Lookahead, Rethink, Search, WrapperOrderError, wrap

from toy_tasks import TRAP_GRAPH, TablePolicy, corridor, make, play, play_checked


# ------------------------------------------------------------------ wrap / composition
@pytest.mark.parametrize(
    "names, expected",
    [
        (["search", "lookahead"], "search(lookahead(uniform))"),
        (["rethink", "search", "lookahead"], "rethink(search(lookahead(uniform)))"),
        (["rethink", "search"], "rethink(search(uniform))"),
        (["rethink", "lookahead"], "rethink(lookahead(uniform))"),
        ("lookahead,rethink", "lookahead(rethink(uniform))"),
        ([], "uniform"),
    ],
)
def test_compositions_win_without_stepping_the_real_env(names, expected):
    options = {"budget": 50} if "search" in names else {}
    if "rethink" in names:
        options["patience"] = 3
    policy = wrap(Uniform(), names, **options)
    assert policy.name == expected
    assert isinstance(policy, BasePolicy)
    env = make(TRAP_GRAPH)
    policy.reset()
    decisions = play_checked(env, policy)
    if "search" in names:
        assert env.won and len(env.history) == 2
    assert decisions


def test_wrap_is_outermost_first_and_routes_options():
    planner = lambda situation: "go somewhere new"  # noqa: E731
    policy = wrap(Uniform(), ["rethink", "search", "lookahead"], budget=7, planner=planner, priority="levin")
    assert isinstance(policy, Rethink) and policy.planner is planner
    assert isinstance(policy.policy, Search) and policy.policy.config.budget == 7 and policy.policy.config.priority == "levin"
    assert isinstance(policy.policy.policy, Lookahead) and isinstance(policy.policy.policy.policy, Uniform)


@pytest.mark.parametrize(
    "names, kwargs, message",
    [
        (["search", "lookahed"], {}, "unknown wrapper"),
        (["search", "search"], {}, "once"),
        (["lookahead"], {"budget": 5}, "belongs to search"),
        (["search"], {"colour": "red"}, "no wrapper has"),
    ],
)
def test_wrap_rejects_bad_names_and_options(names, kwargs, message):
    with pytest.raises(ValueError, match=message):
        wrap(Uniform(), names, **kwargs)


@pytest.mark.parametrize(
    "names, message",
    [
        (["search", "rethink"], "Search cannot hold Rethink.*rethink\\(search"),
        (["search", "lookahead", "rethink"], "Search cannot hold Rethink"),
        (["lookahead", "search"], "Lookahead cannot hold Search.*Search\\(Lookahead"),
    ],
)
def test_wrap_rejects_orders_that_cannot_work(names, message):
    with pytest.raises(WrapperOrderError, match=message):
        wrap(Uniform(), names)
    with pytest.raises(WrapperOrderError):  # built by hand, too
        Search(Rethink(Uniform())) if names[0] == "search" else Lookahead(Search(Uniform()))


def test_give_up_travels_through_every_wrapper():
    class Quitter(BasePolicy):
        name = "quitter"

        def decide(self, situation):
            return Decision.from_probabilities(np.full(len(situation.candidates), 1 / len(situation.candidates)),
                                               give_up=True)

    env = make(TRAP_GRAPH)
    for policy in (Lookahead(Quitter()), Rethink(Quitter()), Search(Quitter(), budget=5),
                   Rethink(Search(Lookahead(Quitter()), budget=5))):
        assert policy.decide(env.situation()).give_up, policy.name


def test_reset_passes_through_and_usage_sums_inner_calls():
    inner = TablePolicy()
    policy = Search(Lookahead(inner), budget=100)
    policy.reset()
    assert inner.resets == 1
    d = policy.decide(make(corridor(5)).situation())
    assert d.info["solved"]
    assert (d.usage.calls, d.info["policy_calls"], inner.calls) == (4, 4, 4)
    assert d.usage.input_tokens == 10 * inner.calls


def test_search_time_travels_as_a_typed_field_through_wrappers():
    """The runner reads how long a decision planned from Decision.planning_s, not from Search's info."""
    env = make(corridor(4))
    decisions = play(env, Rethink(Search(TablePolicy(), budget=50)))
    searched = [d for d in decisions if d.info["stop_reason"] != "following_plan"]
    assert searched and all(d.planning_s == d.info["elapsed_s"] for d in searched)
    assert all(d.planning_s is None for d in decisions if d.info["stop_reason"] == "following_plan")
    assert TablePolicy().decide(make(corridor(2)).situation()).planning_s is None


# ------------------------------------------------------------------ CookingWorld (the real engine)
@pytest.fixture(scope="module")
def cooking():
    """A maker of CookingWorld test-fold games (a real TextWorldExpress JVM: a failure to start it fails)."""
    import gymnasium as gym

    made = []

    def make_game(size: str, seed: int):
        env = gym.make("s1/CookingWorld-v0", size=size, fold="test")
        env.reset(seed=seed)
        made.append(env)
        return env

    yield make_game
    for env in made:
        env.close()


def test_search_with_rule_solves_cooking_medium_within_the_gold_length(cooking):
    env = cooking("medium", 0)
    gold = len(env.gold_path())
    decisions = play_checked(env, Search(Rule()), max_moves=gold + 5)
    assert env.won and env.steps <= gold
    calls = sum(d.usage.calls for d in decisions)
    assert calls <= gold  # about one call per move; the rest follow the plans for free
    searched = [d for d in decisions if d.info["stop_reason"] != "following_plan"]
    assert len(searched) <= 1 + sum(1 for a, b in zip(decisions, decisions[1:]) if a.info.get("plan_score"))


def test_search_with_uniform_solves_a_small_cooking_game(cooking):
    env = cooking("small", 1)
    policy = Search(Uniform(), budget=100, episode_budget=1000)
    decisions = play_checked(env, policy, max_moves=30)
    assert env.won and policy.episode_calls == sum(d.usage.calls for d in decisions) <= 1000
    # The first search runs out before the win and banks its best gain; the plan is then followed for free.
    first = decisions[0].info
    assert first["stop_reason"] in ("budget", "gain_patience") and first["plan_score"] > 0 and first["duplicates"] > 0
    assert decisions[1].info["stop_reason"] == "following_plan"


def test_lookahead_on_cooking_leaves_the_real_game_alone(cooking):
    env = cooking("small", 2)
    before = (env.situation().state_key, env.history, env.steps)
    inner = TablePolicy()
    d = Lookahead(inner).decide(env.situation())
    assert (env.situation().state_key, env.history, env.steps) == before
    shown = inner.asked[-1].candidates
    assert all(c.outcome for c in shown)
    assert any(c.new_actions for c in shown)  # e.g. opening the fridge shows what to take
    assert d.probabilities.sum() == pytest.approx(1.0)


def test_lookahead_and_search_refuse_tasks_whose_forks_know_the_answer():
    """A quiz fork would tell which answer loses: the wrappers refuse unless the oracle is asked for."""
    import gymnasium as gym

    from s1gym.policies import Uniform
    from s1gym.wrappers import OracleForkError

    env = gym.make("s1/Millionaire-v0")
    env.reset(seed=0)
    for policy in (Lookahead(Uniform()), Search(Uniform(), budget=5), wrap(Uniform(), "search,lookahead")):
        with pytest.raises(OracleForkError, match="allow_oracle=True"):
            policy.decide(env.situation())
    assert wrap(Uniform(), "search,lookahead", allow_oracle=True, budget=50).decide(env.situation())
    decision = Lookahead(Uniform(), allow_oracle=True).decide(env.situation())
    dropped = decision.info["lookahead"]["dropped_losing"]
    assert len(dropped) == 3 and env.expert_action() not in dropped  # the three wrong answers, read from forks


def test_blackjack_forks_deal_the_next_card_so_the_wrappers_refuse_them():
    """A Blackjack fork draws the hand's own next card: a hit's outcome there is the real one."""
    import gymnasium as gym

    from s1gym.policies import Uniform
    from s1gym.wrappers import OracleForkError

    env = gym.make("s1/Blackjack-v0")
    env.reset(seed=0, options={"deck": "9S 5H 7D 8C KD"})  # player 9+7, dealer shows 8; a hit draws the K
    with pytest.raises(OracleForkError, match="Blackjack.*allow_oracle=True"):
        Lookahead(Uniform()).decide(env.situation())
    shown = Lookahead(Uniform(), allow_oracle=True).decide(env.situation())
    assert shown.info["lookahead"]["dropped_losing"] == ["hit"]  # the fork drew the king and bust
