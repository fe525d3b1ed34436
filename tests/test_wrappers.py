"""Search, Lookahead, Rethink and ``wrap`` on hand-built toy tasks (tests/toy_tasks.py).

CookingWorld checks live at the end and skip when its adapter is unavailable.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from s1gym.core import BasePolicy, Decision, Situation
from s1gym.policies import Rule, Uniform
from s1gym.wrappers import PRIORITIES, Lookahead, Rethink, Search, WrapperOrderError, log_priority, wrap

from toy_tasks import (
    LOOP_GRAPH,
    PRIORITY_DEAD_ENDS,
    PRIORITY_GRAPH,
    PRIORITY_SCORES,
    PRIORITY_TABLE,
    STAIRS_SCORES,
    TRAP_GRAPH,
    TablePolicy,
    corridor,
    make,
    play,
    stairs,
    wide_tree,
)


def play_checked(env, policy, max_moves: int = 40) -> list[Decision]:
    """Play like the runner does, asserting after every decision that the wrapper stepped nothing real."""
    decisions = []
    for _ in range(max_moves):
        if env.done or not env.candidates:
            break
        before = (list(getattr(env, "played", [])), env.history, env.steps, env.situation().state_key)
        d = policy.decide(env.situation())
        after = (list(getattr(env, "played", [])), env.history, env.steps, env.situation().state_key)
        assert after == before, "the real env moved"
        assert math.isclose(float(d.probabilities.sum()), 1.0)
        decisions.append(d)
        if d.give_up:
            break
        env.step(d.action)
    return decisions


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
    policy = wrap(Uniform(), names, **({"budget": 50} if "search" in names else {}))
    assert policy.name == expected
    assert isinstance(policy, BasePolicy)
    env = make(TRAP_GRAPH, stall_patience=3)
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


# ------------------------------------------------------------------ Search: priorities
EXPECTED_ORDER = {"levin": ["x", "y", "z"], "phs_h": ["y", "z", "x"], "phs*": ["z", "y", "x"]}


@pytest.mark.parametrize("priority", PRIORITIES)
def test_priorities_expand_in_the_documented_order(priority):
    env = make(PRIORITY_DEAD_ENDS, scores=PRIORITY_SCORES)
    d = Search(TablePolicy(PRIORITY_TABLE), priority=priority, epsilon=0.0, trace=True).decide(env.situation())
    assert d.info["trace"] == ["", *EXPECTED_ORDER[priority]]
    assert d.info["stop_reason"] == "exhausted" and d.info["partial"]

    env = make(PRIORITY_GRAPH, scores=PRIORITY_SCORES)
    d = Search(TablePolicy(PRIORITY_TABLE), priority=priority, epsilon=0.0).decide(env.situation())
    first = EXPECTED_ORDER[priority][0]
    assert d.info["plan"] == [first, f"finish {first}"]
    assert env.situation().texts[d.action] == first
    assert d.info["policy_calls"] == 1  # the root; the forced finishing moves are free


def test_priorities_in_log_space_do_not_overflow():
    # A 400-move plan of 1 % moves: π = 1e-800 underflows a float, its log does not.
    log_pi = 400 * math.log(0.01)
    values = [log_priority(p, 400, log_pi, 5.0) for p in PRIORITIES]
    assert all(math.isfinite(v) for v in values)
    assert log_priority("levin", 1, -math.inf, 0.0) == math.inf


def test_unknown_priority_and_bad_budget_are_clear_errors():
    with pytest.raises(ValueError, match="levin, phs_h, phs\\*"):
        Search(Uniform(), priority="astar")
    with pytest.raises(ValueError, match="budget"):
        Search(Uniform(), budget=0)
    with pytest.raises(ValueError, match="fork"):
        Search(Uniform()).decide(Situation(task="t", observation="o", candidates=make(TRAP_GRAPH).situation().candidates))


# ------------------------------------------------------------------ Search: budget, pruning, plans
@pytest.mark.parametrize("batch_size", [1, 4])
def test_budget_is_respected_exactly(batch_size):
    inner = TablePolicy()
    env = make(wide_tree(3))
    d = Search(inner, budget=17, batch_size=batch_size).decide(env.situation())
    assert inner.calls == d.info["policy_calls"] == d.usage.calls == 17
    assert d.info["stop_reason"] == "budget" and d.info["partial"] and not d.info["solved"]
    assert "partial plan" in d.info["note"]
    assert d.info["plan"] and d.info["plan"][0] == env.candidates[d.action]
    assert max(inner.batches) <= batch_size
    if batch_size > 1:
        assert max(inner.batches) > 1  # decide_many got real batches


def test_expansion_cap_and_time_cap_stop_the_search():
    d = Search(TablePolicy(), max_expansions=5).decide(make(wide_tree(2)).situation())
    assert d.info["stop_reason"] == "max_expansions" and d.info["expansions"] == 5
    d = Search(TablePolicy(), max_seconds=0.05, budget=10**6).decide(make(wide_tree(2)).situation())
    assert d.info["stop_reason"] == "time"


def test_losing_moves_are_dropped_without_asking_the_policy():
    inner = TablePolicy({"jump in the pit": 100.0, "eat poison": 100.0})
    env = make(TRAP_GRAPH, wins=())  # no win: the search sees everything
    d = Search(inner, trace=True).decide(env.situation())
    assert d.info["losing_pruned"] == 2
    assert not any("pit" in t or "poison" in t for t in d.info["trace"])
    # only the start has two moves to new, non-losing states; hall and yard (every other move
    # there loses, ends or goes back) cost no call
    assert [s.state_key.split("\n")[0] for s in inner.asked] == ["You are at start."]
    assert env.candidates[d.action] not in ("jump in the pit",)


def test_duplicate_states_are_not_expanded_again():
    env = make(TRAP_GRAPH, wins=())
    d = Search(TablePolicy(), trace=True).decide(env.situation())
    # start, hall, yard: three states; the looks, the ways back and the second way into the hall
    # (from the yard) are the six duplicates
    assert d.info["expansions"] == 3 and d.info["stop_reason"] == "exhausted"
    assert d.info["duplicates"] == 6
    assert d.info["trace"] == ["", "go hall", "go yard"]


def test_a_partial_plan_that_raises_the_score_is_followed_then_search_resumes():
    inner = TablePolicy({"up": 3.0, "aside": 1.0})
    policy = Search(inner, budget=2)
    env = make(stairs, scores=STAIRS_SCORES)
    first = policy.decide(env.situation())
    assert first.info["stop_reason"] == "budget" and first.info["partial"] and first.info["plan"] == ["up", "up"]
    assert first.info["plan_score"] == 0.5 and inner.calls == 2
    env.step(first.action)
    second = policy.decide(env.situation())
    assert second.info["stop_reason"] == "following_plan" and second.usage.calls == 0
    assert not second.info["solved"] and second.info["partial"] and inner.calls == 2
    env.step(second.action)
    third = policy.decide(env.situation())  # the partial plan is used up: a new search, not a divergence
    assert third.info["stop_reason"] == "won" and not third.info["diverged"]
    assert third.info["policy_calls"] == 1

    # commit_partial=False: each decision searches again
    inner = TablePolicy({"up": 3.0, "aside": 1.0})
    policy = Search(inner, budget=2, commit_partial=False)
    env = make(stairs, scores=STAIRS_SCORES)
    env.step(policy.decide(env.situation()).action)
    assert policy.decide(env.situation()).info["policy_calls"] == 2


def test_until_gain_stops_at_the_first_higher_score_and_climbs_from_there():
    inner = TablePolicy({"up": 3.0, "aside": 1.0})
    policy = Search(inner, budget=1000, until_gain=True)
    env = make(stairs, scores=STAIRS_SCORES)
    decisions = play(env, policy)
    first = decisions[0]
    assert first.info["stop_reason"] == "gain" and first.info["plan"] == ["up", "up"] and not first.info["solved"]
    assert first.info["policy_calls"] == 1  # "p2" is generated (and tested) when "p1" is expanded, before a call
    assert decisions[1].info["stop_reason"] == "following_plan"
    assert decisions[2].info["stop_reason"] == "won" and env.won


def test_episode_budget_caps_all_searches_of_an_episode_then_gives_up():
    inner = TablePolicy()
    policy = Search(inner, budget=2, episode_budget=5, doubling=False)
    decisions = play(make(wide_tree(3)), policy)
    assert [d.info["policy_calls"] for d in decisions] == [2, 2, 1, 0]
    assert decisions[-1].give_up and decisions[-1].info["stop_reason"] == "episode_budget"
    assert inner.calls == policy.episode_calls == 5
    policy.reset()  # a new episode, a new allowance
    assert policy.episode_calls == 0 and policy.decide(make(wide_tree(3)).situation()).info["policy_calls"] == 2
    with pytest.raises(ValueError, match="episode_budget"):
        Search(inner, episode_budget=0)


def test_a_spent_episode_budget_falls_back_to_the_inner_policys_greedy_play():
    # Each search doubles into the episode's whole allowance and ends with no gain (the corridor scores 0
    # until the win), then the inner policy plays one call a move and walks to the win.
    for fallback in (None, "greedy"):
        inner = TablePolicy({"forward": 3.0})
        policy = Search(inner, budget=1, episode_budget=3, fallback=fallback)
        env = make(corridor(8))
        decisions = play_checked(env, policy)
        searched = [d for d in decisions if d.info["stop_reason"] != "episode_budget"]
        assert len(searched) == 1 and searched[0].info["policy_calls"] == 3
        if fallback is None:
            assert decisions[-1].give_up and not env.won and inner.calls == 3
            assert "fallback" not in decisions[-1].info
            continue
        greedy = decisions[1:]
        assert env.won and not any(d.give_up for d in decisions)
        assert all(d.info["fallback"] == "greedy" and d.info["policy_calls"] == 1 for d in greedy)
        assert all(d.info["table"] for d in greedy)  # the inner decision's own info is kept
        assert [d.usage.calls for d in greedy] == [1] * len(greedy) and len(greedy) == 7
        assert inner.calls == policy.episode_calls == 3 + len(greedy)
    assert Search(inner, fallback="greedy").options()["fallback"] == "greedy"
    with pytest.raises(ValueError, match="fallback must be one of"):
        Search(inner, fallback="random")


def test_search_cap_keeps_one_search_from_spending_the_episodes_calls():
    inner = TablePolicy()
    capped = Search(inner, budget=2, episode_budget=20, search_cap=4)
    decisions = play(make(wide_tree(3)), capped, max_moves=3)
    assert [d.info["policy_calls"] for d in decisions] == [4, 4, 4]  # 2 -> 4, then a move; not 2 -> 4 -> 8 -> 16
    assert [d.info["doublings"] for d in decisions] == [1, 1, 1]
    with pytest.raises(ValueError, match="search_cap"):
        Search(inner, search_cap=0)


def test_a_search_that_finds_nothing_doubles_its_budget_on_the_same_tree():
    inner = TablePolicy()
    policy = Search(inner, budget=2, episode_budget=9, trace=True)
    decisions = play(make(wide_tree(3)), policy)
    first = decisions[0].info
    assert first["policy_calls"] == 9 and first["doublings"] == 3  # 2 -> 4 -> 8 -> 9 (the episode's cap)
    assert len(first["trace"]) == len(set(first["trace"]))  # one tree: no node expanded twice
    assert decisions[-1].give_up and inner.calls == 9


def test_gain_patience_stops_a_search_soon_after_its_first_gain():
    inner = TablePolicy({"up": 1.0, "aside": 1.0})
    d = Search(inner, budget=50, trace=True).decide(make(stairs, scores=STAIRS_SCORES).situation())
    first_gain = 2  # "p2" (score 0.5) joins the frontier with the odds of the second call (about "p1")
    assert d.info["stop_reason"] == "gain_patience" and d.info["plan_score"] == 0.5
    assert d.info["policy_calls"] == 2 * first_gain  # patience 1: as many calls again, then commit
    patient = Search(TablePolicy({"up": 1.0, "aside": 1.0}), budget=50, gain_patience=None)
    assert patient.decide(make(stairs, scores=STAIRS_SCORES).situation()).info["stop_reason"] == "won"


def test_doubling_stops_once_the_score_rose():
    inner = TablePolicy({"up": 1.0, "aside": 1.0})
    policy = Search(inner, budget=2, episode_budget=50, gain_patience=None)
    d = policy.decide(make(stairs, scores=STAIRS_SCORES).situation())
    assert d.info["stop_reason"] == "budget" and d.info["doublings"] == 0 and d.info["plan_score"] == 0.5


def test_a_partial_plan_without_progress_is_not_followed():
    inner = TablePolicy()
    policy = Search(inner, budget=3)
    env = make(wide_tree(3))
    env.step(policy.decide(env.situation()).action)
    assert policy.decide(env.situation()).info["policy_calls"] == 3


def test_winning_plan_is_followed_without_calls_and_search_resumes_on_divergence():
    inner = TablePolicy()
    policy = Search(inner)
    env = make(corridor(4))
    first = policy.decide(env.situation())
    assert first.info["solved"] and first.info["plan"] == ["forward"] * 4
    calls = inner.calls
    env.step(first.action)
    for _ in range(3):
        d = policy.decide(env.situation())
        assert d.info["stop_reason"] == "following_plan" and d.usage.calls == 0
        env.step(d.action)
    assert env.won and inner.calls == calls

    # diverge: the plan says forward, the real game goes back, so the next decision searches again
    env = make(corridor(4))
    policy.reset()
    policy.decide(env.situation())
    env.step(env.index_of("forward"))
    env.step(env.index_of("back"))
    d = policy.decide(env.situation())
    assert d.info["diverged"] and d.info["stop_reason"] == "won"
    assert d.info["policy_calls"] == 3

    # reset() forgets the plan
    env = make(corridor(4))
    policy.decide(env.situation())
    env.step(0)
    policy.reset()
    assert policy.decide(env.situation()).info["stop_reason"] == "won"


def test_a_policy_that_only_likes_a_no_op_is_asked_again_after_it():
    # "look" leads back to the same state, so it is pruned; the policy is asked once more in the
    # state after "look" (history shows it), within the budget.
    class AfterLook(TablePolicy):
        def decide(self, situation):
            looked = bool(situation.history) and situation.history[-1][0] == "look"
            self.table = {"go yard": 1.0} if looked else {"look": 1.0}
            return super().decide(situation)

    inner = AfterLook(default=0.0)
    env = make(TRAP_GRAPH, wins=())
    d = Search(inner, epsilon=0.0, max_expansions=2, trace=True).decide(env.situation())
    assert d.info["noop_reasks"] == 1 and d.info["policy_calls"] == 2 == inner.calls
    assert d.info["trace"] == ["", "go yard"]  # the re-asked odds put the yard first
    d = Search(AfterLook(default=0.0), budget=1).decide(env.situation())
    assert d.info["policy_calls"] == 1 and d.info["noop_reasks"] == 0  # no room left for the re-ask


def test_search_with_rule_and_uniform_solve_toys():
    env = make(corridor(6))
    decisions = play_checked(env, Search(Rule()))
    assert env.won and len(env.history) == 6
    assert sum(d.usage.calls for d in decisions) <= 5  # one per non-final step at most
    env = make(TRAP_GRAPH)
    play_checked(env, Search(Uniform(), budget=10))
    assert env.won and [m for m, _ in env.history] == ["go hall", "open door"]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    edges=st.dictionaries(
        st.sampled_from("abcdef"),
        st.lists(st.sampled_from("abcdefWL"), min_size=1, max_size=4, unique=True),
        min_size=1,
    ),
    priority=st.sampled_from(PRIORITIES),
    batch=st.integers(1, 3),
)
def test_found_plans_replay_to_a_win_and_searches_are_deterministic(edges, priority, batch):
    graph = {s: [(f"to {t}", t) for t in ts] for s, ts in edges.items()}
    start = next(iter(graph))
    kwargs = dict(start=start, wins=("W",), losses=("L",))
    env = make(graph, **kwargs)
    a = Search(Uniform(), priority=priority, batch_size=batch, budget=30).decide(env.situation())
    b = Search(Uniform(), priority=priority, batch_size=batch, budget=30).decide(env.situation())
    assert a.info["plan"] == b.info["plan"] and a.action == b.action
    assert env.played == []
    if a.info["solved"]:
        for move in a.info["plan"]:
            env.step(env.index_of(move))
        assert env.won


# ------------------------------------------------------------------ Lookahead
def test_lookahead_annotates_forks_and_maps_back():
    env = make(TRAP_GRAPH)
    inner = TablePolicy({"go hall": 3.0})
    d = Lookahead(inner).decide(env.situation())
    assert env.played == [] and env.history == ()
    seen = inner.asked[-1]
    assert [c.text for c in seen.candidates] == ["look", "go hall", "go yard"]  # the pit is dropped
    by_text = {c.text: c for c in seen.candidates}
    check = env.fork()
    obs, *_ = check.step(check.index_of("go hall"))
    assert by_text["go hall"].outcome == check.state_text and obs.startswith(check.state_text)
    assert by_text["go hall"].new_actions == ("go back", "open door", "eat poison")
    assert by_text["look"].new_actions == ()
    assert d.probabilities[env.index_of("jump in the pit")] == 0.0
    assert env.candidates[d.action] == "go hall"
    np.testing.assert_allclose(d.probabilities, [0, 1 / 5, 3 / 5, 1 / 5])
    assert d.info["lookahead"]["dropped_losing"] == ["jump in the pit"]


def test_lookahead_counts_how_often_the_episode_was_in_each_moves_next_state():
    env = make(TRAP_GRAPH)
    inner = TablePolicy({})
    revisits = {}

    def look(move_after: str | None = None) -> None:
        Lookahead(inner).decide(env.situation())
        revisits.clear()
        revisits.update({c.text: c.revisits for c in inner.asked[-1].candidates})
        if move_after:
            env.step(env.index_of(move_after))

    look("go hall")  # start
    assert env.situation().visited == (env.fork().situation().visited) == ("You are at start.\n#" + "|".join(
        m for m, _ in TRAP_GRAPH["start"]),)
    look("go back")  # hall: back to start, or stay with a look
    assert revisits == {"go back": 1, "look": 1, "open door": 0}
    look()  # start again: the hall and the yard
    assert revisits == {"look": 2, "go hall": 1, "go yard": 0}
    plain = env.fork()
    plain.step(plain.index_of("go yard"))  # no situation taken in the yard: it is not on the path
    plain.step(plain.index_of("go back"))
    assert len(plain.situation().visited) == 3 and env.reset(seed=0) and env.situation().visited == ()


def test_lookahead_keeps_all_moves_when_every_move_loses():
    env = make({"start": [("a", "lose"), ("b", "lose")]})
    d = Lookahead(TablePolicy({"b": 1.0, "a": 0.0})).decide(env.situation())
    assert d.action == 1 and d.info["lookahead"]["dropped_losing"] == []


def test_lookahead_steps_by_text_when_an_outer_layer_narrowed_the_candidates():
    env = make(TRAP_GRAPH)
    sit = env.situation()
    narrowed = sit.with_candidates([sit.candidates[3]])  # only "go yard"
    inner = TablePolicy()
    Lookahead(inner).decide(narrowed)
    assert "yard" in inner.asked[-1].candidates[0].outcome


# ------------------------------------------------------------------ Rethink
def test_rethink_blocks_a_move_repeated_three_times_for_one_turn():
    env = make(LOOP_GRAPH, start="a", stall_patience=None)
    policy = Rethink(TablePolicy({"wait": 10.0, "go b": 2.0, "go a": 2.0}))
    decisions = play_checked(env, policy, max_moves=5)
    moves = [m for m, _ in env.history]
    assert moves == ["wait", "wait", "wait", "go b", "wait"]
    blocked = decisions[3]
    assert blocked.info["rethink"]["blocked_repeat"] == "wait"
    assert blocked.probabilities[LOOP_GRAPH["a"].index(("wait", "a"))] == 0.0
    assert blocked.probabilities.sum() == pytest.approx(1.0)
    assert "blocked_repeat" not in decisions[4].info["rethink"]


def test_rethink_asks_the_planner_on_stalls_and_gives_up_after_three_plans():
    plans = []

    def planner(situation):
        plans.append(situation.state_key)
        return "Try something new. " + "word " * 100  # longer than 60 words: truncated

    inner = TablePolicy({"go b": 5.0, "go a": 5.0, "wait": 1.0, "push button": 0.0})
    policy = Rethink(inner, planner=planner)
    env = make(LOOP_GRAPH, start="a", stall_patience=2)
    decisions = play_checked(env, policy, max_moves=60)
    events = [d.info["rethink"] for d in decisions]
    plan_turns = [i for i, e in enumerate(events) if "plan" in e]
    assert len(plans) == len(plan_turns) == 3
    assert len(events[plan_turns[0]]["plan"].split()) == 60 and events[plan_turns[0]]["plan_truncated"] == 103
    # the plan is in the notes of every later decision
    assert all(any(n.startswith("Plan: Try something new.") for n in s.notes) for s in inner.asked[plan_turns[0]:])
    assert not any(n.startswith("Plan:") for s in inner.asked[: plan_turns[0]] for n in s.notes)
    assert decisions[-1].give_up is True and events[-1]["stall"]
    assert sum(1 for e in events if e.get("stall")) == 4
    assert [e for e in policy.log if "give_up" in e]


def test_rethink_planner_object_errors_and_no_planner():
    class Planner:
        def __init__(self):
            self.prompts = []

        def plan(self, situation, prompt):
            self.prompts.append(prompt)
            if len(self.prompts) == 2:
                raise ConnectionError("planner offline")
            return "go to c and finish"

    planner = Planner()
    env = make(LOOP_GRAPH, start="a", stall_patience=2)
    decisions = play_checked(env, Rethink(TablePolicy({"go b": 5.0, "go a": 5.0, "push button": 0.0}), planner=planner))
    assert "at most 60 words" in planner.prompts[0] and "Toy" in planner.prompts[0]
    errors = [d.info["rethink"].get("planner_error") for d in decisions if "planner_error" in d.info["rethink"]]
    assert errors == ["ConnectionError: planner offline"]
    assert decisions[-1].give_up

    # No planner: a stall blocks the moves already tried in this state, which breaks the a<->b pacing
    env = make(LOOP_GRAPH, start="a", stall_patience=2)
    decisions = play_checked(env, Rethink(TablePolicy({"go b": 5.0, "go a": 5.0, "wait": 1.0, "push button": 0.5})))
    stalls = [d.info["rethink"] for d in decisions if d.info["rethink"].get("stall")]
    assert stalls and stalls[0]["blocked_tried"]
    assert "push button" in [m for m, _ in env.history]


def test_rethink_score_change_resets_the_counts():
    graph = corridor(30)
    scores = {f"r{i}": i / 30 for i in range(30)}
    env = make(graph, scores=scores, stall_patience=2)
    decisions = play_checked(env, Rethink(TablePolicy({"forward": 1.0, "wait": 0.0, "back": 0.0})))
    assert env.won and not any(d.info["rethink"].get("stall") for d in decisions)


def test_rethink_rejects_a_bad_planner():
    with pytest.raises(ValueError, match="planner"):
        Rethink(Uniform(), planner="gpt")


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


def test_search_time_travels_as_a_typed_field_through_wrappers():
    """The runner reads how long a decision planned from Decision.planning_s, not from Search's info."""
    env = make(corridor(4))
    decisions = play(env, Rethink(Search(TablePolicy(), budget=50)))
    searched = [d for d in decisions if d.info["stop_reason"] != "following_plan"]
    assert searched and all(d.planning_s == d.info["elapsed_s"] for d in searched)
    assert all(d.planning_s is None for d in decisions if d.info["stop_reason"] == "following_plan")
    assert TablePolicy().decide(make(corridor(2)).situation()).planning_s is None
