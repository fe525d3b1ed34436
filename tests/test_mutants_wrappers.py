"""The wrappers pinned where mutation testing (bench/mutation.py, issue 57) found them loose: Rethink's options,
prompt, blocks, stalls and give-up read exactly; Search's spent budget and followed plan; the priorities; the
base wrapper's checks. Situations are built by hand (Rethink reads only what a Situation shows), so every
number is known. Each test says what it catches."""

from __future__ import annotations

import math

import numpy as np
import pytest
from s1gym.wrappers import Rethink, Search, wrap
from s1gym.wrappers._base import Wrapper, normalised, situation_key
from s1gym.wrappers._search_nodes import Plan, log_priority, one_hot

from s1gym.core import BasePolicy, Candidate, Decision, Situation, Usage


class Fixed(BasePolicy):
    """Always the same probabilities (the most likely move chosen); records what it saw."""

    def __init__(self, p, name="fixed", calls=1, give_up=False):
        self.p, self.name, self.calls, self.give_up = list(p), name, calls, give_up
        self.seen: list[Situation] = []
        self.resets = 0

    def decide(self, situation):
        self.seen.append(situation)
        return Decision.from_probabilities(self.p, Usage(calls=self.calls), info={"inner": 1}, give_up=self.give_up)

    def reset(self):
        self.resets += 1


def sit(key="A", score=0.0, moves=("a", "b", "c"), history=(), notes=(), task="toy"):
    return Situation(task=task, observation=f"obs {key}", candidates=tuple(Candidate(m) for m in moves),
                     history=history, notes=notes, score=score, state_key=key)


def test_rethink_options_name_only_what_differs():
    # catches: each default in options(), the planner's name lookup order
    assert Rethink(Fixed([1, 0, 0])).options() == {}
    assert Rethink(Fixed([1, 0, 0]), repeat_limit=4, max_plans=2, plan_words=10, patience=5).options() == {
        "repeat_limit": 4, "max_plans": 2, "plan_words": 10, "patience": 5}

    def my_planner(situation):
        return "go"

    class Named:
        name = "chatty"

        def plan(self, situation, prompt):
            return "go"

    class Nameless:
        def __call__(self, situation):
            return "go"

    assert Rethink(Fixed([1]), planner=my_planner).options() == {"planner": "my_planner"}
    assert Rethink(Fixed([1]), planner=Named()).options() == {"planner": "chatty"}
    assert Rethink(Fixed([1]), planner=Nameless()).options() == {"planner": "planner"}
    with pytest.raises(ValueError, match=r"^planner must be a callable\(situation\) -> str or an object with "):
        Rethink(Fixed([1]), planner="not a planner")
    for name in ("repeat_limit", "max_plans", "plan_words", "patience"):
        with pytest.raises(ValueError, match=f"^{name} must be a positive integer"):
            Rethink(Fixed([1]), **{name: 0})
    r = Rethink(Fixed([1]), patience=2)
    assert (r.repeat_limit, r.max_plans, r.plan_words, r.patience) == (3, 3, 60, 2)
    assert r.stall_patience("anything") == 2 and Rethink(Fixed([1])).stall_patience("no such task") is None
    assert r.name == "rethink(fixed)"


def test_a_repeated_move_is_blocked_for_one_turn():
    # catches: the run counter, the repeat limit's comparison, the block's renormalisation and the next choice
    inner = Fixed([0.5, 0.3, 0.2])
    r = Rethink(inner, repeat_limit=2)
    first = r.decide(sit("A"))
    assert first.info["rethink"] == {"plans": 0, "quiet_acts": 0} and first.info["inner"] == 1
    assert r.decide(sit("B")).action == 0  # the run is 2 long now
    d = r.decide(sit("C"))
    assert d.action == 1 and d.probabilities.tolist() == pytest.approx([0.0, 0.6, 0.4])
    assert d.info["rethink"] == {"blocked_repeat": "a", "blocked": ["a"], "plans": 0, "quiet_acts": 2}
    assert r.log == [{"step": 0, "blocked_repeat": "a", "blocked": ["a"]}]
    assert r.decide(sit("D")).action == 0  # b broke the run: a is free again
    r.reset()
    assert inner.resets == 1 and r.log == [] and r._run_length == 0 and r._run_move is None


def test_a_stall_asks_the_planner_with_the_exact_prompt_and_gives_up_after_max_plans():
    # catches: the stall test (patience, revisit), the prompt's fields, the plan in the notes, the word cap,
    # the plan count, give_up after max_plans, a score change resetting it all
    prompts = []

    class Planner:
        name = "p"

        def plan(self, situation, prompt):
            prompts.append(prompt)
            return " ".join(f"w{i}" for i in range(5))

    inner = Fixed([0.2, 0.8])
    r = Rethink(inner, planner=Planner(), patience=2, plan_words=3, max_plans=1, repeat_limit=10)
    hist = tuple((f"m{i}", "f") for i in range(10))
    moves = ("a", "b")
    assert "stall" not in r.decide(sit("A", moves=moves)).info["rethink"]
    assert "stall" not in r.decide(sit("B", moves=moves)).info["rethink"]
    d = r.decide(sit("A", moves=moves, history=hist))  # 2 quiet acts, back in A: a stall
    ev = d.info["rethink"]
    assert ev == {"stall": True, "plan": "w0 w1 w2", "plan_truncated": 5, "plans": 1, "quiet_acts": 0}
    assert prompts == [
        "You are playing toy and seem to be going in circles: no progress for 2 moves, and you are back in a "
        "state you have seen before. Recent moves: m2, m3, m4, m5, m6, m7, m8, m9. Current situation:\nobs A\n\n"
        "Write a short plan (at most 3 words) to make progress from here. Answer with the plan only."]
    assert inner.seen[-1].notes == ("Plan: w0 w1 w2",)
    r.decide(sit("B", moves=moves))
    gave = r.decide(sit("A", moves=moves))
    assert gave.give_up is True and gave.info["rethink"]["give_up"] is True and len(prompts) == 1
    assert inner.seen[-1].notes == ("Plan: w0 w1 w2",)  # the plan stays in the notes
    fresh = r.decide(sit("A", score=0.5, moves=moves))
    assert fresh.give_up is False and fresh.info["rethink"] == {"plans": 0, "quiet_acts": 0}


def test_a_planner_that_fails_or_says_nothing_keeps_the_old_plan():
    # catches: the planner error's text, an empty plan becoming "" instead of None, "none" for no history
    calls = []

    def planner(situation):
        calls.append(situation.state_key)
        if len(calls) == 1:
            raise RuntimeError("down")
        return "   "

    r = Rethink(Fixed([1.0, 0.0]), planner=planner, patience=1, repeat_limit=10)
    r.decide(sit("A", moves=("a", "b")))
    d = r.decide(sit("A", moves=("a", "b")))
    assert d.info["rethink"] == {"stall": True, "planner_error": "RuntimeError: down", "plan": None, "plans": 1,
                                 "quiet_acts": 0}
    d = r.decide(sit("A", moves=("a", "b")))
    assert d.info["rethink"]["plan"] is None and r._plan is None
    seen = []

    class Chat:
        def plan(self, situation, prompt):
            seen.append(prompt)
            return "go east"

    r = Rethink(Fixed([1.0, 0.0]), planner=Chat(), patience=1, repeat_limit=10)
    r.decide(sit("A", moves=("a", "b")))
    r.decide(sit("A", moves=("a", "b")))
    assert "Recent moves: none." in seen[0] and "no progress for 1 moves" in seen[0]


def test_without_a_planner_a_stall_blocks_the_moves_tried_here():
    # catches: the tried-move memory (per state, cleared on a score change) and the blocked_tried event
    r = Rethink(Fixed([0.6, 0.3, 0.1]), patience=2, repeat_limit=10)
    r.decide(sit("A"))
    r.decide(sit("B"))
    d = r.decide(sit("A"))
    assert d.info["rethink"] == {"stall": True, "blocked_tried": ["a"], "blocked": ["a"], "plans": 1,
                                 "quiet_acts": 0}
    assert d.action == 1 and d.probabilities.tolist() == pytest.approx([0.0, 0.75, 0.25])
    r.decide(sit("B", score=1.0))  # progress: the memory of tried moves starts again
    assert r._tried == {"B": {"a"}} and r._plans_or_stalls == 0


def test_blocks_renormalise_and_never_block_every_move():
    # catches: _apply_blocks' any/all test, the flat odds when the inner policy gave the rest no mass
    r = Rethink(Fixed([1.0, 0.0, 0.0]))
    s = sit("A")
    d = Decision(np.array([1.0, 0.0, 0.0]), 0)
    p, action, applied = r._apply_blocks(s, d, {"a"})
    assert p.tolist() == [0.0, 0.5, 0.5] and action == 1 and applied == ["a"]
    p, action, applied = r._apply_blocks(s, d, {"a", "b", "c"})
    assert p is d.probabilities and action == 0 and applied == []
    p, action, applied = r._apply_blocks(s, Decision(np.array([0.2, 0.5, 0.3]), 1), {"c"})
    assert p.tolist() == pytest.approx([2 / 7, 5 / 7, 0.0]) and action == 1 and applied == ["c"]


def test_an_inner_give_up_is_forwarded():
    d = Rethink(Fixed([1.0, 0.0], give_up=True)).decide(sit("A", moves=("a", "b")))
    assert d.give_up is True and d.usage == Usage(calls=1)


class Stateless(BasePolicy):
    name = "flat"

    def decide(self, situation):
        return Decision.from_probabilities([0.25, 0.75], Usage(calls=2), info={"why": "x"})


def test_search_with_its_episode_budget_spent():
    # catches: every field of the spent decision, both fallbacks, the calls counted in greedy mode
    s = sit("A", moves=("a", "b"))
    search = Search(Stateless(), episode_budget=1)
    search.episode_calls = 1
    d = search.decide(s)
    assert d.give_up is True and d.action == 0 and d.probabilities.tolist() == [0.5, 0.5] and d.usage == Usage()
    assert d.info == {"stop_reason": "episode_budget", "solved": False, "partial": True, "plan": [],
                      "plan_length": 0, "expansions": 0, "policy_calls": 0, "reused": 0,
                      "note": "the episode's 1 inner-policy calls are spent without a winning plan"}
    greedy = Search(Stateless(), episode_budget=1, fallback="greedy")
    greedy.episode_calls = 1
    d = greedy.decide(s)
    assert d.give_up is False and d.action == 1 and greedy.episode_calls == 3 and d.usage == Usage(calls=2)
    assert d.info == {"why": "x", "fallback": "greedy", "stop_reason": "episode_budget", "solved": False,
                      "partial": True, "plan": [], "plan_length": 0, "expansions": 0, "policy_calls": 1,
                      "reused": 0}
    assert Search(Stateless()).options() == {}
    assert Search(Stateless(), budget=7, fallback="greedy", trace=True).options() == {"budget": 7,
                                                                                   "fallback": "greedy"}
    assert Search(Stateless(), allow_oracle=True).options() == {"allow_oracle": True}
    with pytest.raises(ValueError, match="no candidate moves"):
        search.decide(sit("A", moves=()))


def test_a_plan_is_followed_while_the_state_matches():
    # catches: follow's key and move checks, its info fields, the position it advances
    plan = Plan([("A", "a"), ("B", "b")], 0, solves=True)
    assert plan.follow(sit("X"), "X") is None and plan.pos == 0
    assert plan.follow(sit("A", moves=("b",)), "A") is None
    d = plan.follow(sit("A"), "A")
    assert d.action == 0 and d.probabilities.tolist() == [1.0, 0.0, 0.0] and d.usage == Usage()
    assert d.info == {"stop_reason": "following_plan", "plan": ["a", "b"], "plan_length": 2, "plan_step": 0,
                      "expansions": 0, "policy_calls": 0, "reused": 0, "solved": True, "partial": False}
    d = plan.follow(sit("B"), "B")
    assert d.action == 1 and d.info["plan"] == ["b"] and d.info["plan_step"] == 1 and plan.finished
    assert plan.follow(sit("B"), "B") is None
    partial = Plan([("A", "c")], 0, solves=False)
    assert partial.follow(sit("A"), "A").info["partial"] is True and not Plan([("A", "c")], 0, False).finished


def test_the_priorities_exactly():
    # catches: each formula, the -inf guard
    lp = math.log(0.25)
    assert log_priority("levin", 2, lp, 3.0) == pytest.approx(math.log(2) - lp)
    assert log_priority("phs_h", 2, lp, 3.0) == pytest.approx(math.log(5) - lp)
    assert log_priority("phs*", 2, lp, 3.0) == pytest.approx(math.log(5) - 2.5 * lp)
    assert log_priority("levin", 1, -math.inf, 0.0) == math.inf
    d = one_hot(sit("A"), "b", Usage(calls=1), {"k": 1}, give_up=True)
    assert d.probabilities.tolist() == [0.0, 1.0, 0.0] and d.action == 1 and d.give_up and d.info == {"k": 1}


def test_the_base_wrapper():
    # catches: its type check and message, options, reset forwarding, inner_many's count check
    with pytest.raises(TypeError, match=r"^Rethink wraps a policy \(an object with decide\(situation\)\), got 3$"):
        Rethink(3)
    inner = Fixed([1.0, 0.0])
    w = Wrapper(inner, allow_oracle=True)
    assert w.options() == {"allow_oracle": True} and Wrapper(inner).options() == {} and w.name == "wrapper(fixed)"
    w.reset()
    assert inner.resets == 1
    assert [d.action for d in w.inner_many([sit("A", moves=("a", "b"))] * 2)] == [0, 0]

    class Short(Fixed):
        def decide_many(self, situations):
            return []

    with pytest.raises(RuntimeError, match=r"^wrapper\(fixed\): the inner policy answered 0 decisions for 1 "):
        Wrapper(Short([1.0])).inner_many([sit("A", moves=("a",))])
    assert normalised(np.array([0.0, 0.0])).tolist() == [0.5, 0.5]
    assert normalised(np.array([-1.0, 1.0, 3.0])).tolist() == [0.0, 0.25, 0.75]
    assert situation_key(sit("K")) == "K"
    assert situation_key(sit("", moves=("a", "b"))) == "obs \n#a|b"


def test_wrap_routes_options_and_refuses_unknown_ones():
    # catches: the routing of each keyword, the duplicate check, the error texts
    p = wrap(Fixed([1.0]), "rethink,lookahead", patience=4, allow_oracle=True)
    assert p.name == "rethink(lookahead(fixed))" and p.patience == 4
    assert p.policy.allow_oracle is True and p.allow_oracle is True  # shared: Rethink's fork planner steps answers too
    with pytest.raises(ValueError, match=r"^each wrapper may appear once, got \['search', 'search'\]$"):
        wrap(Fixed([1.0]), ["search", "search"])
    with pytest.raises(ValueError, match=r"^wrapper option 'budget' was given but it belongs to search, which is "
                                         r"not in \['rethink'\]$"):
        wrap(Fixed([1.0]), ["rethink"], budget=3)
    with pytest.raises(ValueError, match=r"^wrapper option 'nope' was given but no wrapper has that option$"):
        wrap(Fixed([1.0]), ["rethink"], nope=3)


def _search_info(decision):
    return {k: v for k, v in decision.info.items() if k != "elapsed_s"}


class Uniform(BasePolicy):
    name = "uniform"

    def decide(self, situation):
        return Decision.from_probabilities([1.0] * len(situation.candidates))


def test_a_search_counts_what_it_pruned_exactly():
    # catches: every statistic's counter (generated, duplicates, losing, dead ends, expansions), the trace's
    # format, the goal node's plan, the stop reason; the same search on a graph with no win: the best partial
    # plan by score and the order phs_h expands in
    from toy_tasks import PRIORITY_DEAD_ENDS, PRIORITY_SCORES, PRIORITY_TABLE, TRAP_GRAPH, TablePolicy, make

    env = make(TRAP_GRAPH)
    d = Search(Uniform(), trace=True).decide(env.situation())
    assert _search_info(d) == {
        "stop_reason": "won", "solved": True, "partial": False, "priority": "phs_h", "expansions": 2,
        "policy_calls": 1, "reused": 0, "generated": 7, "duplicates": 3, "losing_pruned": 1, "dead_ends": 0,
        "noop_reasks": 0, "doublings": 0, "refills": 0, "diverged": False, "trace": ["", "go hall"],
        "plan": ["go hall", "open door"], "plan_length": 2, "plan_score": 0.0, "stall_pick": False}
    assert d.action == 2 and d.probabilities.tolist() == [0.0, 0.0, 1.0, 0.0]
    env = make(PRIORITY_DEAD_ENDS, scores=PRIORITY_SCORES)
    d = Search(TablePolicy(PRIORITY_TABLE), trace=True, epsilon=0.0, h_scale=10).decide(env.situation())
    assert _search_info(d) == {
        "stop_reason": "exhausted", "solved": False, "partial": True, "priority": "phs_h", "expansions": 4,
        "policy_calls": 1, "reused": 0, "generated": 6, "duplicates": 0, "losing_pruned": 0, "dead_ends": 3,
        "noop_reasks": 0, "doublings": 0, "refills": 0, "diverged": False, "trace": ["", "y", "z", "x"], "plan": ["z"],
        "plan_length": 1, "plan_score": 0.95, "stall_pick": False,
        "note": "search stopped (exhausted) before a win; playing the first move of the best partial plan"}


class Planned(BasePolicy):
    name = "planned"

    def decide(self, situation):
        return Decision(np.full(len(situation.candidates), 1.0 / len(situation.candidates)), 0,
                        Usage(calls=1), {"k": 1}, planning_s=0.5)


def test_lookahead_annotates_each_move_exactly():
    # catches: the outcome, new moves, reward and revisits of each candidate, the dropped losing move, the
    # "shown" count, planning_s forwarded, the mapped-back probabilities
    from s1gym.wrappers import Lookahead
    from toy_tasks import TRAP_GRAPH, make

    env = make(TRAP_GRAPH, scores={"hall": 0.5})
    seen = []

    class Spy(Planned):
        def decide(self, situation):
            seen.append(situation)
            return super().decide(situation)

    d = Lookahead(Spy()).decide(env.situation())
    (s,) = seen
    assert [(c.text, c.outcome, c.new_actions, c.reward, c.revisits) for c in s.candidates] == [
        ("look", "You look.\n\nYou are at start.", (), 0.0, 1),
        ("go hall", "You go hall.\n\nYou are at hall.", ("go back", "open door", "eat poison"), 0.5, 0),
        ("go yard", "You go yard.\n\nYou are at yard.", ("go back",), 0.0, 0)]
    assert d.info == {"k": 1, "lookahead": {"dropped_losing": ["jump in the pit"], "shown": 3}}
    assert d.planning_s == 0.5 and d.action == 1 and d.probabilities.tolist() == pytest.approx([0, 1 / 3, 1 / 3, 1 / 3])
    bare = dataclasses_replace(env.situation(), state_key="")
    Lookahead(Spy()).decide(bare)
    assert [c.revisits for c in seen[-1].candidates] == [None, None, None]


def dataclasses_replace(obj, **kw):
    import dataclasses

    return dataclasses.replace(obj, **kw)


def test_lookahead_refuses_an_engine_that_steps_fewer_moves_than_asked():
    # catches: strict=False/None in annotate's zip (an engine's fork_steps must answer every move)
    from s1gym.wrappers import Lookahead
    from toy_tasks import TRAP_GRAPH, GraphTask

    class Short(GraphTask):
        def fork_steps(self, moves, keep=False):
            return iter(list(super().fork_steps(moves, keep))[:-1])

    env = Short(TRAP_GRAPH)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="zip"):
        Lookahead(Planned()).decide(env.situation())


def test_a_search_stops_on_its_budget_without_doubling():
    # catches: _grow doubling a budget already at its cap, and going on after a gain was found (both loop)
    from toy_tasks import make, wide_tree

    d = Search(Uniform(), budget=2).decide(make(wide_tree(2)).situation())
    assert (d.info["stop_reason"], d.info["doublings"], d.info["policy_calls"], d.info["expansions"]) == (
        "budget", 0, 2, 3)
    env = make(wide_tree(2), scores=lambda s: 0.5 if s == "start.1" else 0.0)
    d = Search(Uniform(), budget=2, gain_patience=None).decide(env.situation())
    assert (d.info["stop_reason"], d.info["doublings"], d.info["plan"], d.info["plan_score"]) == (
        "budget", 0, ["m1"], 0.5)


def test_search_config_names_a_missing_attribute():
    from s1gym.wrappers.search import SearchConfig

    with pytest.raises(AttributeError, match=r"^'SearchConfig' object has no attribute 'nope'$"):
        _ = SearchConfig().nope


def test_a_wrapper_resets_a_policy_without_reset():
    # catches: getattr(policy, "reset") without its default
    class Bare:
        name = "bare"

        def decide(self, situation):
            return Decision.from_probabilities([1.0])

    Wrapper(Bare()).reset()
    with pytest.raises(ValueError, match=r"^wrapper option 'width' was given but it belongs to search, "
                                         r"lookahead, which is not in \['rethink'\]$"):
        wrap(Fixed([1.0]), ["rethink"], width=4)


class Script(BasePolicy):
    """Chooses the listed moves in turn, with the probabilities given."""

    name = "script"

    def __init__(self, picks, p):
        self.picks, self.p = list(picks), list(p)

    def decide(self, situation):
        return Decision(np.array(self.p), situation.texts.index(self.picks.pop(0)))


def test_rethink_reads_the_tasks_patience_and_merges_its_blocks():
    # catches: the task's patience not looked up (or looked up for None), in decide and in the prompt; the
    # tried moves' default where the score changed since; a stall's block replacing the repeat block
    r = Rethink(Fixed([1.0, 0.0]))
    assert r.stall_patience("2048") == 6 and r.stall_patience("nope") is None
    prompts, situations = [], []

    class Planner:
        def plan(self, situation, prompt):
            prompts.append(prompt)
            situations.append(situation)
            return "a b c"

    r = Rethink(Fixed([1.0, 0.0]), planner=Planner(), plan_words=3, repeat_limit=100)
    for i in range(6):
        r.decide(sit("A" if i % 2 == 0 else "B", moves=("a", "b"), task="2048"))
    d = r.decide(sit("A", moves=("a", "b"), task="2048"))
    assert d.info["rethink"]["plan"] == "a b c" and "plan_truncated" not in d.info["rethink"]
    assert "no progress for 6 moves" in prompts[0] and situations[0].state_key == "A"
    # a stall in a state whose moves were tried before the score changed: nothing tried there since
    r = Rethink(Fixed([1.0, 0.0]), patience=1, repeat_limit=100)
    r.decide(sit("A", moves=("a", "b")))
    r.decide(sit("B", score=1.0, moves=("a", "b")))
    d = r.decide(sit("A", score=1.0, moves=("a", "b")))
    assert d.info["rethink"]["blocked_tried"] == [] and d.action == 0
    # a repeat block and a stall's block at once
    r = Rethink(Script(["b", "a", "a", "a"], [0.6, 0.3, 0.1]), patience=3, repeat_limit=2)
    for key in ("A", "B", "C"):
        r.decide(sit(key))
    d = r.decide(sit("A"))
    assert d.info["rethink"]["blocked"] == ["a", "b"] and d.action == 2


def test_an_unblocked_choice_is_kept_even_when_not_the_likeliest():
    r = Rethink(Fixed([1.0]))
    p, action, applied = r._apply_blocks(sit("A"), Decision(np.array([0.2, 0.5, 0.3]), 0), {"c"})
    assert action == 0 and applied == ["c"]


class GivesUp(BasePolicy):
    name = "quitter"

    def decide(self, situation):
        return Decision.from_probabilities([1.0] * len(situation.candidates), give_up=True)


def test_search_ends_where_the_inner_policy_gives_up_and_plays_safe_where_nothing_is_new():
    # catches: the give-up stop's name and decision; the safe-move fallback (its list, its test, its default)
    from toy_tasks import TRAP_GRAPH, make

    d = Search(GivesUp()).decide(make(TRAP_GRAPH).situation())
    assert (d.info["stop_reason"], d.give_up, d.info["plan"], d.info["note"]) == (
        "inner_give_up", True, [], "the inner policy gave up at the root")
    assert d.probabilities.tolist() == [0.25] * 4
    stuck = {"start": [("jump", "lose"), ("look", "start"), ("step", "dead")], "dead": []}
    d = Search(Uniform()).decide(make(stuck).situation())
    assert (d.info["stop_reason"], d.action, d.info["note"]) == (
        "exhausted", 1, "no move leads anywhere new; chose the first safe move")
    assert d.probabilities.tolist() == [0.0, 0.5, 0.5]
    doomed = {"start": [("jump", "lose"), ("dive", "lose")]}
    d = Search(Uniform()).decide(make(doomed).situation())
    assert d.probabilities.tolist() == [0.5, 0.5] and d.action == 0


def test_the_best_partial_plan_prefers_the_lower_estimate_then_the_shorter_plan():
    # catches: the signs of h and g in the best-partial-plan order; a time limit read as monotonic() + t0
    from toy_tasks import make

    graph = {"start": [("a", "A"), ("b", "B")], "B": [("c", "C")], "A": [], "C": []}
    graph = {**graph, "A": [("rest a", "A2")], "C": [("rest c", "C2")]}
    env = make(graph, scores={"A": 0.5, "C": 0.5, "A2": 0.5, "C2": 0.5})
    d = Search(Uniform(), max_seconds=60).decide(env.situation())
    assert d.info["stop_reason"] == "exhausted" and d.info["plan"] == ["a"]
    graph = {"start": [("a", "A"), ("b", "B")], "A": [("rest a", "A2")], "B": [("rest b", "B2")]}
    env = make(graph, scores={"A": 0.5, "B": 0.5, "A2": 0.5, "B2": 0.5})
    d = Search(Uniform(), heuristic=lambda s: 1.0 if "at B" in s.observation else 2.0).decide(env.situation())
    assert d.info["plan"] == ["b"]
