"""MaskablePPO (sb3-contrib) on 2048: the board as one-hot tiles, the mask as the moves that change it.

Run: python examples/maskable_ppo_2048.py [--steps 100000] [--games 20]
The action index always means the same direction (0 up, 1 down, 2 left, 3 right).
"""

import argparse

import gymnasium as gym
import numpy as np
from sb3_contrib import MaskablePPO

import s1gym  # noqa: F401  (registers the s1/ envs)
from s1gym.rl import TaskFeatures, play_episodes

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=100_000)
parser.add_argument("--games", type=int, default=20)
args = parser.parse_args()

env = TaskFeatures(gym.make("s1/2048-v0"))  # Box(256): 16 cells x one-hot exponent
model = MaskablePPO("MlpPolicy", env, n_steps=min(2048, args.steps), seed=0).learn(args.steps)

unseen = range(10**6, 10**6 + args.games)  # tile draws never seen in training
for name, agent in [
    ("MaskablePPO", model),
    ("fixed order (down, left, right, up)", lambda e, _: e.unwrapped.index_of(e.unwrapped.rule_action())),
]:
    finals = play_episodes(env, agent, unseen)
    print(
        f"{name}: mean largest tile {np.mean([i['max_tile'] for i in finals]):.0f}, "
        f"mean points {np.mean([i['game_score'] for i in finals]):.0f}, mean score {np.mean([i['score'] for i in finals]):.3f}"
    )
