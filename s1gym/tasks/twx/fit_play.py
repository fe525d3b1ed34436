"""Play fitted TWX models on a fold: how a model is selected on dev games before it ships
(``python -m s1gym.tasks.twx.fit play``), and the arms bench/twx_heldout.py plays on the protocol's test
games.

An arm is Local alone or under a wrapper (``local``, ``lookahead``, ``search-local``, ``search-uniform``, the
``-progress`` Searches that use the model file's progress estimate as h), or a baseline (``random``, ``rule``:
the task's expert, which says which games can be won at all).
"""

from __future__ import annotations

import json
import time

import numpy as np

from s1gym.tasks.twx.fit import make_env, pool_map

__all__ = ["build_policy", "cmd_play", "play_game"]


def build_policy(arm: str, model_path: str | None):
    from s1gym.policies import Local, Random, Uniform
    from s1gym.wrappers import Lookahead, Search

    def local():
        return Local(pairs=model_path, preload=False) if model_path else Local(preload=False)

    if arm == "random":
        return Random()
    if arm == "rule":  # the task's expert (TWX's gold path, replanned off it): which games can be won
        from s1gym.policies import Rule

        return Rule()
    if arm == "local":
        return local()
    if arm == "lookahead":
        return Lookahead(local())
    if arm == "search-uniform":
        return Search(Uniform(), episode_budget=1000)
    if arm == "search-local":
        return Search(local(), episode_budget=1000)
    if arm.endswith("-progress"):  # the model file's progress estimate as h
        from s1gym.tasks.twx.model import TWXModel

        h = TWXModel.load(model_path).remaining
        inner = local() if arm == "search-local-progress" else Uniform()
        return Search(inner, episode_budget=1000, heuristic=h)
    raise ValueError(f"unknown arm {arm!r}")


def play_game(job: tuple[str, str, int, str, str, str | None]) -> dict:
    task, setting, seed, fold, arm, model_path = job
    from s1gym.runner.episode import play_episode

    t0 = time.process_time()
    wall = time.perf_counter()
    env = make_env(task, setting, seed, fold)
    env.expert_move = lambda: None  # no expert agreement here: it replans every step of a random game
    policy = build_policy(arm, model_path)
    policy.reset()
    out = play_episode(env, policy, seed)
    env.close()
    calls = out["usage"].calls
    return {"task": task, "setting": setting, "seed": seed, "fold": fold, "arm": arm,
            "won": bool(out.get("won")), "score": float(out.get("score", 0.0)), "steps": out.get("steps"),
            "calls": calls, "cpu_s": round(time.process_time() - t0, 2),
            "wall_s": round(time.perf_counter() - wall, 2),
            "play_s": round(out["clock_s"], 2)}  # play alone: no env start, no expert agreement


def cmd_play(args) -> None:
    seeds = range(args.first, args.first + args.games)
    jobs = [(args.task, args.setting, s, args.fold, arm, args.model) for arm in args.arms.split(",") for s in seeds]
    results: dict[str, list[dict]] = {}
    out = open(args.json, "a") if args.json else None
    for r in pool_map(play_game, jobs, args.workers):
        results.setdefault(r["arm"], []).append(r)
        if out:
            out.write(json.dumps({**r, "model": args.model}) + "\n")
            out.flush()
    for arm, rs in results.items():
        won = [r for r in rs if r["won"]]
        calls = sorted(r["calls"] for r in won)
        med = calls[len(calls) // 2] if calls else None
        print(f"{args.task} {args.setting} {args.fold} {arm}: won {len(won)}/{len(rs)}, "
              f"score {np.mean([r['score'] for r in rs]):.3f}, median calls (won) {med}, "
              f"cpu {np.mean([r['cpu_s'] for r in rs]):.1f} s/game", flush=True)
