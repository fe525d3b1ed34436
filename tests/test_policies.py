"""Uniform, Random, Rule, make_policy and the shared helpers of s1gym.policies."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from s1gym.core import Candidate, S1Env, Situation
from s1gym.policies import (
    POLICIES,
    PolicyConfigError,
    PolicyResponseError,
    Random,
    Rule,
    Uniform,
    make_policy,
)
from s1gym.policies.common import Secret, check_probabilities, is_loopback, unique_labels


def situation(texts, observation="You see a door.", history=()):
    return Situation(task="toy", observation=observation, candidates=tuple(Candidate(t) for t in texts), history=history)


class Corridor(S1Env):
    """A tiny task: walk east three times. Its rule is 'east' unless told otherwise."""

    task_name = "corridor"
    default_max_candidates = 3

    def __init__(self, rule_move: str | None = "east", **kwargs):
        super().__init__(**kwargs)
        self.rule_move = rule_move
        self.pos = 0

    def _new_game(self, seed, options):
        self.pos = 0
        return "Walk east."

    def _legal_moves(self):
        return ["west", "wait", "east"]

    def _play(self, move):
        self.pos += {"east": 1, "west": -1}.get(move, 0)
        return f"You {move}."

    def _describe(self):
        return f"You are at {self.pos}."

    def _progress(self):
        return min(self.pos, 3) / 3, self.pos >= 3, False

    def _fork_into(self, clone):
        pass

    def expert_action(self):
        if self.rule_move is None:
            return super().expert_action()
        return self.rule_move


def test_make_policy_names_and_errors():
    assert set(POLICIES) == {"jev", "chat", "local", "uniform", "random", "rule"}
    assert isinstance(make_policy("Uniform"), Uniform)
    assert make_policy("random", seed=3).seed == 3
    with pytest.raises(ValueError, match="jev, chat, local, uniform, random, rule"):
        make_policy("gpt")


def test_uniform_is_flat_and_picks_first():
    d = Uniform().decide(situation(["a", "b", "c", "d"]))
    assert np.allclose(d.probabilities, 0.25) and d.action == 0
    assert Uniform().decide_many([situation(["a"]), situation(["a", "b"])])[1].probabilities.size == 2
    with pytest.raises(ValueError, match="no candidates"):
        Uniform().decide(situation([]))


def test_random_is_reproducible_and_order_independent():
    states = [situation([f"m{i}" for i in range(7)], observation=f"room {k}") for k in range(30)]
    a = [Random(seed=5).decide(s).action for s in states]
    b = [d.action for d in Random(seed=5).decide_many(list(reversed(states)))][::-1]
    c = [Random(seed=6).decide(s).action for s in states]
    assert a == b  # same seed, any order -> same picks
    assert a != c  # another seed -> other picks
    assert len(set(a)) > 3  # actually random
    d = Random(seed=5).decide(states[0])
    assert np.allclose(d.probabilities, 1 / 7)
    with pytest.raises(ValueError, match="integer seed"):
        Random(seed="x")


def test_random_does_not_loop_on_a_revisited_state():
    texts = [f"m{i}" for i in range(5)]
    picks = {
        Random(seed=1).decide(situation(texts, history=(("x", "y"),) * k)).action for k in range(20)
    }
    assert len(picks) > 1  # the step count is part of the key


def test_rule_follows_the_env_and_never_steps_it():
    env = Corridor()
    env.reset(seed=0)
    d = Rule().decide(env.situation())
    assert d.action == 2 and d.probabilities.tolist() == [0, 0, 1]
    assert env.steps == 0
    env.step(d.action)
    assert Rule().decide(env.situation()).action == 2


def test_rule_errors_are_clear():
    env = Corridor(rule_move=None)
    env.reset(seed=0)
    with pytest.raises(PolicyConfigError, match="corridor.*no rule baseline"):
        Rule().decide(env.situation())
    env = Corridor(rule_move="fly")
    env.reset(seed=0)
    with pytest.raises(Exception, match="'fly'.*not among"):
        Rule().decide(env.situation())
    with pytest.raises(ValueError, match="no env behind it"):
        Rule().decide(situation(["a"]))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(["a", "a (2)", "", " ", "b", "é☃"]), min_size=1, max_size=12))
def test_unique_labels_are_distinct_and_positional(texts):
    labels = unique_labels(texts)
    assert len(labels) == len(texts) == len(set(labels))
    for text, label in zip(texts, labels):
        assert label == text or label.startswith(text if text.strip() else "(empty move)")


def test_unique_labels_examples():
    assert unique_labels(["go", "go", "go (2)", "go"]) == ["go", "go (3)", "go (2)", "go (4)"]


def test_check_probabilities():
    p, renormalised = check_probabilities(["a", "b"], {"a": 0.7, "b": 0.3}, "X")
    assert p.tolist() == [0.7, 0.3] and not renormalised
    p, renormalised = check_probabilities(["a", "b"], {"a": 0.701, "b": 0.3}, "X")
    assert renormalised and abs(p.sum() - 1) < 1e-12
    for bad, match in [
        ({"a": 1.0}, "missing \\['b'\\]"),
        ({"a": 0.5, "b": 0.5, "c": 0.0}, "unexpected \\['c'\\]"),
        ({"a": float("nan"), "b": 0.5}, "finite"),
        ({"a": -0.1, "b": 1.1}, ">= 0"),
        ({"a": 0.2, "b": 0.3}, "sum to 0.5"),
        ({"a": "0.5", "b": 0.5}, "finite number"),
    ]:
        with pytest.raises(PolicyResponseError, match=match):
            check_probabilities(["a", "b"], bad, "X")


def test_loopback_and_secret():
    assert is_loopback("http://127.0.0.1:8765") and is_loopback("http://localhost") and is_loopback("http://[::1]:1")
    assert not is_loopback("https://api.typesafe.ai")
    secret = Secret("sk-very-secret")
    assert "very" not in repr(secret) and "very" not in str(secret) and secret.get() == "sk-very-secret"
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(secret)
