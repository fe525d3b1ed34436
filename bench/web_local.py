"""Local on the web pages (MiniWoB++): play the protocol's arms on dev and held-out seeds, and report them.

    python bench/web_local.py play --seeds 41000-41001 --arms local --json /tmp/dev.jsonl --model FILE  # dev
    python bench/web_local.py play --seeds 42000-42004 --arms random,local,rule --json docs/data/web_local_heldout.jsonl
    python bench/web_local.py report --json docs/data/web_local_heldout.jsonl
    python bench/web_local.py play --tasks search-sample --seeds 44000-44004 --arms search-local-20,search-uniform-20 --json FILE
                                  # amendment 2: Search(policy, budget=20) as the issue names it

The protocol (tasks, train/dev/test seeds, arms, targets) is bench/web_protocol.md, committed before any fit.
The model is fitted by ``python -m s1gym.tasks.web.fit`` (collect, fit; the family's folder), whose envs,
seeds and worker pool this script plays with.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from s1gym.tasks.web.fit import make_env, pool_map, rule_tasks, seeds_of

HELD_OUT_FILE = Path(__file__).resolve().parents[1] / "docs" / "data" / "web_local_heldout.jsonl"
ARMS = ("random", "local", "rule", "lookahead", "search-uniform", "search-local", "search-uniform-20",
        "search-local-20")
#: Amendment 2's guard: a game still going after this many seconds of wall time gives up at its next decision.
WALL_GUARD_S = 30 * 60
#: The protocol's search sample: the issue's five tasks and every 10th task of the sorted rule list.
ISSUE_TASKS = ("click-button", "enter-text", "choose-list", "use-autocomplete", "social-media")


def no_rule_tasks() -> list[str]:
    from s1gym.tasks.web.env import WEB_TASKS
    from s1gym.tasks.web.expert import SOLVERS

    return sorted(t for t in WEB_TASKS if t not in SOLVERS)


def search_sample() -> list[str]:
    tasks = rule_tasks()
    return sorted(set(ISSUE_TASKS) | set(tasks[::10]))


def build_policy(arm: str, model_path: str | None):
    from s1gym.policies import Local, Random, Rule, Uniform
    from s1gym.wrappers import Lookahead, Search

    def local():
        return Local(pairs=model_path, preload=False) if model_path else Local(preload=False)

    return {"random": Random, "rule": Rule, "local": local, "lookahead": lambda: Lookahead(local()),
            "search-uniform": lambda: Search(Uniform(), budget=20, episode_budget=20),
            "search-local": lambda: Search(local(), budget=20, episode_budget=20),
            # amendment 2: the issue's literal arm, 20 calls a search and every other option at its default
            "search-uniform-20": lambda: Search(Uniform(), budget=20),
            "search-local-20": lambda: Search(local(), budget=20)}[arm]()


class WallGuard:
    """Hand a policy's decisions through until a game's wall time passes ``seconds``, then give up (the
    runner ends the episode unsolved). A guard on a run's time, not part of an arm: ``capped`` says it hit."""

    def __init__(self, policy, seconds: float) -> None:
        self.policy, self.seconds = policy, seconds
        self.name = policy.name
        self.capped = False
        self._start = time.perf_counter()

    def reset(self) -> None:
        self.policy.reset()
        self._start = time.perf_counter()

    def decide(self, situation):
        from s1gym.core import Decision, Usage

        if time.perf_counter() - self._start <= self.seconds:
            return self.policy.decide(situation)
        self.capped = True
        n = len(situation.candidates)
        return Decision(np.full(n, 1.0 / n), 0, Usage(), {"note": f"wall guard: {self.seconds:.0f} s"}, give_up=True)


def play_game(job: tuple[str, int, str, str | None]) -> dict:
    task, seed, arm, model_path = job
    from s1gym.runner.episode import play_episode

    wall = time.perf_counter()
    env = make_env(task)
    env.expert_move = lambda: None  # no expert agreement here (the rule arm is the rule itself)
    policy = WallGuard(build_policy(arm, model_path), WALL_GUARD_S)
    policy.reset()
    try:
        out = play_episode(env, policy, seed)
    except Exception as exc:  # noqa: BLE001 - a game that errors is recorded as such, not a lost run
        env.close()
        return {"task": task, "seed": seed, "arm": arm, "won": False, "score": 0.0, "steps": None, "calls": None,
                "error": f"{type(exc).__name__}: {exc}"[:300], "wall_s": round(time.perf_counter() - wall, 2)}
    env.close()
    return {"task": task, "seed": seed, "arm": arm, "won": bool(out.get("won")), "score": float(out.get("score", 0.0)),
            "steps": out.get("steps"), "calls": out["usage"].calls, "wall_s": round(time.perf_counter() - wall, 2),
            "moves": [t["move"] for t in out["ticks"] if "move" in t and not t.get("gave_up")],
            "capped": policy.capped}


def cmd_play(args) -> None:
    if args.tasks == "rule":
        tasks = rule_tasks()
    elif args.tasks == "norule":
        tasks = no_rule_tasks()
    elif args.tasks == "search-sample":
        tasks = search_sample()
    else:
        tasks = args.tasks.split(",")
    path = Path(args.json)
    done = set()
    if path.exists():
        for line in path.read_text().splitlines():
            r = json.loads(line)
            done.add((r["task"], r["seed"], r["arm"]))
    jobs = [(t, s, arm, args.model) for arm in args.arms.split(",") for s in seeds_of(args.seeds) for t in tasks
            if (t, s, arm) not in done]
    print(f"{len(jobs)} games to play ({len(done)} in {path} already)", flush=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    t = time.time()
    with path.open("a") as out:
        for i, r in enumerate(pool_map(play_game, jobs, args.workers)):
            r = {**r, "model": args.model or "shipped"}
            out.write(json.dumps(r) + "\n")
            out.flush()
            if i % 25 == 0 or i == len(jobs) - 1:
                print(f"{i + 1}/{len(jobs)} played, {time.time() - t:.0f} s", flush=True)


def _median(values: list[float]) -> float | None:
    return float(np.median(values)) if values else None


def compare_search(rows: list[dict], uniform_arm: str, local_arm: str) -> None:
    """The two search arms on the games both played: wins, median calls (the issue's measure), and the
    measures amendment 2 declared beside it: the median on the games where search(uniform) called its policy
    more than once, each arm's total calls, and the games the wall guard stopped."""
    su = {(r["task"], r["seed"]): r for r in rows if r["arm"] == uniform_arm}
    sl = {(r["task"], r["seed"]): r for r in rows if r["arm"] == local_arm}
    both = sorted(set(su) & set(sl))
    if not both:
        return

    def calls(arm: dict, keys) -> list[int]:
        return [arm[k]["calls"] for k in keys if arm[k]["calls"] is not None]

    print(f"\n{uniform_arm} vs {local_arm} on the same {len(both)} games: "
          f"{sum(su[k]['won'] for k in both)}/{len(both)} vs {sum(sl[k]['won'] for k in both)}/{len(both)} won, "
          f"median calls {_median(calls(su, both))} vs {_median(calls(sl, both))}, "
          f"total calls {sum(calls(su, both))} vs {sum(calls(sl, both))}")
    busy = [k for k in both if (su[k]["calls"] or 0) > 1]
    if busy:
        print(f"  on the {len(busy)} games where {uniform_arm} called its policy more than once: median calls "
              f"{_median(calls(su, busy))} vs {_median(calls(sl, busy))}")
    capped = [(k, a) for k in both for a, arm in ((uniform_arm, su), (local_arm, sl)) if arm[k].get("capped")]
    print(f"  stopped by the wall guard: {len(capped)} {capped if capped else ''}")


def cmd_report(args) -> None:
    """Per arm: games won over the games it played (rule tasks and the tasks without a rule apart), median
    calls; the two search arms' calls on the games both played; with ``--per-task`` a row per task."""
    rows = [json.loads(line) for line in Path(args.json).read_text().splitlines()]
    if args.model:
        rows = [r for r in rows if r.get("model") == args.model]
    if args.seeds:
        keep = set(seeds_of(args.seeds))
        rows = [r for r in rows if r["seed"] in keep]
    with_rule = set(rule_tasks())
    print("| arm | tasks | games (seeds) | won | median calls (all games) | errored |\n|---|---|---|---|---|---|")
    for group, keep in (("108 tasks with a rule", lambda t: t in with_rule),
                        ("9 tasks without a rule", lambda t: t not in with_rule)):
        for arm in ARMS:
            games = [r for r in rows if r["arm"] == arm and keep(r["task"])]
            if not games:
                continue
            won = sum(r["won"] for r in games)
            seeds = sorted({r["seed"] for r in games})
            calls = _median([r["calls"] for r in games if r["calls"] is not None])
            errors = sum(1 for r in games if r.get("error"))
            print(f"| {arm} | {group}: {len({r['task'] for r in games})} | {len(games)} ({seeds[0]}-{seeds[-1]}) | "
                  f"**{won}/{len(games)}** ({won / len(games):.0%}) | {calls if calls is not None else '–'} | "
                  f"{errors} |")
    for uniform_arm, local_arm in (("search-uniform", "search-local"), ("search-uniform-20", "search-local-20")):
        compare_search(rows, uniform_arm, local_arm)
    fl = [r for r in rows if r["arm"] == "lookahead" and r["task"] == "book-flight"]
    if fl:
        print(f"\nbook-flight lookahead(local): {sum(r['won'] for r in fl)}/{len(fl)} "
              f"(seeds {sorted(r['seed'] for r in fl)})")
    if args.per_task:
        arms = [a for a in ARMS if any(r["arm"] == a for r in rows)]
        tasks = sorted({r["task"] for r in rows})
        print("\n| task | " + " | ".join(arms) + " |\n|---|" + "---|" * len(arms))
        for t in tasks:
            cells = []
            for a in arms:
                rs = [r for r in rows if r["arm"] == a and r["task"] == t]
                cells.append(f"{sum(r['won'] for r in rs)}/{len(rs)}" if rs else "–")
            print(f"| {t} | " + " | ".join(cells) + " |")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("play")
    p.add_argument("--tasks", default="rule", help="rule (the 108), norule (the 9), search-sample, or a list")
    p.add_argument("--seeds", required=True)
    p.add_argument("--arms", default="local")
    p.add_argument("--model")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--json", default=str(HELD_OUT_FILE))
    r = sub.add_parser("report")
    r.add_argument("--json", default=str(HELD_OUT_FILE))
    r.add_argument("--model")
    r.add_argument("--seeds", help="only these seeds (e.g. the new test seeds apart from the old ones)")
    r.add_argument("--per-task", action="store_true")
    args = ap.parse_args(argv)
    {"play": cmd_play, "report": cmd_report}[args.cmd](args)


if __name__ == "__main__":
    main()
