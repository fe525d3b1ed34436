"""Local's robot model against the other arms on the protocol's held-out scenes (bench/robot_protocol.md).

    python bench/robot_local.py heldout --workers 2          # the protocol's arms -> docs/data/robot_heldout.jsonl
    python bench/robot_local.py report                       # the table for docs/benchmarks.md
    python bench/robot_local.py heldout --run v2-heldout-40-79   # amendment 2 -> robot_heldout_v2.jsonl

The model and the progress estimate are fitted (and the L2 selected on dev scenes) by
``python -m s1gym.tasks.robot.fit`` in the family's folder, whose arms and scene player this script uses.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from s1gym.tasks.robot.fit import play_scenes

ROOT = Path(__file__).resolve().parents[1]
HELD_OUT_FILE = ROOT / "docs" / "data" / "robot_heldout.jsonl"
#: the runs after the loss rule, the centimetre score and the progress estimate (protocol amendment 2)
HELD_OUT_V2_FILE = ROOT / "docs" / "data" / "robot_heldout_v2.jsonl"
#: the protocol's held-out scenes: (fold, hard, seeds)
TEST = ("test", True, range(40))
RAW_TEST = ("test", True, range(20))
#: the runs a held-out line names (``run``): v1 the first report (robot_heldout.jsonl, no ``run`` field);
#: amendment 2's new held-out scenes, and its re-run of the first report's scenes after they were looked at
RUNS = {"v1": TEST, "v2-heldout-40-79": ("test", True, range(40, 80)),
        "v2-rerun-0-39-after-looking": ("test", True, range(40))}
ARMS = ("rule", "random", "local", "lookahead", "search-lookahead", "expert")
RAW_ARMS = ("raw-lookahead", "raw-search-uniform")


def cmd_heldout(args) -> None:
    """The protocol's arms on a run's scenes (``--run``: v1, the first report, writes no ``run`` field)."""
    arms = args.arms.split(",") if args.arms else [*ARMS, *RAW_ARMS]
    label = () if args.run == "v1" else (args.run,)
    jobs = []
    for arm in arms:
        fold, hard, seeds = RAW_TEST if arm.startswith("raw-") and args.run == "v1" else RUNS[args.run]
        jobs += [(fold, hard, s, arm, None, *label) for s in seeds]
    path = Path(args.json or (HELD_OUT_FILE if args.run == "v1" else HELD_OUT_V2_FILE))
    play_scenes(jobs, args.workers, path)


def cmd_report(args) -> None:
    path = Path(args.json or (HELD_OUT_FILE if args.run == "v1" else HELD_OUT_V2_FILE))
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    by: dict[str, list[dict]] = {}
    for r in rows:
        if r.get("run", "v1") == args.run:
            by.setdefault(r["arm"], []).append(r)
    print("| arm | won | mean score | place / air / stack / clear | median skills (won) | CPU s / scene |")
    print("|---|---|---|---|---|---|")
    for arm in [*ARMS, *RAW_ARMS]:
        rs = by.get(arm)
        if not rs:
            continue
        won = [r for r in rs if r["won"]]
        med = sorted(r["skills"] for r in won)[len(won) // 2] if won else "–"
        goals = ", ".join(f"{sum(r['won'] for r in rs if r['goal'] == g)}/{sum(r['goal'] == g for r in rs)}"
                          for g in ("place", "air", "stack", "clear"))
        print(f"| {arm} | {len(won)}/{len(rs)} | {np.mean([r['score'] for r in rs]):.2f} | {goals} | {med} | "
              f"{np.mean([r['cpu_s'] for r in rs]):.1f} |")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    h = sub.add_parser("heldout")
    h.add_argument("--workers", type=int, default=1)
    h.add_argument("--arms", default="")
    h.add_argument("--run", default="v1", choices=list(RUNS))
    h.add_argument("--json", default="", help="default: robot_heldout.jsonl for v1, robot_heldout_v2.jsonl after")
    r = sub.add_parser("report")
    r.add_argument("--run", default="v1", choices=list(RUNS))
    r.add_argument("--json", default="")
    args = ap.parse_args(argv)
    {"heldout": cmd_heldout, "report": cmd_report}[args.cmd](args)


if __name__ == "__main__":
    main()
