"""What a fork of s1/TextWorld-v0 costs against a plain step, in one run.

``python -m s1gym.tasks.textworld.bench`` plays each challenge's train seed along the expert's path (with
random detours to reach depths 5-40), and at each depth measures, warm (games cached, interpreter loaded):
over the same moves from the same states: the plain steps (``env.step``), a fork plus the fork's first step
(``env.fork().step``), and TextWorld's own ``env.copy()`` plus its step (``textworld.start``'s env). Prints
the ratios of the sums to the plain steps'.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from s1gym.tasks.textworld.env import TextWorldEnv
from s1gym.tasks.textworld.games import CHALLENGES, make_game, spec_for

DEPTHS = (5, 10, 20, 40)


def _path(seed: int, depth: int) -> list[str]:
    """``depth`` moves from the start that keep the game in play (random, a winning move skipped)."""
    env = TextWorldEnv(hygiene=False)
    env.reset(seed=seed)
    rng = np.random.default_rng(depth)
    path: list[str] = []
    while len(path) < depth:
        options = list(env.candidates)
        rng.shuffle(options)
        for move in options:
            probe = env.fork()
            probe.step_move(move)
            if not probe.done:
                env.step_move(move)
                path.append(move)
                break
        else:
            break
    return path


def main() -> int:
    import textworld

    infos = textworld.EnvInfos(admissible_commands=True, policy_commands=True, score=True, max_score=True,
                               won=True, lost=True, description=True, inventory=True, feedback=True)
    print("challenge depth step_ms fork+step/step tw_copy+step/step")
    for seed, challenge in enumerate(CHALLENGES):
        game = str(make_game(spec_for(seed, "train", None, "medium")))
        for depth in DEPTHS:
            path = _path(seed, depth)
            plain, forked, copied = 0.0, 0.0, 0.0
            a, b = TextWorldEnv(hygiene=False), TextWorldEnv(hygiene=False)
            a.reset(seed=seed)
            b.reset(seed=seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tw = textworld.start(game, infos)
            tw.reset()
            for move in path:
                t = time.perf_counter()
                a.step_move(move)
                plain += time.perf_counter() - t
                t = time.perf_counter()
                b.fork().step_move(move)
                forked += time.perf_counter() - t
                b.step_move(move)
                t = time.perf_counter()
                tw.copy().step(move)
                copied += time.perf_counter() - t
                tw.step(move)
            tw.close()
            n = max(1, len(path))
            print(f"{challenge} {len(path)} {plain / n * 1e3:.2f} {forked / plain:.2f} {copied / plain:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
