"""Local's TextWorldExpress models on the real JVM: what the games tell a player, how the features read it,
and that the shipped models play (train-fold games; the held-out numbers are in docs/benchmarks.md)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from s1gym.policies import Local, Uniform
from s1gym.tasks.twx.model import TWXModel
from s1gym.wrappers import Lookahead, Search

import s1gym  # noqa: F401  (registers the envs)
from s1gym.tasks.twx.tokens import candidate_tokens
from s1gym.tasks.twx.view import quantity, read_view

TWX_TASKS = ["CookingWorld", "CoinCollector", "MapReader", "TWC", "Arithmetic", "Sorting", "SimonSays", "PeckingOrder"]


def make(task: str, **options):
    return gym.make(f"s1/{task}-v0", **options).unwrapped


def tokens_of(env, move: str) -> list[str]:
    situation = env.situation()
    return candidate_tokens(situation)[situation.texts.index(move)]


def play(env, policy, seed: int) -> dict:
    env.reset(seed=seed)
    policy.reset()
    calls = 0
    done = False
    while not done:
        situation = env.situation()
        decision = policy.decide(situation)
        calls += decision.usage.calls
        if decision.give_up:
            break
        *_, terminated, truncated, info = env.step_move(situation.texts[decision.action])
        done = terminated or truncated
    return {"won": bool(env.won), "calls": calls, "steps": env.steps}


# ------------------------------------------------------------------ what the games tell a player


def test_a_move_tells_where_it_led_and_the_rooms_exits():
    with make("CoinCollector") as env:
        env.reset(seed=5)
        for move in ("open door to west", "move west"):
            env.step_move(move)
        feedback = env.situation().history[-1][1]
        assert feedback.startswith("You are in the pantry.\n")
        assert "to the East you see the kitchen" in feedback
        view = read_view(env.situation())
        assert view.visited == ["kitchen", "pantry"] and view.edges[("kitchen", "west")] == "pantry"


@pytest.mark.parametrize(("task", "move", "kept"), [
    ("MapReader", "read map", "The map reads"),
    ("Arithmetic", "read math problem", "math problem:"),
])
def test_what_a_player_reads_stays_in_the_observation(task, move, kept):
    with make(task) as env:
        env.reset(seed=5)
        for m in env.gold_path():
            env.step_move(m)
            if m == move:
                break
        env.step_move("look around")
        assert "You remember:" in env.state_text and kept in env.state_text


def test_peckingorder_remembers_only_the_current_instruction():
    with make("PeckingOrder") as env:
        env.reset(seed=5)
        reads = 0
        for m in env.gold_path():
            env.step_move(m)
            reads += m == "read instructions book"
            if reads == 2:
                break
        assert env.state_text.count("You remember:") == 1
        assert read_view(env.situation()).memory[-1].startswith("The current task is to take the grapefruit")


# ------------------------------------------------------------------ features


def test_cookingworld_features_read_the_recipe_and_the_inventory():
    with make("CookingWorld", size="medium") as env:
        env.reset(seed=3)  # recipe: water, orange bell pepper (dice, roast)
        for m in env.gold_path()[:16]:  # ... take the pepper, dice it
            env.step_move(m)
        view = read_view(env.situation())
        assert view.recipe.directions == {"water": [], "orange bell pepper": ["dice", "roast"]}
        assert "diced orange bell pepper" in view.inventory and view.pending() == [("orange bell pepper", "roast")]
        assert "cook:roast|dev:oven" in tokens_of(env, "cook orange bell pepper in oven")
        assert "cook:roast|dev:stove" in tokens_of(env, "cook orange bell pepper in stove")


def test_the_cut_the_recipe_asks_for_is_told_apart():
    with make("CookingWorld", size="medium") as env:
        env.reset(seed=3)
        for m in env.gold_path()[:15]:  # the pepper and the knife in hand, nothing cut yet
            env.step_move(m)
        assert "cut+req" in tokens_of(env, "dice orange bell pepper")
        assert "cut+wrong" in tokens_of(env, "slice orange bell pepper")


def test_mapreader_moves_are_told_nearer_or_farther_from_the_map():
    with make("MapReader") as env:
        env.reset(seed=5)
        for m in ("read map", "move north"):
            env.step_move(m)
        gold_next = env.gold_path()[env.gold_path().index("move north") + 1]
        assert "v:move+closer" in tokens_of(env, gold_next)


def test_arithmetic_and_sorting_read_quantities():
    assert quantity("18ml of marble") < quantity("16l of oak") < quantity("19l of wood")
    assert quantity("23mm of acrylic") < quantity("38cm of nylon") < quantity("34m of nylon")
    with make("Arithmetic") as env:
        env.reset(seed=5)
        gold = env.gold_path()
        for m in gold[:3]:  # look, take and read the math problem
            env.step_move(m)
        answer = gold[3]
        assert "v:take+answer" in tokens_of(env, answer)
        assert all("v:take+answer" not in tokens_of(env, c) for c in env.candidates if c.startswith("take ")
                   and c != answer)


def test_simon_says_marks_the_order():
    with make("SimonSays") as env:
        env.reset(seed=5)
        first = env.gold_path()[0]
        assert any(t.endswith("+ordered") for t in tokens_of(env, first))
        assert not any(t.endswith("+ordered") for c in env.candidates if c != first for t in tokens_of(env, c))


def test_lookahead_candidates_carry_the_reward():
    with make("TWC") as env:
        env.reset(seed=3)
        situation = env.situation()
        annotated, _, _ = Lookahead(Uniform()).annotate(situation)
        rewards = {c.text: c.reward for c in annotated.candidates}
        assert rewards["take beret"] > 0 and rewards["look around"] == 0
        assert "out:gain" in candidate_tokens(annotated)[annotated.texts.index("take beret")]


# ------------------------------------------------------------------ the shipped models


@pytest.mark.parametrize("task", TWX_TASKS)
def test_every_twx_game_ships_a_model_with_a_progress_estimate(task):
    from s1gym.policies.local import task_model

    model = task_model(task)
    assert isinstance(model, TWXModel) and model.weights and model.progress
    assert model.provenance["task"] == task


def test_the_family_declares_each_games_model_estimate_patience_and_weights():
    """What the env classes carried before the family declaration (stall patience, the model file, the
    progress estimate, CookingWorld's dense weights) is answered by the registry from the games' rows."""
    from s1gym import registration
    from s1gym.tasks.twx.cooking_weights import COOKING_WEIGHTS
    from s1gym.tasks.twx.env import TWXEnv

    for task in TWX_TASKS:
        assert registration.stall_patience(task) == (None if task == "SimonSays" else 6)
        assert registration.model_file(task).name == f"local_{task.lower()}.json"
        assert registration.progress_estimate(task) is not None
        assert registration.local_weights(task) is (COOKING_WEIGHTS if task == "CookingWorld" else None)
        assert issubclass(registration.env_class(task), TWXEnv)
    with make("CookingWorld", size="small") as env:
        env.reset(seed=3)
        # CookingWorld's shipped estimate is read with intercept_only (games.py says why): a constant
        estimate = registration.progress_estimate("CookingWorld")
        assert estimate(env.situation()) == registration.local_model("CookingWorld").progress["*"]


def test_the_fitting_collects_oracle_labelled_states_and_fits_a_model_the_registry_loads(tmp_path, monkeypatch):
    """``python -m s1gym.tasks.twx.fit collect`` then ``fit``, on one small train-fold game."""
    from s1gym import registration
    from s1gym.tasks.twx import fit

    monkeypatch.setattr(fit, "STATES", tmp_path / "states")
    fit.main(["collect", "--task", "CookingWorld", "--settings", "small", "--games", "1", "--workers", "1"])
    assert sorted(p.name for p in (tmp_path / "states" / "CookingWorld").iterdir()) == [
        "small-0000-dart.jsonl.gz", "small-0000-oracle.jsonl.gz"]
    out = tmp_path / "local_cookingworld.json"
    fit.main(["fit", "--task", "CookingWorld", "--out", str(out)])
    model = registration.load_model(out)
    assert isinstance(model, TWXModel) and model.weights and model.progress
    assert model.provenance["games"] == 1 and model.provenance["kinds"] == ["dart", "oracle"]
    assert model.provenance["script"].startswith("python -m s1gym.tasks.twx.fit fit --task CookingWorld")


@pytest.mark.parametrize("task", TWX_TASKS)
def test_lookahead_local_wins_train_games_of_every_twx_game(task):
    with make(task, **({"size": "medium"} if task == "CookingWorld" else {})) as env:
        policy = Lookahead(Local(preload=False))
        won = [play(env, policy, seed)["won"] for seed in range(3)]
        assert sum(won) >= 2, won


def test_search_with_the_model_spends_fewer_calls_than_flat_odds():
    with make("CookingWorld", size="large") as env:
        local = [play(env, Search(Local(preload=False), episode_budget=1000), seed) for seed in (1, 2)]
        uniform = [play(env, Search(Uniform(), episode_budget=1000), seed) for seed in (1, 2)]
        assert all(r["won"] for r in local)
        assert sum(r["calls"] for r in local) < sum(r["calls"] for r in uniform)


def test_a_cold_local_decision_on_cookingworld_embeds_nothing():
    with make("CookingWorld", size="large") as env:
        env.reset(seed=4)
        local = Local(preload=False)
        decision = local.decide(env.situation())
        assert np.isclose(decision.probabilities.sum(), 1.0)
        assert local.weights_for("CookingWorld") == dict.fromkeys(local.weights_for("CookingWorld"), 0.0)


def test_the_expert_has_no_move_once_an_ingredient_is_eaten():
    """Expert agreement asks the expert after every decision (it raised KeyError and ended the episode); a
    game nothing can win any more (the recipe's salt eaten) has no expert move."""
    with make("CookingWorld", size="small") as env:
        env.reset(seed=5)
        while "eat salt" not in env.candidates:
            env.step_move(env.expert_action())
        env.step_move("eat salt")
        assert env.expert_move() is None
