"""Lookahead and Rethink on the toy tasks of tests/toy_tasks.py: what Lookahead shows the inner policy
(outcomes, new moves, revisits, losing moves dropped) and how Rethink blocks repeats, asks its planner on
stalls and gives up (Lookahead on a real game is in test_wrappers.py)."""

from __future__ import annotations

import numpy as np
import pytest

from s1gym.policies import Uniform
from s1gym.wrappers import Lookahead, Rethink

from toy_tasks import LOOP_GRAPH, TRAP_GRAPH, TablePolicy, corridor, make, play_checked


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


def test_lookahead_width_shows_only_the_plain_favourites_at_two_calls():
    # TRAP_GRAPH's start: jump in the pit, look, go hall, go yard. The plain call ranks go yard, then the
    # pit, then go hall; with width 2 only the yard and the pit are stepped, and the pit loses.
    env = make(TRAP_GRAPH)
    inner = TablePolicy({"go yard": 4.0, "jump in the pit": 3.0, "go hall": 2.0})
    d = Lookahead(inner, width=2).decide(env.situation())
    assert inner.calls == 2 and d.usage.calls == 2
    assert inner.asked[0].texts == env.candidates and inner.asked[0].candidates[0].outcome is None  # plain
    assert [c.text for c in inner.asked[1].candidates] == ["go yard"] and inner.asked[1].candidates[0].outcome
    assert env.candidates[d.action] == "go yard" and d.info["lookahead"]["dropped_losing"] == ["jump in the pit"]
    np.testing.assert_allclose(d.probabilities, [0, 0, 0, 1])
    assert Lookahead(inner, width=2).options() == {"width": 2} and Lookahead(inner).options() == {}
    # no more moves than the width: one call, every move shown
    wide = TablePolicy({})
    Lookahead(wide, width=4).decide(env.situation())
    assert wide.calls == 1 and len(wide.asked[0].candidates) == 3  # the pit dropped
    with pytest.raises(ValueError, match="width"):
        Lookahead(inner, width=0)


def test_lookahead_width_steps_the_next_favourites_when_every_favourite_loses():
    # ScienceWorld's trap: the two favourites are "focus on" moves that lose; width 2 then steps the next two
    # and shows them, instead of showing the two losing moves (which the inner policy would pick)
    graph = {"start": [("focus on a", "lose"), ("focus on b", "lose"), ("go out", "out"), ("look", "start")],
             "out": [("go in", "start")]}
    env = make(graph)
    inner = TablePolicy({"focus on a": 5.0, "focus on b": 4.0, "look": 3.0, "go out": 1.0})
    d = Lookahead(inner, width=2).decide(env.situation())
    assert inner.calls == 2 and [c.text for c in inner.asked[1].candidates] == ["go out", "look"]
    assert d.info["lookahead"] == {"dropped_losing": ["focus on a", "focus on b"], "shown": 2}
    assert env.candidates[d.action] == "look" and d.probabilities[:2].tolist() == [0.0, 0.0]
    # every move loses: all of them are shown, as without a width
    d = Lookahead(TablePolicy({"b": 2.0}), width=1).decide(make({"start": [("a", "lose"), ("b", "lose")]}).situation())
    assert d.info["lookahead"] == {"dropped_losing": [], "shown": 2} and d.action == 1


# ------------------------------------------------------------------ Rethink
def test_rethink_blocks_a_move_repeated_three_times_for_one_turn():
    env = make(LOOP_GRAPH, start="a")
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
    policy = Rethink(inner, planner=planner, patience=2)
    env = make(LOOP_GRAPH, start="a")
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
    env = make(LOOP_GRAPH, start="a")
    decisions = play_checked(
        env, Rethink(TablePolicy({"go b": 5.0, "go a": 5.0, "push button": 0.0}), planner=planner, patience=2)
    )
    assert "at most 60 words" in planner.prompts[0] and "Toy" in planner.prompts[0]
    errors = [d.info["rethink"].get("planner_error") for d in decisions if "planner_error" in d.info["rethink"]]
    assert errors == ["ConnectionError: planner offline"]
    assert decisions[-1].give_up

    # No planner: a stall blocks the moves already tried in this state, which breaks the a<->b pacing
    env = make(LOOP_GRAPH, start="a")
    decisions = play_checked(
        env, Rethink(TablePolicy({"go b": 5.0, "go a": 5.0, "wait": 1.0, "push button": 0.5}), patience=2)
    )
    stalls = [d.info["rethink"] for d in decisions if d.info["rethink"].get("stall")]
    assert stalls and stalls[0]["blocked_tried"]
    assert "push button" in [m for m, _ in env.history]


def test_rethink_score_change_resets_the_counts():
    graph = corridor(30)
    scores = {f"r{i}": i / 30 for i in range(30)}
    env = make(graph, scores=scores)
    decisions = play_checked(env, Rethink(TablePolicy({"forward": 1.0, "wait": 0.0, "back": 0.0}), patience=2))
    assert env.won and not any(d.info["rethink"].get("stall") for d in decisions)


def test_rethink_rejects_a_bad_planner():
    with pytest.raises(ValueError, match="planner"):
        Rethink(Uniform(), planner="gpt")


def test_rethinks_fork_planner_steps_only_its_width_favourites_a_node():
    from s1gym.wrappers import ForkPlanner

    # a <-> b pacing as LOOP_GRAPH, and the score rises two moves away through the least liked move
    graph = {"a": [("go b", "b"), ("wait", "a"), ("go hall", "hall")], "b": [("go a", "a"), ("wait", "b")],
             "hall": [("go a", "a"), ("open box", "box")], "box": [("wait", "box"), ("unlock", "win")]}
    table = {"go a": 5.0, "go b": 5.0, "wait": 1.0, "go hall": 0.1, "open box": 0.1, "unlock": 0.1}

    def stall(planner):
        env = make(graph, scores={"box": 0.5}, start="a")
        decisions = play_checked(env, Rethink(TablePolicy(table), planner=planner, patience=2), max_moves=3)
        return decisions[2].info["rethink"]

    every = stall(ForkPlanner(budget=5))
    assert every["planner"]["found"] and every["plan"] == "go hall; open box"
    # width 2: the root's two favourites (go b, wait) are stepped, never go hall: no gain within the budget
    narrow = stall(ForkPlanner(budget=5, width=2))
    assert narrow["planner"]["found"] is False and "plan" not in narrow and narrow["blocked_tried"] == ["go b"]
    assert Rethink(TablePolicy(), planner="search", plan_width=2).planner.width == 2
    assert Rethink(TablePolicy(), planner="search", plan_width=2).options() == {"planner": "search", "plan_width": 2}
    assert repr(ForkPlanner(budget=5, width=2)) == "ForkPlanner(budget=5, width=2)"
    with pytest.raises(ValueError, match="plan_width is the fork planner's width"):
        Rethink(TablePolicy(), plan_width=2)
    with pytest.raises(ValueError, match="plan_width=3 disagrees with the planner's width=2"):
        Rethink(TablePolicy(), planner=ForkPlanner(width=2), plan_width=3)
    with pytest.raises(ValueError, match="width"):
        ForkPlanner(width=0)


def test_lookahead_shows_an_answer_move_as_unplayed_and_keeps_it():
    from s1gym.core.env import HIDDEN_OUTCOME

    graph = {"start": [("focus on rock", "lose"), ("focus on fox", "win"), ("go out", "out")], "out": []}
    inner = TablePolicy({"focus on rock": 3.0})
    d = Lookahead(inner).decide(make(graph, answers=("focus on",)).situation())
    shown = {c.text: c for c in inner.asked[-1].candidates}
    assert d.info["lookahead"] == {"dropped_losing": [], "shown": 3}
    for move in ("focus on rock", "focus on fox"):  # neither the loss nor the win shows
        assert shown[move].outcome == HIDDEN_OUTCOME.format(move=move) + "\n\nYou are at start."
        assert (shown[move].new_actions, shown[move].reward, shown[move].revisits) == ((), 0.0, None)
    assert shown["go out"].outcome == "You go out.\n\nYou are at out." and shown["go out"].revisits == 0
    assert d.action == 0  # the inner policy's own choice of answer stands
    # allow_oracle plays the answers: the losing one is dropped, the winning one shows its outcome
    inner = TablePolicy({"focus on rock": 3.0})
    d = Lookahead(inner, allow_oracle=True).decide(make(graph, answers=("focus on",)).situation())
    assert d.info["lookahead"]["dropped_losing"] == ["focus on rock"]
    assert inner.asked[-1].candidates[0].outcome.startswith("You focus on fox.")
