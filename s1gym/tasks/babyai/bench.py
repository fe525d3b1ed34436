"""python -m s1gym.tasks.babyai.bench: win rates of the bot, random, Local and Lookahead(Local) per level on
seeds fixed in advance, and the fork's cost against a step (docs/benchmarks.md, "BabyAI").

Policies run as s1gym plays them (``s1gym.policies``, ``s1gym.wrappers``); Local reads the shipped model
through the family's declaration unless ``--model`` names another file (then greedy on its scores).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path
from typing import Any

from s1gym.tasks.babyai.env import BabyAIEnv
from s1gym.tasks.babyai.world import DEFAULT_LEVELS

__all__ = ["MULTI_ROOM", "fork_ratio", "main", "play"]

#: the levels of several rooms (longer episodes: the protocol gives them fewer seeds)
MULTI_ROOM = ("Open", "GoToSeq", "SynthSeq", "BossLevel")


def _chooser(name: str, model_path: Path | None) -> Any:
    """A function situation -> move text for ``name`` (bot, random, local, lookahead)."""
    from s1gym.policies import Local
    from s1gym.wrappers import Lookahead

    if model_path is not None:
        from s1gym.policies import Uniform
        from s1gym.tasks.babyai.model import BabyAIModel

        model = BabyAIModel.load(model_path)
        look = Lookahead(Uniform())

        def greedy(situation: Any, ahead: bool) -> str:
            shown, kept = (look.annotate(situation)[:2]) if ahead else (situation, list(range(len(situation.candidates))))
            return situation.candidates[kept[int(model.scores(shown).argmax())]].text

        return {"local": lambda s, env: greedy(s, False), "lookahead": lambda s, env: greedy(s, True)}[name]
    if name == "local":
        policy = Local()
    elif name == "lookahead":
        policy = Lookahead(Local())
    else:
        policy = None
    if policy is not None:
        return lambda s, env: s.candidates[policy.decide(s).action].text
    if name == "bot":
        return lambda s, env: env.expert_action()
    rng = random.Random(0)
    return lambda s, env: rng.choice(s.texts)


def play(policy: str, level: str, seeds: range, fold: str = "test", model_path: Path | None = None) -> dict[str, Any]:
    """Wins, mean score and mean steps of ``policy`` on ``seeds`` of ``level``."""
    choose = _chooser(policy, model_path)
    env = BabyAIEnv(level=level, fold=fold)
    wins, score, steps = 0, 0.0, 0
    for seed in seeds:
        _obs, info = env.reset(seed=seed)
        truncated = False
        while not (info["game_over"] or truncated):
            _obs, _r, _te, truncated, info = env.step_move(choose(env.situation(), env))
        wins += info["won"]
        score += info["score"]
        steps += info["steps"]
    n = len(seeds)
    return {"wins": wins, "n": n, "win_rate": round(wins / n, 3), "score": round(score / n, 3),
            "steps": round(steps / n, 1)}


def fork_ratio(level: str, seed: int = 0, depths: tuple[int, ...] = (5, 10, 20, 40), reps: int = 200) -> dict[str, float]:
    """(fork + first step) / plain step on ``level``, at several depths of a random walk, in one run."""
    env = BabyAIEnv(level=level, fold="test")
    rng = random.Random(seed)
    out = {}
    for depth in depths:
        env.reset(seed=seed)
        for _ in range(depth):
            if env.game_over:
                break
            env.step_move(rng.choice(env.candidates))
        if env.game_over:
            continue
        move = "turn left"
        t = time.perf_counter()
        for _ in range(reps):
            env.fork().step_move(move)
        fork_step = time.perf_counter() - t
        plain = env.fork()
        t = time.perf_counter()
        for _ in range(reps):
            plain.step_move(move)
        step = time.perf_counter() - t
        out[str(depth)] = round(fork_step / step, 2)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--policies", default="bot,random,local,lookahead")
    parser.add_argument("--levels", default=",".join(DEFAULT_LEVELS))
    parser.add_argument("--seeds", type=int, default=100, help="N seeds of each level: START..START+N-1")
    parser.add_argument("--start", type=int, default=0, help="the first seed (default 0)")
    parser.add_argument("--multi-seeds", type=int, default=None,
                        help="N seeds for the multi-room levels (Open, GoToSeq, SynthSeq, BossLevel; default: --seeds)")
    parser.add_argument("--multi-start", type=int, default=None, help="their first seed (default: --start)")
    parser.add_argument("--fold", default="test")
    parser.add_argument("--model", type=Path, default=None, help="a model file to play greedily instead of the shipped one")
    parser.add_argument("--forks", action="store_true", help="also measure the fork's cost")
    args = parser.parse_args(argv)
    for level in args.levels.split(","):
        multi = level in MULTI_ROOM
        n = args.multi_seeds if multi and args.multi_seeds is not None else args.seeds
        first = args.multi_start if multi and args.multi_start is not None else args.start
        seeds = range(first, first + n)
        if args.forks:
            print(json.dumps({"level": level, "fork_ratio": fork_ratio(level)}), flush=True)
        for policy in args.policies.split(","):
            t = time.time()
            row = {"level": level, "policy": policy, "seeds": f"{args.fold} {seeds.start}-{seeds.stop - 1}",
                   **play(policy, level, seeds, args.fold, args.model)}
            row["seconds"] = round(time.time() - t, 1)
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
