"""Rethink offline (issue 54): does Rethink with the fork planner win games where plain Local stalls?

    nice -n 10 python bench/rethink_offline.py play --seeds 800-829,830-859      # appends to --json
    python bench/rethink_offline.py report                                      # the table (docs/benchmarks.md)
    nice -n 10 python bench/rethink_offline.py play --fold dev --seeds 0-9      # a dev check
    nice -n 10 python bench/rethink_offline.py play --task ALFWorld --fold scenes --seeds 0-5

Arms (the same seeds for each, every game played once): ``local``, ``rethink`` (``Rethink(Local())``, no
planner), ``rethink-best`` (no planner, ``progress="best"``: what the planner arm counts as progress),
``rethink-search`` (``Rethink(Local(), planner="search")``, ``plan_budget`` 50) and ``search``
(``Search(Local(), episode_budget=1000)``, the TWX protocol's Search arm; 150 on ALFWorld, its protocol's). The protocol is in
docs/benchmarks.md, section "Rethink offline (issue 54)". Results, one line a game, in --json
(default docs/data/rethink_offline.jsonl); the calls are the decision model's (inner-policy) calls of the
episode, planning included.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

# bench/alfworld.py would shadow the alfworld package the ALFWorld engine imports
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

ARMS = ("local", "rethink", "rethink-best", "rethink-search", "search")
RESULTS = Path(__file__).resolve().parents[1] / "docs" / "data" / "rethink_offline.jsonl"


#: Search's calls a game: the TWX protocol's 1000; ALFWorld's protocol's 150 (a lost ALFWorld search costs minutes)
EPISODE_BUDGET = {"ALFWorld": 150}


def build(arm: str, task: str = "TWC"):
    from s1gym.policies import Local
    from s1gym.wrappers import Rethink, Search

    if arm == "local":
        return Local(preload=False)
    if arm == "rethink":
        return Rethink(Local(preload=False))
    if arm == "rethink-best":  # no planner, but only a new best score counts as progress (as with the planner)
        return Rethink(Local(preload=False), progress="best")
    if arm == "rethink-search":
        return Rethink(Local(preload=False), planner="search")
    if arm == "search":
        return Search(Local(preload=False), episode_budget=EPISODE_BUDGET.get(task, 1000))
    raise ValueError(f"unknown arm {arm!r}; choose from {', '.join(ARMS)}")


def play(job: tuple[str, str, int, str]) -> dict:
    task, fold, seed, arm = job
    from s1gym.runner.episode import play_episode

    if task == "ALFWorld":  # the scenes s1gym ships (no fold), default options, no expert tracking
        import gymnasium as gym

        import s1gym  # noqa: F401

        env = gym.make("s1/ALFWorld-v0", expert=None).unwrapped
    else:
        from s1gym.tasks.twx.fit import make_env

        env = make_env(task, "default", seed, fold)
    env.expert_move = lambda: None  # no expert agreement: it replans every step
    policy = build(arm, task)
    policy.reset()
    t0 = time.perf_counter()
    out = play_episode(env, policy, seed)
    env.close()
    plans = found = 0
    for e in getattr(policy, "log", []):
        if "planner" in e:
            plans += 1
            found += bool(e.get("plan"))
    return {"task": task, "fold": fold, "seed": seed, "arm": arm, "won": bool(out.get("won")),
            "score": float(out.get("score", 0.0)), "steps": out.get("steps"), "calls": out["usage"].calls,
            "plans": plans, "plans_found": found, "wall_s": round(time.perf_counter() - t0, 2)}


def _seeds(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out += list(range(int(lo), int(hi or lo) + 1))
    return out


def cmd_play(args) -> None:
    path = Path(args.json)
    done = set()
    if path.exists():
        for line in path.read_text().splitlines():
            r = json.loads(line)
            done.add((r["task"], r["fold"], r["seed"], r["arm"]))
    jobs = [(args.task, args.fold, s, a) for a in args.arms.split(",") for s in _seeds(args.seeds)
            if (args.task, args.fold, s, a) not in done]
    print(f"{len(jobs)} games to play", flush=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as f:
        for job in jobs:
            r = play(job)
            f.write(json.dumps(r) + "\n")
            f.flush()
            print(json.dumps(r), flush=True)


def cmd_report(args) -> None:
    rows = [json.loads(line) for line in Path(args.json).read_text().splitlines()]
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["task"], r["fold"], _range_of(r), r["arm"]), []).append(r)
    print("| task | seeds | arm | won | mean score | calls a game (mean · median) | plans (found) | s a game |")
    print("|---|---|---|---|---|---|---|---|")
    order = {a: i for i, a in enumerate(ARMS)}
    for (task, fold, rng, arm), rs in sorted(groups.items(), key=lambda kv: (kv[0][:3], order.get(kv[0][3], 9))):
        calls = [r["calls"] for r in rs]
        plans = sum(r["plans"] for r in rs)
        found = sum(r["plans_found"] for r in rs)
        print(f"| {task} | {fold} {rng} | {arm} | {sum(r['won'] for r in rs)}/{len(rs)} | "
              f"{np.mean([r['score'] for r in rs]):.3f} | {np.mean(calls):.1f} · {np.median(calls):g} | "
              f"{plans} ({found}) | {np.mean([r['wall_s'] for r in rs]):.2f} |")


def _range_of(r: dict) -> str:
    """The seed block a game belongs to: blocks of 30 from 800 on the test fold, ALFWorld's six scenes, else
    blocks of 10."""
    s = r["seed"]
    if r["fold"] == "test" and s >= 800:
        lo = 800 + (s - 800) // 30 * 30
        return f"{lo}-{lo + 29}"
    if r["task"] == "ALFWorld":
        return "0-5"
    lo = s // 10 * 10
    return f"{lo}-{lo + 9}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("play")
    p.add_argument("--task", default="TWC")
    p.add_argument("--fold", default="test")
    p.add_argument("--seeds", default="800-829,830-859")
    p.add_argument("--arms", default=",".join(ARMS))
    p.add_argument("--json", default=str(RESULTS))
    r = sub.add_parser("report")
    r.add_argument("--json", default=str(RESULTS))
    args = ap.parse_args()
    {"play": cmd_play, "report": cmd_report}[args.cmd](args)


if __name__ == "__main__":
    main()
