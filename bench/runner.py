"""Runner benchmarks: loop overhead per act, and episodes per minute with 1 and 2 workers.

    python bench/runner.py                 # CookingWorld small (overhead) and medium (throughput)
    python bench/runner.py --episodes 20 --throughput-episodes 12

1. Overhead: the runner with the Random policy against a bare loop
   (reset; situation -> decide -> step) over the same env and seeds. The
   difference per act is what the runner adds: tick records, trial and job
   files (atomic JSON writes, secret scrubbing), the summary. Target < 1 ms.
2. Throughput: episodes per minute on CookingWorld medium with ``workers=1``
   and ``workers=2`` (each worker process starts its own engine; on 2 shared
   cores the ratio shows what parallel runs buy here).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import gymnasium as gym
from s1gym.policies import make_policy

import s1gym  # noqa: F401  registers the tasks
from s1gym.runner.spec import evaluate

TASK = "s1/CookingWorld-v0"


def bare_loop(options: dict, seeds: range) -> tuple[float, int]:
    """The same games with no runner: reset, then situation -> decide -> step to the end."""
    start = time.perf_counter()
    env = gym.make(TASK, **options).unwrapped
    acts = 0
    for seed in seeds:
        policy = make_policy("random", seed=seed)  # what the runner does for 'random'
        _, info = env.reset(seed=seed)
        policy.reset()
        done = False
        while not done and info["candidates"]:
            decision = policy.decide(env.situation())
            _, _, terminated, truncated, info = env.step(decision.action)
            done = terminated or truncated
            acts += 1
    env.close()
    return time.perf_counter() - start, acts


def runner_loop(options: dict, seeds: range, out: Path, job: str, workers: int = 1) -> tuple[float, dict]:
    start = time.perf_counter()
    summary = evaluate(
        TASK,
        "random",
        episodes=len(seeds),
        seed=seeds.start,
        options=options,
        out=out,
        job=job,
        workers=workers,
    )
    return time.perf_counter() - start, summary


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--episodes", type=int, default=20, help="episodes for the overhead measurement")
    parser.add_argument("--size", default="small", help="CookingWorld size for the overhead measurement")
    parser.add_argument("--throughput-episodes", type=int, default=40)
    parser.add_argument("--throughput-size", default="medium")
    parser.add_argument("--repeats", type=int, default=5, help="best of R for the overhead timings")
    args = parser.parse_args()

    options = {"size": args.size}
    seeds = range(args.episodes)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        bare_loop(options, range(1))  # warm the engine (JVM start) for both sides
        bare_times, run_times = [], []
        acts = ticks = 0
        for r in range(args.repeats):
            t, acts = bare_loop(options, seeds)
            bare_times.append(t)
            t, summary = runner_loop(options, seeds, out, f"overhead{r}")
            run_times.append(t)
            ticks = summary["decisions"]
        assert acts == ticks, f"the runner played {ticks} acts, the bare loop {acts}: not the same games"
        bare, run = min(bare_times), min(run_times)
        added_ms = (run - bare) / acts * 1000
        print(
            f"## Runner overhead (CookingWorld {args.size}, Random, {args.episodes} episodes, {acts} acts, "
            f"best of {args.repeats})"
        )
        print("| loop | total s | per act ms |")
        print("|---|---|---|")
        print(f"| bare (situation -> decide -> step) | {bare:.3f} | {bare / acts * 1000:.3f} |")
        print(f"| runner (evaluate, job folder written) | {run:.3f} | {run / acts * 1000:.3f} |")
        print(f"| **added by the runner** | {run - bare:.3f} | **{added_ms:.3f}** (x{run / bare:.2f}) |")
        print()

        t_opts = {"size": args.throughput_size}
        n = args.throughput_episodes
        rows = {}
        for workers in (1, 2):
            stamps: list[float] = []
            start = time.perf_counter()
            summary = evaluate(
                TASK,
                "random",
                episodes=n,
                seed=100,
                options=t_opts,
                out=out,
                job=f"tp{workers}",
                workers=workers,
                progress=lambda _, s=stamps: s.append(time.perf_counter()),
            )
            t = time.perf_counter() - start
            # After the first K episodes every worker is up (process, imports, its own JVM).
            t_up = stamps[workers - 1] - start
            steady = (n - workers) / (stamps[-1] - stamps[workers - 1]) * 60
            rows[workers] = (t, n / t * 60, steady, t_up, summary["mean_steps"])
        print(f"## Episodes per minute (CookingWorld {args.throughput_size}, Random, {n} episodes)")
        print(
            "| workers | wall s | episodes/min (all) | episodes/min (after the first K) | first K done at s "
            "| mean steps |"
        )
        print("|---|---|---|---|---|---|")
        for workers, (t, rate, steady, t_up, steps) in rows.items():
            print(f"| {workers} | {t:.2f} | {rate:.1f} | {steady:.1f} | {t_up:.2f} | {steps:.1f} |")
        print(
            f"\nspeed-up 2 vs 1 workers: x{rows[2][1] / rows[1][1]:.2f} overall, "
            f"x{rows[2][2] / rows[1][2]:.2f} after start-up (2 cores shared with everything else)"
        )


if __name__ == "__main__":
    main()
