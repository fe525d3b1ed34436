"""Write your own decision model: one probability per candidate move, then search with it.

Run: python examples/custom_policy.py   (writes a job folder under ./jobs)
"""

import numpy as np

import s1gym
from s1gym import BasePolicy, Decision
from s1gym.wrappers import Search


class PreferCookbook(BasePolicy):
    """Reads the cookbook first, then prefers moves that take, cut or cook things."""

    name = "prefer-cookbook"

    def decide(self, situation):
        weights = np.array(
            [3.0 if "cookbook" in c.text else 2.0 if c.text.startswith(("take", "cook", "slice", "chop", "dice"))
             else 1.0 for c in situation.candidates]
        )
        return Decision.from_probabilities(weights / weights.sum())


if __name__ == "__main__":
    summary = s1gym.evaluate(
        "CookingWorld", Search(PreferCookbook(), budget=300), episodes=3, seed=0, options={"size": "small"}
    )
    print({k: summary[k] for k in ("episodes", "mean_score", "wins") if k in summary})
