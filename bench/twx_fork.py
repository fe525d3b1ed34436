"""TextWorldExpress fork cost by depth: in-JVM snapshots against replaying the moves, in one run.

    python bench/twx_fork.py [--forks 15] [--depths 5,20,40,60] [--rounds 3]

Hard CookingWorld (11 rooms, doors, 5 ingredients, 10 distractors), test fold, one game per depth reached by
random moves that neither win nor lose. At each depth: the median over ``--forks`` forks of ``fork()`` plus
the fork's first step, and of a plain step (the fork's next one, on its live game object). Two arms, each
in a fresh pool of the same JVM, alternated ``--rounds`` times against load drift:

- ``snapshot``: the JVM's snapshot helper (s1gym/tasks/twx/S1Snapshots.java) copies the game object;
- ``replay``: no helper (as before it existed, and as without javac): a new game and one round trip a move.

Wall time, median per round then median over rounds; the machine's load average is printed with the table.
``--lookahead N`` also times ``Lookahead(Local)`` decisions (N per arm and round, on the games' first states
after the same random moves; every candidate forked and stepped) in the same two arms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import gymnasium as gym
import numpy as np

import s1gym  # noqa: F401
from s1gym.engines import base as engines
from s1gym.tasks.twx import snapshots
from s1gym.tasks.twx.engine import get_jvm

HARD = {"num_locations": 11, "num_ingredients": 5, "num_distractors": 10, "include_doors": True}


def safe_moves(seed: int, depth: int, rng: np.random.Generator) -> list[str]:
    """``depth`` random moves from the start of game ``seed`` that end nothing (each tried on a fork)."""
    env = gym.make("s1/CookingWorld-v0", fold="test", **HARD)
    env.reset(seed=seed)
    moves: list[str] = []
    while len(moves) < depth:
        for i in rng.permutation(len(env.candidates)):
            probe = env.fork()
            probe.step(int(i))
            if not probe.done:
                moves.append(env.candidates[int(i)])
                env.step(int(i))
                break
    env.close()
    return moves


def measure(seed: int, moves: list[str], forks: int, rng: np.random.Generator) -> tuple[float, float]:
    """Median seconds of fork + first step, and of a plain step, at the state after ``moves``."""
    env = gym.make("s1/CookingWorld-v0", fold="test", **HARD)
    env.reset(seed=seed)
    for m in moves:
        env.step_move(m)
    first, plain = [], []
    for _ in range(forks + 3):  # the first three warm up
        i = int(rng.integers(len(env.candidates)))
        t = time.perf_counter()
        f = env.fork()
        f.step(i)
        first.append(time.perf_counter() - t)
        if f.candidates:
            j = int(rng.integers(len(f.candidates)))
            t = time.perf_counter()
            f.step(j)
            plain.append(time.perf_counter() - t)
        f.close()
    env.close()
    return statistics.median(first[3:]), statistics.median(plain[3:])


def lookahead_decisions(seed: int, moves: list[str], n: int) -> tuple[float, int]:
    """Median seconds of ``Lookahead(Local)``'s decision on the states along ``moves`` (``n`` of them), and
    the median candidate count."""
    from s1gym.policies import Local
    from s1gym.wrappers import Lookahead

    env = gym.make("s1/CookingWorld-v0", fold="test", **HARD)
    env.reset(seed=seed)
    policy, took, counts = Lookahead(Local()), [], []
    for m in moves[:n]:
        t = time.perf_counter()
        policy.decide(env.situation())
        took.append(time.perf_counter() - t)
        counts.append(len(env.candidates))
        env.step_move(m)
    env.close()
    return statistics.median(took), int(statistics.median(counts))


def use_arm(arm: str, helper: snapshots.Snapshots | None) -> None:
    engines.close_pools()  # engines made from now on see the arm's helper (or none)
    get_jvm().cache["twx-snapshots"] = helper if arm == "snapshot" else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--forks", type=int, default=15)
    ap.add_argument("--depths", default="5,20,40,60")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0, help="the test-fold game (index) played")
    ap.add_argument("--lookahead", type=int, default=0, help="Lookahead(Local) decisions timed per arm and round")
    args = ap.parse_args()
    depths = [int(d) for d in args.depths.split(",")]

    helper = snapshots.Snapshots.of(get_jvm())
    if helper is None:
        raise SystemExit("the snapshot helper is not available (javac missing?): nothing to compare")
    path = safe_moves(args.seed, max(depths), np.random.default_rng(0))
    results: dict[tuple[str, int], list[tuple[float, float]]] = {}
    for r in range(args.rounds):
        for arm in ("snapshot", "replay") if r % 2 == 0 else ("replay", "snapshot"):
            use_arm(arm, helper)
            for d in depths:
                results.setdefault((arm, d), []).append(
                    measure(args.seed, path[:d], args.forks, np.random.default_rng(100 + d)))
            if args.lookahead:
                results.setdefault((arm, -1), []).append(lookahead_decisions(args.seed, path, args.lookahead))
    use_arm("snapshot", helper)

    load = os.getloadavg()
    print(f"TWX fork + first step vs a plain step, hard CookingWorld test game {args.seed}, median of "
          f"{args.forks} forks, median of {args.rounds} rounds; {os.cpu_count()} cpus, load average "
          f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}")
    print(f"{'depth':>5}  {'arm':<8}  {'fork + first step':>17}  {'plain step':>10}  {'ratio':>6}  "
          f"{'speed-up':>8}")
    for d in depths:
        fs = {arm: statistics.median(x[0] for x in results[(arm, d)]) for arm in ("replay", "snapshot")}
        for arm in ("replay", "snapshot"):
            first = fs[arm]
            plain = statistics.median(x[1] for x in results[(arm, d)])
            speed = f"{fs['replay'] / first:.1f}x" if arm == "snapshot" else ""
            print(f"{d:>5}  {arm:<8}  {first * 1e3:>14.2f} ms  {plain * 1e3:>7.2f} ms  {first / plain:>5.1f}x  "
                  f"{speed:>8}")
    if args.lookahead:
        la = {arm: statistics.median(x[0] for x in results[(arm, -1)]) for arm in ("replay", "snapshot")}
        count = results[("snapshot", -1)][0][1]
        print(f"Lookahead(Local), median decision over the first {args.lookahead} states (median {count} "
              f"candidates): replay {la['replay'] * 1e3:.1f} ms, snapshot {la['snapshot'] * 1e3:.1f} ms "
              f"({la['replay'] / la['snapshot']:.1f}x faster)")


if __name__ == "__main__":
    main()
