"""Decision-model benchmarks: Local's cold and warm latency, Search/Lookahead with Local, `s1 serve` throughput.

    python bench/policies.py              # everything (about 15 minutes on 2 quiet cores)
    python bench/policies.py --quick      # fewer states, requests and games (a few minutes)
    python bench/policies.py --only latency --threads 1

Every Local number is printed next to the embedding path *before* issue 17
(``policies/local.py`` at ``bench/local_states.py:BEFORE_COMMIT``, loaded from
git history: one ``SentenceTransformer.encode`` call with batch size 64, torch)
measured in the same run on the same states, so the ratios hold on a busy
machine even when the absolute numbers do not. Implementations:

- ``onnx``: today's default (length-bucketed passes, ONNX Runtime);
- ``torch``: today's path on the torch backend (``S1GYM_LOCAL_BACKEND=torch``);
- ``before``: the old path.

**Cold** = the embedding cache emptied before the decision, so every text of
the state is embedded (a state never seen in this process). **Warm** = the
same state decided again, every text cached (what Search's re-visits and a
game's repeated moves mostly cost). Latency is wall time of ``Local.decide``;
median and p95 over the states (a fixed subsample of bench/local_states.py's
real states, each widened or narrowed to N real candidates of its task).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import local_states  # noqa: E402  (its import keeps bench/ off sys.path afterwards: bench/alfworld.py shadows alfworld)

from s1gym.core import BasePolicy, Situation  # noqa: E402

IMPLEMENTATIONS = ("onnx", "torch", "before")


class Threaded(BasePolicy):
    """A policy whose decisions run with ``threads`` torch threads (the old path reads torch's global setting)."""

    def __init__(self, policy, threads: int) -> None:
        self.policy, self.threads, self.name = policy, threads, policy.name

    def decide(self, situation: Situation):
        import torch

        torch.set_num_threads(self.threads)
        return self.policy.decide(situation)

    def reset(self) -> None:
        self.policy.reset()


class Implementations:
    """Local with each embedding path, built once (the old module loads its own model)."""

    def __init__(self) -> None:
        self._before = None
        self._embedders: dict[tuple[str, int], object] = {}

    def policy(self, name: str, threads: int):
        """(policy, clear-its-cache) for an implementation and thread count."""
        from s1gym.policies import Local, minilm

        if name == "before":
            if self._before is None:
                self._before = local_states.load_before()
            module = self._before
            return Threaded(module.Local(), threads), module._CACHE.clear
        key = (name, threads)
        if key not in self._embedders:
            self._embedders[key] = minilm.load(name, threads=threads)
        embedder = self._embedders[key]
        return Local(embedder=embedder), embedder.cache.clear


LOAD_SCRIPT = """
import json, resource, sys, time
started = time.perf_counter()
sys.path.insert(0, {bench!r})
name = {name!r}
if name == "before":
    import local_states
    local_states.load_before().Local()
else:
    from s1gym.policies import Local, minilm
    Local(embedder=minilm.load(name))
print(json.dumps({{"seconds": time.perf_counter() - started,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "torch": "torch" in sys.modules}}))
"""


def loading(names: list[str]) -> None:
    """A fresh process: import s1gym, build Local (for onnx: the cached export, as every process after the first)."""
    import json
    import subprocess

    print("## Loading Local in a fresh process (imports, weights or the cached ONNX graph, first session)")
    print("| implementation | seconds | peak RSS | imports torch |")
    print("|---|---|---|---|")
    bench = str(Path(__file__).resolve().parent)
    for name in names:
        out = subprocess.run([sys.executable, "-c", LOAD_SCRIPT.format(bench=bench, name=name)], check=True,
                             capture_output=True, text=True).stdout
        row = json.loads(out.strip().splitlines()[-1])
        print(f"| {name} | {row['seconds']:.1f} | {row['rss_mb']:.0f} MB | {'yes' if row['torch'] else 'no'} |",
              flush=True)
    print()


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def latency(impls: Implementations, names: list[str], threads: list[int], counts: list[int], states: int) -> None:
    pools = {task: local_states.collect(task) for task in local_states.COLLECTORS}
    print(f"## Local decision latency, ms (cold: nothing cached; warm: the same state again; {states} states a row; "
          "wall time, and the process's CPU time for the cold median: with one thread, what a free core gives)")
    print("| task | N | implementation | threads | cold median | cold p95 | cold median, CPU | warm median | warm p95 "
          "| before ÷ this (cold median) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for task, pool in pools.items():
        picked = pool[:: max(1, len(pool) // states)][:states]
        done: set[int] = set()
        for n in counts:
            cases = local_states.with_candidates(picked, n, pool)
            real_n = len(cases[0].candidates)  # tickets have 27 queues: 30 and 100 give 27
            if real_n in done:
                continue
            done.add(real_n)
            rows = {}
            for t in threads:
                for name in names:
                    policy, clear = impls.policy(name, t)
                    clear()
                    policy.decide(cases[0])  # first forward pass at these shapes (allocations), not timed
                    cold, cold_cpu, warm = [], [], []
                    for s in cases:
                        clear()
                        started, cpu = time.perf_counter(), time.process_time()
                        policy.decide(s)
                        cold.append((time.perf_counter() - started) * 1e3)
                        cold_cpu.append((time.process_time() - cpu) * 1e3)
                        started = time.perf_counter()
                        policy.decide(s)
                        warm.append((time.perf_counter() - started) * 1e3)
                    rows[(name, t)] = (statistics.median(cold), percentile(cold, 95), statistics.median(cold_cpu),
                                       statistics.median(warm), percentile(warm, 95))
            for (name, t), (cm, cp, cc, wm, wp) in rows.items():
                base = rows.get(("before", t))
                ratio = f"{base[0] / cm:.1f}×" if base and name != "before" else ""
                print(f"| {task} | {real_n} | {name} | {t} | {cm:.1f} | {cp:.1f} | {cc:.1f} | {wm:.2f} | {wp:.2f} "
                      f"| {ratio} |", flush=True)
    print()


def search_expansions(impls: Implementations, names: list[str], seeds: list[int]) -> None:
    """Search(Local) on CookingWorld large (test fold), budget 100 a search, 300 a game; cache emptied per game."""
    import gymnasium as gym

    from s1gym.wrappers import Search

    print(f"## Search(Local), CookingWorld large, test seeds {seeds}: ms per expansion (one thread; cache emptied "
          "at each game's start, warm within it)")
    print("| implementation | expansions | calls | moves | ms / expansion | CPU ms / expansion (this process) "
          "| before ÷ this |")
    print("|---|---|---|---|---|---|---|")
    results = {}
    for name in names:
        expansions = calls = moves = 0
        seconds = cpu = 0.0
        for seed in seeds:
            policy, clear = impls.policy(name, 1)
            clear()
            env = gym.make("s1/CookingWorld-v0", size="large", fold="test")
            env.reset(seed=seed)
            search = Search(policy, budget=100, episode_budget=300)
            search.reset()
            started, cpu_started = time.perf_counter(), time.process_time()
            while not env.unwrapped.done:
                d = search.decide(env.unwrapped.situation())
                if d.info.get("give_up"):
                    break
                expansions += d.info["expansions"]
                env.step(d.action)
            seconds += time.perf_counter() - started
            cpu += time.process_time() - cpu_started
            calls += search.episode_calls
            moves += env.unwrapped.steps
            env.close()
        results[name] = (expansions, calls, moves, seconds * 1e3 / max(1, expansions), cpu * 1e3 / max(1, expansions))
    for name, (e, c, m, ms, cpu_ms) in results.items():
        base = results.get("before")
        ratio = f"{base[3] / ms:.1f}× (CPU {base[4] / cpu_ms:.1f}×)" if base and name != "before" else ""
        print(f"| {name} | {e} | {c} | {m} | {ms:.1f} | {cpu_ms:.1f} | {ratio} |", flush=True)
    print()


def alfworld_lookahead(impls: Implementations, names: list[str], games: int, steps: int) -> None:
    """Lookahead(Local) on ALFWorld (bench/alfworld.py's games and hygiene): seconds per step, same moves."""
    import gymnasium as gym

    from s1gym.wrappers import Lookahead

    shared = local_states.SHARED / "alfworld"
    options = ({"data_dir": str(shared), "split": "valid_seen", "stride": 11}
               if (shared / "json_2.1.1" / "valid_seen").is_dir() else {"split": "scenes"})
    print(f"## Lookahead(Local), ALFWorld ({options.get('split')}, seeds 0-{games - 1}, first {steps} steps, hygiene on): "
          "s per step (one thread; cache emptied at each game's start)")
    print("| implementation | steps | s / step | CPU s / step | before ÷ this | same moves as before |")
    print("|---|---|---|---|---|---|")
    results = {}
    for name in names:
        policy, clear = impls.policy(name, 1)
        lookahead = Lookahead(policy)
        env = gym.make("s1/ALFWorld-v0", hygiene=True, **options)
        moves: list[str] = []
        seconds = cpu = 0.0
        for seed in range(games):
            clear()
            env.reset(seed=seed)
            lookahead.reset()
            for _ in range(steps):
                if env.unwrapped.done:
                    break
                situation = env.unwrapped.situation()
                started, cpu_started = time.perf_counter(), time.process_time()
                d = lookahead.decide(situation)
                seconds += time.perf_counter() - started
                cpu += time.process_time() - cpu_started
                moves.append(situation.candidates[d.action].text)
                env.step(d.action)
        env.close()
        results[name] = (len(moves), seconds / max(1, len(moves)), cpu / max(1, len(moves)), moves)
    before = results.get("before")
    for name, (n, wall, cpu, moves) in results.items():
        ratio = f"{before[1] / wall:.1f}× (CPU {before[2] / cpu:.1f}×)" if before and name != "before" else ""
        same = "" if name == "before" or not before else ("yes" if moves == before[3] else "NO")
        print(f"| {name} | {n} | {wall:.2f} | {cpu:.2f} | {ratio} | {same} |", flush=True)
    print()


def situations_for_serving(requests: int, tag: str) -> list[Situation]:
    states = local_states.with_candidates(local_states.collect("CookingWorld"), 30)
    return [Situation(s.task, f"{s.observation}\n\n{tag} {k}.", s.candidates, s.history)
            for k, s in zip(range(requests), states * (requests // len(states) + 1))]


def serve(impls: Implementations, label: str, make: Callable[[], tuple[object, Callable[[], None]]] | str,
          requests: int, levels: tuple[int, ...]) -> None:
    """Jev through `s1 serve` (decide_many): requests per second at each concurrency, every request a new state."""
    from s1gym.policies import Jev
    from s1gym.ui.serve import make_server

    if isinstance(make, str):
        policy, clear = make, (lambda: None)
    else:
        policy, clear = make()
    rows = []
    with make_server(policy) as server:
        for level in levels:
            clear()  # each level starts cold: its states' observations are new and their moves not cached
            states = situations_for_serving(requests, f"Level {level}")
            jev = Jev(base_url=server.url, max_concurrency=level, timeout=600)  # slow paths queue behind one model
            started, cpu_started = time.perf_counter(), time.process_time()
            jev.decide_many(states)
            rows.append((level, len(states) / (time.perf_counter() - started),
                         (time.process_time() - cpu_started) * 1e3 / len(states)))
            jev.close()
    base = rows[0][1]
    cells = " | ".join(f"{rate:.1f} ({rate / base:.1f}×)" for _level, rate, _cpu in rows)
    print(f"| {label} | {requests} | {cells} | {rows[0][2]:.0f} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="fewer states, requests and games")
    parser.add_argument("--only", default="load,latency,search,alfworld,serve",
                        help="comma list of sections: load, latency, search, alfworld, serve")
    parser.add_argument("--states", type=int, default=None, help="states a latency row (default 12; --quick 4)")
    parser.add_argument("--threads", default="1,2", help="comma list of intra-op thread counts for the latency table")
    parser.add_argument("--implementations", default=",".join(IMPLEMENTATIONS),
                        help="comma list of: onnx, torch, before")
    args = parser.parse_args()
    os.environ.pop("TYPESAFE_API_KEY", None)  # loopback: no key needed
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    sections = set(args.only.split(","))
    names = [n for n in args.implementations.split(",") if n]
    threads = [int(t) for t in args.threads.split(",")]
    impls = Implementations()
    print(f"load average at start: {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)\n", flush=True)
    if "load" in sections:
        loading(names)
    if "latency" in sections:
        latency(impls, names, threads, [10, 30, 100], args.states or (4 if args.quick else 12))
    if "search" in sections:
        search_expansions(impls, names, [0] if args.quick else [0, 1])
    if "alfworld" in sections:
        alfworld_lookahead(impls, names, 1 if args.quick else 2, 6 if args.quick else 10)
    if "serve" in sections:
        levels = (1, 4, 16)
        print("## Jev via `s1 serve` (decide_many, 30 real CookingWorld candidates, every observation new; "
              "server cache emptied before each level): requests/s (vs concurrency 1)")
        print("| server policy | requests | concurrency 1 | 4 | 16 | CPU ms a request (client and server, concurrency 1) |")
        print("|---|---|---|---|---|---|")
        serve(impls, "uniform", "uniform", 64 if args.quick else 200, levels)
        for name in names:
            many = (8 if args.quick else 16) if name == "before" else (32 if args.quick else 96)
            serve(impls, f"local ({name}, 1 thread)", lambda name=name: impls.policy(name, 1), many, levels)
        print()
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
