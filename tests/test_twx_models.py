"""Local's TextWorldExpress models on the real JVM: what the games tell a player, how the features read it,
and that the shipped models play (train-fold games; the held-out numbers are in docs/benchmarks.md)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from s1gym.policies import Local, Uniform
from s1gym.policies.twx_model import TWXModel
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
    env = make("CoinCollector")
    try:
        env.reset(seed=5)
        for move in ("open door to west", "move west"):
            env.step_move(move)
        feedback = env.situation().history[-1][1]
        assert feedback.startswith("You are in the pantry.\n")
        assert "to the East you see the kitchen" in feedback
        view = read_view(env.situation())
        assert view.visited == ["kitchen", "pantry"] and view.edges[("kitchen", "west")] == "pantry"
    finally:
        env.close()


@pytest.mark.parametrize(("task", "move", "kept"), [
    ("MapReader", "read map", "The map reads"),
    ("Arithmetic", "read math problem", "math problem:"),
])
def test_what_a_player_reads_stays_in_the_observation(task, move, kept):
    env = make(task)
    try:
        env.reset(seed=5)
        for m in env.gold_path():
            env.step_move(m)
            if m == move:
                break
        env.step_move("look around")
        assert "You remember:" in env.state_text and kept in env.state_text
    finally:
        env.close()


def test_peckingorder_remembers_only_the_current_instruction():
    env = make("PeckingOrder")
    try:
        env.reset(seed=5)
        reads = 0
        for m in env.gold_path():
            env.step_move(m)
            reads += m == "read instructions book"
            if reads == 2:
                break
        assert env.state_text.count("You remember:") == 1
        assert read_view(env.situation()).memory[-1].startswith("The current task is to take the grapefruit")
    finally:
        env.close()


# ------------------------------------------------------------------ features


def test_cookingworld_features_read_the_recipe_and_the_inventory():
    env = make("CookingWorld", size="medium")
    try:
        env.reset(seed=3)  # recipe: water, orange bell pepper (dice, roast)
        for m in env.gold_path()[:16]:  # ... take the pepper, dice it
            env.step_move(m)
        view = read_view(env.situation())
        assert view.recipe.directions == {"water": [], "orange bell pepper": ["dice", "roast"]}
        assert "diced orange bell pepper" in view.inventory and view.pending() == [("orange bell pepper", "roast")]
        assert "cook:roast|dev:oven" in tokens_of(env, "cook orange bell pepper in oven")
        assert "cook:roast|dev:stove" in tokens_of(env, "cook orange bell pepper in stove")
    finally:
        env.close()


def test_the_cut_the_recipe_asks_for_is_told_apart():
    env = make("CookingWorld", size="medium")
    try:
        env.reset(seed=3)
        for m in env.gold_path()[:15]:  # the pepper and the knife in hand, nothing cut yet
            env.step_move(m)
        assert "cut+req" in tokens_of(env, "dice orange bell pepper")
        assert "cut+wrong" in tokens_of(env, "slice orange bell pepper")
    finally:
        env.close()


def test_mapreader_moves_are_told_nearer_or_farther_from_the_map():
    env = make("MapReader")
    try:
        env.reset(seed=5)
        for m in ("read map", "move north"):
            env.step_move(m)
        gold_next = env.gold_path()[env.gold_path().index("move north") + 1]
        assert "v:move+closer" in tokens_of(env, gold_next)
    finally:
        env.close()


def test_arithmetic_and_sorting_read_quantities():
    assert quantity("18ml of marble") < quantity("16l of oak") < quantity("19l of wood")
    assert quantity("23mm of acrylic") < quantity("38cm of nylon") < quantity("34m of nylon")
    env = make("Arithmetic")
    try:
        env.reset(seed=5)
        gold = env.gold_path()
        for m in gold[:3]:  # look, take and read the math problem
            env.step_move(m)
        answer = gold[3]
        assert "v:take+answer" in tokens_of(env, answer)
        assert all("v:take+answer" not in tokens_of(env, c) for c in env.candidates if c.startswith("take ")
                   and c != answer)
    finally:
        env.close()


def test_simon_says_marks_the_order():
    env = make("SimonSays")
    try:
        env.reset(seed=5)
        first = env.gold_path()[0]
        assert any(t.endswith("+ordered") for t in tokens_of(env, first))
        assert not any(t.endswith("+ordered") for c in env.candidates if c != first for t in tokens_of(env, c))
    finally:
        env.close()


def test_lookahead_candidates_carry_the_reward():
    env = make("TWC")
    try:
        env.reset(seed=3)
        situation = env.situation()
        annotated, _, _ = Lookahead(Uniform()).annotate(situation)
        rewards = {c.text: c.reward for c in annotated.candidates}
        assert rewards["take beret"] > 0 and rewards["look around"] == 0
        assert "out:gain" in candidate_tokens(annotated)[annotated.texts.index("take beret")]
    finally:
        env.close()


# ------------------------------------------------------------------ the shipped models


@pytest.mark.parametrize("task", TWX_TASKS)
def test_every_twx_game_ships_a_model_with_a_progress_estimate(task):
    from s1gym.policies.local import task_model

    model = task_model(task)
    assert isinstance(model, TWXModel) and model.weights and model.progress
    assert model.provenance["task"] == task


@pytest.mark.parametrize("task", TWX_TASKS)
def test_lookahead_local_wins_train_games_of_every_twx_game(task):
    env = make(task, **({"size": "medium"} if task == "CookingWorld" else {}))
    try:
        policy = Lookahead(Local(preload=False))
        won = [play(env, policy, seed)["won"] for seed in range(3)]
        assert sum(won) >= 2, won
    finally:
        env.close()


def test_search_with_the_model_spends_fewer_calls_than_flat_odds():
    env = make("CookingWorld", size="large")
    try:
        local = [play(env, Search(Local(preload=False), episode_budget=1000), seed) for seed in (1, 2)]
        uniform = [play(env, Search(Uniform(), episode_budget=1000), seed) for seed in (1, 2)]
        assert all(r["won"] for r in local)
        assert sum(r["calls"] for r in local) < sum(r["calls"] for r in uniform)
    finally:
        env.close()


def test_a_cold_local_decision_on_cookingworld_embeds_nothing():
    env = make("CookingWorld", size="large")
    try:
        env.reset(seed=4)
        local = Local(preload=False)
        decision = local.decide(env.situation())
        assert np.isclose(decision.probabilities.sum(), 1.0)
        assert local.weights_for("CookingWorld") == dict.fromkeys(local.weights_for("CookingWorld"), 0.0)
    finally:
        env.close()


def test_the_expert_has_no_move_once_an_ingredient_is_eaten():
    """Expert agreement asks the expert after every decision (it raised KeyError and ended the episode); a
    game nothing can win any more (the recipe's salt eaten) has no expert move."""
    env = make("CookingWorld", size="small")
    try:
        env.reset(seed=5)
        while "eat salt" not in env.candidates:
            env.step_move(env.expert_action())
        env.step_move("eat salt")
        assert env.expert_move() is None
    finally:
        env.close()
