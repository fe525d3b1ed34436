"""Search on CookingWorld: how many games each priority and inner policy solves.

    python bench/search_cooking.py --protocol held-out --policies local,uniform   # the reported protocol
    python bench/search_cooking.py --fold train --sizes small,medium,large --games 40   # tuning (train fold only)
    python bench/search_cooking.py --sizes small --seeds 2,3 --policies local --budget 200

Protocol of the reported numbers (chosen and written down on 2026-11-30, before any of these games was
played; everything tuned since was tuned on the *train* fold only, seeds 0-39 of each size):

- held-out games: CookingWorld **test fold, seeds 500-549** of each size (small, medium, large: 150
  games), and the "hard" setting (``num_locations=11, num_ingredients=5, num_distractors=10,
  include_doors=True``) on test-fold seeds 500-549 (50 games). Seeds 0-9, which the first reports
  used, are not among them;
- each game is played to its end with ``Search(policy, priority=..., budget=100, episode_budget=1000)``
  (at most 1000 inner-policy calls a game, 100 a search, everything else at its default), the policy
  ``local`` (the offline model) or ``uniform`` (flat odds), the priorities ``phs_h`` (default),
  ``levin`` and ``phs*``;
- reported per (policy, priority, size): games won, median calls over won games, and the failures
  by shape.

Games are played in ``--workers`` processes (default 1); per game the bench records won, calls,
moves, the gold path's length, expansions and seconds (``--json`` appends one line per game).
Policies: ``uniform`` (flat odds), ``local`` (the offline sentence-embedding model),
``lookahead-local`` (``Search(Lookahead(Local()))``) and ``rule`` (the gold-path expert).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import asdict, dataclass

import gymnasium as gym

import s1gym  # noqa: F401  (registers the envs)
from s1gym.wrappers import PRIORITIES, Lookahead, Search

POLICIES = ("uniform", "local", "lookahead-local", "rule")
SIZES = ("small", "medium", "large", "hard")
#: gym.make options per size; "hard" is the issue's setting with doors.
SIZE_OPTIONS = {
    "small": {"size": "small"},
    "medium": {"size": "medium"},
    "large": {"size": "large"},
    "hard": {"num_locations": 11, "num_ingredients": 5, "num_distractors": 10, "include_doors": True},
}
#: The reported protocol (see the module docstring): test-fold seeds 500-549 of every size.
HELD_OUT_SEEDS = list(range(500, 550))


@dataclass
class Game:
    policy: str
    priority: str
    size: str
    seed: int
    solved: bool
    calls: int
    moves: int
    gold: int
    expansions: int
    seconds: float
    #: failure shape: the final score, the calls spent when the score last rose, and the moves played
    #: after it (a walk back and forth between rooms shows as many moves and no gain)
    score: float = 0.0
    last_gain_calls: int = 0
    moves_after_last_gain: int = 0


def make_policy(name: str):
    from s1gym.policies import Local, Rule, Uniform

    if name == "uniform":
        return Uniform()
    if name == "rule":
        return Rule()
    if name == "local":
        return Local()
    if name == "lookahead-local":
        return Lookahead(Local())
    raise SystemExit(f"unknown policy {name!r}; choose from {', '.join(POLICIES)}")


def play(
    policy_name: str,
    priority: str,
    size: str,
    seed: int,
    budget: int,
    h_scale: float = 10.0,
    epsilon: float = 0.1,
    search_budget: int = 100,
    until_gain: bool = False,
    fold: str = "test",
    options: dict | None = None,
) -> Game:
    env = gym.make("s1/CookingWorld-v0", **SIZE_OPTIONS[size], fold=fold)
    env.reset(seed=seed)
    gold = len(env.gold_path())
    search = Search(make_policy(policy_name), budget=min(search_budget, budget), episode_budget=budget,
                    priority=priority, h_scale=h_scale, epsilon=epsilon, until_gain=until_gain, **(options or {}))
    search.reset()
    expansions = 0
    best, last_gain_calls, last_gain_step = env.score, 0, 0
    started = time.perf_counter()
    while not env.done:
        d = search.decide(env.situation())
        if d.give_up:
            break
        expansions += d.info["expansions"]
        env.step(d.action)
        if env.score > best:
            best, last_gain_calls, last_gain_step = env.score, search.episode_calls, env.steps
    seconds = time.perf_counter() - started
    game = Game(policy_name, priority, size, seed, bool(env.won), search.episode_calls, env.steps, gold, expansions,
                seconds, float(env.score), last_gain_calls, env.steps - last_gain_step)
    env.close()
    return game


def engine_costs(size: str) -> tuple[float, float]:
    """Raw env step and fork+first-step cost (ms) along a gold path, this run, this machine."""
    env = gym.make("s1/CookingWorld-v0", **SIZE_OPTIONS[size], fold="test")
    env.reset(seed=0)
    path = env.gold_path()
    t = time.perf_counter()
    for move in path:
        if env.done:
            break
        env.step(env.index_of(move))
    step_ms = 1000 * (time.perf_counter() - t) / max(1, env.steps)
    env.reset(seed=0)
    for move in path[: len(path) // 2]:
        env.step(env.index_of(move))
    t = time.perf_counter()
    n = len(env.candidates)
    for i in range(n):
        env.fork().step(i)
    fork_ms = 1000 * (time.perf_counter() - t) / n
    env.close()
    return step_ms, fork_ms


def _play_one(job: tuple) -> Game:
    return play(*job)


def _play_all(jobs: list[tuple], workers: int):
    """The games, in order, played in ``workers`` spawned processes (each with its own JVM)."""
    if workers <= 1:
        yield from map(_play_one, jobs)
        return
    import multiprocessing as mp

    with mp.get_context("spawn").Pool(workers) as pool:
        yield from pool.imap(_play_one, jobs)


def median(values: list[float]) -> str:
    return f"{statistics.median(values):.0f}" if values else "-"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="small,medium", help=f"comma-separated, from {','.join(SIZES)}")
    ap.add_argument("--games", type=int, default=5, help="games per size (test-fold seeds 0..games-1)")
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--priorities", default="phs_h", help=f"comma-separated, from {','.join(PRIORITIES)}")
    ap.add_argument("--policies", default="uniform", help=f"comma-separated, from {','.join(POLICIES)}")
    ap.add_argument("--budget", type=int, default=1000, help="inner-policy calls per game")
    ap.add_argument("--search-budget", type=int, default=100, help="inner-policy calls per search (within --budget)")
    ap.add_argument("--until-gain", action="store_true", help="Search(until_gain=True): hill-climb on the score")
    ap.add_argument("--h-scale", type=float, default=10.0, help="Search's h_scale (h = h_scale * (1 - score))")
    ap.add_argument("--epsilon", type=float, default=0.1, help="Search's share of flat odds mixed into the policy")
    ap.add_argument("--seeds", help="explicit comma-separated seeds (instead of --first-seed/--games)")
    ap.add_argument("--fold", default="test", choices=("train", "dev", "test"), help="TWX fold (tune on train)")
    ap.add_argument("--protocol", choices=("held-out",), help="held-out: test fold, seeds 500-549, every size")
    ap.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                    help="extra Search option (JSON value), e.g. --option novelty=false")
    ap.add_argument("--workers", type=int, default=1, help="games played in this many processes")
    ap.add_argument("--json", help="append one JSON line per game to this file")
    args = ap.parse_args(argv)
    if args.protocol == "held-out":
        args.fold, args.seeds, args.sizes = "test", ",".join(map(str, HELD_OUT_SEEDS)), ",".join(SIZES)
    options = {k: json.loads(v) for k, _, v in (o.partition("=") for o in args.option)}
    sizes = [s for s in args.sizes.split(",") if s]
    priorities = [p for p in args.priorities.split(",") if p]
    policies = [p for p in args.policies.split(",") if p]
    for p in priorities:
        if p not in PRIORITIES:
            raise SystemExit(f"unknown priority {p!r}; choose from {', '.join(PRIORITIES)}")
    for s in sizes:
        if s not in SIZES:
            raise SystemExit(f"unknown size {s!r}; choose from {', '.join(SIZES)}")

    if args.seeds:
        seeds = [int(x) for x in args.seeds.split(",") if x.strip()]
    else:
        seeds = list(range(args.first_seed, args.first_seed + args.games))
    print(f"# CookingWorld {args.fold} fold, seeds {seeds[0]}..{seeds[-1]} ({len(seeds)}), cap {args.budget} "
          f"policy calls per game, h_scale {args.h_scale}, epsilon {args.epsilon}, "
          f"at most {args.search_budget} per search, until_gain {args.until_gain}, options {options}")
    step_costs: dict[str, float] = {}
    for size in sizes:
        step_ms, fork_ms = engine_costs(size)
        step_costs[size] = step_ms
        print(f"# engine ({size}): step {step_ms:.2f} ms, fork + first step mid-game {fork_ms:.2f} ms "
              f"({fork_ms / step_ms:.1f}x a step)")
    print()
    header = "| policy | priority | size | solved | median calls | median plan (gold) | ms / expansion | x step |"
    print(header)
    print("|---" * (header.count("|") - 1) + "|")
    totals: dict[tuple[str, str], int] = {}
    for policy in policies:
        for priority in priorities:
            for size in sizes:
                games = []
                jobs = [(policy, priority, size, seed, args.budget, args.h_scale, args.epsilon, args.search_budget,
                         args.until_gain, args.fold, options) for seed in seeds]
                for g in _play_all(jobs, args.workers):
                    games.append(g)
                    if args.json:
                        with open(args.json, "a") as fh:
                            fh.write(json.dumps(asdict(g)) + "\n")
                    print(f"  {policy} {priority} {size} seed {g.seed}: {'won' if g.solved else 'lost'} "
                          f"calls {g.calls} moves {g.moves} gold {g.gold} {g.seconds:.1f}s", file=sys.stderr)
                solved = [g for g in games if g.solved]
                exp = sum(g.expansions for g in games)
                per_exp = 1000 * sum(g.seconds for g in games) / max(1, exp)
                totals[(policy, priority)] = totals.get((policy, priority), 0) + len(solved)
                print(
                    f"| {policy} | {priority} | {size} | {len(solved)}/{len(games)} | "
                    f"{median([g.calls for g in solved])} | {median([g.moves for g in solved])} "
                    f"({median([g.gold for g in solved])}) | {per_exp:.1f} | "
                    f"{per_exp / step_costs[size]:.0f} |",
                    flush=True,
                )
    print()
    for (policy, priority), n in totals.items():
        print(f"# {policy} {priority}: solved {n}/{len(seeds) * len(sizes)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
