"""The web tasks (MiniWoB++ in Chromium through Playwright): success per policy, candidate caps, overheads.

    python bench/web.py --policies               # the representative subset x six policies (docs/benchmarks.md)
    python bench/web.py --caps --seeds 20        # candidate counts N per curated task (random and rule play)
    python bench/web.py --overhead               # s1gym step vs a bare Playwright script; fork vs fresh page
    python bench/web.py --workers                # steps per second with 1 and 2 worker processes

Protocol of --policies (fixed before any result was seen): tasks click-button, enter-text, choose-list,
use-autocomplete, social-media, book-flight (one click, typing, a select list, the page's own suggestions,
~35 candidates of icons named by their post, and the 8-10 move flights job); seeds 0..S-1 (--seeds,
default 10); policies Random (seeded per episode), Uniform, Local, Lookahead(Local),
Search(Local) (budget 20 inner calls a search, 100 an episode, phs_h) and Rule. Latencies are wall
clock on a shared machine: ratios measured in the same run are what to compare.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import gymnasium as gym

import s1gym
from s1gym.engines import browser
from s1gym.engines.base import pool_stats
from s1gym.tasks.web.engine import WebEngine, WebGame
from s1gym.tasks.web.env import WEB_TASKS
from s1gym.tasks.web.expert import SOLVERS

SUBSET = ["click-button", "enter-text", "choose-list", "use-autocomplete", "social-media", "book-flight"]
POLICIES = [
    ("Random", "random", []),
    ("Uniform", "uniform", []),
    ("Local", "local", []),
    ("Lookahead(Local)", "local", ["lookahead"]),
    ("Search(Local)", "local", ["search"]),
    ("Rule", "rule", []),
]
SEARCH = {"budget": 20, "wrapper_options": {"episode_budget": 100}}


def run_policies(tasks: list[str], seeds: int, out: Path, only: list[str] | None) -> list[dict]:
    rows = []
    for task in tasks:
        for label, policy, wrappers in POLICIES:
            if only and label not in only:
                continue
            if policy == "rule" and task not in SOLVERS:
                continue
            extra = SEARCH if "search" in wrappers else {}
            start = time.perf_counter()
            summary = s1gym.evaluate(
                "MiniWoB",
                policy,
                wrappers=wrappers,
                episodes=seeds,
                seed=0,
                options={"task": task},
                out=out,
                job=f"{task}-{label}".replace("(", "_").replace(")", ""),
                **extra,
            )
            wall = time.perf_counter() - start
            steps = summary.get("mean_steps") or 0.0
            row = {
                "task": task,
                "policy": label,
                "episodes": summary["episodes"],
                "errors": summary["errors"],
                "success": summary["wins"] / seeds,
                "mean_steps": steps,
                "s_per_step": wall / max(1.0, steps * summary["scored"]),
                "decision_s": summary["mean_latency_s"],
                "calls": summary.get("calls"),
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def caps(seeds: int) -> None:
    """Most candidates met per task, playing Random and (where there is one) the rule to the end."""
    import numpy as np

    for task, spec in WEB_TASKS.items():
        env = gym.make("s1/MiniWoB-v0", task=task, max_candidates=1000)
        most, steps, start = 0, 0, time.perf_counter()
        for seed in range(seeds):
            for player in ("random", "rule"):
                if player == "rule" and task not in SOLVERS:
                    continue
                env.reset(seed=seed)
                rng = np.random.default_rng(seed)
                most = max(most, len(env.candidates))
                while not env.done and env.candidates:
                    try:
                        move = env.rule_action() if player == "rule" else env.candidates[rng.integers(len(env.candidates))]
                    except LookupError:
                        break
                    env.step_move(move)
                    steps += 1
                    most = max(most, len(env.candidates))
        env.close()
        flag = "" if most <= spec.max_candidates else "  <-- over the cap"
        print(f"{task:24s} most {most:3d}  cap {spec.max_candidates:3d}  ({steps} steps, "
              f"{(time.perf_counter() - start) / max(steps, 1):.3f} s/step){flag}", flush=True)


# ------------------------------------------------------------------ overheads
def bare_login(page, seed: str) -> None:
    """login-user as a bare Playwright script: load, seed, start, type both fields, click, read the reward."""
    from s1gym.tasks.web.engine import task_url

    page.goto(task_url("login-user"))
    utterance = page.evaluate(
        "(seed) => { core.EPISODE_MAX_TIME = 2147483647; Math.seedrandom(seed); core.startEpisodeReal(); "
        "return core.getUtterance(); }",
        seed,
    )
    from miniwob.fields import get_field_extractor

    fields = dict(get_field_extractor("login-user")(utterance))
    page.locator("#username").fill(fields["username"])
    page.locator("#password").fill(fields["password"])
    page.locator("#subbtn").click()
    assert page.evaluate("WOB_RAW_REWARD_GLOBAL") == 1


def overhead(reps: int) -> None:
    env = gym.make("s1/MiniWoB-v0", task="login-user")
    env.reset(seed=0)
    bare_key = browser.hold(overhead)
    bare_browser = browser.browser()
    _, page = bare_browser.new_page()
    s1_times, bare_times = [], []
    for i in range(reps):  # alternate so both see the same machine load
        t = time.perf_counter()
        env.reset(seed=i)
        while not env.done:
            env.step_move(env.rule_action())
        assert env.won
        s1_times.append(time.perf_counter() - t)
        t = time.perf_counter()
        bare_login(page, str(i))
        bare_times.append(time.perf_counter() - t)
    s1, bare = statistics.median(s1_times), statistics.median(bare_times)
    print(f"login-user episode (load + 3 moves), median of {reps} (warm): s1gym {s1 * 1000:.0f} ms, "
          f"bare Playwright {bare * 1000:.0f} ms, ratio {s1 / bare:.2f}x")

    # fork + first step at depth 5 against a fresh page + replay of the same 5 moves and the step
    flights = gym.make("s1/Flights-v0")
    fork_times, fresh_times = [], []
    for i in range(reps):
        flights.reset(seed=i)
        for _ in range(5):
            flights.step_move(flights.rule_action())
        move = flights.rule_action()
        moves = tuple(m for m, _ in flights.history)
        t = time.perf_counter()
        fork = flights.fork()
        fork.step_move(move)
        fork_times.append(time.perf_counter() - t)
        fork.close()
        t = time.perf_counter()
        engine = WebEngine()
        engine.replay(WebGame("book-flight", str(i)), moves)
        engine.step(move)
        fresh_times.append(time.perf_counter() - t)
        engine.close()
    f, r = statistics.median(fork_times), statistics.median(fresh_times)
    print(f"book-flight fork + first step at depth 5, median of {reps}: {f * 1000:.0f} ms; fresh page + replay "
          f"+ step {r * 1000:.0f} ms; ratio {f / r:.2f}x")
    print("pools:", pool_stats())
    flights.close()
    env.close()
    browser.let_go(overhead, bare_key)


def workers(episodes: int) -> None:
    out = Path(tempfile.mkdtemp(prefix="s1gym-bench-web-"))
    for k in (1, 2):
        t = time.perf_counter()
        summary = s1gym.evaluate(
            "MiniWoB", "rule", episodes=episodes, seed=0, options={"task": "click-checkboxes"}, out=out,
            job=f"workers-{k}", workers=k,
        )
        wall = time.perf_counter() - t
        steps = summary["mean_steps"] * episodes
        print(f"workers={k}: {episodes} click-checkboxes episodes (rule), {steps:.0f} steps in {wall:.1f} s "
              f"= {steps / wall:.2f} steps/s (cold: includes process and browser start)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--policies", action="store_true")
    parser.add_argument("--caps", action="store_true")
    parser.add_argument("--overhead", action="store_true")
    parser.add_argument("--workers", action="store_true")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--tasks", nargs="*", default=SUBSET)
    parser.add_argument("--only", nargs="*", help="policy labels to run (default all six)")
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "s1gym-bench-web"))
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    if args.caps:
        caps(args.seeds)
    if args.overhead:
        overhead(args.reps)
    if args.workers:
        workers(args.seeds)
    if args.policies:
        rows = run_policies(args.tasks, args.seeds, Path(args.out), args.only)
        print("\n| task | policy | success | mean steps | s/step (wall, env + decision) | errors |")
        print("|---|---|---|---|---|---|")
        for r in rows:
            print(f"| {r['task']} | {r['policy']} | {r['success']:.2f} | {r['mean_steps']:.1f} | "
                  f"{r['s_per_step']:.2f} | {r['errors']} |")
    if not (args.caps or args.overhead or args.workers or args.policies):
        parser.print_help()


if __name__ == "__main__":
    sys.exit(main())
