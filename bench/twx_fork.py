"""TextWorldExpress fork cost by depth: in-JVM snapshots against replaying the moves, in one run.

    python bench/twx_fork.py [--forks 15] [--depths 5,20,40,60] [--rounds 3]
    python bench/twx_fork.py --children 15 [--depths ...]   # one expansion's children, one call vs one by one
    python bench/twx_fork.py --clone 3 [--depths ...]       # s1gym's fork against TWX's own clone()

Hard CookingWorld (11 rooms, doors, 5 ingredients, 10 distractors), test fold, one game per depth reached by
random moves that neither win nor lose. At each depth: the median over ``--forks`` forks of ``fork()`` plus
the fork's first step, and of a plain step (the fork's next one, on its live game object). Two arms, each
in a fresh pool of the same JVM, alternated ``--rounds`` times against load drift:

- ``snapshot``: the JVM's snapshot helper (s1gym/tasks/twx/S1Snapshots.java) copies the game object;
- ``replay``: no helper (as before it existed, and as without javac): a new game and one round trip a move.

Wall time, median per round then median over rounds; the machine's load average is printed with the table.
``--lookahead N`` also times ``Lookahead(Local)`` decisions (N per arm and round, on the games' first states
after the same random moves; every candidate forked and stepped) in the same two arms.

``--children N`` (snapshots only): the children of one state, every candidate of the state at each depth,
as Search expands a node (``keep``: kept in the transition cache, which is emptied before each expansion)
and as Lookahead reads them (not kept), in two arms alternated N times: ``one call``
(``EngineEnv.fork_steps``: the JVM restores the parent and steps every move in one round trip) and ``one by
one`` (``fork_step`` per move, each its own restore-and-step round trip plus, kept, a snapshot's). Per arm:
the median wall time of an expansion per child, children per second, the ratio of a child to a plain step
(measured in the same run at the same depth), and CPU per child (this process and the JVM over all the
expansions) with its ratio to a plain step's CPU (on a loaded machine the CPU ratio moves less than the
wall one). Warm: after one expansion of each arm at the first depth, which is reported as cold (the
first call of each path in the process).

With ``--lookahead N`` the same two paths also time ``Lookahead(Local)`` decisions on the N states after 20
moves of the walk (``--rounds`` alternated rounds; "one by one" with the engine's batch turned off).

``--ab OLD_TREE`` (issue 55): the snapshot arm of two builds in one run, ``--rounds`` alternated rounds of
one process each: "before" imports s1gym from ``OLD_TREE`` (a copy of an older tree, e.g. ``git archive HEAD
s1gym | tar -x -C OLD_TREE``; its Java helper compiles into the cache under its own hash) and "after" from this
script's tree; both measure with this script's code (``--worker``). Per depth and arm: the median over rounds
of the median fork + first step and plain step (wall, ``--forks`` forks after ``--warm`` fork + first steps
at the first depth: warm), and the CPU ratio (this process and the JVM's threads, in nanoseconds: mean CPU
of ``20 * --forks`` fork + first steps against a plain step's over as many steps, ``cpu_pair``), steadier
than wall time on a loaded machine.

``--breakdown N`` (issue 55): where a snapshot fork + first step's time goes at each of ``--depths``, this
tree (run it with ``PYTHONPATH=OLD_TREE`` for another): medians over ``N`` calls, ``--rounds`` rounds
(median of the rounds' figures; wall: the median call, CPU: the mean call, this process and the JVM's
threads but its JIT compilers, as ``cpu_pair``), warm, of a py4j round trip that does nothing (``held``), a
restore (the JVM's copy and a round trip), a step on a restored game (``stepJSON``), the two in one call
(``restoreStep``), a snapshot of the live game (``take``), Python's ``fork()`` alone, and the bench's fork +
first step and plain step (as ``measure``).

``--clone N``: at each depth, s1gym's fork plus its first step against TextWorldExpress's own
``TextWorldExpressEnv.clone()`` plus its first step (its Python API: a new JVM and a replay of the moves), at
the same state; the median of N clones and of ``--forks`` forks, warm; and their mean CPU (the fork's: this
process and its JVM over 20 times ``--forks`` forks; the clone's: this process and the clone's own JVM, reaped).
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import statistics
import time

import _timing
import gymnasium as gym
import numpy as np

import s1gym  # noqa: F401
from s1gym.engines import base as engines
from s1gym.tasks.twx import snapshots
from s1gym.tasks.twx.engine import get_jvm

HARD = {"num_locations": 11, "num_ingredients": 5, "num_distractors": 10, "include_doors": True}


def safe_moves(seed: int, depth: int, rng: np.random.Generator) -> list[str]:
    """``depth`` random moves from the start of game ``seed`` that end nothing (each tried on a fork)."""
    env = gym.make("s1/CookingWorld-v0", fold="test", **HARD)
    env.reset(seed=seed)
    moves: list[str] = []
    while len(moves) < depth:
        for i in rng.permutation(len(env.candidates)):
            probe = env.fork()
            probe.step(int(i))
            if not probe.done:
                moves.append(env.candidates[int(i)])
                env.step(int(i))
                break
    env.close()
    return moves


def measure(seed: int, moves: list[str], forks: int, rng: np.random.Generator) -> tuple[float, float]:
    """Median seconds of fork + first step, and of a plain step, at the state after ``moves``."""
    env = gym.make("s1/CookingWorld-v0", fold="test", **HARD)
    env.reset(seed=seed)
    for m in moves:
        env.step_move(m)
    first, plain = [], []
    for _ in range(forks + 3):  # the first three warm up
        i = int(rng.integers(len(env.candidates)))
        t = time.perf_counter()
        f = env.fork()
        f.step(i)
        first.append(time.perf_counter() - t)
        if f.candidates:
            j = int(rng.integers(len(f.candidates)))
            t = time.perf_counter()
            f.step(j)
            plain.append(time.perf_counter() - t)
        f.close()
    env.close()
    return statistics.median(first[3:]), statistics.median(plain[3:])


def lookahead_decisions(seed: int, moves: list[str], n: int, start: int = 0) -> tuple[float, int]:
    """Median seconds of ``Lookahead(Local)``'s decision on the states along ``moves`` (``n`` of them, from
    the one after ``start`` moves), and the median candidate count."""
    from s1gym.policies import Local
    from s1gym.wrappers import Lookahead

    env = gym.make("s1/CookingWorld-v0", fold="test", **HARD)
    env.reset(seed=seed)
    policy, took, counts = Lookahead(Local()), [], []
    for m in moves[:start]:
        env.step_move(m)
    for m in moves[start:start + n]:
        t = time.perf_counter()
        policy.decide(env.situation())
        took.append(time.perf_counter() - t)
        counts.append(len(env.candidates))
        env.step_move(m)
    env.close()
    return statistics.median(took), int(statistics.median(counts))


def expand(env, keep: bool, one_call: bool) -> int:
    """Every child of ``env``'s state, as Search (``keep``) or Lookahead expands it; the children's count."""
    parent = env.fork()
    parent._pool().transitions.clear()
    moves = env.candidates
    kids = parent.fork_steps(moves, keep) if one_call else (parent.fork_step(m, keep) for m in moves)
    for child, _ in kids:
        child.close()
    parent.close()
    return len(moves)


def lookahead_rows(seed: int, path: list[str], n: int, rounds: int) -> dict[str, float]:
    """Median ``Lookahead(Local)`` decision (seconds) over the ``n`` states after 20 moves of ``path``, median of
    ``rounds`` alternated rounds per arm: ``one call`` and ``one by one`` (the engine's batch turned off, so
    ``fork_steps`` steps each child with ``fork_step``: the path before it existed); also the candidates."""
    arms: dict[str, list[float]] = {"one call": [], "one by one": []}
    batch = engines.EngineEnv._step_children
    count = 0
    for r in range(rounds):
        for arm in list(arms) if r % 2 == 0 else list(arms)[::-1]:
            engines.EngineEnv._step_children = batch if arm == "one call" else (lambda self, moves: None)
            try:
                took, count = lookahead_decisions(seed, path, n, start=20)
            finally:
                engines.EngineEnv._step_children = batch
            arms[arm].append(took)
    return {**{arm: statistics.median(x) for arm, x in arms.items()}, "candidates": count}


def children_rows(seed: int, path: list[str], depths: list[int], reps: int) -> list[tuple]:
    """Per depth and arm: (depth, arm, wall s per child, CPU s per child, plain step s, children); the cold
    expansions first (depth ``-1``)."""
    pid = get_jvm().process.pid
    arms = [(f"{how}, {use}", keep, how == "one call")
            for use, keep in (("kept (Search)", True), ("not kept (Lookahead)", False))
            for how in ("one call", "one by one")]
    rows = []
    for i, d in enumerate(depths):
        env = gym.make("s1/CookingWorld-v0", fold="test", **HARD)
        env.reset(seed=seed)
        for m in path[:d]:
            env.step_move(m)
        plain = measure_plain(env, reps)
        walls: dict[str, list[float]] = {a[0]: [] for a in arms}
        cpus = dict.fromkeys(walls, 0.0)
        for r in range(reps + (1 if i == 0 else 0)):
            for name, keep, one_call in arms if r % 2 == 0 else arms[::-1]:
                c, t = _timing.cpu_s(pid), time.perf_counter()
                n = expand(env, keep, one_call)
                took, cpu = time.perf_counter() - t, _timing.cpu_s(pid) - c
                if i == 0 and r == 0:
                    rows.append((-1, name, took / n, cpu / n, plain, n))  # cold: the first in the process
                    continue
                walls[name].append(took / n)
                cpus[name] += cpu / n / reps
        rows += [(d, name, statistics.median(walls[name]), cpus[name], plain, n) for name, _, _ in arms]
        env.close()
    return rows


def measure_plain(env, n: int, walk: int = 10) -> tuple[float, float]:
    """Median wall seconds of a plain step (on a live fork of ``env``, after its first), and the mean CPU
    seconds of one (this process and the JVM over ``n`` walks of up to ``walk`` steps: the JVM's clock
    ticks are too coarse for one step)."""
    pid = get_jvm().process.pid
    rng = np.random.default_rng(7)
    took, cpu, steps = [], 0.0, 0
    for k in range(n + 1):
        f = env.fork()
        f.step(int(rng.integers(len(f.candidates))))
        c = _timing.cpu_s(pid)
        for _ in range(walk):
            if f.done:
                break
            i = int(rng.integers(len(f.candidates)))
            t = time.perf_counter()
            f.step(i)
            took.append(time.perf_counter() - t)
        if k:  # the first walk warms up
            cpu += _timing.cpu_s(pid) - c
            steps += walk if not f.done else 1
        f.close()
    return statistics.median(took), cpu / max(1, steps)


def clone_rows(seed: int, path: list[str], depths: list[int], clones: int, forks: int) -> list[tuple]:
    """Per depth: (depth, s1gym fork + first step: wall s, CPU s; TWX clone() + first step: wall s, CPU s).
    CPU: this process and its JVM for the fork; this process and the clone's own JVM (reaped) for clone()."""
    from textworld_express import TextWorldExpressEnv

    env = gym.make("s1/CookingWorld-v0", fold="test", **HARD).unwrapped
    _, info = env.reset(seed=seed)
    params = ",".join(f"{k}={v}" for k, v in env.game_params.items())
    raw = TextWorldExpressEnv(envStepLimit=10_000)
    raw.reset(seed=info["game_seed"], gameFold="test", gameName="cookingworld", gameParams=params)
    rows, played = [], 0
    for d in depths:
        for m in path[played:d]:
            env.step_move(m)
            raw.step(m)
        played = d
        move = env.candidates[0]
        fork_s, _ = measure(seed, path[:d], forks, np.random.default_rng(100 + d))
        if d == depths[0]:
            fork_cpu_s(env, move, 1000)  # warm-up: the JVM compiles the copy and the step first
        fork_cpu = fork_cpu_s(env, move, 20 * forks)  # many: the JVM's CPU is counted in 10 ms ticks
        took, cpu = [], 0.0
        for _ in range(clones):
            before = _children_cpu()
            t = time.perf_counter()
            clone = raw.clone()
            clone.step(move)
            took.append(time.perf_counter() - t)
            clone.close()
            clone._gateway.java_process.wait(timeout=120)  # reaped: its CPU counts among this process's children
            cpu += (_children_cpu() - before) / clones
        rows.append((d, fork_s, fork_cpu, statistics.median(took), cpu))
    env.close()
    raw.close()
    return rows


def fork_cpu_s(env, move: str, n: int) -> float:
    """Mean CPU seconds (this process and the JVM) of a fork of ``env`` and its first step, ``move``."""
    pid = get_jvm().process.pid
    c = _timing.cpu_s(pid)
    for _ in range(n):
        f = env.fork()
        f.step_move(move)
        f.close()
    return (_timing.cpu_s(pid) - c) / n


def _children_cpu() -> float:
    """CPU seconds of this process and its reaped child processes."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def worker(args: argparse.Namespace, depths: list[int]) -> None:
    """One A/B process (``--worker``): per depth, the snapshot arm's wall medians and CPU means, as JSON."""
    import json

    if snapshots.Snapshots.of(get_jvm()) is None:
        raise SystemExit("the snapshot helper is not available (javac missing?)")
    path = safe_moves(args.seed, max(depths), np.random.default_rng(0))
    out = {}
    for i, d in enumerate(depths):
        env = gym.make("s1/CookingWorld-v0", fold="test", **HARD)
        env.reset(seed=args.seed)
        for m in path[:d]:
            env.step_move(m)
        move = env.candidates[0]
        if i == 0:
            fork_cpu_s(env, move, args.warm)  # warm: the JVM compiles the copy and the step first
        first, plain = measure(args.seed, path[:d], args.forks, np.random.default_rng(100 + d))
        fork_cpu, plain_cpu = cpu_pair(env, 20 * args.forks)
        out[d] = {"first": first, "plain": plain, "first_cpu": fork_cpu, "plain_cpu": plain_cpu}
        env.close()
    print("RESULT " + json.dumps(out), flush=True)


def breakdown(args: argparse.Namespace, depths: list[int]) -> None:
    """``--breakdown``: the parts of a snapshot fork + first step, per depth (see the module docstring)."""
    helper = snapshots.Snapshots.of(get_jvm())
    if helper is None:
        raise SystemExit("the snapshot helper is not available (javac missing?)")
    path = safe_moves(args.seed, max(depths), np.random.default_rng(0))
    for d in depths:
        env = gym.make("s1/CookingWorld-v0", fold="test", **HARD)
        env.reset(seed=args.seed)
        for m in path[:d]:
            env.step_move(m)
        rng = np.random.default_rng(100 + d)
        parts: dict[str, list[tuple[float, float]]] = {}
        for _ in range(args.rounds):
            for k, v in breakdown_parts(helper, env, args.breakdown).items():
                parts.setdefault(k, []).append(v)
            first, plain = measure(args.seed, path[:d], args.breakdown // 10, rng)
            parts.setdefault("bench: fork + first step", []).append((first, math.nan))
            parts.setdefault("bench: plain step", []).append((plain, math.nan))
        load = os.getloadavg()
        print(f"depth {d}: median of {args.rounds} rounds of {args.breakdown} calls each (the bench's: "
              f"{args.breakdown // 10} forks); wall: median call, CPU: mean call (this process and the JVM's "
              f"threads but its JIT compilers); load average {load[0]:.1f}")
        for k, v in parts.items():
            wall = statistics.median(x[0] for x in v) * 1e6
            cpu = statistics.median(x[1] for x in v) * 1e6
            print(f"  {k:<44} wall {wall:8.1f} µs   CPU {cpu:8.1f} µs")
        env.close()


def breakdown_parts(helper: snapshots.Snapshots, env, n: int) -> dict[str, tuple[float, float]]:
    """Median wall seconds and mean CPU seconds of each part of a fork + first step at ``env``'s state, over
    ``n`` calls (a fifth more warm up first); ``env``'s engine is left at its state."""
    snap = env.snapshot()
    pi = env.engine()._pi  # the engine at env's state (only the JVM calls below use it until it is restored)
    moves = list(env.candidates)
    pid = get_jvm().process.pid

    def med(fn, calls: int = n, before=None) -> tuple[float, float]:
        warm = calls // 5
        calls += warm
        for k in range(warm):
            if before is not None:
                before()
            fn(k)
        took = []
        c = _cpu_ns(pid)
        for k in range(warm, calls):
            if before is not None:
                before()
            t = time.perf_counter()
            fn(k)
            took.append(time.perf_counter() - t)
        return statistics.median(took), (_cpu_ns(pid) - c) / (calls - warm) / 1e9

    taken: list[int] = []
    restore = med(lambda k: helper._restore(pi, snap.id, ""))
    both = med(lambda k: pi.stepJSON(moves[k % len(moves)]), before=lambda: helper._restore(pi, snap.id, ""))
    row = {
        "py4j round trip (held)": med(lambda k: helper._held("")),
        "restore (copy + round trip)": restore,
        "restoreStep (copy + step + round trip)":
            med(lambda k: helper._restore_step(pi, snap.id, moves[k % len(moves)], "")),
        # its CPU: a restore and the step, less a restore's
        "stepJSON on a restored game (round trip)": (both[0], both[1] - restore[1]),
        "take (copy of the live game + round trip)": med(lambda k: taken.append(helper._take(pi, "")), n // 4),
        "Python fork()": med(lambda k: env.fork()),
    }
    helper._held(",".join(map(str, taken)))  # the snapshots ``take`` made, freed
    helper._restore(pi, snap.id, "")  # env's engine back at env's state
    return row


def _cpu_ns(pid: int) -> int:
    """CPU nanoseconds so far of this process and of the live threads of process ``pid`` (the JVM) but its JIT
    compilers (whose work ends once the code is warm, at a time of their choosing), from
    /proc/<pid>/task/*/schedstat (nanoseconds, where /proc/<pid>/stat counts 10 ms ticks)."""
    total = time.process_time_ns()
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/comm") as f:
                if "CompilerThre" in f.read():
                    continue
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass  # a thread that ended meanwhile
    return total


def cpu_pair(env, n: int, walk: int = 10) -> tuple[float, float]:
    """Mean CPU seconds (this process and the JVM, :func:`_cpu_ns`) of a fork of ``env`` with its first step
    (a random move), over ``n``; and of a plain step, over walks of up to ``walk`` random steps on forks of
    ``env`` (after each fork's first step, which is not counted) until ``n`` steps were counted."""
    pid = get_jvm().process.pid
    rng = np.random.default_rng(7)
    moves = [int(rng.integers(len(env.candidates))) for _ in range(n)]
    c = _cpu_ns(pid)
    for i in moves:
        f = env.fork()
        f.step(i)
        f.close()
    fork_ns = (_cpu_ns(pid) - c) / n
    spent, steps = 0, 0
    while steps < n:
        f = env.fork()
        f.step(int(rng.integers(len(f.candidates))))
        c = _cpu_ns(pid)
        k = 0
        while k < walk and not f.done:
            f.step(int(rng.integers(len(f.candidates))))
            k += 1
        spent += _cpu_ns(pid) - c
        steps += k
        f.close()
    return fork_ns / 1e9, spent / steps / 1e9


def ab(args: argparse.Namespace, depths: list[int]) -> None:
    """``--ab``: before (``args.ab``'s tree) against after (this tree), alternated rounds of one process each."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    trees = {"before": str(Path(args.ab).resolve()), "after": str(Path(__file__).resolve().parents[1])}
    results: dict[str, list[dict]] = {"before": [], "after": []}
    loads = []
    for r in range(args.rounds):
        for arm in ("before", "after") if r % 2 == 0 else ("after", "before"):
            env = {**os.environ, "PYTHONPATH": trees[arm]}
            cmd = [sys.executable, __file__, "--worker", "--depths", args.depths, "--forks", str(args.forks),
                   "--seed", str(args.seed), "--warm", str(args.warm)]
            done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False, cwd=trees[arm])
            line = next((x for x in done.stdout.splitlines() if x.startswith("RESULT ")), None)
            if done.returncode != 0 or line is None:
                raise SystemExit(f"the {arm} worker failed:\n{done.stderr[-3000:]}")
            results[arm].append({int(k): v for k, v in json.loads(line[7:]).items()})
            loads.append(os.getloadavg()[0])
            print(f"round {r + 1} {arm}: " + ", ".join(
                f"{d}: {x['first'] / x['plain']:.2f}x" for d, x in results[arm][-1].items()), flush=True)
    print(f"TWX snapshot fork + first step vs a plain step, before ({trees['before']}) and after "
          f"({trees['after']}); hard CookingWorld test game {args.seed}, median of {args.forks} forks per "
          f"process, median of {args.rounds} alternated rounds; {os.cpu_count()} cpus, load average (1 min) "
          f"during the rounds {min(loads):.1f}-{max(loads):.1f}")
    print(f"{'depth':>5}  {'arm':<6}  {'fork + first step':>17}  {'plain step':>10}  {'ratio':>6}  "
          f"{'CPU ratio':>9}")
    for d in depths:
        for arm in ("before", "after"):
            xs = [x[d] for x in results[arm]]
            first = statistics.median(x["first"] for x in xs)
            plain = statistics.median(x["plain"] for x in xs)
            ratio = statistics.median(x["first"] / x["plain"] for x in xs)
            cpu = statistics.median(x["first_cpu"] / x["plain_cpu"] for x in xs)
            print(f"{d:>5}  {arm:<6}  {first * 1e3:>14.3f} ms  {plain * 1e3:>7.3f} ms  {ratio:>5.2f}x  "
                  f"{cpu:>8.2f}x")


def use_arm(arm: str, helper: snapshots.Snapshots | None) -> None:
    engines.close_pools()  # engines made from now on see the arm's helper (or none)
    get_jvm().cache["twx-snapshots"] = helper if arm == "snapshot" else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--forks", type=int, default=15)
    ap.add_argument("--depths", default="5,20,40,60")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0, help="the test-fold game (index) played")
    ap.add_argument("--lookahead", type=int, default=0, help="Lookahead(Local) decisions timed per arm and round")
    ap.add_argument("--children", type=int, default=0, help="expansions per arm and depth (children rows only)")
    ap.add_argument("--clone", type=int, default=0, help="TWX clone()s per depth (clone rows only)")
    ap.add_argument("--ab", metavar="OLD_TREE", help="snapshot forks of OLD_TREE's s1gym against this tree's")
    ap.add_argument("--warm", type=int, default=500, help="--ab: fork + first steps before measuring")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--breakdown", type=int, default=0, help="calls per part: where a fork's time goes")
    args = ap.parse_args()
    depths = [int(d) for d in args.depths.split(",")]
    if args.worker:
        worker(args, depths)
        return
    if args.breakdown:
        breakdown(args, depths)
        return
    if args.ab:
        ab(args, depths)
        return

    helper = snapshots.Snapshots.of(get_jvm())
    if helper is None:
        raise SystemExit("the snapshot helper is not available (javac missing?): nothing to compare")
    path = safe_moves(args.seed, max(*depths, 20 + args.lookahead), np.random.default_rng(0))  # prefixes agree
    if args.children or args.clone:
        rows = (children_rows(args.seed, path, depths, args.children) if args.children
                else clone_rows(args.seed, path, depths, args.clone, args.forks))
        report(rows, args)
        if args.children and args.lookahead:
            la = lookahead_rows(args.seed, path, args.lookahead, args.rounds)
            print(f"Lookahead(Local), median decision over the {args.lookahead} states after 20 moves (median "
                  f"{la['candidates']} candidates), median of {args.rounds} rounds: one call "
                  f"{la['one call'] * 1e3:.1f} ms, one by one {la['one by one'] * 1e3:.1f} ms "
                  f"({la['one by one'] / la['one call']:.1f}x faster)")
        return
    results: dict[tuple[str, int], list[tuple[float, float]]] = {}
    for r in range(args.rounds):
        for arm in ("snapshot", "replay") if r % 2 == 0 else ("replay", "snapshot"):
            use_arm(arm, helper)
            for d in depths:
                results.setdefault((arm, d), []).append(
                    measure(args.seed, path[:d], args.forks, np.random.default_rng(100 + d)))
            if args.lookahead:
                results.setdefault((arm, -1), []).append(lookahead_decisions(args.seed, path, args.lookahead))
    use_arm("snapshot", helper)

    load = os.getloadavg()
    print(f"TWX fork + first step vs a plain step, hard CookingWorld test game {args.seed}, median of "
          f"{args.forks} forks, median of {args.rounds} rounds; {os.cpu_count()} cpus, load average "
          f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}")
    print(f"{'depth':>5}  {'arm':<8}  {'fork + first step':>17}  {'plain step':>10}  {'ratio':>6}  "
          f"{'speed-up':>8}")
    for d in depths:
        fs = {arm: statistics.median(x[0] for x in results[(arm, d)]) for arm in ("replay", "snapshot")}
        for arm in ("replay", "snapshot"):
            first = fs[arm]
            plain = statistics.median(x[1] for x in results[(arm, d)])
            speed = f"{fs['replay'] / first:.1f}x" if arm == "snapshot" else ""
            print(f"{d:>5}  {arm:<8}  {first * 1e3:>14.2f} ms  {plain * 1e3:>7.2f} ms  {first / plain:>5.1f}x  "
                  f"{speed:>8}")
    if args.lookahead:
        la = {arm: statistics.median(x[0] for x in results[(arm, -1)]) for arm in ("replay", "snapshot")}
        count = results[("snapshot", -1)][0][1]
        print(f"Lookahead(Local), median decision over the first {args.lookahead} states (median {count} "
              f"candidates): replay {la['replay'] * 1e3:.1f} ms, snapshot {la['snapshot'] * 1e3:.1f} ms "
              f"({la['replay'] / la['snapshot']:.1f}x faster)")


def report(rows: list[tuple], args: argparse.Namespace) -> None:
    """The children or clone table, with the load average."""
    load = os.getloadavg()
    print(f"hard CookingWorld test game {args.seed}; {os.cpu_count()} cpus, load average {load[0]:.1f} / "
          f"{load[1]:.1f} / {load[2]:.1f}")
    if args.clone:
        print(f"s1gym fork + first step (median of {args.forks}) vs TWX clone() + first step (median of "
              f"{args.clone}), warm")
        print(f"{'depth':>5}  {'s1gym fork':>10}  {'TWX clone':>10}  {'ratio':>8}  {'fork CPU':>9}  "
              f"{'clone CPU':>9}  {'CPU ratio':>9}")
        for d, fork_s, fork_cpu, clone_s, clone_cpu in rows:
            print(f"{d:>5}  {fork_s * 1e3:>7.2f} ms  {clone_s * 1e3:>7.0f} ms  1/{clone_s / fork_s:>6,.0f}  "
                  f"{fork_cpu * 1e3:>6.2f} ms  {clone_cpu * 1e3:>6.0f} ms  1/{clone_cpu / fork_cpu:>7,.0f}")
        return
    print(f"one expansion's children (every candidate), median of {args.children} expansions per arm; CPU: "
          f"this process + the JVM over all of them")
    print(f"{'depth':>5}  {'arm':<34}  {'children':>8}  {'per child':>9}  {'children/s':>10}  "
          f"{'vs plain step':>13}  {'CPU per child':>13}  {'vs plain step':>13}")
    for d, arm, wall, cpu, (plain, plain_cpu), n in rows:
        print(f"{'cold' if d < 0 else d:>5}  {arm:<34}  {n:>8}  {wall * 1e3:>6.3f} ms  {1 / wall:>10,.0f}  "
              f"{wall / plain:>12.2f}x  {cpu * 1e3:>10.3f} ms  {cpu / plain_cpu:>12.2f}x")
    plains = sorted({(d, plain) for d, _, _, _, plain, _ in rows if d >= 0})
    print("plain step (wall median, CPU mean): " + ", ".join(
        f"depth {d} {p * 1e3:.3f} ms, {c * 1e3:.3f} ms" for d, (p, c) in plains))


if __name__ == "__main__":
    main()
