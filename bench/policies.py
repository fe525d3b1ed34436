"""Decision-model benchmarks: Local latency/load/memory, Jev over `s1 serve` at concurrency 1/4/16.

    python bench/policies.py            # default: a couple of minutes on 2 cores
    python bench/policies.py --quick    # fewer requests

Ratios are against numbers measured in the same run (cold vs warm cache for
Local, concurrency 1 for Jev), so they transfer across machines better than
the absolute numbers.
"""

from __future__ import annotations

import argparse
import os
import resource
import time

import numpy as np

from s1gym.core import Candidate, Situation


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def situations(n: int, candidates: int, vocab: int, tag: str = "") -> list[Situation]:
    """CookingWorld-like states: a few rooms, moves drawn from a shared vocabulary (so they repeat)."""
    rng = np.random.default_rng(0)
    verbs = ["take", "open", "close", "examine", "put", "eat", "cook", "slice", "go"]
    things = ["fridge", "cookbook", "knife", "red apple", "flour", "oven", "trash can", "counter", "door", "pepper"]
    pool = [f"{v} {t}" + ("" if i % 3 else f" {i}") for i, (v, t) in enumerate((v, t) for v in verbs for t in things)]
    pool = pool[:vocab]
    out = []
    for k in range(n):
        texts = list(dict.fromkeys(rng.choice(pool, size=candidates * 2)))[:candidates]
        obs = (f"You are hungry! Check the cookbook for the recipe. You are in room {k % 7}. "
               f"You see a {things[k % 10]} and a {things[(k * 3) % 10]}.{tag}")
        out.append(Situation("CookingWorld", obs, tuple(Candidate(t) for t in texts)))
    return out


def bench_local(decisions: int) -> None:
    from s1gym.policies import local as local_module

    rss0 = rss_mb()
    started = time.perf_counter()
    policy = local_module.Local()
    load = time.perf_counter() - started
    states = situations(decisions, 30, vocab=90)
    policy.decide(states[0])  # first forward pass (allocations, kernels)
    local_module._CACHE.clear()
    started = time.perf_counter()
    for s in states:
        policy.decide(s)
    mixed = (time.perf_counter() - started) / len(states) * 1e3
    fresh = situations(decisions, 30, vocab=90, tag=" Again.")  # same candidates, new queries
    started = time.perf_counter()
    for s in fresh:
        policy.decide(s)
    warm = (time.perf_counter() - started) / len(states) * 1e3
    local_module._CACHE.clear()
    started = time.perf_counter()
    for s in states[:10]:
        local_module._CACHE.clear()
        policy.decide(s)
    cold = (time.perf_counter() - started) / 10 * 1e3
    print("## Local (all-MiniLM-L6-v2, CPU, 30 candidates)")
    print(f"torch threads: {__import__('torch').get_num_threads()}")
    print(f"load (imports + weights): {load:.1f} s")
    print(f"cold (no cache, 31 texts embedded): {cold:.1f} ms/decision")
    print(f"first pass over {len(states)} states (candidate cache filling): {mixed:.1f} ms/decision")
    print(f"warm (candidates cached, new query embedded): {warm:.1f} ms/decision  ({cold / warm:.1f}x faster than cold)")
    print(f"peak RSS: {rss_mb():.0f} MB (+{rss_mb() - rss0:.0f} MB for the model)")
    print()


def bench_jev(policy: str, requests: int, levels: tuple[int, ...]) -> None:
    from s1gym.policies import Jev
    from s1gym.server import make_server

    with make_server(policy) as server:
        rows = []
        Jev(base_url=server.url).decide_many(situations(requests, 30, vocab=90))  # warm the candidate cache
        for level in levels:
            states = situations(requests, 30, vocab=90, tag=f" Level {level}.")  # new queries per level
            jev = Jev(base_url=server.url, max_concurrency=level)
            started = time.perf_counter()
            jev.decide_many(states)
            elapsed = time.perf_counter() - started
            rows.append((level, len(states) / elapsed))
            jev.close()
    base = rows[0][1]
    print(f"## Jev via s1 serve --policy {policy} ({requests} decisions of 30 candidates, decide_many; "
          "candidate texts cached, every query new)")
    print("| concurrency | requests/s | vs 1 |")
    print("|---|---|---|")
    for level, rate in rows:
        print(f"| {level} | {rate:.0f} | {rate / base:.2f}x |")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="fewer requests")
    parser.add_argument("--skip-local", action="store_true", help="skip everything that needs torch")
    args = parser.parse_args()
    os.environ.pop("TYPESAFE_API_KEY", None)  # loopback: no key needed
    levels = (1, 4, 16)
    bench_jev("uniform", 64 if args.quick else 200, levels)
    if not args.skip_local:
        bench_local(30 if args.quick else 100)
        bench_jev("local", 32 if args.quick else 96, levels)


if __name__ == "__main__":
    main()
