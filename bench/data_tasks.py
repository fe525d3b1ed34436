"""Benchmark the data-driven tasks on the shared sets: Millionaire, TicketRouter, InjectionGuard.

For each task and policy (Rule, Uniform, Random, Local, Lookahead(Local)) it
plays seeds 0..N-1 and prints the task's own metric with a 95 % bootstrap
interval (mean winnings / accuracy / precision-recall-F1 of ``block``) and
decisions per second, next to the raw env (the oracle stepping it, no policy)
measured in the same run.

    python bench/data_tasks.py                                 # everything, default sizes
    python bench/data_tasks.py --policies rule,uniform,random  # no model
    python bench/data_tasks.py --tasks tickets --episodes 200

Reading the numbers: Uniform always picks the first candidate (its odds are
flat; the pick goes to index 0), Random draws from the flat odds. Lookahead
forks the env per candidate and drops moves whose fork *loses*; on these
tasks the env holds the answer, so a wrong answer or a wrong label loses in the
fork and Lookahead becomes an oracle. Its row measures that leak, not the model.

Data: ``$S1GYM_SHARED_DATA`` or ../shared/data next to the checkout (see each SOURCE.md).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym

import s1gym  # noqa: F401  (registers the tasks)
from s1gym.core import BasePolicy, S1Env

SHARED = Path(os.environ.get("S1GYM_SHARED_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")

TASKS: dict[str, dict[str, Any]] = {
    "millionaire": {
        "id": "s1/Millionaire-v0",
        "options": {"questions": "trivia/opentdb_multiple.jsonl"},
        "episodes": 200,
        # Lookahead is an oracle here (wrong answers lose in the fork) and climbs all 15 questions,
        # each with 6 forks and fresh texts to embed: a few ladders show it.
        "lookahead_episodes": 20,
    },
    "tickets": {
        "id": "s1/TicketRouter-v0",
        "options": {
            "tickets": "tickets/bitext_customer_support.csv",
            "text_column": "instruction",
            "label_column": "category",
        },
        "episodes": 600,
    },
    "injection": {
        "id": "s1/InjectionGuard-v0",
        "options": {"texts": "injection/prompt_injections.jsonl"},
        "episodes": 449,  # the whole set
    },
}
DATA_OPTIONS = ("questions", "tickets", "texts")


def make_policy(name: str) -> BasePolicy:
    """A policy by its registry name (``rule``, ``uniform``, ``random`` with seed 0, ``local``), behind the
    wrappers the name puts before it (``lookahead-local`` is ``Lookahead(Local())``)."""
    from s1gym.policies import make_policy as named
    from s1gym.wrappers import wrap

    *wrappers, base = name.split("-")
    policy = named(base, **({"seed": 0} if base == "random" else {}))
    return wrap(policy, wrappers) if wrappers else policy


def make_env(task: str) -> S1Env:
    spec = TASKS[task]
    options = {k: (str(SHARED / v) if k in DATA_OPTIONS else v) for k, v in spec["options"].items()}
    return gym.make(spec["id"], **options)


def play(
    env: S1Env, episodes: int, choose: Callable[[S1Env], int], reset: Callable[[], None]
) -> tuple[list[dict], int, float]:
    """Final infos, number of decisions and seconds spent playing seeds 0..episodes-1."""
    infos, decisions = [], 0
    started = time.perf_counter()
    for seed in range(episodes):
        _, info = env.reset(seed=seed)
        reset()
        while not env.done:
            _, _, _, _, info = env.step(choose(env))
            decisions += 1
        infos.append(info)
    return infos, decisions, time.perf_counter() - started


def metric(task: str, env: S1Env, infos: list[dict]) -> str:
    summary = type(env).summarize_episodes(infos)

    def fmt(name: str, scale: float = 1.0, digits: int = 3) -> str:
        lo, hi = summary[f"{name}_ci95"]
        return f"{summary[name] * scale:.{digits}f} [{lo * scale:.{digits}f}, {hi * scale:.{digits}f}]"

    if task == "millionaire":
        walked = summary["outcomes"].get("walked away", 0)
        return f"mean winnings ${fmt('mean_winnings', digits=0)}; walked away {walked}/{len(infos)}"
    if task == "tickets":
        return f"accuracy {fmt('accuracy')}"
    return f"P {fmt('precision')}  R {fmt('recall')}  F1 {fmt('f1')}  acc {fmt('accuracy')}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default=",".join(TASKS), help=f"comma list of {', '.join(TASKS)}")
    parser.add_argument("--policies", default="rule,uniform,random,local,lookahead-local")
    parser.add_argument(
        "--episodes", type=int, default=None, help="episodes per task and policy (default: per task)"
    )
    parser.add_argument(
        "--torch-threads",
        type=int,
        default=1,
        help="intra-op threads for Local, ONNX Runtime or torch (S1GYM_LOCAL_THREADS; default 1: on the shared "
        "2-core box 2 threads ran 20-40x slower)",
    )
    args = parser.parse_args(argv)
    os.environ["S1GYM_LOCAL_THREADS"] = str(args.torch_threads)
    if not SHARED.is_dir():
        print(f"shared data not found at {SHARED}; set S1GYM_SHARED_DATA", file=sys.stderr)
        return 2
    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    cache: dict[str, BasePolicy] = {}
    print(
        f"{'task':<12} {'policy':<17} {'episodes':>8} {'decisions':>9} {'dec/s':>9} {'x raw':>7}  metric (95% CI)"
    )
    for task in [t.strip() for t in args.tasks.split(",") if t.strip()]:
        env = make_env(task)
        episodes = args.episodes or TASKS[task]["episodes"]
        raw_infos, raw_n, raw_s = play(env, episodes, lambda e: e.index_of(e.expert_action()), lambda: None)
        raw_rate = raw_n / raw_s
        print(
            f"{task:<12} {'(raw env+oracle)':<17} {episodes:>8} {raw_n:>9} {raw_rate:>9.0f} {1.0:>7.2f}  "
            f"{metric(task, env, raw_infos)}"
        )
        for name in policies:
            if name not in cache:
                started = time.perf_counter()
                cache[name] = make_policy(name)
                load = time.perf_counter() - started
                if load > 1:
                    print(f"  ({name}: model loaded in {load:.1f} s, not counted)")
            policy = cache[name]
            runs = episodes
            if name.startswith("lookahead") and args.episodes is None:
                runs = TASKS[task].get("lookahead_episodes", episodes)
            infos, n, seconds = play(
                env, runs, lambda e, p=policy: p.decide(e.situation()).action, policy.reset
            )
            rate = n / seconds
            print(
                f"{task:<12} {name:<17} {runs:>8} {n:>9} {rate:>9.1f} {rate / raw_rate:>7.4f}  "
                f"{metric(task, env, infos)}",
                flush=True,
            )
        env.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
