"""Rethink's offline fork planner (issue 54): on a stall it searches forks for the way to the next score
gain, Rethink follows that plan with no inner call, drops it where a move is missing, and counts the
planning calls in the decision's usage; on a real TWC game it wins where plain Local and planner-less
Rethink loop."""

from __future__ import annotations

import pytest
from s1gym.wrappers import ForkPlanner, Rethink, WrapperOrderError, wrap
from toy_tasks import TablePolicy, make, play_checked

from s1gym.core import Usage

#: A loop a <-> b that the table policy prefers; the score rises in "box" (hall, then open box) and the win
#: is one move further ("unlock"), with another loop (box <-> c) on the way.
LADDER = {
    "a": [("go b", "b"), ("wait", "a"), ("go hall", "hall")],
    "b": [("go a", "a"), ("wait", "b")],
    "hall": [("go a", "a"), ("open box", "box")],
    "box": [("go c", "c"), ("wait", "box"), ("unlock", "win")],
    "c": [("go box", "box"), ("wait", "c")],
}
LADDER_SCORES = {"box": 0.5, "c": 0.5}
LADDER_TABLE = {"go a": 5, "go b": 5, "go c": 5, "go box": 5, "wait": 1, "go hall": 0.1, "open box": 0.1,
                "unlock": 0.1}


def test_the_fork_planner_finds_the_gain_and_rethink_follows_it():
    env = make(LADDER, scores=LADDER_SCORES, start="a")
    plain = play_checked(env, TablePolicy(LADDER_TABLE), max_moves=40)
    assert not env.won and len(plain) == 40  # plain play paces a <-> b

    env = make(LADDER, scores=LADDER_SCORES, start="a")
    inner = TablePolicy(LADDER_TABLE)
    decisions = play_checked(env, Rethink(inner, planner="search", patience=2), max_moves=40)
    assert env.won
    assert [m for m, _ in env.history] == ["go b", "go a", "go hall", "open box", "go c", "go box", "unlock"]
    events = [d.info["rethink"] for d in decisions]
    first = events[2]  # the stall: back in "a" after two quiet acts
    assert first["stall"] and first["plan"] == "go hall; open box"
    assert first["planner"]["found"] and first["planner"]["policy_calls"] == 1 and first["planner"]["plan_length"] == 2
    assert first["following"] == {"move": "go hall", "step": 1, "of": 2}
    assert events[3]["following"] == {"move": "open box", "step": 2, "of": 2}
    # the search's one call is in the stall decision's usage; following costs no call
    assert [d.usage.calls for d in decisions] == [1, 1, 1, 0, 1, 1, 0]
    assert inner.calls == sum(d.usage.calls for d in decisions) == 5
    # the second stall (box <-> c) is planned with no call: the win is one move from the root
    assert events[6]["planner"]["stop_reason"] == "won" and events[6]["plan"] == "unlock"


def test_a_plan_is_dropped_when_its_next_move_is_missing():
    env = make(LADDER, scores=LADDER_SCORES, start="a")
    inner = TablePolicy(LADDER_TABLE)
    policy = Rethink(inner, planner=ForkPlanner(budget=5), patience=2)
    for move in ("go b", "go a"):
        policy.decide(env.situation())
        env.step_move(move)
    d = policy.decide(env.situation())
    assert d.info["rethink"]["following"]["move"] == "go hall"
    env.step_move("go b")  # the game went elsewhere: "open box" is not a move in "b"
    calls = inner.calls
    d = policy.decide(env.situation())
    assert d.info["rethink"]["plan_dropped"] == "step 2 of 2: 'open box' is not a move here"
    assert "following" not in d.info["rethink"] and inner.calls == calls + 1  # the inner policy decides again
    assert env.situation().texts[d.action] == "go a"


#: Put the key in the box (score 0.5) and take it out again (0): the score goes up and down forever.
OSCILLATE = {
    "start": [("put key in box", "in"), ("wait", "start")],
    "in": [("take key", "start"), ("wait", "in"), ("close box", "win")],
}


def test_progress_best_counts_a_score_that_goes_up_and_down_as_a_loop():
    table = {"put key in box": 5, "take key": 5, "wait": 0.1, "close box": 0.01}
    env = make(OSCILLATE, scores={"in": 0.5}, start="start")
    decisions = play_checked(env, Rethink(TablePolicy(table), patience=2), max_moves=30)
    assert not env.won and not any(d.info["rethink"].get("stall") for d in decisions)  # every change resets

    env = make(OSCILLATE, scores={"in": 0.5}, start="start")
    decisions = play_checked(env, Rethink(TablePolicy(table), planner="search", patience=3), max_moves=30)
    assert env.won
    planned = [d.info["rethink"] for d in decisions if "plan" in d.info["rethink"]]
    # the stall is at "start" (score 0): the plan looks above the episode's best (0.5), not merely above 0
    assert [p["plan"] for p in planned] == ["put key in box; close box"]
    assert [m for m, _ in env.history] == ["put key in box", "take key", "put key in box", "take key",
                                           "put key in box", "close box"]


def test_options_by_name_and_bad_options():
    p = wrap(TablePolicy(), ["rethink"], planner="search", plan_budget=20)
    assert isinstance(p.planner, ForkPlanner) and p.planner.budget == 20 and p.progress == "best"
    assert p.options() == {"planner": "search", "plan_budget": 20}
    assert Rethink(TablePolicy(), planner="search").options() == {"planner": "search"}
    assert Rethink(TablePolicy(), planner="Search", progress="change").options() == {
        "planner": "search", "progress": "change"}
    with pytest.raises(ValueError, match="offline planner: unknown Rethink planner 'gpt'; choose one of: search$"):
        Rethink(TablePolicy(), planner="gpt")
    with pytest.raises(ValueError, match="plan_budget is the fork planner's budget"):
        Rethink(TablePolicy(), plan_budget=10)
    with pytest.raises(ValueError, match="progress must be"):
        Rethink(TablePolicy(), progress="score")
    with pytest.raises(ValueError, match="budget"):
        ForkPlanner(budget=0)
    with pytest.raises(WrapperOrderError, match="fork planner"):
        Rethink(Rethink(TablePolicy()), planner="search")


def test_no_gain_within_the_budget_is_handled_as_without_a_planner():
    # from "a" the gain is four moves away, past two states with two new moves each: 1 call cannot reach it
    # (hall -> yard is forced, so free; yard has two new moves, so going on past it needs a second call)
    graph = {**LADDER, "hall": [("go a", "a"), ("wait", "hall"), ("go yard", "yard")],
             "yard": [("go hall", "hall"), ("dig", "pit"), ("go shed", "shed")], "pit": [("go yard", "yard")],
             "shed": [("go yard", "yard"), ("open box", "box")]}
    env = make(graph, scores=LADDER_SCORES, start="a")
    decisions = play_checked(env, Rethink(TablePolicy(LADDER_TABLE), planner=ForkPlanner(budget=1), patience=2),
                             max_moves=3)
    stall = decisions[2].info["rethink"]
    assert stall["planner"]["found"] is False and stall["planner"]["policy_calls"] == 1
    assert stall["blocked_tried"] == ["go b"] and "plan" not in stall
    assert decisions[2].usage == Usage(calls=2, input_tokens=20)  # the search's call and the decision's


def test_on_a_twc_game_rethink_with_the_fork_planner_wins_where_local_loops():
    from s1gym.policies import Local

    from s1gym.tasks.twx.fit import make_env

    def play(policy):
        # dev seed 27: one of the two dev games plain Local still loses since TWC's model reads the score
        # change (issue 54; seed 7 before, which Local now wins)
        env = make_env("TWC", "default", 27, "dev")
        env.reset(seed=27)
        try:
            policy.reset()
            calls = 0
            for _ in range(100):
                d = policy.decide(env.situation())
                calls += d.usage.calls
                if d.give_up:
                    break
                *_, term, trunc, info = env.step(d.action)
                if term or trunc:
                    break
            return env.situation().score, bool(info["won"]), env.steps, calls
        finally:
            env.close()

    assert play(Local()) == (0.75, False, 100, 100)
    score, won, steps, calls = play(Rethink(Local(), planner="search"))
    assert (score, won, steps, calls) == (1.0, True, 32, 35)
