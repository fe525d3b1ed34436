"""Measurements of the ScienceWorld family (docs/benchmarks.md): gold survival, step and fork cost.

``python -m s1gym.tasks.scienceworld.bench survival --variations 2`` plays the expert (the gold path mapped
to candidates) on the first ``--variations`` train variations of each of the 30 task types and counts the
gold-path states whose gold move names a candidate, the episodes won and the candidate counts.
``python -m s1gym.tasks.scienceworld.bench speed`` times, in one run and one JVM, a raw simulator step
(``PythonInterface.step`` alone), the env's step (the step plus look, inventory, the valid list and the
narrowing) and a fork's first step at depth 40 (a replay: ``load`` and 40 moves, then the step).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import gymnasium as gym

import s1gym  # noqa: F401 - registers the ids
from s1gym.tasks.scienceworld.env import TASKS, ScienceWorldEnv

__all__ = ["gold_survival", "speed"]


def gold_survival(variations: int = 2, tasks: tuple[str, ...] = TASKS) -> dict:
    """The gold path of each game, walked by the expert: per task, the gold states reached before the game
    ends, those whose gold move names a candidate (the expert plays it; where none does, the gold string
    itself is played so the walk stays on the gold path), the gold moves missed, wins and candidate counts."""
    rows = {}
    for task in tasks:
        env: ScienceWorldEnv = gym.make("s1/ScienceWorld-v0", task=task)
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
    """Median seconds of a raw simulator step, the env's step and a fork's first step at ``depth``."""
    env: ScienceWorldEnv = gym.make("s1/ScienceWorld-v0", task=task)
    env.reset(seed=seed)
    gold = env.gold_path()
    if len(gold) <= depth + 1:
        raise ValueError(f"{task} seed {seed}: its gold path has {len(gold)} moves, not more than {depth + 1}")
    steps = []
    while env.steps < depth:
        move = env.expert_action()
        t = time.perf_counter()
        env.step_move(move)
        steps.append(time.perf_counter() - t)
    nxt = env.expert_action()
    forks, at_depth = [], []
    for _ in range(repeats):
        fork = env.fork()  # the engine holds env's state: the fork takes it over and replays (load + moves)
        t = time.perf_counter()
        fork.step_move(nxt)
        forks.append(time.perf_counter() - t)
        held = env.fork()
        held.engine()  # untimed: the engine replays to depth 40 for this fork
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
    out = {"task": task, "seed": seed, "depth": depth, "raw_step": statistics.median(raw),
           "env_step": statistics.median(steps), "step_at_depth": statistics.median(at_depth),
           "fork_first_step": statistics.median(forks)}
    out["env_over_raw"] = out["env_step"] / out["raw_step"]
    out["fork_over_step"] = out["fork_first_step"] / out["step_at_depth"]
    env.close()
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m s1gym.tasks.scienceworld.bench", description=__doc__)
    parser.add_argument("what", choices=("survival", "speed"))
    parser.add_argument("--variations", type=int, default=2)
    parser.add_argument("--tasks", default="", help="comma-separated task names (default: all 30)")
    parser.add_argument("--out", default="")
    args = parser.parse_args(argv)
    if args.what == "survival":
        tasks = tuple(t for t in args.tasks.split(",") if t) or TASKS
        result = gold_survival(args.variations, tasks)
    else:
        result = speed()
    text = json.dumps(result, indent=1)
    print(text if args.what == "speed" else json.dumps({k: v for k, v in result.items() if k != "tasks"}))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
