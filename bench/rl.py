"""RL baselines on s1gym: learning curves against each task's anchors, and encoder throughput.

    python bench/rl.py curves [--only blackjack,2048,cooking-small,cooking-medium]   # docs/rl_<curve>.json and .png
    python bench/rl.py throughput [--seconds 3]

Curves (budgets fixed before looking at results; one training seed, 0, or 1 for DRRN as in its example):

- Blackjack: MaskablePPO (sb3-contrib defaults, MlpPolicy) on ``TaskFeatures`` (the hand's numbers) and on
  ``EncodeText("hash")`` (the text), 30,000 steps, evaluated every 3,000 on 2,000 unseen hands (seeds
  10^6 ... 10^6 + 1999) by greedy play; anchors on the same hands: basic strategy, random, and the exact
  expected payoff of basic strategy, -0.0428 (bench/blackjack.py).
- 2048: examples/maskable_ppo_2048.py's setup (MaskablePPO on ``TaskFeatures``, trained on ``MergeReward``, 8
  envs, minibatches of 256), 300,000 steps, evaluated every 50,000 on the example's 100 unseen games (seeds
  10^6 ... 10^6 + 99); anchors: the fixed-order rule (down, left, right, up) and random on the same games.
  (Until issue 28 this curve was MaskablePPO on the env's own reward, one env, sb3 defaults: 100,000 steps
  evaluated on 10 games; docs/benchmarks.md keeps its result.)
- CookingWorld small and medium: DRRN (examples/drrn_cookingworld.py) trained on train-fold games,
  evaluated greedily on test-fold games 0-19; anchors on the same games: Random, and Search(Uniform) with
  the shipped defaults (budget 100, episode_budget 1000), whose environment steps per game (forks
  included) are counted, so the x axis can place it. Search(Local)'s row is the one in docs/benchmarks.md
  (test games 0-9).

Throughput: environment steps per second of random masked play through ``TaskFeatures`` and
``EncodeText("hash")`` with 1, 2 and 4 envs, sync and async vector envs, against the raw env loop
(no wrapper, no vector env) measured in the same round (ratio), on 2048 and Blackjack; medians over
interleaved rounds. Env construction and worker start-up are outside the timed part.
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
def save(curve: str, record: dict) -> None:
    """Write a curve's record now (after every evaluation, so an interrupted run keeps what it measured)."""
    results_path(curve).write_text(json.dumps(record, indent=1) + "\n")


def ppo_curve(make_env: Callable[[], gym.Env], total: int, every: int, evaluate: Callable, rows: list, done: Callable) -> None:
    from sb3_contrib import MaskablePPO

    model = MaskablePPO("MlpPolicy", make_env(), seed=0)
    held_out = make_env()  # evaluation never touches the training env
    started = time.process_time()
    rows.append({"steps": 0, **evaluate(held_out, model), "cpu_s": 0.0})
    while model.num_timesteps < total:
        model.learn(every, reset_num_timesteps=False)
        rows.append({"steps": model.num_timesteps, **evaluate(held_out, model), "cpu_s": round(time.process_time() - started, 1)})
        done()


def blackjack() -> None:
    hands = range(UNSEEN, UNSEEN + 2000)

    def payoff(env, agent) -> dict:
        finals = play_episodes(env, agent, hands)
        return {"payoff": float(np.mean([i["payoff"] for i in finals]))}

    env = TaskFeatures(gym.make("s1/Blackjack-v0"))
    record: dict = {
        "anchors": {"basic strategy": payoff(env, rule)["payoff"], "random": payoff(env, random_player(0))["payoff"]},
        "hands": len(hands),
        "curves": {},
    }
    for name, make in (
        ("MaskablePPO, TaskFeatures", lambda: TaskFeatures(gym.make("s1/Blackjack-v0"))),
        ("MaskablePPO, EncodeText(hash)", lambda: EncodeText(gym.make("s1/Blackjack-v0"), "hash")),
    ):
        rows = record["curves"][name] = []
        ppo_curve(make, 30_000, 3_000, payoff, rows, lambda: progress("blackjack", record, name))


def game2048() -> None:
    sys.path.insert(0, str(ROOT / "examples"))
    import maskable_ppo_2048 as example

    def score(agent) -> dict:
        played = example.play(agent, example.EVAL_SEEDS)
        return {"score": float(played["score"].mean()), "max_tile": float(played["max_tile"].mean())}

    record: dict = {
        "anchors": {"fixed order": score(example.rule), "random": score(example.random_player(0))},
        "games": len(example.EVAL_SEEDS),
    }
    name = "MaskablePPO, TaskFeatures, MergeReward, 8 envs"
    rows: list = []
    record["curves"] = {name: rows}
    model = example.make_model()
    started = time.process_time()
    rows.append({"steps": 0, **score(model), "cpu_s": 0.0})
    while model.num_timesteps < 300_000:
        model.learn(50_000, reset_num_timesteps=False)
        rows.append({"steps": model.num_timesteps, **score(model), "cpu_s": round(time.process_time() - started, 1)})
        progress("2048", record, name)


def cooking(size: str, total: int, every: int, n_games: int, search: bool) -> None:
    sys.path.insert(0, str(ROOT / "examples"))
    import drrn_cookingworld as drrn

    games = range(n_games)
    rows: list = []
    anchors = {"Random": play_cooking(size, games, random_player(0))}
    if search:
        anchors["Search(Uniform)"] = search_uniform(size, games)
    record = {"anchors": anchors, "games": len(games), "curves": {"DRRN": rows}}
    args = drrn.Args(size=size, total_steps=total, eval_every=every, eval_games=len(games))
    started = time.process_time()

    def log(line: str) -> None:
        rows.append({**json.loads(line), "cpu_s": round(time.process_time() - started, 1)})
        progress(f"cooking-{size}", record, "DRRN")

    drrn.train(args, log=log)


def progress(curve: str, record: dict, name: str) -> None:
    save(curve, record)
    print(curve, name, json.dumps(record["curves"][name][-1]), flush=True)


def play_cooking(size: str, games: range, agent: Callable) -> dict:
    env = gym.make("s1/CookingWorld-v0", size=size, fold="test")
    finals = play_episodes(env, agent, games)
    env.close()
    return {"score": float(np.mean([i["score"] for i in finals])), "solved": float(np.mean([i["won"] for i in finals]))}


def search_uniform(size: str, games: range) -> dict:
    """Search(Uniform) with the shipped defaults; environment steps counted over the env and all its forks."""
    from s1gym.policies import Uniform
    from s1gym.tasks.twx.env import CookingWorldEnv
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
        "blackjack": ("payoff", "mean payoff on {hands:,} unseen hands", "Blackjack: MaskablePPO"),
        "2048": ("score", "score = log2(largest tile) / 11, {games} unseen games", "2048: MaskablePPO"),
        "cooking-small": ("score", "mean score on {games} test-fold games", "CookingWorld small: DRRN"),
        "cooking-medium": ("score", "mean score on {games} test-fold games", "CookingWorld medium: DRRN"),
    }
    for key, (metric, ylabel, title) in specs.items():
        if key not in results:
            continue
        ylabel = ylabel.format(**results[key])
        fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=110)
        for name, rows in results[key]["curves"].items():
            ax.plot([r["steps"] for r in rows], [r[metric] for r in rows], marker="o", label=name)
        colours = iter(["tab:green", "tab:red", "tab:purple", "tab:brown"])
        for name, value in results[key]["anchors"].items():
            y = value[metric] if isinstance(value, dict) else value
            cost = f", {value['env_steps_per_game']:,.0f} env steps a game" if isinstance(value, dict) and "env_steps_per_game" in value else ""
            ax.axhline(y, linestyle="--", color=next(colours), label=f"{name} ({y:.3f}{cost})")
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
def throughput(seconds: float, rounds: int) -> None:
    """Rounds of interleaved measurements; each config's ratio is taken against the raw loop of its own round,
    and the medians over rounds are printed (a busy machine slows whole rounds, not single configs).

    Two rates: steps per wall-clock second, and, for the raw loop and sync vector envs (one process), steps
    per CPU second of that process, which a shared machine's load does not move."""
    print(f"{'task':<10} {'encoder':<16} {'envs':>4} {'mode':<6} {'steps/s':>9} {'x raw':>6} {'steps/CPU-s':>12} {'x raw':>6}")
    wrappers = {"TaskFeatures": TaskFeatures, "EncodeText(hash)": lambda e: EncodeText(e, "hash")}
    for env_id in ("s1/2048-v0", "s1/Blackjack-v0"):
        configs = [(name, n, mode) for name in wrappers for n in (1, 2, 4) for mode in ("sync", "async")]
        raw, rates = [], {c: [] for c in configs}
        for _ in range(rounds):
            raw.append(raw_rate(env_id, seconds))
            for name, n, mode in configs:
                rates[(name, n, mode)].append(vector_rate(env_id, wrappers[name], n, mode, seconds))
        task = env_id[3:-3]
        wall, cpu = np.median([r[0] for r in raw]), np.median([r[1] for r in raw])
        print(f"{task:<10} {'(raw env loop)':<16} {1:>4} {'-':<6} {wall:>9.0f} {1.0:>6.2f} {cpu:>12.0f} {1.0:>6.2f}")
        for (name, n, mode), values in rates.items():
            wall_ratio = np.median([v[0] / r[0] for v, r in zip(values, raw)])
            line = f"{task:<10} {name:<16} {n:>4} {mode:<6} {np.median([v[0] for v in values]):>9.0f} {wall_ratio:>6.2f}"
            if mode == "sync":
                cpu_ratio = np.median([v[1] / r[1] for v, r in zip(values, raw)])
                line += f" {np.median([v[1] for v in values]):>12.0f} {cpu_ratio:>6.2f}"
            print(line, flush=True)


def _rates(steps: int, wall0: float, cpu0: float) -> tuple[float, float]:
    return steps / (time.perf_counter() - wall0), steps / max(time.process_time() - cpu0, 1e-9)


def raw_rate(env_id: str, seconds: float) -> tuple[float, float]:
    env = gym.make(env_id)
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=0)
    steps, wall0, cpu0 = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - wall0 < seconds:
        _, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        steps += 1
        if terminated or truncated:
            _, info = env.reset()
    return _rates(steps, wall0, cpu0)


def vector_rate(env_id: str, wrapper: Callable, n: int, mode: str, seconds: float) -> tuple[float, float]:
    envs = gym.make_vec(env_id, num_envs=n, vectorization_mode=mode, wrappers=[wrapper])
    rng = np.random.default_rng(0)
    _, infos = envs.reset(seed=0)
    steps, wall0, cpu0 = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - wall0 < seconds:
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in infos["action_mask"]])
        _, _, _, _, infos = envs.step(actions)
        steps += n
    rates = _rates(steps, wall0, cpu0)
    envs.close()
    return rates


# ------------------------------------------------------------------------------------------------ main
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    curves = sub.add_parser("curves", help="learning curves; writes docs/rl_<curve>.json and docs/rl_<curve>.png (run parts in parallel with --only)")
    curves.add_argument("--only", default="blackjack,2048,cooking-small,cooking-medium")
    curves.add_argument("--cooking-steps", type=int, default=40_000)
    curves.add_argument("--cooking-every", type=int, default=5_000)
    curves.add_argument("--cooking-games", type=int, default=20, help="test-fold games 0..N-1")
    curves.add_argument("--no-search", action="store_true", help="skip the Search(Uniform) anchor (CPU)")
    sub.add_parser("plot", help="redraw docs/rl_*.png from docs/rl_*.json")
    tp = sub.add_parser("throughput", help="env steps per second through the encoders, vector envs vs raw")
    tp.add_argument("--seconds", type=float, default=1.0, help="per measurement")
    tp.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    if args.command == "throughput":
        throughput(args.seconds, args.rounds)
        return 0
    if args.command == "curves":
        for part in [p.strip() for p in args.only.split(",") if p.strip()]:
            if part == "blackjack":
                blackjack()
            elif part == "2048":
                game2048()
            elif part.startswith("cooking-"):
                cooking(part.removeprefix("cooking-"), args.cooking_steps, args.cooking_every, args.cooking_games, not args.no_search)
            else:
                parser.error(f"unknown curve {part!r}; use {', '.join(CURVES)}")
    results = {c: json.loads(results_path(c).read_text()) for c in CURVES if results_path(c).exists()}
    for path in plot(results):
        print("wrote", path.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
