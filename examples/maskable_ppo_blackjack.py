"""MaskablePPO (sb3-contrib) learns hit/stand from the hand's numbers, then plays unseen hands.

Run: python examples/maskable_ppo_blackjack.py [--steps 20000] [--hands 5000]
Basic strategy earns -0.043 a hand on these rules, a random player about -0.39.
"""

import argparse

import gymnasium as gym
import numpy as np
from sb3_contrib import MaskablePPO

import s1gym  # noqa: F401  (registers the s1/ envs)
from s1gym.rl import TaskFeatures, play_episodes

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=20_000)
parser.add_argument("--hands", type=int, default=5_000)
args = parser.parse_args()

env = TaskFeatures(gym.make("s1/Blackjack-v0"))  # Box(43): player total, soft, dealer's up card
model = MaskablePPO("MlpPolicy", env, n_steps=min(2048, args.steps), seed=0).learn(args.steps)

unseen = range(10**6, 10**6 + args.hands)  # hands never dealt in training
ppo = [i["payoff"] for i in play_episodes(env, model, unseen)]
rule = [i["payoff"] for i in play_episodes(env, lambda e, _: e.unwrapped.index_of(e.unwrapped.rule_action()), unseen)]
print(f"mean payoff over {args.hands} unseen hands: MaskablePPO {np.mean(ppo):+.3f}, basic strategy {np.mean(rule):+.3f}")
