"""Search on the toy tasks of tests/toy_tasks.py: the priorities' order, the budgets and caps, pruning,
plans followed and resumed, and determinism (Search on a real game is in test_wrappers.py)."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from s1gym import registration
from s1gym.core import Situation
from s1gym.family import Family, FamilyError, Task
from s1gym.policies import Rule, Uniform
from s1gym.wrappers import PRIORITIES, Search, log_priority

from toy_tasks import (
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
    play_checked,
    stairs,
    wide_tree,
)


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


@pytest.mark.parametrize("batch_size", [1, 4])
def test_width_steps_only_the_policys_favourite_moves(batch_size):
    # Five moves a state, the policy liking m3 then m1: with width 2 every node is asked before its
    # children are stepped and only m3 and m1 are; the calls stay within the budget exactly.
    inner = TablePolicy({"m3": 5.0, "m1": 2.0})
    env = make(wide_tree(5))
    d = Search(inner, budget=7, width=2, trace=True, batch_size=batch_size).decide(env.situation())
    assert inner.calls == d.info["policy_calls"] == 7
    assert d.info["generated"] == 2 * d.info["expansions"]
    assert all(set(plan.split(" > ")) <= {"m3", "m1"} for plan in d.info["trace"][1:])
    assert d.info["plan"][0] == "m3" and env.candidates[d.action] == "m3"
    # without it every move of every expanded node is stepped
    d = Search(TablePolicy({"m3": 5.0, "m1": 2.0}), budget=7, batch_size=batch_size).decide(env.situation())
    assert d.info["generated"] == 5 * d.info["expansions"]


def test_width_still_sees_a_win_among_the_favourites_and_misses_one_outside():
    graph = {"start": [("a", "A"), ("b", "B"), ("c", "win")], "A": [("a2", "A2")], "B": [("b2", "B2")],
             "A2": [("a3", "A3")], "B2": [("b3", "B3")], "A3": [], "B3": []}
    d = Search(TablePolicy({"c": 3.0}), width=2).decide(make(graph).situation())
    assert d.info["solved"] and d.info["plan"] == ["c"]
    d = Search(TablePolicy({"a": 3.0, "b": 2.0}), width=2).decide(make(graph).situation())
    assert not d.info["solved"] and d.info["plan"][0] in ("a", "b")
    with pytest.raises(ValueError, match="width"):
        Search(Uniform(), width=0)


def test_width_steps_the_next_favourites_when_every_favourite_is_pruned():
    # ScienceWorld's trap: the policy's favourites are "focus on" moves that end the game and moves that go
    # nowhere; the way on is the least liked. Width 2 steps the two favourites (both lose), then the next two
    # (both lead back to the start), then "go out", which survives; from there the win.
    graph = {"start": [("focus on a", "lose"), ("focus on b", "lose"), ("look", "start"), ("wait", "start"),
                       ("go out", "out")],
             "out": [("focus on animal", "win"), ("go in", "start")]}
    inner = TablePolicy({"focus on a": 5.0, "focus on b": 4.0, "look": 3.0, "wait": 2.0, "go out": 1.0})
    d = Search(inner, width=2).decide(make(graph).situation())
    assert d.info["solved"] and d.info["plan"] == ["go out", "focus on animal"]
    assert (d.info["refills"], d.info["losing_pruned"], d.info["duplicates"], d.info["generated"]) == (2, 2, 2, 6)
    assert inner.calls == d.info["policy_calls"] == 1  # one ranking of the root; "out" has no more than 2 moves
    # a favourite that survives stops the stepping there: no refill
    d = Search(TablePolicy({"go out": 5.0, "focus on a": 4.0}), width=2).decide(make(graph).situation())
    assert d.info["refills"] == 0 and d.info["plan"] == ["go out", "focus on animal"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([0.0, 0.1, 0.25, 0.5, 1.0]), min_size=1, max_size=40), st.integers(1, 12))
def test_favourite_groups_partition_the_moves_by_liking(probabilities, width):
    from s1gym.wrappers._base import favourite_groups

    groups = favourite_groups(probabilities, width)
    assert sorted(i for g in groups for i in g) == list(range(len(probabilities)))  # every move once
    assert [len(g) for g in groups[:-1]] == [width] * (len(groups) - 1) and 1 <= len(groups[-1]) <= width
    assert all(g == sorted(g) for g in groups)  # each group in the moves' order
    for better, worse in itertools.pairwise(groups):  # no move of a later group is liked more, or as much and earlier
        assert all((probabilities[i], -i) > (probabilities[j], -j) for i in better for j in worse)


def test_avoid_revisits_ends_a_partial_plan_where_the_episode_has_not_been():
    # A and B look equally close (h 1), the side rooms X and Y farther (h 2), nothing scores: a search of one
    # call a move walks A, B, A, B... by h alone; avoiding revisits it leaves B for Y, where it had not been.
    graph = {"A": [("go b", "B"), ("go x", "X")], "B": [("go a", "A"), ("go y", "Y")],
             "X": [("go a", "A")], "Y": [("go b", "B")]}

    def h(situation):
        return 2.0 if "at X." in situation.observation or "at Y." in situation.observation else 1.0

    def walk(**options):
        env = make(graph, start="A")
        decisions = play_checked(env, Search(Uniform(), budget=1, heuristic=h, **options), max_moves=3)
        return [d.info["plan"][0] for d in decisions]

    assert walk() == ["go b", "go a", "go b"]
    assert walk(avoid_revisits=True) == ["go b", "go y", "go b"]
    assert Search(Uniform(), avoid_revisits=True).options() == {"avoid_revisits": True}


def test_stall_share_plays_a_move_the_policy_likes_when_no_plan_scores():
    # Nothing scores. X looks closest (h .5), but the policy likes waiting (.6) and going to B (.3) and gives
    # going to X .1: the usual pick goes to X; with stall_share .5 the best plan among the liked moves' goes to
    # B; at .6 only waiting is liked, a move back to the same state, played as a plan of its own.
    graph = {"A": [("go x", "X"), ("go b", "B"), ("wait", "A")], "X": [("go a", "A")], "B": [("go a", "A")]}
    odds = TablePolicy({"wait": 0.6, "go b": 0.3, "go x": 0.1})

    def h(situation):
        return {"X": 0.5, "B": 2.0}.get(situation.observation.split("at ")[1][0], 1.0)

    def first(**options):
        decision = play_checked(make(graph, start="A"), Search(odds, budget=1, epsilon=0.0, heuristic=h, **options),
                                max_moves=1)[0]
        return decision.info["plan"][0], decision.info["stall_pick"]

    assert first() == ("go x", False)
    assert first(stall_share=0.5) == ("go b", True)
    assert first(stall_share=0.6) == ("wait", True)
    # Two moves to one state: the search keeps the first it stepped, the liked one is played into it.
    looks = {"A": [("look at x", "L"), ("look at y", "L"), ("go x", "X")], "L": [("go a", "A")], "X": [("go a", "A")]}
    likes = TablePolicy({"look at y": 0.7, "look at x": 0.1, "go x": 0.2})
    decision = play_checked(make(looks, start="A"), Search(likes, budget=1, epsilon=0.0, heuristic=h, stall_share=0.5),
                            max_moves=1)[0]
    assert decision.info["plan"] == ["look at y"]
    assert Search(odds, stall_share=0.5).options() == {"stall_share": 0.5}
    with pytest.raises(ValueError, match=r"stall_share .* must be a number in \[0, 1\]"):
        Search(odds, stall_share=2)


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

    # commit_partial=False: each decision searches again (reuse=0: from scratch)
    inner = TablePolicy({"up": 3.0, "aside": 1.0})
    policy = Search(inner, budget=2, commit_partial=False, reuse=0)
    env = make(stairs, scores=STAIRS_SCORES)
    env.step(policy.decide(env.situation()).action)
    assert policy.decide(env.situation()).info["policy_calls"] == 2


def test_tree_reuse_takes_the_subtree_answers_without_calls_and_decides_the_same():
    """After a move is played, the next search gets the answers of the nodes below it from the last
    search: the same decisions as a search from scratch, with fewer calls (issue 55)."""
    games = {}
    for reuse in (0, 4096):
        inner = TablePolicy({"up": 3.0, "aside": 1.0})
        policy = Search(inner, budget=2, commit_partial=False, reuse=reuse)
        env = make(stairs, scores=STAIRS_SCORES)
        infos = []
        while env.candidates and not env.won:
            d = policy.decide(env.situation())
            infos.append((env.candidates[d.action], d.info["policy_calls"], d.info["reused"]))
            env.step(d.action)
        games[reuse] = (infos, inner.calls, [s.history for s in inner.asked])
    (plain, plain_calls, _), (reused, reused_calls, reused_asked) = games[0], games[4096]
    assert [m for m, _, _ in plain] == [m for m, _, _ in reused] == ["up", "up", "up", "up"]
    assert [(c, r) for _, c, r in plain] == [(2, 0), (2, 0), (1, 0), (0, 0)]  # the last follows the win
    # the second search's root is the first search's child "up": its answer is reused (one call less);
    # the third's root ("up", "up") was asked in the second search
    assert [(c, r) for _, c, r in reused] == [(2, 0), (1, 1), (0, 1), (0, 0)]
    assert (plain_calls, reused_calls) == (5, 3)
    assert len(set(reused_asked)) == len(reused_asked)  # no situation is asked twice
    # reset() forgets: a new episode asks again
    policy.reset()
    env = make(stairs, scores=STAIRS_SCORES)
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
    policy = Search(inner, budget=2, episode_budget=5, doubling=False, reuse=0)  # every search from scratch
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
    # 2 -> 4 answers a search, then a move; not 2 -> 4 -> 8 -> 16 (the later searches reuse one answer each)
    assert [d.info["policy_calls"] + d.info["reused"] for d in decisions] == [4, 4, 4]
    assert [d.info["reused"] for d in decisions] == [0, 1, 1]
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


def test_gain_patience_is_the_tasks_own_unless_the_options_say():
    assert (registration.gain_patience("CookingWorld"), registration.gain_patience("CoinCollector")) == (0.0, 1.0)
    registration.add_family(Family(name="toy-patience", package="toy_tasks", tasks=(
        Task(id="toy/Toy-v0", entry_point="toy_tasks:GraphTask", gain_patience=0.0),)))
    try:
        situation = make(stairs, scores=STAIRS_SCORES).situation()
        d = Search(TablePolicy({"up": 1.0, "aside": 1.0}), budget=50).decide(situation)
        assert d.info["stop_reason"] == "gain_patience" and d.info["plan_score"] == 0.5
        assert d.info["policy_calls"] == 2 + 1  # the first gain after 2 calls, then one more: the task's 0
        told = Search(TablePolicy({"up": 1.0, "aside": 1.0}), budget=50, gain_patience=1.0).decide(situation)
        assert told.info["policy_calls"] == 2 * 2
    finally:
        registration.remove_family("toy-patience")
    with pytest.raises(ValueError, match="gain_patience must be .* 'auto'"):
        Search(Uniform(), gain_patience="soon")
    with pytest.raises(FamilyError, match="'toy/Toy-v0' declares gain_patience=-1: give a number >= 0"):
        Task(id="toy/Toy-v0", entry_point="toy_tasks:GraphTask", gain_patience=-1)


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
    again = policy.decide(env.situation()).info  # a new search: its root's answer is reused, two calls
    assert again["stop_reason"] != "following_plan" and (again["policy_calls"], again["reused"]) == (2, 1)


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
    kwargs = {"start": start, "wins": ("W",), "losses": ("L",)}
    env = make(graph, **kwargs)
    a = Search(Uniform(), priority=priority, batch_size=batch, budget=30).decide(env.situation())
    b = Search(Uniform(), priority=priority, batch_size=batch, budget=30).decide(env.situation())
    assert a.info["plan"] == b.info["plan"] and a.action == b.action
    assert env.played == []
    if a.info["solved"]:
        for move in a.info["plan"]:
            env.step(env.index_of(move))
        assert env.won


def test_an_answer_the_fork_does_not_judge_is_committed_to_on_the_policys_odds():
    # "focus on" moves are answers: a planning fork does not play them, so Search cannot tell the right one by
    # stepping it. With policy_answers=False (the rule before it) the frontier pops the likeliest plan, which
    # here ends in an answer: Search commits to it (stop "commit", a plan it follows) and the real game gives
    # the verdict.
    graph = {"start": [("focus on rock", "lose"), ("go out", "out")],
             "out": [("focus on rock", "lose"), ("focus on fox", "win"), ("go in", "start")]}
    likes_fox = TablePolicy({"go out": 4.0, "focus on fox": 4.0})
    env = make(graph, answers=("focus on",))
    d = Search(likes_fox, epsilon=0.0, policy_answers=False).decide(env.situation())
    assert (d.info["stop_reason"], d.info["plan"], d.info["solved"]) == ("commit", ["go out", "focus on fox"], False)
    assert d.info["losing_pruned"] == 0 and d.info["policy_calls"] == 2
    assert [x.info["stop_reason"] for x in play(env, Search(likes_fox, epsilon=0.0, policy_answers=False))] == [
        "commit", "following_plan"]
    assert env.won
    # a policy that likes the wrong answer loses the real game: the fork no longer tells it
    env = make(graph, answers=("focus on",))
    likes_rock = TablePolicy({"go out": 4.0, "focus on rock": 4.0})
    assert play(env, Search(likes_rock, epsilon=0.0, policy_answers=False))[0].info["plan"] == ["focus on rock"]
    assert env.lost
    # the oracle, measured on purpose: the wrong answer loses on the fork and the right one wins there
    env = make(graph, answers=("focus on",))
    d = Search(likes_rock, epsilon=0.0, policy_answers=False, allow_oracle=True).decide(env.situation())
    assert (d.info["stop_reason"], d.info["plan"], d.info["losing_pruned"]) == ("won", ["go out", "focus on fox"], 2)


def test_a_search_cut_short_never_plays_an_answer_it_did_not_pop():
    # The answer is the policy's favourite, but the search stops (one expansion) before its frontier pops it:
    # the best partial plan is the explored move, never the answer (which only a popped leaf commits to).
    graph = {"start": [("focus on rock", "lose"), ("go out", "out")], "out": [("go in", "start")]}
    d = Search(TablePolicy({"focus on rock": 3.0}), epsilon=0.0, max_expansions=1, policy_answers=False).decide(
        make(graph, answers=("focus on",)).situation())
    assert (d.info["stop_reason"], d.info["plan"], d.info["expansions"]) == ("max_expansions", ["go out"], 1)


def test_policy_answers_commits_only_to_the_policys_own_answer_at_the_real_state():
    # The policy likes "go out" best at the start and "focus on fox" best outside; "focus on rock" (wrong) is
    # its second choice at the start. The frontier rule (policy_answers=False) pops the rock leaf (g 1) before
    # the fox leaf (g 2) and loses; by default no answer is stepped: the search walks out on its plan, then
    # commits to the answer the policy itself picks there, at one call. With the oracle (forks that play
    # answers) nothing is hidden, so answers are stepped and judged on the fork as any move.
    graph = {"start": [("focus on rock", "lose"), ("go out", "out")],
             "out": [("focus on rock", "lose"), ("focus on fox", "win"), ("go in", "start")]}
    likes = {"go out": 3.0, "focus on rock": 2.5, "focus on fox": 4.0}
    env = make(graph, answers=("focus on",))
    first = play(env, Search(TablePolicy(likes), epsilon=0.0, policy_answers=False))[0]
    assert (first.info["stop_reason"], first.info["plan"], env.lost) == ("commit", ["focus on rock"], True)
    env = make(graph, answers=("focus on",))
    decisions = play(env, Search(TablePolicy(likes), epsilon=0.0))
    assert [(d.info["stop_reason"], d.info["plan"], d.info["policy_calls"]) for d in decisions] == [
        ("exhausted", ["go out"], 1), ("commit", ["focus on fox"], 1)]
    assert env.won and [m for m, _ in env.history] == ["go out", "focus on fox"]
    d = Search(TablePolicy(likes), epsilon=0.0, allow_oracle=True).decide(make(graph, answers=("focus on",)).situation())
    assert (d.info["stop_reason"], d.info["plan"], d.info["losing_pruned"]) == ("won", ["go out", "focus on fox"], 2)


def test_answer_confidence_commits_only_to_an_answer_the_policy_gives_enough():
    # At the start the policy's pick is the wrong answer "focus on rock" at 0.6; outside, "focus on fox" at 10/14.
    # By default Search commits to its pick and loses; with answer_confidence=0.65 it plans with the other moves
    # at the start (walks out) and commits outside, where the answer clears the floor.
    graph = {"start": [("focus on rock", "lose"), ("go out", "out")],
             "out": [("focus on rock", "lose"), ("focus on fox", "win"), ("go in", "start")]}
    likes = TablePolicy({"focus on rock": 3.0, "go out": 2.0, "focus on fox": 10.0})
    env = make(graph, answers=("focus on",))
    assert [(d.info["stop_reason"], d.info["plan"]) for d in play(env, Search(likes, epsilon=0.0))] == [
        ("commit", ["focus on rock"])]
    assert env.lost
    env = make(graph, answers=("focus on",))
    decisions = play(env, Search(likes, epsilon=0.0, answer_confidence=0.65))
    assert [(d.info["stop_reason"], d.info["plan"]) for d in decisions] == [
        ("exhausted", ["go out"]), ("commit", ["focus on fox"])]
    assert env.won
    with pytest.raises(ValueError, match=r"answer_confidence .* must be a number in \[0, 1\]"):
        Search(likes, answer_confidence=1.5)
