"""s1/Calculator-v0 (mate-calc under Xvfb, over AT-SPI): costs, and the baselines on seeded goals.

    python bench/desktop.py                       # costs, Rule on 50 goals, Uniform/Random/Local on 20
    python bench/desktop.py --policies rule,random --others 10 --rounds 5

1. Costs, wall-clock medians over ``--rounds`` (the app is another process, so CPU time of this one
   would miss it; the load average is printed with them):
   - cold start: ``gym.make`` + ``reset``: a new desktop (Xvfb, session D-Bus, AT-SPI bus) and app;
   - a warm press (a digit) and a ``result`` press (mate-calc's solver thread and 50 ms answer timer);
   - at depth 5, ``fork()`` + its first step (a pooled window: ``clear`` + the 5 presses + the step)
     against the same state rebuilt by relaunching the app (same desktop) + replay + step, and by a
     new desktop + app + replay + step;
   - memory: the resident set of one engine's processes (Xvfb, D-Bus daemons, AT-SPI, mate-calc).
2. Rule on seeds 0..``--episodes``-1, then the other policies on seeds 0..``--others``-1 (bounded,
   the default step limit of 30 presses): wins, mean presses, decisions per second.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import gymnasium as gym

import s1gym  # noqa: F401  (registers the tasks)
from s1gym.core import BasePolicy
from s1gym.tasks.desktop.calculator import CalculatorEngine, CalculatorEnv
from s1gym.tasks.desktop.session import group_members
from s1gym.engines.base import close_pools

DEPTH5 = ("4", "2", "multiply", "1", "3")  # the state the fork measures start from: "42×13"
FIRST = "add"


def median_ms(samples: list[float]) -> str:
    return f"{1000 * statistics.median(samples):.1f} ms"


def load() -> str:
    return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg())


def rss_mib(pgid: int) -> float:
    total = 0
    for pid, _ in group_members(pgid):
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


def costs(rounds: int) -> None:
    print(f"costs ({load()} at the start)")
    cold = []
    for _ in range(rounds):
        close_pools(lambda key: key is CalculatorEnv)
        t = time.perf_counter()
        env = gym.make("s1/Calculator-v0", goal="compute 42 times 13")
        env.reset(seed=0)
        cold.append(time.perf_counter() - t)
        env.close()
    print(f"  cold start (make + reset: new desktop and app)   {median_ms(cold)}")

    env = gym.make("s1/Calculator-v0", goal="compute 42 times 13")
    press, result = [], []
    for _ in range(rounds):
        env.reset(seed=0)
        for move in DEPTH5:
            t = time.perf_counter()
            env.step_move(move)
            press.append(time.perf_counter() - t)
        t = time.perf_counter()
        env.step_move("result")
        result.append(time.perf_counter() - t)
    print(f"  press (warm, read the window after)             {median_ms(press)}  (n={len(press)})")
    print(f"  result press (solver thread + answer timer)      {median_ms(result)}  (n={len(result)})")

    env.reset(seed=0)
    for move in DEPTH5:
        env.step_move(move)
    warm = env.fork()
    warm.step_move(FIRST)  # a second window in the pool, so forks below find an idle one
    warm.close()
    forked = []
    for _ in range(rounds):
        t = time.perf_counter()
        fork = env.fork()
        fork.step_move(FIRST)
        forked.append(time.perf_counter() - t)
        assert fork.view.display == "42×13+", fork.view
        fork.close()
    engine = env.engine()
    relaunch, fresh = [], []
    spare = CalculatorEngine()
    for _ in range(rounds):
        t = time.perf_counter()
        spare.restart()
        for move in (*DEPTH5, FIRST):
            view = spare.step(move)
        relaunch.append(time.perf_counter() - t)
        assert view.display == "42×13+"
        t = time.perf_counter()
        new = CalculatorEngine()
        new.new_game(None)
        for move in (*DEPTH5, FIRST):
            view = new.step(move)
        fresh.append(time.perf_counter() - t)
        new.close()
    f, r, n = (statistics.median(x) for x in (forked, relaunch, fresh))
    print(f"  depth 5: fork + first step (clear + replay)      {1000 * f:.1f} ms")
    print(f"  depth 5: relaunch app + replay + step            {1000 * r:.1f} ms  ({r / f:.1f}x the fork)")
    print(f"  depth 5: new desktop + app + replay + step       {1000 * n:.1f} ms  ({n / f:.1f}x the fork)")
    print(f"  memory: one engine's processes                   {rss_mib(engine.session.pgid):.0f} MiB RSS")
    spare.close()
    env.close()
    print(f"  ({load()} at the end)")


def make_policy(name: str) -> BasePolicy:
    from s1gym.policies import Local, Random, Rule, Uniform

    return {"rule": Rule, "uniform": Uniform, "random": lambda: Random(seed=0), "local": Local}[name]()


def play(policy_name: str, episodes: int) -> None:
    policy = make_policy(policy_name)
    env = gym.make("s1/Calculator-v0")
    wins = presses = decisions = 0
    decide_s = 0.0
    started = time.perf_counter()
    for seed in range(episodes):
        env.reset(seed=seed)
        policy.reset()
        while not env.done:
            t = time.perf_counter()
            action = policy.decide(env.situation()).action
            decide_s += time.perf_counter() - t
            env.step(action)
            decisions += 1
        wins += env.won
        presses += env.steps
    seconds = time.perf_counter() - started
    print(
        f"  {policy_name:<8} seeds 0..{episodes - 1}: won {wins}/{episodes}, "
        f"mean presses {presses / episodes:.1f}, {decisions / seconds:.1f} decisions/s "
        f"(policy {1000 * decide_s / max(decisions, 1):.1f} ms a decision), "
        f"{seconds / episodes:.2f} s an episode"
    )
    env.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=10, help="repetitions of each cost measurement")
    ap.add_argument("--episodes", type=int, default=50, help="seeded goals for Rule")
    ap.add_argument("--others", type=int, default=20, help="seeded goals for the other policies")
    ap.add_argument("--policies", default="rule,uniform,random,local")
    ap.add_argument("--skip-costs", action="store_true")
    args = ap.parse_args()
    if "local" in args.policies:
        import torch

        torch.set_num_threads(1)
    if not args.skip_costs:
        costs(args.rounds)
    print(f"policies ({load()})")
    for name in [p.strip() for p in args.policies.split(",") if p.strip()]:
        play(name, args.episodes if name == "rule" else args.others)


if __name__ == "__main__":
    main()
