"""MaskablePPO (sb3-contrib) that learns 2048 in a few CPU minutes, scored against random play and the rule.

Run: python examples/maskable_ppo_2048.py [--steps 300000] [--games 100]

What lets PPO learn here (trained on the env's own reward, log2(largest tile)/11 in steps that come a
handful of times a game, the same PPO ends below random play: docs/benchmarks.md):

- the board as one-hot tile exponents, 16 cells x 16 values (``s1gym.rl.TaskFeatures``);
- a training reward in a Gymnasium wrapper, the env untouched (``s1gym.rl.MergeReward``): log2 of the
  tiles each move merges, -1 for losing the game;
- eight envs a rollout and minibatches of 256, so a policy forward serves eight moves and an update pass
  costs a quarter as many steps (about 0.5 ms of CPU a step instead of 1.4 ms on the test machine).

Protocol, fixed before the evaluation games were played:

- training games: seeds 0, 1, 2, ... (env i of 8 plays i, i + 8, ...: ``s1gym.rl.TrainingSeeds``);
- evaluation: the same 100 games for every player, seeds 1,000,000 to 1,000,099, never trained on:
  MaskablePPO greedy (deterministic), random (uniform over the legal moves, its RNG seeded 0) and the
  rule (the fixed order down, left, right, up);
- reported: mean largest tile and mean score (log2(largest tile)/11) with 95 % bootstrap intervals, and
  PPO minus random and PPO minus the rule on the same games (paired 95 % bootstrap intervals).

The action index always means the same direction (0 up, 1 down, 2 left, 3 right).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence

import gymnasium as gym
import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.vec_env import DummyVecEnv

import s1gym  # noqa: F401  (registers the s1/ envs)
from s1gym.rl import MergeReward, TaskFeatures, TrainingSeeds, play_episodes
from s1gym.stats import bootstrap_ci

#: The evaluation games (fixed before any evaluation run; training plays seeds 0, 1, 2, ...).
EVAL_SEEDS = range(10**6, 10**6 + 100)
N_ENVS = 8
PPO_OPTIONS = {"n_steps": 2048 // N_ENVS, "batch_size": 256, "seed": 0}


def train_env(i: int) -> Callable[[], gym.Env]:
    return lambda: MergeReward(TrainingSeeds(TaskFeatures(gym.make("s1/2048-v0")), i, N_ENVS))


def make_model() -> MaskablePPO:
    return MaskablePPO("MlpPolicy", DummyVecEnv([train_env(i) for i in range(N_ENVS)]), **PPO_OPTIONS)


def rule(env: gym.Env, _observation) -> int:
    return env.unwrapped.index_of(env.unwrapped.rule_action())


def random_player(seed: int = 0) -> Callable:
    rng = np.random.default_rng(seed)
    return lambda env, _obs: int(rng.choice(np.flatnonzero(env.get_wrapper_attr("action_masks")())))


def play(agent, seeds: Sequence[int]) -> dict[str, np.ndarray]:
    """Largest tile and score of each game (greedy play for a model)."""
    finals = play_episodes(TaskFeatures(gym.make("s1/2048-v0")), agent, seeds)
    return {key: np.array([i[key] for i in finals], dtype=float) for key in ("max_tile", "score")}


def interval(values: np.ndarray, digits: int) -> str:
    low, high = bootstrap_ci(values)
    return f"{np.mean(values):.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def main(argv: Sequence[str] | None = None) -> dict[str, dict[str, np.ndarray]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300_000, help="training steps (default 300,000)")
    parser.add_argument("--games", type=int, default=len(EVAL_SEEDS), help="evaluation games, from seed 1,000,000")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    seeds = EVAL_SEEDS[: args.games]

    wall, cpu = time.perf_counter(), time.process_time()
    model = make_model().learn(args.steps)
    print(f"trained {args.steps:,} steps in {time.process_time() - cpu:.0f} CPU-s ({time.perf_counter() - wall:.0f} s wall)")
    results = {"MaskablePPO": model, "random": random_player(0), "fixed order": rule}
    results = {name: play(agent, seeds) for name, agent in results.items()}
    print(f"{len(seeds)} unseen games (seeds {seeds[0]:,}-{seeds[-1]:,}); "
          "mean largest tile and score [95 % bootstrap interval]:")
    for name, r in results.items():
        print(f"  {name:<12} largest tile {interval(r['max_tile'], 0):<18} score {interval(r['score'], 3)}")
    ppo = results["MaskablePPO"]
    for other in ("random", "fixed order"):
        tile, score = ppo["max_tile"] - results[other]["max_tile"], ppo["score"] - results[other]["score"]
        print(f"  PPO - {other:<12} largest tile {interval(tile, 0):<18} score {interval(score, 3)} (same games)")
    print(f"total {time.process_time() - cpu:.0f} CPU-s, {time.perf_counter() - wall:.0f} s wall")
    return results


if __name__ == "__main__":
    main()
