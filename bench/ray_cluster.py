"""Past one machine (issue 56): a job on a Ray cluster of N nodes against each node alone, and the Ray path's
cost per episode against the local pool. Protocol and figures: docs/benchmarks.md, "Past one machine".

    python bench/ray_cluster.py                                   # the protocol's run
    python bench/ray_cluster.py --nodes 2 --cooking 120 --blackjack 3000 --seed 95000
    python bench/ray_cluster.py --node-loss                       # part 3 only

1. Scaling. A loopback cluster (:class:`s1gym.runner.ray_cluster.LoopbackCluster`: ``ray start`` nodes on
   127.0.0.2, 127.0.0.3, ..., one CPU each, so one actor a node) of one node, then of N nodes; on each, the
   same job: CookingWorld medium with ``local`` and Blackjack with ``rule``. Steps per second = the steps of
   every trial over the job's span (the first trial's start to the last trial's end: the engines' start is
   in it, the cluster's and the driver's connection are not), and warm: from the moment as many trials have
   ended as there are slots (every slot's first episode, its engine's start with it, behind) to the last,
   over the steps of the trials begun after that moment. Ratio = the N-node rate over N times the one-node
   rate (each loopback node alone is the same one-CPU node on the same machine).
2. Ray against the local pool. The same seeds with ``--workers 2`` (spawned processes) and with ``--ray``
   (a local Ray of its own, two actors): seconds an episode over the job's span, and the whole call's
   wall time (Ray's start included). The difference per episode is what the Ray path costs.
3. A node lost (``--node-loss``, the issue's run): ``s1 run CookingWorld --option size=medium --seed 7800
   --episodes 60 --policy local --ray ADDRESS --ray-workers 3`` on a three-node loopback cluster, the third
   node's raylet SIGKILLed once 15 trials are written: seeds recorded (each once?), the lost episodes, the
   terminal's lines naming the node, seconds from the kill to the job's end, and the rewards against a
   local ``--workers 2`` run of the same seeds.
4. Soak on Ray (``--soak``): ``s1 run`` jobs on a two-node loopback cluster (Blackjack ``rule``, 20,000
   episodes; CookingWorld medium ``local``, 600), sampling every second the RSS and open descriptors of the
   driver (``s1 run``), of each actor (``ray::_RayPlayer``) and of the processes below the actors (the JVMs).
   Per process, over the samples taken while trials were being written (the driver's end, which reads every
   trial back for the summary table, is reported apart), after a warm-up of the first quarter: RSS growth
   (the median of the last tenth of samples against the median of the first tenth after the warm-up),
   descriptors at the end against after the warm-up, and the actors and engines still alive 10 s after the
   job ended (bench/soak.py's measures, on the Ray path).

Each job's line also gives the machine's busy cores over the call (every process's CPU, the kernel's and
other jobs' included, from /proc/stat) and the driver's CPU an episode: what a node shares its cores with.

Every job is a real :func:`s1gym.runner.evaluate` into a temporary folder; the rewards of each pair of jobs
are compared seed by seed (they must be equal). Figures are from one run; the machine is shared.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from datetime import datetime
from pathlib import Path

from s1gym import jobs
from s1gym.runner import evaluate
from s1gym.runner.ray_cluster import LoopbackCluster

ROOT = Path(__file__).resolve().parents[1]
JOBS = {"cooking": ("CookingWorld", "local", {"size": "medium"}), "blackjack": ("Blackjack", "rule", {})}


def run(kind: str, episodes: int, seed: int, out: Path, name: str, slots: int, **where: object) -> dict:
    task, policy, options = JOBS[kind]
    busy_before, driver_before = _busy_cpu_s(), time.process_time()
    start = time.perf_counter()
    summary = evaluate(task, policy, options=options, episodes=episodes, seed=seed, out=out, job=name,
                       agreement=False, **where)
    wall = time.perf_counter() - start
    busy, driver = _busy_cpu_s() - busy_before, time.process_time() - driver_before
    trials = jobs.load_trials(Path(summary["job_dir"]))
    first = min(datetime.fromisoformat(t["started_at"]) for t in trials)
    last = max(datetime.fromisoformat(t["finished_at"]) for t in trials)
    span = (last - first).total_seconds()
    steps = sum(t["agent_result"]["metadata"]["n_steps"] for t in trials)
    errors = sum(1 for t in trials if t["exception_info"])
    rewards = {jobs.seed_of(t): t["verifier_result"]["rewards"]["reward"] for t in trials}
    # warm: from the moment as many trials have ended as there are slots (each slot's first episode, with its
    # engine's start, behind it) to the last; the steps of the trials that started after that moment
    ends = sorted(datetime.fromisoformat(t["finished_at"]) for t in trials)
    warm_from = ends[slots - 1]
    warm_steps = sum(t["agent_result"]["metadata"]["n_steps"] for t in trials
                     if datetime.fromisoformat(t["started_at"]) >= warm_from)
    warm_span = (last - warm_from).total_seconds()
    return {"kind": kind, "name": name, "episodes": len(trials), "errors": errors, "steps": steps, "span": span,
            "wall": wall, "steps_s": steps / span, "s_episode": span / len(trials), "rewards": rewards,
            "warm_steps_s": warm_steps / warm_span if warm_span > 0 else float("nan"),
            "cores_busy": busy / wall, "driver_ms": 1000 * driver / len(trials)}


def _busy_cpu_s() -> float:
    """CPU seconds this machine has spent busy (every process, the kernel's included) since boot."""
    with open("/proc/stat") as f:
        ticks = [int(x) for x in f.readline().split()[1:]]
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")  # less idle and iowait


def show(r: dict) -> None:
    print(f"  {r['name']:<22} {r['episodes']:>5} episodes {r['errors']} errors {r['steps']:>6} steps  "
          f"span {r['span']:7.2f} s  wall {r['wall']:7.2f} s  {r['steps_s']:8.1f} steps/s  "
          f"{1000 * r['s_episode']:8.2f} ms/episode  warm {r['warm_steps_s']:8.1f} steps/s  "
          f"{r['cores_busy']:.2f} cores busy, driver {r['driver_ms']:.2f} ms CPU/episode", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument("--cooking", type=int, default=120, help="CookingWorld medium episodes a job")
    parser.add_argument("--blackjack", type=int, default=3000, help="Blackjack episodes a job")
    parser.add_argument("--seed", type=int, default=95000)
    parser.add_argument("--skip-scaling", action="store_true")
    parser.add_argument("--skip-overhead", action="store_true")
    parser.add_argument("--node-loss", action="store_true", help="only part 3, the issue's node-loss run")
    parser.add_argument("--soak", action="store_true", help="only part 4, the soak on Ray")
    parser.add_argument("--out", help="write the jobs there and keep them (default: a temporary folder)")
    args = parser.parse_args()
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # the loopback nodes run without Ray's tokens
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    sizes = {"cooking": args.cooking, "blackjack": args.blackjack}
    print(f"load average at start: {os.getloadavg()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="s1bench-ray") as tmp:
        out = Path(args.out or tmp)
        if args.node_loss:
            node_loss(out)
            return
        if args.soak:
            soak(out, {"blackjack": 20000, "cooking": 600}, seed=90000)
            return
        if not args.skip_scaling:
            print(f"1. scaling: one node, then {args.nodes} nodes (one CPU each, loopback)", flush=True)
            results: dict[tuple[str, int], dict] = {}
            for n in (1, args.nodes):
                start = time.perf_counter()
                with LoopbackCluster(nodes=n, cpus=1) as cluster:
                    print(f" cluster of {n} node(s) up in {time.perf_counter() - start:.1f} s "
                          f"({cluster.address})", flush=True)
                    for kind, episodes in sizes.items():
                        r = run(kind, episodes, args.seed, out, f"{kind}-{n}node", n, ray=cluster.address)
                        results[kind, n] = r
                        show(r)
            for kind in sizes:
                one, many = results[kind, 1], results[kind, args.nodes]
                same = one["rewards"] == many["rewards"]
                for key, what in (("steps_s", "whole span"), ("warm_steps_s", "warm")):
                    print(f" {kind} ({what}): {many[key]:.1f} steps/s on {args.nodes} nodes against "
                          f"{args.nodes} x {one[key]:.1f} alone: ratio {many[key] / (args.nodes * one[key]):.3f}",
                          flush=True)
                print(f" {kind}: rewards equal seed by seed: {same}", flush=True)
        if not args.skip_overhead:
            print("2. the Ray path against the local pool (2 slots each, this machine)", flush=True)
            for kind, episodes in sizes.items():
                pool = run(kind, episodes, args.seed, out, f"{kind}-pool", 2, workers=2)
                show(pool)
                ray = run(kind, episodes, args.seed, out, f"{kind}-ray", 2, workers=2, ray=True)
                show(ray)
                extra = ray["s_episode"] - pool["s_episode"]
                print(f" {kind}: Ray {1000 * extra:+.2f} ms an episode ({100 * extra / pool['s_episode']:+.1f} %) "
                      f"over the job's span; whole call {ray['wall'] - pool['wall']:+.1f} s "
                      f"(rewards equal seed by seed: {pool['rewards'] == ray['rewards']})", flush=True)
    print(f"load average at end: {os.getloadavg()}", flush=True)


def node_loss(out: Path) -> None:
    import subprocess
    import sys

    print("3. a node lost: CookingWorld medium, local, seeds 7800-7859, 3 nodes, --ray-workers 3", flush=True)
    start = time.perf_counter()
    with LoopbackCluster(nodes=3, cpus=1) as cluster:
        print(f" cluster of 3 nodes up in {time.perf_counter() - start:.1f} s ({cluster.address})", flush=True)
        job = out / "lost"
        command = [sys.executable, "-m", "s1gym.ui.cli", "run", "CookingWorld", "--option", "size=medium",
                   "--seed", "7800", "--episodes", "60", "--policy", "local", "--ray", cluster.address,
                   "--ray-workers", "3", "--out", str(out), "--job", "lost", "--quiet"]
        begun = time.perf_counter()
        proc = subprocess.Popen(command, env=cluster.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        while len(list(job.glob("*/result.json"))) < 15:
            if proc.poll() is not None:
                raise SystemExit(f"the job ended before 15 trials: {proc.stderr.read()}")
            time.sleep(0.05)
        pid = cluster.kill_node(2)
        killed = time.perf_counter()
        print(f" 15 trials after {killed - begun:.1f} s: SIGKILL to the raylet of node 127.0.0.4 (pid {pid})",
              flush=True)
        _, err = proc.communicate(timeout=1200)
        ended = time.perf_counter()
    trials = jobs.load_trials(job)
    seeds = sorted(jobs.seed_of(t) for t in trials)
    replayed = {jobs.seed_of(t): [(a["kind"], a["exception_message"]) for a in t["retries"]] for t in trials
                if t["retries"]}
    print(f" exit {proc.returncode}; {len(trials)} trials, seeds 7800-7859 each once: "
          f"{seeds == list(range(7800, 7860))}; errors {sum(1 for t in trials if t['exception_info'])}", flush=True)
    print(f" replayed: {replayed}", flush=True)
    print(f" the kill to the job's end {ended - killed:.1f} s; the whole job {ended - begun:.1f} s", flush=True)
    print(" terminal lines naming the node: " + repr([ln for ln in err.splitlines() if "127.0.0.4" in ln]))
    print(" job.log: " + repr([ln[:220] for ln in (job / "job.log").read_text().splitlines()
                                if "Ray node" in ln or "episodes per" in ln]), flush=True)
    local = run("cooking", 60, 7800, out, "lost-local", 2, workers=2)
    remote = {jobs.seed_of(t): t["verifier_result"]["rewards"]["reward"] for t in trials}
    print(f" rewards equal to a local --workers 2 run seed by seed: {remote == local['rewards']}", flush=True)


def _sample(pid: int) -> tuple[int, int] | None:
    """(RSS in kB, open descriptors) of a live process, or None."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None
    rss = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")), 0)
    return rss, fds


def _ours(driver: int) -> dict[int, str]:
    """The job's processes: the driver, the actors, and every process below an actor (its engines)."""
    from s1gym.runner.ray_cluster import _descendants, _proc_table

    table = _proc_table()
    found = {driver: "driver"} if driver in table else {}
    for pid, (_, cmd) in table.items():
        if cmd.startswith("ray::_RayPlayer"):
            found[pid] = "actor"
            for child in _descendants(pid):
                found[child] = table.get(child, (0, "?"))[1].split(" ", 1)[0].rsplit("/", 1)[-1]
    return found


def soak(out: Path, sizes: dict[str, int], seed: int) -> None:
    import statistics
    import subprocess
    import sys
    import threading

    print(f"4. soak on Ray: {sizes} from seed {seed}, two one-CPU loopback nodes", flush=True)
    with LoopbackCluster(nodes=2, cpus=1) as cluster:
        for kind, episodes in sizes.items():
            task, policy, options = JOBS[kind]
            command = [sys.executable, "-m", "s1gym.ui.cli", "run", task, "--policy", policy, "--episodes",
                       str(episodes), "--seed", str(seed), "--ray", cluster.address, "--agreement", "off",
                       "--out", str(out), "--job", f"soak-{kind}", "--quiet",
                       *(x for k, v in options.items() for x in ("--option", f"{k}={v}"))]
            series: dict[tuple[int, str], list[tuple[int, int]]] = {}
            begun = time.perf_counter()
            proc = subprocess.Popen(command, env=cluster.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                    text=True)
            stop = threading.Event()

            after: dict[tuple[int, str], list[tuple[int, int]]] = {}  # once every trial is written

            def sampler(driver: int = proc.pid, stop: threading.Event = stop, job: Path = out / f"soak-{kind}",
                        total: int = episodes, series: dict[tuple[int, str], list[tuple[int, int]]] = series,
                        after: dict[tuple[int, str], list[tuple[int, int]]] = after) -> None:
                while not stop.is_set():
                    # the samples of the job's play; then the driver's end (the summary table reads every
                    # trial back) apart
                    done = job.is_dir() and sum(1 for e in os.scandir(job) if e.is_dir()) >= total
                    for pid, label in _ours(driver).items():
                        got = _sample(pid)
                        if got:
                            (after if done else series).setdefault((pid, label), []).append(got)
                    stop.wait(1.0)

            thread = threading.Thread(target=sampler, daemon=True)
            thread.start()
            _, err = proc.communicate(timeout=3600)
            stop.set()
            thread.join()
            took = time.perf_counter() - begun
            time.sleep(10)
            left = _ours(-1)
            trials = jobs.load_trials(out / f"soak-{kind}")
            print(f" {kind}: exit {proc.returncode}, {len(trials)} trials in {took:.0f} s, "
                  f"{sum(1 for t in trials if t['exception_info'])} errors; alive 10 s after: {left or 'none'}",
                  flush=True)
            if proc.returncode:
                print(err[-2000:], flush=True)
            for (pid, label), samples in sorted(series.items(), key=lambda kv: kv[0][1]):
                if len(samples) < 20:
                    print(f"  {label:<8} pid {pid}: {len(samples)} samples (too few)", flush=True)
                    continue
                warm = samples[len(samples) // 4:]
                tenth = max(1, len(warm) // 10)
                first = statistics.median(r for r, _ in warm[:tenth])
                last = statistics.median(r for r, _ in warm[-tenth:])
                end = after.get((pid, label), [])
                print(f"  {label:<8} pid {pid}: {len(samples)} samples, RSS {first / 1024:.1f} -> "
                      f"{last / 1024:.1f} MB ({100 * (last - first) / first:+.1f} %), peak "
                      f"{max(r for r, _ in samples) / 1024:.1f} MB; fds {warm[0][1]} -> {samples[-1][1]}"
                      + (f"; after the last trial (summary, table): peak {max(r for r, _ in end) / 1024:.1f} MB"
                         if end else ""), flush=True)


if __name__ == "__main__":
    main()
