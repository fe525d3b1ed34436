"""The transition cache (s1gym/engines/transitions.py): Search(Lookahead(Local)) on ALFWorld with it off and on.

    python bench/transitions.py                      # the six shipped scenes, 3 rounds
    python bench/transitions.py --games 0,35,70,105  # shared valid_seen games (../shared/data/alfworld)

One warm-up run (game loading and textworld's parse caches), then the cache off and on alternately, each run
playing every game to its end in this process; per arm: CPU seconds of the runs (median and all), engine
steps and cache hits, and whether every decision (move, probabilities, calls) was the same. Then the memory
an entry takes (tracemalloc over the entries stored while playing, with the cache's bound lifted).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import argparse  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402

SHARED = Path(os.environ.get("S1GYM_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")) / "alfworld"


def run(games: list[int], shared: bool, capacity: int) -> tuple[list, float, dict]:
    import gymnasium as gym

    import s1gym  # noqa: F401
    from s1gym.engines.base import pool_stats
    from s1gym.policies import Local
    from s1gym.tasks.alfworld.engine import close_engines
    from s1gym.tasks.alfworld.env import ALFWorldEnv
    from s1gym.wrappers import Lookahead, Search

    ALFWorldEnv.transition_capacity = capacity
    close_engines()
    options = {"data_dir": str(SHARED), "split": "valid_seen"} if shared else {}
    env = gym.make("s1/ALFWorld-v0", hygiene=True, expert=None, **options).unwrapped
    decisions = []
    t = time.process_time()
    for game in games:
        search = Search(Lookahead(Local(preload=False)), heuristic="progress", budget=10, episode_budget=150,
                        fallback="greedy")
        env.reset(seed=game) if not shared else env.reset(seed=0, options={"game": game})
        while not env.done:
            d = search.decide(env.situation())
            decisions.append((d.action, tuple(d.probabilities.round(12)), d.info.get("policy_calls")))
            env.step(d.action)
        decisions.append(("won", env.won, env.steps))
    cpu = time.process_time() - t
    env.close()
    return decisions, cpu, pool_stats()[("alfworld", False)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", default="", help="valid_seen game indices (default: the six shipped scenes)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--capacity", type=int, default=1024, help="entries of the cache in the 'on' arm")
    args = ap.parse_args()
    shared = bool(args.games)
    games = [int(g) for g in args.games.split(",")] if shared else list(range(6))
    print(f"load average before: {os.getloadavg()}")
    run(games, shared, 0)  # warm-up
    arms: dict[int, list] = {0: [], args.capacity: []}
    for _ in range(args.rounds):
        for capacity in arms:
            arms[capacity].append(run(games, shared, capacity))
    reference = arms[0][0][0]
    for capacity, runs in arms.items():
        cpus = [cpu for _, cpu, _ in runs]
        stats = runs[-1][2]
        same = all(d == reference for d, _, _ in runs)
        print(f"cache {'on ' if capacity else 'off'}: CPU s median {statistics.median(cpus):.2f} (runs "
              f"{', '.join(f'{c:.2f}' for c in cpus)}), engine steps {stats['steps']}, hits {stats['transition_hits']}, "
              f"restores {stats['restores']}, same decisions as the first run without: {same}")
    won = sum(1 for d in reference if d[0] == "won" and d[1])
    print(f"games won {won}/{len(games)}; decisions {sum(1 for d in reference if d[0] != 'won')}")
    grown = {}
    for capacity in (0, 10**9):  # the same run without a cache and with an unbounded one
        tracemalloc.start()
        before = tracemalloc.take_snapshot()
        run(games, shared, capacity)
        after = tracemalloc.take_snapshot()
        tracemalloc.stop()
        grown[capacity] = sum(s.size_diff for s in after.compare_to(before, "filename"))
    from s1gym.engines.pool import live_pool

    entries = len(live_pool(("alfworld", False)).transitions)
    extra = grown[10**9] - grown[0]
    print(f"memory: {entries} entries stored in a run, {extra / 2**20:.1f} MB more held than without the cache, "
          f"{extra / max(1, entries) / 1024:.1f} KB an entry; load average after: {os.getloadavg()}")

if __name__ == "__main__":
    main()
