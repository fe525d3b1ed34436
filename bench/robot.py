"""The robot tasks (s1/PickPlace-v0) against Gymnasium-Robotics' own Fetch env, measured in one run.

    python bench/robot.py [--scenes 10]

Prints CPU-time costs (``time.process_time``: these machines are shared) of
- a fork (``env.fork()``: a copy of ``MjData`` and the env's fields), closed after use as Search and
  Lookahead close theirs (its ``MjData`` then serves the next fork), and without a spare to copy into
  (a new ``MjData``: the first fork of a decision), against the ways a Fetch env can be
  copied or restarted: ``FetchPickAndPlace-v4``'s ``reset`` and a fresh ``gym.make`` of it (``copy.deepcopy``
  of a Fetch env does not work: EzPickle rebuilds it from its arguments, losing the goal), and a fresh
  s1gym scene (the model cached, and cold: compiled from the MjSpec);
- a control step (20 substeps) of each, and a skill (median over the skills the expert plays);
- Lookahead's price at a decision: every candidate skill simulated on its fork.
Scenes: train fold, hard, seeds 0..N-1 (the bench's fixed sample; none is a test scene).
"""

from __future__ import annotations

import argparse
import copy
import statistics
import time

import gymnasium as gym
import numpy as np

import s1gym  # noqa: F401


def cpu_ms(fn, repeat: int) -> float:
    """Median CPU milliseconds of ``fn()`` over ``repeat`` runs."""
    samples = []
    for _ in range(repeat):
        t = time.process_time()
        fn()
        samples.append((time.process_time() - t) * 1e3)
    return statistics.median(samples)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenes", type=int, default=10)
    args = ap.parse_args()

    from s1gym.tasks.robot.arm import SPARE_DATA
    from s1gym.tasks.robot.scene import build_model, draw_scene, import_robotics
    from s1gym.tasks.robot.skills import run_skill

    import_robotics()
    gym.register_envs(__import__("gymnasium_robotics"))

    fetch = gym.make("FetchPickAndPlace-v4")
    fetch.reset(seed=0)
    fetch_reset = cpu_ms(lambda: fetch.reset(), 20)
    fetch_make = cpu_ms(lambda: gym.make("FetchPickAndPlace-v4").reset(seed=0), 5)
    action = np.zeros(4, dtype=np.float32)
    fetch_step = cpu_ms(lambda: fetch.step(action), 200)
    try:
        copy.deepcopy(fetch.unwrapped).step(action)
        deepcopy_note = "works"
    except Exception as exc:  # noqa: BLE001 - reported, not hidden: the point of the row
        deepcopy_note = f"fails: {type(exc).__name__}"

    env = gym.make("s1/PickPlace-v0", fold="train", hard=True).unwrapped
    forks, fresh_forks, steps, skills, lookahead, fresh_cached, fresh_cold, candidates = [], [], [], [], [], [], [], []
    for seed in range(args.scenes):
        env.reset(seed=seed)
        scene = draw_scene("train", seed, hard=True)
        fresh_cached.append(cpu_ms(lambda: env.reset(seed=seed), 3))
        build_model.cache_clear()
        t = time.process_time()
        env.reset(seed=seed)
        fresh_cold.append((time.process_time() - t) * 1e3)
        while not env.done:
            forks.append(cpu_ms(lambda: env.fork().close(), 5))
            fresh_forks.append(cpu_ms(lambda: (SPARE_DATA.clear(), env.fork()), 5))
            held = env.fork()
            steps.append(cpu_ms(lambda: held.arm.control(np.zeros(3)), 5))
            held.close()
            t = time.process_time()
            for skill in list(env._skills):
                run_skill(env.fork().arm, skill, env.arm.held())
            lookahead.append((time.process_time() - t) * 1e3)
            candidates.append(len(env._skills))
            move = env.expert_action()
            t = time.process_time()
            env.step_move(move)
            skills.append((time.process_time() - t) * 1e3)
        assert scene == env.arm.scene

    med = statistics.median
    print(f"machine: 2 cores, load {open('/proc/loadavg').read().split()[0]}; {args.scenes} train hard scenes, "
          f"{len(skills)} expert skills; CPU ms, medians")
    print("| what | s1gym PickPlace | Fetch (gymnasium-robotics) | ratio |")
    print("|---|---|---|---|")
    print(f"| copy the game state | fork {med(forks):.3f} (closed after use), {med(fresh_forks):.2f} (spares cleared: a compact fork makes no MjData until stepped) | "
          f"reset {fetch_reset:.2f} / gym.make {fetch_make:.0f} (deepcopy {deepcopy_note}) | "
          f"fork = 1/{fetch_make / med(forks):.0f} of gym.make (1/{fetch_make / med(fresh_forks):.0f} without a "
          f"spare), {med(forks) / fetch_reset:.3f}x a reset |")
    print(f"| control step (20 substeps) | {med(steps):.2f} | {fetch_step:.2f} | {med(steps) / fetch_step:.2f}x |")
    print(f"| new scene | {med(fresh_cached):.1f} (model cached), {med(fresh_cold):.0f} (cold) | "
          f"gym.make {fetch_make:.0f} | fork = 1/{med(fresh_cached) / med(forks):.0f} of a cached new scene |")
    print(f"| one skill (expert's) | {med(skills):.1f} | | {med(skills) / fetch_step:.0f} Fetch steps |")
    print(f"| Lookahead: every candidate on its fork | {med(lookahead):.0f} ({med(candidates):.0f} skills) | | |")


if __name__ == "__main__":
    main()
