"""The main job's arms (scripts/main.sh's own ``s1 run`` lines) timed one by one: wall seconds, CPU seconds of the
run with its workers and their JVMs, and the load average before and after each arm.

    python bench/twx_main_job.py --s1 TREE/.venv/bin/s1 --out DIR [--arms search-uniform,...] [--medium]
        [--episodes N] [--workers N]

The CPU of a run is the sum over every process descended from it (workers, JVMs), read from /proc every half
second and kept per process at its last reading: a JVM is not always reaped by its worker, so ``time``'s
children total can miss it. A process that ends between two readings loses at most half a second.
``--medium``: the protocol's medium games (default options, test seeds 100-105) instead of the hard ones.
``--episodes``/``--workers``: the main job's 30 games (6 medium) and 2 workers unless given.
Prints and appends one JSON line per arm to ``DIR/timing.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time
from pathlib import Path

HARD = ["--option", "num_locations=11", "--option", "num_ingredients=5", "--option", "num_distractors=10",
        "--option", "include_doors=true"]
SEARCH = ["--wrap", "search", "--wrap-option", "episode_budget=1000"]
ARMS = {
    "random": ["--policy", "random"],
    "local": ["--policy", "local"],
    "lookahead-local": ["--policy", "local", "--wrap", "lookahead"],
    "search-uniform": ["--policy", "uniform", *SEARCH],
    "search-local": ["--policy", "local", *SEARCH],
}
TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, CPU seconds) of a live process, ``None`` when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / TICK


def tree_cpu(root: int, seen: dict[int, float]) -> None:
    """Update ``seen`` (pid -> CPU seconds) with every live process descended from ``root``."""
    stats = {int(p): s for p in os.listdir("/proc") if p.isdigit() and (s := _stat(int(p))) is not None}
    inside = {root}
    changed = True
    while changed:
        changed = False
        for pid, (ppid, _) in stats.items():
            if ppid in inside and pid not in inside:
                inside.add(pid)
                changed = True
    for pid in inside:
        if pid in stats:
            seen[pid] = max(seen.get(pid, 0.0), stats[pid][1])


def run_arm(s1: str, arm: str, out: Path, medium: bool, episodes: int | None = None, workers: int = 2) -> dict:
    episodes = episodes or (6 if medium else 30)
    games = ["CookingWorld", *([] if medium else HARD), "--option", "fold=test", "--seed", "100",
             "--episodes", str(episodes), "--workers", str(workers), "--out", str(out)]
    load0 = os.getloadavg()
    t0 = time.perf_counter()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    proc = subprocess.Popen([s1, "run", *games, *ARMS[arm]], env=env, stdout=subprocess.DEVNULL)
    seen: dict[int, float] = {}
    while proc.poll() is None:
        tree_cpu(proc.pid, seen)
        time.sleep(0.5)
    wall = time.perf_counter() - t0
    row = {"arm": arm, "medium": medium, "episodes": episodes, "workers": workers, "s1": s1,
           "rc": proc.returncode, "wall_s": round(wall, 1),
           "cpu_s": round(sum(seen.values()), 1), "processes": len(seen),
           "load_before": [round(x, 2) for x in load0], "load_after": [round(x, 2) for x in os.getloadavg()],
           "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    print(json.dumps(row), flush=True)
    with open(out / "timing.jsonl", "a") as f:
        f.write(json.dumps(row) + "\n")
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--s1", required=True, help="the s1 command of the tree to time")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--arms", default=",".join(ARMS))
    ap.add_argument("--medium", action="store_true")
    ap.add_argument("--episodes", type=int)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for arm in args.arms.split(","):
        run_arm(args.s1, arm, args.out, args.medium, args.episodes, args.workers)


if __name__ == "__main__":
    main()
