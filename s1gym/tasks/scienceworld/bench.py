"""Measurements of the ScienceWorld family (docs/benchmarks.md): gold survival, step and fork cost.

``python -m s1gym.tasks.scienceworld.bench survival --variations 2`` plays the expert (the gold path mapped
to candidates) on the first ``--variations`` train variations of each of the 30 task types and counts the
gold-path states whose gold move names a candidate, the episodes won and the candidate counts.
``python -m s1gym.tasks.scienceworld.bench speed`` times, in one run and one JVM, a raw simulator step
(``PythonInterface.step`` alone), the env's step (the step plus look, inventory, the valid list and the
narrowing) and at depth 40 a fork with its first step (:func:`speed`); ``S1GYM_SW_HELPER=0`` runs it without
the family's JVM helper (reads one py4j call each, forks replay). ``python -m s1gym.tasks.scienceworld.bench
forks`` checks snapshots and exact replays against the game played straight on every task (:func:`fork_exactness`).
``python -m s1gym.tasks.scienceworld.bench table`` plays issue 52's first policy table on test variations
(:func:`policy_table`; its games, step limit, Search budget and time caps are fixed in :data:`TABLE_TASKS` and
:data:`TABLE_POLICIES` as docs/benchmarks.md's protocol states them).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

import gymnasium as gym
import numpy as np

import s1gym  # noqa: F401 - registers the ids
from s1gym.core import BasePolicy, Decision, Situation, Usage
from s1gym.tasks.scienceworld.env import TASKS, ScienceWorldEnv

__all__ = ["TABLE_POLICIES", "TABLE_TASKS", "fork_exactness", "gold_survival", "policy_table", "speed"]

#: the table's five task types (docs/benchmarks.md, protocol of 2026-12-06): per ScienceWorld task group
#: (the number before the dash of its id) the type with the shortest gold paths on train variations 0 and 1
#: (the train survival run of 2026-12-05 23:48), then the five groups whose shortest is shortest
TABLE_TASKS = ("find-non-living-thing", "lifespan-longest-lived", "power-component",
               "chemistry-mix-paint-secondary-color", "identify-life-stages-2")
#: the table's policies, in the order they run: (base policy, wrappers outermost first)
TABLE_POLICIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "rule": ("rule", ()),
    "uniform": ("uniform", ()),
    "random": ("random", ()),
    "local": ("local", ()),
    "search(uniform)": ("uniform", ("search",)),
    "search(local)": ("local", ("search",)),
    "lookahead(local)": ("local", ("lookahead",)),
}
#: Search's options in the table: inner-policy calls and seconds per search
TABLE_SEARCH: dict[str, Any] = {"budget": 8, "max_seconds": 20.0}


def gold_survival(variations: int = 2, tasks: tuple[str, ...] = TASKS, fold: str = "train") -> dict:
    """The gold path of each game, walked by the expert: per task, the gold states reached before the game
    ends, those whose gold move names a candidate (the expert plays it; where none does, the gold string
    itself is played so the walk stays on the gold path), the gold moves missed, wins and candidate counts.
    ``fold``: ScienceWorld's split the variations come from (its first ``variations`` of each task)."""
    rows = {}
    for task in tasks:
        env: ScienceWorldEnv = gym.make("s1/ScienceWorld-v0", task=task, fold=fold)
        row = {"states": 0, "kept": 0, "won": 0, "episodes": 0, "max_candidates": 0, "candidates": [], "missed": []}
        for index in range(variations):
            env.reset(seed=index)
            gold = env.gold_path()
            row["episodes"] += 1
            misses = len(row["missed"])
            while not env.done and env.steps < len(gold):
                row["candidates"].append(len(env.candidates))
                row["states"] += 1
                try:
                    move = env.expert_action()
                except RuntimeError:
                    row["missed"].append(gold[env.steps])
                    _play_raw(env, gold[env.steps])  # stay on the gold path to measure the states after it
                    continue
                row["kept"] += 1
                env.step_move(move)
            row["won"] += int(env.won and len(row["missed"]) == misses)  # won on candidates alone
        cands = row.pop("candidates")
        row["max_candidates"] = max(cands, default=0)
        row["median_candidates"] = statistics.median(cands) if cands else 0
        rows[task] = row
        print(task, row, flush=True)
        env.close()
    states = sum(r["states"] for r in rows.values())
    kept = sum(r["kept"] for r in rows.values())
    return {"tasks": rows, "states": states, "kept": kept, "survival": kept / max(states, 1),
            "won": sum(r["won"] for r in rows.values()), "episodes": sum(r["episodes"] for r in rows.values())}


def _play_raw(env: ScienceWorldEnv, move: str) -> None:
    """Play ScienceWorld's own string ``move`` (not a candidate): the bench's way to stay on the gold path."""
    env._feedback = env._play(move)
    env._steps += 1
    env._history = (*env._history, (move, env._feedback))
    env._expert_path = env.game_state.moves
    env._refresh()


def speed(task: str = "inclined-plane-determine-angle", seed: int = 0, depth: int = 40, repeats: int = 10) -> dict:
    """Median seconds (warm: the walk is played once untimed first) of a raw simulator step, the env's step
    along the expert's walk to ``depth`` (with snapshots, each paired with a raw step from the same state
    just before it: ``paired_raw_step`` and the median of the pairs' ratios, ``paired_env_over_raw``),
    a step at ``depth`` on an engine holding the
    state, and at ``depth`` a fork and its first step (with the JVM helper: the snapshot taken at the fork and
    the step; without it: a replay, ``load`` and the moves with the reads between them, and the step), and
    that plus the original taking its engine back (a restore, or a replay)."""
    env: ScienceWorldEnv = gym.make("s1/ScienceWorld-v0", task=task)
    env.reset(seed=seed)
    gold = env.gold_path()
    if len(gold) <= depth + 1:
        raise ValueError(f"{task} seed {seed}: its gold path has {len(gold)} moves, not more than {depth + 1}")
    while env.steps < depth:  # warm-up, untimed: the JVM compiles the simulator's hot code on this walk
        env.step_move(env.expert_action())
    env.reset(seed=seed)
    steps, paired = [], []
    while env.steps < depth:
        move = env.expert_action()
        engine = env.engine()
        if engine.can_snapshot:  # paired: a raw step from this very state just before the env's step
            snap = engine.snapshot()
            # both timed steps start on a restored copy (a raw step right after a snapshot ran about 40 %
            # slower than one after a restore or one in a plain walk: docs/benchmarks.md)
            engine.restore(engine.loaded, snap)
            t = time.perf_counter()
            engine.server.step(move)
            paired.append(time.perf_counter() - t)
            engine.restore(engine.loaded, snap)  # the state again, the global random generator included
        t = time.perf_counter()
        env.step_move(move)
        steps.append(time.perf_counter() - t)
    nxt = env.expert_action()
    forks, rounds, at_depth = [], [], []
    for _ in range(repeats):
        env.engine()  # untimed: the engine holds env's state again
        env.game_state.snapshot = None  # as at a state a step just reached: the fork takes the snapshot
        t = time.perf_counter()
        fork = env.fork()
        fork.step_move(nxt)  # the fork takes the engine (snapshots) or replays on it
        forks.append(time.perf_counter() - t)
        env.engine()  # the original takes its engine back: a restore (snapshots) or a replay
        rounds.append(time.perf_counter() - t)
        held = env.fork()
        held.engine()  # untimed: the engine brought to depth 40 for this fork
        t = time.perf_counter()
        held.step_move(nxt)  # a step at depth 40 on an engine that holds the state
        at_depth.append(time.perf_counter() - t)
    engine = env.engine()
    raw = []
    with engine.jvm.lock:
        engine.replay(env.game_state.game, ())
        for move in env.game_state.moves:
            t = time.perf_counter()
            engine.server.step(move)
            raw.append(time.perf_counter() - t)
    engine.replay(env.game_state.game, env.game_state.moves)
    out = {"task": task, "seed": seed, "depth": depth, "helper": engine.helper is not None,
           "raw_step": statistics.median(raw), "env_step": statistics.median(steps),
           "step_at_depth": statistics.median(at_depth), "fork_first_step": statistics.median(forks),
           "fork_first_step_and_back": statistics.median(rounds)}
    out["env_over_raw"] = out["env_step"] / out["raw_step"]
    if paired:
        out["paired_raw_step"] = statistics.median(paired)
        out["paired_env_over_raw"] = statistics.median(e / r for e, r in zip(steps, paired, strict=True))
    out["fork_over_step"] = out["fork_first_step"] / out["step_at_depth"]
    out["fork_and_back_over_step"] = out["fork_first_step_and_back"] / out["step_at_depth"]
    env.close()
    return out


def fork_exactness(tasks: tuple[str, ...] = TASKS, steps: int = 5) -> dict:
    """Per task (train variation index 0): the engine plays the gold path's first half with every read, then
    ``steps`` more gold moves; a snapshot taken at the half, restored, and an exact replay (``load`` and the
    moves with the reads) each play the same ``steps`` moves. Counts the tasks where all three answers (step
    text, look, inventory, valid list, score, completion) and the global random generator's seed agree."""
    rows = {}
    for task in tasks:
        env: ScienceWorldEnv = gym.make("s1/ScienceWorld-v0", task=task)
        env.reset(seed=0)
        gold = env.gold_path()
        engine = env.engine()
        seed_of = engine.jvm.gateway.jvm.s1gym.scienceworld.S1ScienceWorld.globalSeed
        half = len(gold) // 2
        for move in gold[:half]:
            engine.step(move)
        snap = engine.snapshot()
        game, moves = engine.loaded, engine.moves
        runs = []
        for way in ("played", "restored", "replayed"):
            if way == "restored":
                engine.restore(game, snap)
            elif way == "replayed":
                engine.replay(game, moves)
            answers = [engine.step(move) for move in gold[half:half + steps]]
            runs.append((answers, int(seed_of())))
        rows[task] = {"depth": half, "agree": runs[0] == runs[1] == runs[2]}
        print(task, rows[task], flush=True)
        env.close()
    return {"tasks": rows, "agree": sum(r["agree"] for r in rows.values()), "of": len(rows)}


class _Deadline(BasePolicy):
    """The table's per-game time cap: ``policy``'s decisions until ``seconds`` of the episode have passed
    (checked before each decision), then a decision that gives up (the runner ends the game unsolved with
    the score it reached)."""

    def __init__(self, policy: Any, seconds: float) -> None:
        self.policy, self.seconds = policy, seconds
        self.name = getattr(policy, "name", "policy")
        self.start: float | None = None
        self.capped = False

    def reset(self) -> None:
        self.policy.reset()
        self.start, self.capped = time.perf_counter(), False

    def decide(self, situation: Situation) -> Decision:
        if self.start is not None and time.perf_counter() - self.start > self.seconds:
            self.capped = True
            n = len(situation.candidates)
            return Decision(np.full(n, 1.0 / n), 0, Usage(), {"capped": True}, give_up=True)
        return self.policy.decide(situation)


def policy_table(names: tuple[str, ...] = tuple(TABLE_POLICIES), tasks: tuple[str, ...] = TABLE_TASKS,
                 variations: int = 2, max_steps: int = 30, game_cap_s: float = 120.0,
                 policy_cap_s: float = 720.0, agreement: bool = False, log: Any = print) -> dict:
    """Each named policy (:data:`TABLE_POLICIES`) on the test variations ``0..variations-1`` of each task,
    played in the order variation 0 of every task, then variation 1, ... (so a policy cut by its time cap
    loses whole rounds, not whole tasks), preset ``easy``, ``max_steps`` moves. Per game: won, final score,
    best score during play (TALES's measure), steps, policy calls (Search: inner calls), seconds and
    seconds per decision; a game stops unsolved at ``game_cap_s`` seconds (``capped``) and a policy plays
    no more games once its games took ``policy_cap_s`` seconds (the rest: ``not run``)."""
    from s1gym.policies import make_policy
    from s1gym.runner.episode import play_episode
    from s1gym.runner.spec import make_env
    from s1gym.wrappers import wrap

    games = [(task, v) for v in range(variations) for task in tasks]
    out: dict[str, Any] = {"max_steps": max_steps, "game_cap_s": game_cap_s, "policy_cap_s": policy_cap_s,
                           "search": TABLE_SEARCH, "policies": {}}
    envs: dict[str, Any] = {}
    try:
        for name in names:
            if name not in TABLE_POLICIES:
                raise ValueError(f"unknown table policy {name!r}; use some of {list(TABLE_POLICIES)}")
            base, wrappers = TABLE_POLICIES[name]
            inner = make_policy(base)
            if wrappers:
                inner = wrap(inner, list(wrappers), **(TABLE_SEARCH if "search" in wrappers else {}))
            policy = _Deadline(inner, game_cap_s)
            rows, spent = [], 0.0
            for task, seed in games:
                row: dict[str, Any] = {"task": task, "seed": seed}
                if spent > policy_cap_s:
                    rows.append({**row, "run": False})
                    continue
                if task not in envs:
                    envs[task] = make_env("s1/ScienceWorld-v0", {"task": task, "fold": "test", "max_steps": max_steps})
                env = envs[task]
                t = time.perf_counter()
                try:
                    rec = play_episode(env, policy, seed, agreement=agreement)
                except Exception as exc:  # noqa: BLE001 - a failed game is a row of the table, not the end of it
                    rec = {**getattr(exc, "partial_episode", {}), "error": f"{type(exc).__name__}: {exc}"}
                seconds = time.perf_counter() - t
                spent += seconds
                ticks = rec.get("ticks", [])
                scores = [tick["score"] for tick in ticks if tick.get("score") is not None]
                usage = rec.get("usage") or Usage()
                row.update(run=True, game=rec.get("game"), won=bool(rec.get("won", False)),
                           score=float(rec.get("score", scores[-1] if scores else 0.0)),
                           best=max([0.0, *scores]), steps=int(rec.get("steps", len(ticks))),
                           decisions=len(ticks), calls=int(usage.calls), seconds=round(seconds, 2),
                           s_per_decision=round(seconds / max(len(ticks), 1), 3), capped=policy.capped)
                if "error" in rec:
                    row["error"] = rec["error"]
                rows.append(row)
                log(name, json.dumps(row), flush=True)
            played = [r for r in rows if r["run"]]
            decisions = sum(r["decisions"] for r in played)
            summary = {"games": len(played), "of": len(rows), "won": sum(r["won"] for r in played),
                       "mean_score": statistics.mean(r["score"] for r in played) if played else None,
                       "mean_best": statistics.mean(r["best"] for r in played) if played else None,
                       "calls": sum(r["calls"] for r in played), "decisions": decisions,
                       "seconds": round(spent, 1), "s_per_decision": round(spent / max(decisions, 1), 3),
                       "capped": sum(r.get("capped", False) for r in played),
                       "errors": sum("error" in r for r in played)}
            out["policies"][name] = {"summary": summary, "games": rows}
            log(name, "SUMMARY", json.dumps(summary), flush=True)
    finally:
        for env in envs.values():
            env.close()
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m s1gym.tasks.scienceworld.bench", description=__doc__)
    parser.add_argument("what", choices=("survival", "speed", "forks", "table"))
    parser.add_argument("--variations", type=int, default=2)
    parser.add_argument("--fold", default="train", choices=("train", "dev", "test"),
                        help="survival: the split whose first --variations variations are walked (default train)")
    parser.add_argument("--tasks", default="", help="comma-separated task names (default: all 30)")
    parser.add_argument("--policies", default="",
                        help="table: comma-separated names of TABLE_POLICIES (default: all, in their order)")
    parser.add_argument("--out", default="")
    args = parser.parse_args(argv)
    tasks = tuple(t for t in args.tasks.split(",") if t) or TASKS
    if args.what == "survival":
        result = gold_survival(args.variations, tasks, args.fold)
    elif args.what == "forks":
        result = fork_exactness(tasks)
    elif args.what == "table":
        names = tuple(p for p in args.policies.split(",") if p) or tuple(TABLE_POLICIES)
        result = policy_table(names, tuple(t for t in args.tasks.split(",") if t) or TABLE_TASKS)
    else:
        result = speed()
    text = json.dumps(result, indent=1)
    if args.what == "table":
        print(json.dumps({name: r["summary"] for name, r in result["policies"].items()}, indent=1))
    else:
        print(text if args.what == "speed" else json.dumps({k: v for k, v in result.items() if k != "tasks"}))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
