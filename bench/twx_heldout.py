"""The TextWorldExpress protocol's held-out games (bench/twx_protocol.md), played with the shipped models.

    python bench/twx_heldout.py heldout --workers 2   # the protocol's test games, shipped models (resumable)
    python bench/twx_heldout.py report                # their tables (docs/benchmarks.md)
    python bench/twx_heldout.py ranks --fold dev      # TWC: where the embedder ranks the places the expert puts

The models are fitted and selected by ``python -m s1gym.tasks.twx.fit`` (:mod:`s1gym.tasks.twx.fit`); this
script only plays them (its arms: :func:`s1gym.tasks.twx.fit_play.build_policy`) and tabulates the results,
kept in docs/data/twx_heldout.jsonl.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from s1gym.models.collect import pool_map
from s1gym.tasks.twx.fit import SETTINGS, make_env
from s1gym.tasks.twx.fit_play import play_game

#: The protocol's held-out games (bench/twx_protocol.md): (task, setting, seeds).
HELD_OUT = [("CookingWorld", s, range(700, 750)) for s in ("small", "medium", "large", "hard")] + [
    (t, "default", range(700, 730))
    for t in ("CoinCollector", "MapReader", "TWC", "Arithmetic", "Sorting", "SimonSays", "PeckingOrder")]
#: The protocol's arms, cheapest first (so a run cut short still has whole tables for them).
ARMS = ("random", "local", "lookahead", "search-local", "search-uniform")
#: Arms that are not the protocol's but say what its numbers mean (``--arms rule``: the expert's wins).
EXTRA_ARMS = ("rule",)
HELD_OUT_FILE = Path(__file__).resolve().parents[1] / "docs" / "data" / "twx_heldout.jsonl"


def cmd_heldout(args) -> None:
    """Play the protocol's held-out games with the shipped models (resumable: games already in the file are
    not played again)."""
    path = Path(args.json)
    done = set()
    if path.exists():
        for line in path.read_text().splitlines():
            r = json.loads(line)
            done.add((r["task"], r["setting"], r["seed"], r["arm"]))
    arms = args.arms.split(",")
    tasks = set(args.tasks.split(",")) if args.tasks else None
    jobs = [(task, setting, seed, "test", arm, None) for arm in arms for task, setting, seeds in HELD_OUT
            for seed in seeds if (tasks is None or task in tasks) and (task, setting, seed, arm) not in done]
    print(f"{len(jobs)} games to play ({len(done)} in {path} already)", flush=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as out:
        for i, r in enumerate(pool_map(play_game, jobs, args.workers)):
            out.write(json.dumps(r) + "\n")
            out.flush()
            if i % 25 == 0:
                print(f"{i + 1}/{len(jobs)} played", flush=True)


def cmd_report(args) -> None:
    """Markdown tables of a results file, one row per game and setting, one column per arm: games won and
    the median inner-policy calls over the games won; then the mean seconds of play a game."""
    rows: dict[tuple[str, str], dict[str, list[dict]]] = {}
    for line in Path(args.json).read_text().splitlines():
        r = json.loads(line)
        rows.setdefault((r["task"], r["setting"]), {}).setdefault(r["arm"], []).append(r)
    arms = [a for a in ARMS + EXTRA_ARMS if any(a in by_arm for by_arm in rows.values())]

    def cell(rs: list[dict] | None, seconds: bool) -> str:
        if not rs:
            return "–"
        if seconds:
            return f"{np.mean([r['play_s'] for r in rs]):.2f}"
        won = sorted(r["calls"] for r in rs if r["won"])
        return f"{len(won)}/{len(rs)} · {won[len(won) // 2] if won else '–'}"

    for seconds in (False, True):
        print("\n" + ("mean seconds of play a game" if seconds else "won · median calls (games won)") + "\n")
        print("| game | setting | " + " | ".join(arms) + " |")
        print("|---|---|" + "---|" * len(arms))
        for (task, setting), by_arm in sorted(rows.items(), key=lambda kv: _row_order(*kv[0])):
            print(f"| {task} | {setting} | " + " | ".join(cell(by_arm.get(a), seconds) for a in arms) + " |")


def _row_order(task: str, setting: str) -> tuple[int, int]:
    order = [t for t, _, _ in HELD_OUT]
    settings = list(SETTINGS[task])
    return (order.index(task) if task in order else 99, settings.index(setting) if setting in settings else 99)


def cmd_ranks(args) -> None:
    """TWC: along the expert's games, the rank the packaged embedder gives each place the expert puts a thing
    in, among the room's places (what the ``cs:put`` names read; a plain player without outcomes knows no
    more of where things go), and the games in which every such place is ranked first."""
    from collections import Counter

    from s1gym.policies import Rule

    from s1gym.tasks.twx.commonsense import ranks, room_places
    from s1gym.tasks.twx.view import parse_move, read_view

    counts: Counter[str] = Counter()
    all_first = 0
    for seed in range(args.first, args.first + args.games):
        env = make_env("TWC", "default", seed, args.fold)
        env.reset(seed=seed)
        rule, first, over, won = Rule(), True, False, False
        rule.reset()
        while not over:
            situation = env.situation()
            move = situation.texts[rule.decide(situation).action]
            m = parse_move(move)
            if m.verb == "put" and m.target:
                places = room_places(read_view(situation).look, situation.texts)
                rank = ranks(m.obj.lower(), places)[m.target.lower()]
                counts[f"r{rank}" if rank < 4 else "r4+"] += 1
                first = first and rank == 0
            *_, terminated, truncated, info = env.step_move(move)
            over, won = terminated or truncated, bool(info["won"])
        all_first += first and won
        env.close()
    n = sum(counts.values())
    print(f"TWC {args.fold} seeds {args.first}-{args.first + args.games - 1}: the expert's {n} puts, by the rank "
          "of their place among the room's places: " + ", ".join(f"{r} {c} ({c / n:.0%})" for r, c in sorted(counts.items())))
    print(f"games won with every place ranked first: {all_first}/{args.games}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    h = sub.add_parser("heldout")
    h.add_argument("--arms", default=",".join(ARMS))
    h.add_argument("--tasks")
    h.add_argument("--workers", type=int, default=2)
    h.add_argument("--json", default=str(HELD_OUT_FILE))
    r = sub.add_parser("report")
    r.add_argument("--json", default=str(HELD_OUT_FILE))
    k = sub.add_parser("ranks")
    k.add_argument("--fold", default="dev", choices=("train", "dev", "test"))
    k.add_argument("--games", type=int, default=30)
    k.add_argument("--first", type=int, default=0)
    args = ap.parse_args(argv)
    {"heldout": cmd_heldout, "report": cmd_report, "ranks": cmd_ranks}[args.cmd](args)


if __name__ == "__main__":
    main()
