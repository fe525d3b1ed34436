"""ALFWorld-v0 costs against the raw alfworld engine, measured in the same run.

    python bench/alfworld.py            # step, reset, fork (depth 10) vs the raw engine (a few minutes)
    python bench/alfworld.py --caps     # candidate counts along every stored walkthrough (sets N)
    python bench/alfworld.py --rule N   # the expert (Rule) on the first N shared games
    python bench/alfworld.py --experts-all   # every shared game: handcoded expert, planner on its failures

Games come from ../shared/data/alfworld (S1GYM_SHARED_DATA overrides) when present, else the shipped scenes.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

# This file is named alfworld.py: keep its folder off sys.path so `import alfworld` finds the package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import gymnasium as gym

import s1gym  # noqa: F401
from s1gym.tasks.alfworld.env import find_games
from s1gym.engines.base import pool_stats

SHARED = (
    Path(os.environ.get("S1GYM_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
    / "alfworld"
)


def options() -> dict:
    if (SHARED / "json_2.1.1" / "valid_seen").is_dir():
        return {"data_dir": str(SHARED), "split": "valid_seen"}
    print("shared data absent: using the shipped scenes", file=sys.stderr)
    return {}


def raw_engine(gamefile: str):
    """The raw alfworld env as its harness builds it (PddlEnv + AlfredDemangler + AlfredInfos)."""
    import textworld
    from alfworld.agents.environment.alfred_tw_env import AlfredDemangler, AlfredInfos
    from textworld.envs.pddl import PddlEnv

    env = AlfredInfos(
        AlfredDemangler(PddlEnv(textworld.EnvInfos(won=True, admissible_commands=True)), shuffle=False)
    )
    env.load(gamefile)
    return env


def ms(xs) -> str:
    return f"{1000 * statistics.median(xs):.1f} ms"


def bench_costs(games: list[str], opts: dict) -> None:
    # Raw engine: a fresh load+reset per game (the translation is cached after the first s1gym load, so raw
    # numbers are taken first, in a process where textworld's translation is not cached yet).
    raw_reset, raw_step, raw_replay10 = [], [], []
    walks, raw_trace, trace = {}, {}, {}
    for g in games:
        walks[g] = json.loads(Path(g).read_text())["walkthrough"]
        env = raw_engine(g)
        t = time.perf_counter()
        state = env.reset()
        raw_reset.append(time.perf_counter() - t)
        raw_trace[g] = []
        t = time.perf_counter()
        for move in walks[g][:10]:
            state, _, _ = env.step(move)
            # s1gym lists no moves once the game is won (the contract), the raw engine still does.
            raw_trace[g].append(
                (state["feedback"], [] if state["won"] else list(state["admissible_commands"]))
            )
        raw_replay10.append(time.perf_counter() - t)
        raw_step.append(raw_replay10[-1] / max(1, len(walks[g][:10])))
        env.close()

    first_reset, reset, step, fork, fork_step, snap_key = [], [], [], [], [], []
    for g in games:
        game = g.split("/valid_seen/")[-1].rsplit("/", 1)[0]
        env = gym.make("s1/ALFWorld-v0", **opts, game=game, hygiene=False)  # the raw engine offers every move
        t = time.perf_counter()
        env.reset(seed=0)
        first_reset.append(time.perf_counter() - t)
        t = time.perf_counter()
        env.reset(seed=0)
        reset.append(time.perf_counter() - t)
        trace[g] = []
        for move in walks[g][:10]:
            t = time.perf_counter()
            *_, info = env.step(env.index_of(move))
            step.append(time.perf_counter() - t)
            trace[g].append((env.history[-1][1], info["candidates"]))
        t = time.perf_counter()
        f = env.fork()
        fork.append(time.perf_counter() - t)  # includes the one snapshot of this state
        t = time.perf_counter()
        f2 = env.fork()
        snap_key.append(time.perf_counter() - t)  # a second fork of the same state
        env.step(0)
        t = time.perf_counter()
        f.step(0)  # materialise: restore the snapshot into a pooled engine, then step
        fork_step.append(time.perf_counter() - t)
        f.close(), f2.close(), env.close()

    print(f"games: {len(games)}  (median over games / steps)")
    print("| measure | raw alfworld | s1gym ALFWorld-v0 | ratio |")
    print("|---|---|---|---|")
    print(
        f"| reset (first, per game) | {ms(raw_reset)} | {ms(first_reset)} | {statistics.median(first_reset) / statistics.median(raw_reset):.2f} |"
    )
    print(
        f"| reset (game seen before) | {ms(raw_reset)} | {ms(reset)} | {statistics.median(reset) / statistics.median(raw_reset):.3f} |"
    )
    print(
        f"| step (expert tracking on) | {ms(raw_step)} | {ms(step)} | {statistics.median(step) / statistics.median(raw_step):.2f} |"
    )
    print(
        f"| fork at depth 10 (snapshot) | replay 10: {ms(raw_replay10)} | {ms(fork)} | {statistics.median(fork) / statistics.median(raw_replay10):.3f} |"
    )
    print(f"| 2nd fork of the same state | | {ms(snap_key)} | |")
    print(
        f"| first step of a fork (restore + step) | reset + replay 10 + step: {ms([a + b + c for a, b, c in zip(raw_reset, raw_replay10, raw_step)])} | {ms(fork_step)} | |"
    )
    same = all(raw_trace[g] == trace[g] for g in games)
    print(f"feedback and candidates identical to the raw engine on every step: {same}")
    print(f"engine pools: {alfworld_pools()}")


def alfworld_pools() -> dict:
    return {k: v for k, v in pool_stats().items() if isinstance(k, tuple) and k[0] == "alfworld"}


def alfworld_restores() -> int:
    return sum(v["restores"] for v in alfworld_pools().values())


def bench_caps(opts: dict) -> None:
    from s1gym.tasks.alfworld.engine import import_engine

    import_engine()  # the raw engine with s1gym's parse caches (same outputs, see bench_costs): faster
    games = find_games(opts["data_dir"], opts["split"]) if opts else gym.make("s1/ALFWorld-v0").games
    top = []
    for g in games:
        env = raw_engine(g)
        state = env.reset()
        counts = [len(state["admissible_commands"])]
        for move in json.loads(Path(g).read_text())["walkthrough"]:
            state, _, _ = env.step(move)
            counts.append(len(state["admissible_commands"]))
        top.append((max(counts), g))
        env.close()
    top.sort()
    print(f"max admissible commands along the walkthroughs of {len(top)} games: {top[-1][0]} ({top[-1][1]})")
    print("median of per-game max:", statistics.median(c for c, _ in top))


def bench_rule(opts: dict, n: int) -> None:
    env = gym.make("s1/ALFWorld-v0", **opts, hygiene=False)  # every move the expert may name
    wins, t = 0, time.perf_counter()
    for i in range(min(n, len(env.games))):
        env.reset(options={"game": i})
        info = {}
        while not env.done:
            _, _, _, _, info = env.step(env.index_of(env.expert_action()))
        wins += bool(info.get("won"))
    print(
        f"Rule (handcoded expert, step limit {env.max_steps}): {wins}/{n} won in {time.perf_counter() - t:.0f} s"
    )


def play_expert(opts: dict, game: str, expert: str, max_steps: int) -> dict:
    """One game played by one of the env's experts: won, steps, seconds, and the handcoded expert's notes."""
    env = gym.make("s1/ALFWorld-v0", **opts, game=game, expert=expert, max_steps=max_steps, hygiene=False)
    t = time.perf_counter()
    _, info = env.reset(seed=0)
    while not env.done:
        _, _, _, _, info = env.step(env.index_of(env.expert_action()))
    out = {
        "won": bool(info.get("won")),
        "steps": env.steps,
        "seconds": round(time.perf_counter() - t, 1),
        "notes": dict(env.unwrapped._tracker.notes) if env.unwrapped._tracker is not None else {},
    }
    env.close()
    return out


def bench_experts_all(
    opts: dict, limit: int, long_limit: int, planner_limit: int, planner_timeout: float
) -> None:
    """Every game of the split: the handcoded expert (limit and long_limit), then the planner on the rest.

    The handcoded expert plays once with ``long_limit`` steps; its trajectory does not depend on the
    limit, so "won within ``limit``" is "won in at most ``limit`` steps". The planner plays each game
    the handcoded expert loses within ``limit`` in a child process killed after ``planner_timeout``
    seconds (Fast Downward runs in C: it cannot be interrupted in-process).
    """
    import subprocess

    games = (
        list(find_games(opts["data_dir"], opts["split"])) if opts else list(gym.make("s1/ALFWorld-v0").games)
    )
    print(f"| # | game | handcoded | steps | s | planner (limit {planner_limit}) | steps | s | notes |")
    print("|---|---|---|---|---|---|---|---|---|")
    hc_short = hc_long = pl_wins = union = 0
    hc_time = pl_time = 0.0
    for i, g in enumerate(games):
        name = "/".join(Path(g).parts[-3:-1])
        hc = play_expert(opts, name, "handcoded", long_limit)
        hc_time += hc["seconds"]
        short = hc["won"] and hc["steps"] <= limit
        hc_short += short
        hc_long += hc["won"]
        row = f"| {i} | {name[:60]} | {'won' if short else ('won late' if hc['won'] else 'lost')} | {hc['steps']} | {hc['seconds']} |"
        pl_won = False
        if short:
            row += " | | |"
        else:
            t = time.perf_counter()
            try:
                out = subprocess.run(
                    [sys.executable, __file__, "--planner-game", name, "--planner-limit", str(planner_limit)]
                    + (["--shipped"] if not opts else []),
                    capture_output=True,
                    text=True,
                    timeout=planner_timeout,
                    check=False,
                )
                res = json.loads(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 else None
            except subprocess.TimeoutExpired:
                res = None
            dt = time.perf_counter() - t
            pl_time += dt
            if res is None:
                row += f" timeout/error | | {dt:.0f} |"
            else:
                pl_won = res["won"]
                pl_wins += pl_won
                row += f" {'won' if pl_won else 'lost'} | {res['steps']} | {res['seconds']} |"
        union += short or pl_won
        notes = ", ".join(f"{k} {v}" for k, v in sorted(hc["notes"].items()))
        print(row + f" {notes} |", flush=True)
    n = len(games)
    print(
        f"\nhandcoded expert: {hc_short}/{n} won within {limit} steps, {hc_long}/{n} within {long_limit} ({hc_time:.0f} s)"
    )
    print(
        f"planner expert on the {n - hc_short} others (limit {planner_limit} steps, {planner_timeout:.0f} s cap): {pl_wins} won ({pl_time:.0f} s)"
    )
    print(f"union (handcoded within {limit} or planner): {union}/{n}")


def bench_policies(opts: dict, n: int, budget: int, names: list[str]) -> None:
    """Policies on games spread over the split (stride 11, the harness's), hygiene on, a fixed search budget."""
    from s1gym.policies import Random, Rule, Uniform
    from s1gym.wrappers import Lookahead, Search

    def local():
        from s1gym.policies.local import Local

        return Local()

    makers = {
        "rule": lambda: Rule(),
        "random": lambda: Random(seed=0),
        "search-uniform": lambda: Search(Uniform(), budget=budget),
        "lookahead-local": lambda: Lookahead(local()),
        "search-lookahead-local": lambda: Search(Lookahead(local()), budget=budget),
    }
    for name in names:
        env = gym.make("s1/ALFWorld-v0", **opts, stride=11 if opts else 1, hygiene=(name != "rule"))
        policy = makers[name]()
        wins, steps, t = 0, 0, time.perf_counter()
        restores0 = alfworld_restores()
        for seed in range(n):
            env.reset(seed=seed)
            policy.reset()
            info = {}
            while not env.done:
                decision = policy.decide(env.situation())
                _, _, _, _, info = env.step(decision.action)
            wins += bool(info.get("won"))
            steps += env.steps
        dt = time.perf_counter() - t
        print(
            f"| {name} | {wins}/{n} | {steps / n:.1f} | {dt / max(1, steps):.2f} s | {alfworld_restores() - restores0} |",
            flush=True,
        )
        env.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--caps", action="store_true")
    parser.add_argument("--rule", type=int, default=0)
    parser.add_argument("--games", type=int, default=6)
    parser.add_argument(
        "--shipped", action="store_true", help="use the shipped scenes even when shared data exists"
    )
    parser.add_argument(
        "--policies", default="", help="comma list: rule,random,search-uniform,lookahead-local,..."
    )
    parser.add_argument("--episodes", type=int, default=6)
    parser.add_argument("--budget", type=int, default=50)
    parser.add_argument(
        "--experts-all", action="store_true", help="every game: handcoded, planner on failures"
    )
    parser.add_argument("--limit", type=int, default=50, help="step limit counted as a win (--experts-all)")
    parser.add_argument(
        "--long-limit", type=int, default=200, help="handcoded expert's own limit (alfworld: 200)"
    )
    parser.add_argument("--planner-limit", type=int, default=50)
    parser.add_argument("--planner-timeout", type=float, default=300.0, help="seconds per planner game")
    parser.add_argument("--planner-game", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    opts = {} if args.shipped else options()
    if args.planner_game:
        return print(json.dumps(play_expert(opts, args.planner_game, "planner", args.planner_limit)))
    if args.experts_all:
        return bench_experts_all(opts, args.limit, args.long_limit, args.planner_limit, args.planner_timeout)
    if args.policies:
        print("| policy | won | mean steps | s per step | snapshot restores |\n|---|---|---|---|---|")
        return bench_policies(opts, args.episodes, args.budget, args.policies.split(","))
    if args.caps:
        return bench_caps(opts)
    if args.rule:
        return bench_rule(opts, args.rule)
    all_games = (
        list(find_games(opts["data_dir"], "valid_seen")) if opts else list(gym.make("s1/ALFWorld-v0").games)
    )
    step = max(1, len(all_games) // args.games)
    bench_costs(all_games[::step][: args.games], opts)


if __name__ == "__main__":
    main()
