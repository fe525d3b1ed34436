"""The shipped fitted models (s1gym/data/local_*.json) decide as they did when they were fitted: Local's
probabilities, plain and with Lookahead, and the progress estimate, on real states of the real engines,
against the values recorded before the models shared one base (tests/data/shipped_model_decisions.json)."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import s1gym  # noqa: F401  (registers the envs)
from s1gym.policies import Local, Uniform
from s1gym.policies.local import task_model
from s1gym.wrappers import Lookahead

RECORDED = json.loads((Path(__file__).parent / "data" / "shipped_model_decisions.json").read_text())["states"]

#: task -> (options, seed, moves played before the state)
STATES = {
    "CookingWorld": ({"size": "medium"}, 207, ["take cookbook", "read cookbook"]),
    "CoinCollector": ({}, 4, []),
    "TWC": ({}, 1, []),  # its model weighs the embedder's commonsense names too
    "ALFWorld": ({"hygiene": True}, 1, ["go to toilet 1", "take soapbar 1 from toilet 1"]),
}


@pytest.mark.parametrize("task", list(STATES))
def test_shipped_model_gives_the_recorded_probabilities(task):
    if task == "ALFWorld":
        pytest.importorskip("alfworld", reason="the optional extra alfworld==0.4.2 is not installed")
    options, seed, moves = STATES[task]
    env = gym.make(f"s1/{task}-v0", **options)
    try:
        env.reset(seed=seed)
        for move in moves:
            env.step(env.index_of(move))
        s = env.unwrapped.situation()
        ahead, _, _ = Lookahead(Uniform()).annotate(s)
    finally:
        env.close()
    want = RECORDED[task]
    assert list(s.texts[:3]) == want["first_moves"]
    local = Local(preload=False)
    np.testing.assert_allclose(local.decide(s).probabilities, want["plain"], rtol=1e-12, atol=0)
    np.testing.assert_allclose(local.decide(ahead).probabilities, want["lookahead"], rtol=1e-12, atol=0)
    assert task_model(task).remaining(s) == pytest.approx(want["remaining"], rel=1e-12, abs=0)
