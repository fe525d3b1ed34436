"""Issue 55: the raw robot twin's forks as compact states, and search(uniform) on 20 raw scenes in bounded memory.

    python bench/robot_raw.py forks                    # bytes and CPU time of a fork, before and after, one run
    python bench/robot_raw.py search --until 03:05     # the 20-scene search(uniform) run (docs/benchmarks.md)

``forks`` compares the two ways a fork of ``s1/PickPlaceRaw-v0`` can hold its physics, switched in one process
(``s1gym.tasks.robot.arm.COMPACT_FORKS`` and ``DATA_POOL.live_limit``): *before* (a whole ``MjData`` per fork,
as until issue 55) and *after* (the integration state, ``MjData`` only while in use, at most
``live_limit`` per thread). On train hard scenes 0-4 (never test scenes) it prints
- the bytes a kept fork holds: ``MjData`` (buffer + arena) against the compact state, and the RSS growth of
  300 forks each stepped once and kept (as Search keeps the env of every expanded node), each mode in a fresh
  spawned process;
- CPU ms of a fork + its first step (closed after, as Search and Lookahead close a child) and of a plain
  step, the two modes interleaved in one process;
- one Search(Uniform(), budget=1000) decision from the start of train hard scene 0 in each mode, each in a
  fresh process: its peak RSS (``VmHWM``), CPU seconds, and whether the two chose the same move with the
  same statistics (the change must not change a decision).

``search`` plays ``Search(Uniform(), episode_budget=1000)`` (bench/robot_protocol.md's raw arm, every other
option Search's default) on test hard scenes 80-99 in ``--workers`` spawned processes, one scene a job,
appending a line per scene to docs/data/robot_raw_search.jsonl (the worker's pid and peak RSS, ``ru_maxrss``,
with the scene's result). The parent also reads every worker's ``VmHWM`` (its peak RSS) from /proc each
second, prints the peaks at the end, and at ``--until`` (UTC, HH:MM) stops the pool and reports what finished.
A worker above ``--kill-mb`` is stopped (a shared machine), which ends the run.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import resource
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "data" / "robot_raw_search.jsonl"
#: the run's scenes, fixed before any was played (docs/benchmarks.md): no arm has played test hard 80-99
SCENES = ("test", True, range(80, 100))
FORK_SCENES = range(5)          # train hard: the forks measure
MOVES = ("move 2 cm down", "move 2 cm left", "move 2 cm up", "move 2 cm right", "close the gripper",
         "move 2 cm away", "open the gripper", "move 2 cm closer")


def _set_mode(compact: bool) -> None:
    from s1gym.tasks.robot import arm

    arm.COMPACT_FORKS = compact
    arm.DATA_POOL.live_limit = type(arm.DATA_POOL).live_limit if compact else None


def _make(fold: str = "train"):
    import gymnasium as gym

    import s1gym  # noqa: F401  (registers the ids)

    return gym.make("s1/PickPlaceRaw-v0", fold=fold, hard=True).unwrapped


def _status_kb(pid: int | str, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


# ---------------------------------------------------------------------------------------------- forks
def _held_forks(job: tuple[bool, int]) -> dict:
    """RSS growth of ``n`` forks of train hard scene 0 each stepped once and kept (a fresh process)."""
    compact, n = job
    _set_mode(compact)
    env = _make()
    env.reset(seed=0)
    for move in MOVES[:3]:
        env.step_move(move)
    env.fork().step_move(MOVES[0])          # the imports and lazy set-ups of a first fork and step
    before = _status_kb("self", "VmRSS")
    kept = []
    for i in range(n):
        fork = env.fork()
        fork.step_move(MOVES[i % len(MOVES)])
        kept.append(fork)
    after = _status_kb("self", "VmRSS")
    holding = sum(f.arm._data is not None for f in kept)
    return {"compact": compact, "forks": n, "rss_kb_per_fork": (after - before) / n, "holding_mjdata": holding}


def _one_decision(compact: bool) -> dict:
    """One Search(Uniform(), budget=1000) decision from the start of train hard scene 0 (a fresh process)."""
    from s1gym.policies import Uniform
    from s1gym.wrappers import Search

    _set_mode(compact)
    env = _make()
    env.reset(seed=0)
    policy = Search(Uniform(), budget=1000)
    policy.reset()
    t = time.process_time()
    decision = policy.decide(env.situation())
    cpu = time.process_time() - t
    info = {k: decision.info[k] for k in ("stop_reason", "expansions", "policy_calls", "generated", "duplicates",
                                         "plan")}
    return {"compact": compact, "cpu_s": round(cpu, 1), "peak_rss_mb": round(_status_kb("self", "VmHWM") / 1024),
            "action": int(decision.action), "info": info}


def cmd_forks(args) -> None:
    import numpy as np

    from s1gym.tasks.robot.arm import DATA_POOL

    env = _make()
    env.reset(seed=0)
    data = env.arm.data
    mjdata_bytes = int(data.nbuffer + data.narena)
    state_bytes = int(env.arm.state().nbytes)
    ctx = mp.get_context("spawn")
    with ctx.Pool(1, maxtasksperchild=1) as pool:
        held = pool.map(_held_forks, [(False, args.held), (True, args.held)])
    # CPU time: the two modes interleaved, at states along each scene's walk of cycled moves
    cost = {True: [], False: []}
    steps = []
    for seed in FORK_SCENES:
        env.reset(seed=seed)
        for k in range(args.depth):
            for compact in (False, True, False, True):
                _set_mode(compact)
                move = MOVES[(k + 1) % len(MOVES)]
                t = time.process_time()
                fork = env.fork()
                fork.step_move(move)
                cost[compact].append((time.process_time() - t) * 1e3)
                fork.close()
            _set_mode(True)
            t = time.process_time()
            env.step_move(MOVES[k % len(MOVES)])
            steps.append((time.process_time() - t) * 1e3)
            if env.done:
                break
    decisions = []
    if args.decision:
        with ctx.Pool(1, maxtasksperchild=1) as pool:
            decisions = pool.map(_one_decision, [False, True])
    med = statistics.median
    print(f"machine: 2 cores, load {Path('/proc/loadavg').read_text().split()[0]}; s1/PickPlaceRaw-v0 train hard "
          f"{FORK_SCENES.start}-{FORK_SCENES.stop - 1}, {len(steps)} states; CPU ms, medians; live_limit "
          f"{type(DATA_POOL).live_limit}")
    print("| what | before (MjData per fork) | after (compact state) | ratio |")
    print("|---|---|---|---|")
    print(f"| bytes a fork holds | MjData {mjdata_bytes:,} (buffer {data.nbuffer:,} + arena {data.narena:,}) | "
          f"state {state_bytes:,} | 1/{mjdata_bytes / state_bytes:.0f} |")
    hb, ha = held
    print(f"| RSS growth per kept stepped fork ({args.held} kept) | {hb['rss_kb_per_fork']:,.0f} KB "
          f"({hb['holding_mjdata']} hold MjData) | {ha['rss_kb_per_fork']:,.1f} KB ({ha['holding_mjdata']} hold "
          f"MjData) | 1/{hb['rss_kb_per_fork'] / max(ha['rss_kb_per_fork'], 1e-9):.0f} |")
    fb, fa, st = med(cost[False]), med(cost[True]), med(steps)
    print(f"| fork + first step (closed after) | {fb:.3f} ({fb / st:.2f}x a step) | {fa:.3f} ({fa / st:.2f}x a "
          f"step) | {fa / fb:.2f}x |")
    print(f"| plain step (one control step, 20 substeps) | {st:.3f} | {st:.3f} | |")
    print(f"| fork + first step, p90 | {np.percentile(cost[False], 90):.3f} | {np.percentile(cost[True], 90):.3f} | |")
    for d in decisions:
        print(f"search(uniform) budget 1000, one decision, {'after' if d['compact'] else 'before'}: peak RSS "
              f"{d['peak_rss_mb']} MB, {d['cpu_s']} CPU s, action {d['action']}, "
              f"{ {k: v for k, v in d['info'].items() if k != 'plan'} }")
    if len(decisions) == 2:
        same = decisions[0]["action"] == decisions[1]["action"] and decisions[0]["info"] == decisions[1]["info"]
        print(f"same decision and search statistics before and after: {same}")


# --------------------------------------------------------------------------------------------- search
def _play(job: tuple) -> dict:
    from s1gym.tasks.robot.fit import play_scene

    row = play_scene(job)
    row.update(worker_pid=os.getpid(), worker_maxrss_mb=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                                                              / 1024))
    return row


def _deadline(until: str | None) -> float | None:
    if not until:
        return None
    now = datetime.now(UTC)
    hh, mm = map(int, until.split(":"))
    end = now.replace(hour=hh, minute=mm, second=0, microsecond=0)
    if end <= now:
        raise SystemExit(f"--until {until}: that time (UTC) has passed; give a later HH:MM")
    return time.time() + (end - now).total_seconds()


def cmd_search(args) -> None:
    fold, hard, seeds = SCENES
    seeds = list(seeds)[: args.scenes]
    path = Path(args.json)
    done = set()
    if path.exists():
        done = {r["seed"] for r in map(json.loads, path.read_text().splitlines()) if r.get("run") == args.run}
    jobs = [(fold, hard, s, "raw-search-uniform", None, args.run) for s in seeds if s not in done]
    end = _deadline(args.until)
    ctx = mp.get_context("spawn")
    t0 = time.perf_counter()
    peaks: dict[int, int] = {}
    stopped = ""
    rows = []
    pool = ctx.Pool(args.workers)
    try:
        pids = [p.pid for p in pool._pool]
        pending = pool.imap_unordered(_play, jobs)
        with open(path, "a") as out:
            while len(rows) < len(jobs):
                try:
                    row = pending.next(timeout=1.0)
                except mp.TimeoutError:
                    row = None
                for pid in pids:
                    try:
                        peaks[pid] = max(peaks.get(pid, 0), _status_kb(pid, "VmHWM"))
                        if _status_kb(pid, "VmRSS") > args.kill_mb * 1024:
                            stopped = f"worker {pid} above {args.kill_mb} MB RSS"
                    except (OSError, KeyError):
                        pass
                if row is not None:
                    rows.append(row)
                    out.write(json.dumps(row) + "\n")
                    out.flush()
                    print(f"test {row['seed']:3d} {row['goal']:6s} {'WON' if row['won'] else 'no ':4s} score "
                          f"{row['score']:.2f} moves {row['skills']} calls {row['calls']} cpu {row['cpu_s']} s "
                          f"wall {row['wall_s']} s worker {row['worker_pid']} maxrss {row['worker_maxrss_mb']} MB",
                          flush=True)
                if end is not None and time.time() >= end:
                    stopped = f"--until {args.until} reached"
                if stopped:
                    break
    finally:
        pool.terminate()
        pool.join()
    wall = time.perf_counter() - t0
    print(f"{len(rows)}/{len(jobs)} scenes finished in {wall / 60:.1f} min wall on {args.workers} workers"
          + (f"; stopped: {stopped}" if stopped else ""))
    print("worker peak RSS (VmHWM, read each second): "
          + ", ".join(f"{pid}: {kb / 1024:.0f} MB" for pid, kb in sorted(peaks.items())))
    if rows:
        print(f"won {sum(r['won'] for r in rows)}/{len(rows)}, mean score "
              f"{statistics.mean(r['score'] for r in rows):.3f}, CPU s a scene {statistics.mean(r['cpu_s'] for r in rows):.1f}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("forks")
    f.add_argument("--held", type=int, default=300, help="forks kept for the RSS measure")
    f.add_argument("--depth", type=int, default=40, help="states measured along each scene's walk")
    f.add_argument("--no-decision", dest="decision", action="store_false",
                   help="skip the one-decision search in each mode (~1 CPU minute each)")
    s = sub.add_parser("search")
    s.add_argument("--workers", type=int, default=2)
    s.add_argument("--scenes", type=int, default=20, help="the first N of the run's 20 scenes")
    s.add_argument("--until", default="", help="UTC HH:MM: stop the pool then and report what finished")
    s.add_argument("--kill-mb", type=int, default=3000, help="stop the run when a worker's RSS passes this")
    s.add_argument("--run", default="compact-v1", help="the run's name in the results file")
    s.add_argument("--json", default=str(RESULTS))
    args = ap.parse_args(argv)
    {"forks": cmd_forks, "search": cmd_search}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
