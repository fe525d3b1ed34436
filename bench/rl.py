"""RL baselines on s1gym: learning curves against each task's anchors, and encoder throughput.

    python bench/rl.py curves [--only blackjack,2048,cooking-small,cooking-medium]   # docs/rl_<curve>.json and .png
    python bench/rl.py throughput [--seconds 3]

Curves (budgets fixed before looking at results; one training seed, 0, or 1 for DRRN as in its example):

- Blackjack: MaskablePPO (sb3-contrib defaults, MlpPolicy) on ``TaskFeatures`` (the hand's numbers) and on
  ``EncodeText("hash")`` (the text), 30,000 steps, evaluated every 3,000 on 2,000 unseen hands (seeds
  10^6 ... 10^6 + 1999) by greedy play; anchors on the same hands: basic strategy, random, and the exact
  expected payoff of basic strategy, -0.0428 (bench/blackjack.py).
- 2048: MaskablePPO on ``TaskFeatures`` (one-hot board), 100,000 steps, evaluated every 20,000 on 10 unseen
  games (seeds 10^6 ...); anchors: the fixed-order rule (down, left, right, up) and random on the same games.
- CookingWorld small and medium: DRRN (examples/drrn_cookingworld.py) trained on train-fold games,
  evaluated greedily on test-fold games 0-19; anchors on the same games: Random, and Search(Uniform) with
  the shipped defaults (budget 100, episode_budget 1000), whose environment steps per game (forks
  included) are counted, so the x axis can place it. Search(Local)'s row is the one in docs/benchmarks.md
  (test games 0-9).

Throughput: environment steps per second of random masked play through ``TaskFeatures`` and
``EncodeText("hash")`` with 1, 2 and 4 envs, sync and async vector envs, against the raw env loop
measured in the same run (ratio), on 2048 and Blackjack.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import gymnasium as gym
import numpy as np

import s1gym  # noqa: F401
from s1gym.rl import EncodeText, TaskFeatures, play_episodes

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
CURVES = ("blackjack", "2048", "cooking-small", "cooking-medium")


def results_path(curve: str) -> Path:
    return DOCS / f"rl_{curve.replace('-', '_')}.json"
BASIC_STRATEGY_EXACT = -0.0428
UNSEEN = 10**6


def rule(env, _observation) -> int:
    return env.unwrapped.index_of(env.unwrapped.rule_action())


def random_player(seed: int) -> Callable:
    rng = np.random.default_rng(seed)
    return lambda env, _obs: int(rng.choice(np.flatnonzero(env.get_wrapper_attr("action_masks")())))


# ---------------------------------------------------------------------------------------------- curves
def ppo_curve(make_env: Callable[[], gym.Env], total: int, every: int, evaluate: Callable, label: str) -> list[dict]:
    from sb3_contrib import MaskablePPO

    model = MaskablePPO("MlpPolicy", make_env(), seed=0)
    held_out = make_env()  # evaluation never touches the training env
    rows = [{"steps": 0, **evaluate(held_out, model)}]
    started = time.process_time()
    while model.num_timesteps < total:
        model.learn(every, reset_num_timesteps=False)
        rows.append({"steps": model.num_timesteps, **evaluate(held_out, model), "cpu_s": round(time.process_time() - started, 1)})
        print(label, json.dumps(rows[-1]), flush=True)
    return rows


def blackjack(results: dict) -> None:
    hands = range(UNSEEN, UNSEEN + 2000)

    def payoff(env, agent) -> dict:
        finals = play_episodes(env, agent, hands)
        return {"payoff": float(np.mean([i["payoff"] for i in finals]))}

    env = TaskFeatures(gym.make("s1/Blackjack-v0"))
    anchors = {"basic strategy": payoff(env, rule)["payoff"], "random": payoff(env, random_player(0))["payoff"]}
    print("blackjack anchors", anchors, flush=True)
    curves = {
        "MaskablePPO, TaskFeatures": ppo_curve(
            lambda: TaskFeatures(gym.make("s1/Blackjack-v0")), 30_000, 3_000, payoff, "blackjack features"
        ),
        "MaskablePPO, EncodeText(hash)": ppo_curve(
            lambda: EncodeText(gym.make("s1/Blackjack-v0"), "hash"), 30_000, 3_000, payoff, "blackjack hash"
        ),
    }
    results["blackjack"] = {"anchors": anchors, "curves": curves, "hands": len(hands)}


def game2048(results: dict) -> None:
    games = range(UNSEEN, UNSEEN + 10)

    def score(env, agent) -> dict:
        finals = play_episodes(env, agent, games)
        return {
            "score": float(np.mean([i["score"] for i in finals])),
            "max_tile": float(np.mean([i["max_tile"] for i in finals])),
            "points": float(np.mean([i["game_score"] for i in finals])),
        }

    env = TaskFeatures(gym.make("s1/2048-v0"))
    anchors = {"fixed order": score(env, rule), "random": score(env, random_player(0))}
    print("2048 anchors", anchors, flush=True)
    curve = ppo_curve(lambda: TaskFeatures(gym.make("s1/2048-v0")), 100_000, 20_000, score, "2048")
    results["2048"] = {"anchors": anchors, "curves": {"MaskablePPO, TaskFeatures": curve}, "games": len(games)}


def cooking(results: dict, size: str, total: int, every: int) -> None:
    sys.path.insert(0, str(ROOT / "examples"))
    import drrn_cookingworld as drrn

    games = range(20)
    anchors = {"Random": play_cooking(size, games, random_player(0)), "Search(Uniform)": search_uniform(size, games)}
    print(f"cooking {size} anchors", anchors, flush=True)
    args = drrn.Args(size=size, total_steps=total, eval_every=every, eval_games=len(games))
    started = time.process_time()
    rows = []

    def log(line: str) -> None:
        rows.append({**json.loads(line), "cpu_s": round(time.process_time() - started, 1)})
        print(f"cooking {size}", json.dumps(rows[-1]), flush=True)

    drrn.train(args, log=log)
    results[f"cooking-{size}"] = {"anchors": anchors, "curves": {"DRRN": rows}, "games": len(games)}


def play_cooking(size: str, games: range, agent: Callable) -> dict:
    env = gym.make("s1/CookingWorld-v0", size=size, fold="test")
    finals = play_episodes(env, agent, games)
    env.close()
    return {"score": float(np.mean([i["score"] for i in finals])), "solved": float(np.mean([i["won"] for i in finals]))}


def search_uniform(size: str, games: range) -> dict:
    """Search(Uniform) with the shipped defaults; environment steps counted over the env and all its forks."""
    from s1gym.policies import Uniform
    from s1gym.tasks.twx import CookingWorldEnv
    from s1gym.wrappers import Search

    steps = [0]
    original = CookingWorldEnv.step

    def counted(self, action):
        steps[0] += 1
        return original(self, action)

    CookingWorldEnv.step = counted
    try:
        env = gym.make("s1/CookingWorld-v0", size=size, fold="test")
        policy = Search(Uniform(), budget=100, episode_budget=1000)
        scores, wins, per_game = [], [], []
        for game in games:
            before = steps[0]
            env.reset(seed=game)
            policy.reset()
            while not env.done:
                decision = policy.decide(env.situation())
                if decision.give_up:
                    break
                env.step_move(env.situation().texts[decision.action])
            scores.append(env.score)
            wins.append(env.won)
            per_game.append(steps[0] - before)
        env.close()
    finally:
        CookingWorldEnv.step = original
    return {
        "score": float(np.mean(scores)),
        "solved": float(np.mean(wins)),
        "env_steps_per_game": float(np.median(per_game)),
    }


# ----------------------------------------------------------------------------------------------- plots
def plot(results: dict) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    specs = {
        "blackjack": ("payoff", "mean payoff on 2,000 unseen hands", "Blackjack: MaskablePPO"),
        "2048": ("score", "score = log2(largest tile) / 11, 10 unseen games", "2048: MaskablePPO"),
        "cooking-small": ("score", "mean score on 20 test-fold games", "CookingWorld small: DRRN"),
        "cooking-medium": ("score", "mean score on 20 test-fold games", "CookingWorld medium: DRRN"),
    }
    for key, (metric, ylabel, title) in specs.items():
        if key not in results:
            continue
        fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=110)
        for name, rows in results[key]["curves"].items():
            ax.plot([r["steps"] for r in rows], [r[metric] for r in rows], marker="o", label=name)
        colours = iter(["tab:green", "tab:red", "tab:purple", "tab:brown"])
        for name, value in results[key]["anchors"].items():
            y = value[metric] if isinstance(value, dict) else value
            ax.axhline(y, linestyle="--", color=next(colours), label=f"{name} ({y:.3f})")
        if key == "blackjack":
            ax.axhline(BASIC_STRATEGY_EXACT, linestyle=":", color="grey", label="basic strategy, exact (-0.043)")
        ax.set_xlabel("environment steps (training)")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="best")
        fig.tight_layout()
        path = DOCS / f"rl_{key.replace('-', '_')}.png"
        fig.savefig(path)
        plt.close(fig)
        written.append(path)
    return written


# ------------------------------------------------------------------------------------------ throughput
def throughput(seconds: float) -> None:
    print(f"{'task':<10} {'encoder':<16} {'envs':>4} {'mode':<6} {'steps/s':>9} {'x raw':>7}")
    for env_id, encoders in (
        ("s1/2048-v0", {"TaskFeatures": TaskFeatures, "EncodeText(hash)": lambda e: EncodeText(e, "hash")}),
        ("s1/Blackjack-v0", {"TaskFeatures": TaskFeatures, "EncodeText(hash)": lambda e: EncodeText(e, "hash")}),
    ):
        raw = raw_rate(env_id, seconds)
        print(f"{env_id[3:-3]:<10} {'(raw env loop)':<16} {1:>4} {'-':<6} {raw:>9.0f} {1.0:>7.2f}", flush=True)
        for name, wrapper in encoders.items():
            for n in (1, 2, 4):
                for mode in ("sync", "async"):
                    rate = vector_rate(env_id, wrapper, n, mode, seconds)
                    print(f"{env_id[3:-3]:<10} {name:<16} {n:>4} {mode:<6} {rate:>9.0f} {rate / raw:>7.2f}", flush=True)


def raw_rate(env_id: str, seconds: float) -> float:
    env = gym.make(env_id)
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=0)
    steps, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        _, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        steps += 1
        if terminated or truncated:
            _, info = env.reset()
    return steps / (time.perf_counter() - started)


def vector_rate(env_id: str, wrapper: Callable, n: int, mode: str, seconds: float) -> float:
    envs = gym.make_vec(env_id, num_envs=n, vectorization_mode=mode, wrappers=[wrapper])
    rng = np.random.default_rng(0)
    _, infos = envs.reset(seed=0)
    steps, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in infos["action_mask"]])
        _, _, _, _, infos = envs.step(actions)
        steps += n
    rate = steps / (time.perf_counter() - started)
    envs.close()
    return rate


# ------------------------------------------------------------------------------------------------ main
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    curves = sub.add_parser("curves", help="learning curves; writes docs/rl_<curve>.json and docs/rl_<curve>.png (run parts in parallel with --only)")
    curves.add_argument("--only", default="blackjack,2048,cooking-small,cooking-medium")
    curves.add_argument("--cooking-steps", type=int, default=40_000)
    curves.add_argument("--cooking-every", type=int, default=5_000)
    sub.add_parser("plot", help="redraw docs/rl_*.png from docs/rl_*.json")
    tp = sub.add_parser("throughput", help="env steps per second through the encoders, vector envs vs raw")
    tp.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    if args.command == "throughput":
        throughput(args.seconds)
        return 0
    if args.command == "curves":
        for part in [p.strip() for p in args.only.split(",") if p.strip()]:
            results: dict = {}
            if part == "blackjack":
                blackjack(results)
            elif part == "2048":
                game2048(results)
            elif part.startswith("cooking-"):
                cooking(results, part.removeprefix("cooking-"), args.cooking_steps, args.cooking_every)
            else:
                parser.error(f"unknown curve {part!r}; use {', '.join(CURVES)}")
            results_path(part).write_text(json.dumps(results[part], indent=1) + "\n")
    results = {c: json.loads(results_path(c).read_text()) for c in CURVES if results_path(c).exists()}
    for path in plot(results):
        print("wrote", path.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
