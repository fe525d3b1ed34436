"""Write your own decision model: one probability per candidate move.

Run: python examples/custom_policy.py
"""

import gymnasium as gym
import numpy as np

import s1gym
from s1gym import BasePolicy, Decision


class PreferCookbook(BasePolicy):
    """Reads the cookbook first, then prefers moves that take or cook things."""

    name = "prefer-cookbook"

    def decide(self, situation):
        weights = np.array([3.0 if "cookbook" in c.text else 2.0 if c.text.startswith(("take", "cook")) else 1.0
                            for c in situation.candidates])
        return Decision.from_probabilities(weights / weights.sum())


if __name__ == "__main__":
    env = gym.make("s1/CookingWorld-v0", size="small")
    print(s1gym.evaluate("CookingWorld", PreferCookbook(), episodes=3, seed=0, options={"size": "small"}))
