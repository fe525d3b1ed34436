"""s1gym.rl: encoders, wrappers that keep the mask reachable, MaskablePPO learning, the RL examples."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import s1gym  # noqa: F401
from s1gym.rl import EncodeText, HashedBagOfWords, MergeReward, TaskFeatures, TrainingSeeds, play_episodes

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def rule(env, _observation) -> int:
    return env.unwrapped.index_of(env.unwrapped.rule_action())


# ------------------------------------------------------------------------------------ encoders
def test_hashed_bag_of_words_is_stable_unit_length_and_order_aware():
    enc = HashedBagOfWords(dim=512)
    a, b, c = enc(["open the fridge", "open the fridge", "fridge the open"])
    assert np.array_equal(a, b) and a.dtype == np.float32 and a.shape == (512,)
    assert np.linalg.norm(a) == pytest.approx(1.0)
    assert not np.array_equal(a, c)  # bigrams see word order
    assert (a > 0).sum() == 5  # three words and two bigrams (no collision at this size for these)
    ids, weights = enc.ids("open the fridge")
    dense = np.zeros(512, dtype=np.float32)
    dense[ids] = weights
    assert np.array_equal(dense, a)
    assert not enc([""]).any()
    # CRC-32 buckets, not Python's per-process hash(): another interpreter gets the same vector
    other = subprocess.run(
        [sys.executable, "-c", "from s1gym.rl import HashedBagOfWords as H; print(H(dim=512).ids('open the fridge')[0].tolist())"],
        capture_output=True, text=True, check=True,
    )
    assert json.loads(other.stdout) == ids.tolist()


def test_encoder_options_are_checked():
    with pytest.raises(ValueError, match="dim must be a positive integer"):
        HashedBagOfWords(dim=0)
    with pytest.raises(ValueError, match="unknown encoder 'bert'"):
        EncodeText(gym.make("s1/Blackjack-v0"), "bert")
    with pytest.raises(ValueError, match="2048 has no structured features|Millionaire has no structured features"):
        TaskFeatures(gym.make("s1/Millionaire-v0"))


# ------------------------------------------------------------------------------------ wrappers
@pytest.mark.parametrize("env_id", ["s1/2048-v0", "s1/Blackjack-v0"])
def test_task_features_pass_the_env_checker_and_keep_the_mask(env_id):
    env = TaskFeatures(gym.make(env_id))
    check_env(env, skip_render_check=True)
    obs, info = env.reset(seed=3)
    assert env.observation_space.contains(obs)
    assert np.array_equal(env.action_masks(), info["action_mask"])


def test_2048_features_are_one_hot_exponents_per_cell():
    env = TaskFeatures(gym.make("s1/2048-v0"))
    obs, _ = env.reset(seed=0, options={"board": [[2, 0, 0, 0], [0, 4, 0, 0], [0, 0, 0, 0], [0, 0, 0, 2048]]})
    cells = obs.reshape(16, 16)
    assert cells.sum(axis=1).tolist() == [1.0] * 16
    assert cells[0, 1] == 1 and cells[5, 2] == 1 and cells[15, 11] == 1 and cells[1, 0] == 1


def test_blackjack_features_read_the_hand():
    env = TaskFeatures(gym.make("s1/Blackjack-v0"))
    obs, _ = env.reset(options={"deck": "AS 6H 6D 9C"})  # player A,6 (soft 17); dealer 6 down, 9 up
    assert np.flatnonzero(obs).tolist() == [17, 32, 32 + 9]
    assert env.unwrapped.hand_values == (17, True, 9)


def test_encode_text_with_candidates_aligns_rows_with_the_slots():
    enc = HashedBagOfWords(dim=256)
    env = EncodeText(gym.make("s1/Millionaire-v0"), enc, candidates=True)
    check_env(env, skip_render_check=True)
    obs, info = env.reset(seed=2)
    assert set(obs) == {"observation", "candidates", "action_mask"}
    assert np.array_equal(obs["candidates"], enc(info["candidates"]))
    assert np.array_equal(obs["observation"], enc([env.unwrapped.situation().observation])[0])
    obs, *_ , info = env.step(env.unwrapped.index_of("50:50"))
    assert obs["action_mask"].tolist() == info["action_mask"].tolist() and obs["action_mask"].sum() == 3


def test_encode_text_pads_changing_candidates_with_zero_rows():
    env = EncodeText(gym.make("s1/CookingWorld-v0", size="small"), HashedBagOfWords(dim=256), candidates=True)
    obs, info = env.reset(seed=1)
    k = len(info["candidates"])
    assert obs["candidates"].shape == (128, 256)
    assert (np.linalg.norm(obs["candidates"][:k], axis=1) > 0).all() and not obs["candidates"][k:].any()
    assert obs["action_mask"].sum() == k
    env.close()


def test_masks_stay_reachable_below_gymnasium_wrappers():
    env = gym.wrappers.RecordEpisodeStatistics(gym.wrappers.TimeLimit(TaskFeatures(gym.make("s1/2048-v0")), 50))
    _, info = env.reset(seed=1)
    assert np.array_equal(env.get_wrapper_attr("action_masks")(), info["action_mask"])
    index = env.get_wrapper_attr("index_of")(env.unwrapped.candidates[0])
    assert info["action_mask"][index] == 1
    fork = env.unwrapped.fork()
    assert fork.state_key() == env.unwrapped.state_key()

    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

    assert is_masking_supported(env) and np.array_equal(get_action_masks(env), info["action_mask"])


def test_make_vec_with_encoders_stacks_arrays():
    envs = gym.make_vec("s1/Blackjack-v0", num_envs=3, vectorization_mode="sync", wrappers=[TaskFeatures])
    obs, infos = envs.reset(seed=0)
    assert obs.shape == (3, 43) and obs.dtype == np.float32
    for _ in range(10):
        obs, _, terminated, truncated, infos = envs.step(np.ones(3, dtype=np.int64))  # stand, then autoreset
        assert infos["payoff"].dtype.kind == "i" and infos["action_mask"].all()
    envs.close()


def test_merge_reward_pays_each_merge_and_losing_and_keeps_the_task_reward():
    env = MergeReward(TaskFeatures(gym.make("s1/2048-v0")))
    env.reset(options={"board": [[2, 2, 4, 4], [8, 0, 0, 8], [0, 0, 0, 0], [0, 0, 0, 0]]})
    _, reward, _, _, info = env.step(2)  # left: 2+2, 4+4, 8+8 -> 4 + 8 + 16 points
    assert info["points"] == 28 and reward == pytest.approx(np.log2(29) / 11)
    assert info["task_reward"] == pytest.approx(np.log2(16) / 11 - np.log2(8) / 11)  # the env's: largest tile doubled
    stuck = [[0, 32, 512, 128], [512, 16, 256, 512], [8, 32, 128, 8], [64, 128, 256, 512]]  # up: no merge, lost
    env.reset(seed=0, options={"board": stuck})
    _, reward, terminated, _, info = env.step(0)
    assert terminated and info["lost"] and info["points"] == 0 and reward == -1.0 and info["task_reward"] == 0.0
    with pytest.raises(ValueError, match="points"):  # a task whose info has no points to shape from
        MergeReward(gym.make("s1/Blackjack-v0")).reset(seed=0)


def test_training_seeds_deal_a_known_sequence_of_games():
    envs = [TrainingSeeds(gym.make("s1/2048-v0"), i, 2) for i in range(2)]
    boards = [[env.reset()[0] for _ in range(3)] for env in envs]
    fresh = gym.make("s1/2048-v0")
    assert boards == [[fresh.reset(seed=s)[0] for s in (0, 2, 4)], [fresh.reset(seed=s)[0] for s in (1, 3, 5)]]
    assert envs[0].reset(seed=99)[0] == fresh.reset(seed=99)[0] and envs[0].get_wrapper_attr("next_seed") == 6


# ------------------------------------------------------------------------------------ learning
def test_maskable_ppo_learns_blackjack_beyond_random_on_a_tiny_budget():
    """2048 PPO steps (about 2 s): the greedy policy beats random play by a wide margin on unseen hands."""
    import torch
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    env = TaskFeatures(gym.make("s1/Blackjack-v0"))
    model = MaskablePPO("MlpPolicy", env, seed=0, n_steps=512, batch_size=64).learn(2048)
    unseen = range(10**6, 10**6 + 1000)
    learned = np.mean([i["payoff"] for i in play_episodes(env, model, unseen)])
    rng = np.random.default_rng(0)
    random = np.mean([i["payoff"] for i in play_episodes(env, lambda e, _: int(rng.integers(2)), unseen)])
    basic = np.mean([i["payoff"] for i in play_episodes(env, rule, unseen)])
    assert random < -0.3 and basic > -0.1  # the task's anchors on these hands
    assert learned > random + 0.15, (learned, random)


# ------------------------------------------------------------------------------------ examples
def run_example(name: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_blackjack_example_runs():
    out = run_example("maskable_ppo_blackjack.py", "--steps", "256", "--hands", "50")
    assert "basic strategy" in out and "MaskablePPO" in out


def test_2048_example_runs():
    out = run_example("maskable_ppo_2048.py", "--steps", "2048", "--games", "3")
    assert "fixed order" in out and "mean largest tile" in out
    assert "3 unseen games (seeds 1,000,000-1,000,002)" in out and "trained 2,048 steps in" in out
    for line in ("PPO - random", "PPO - fixed order"):  # how far from random play and from the rule, same games
        assert re.search(line + r" +largest tile -?\d+ \[-?\d+, -?\d+\] +score -?\d\.\d{3} \[", out), out


def test_drrn_example_trains_and_evaluates_on_test_games():
    out = run_example(
        "drrn_cookingworld.py", "--total-steps", "400", "--learning-starts", "100", "--eval-every", "400",
        "--eval-games", "2", "--batch-size", "16",
    )
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert rows and rows[-1]["steps"] == 400 and 0.0 <= rows[-1]["score"] <= 1.0

