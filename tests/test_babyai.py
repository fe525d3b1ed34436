"""s1/BabyAI-v0 on the real minigrid: the text view, the mask, exact forks, the bot as expert, the family."""

from __future__ import annotations

import gymnasium as gym
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("minigrid", reason="BabyAI needs minigrid: pip install -e '.[babyai]'")

import s1gym  # noqa: F401  (registers s1/BabyAI-v0)
from s1gym.tasks.babyai.env import BabyAIEnv
from s1gym.tasks.babyai.world import ACTIONS, DEFAULT_LEVELS

PROPERTY = settings(max_examples=20, deadline=None)

#: PutNextLocal, test fold, seed 4, after "turn left": the view written out in full
PUT_NEXT_AFTER_LEFT = """You turn left.

Level: PutNextLocal.

Mission: put the green box next to the purple box
In view:
- a purple box 1 step ahead, 2 to the right
Seen before, out of view now:
- a purple ball 1 step behind, 1 to the right
- a blue ball 3 steps behind, 2 to the right
Cells seen so far: 39.
In front of you: nothing (the cell is free).
Walls: ahead 2 steps away, left 3 steps away, right none in view.
You carry nothing.

Moves: turn left, turn right, move forward"""


def test_the_text_view_of_a_known_game_is_exact() -> None:
    env = BabyAIEnv(level="PutNextLocal", fold="test")
    obs, info = env.reset(seed=4)
    assert obs.splitlines()[4:8] == [
        "Mission: put the green box next to the purple box",
        "In view:",
        "- a purple ball 1 step ahead, 1 to the right",
        "- a purple box 2 steps ahead, 1 to the left",
    ]
    assert info["level"] == "PutNextLocal" and info["mission"] == "put the green box next to the purple box"
    obs, reward, terminated, truncated, info = env.step_move("turn left")
    assert obs == PUT_NEXT_AFTER_LEFT
    assert (reward, terminated, truncated) == (0.0, False, False)
    obs, *_ = env.step_move("move forward")
    assert "- a purple ball 2 steps behind, 1 to the right\n" in obs  # remembered, from the agent's new place
    assert "In front of you: a wall.\nWalls: ahead 1 step away, left 3 steps away" in obs
    assert obs.endswith("Moves: turn left, turn right")


def test_the_default_draws_the_seven_levels_by_seed_and_folds_differ() -> None:
    env = gym.make("s1/BabyAI-v0").unwrapped
    levels = [env.reset(seed=s)[1]["level"] for s in range(7)]
    assert tuple(levels) == DEFAULT_LEVELS
    train = env.reset(seed=3)[0]
    test = BabyAIEnv(fold="test").reset(seed=3)[0]
    assert train != test and env.max_steps == 576  # Open: the level's own limit


def test_an_unknown_level_or_fold_is_refused_with_the_choices() -> None:
    with pytest.raises(ValueError, match=r"unknown level 'GoToNowhere'.*GoToLocal.*SynthSeq"):
        BabyAIEnv(level="GoToNowhere")
    with pytest.raises(ValueError, match="fold must be one of"):
        BabyAIEnv(fold="holdout")


def test_resets_print_nothing(capfd: pytest.CaptureFixture[str]) -> None:
    for level in ("PutNextLocal", "SynthSeq", "GoToSeq"):
        env = BabyAIEnv(level=level)
        for seed in range(10):
            env.reset(seed=seed)
    assert capfd.readouterr().out == ""


def _changes(env: BabyAIEnv, move: str) -> bool:
    """Whether stepping ``move`` on a fork changes the game's state (or ends it)."""
    child = env.fork()
    before = child.state_key()
    # step the engine directly: the env would refuse a masked slot
    _obs, _r, terminated, _t, _i = child.world.step(ACTIONS.index(move))
    return terminated or child.state_key() != before


@PROPERTY
@given(level=st.sampled_from(DEFAULT_LEVELS), seed=st.integers(0, 10_000),
       moves=st.lists(st.integers(0, 6), min_size=0, max_size=25))
def test_the_mask_keeps_exactly_the_moves_that_change_something(level: str, seed: int, moves: list[int]) -> None:
    env = BabyAIEnv(level=level)
    _obs, info = env.reset(seed=seed)
    for m in moves:
        if info["game_over"]:
            break
        for slot, legal in zip(ACTIONS, info["action_mask"], strict=True):
            if slot != "done":  # done changes nothing but a finished mission, which the env checks itself
                assert bool(legal) == _changes(env, slot), (slot, env._state_text())
        legal_now = [a for a, ok in zip(ACTIONS, info["action_mask"], strict=True) if ok]
        _obs, _r, _te, _tr, info = env.step_move(legal_now[m % len(legal_now)])


@PROPERTY
@given(level=st.sampled_from(("GoToLocal", "PutNextLocal", "UnlockPickup", "SynthSeq", "BossLevel")),
       seed=st.integers(0, 10_000), prefix=st.lists(st.integers(0, 6), max_size=15),
       rest=st.lists(st.integers(0, 6), min_size=1, max_size=15))
def test_a_fork_goes_on_exactly_like_its_original_and_never_touches_it(
        level: str, seed: int, prefix: list[int], rest: list[int]) -> None:
    env = BabyAIEnv(level=level)
    env.reset(seed=seed)
    for a in prefix:
        env.step(a)
    fork = env.fork()
    assert fork.np_random.bit_generator.state == env.np_random.bit_generator.state
    assert fork.world.np_random.bit_generator.state == env.world.np_random.bit_generator.state
    frozen = (env._observation(), env.state_key(), env.world.step_count)
    fork_results = [fork.step(a) for a in rest]
    assert (env._observation(), env.state_key(), env.world.step_count) == frozen  # the fork left it alone
    for a, (obs, reward, terminated, truncated, info) in zip(rest, fork_results, strict=True):
        o2, r2, te2, tr2, i2 = env.step(a)
        assert (o2, r2, te2, tr2) == (obs, reward, terminated, truncated)
        assert {k: v for k, v in i2.items() if k != "action_mask"} == {
            k: v for k, v in info.items() if k != "action_mask"}
        assert list(i2["action_mask"]) == list(info["action_mask"])


@pytest.mark.parametrize("level", ["GoToLocal", "PickupLoc", "PutNextLocal", "Open", "UnlockPickup", "SynthSeq"])
def test_the_bot_wins_and_its_move_is_always_a_candidate(level: str) -> None:
    env = BabyAIEnv(level=level, fold="dev")
    for seed in range(3):
        _obs, info = env.reset(seed=seed)
        while not (info["game_over"] or info["steps"] >= env.max_steps):
            move = env.expert_action()
            assert move in env.situation().texts
            _obs, _r, _te, _tr, info = env.step_move(move)
        assert info["won"] and info["score"] == 1.0


def test_the_expert_works_on_a_fork_off_its_path() -> None:
    env = BabyAIEnv(level="UnlockPickup")
    _obs, info = env.reset(seed=2)
    for move in ("turn left", "turn left", "turn right"):
        env.step_move(move)
    fork = env.fork()
    assert fork.expert_action() == env.expert_action()
    while not (info["game_over"] or info["steps"] >= fork.max_steps):
        _obs, _r, _te, _tr, info = fork.step_move(fork.expert_action())
    assert info["won"] and env.steps == 3


def test_a_sequence_scores_its_first_clause() -> None:
    env = BabyAIEnv(level="GoToSeq", fold="dev")
    _obs, info = env.reset(seed=0)
    scores = []
    while not info["game_over"]:
        _obs, _r, _te, _tr, info = env.step_move(env.expert_action())
        scores.append(info["score"])
    assert scores[-1] == 1.0 and 0.0 < min(s for s in scores if s > 0) < 1.0
    assert scores == sorted(scores)


def test_the_registry_finds_the_fitted_model_and_the_progress_estimate() -> None:
    from s1gym.policies import Local
    from s1gym.wrappers import Lookahead

    from s1gym import registration
    from s1gym.tasks.babyai.model import BabyAIModel

    model = registration.local_model("BabyAI")
    assert isinstance(model, BabyAIModel) and model.provenance["test"] == "fold test never used"
    env = BabyAIEnv(level="GoToLocal", fold="dev")
    env.reset(seed=1)
    situation = env.situation()
    estimate = registration.progress_estimate("BabyAI")
    assert estimate is not None and estimate(situation) >= 0.0
    assert len(model.scores(situation)) == len(situation.candidates)
    decision = Lookahead(Local()).decide(situation)
    assert situation.candidates[decision.action].text in situation.texts
