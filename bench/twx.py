"""TextWorldExpress through s1gym vs raw TextWorldExpress, measured in one run.

    python bench/twx.py [--games 20] [--seconds 5]

Prints: fork cost at depth 10 against TWX's ``clone()`` at the same state,
step cost against a raw ``TextWorldExpressEnv.step`` on the same action
sequences, steps/s with random legal moves in one process, and peak memory
(Python RSS plus the JVM's).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
from textworld_express import TextWorldExpressEnv

import s1gym  # noqa: F401
from s1gym.engines import jvm as _jvm

MEDIUM = "numLocations=3,numIngredients=2,numDistractorItems=5,includeDoors=0,limitInventorySize=0"


def timed(fn, repeat: int) -> float:
    """Median seconds of ``fn()`` over ``repeat`` runs."""
    samples = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples)


def vm_hwm_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=20, help="games (seeds) for the step comparison")
    ap.add_argument("--seconds", type=float, default=5.0, help="duration of the random-play throughput run")
    args = ap.parse_args()

    raw = TextWorldExpressEnv(envStepLimit=10_000)
    raw.load("cookingworld", MEDIUM)
    env = gym.make("s1/CookingWorld-v0", size="medium")

    # The gold paths (TWX's occasionally hold a move that is not valid then, e.g. opening an open
    # cupboard: s1gym does not list it, so it is left out of both sequences); warms both JVMs.
    golds = {}
    for seed in range(args.games):
        raw.reset(seed=seed, gameFold="train", generateGoldPath=True)
        env.reset(seed=seed)
        golds[seed] = []
        for a in raw.getGoldActionSequence():
            if a in env.candidates:
                env.step(env.index_of(a))
                golds[seed].append(a)
        raw.reset(seed=seed, gameFold="train")
        for a in golds[seed]:
            raw.step(a)

    # ---- step cost on the same action sequences
    indices = {}
    for seed, gold in golds.items():
        env.reset(seed=seed)
        indices[seed] = []
        for a in gold:
            indices[seed].append(env.index_of(a))
            env.step(indices[seed][-1])

    def raw_steps() -> float:
        total = 0.0
        for seed, gold in golds.items():
            raw.reset(seed=seed, gameFold="train")
            t = time.perf_counter()
            for a in gold:
                raw.step(a)
            total += time.perf_counter() - t
        return total

    def s1_steps() -> float:
        total = 0.0
        for seed, idx in indices.items():
            env.reset(seed=seed)
            t = time.perf_counter()
            for i in idx:
                env.step(i)
            total += time.perf_counter() - t
        return total

    n_steps = sum(len(g) for g in golds.values())
    raw_t, s1_t = [], []
    for _ in range(5):  # interleaved rounds against load drift on a shared machine
        raw_t.append(raw_steps())
        s1_t.append(s1_steps())
    raw_step = statistics.median(raw_t) / n_steps
    s1_step = statistics.median(s1_t) / n_steps

    # ---- fork at depth 10 vs TWX clone() at the same state
    gold = golds[0] if len(golds[0]) > 10 else max(golds.values(), key=len)
    seed = next(s for s, g in golds.items() if g is gold)
    env.reset(seed=seed)
    for a in gold[:10]:
        env.step(env.index_of(a))
    raw.reset(seed=seed, gameFold="train")
    for a in gold[:10]:
        raw.step(a)
    next_move = env.index_of(gold[10])

    def fork_only():
        env.fork()

    def fork_and_step():
        f = env.fork()
        f.step(next_move)
        f.close()

    def twx_clone():
        c = raw.clone()
        c.close()

    fork_s = timed(fork_only, 500)
    fork_step_s = timed(fork_and_step, 100)
    clone_s = timed(twx_clone, 3)

    # ---- random legal moves, one process
    rng = np.random.default_rng(0)
    play = gym.make("s1/CookingWorld-v0", size="medium")
    play.reset(seed=0)
    steps, episodes, t0 = 0, 0, time.perf_counter()
    while time.perf_counter() - t0 < args.seconds:
        if play.done:
            episodes += 1
            play.reset(seed=episodes)
        play.step(int(rng.integers(len(play.candidates))))
        steps += 1
    rate = steps / (time.perf_counter() - t0)

    jvm = _jvm.current_jvm()
    py_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    jvm_kib = vm_hwm_kib(jvm.process.pid) if jvm else 0

    rows = [
        ("fork() at depth 10 (lazy, no game object yet)", f"{fork_s * 1e6:.1f} us", f"1/{clone_s / fork_s:,.0f} of clone"),
        ("fork() + first step at depth 10 (replay 10 moves)", f"{fork_step_s * 1e3:.2f} ms",
         f"1/{clone_s / fork_step_s:,.0f} of clone"),
        ("TWX clone() at depth 10 (new JVM + replay)", f"{clone_s * 1e3:.0f} ms", "1"),
        ("s1gym step (CookingWorld medium, gold paths)", f"{s1_step * 1e3:.3f} ms", f"{s1_step / raw_step:.2f}x raw"),
        ("raw TWX step (same action sequences)", f"{raw_step * 1e3:.3f} ms", "1.00x"),
        ("random legal moves, one process", f"{rate:,.0f} steps/s", f"{episodes} episodes"),
        ("peak RSS: Python / s1gym JVM", f"{py_kib / 1024:.0f} MiB / {jvm_kib / 1024:.0f} MiB",
         f"{(py_kib + jvm_kib) / 1024:.0f} MiB total"),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"TextWorldExpress via s1gym vs raw (CookingWorld medium, {n_steps} steps over {args.games} games, "
          f"{os.cpu_count()} cpus)")
    print(f"{'measure':<{width}}  {'value':>22}  ratio")
    for name, value, ratio in rows:
        print(f"{name:<{width}}  {value:>22}  {ratio}")
    env.close()
    play.close()
    raw.close()


if __name__ == "__main__":
    main()
