"""Fit Local's models of Blackjack, 2048, the calculator, tickets and injection, and play the held-out arms
(bench/others_protocol.md says which seeds, rows and arms, and why).

    python bench/others_local.py fit blackjack        # train -> L2 on dev -> does it pay on dev? -> s1gym/data
    python bench/others_local.py heldout blackjack    # the protocol's test arms -> docs/data/others_heldout.jsonl
    python bench/others_local.py report               # the tables for docs/benchmarks.md

Tasks: blackjack, 2048, calculator, tickets, injection. Labels: the task's expert (Blackjack's basic strategy,
the calculator's typing plan), the data's labels (tickets, injection), or for 2048 the rule's move or its
one-step improvement by rollouts (``--labels rule|rollout``), on the states roll-ins visit. Every fit goes
through :mod:`s1gym.policies.fitting` and ships a :class:`s1gym.policies.family_model.FamilyModel`.
Shared data: ``$S1GYM_SHARED_DATA`` or ../shared/data beside the checkout; fold files are written to
``~/.cache/s1gym/others`` (never into the repository).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from s1gym.errors import EngineCrashed

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("S1GYM_SHARED_DATA") or ROOT.parent / "shared" / "data")
CACHE = Path("~/.cache/s1gym/others").expanduser()
OUT = ROOT / "docs" / "data" / "others_heldout.jsonl"
L2_GRID = (0.01, 0.1, 1.0, 10.0)
MIN_COUNT = 2  # a feature name gets a weight only when met in at least this many training decisions

TASKS: dict[str, dict[str, Any]] = {
    "blackjack": dict(id="s1/Blackjack-v0", train=range(1_000_000, 1_020_000), dev=range(2_000_000, 2_005_000),
                      dev_minilm=1_000, test=range(3_000_000, 3_020_000), test_minilm=2_000, noise=0.3,
                      arms=("rule", "random", "uniform", "local", "local-minilm")),
    "2048": dict(id="s1/2048-v0", train=range(10_000, 10_100), dev=range(20_000, 20_030), dev_minilm=30,
                 test=range(31_000, 31_100), test_minilm=20, test_search=20, noise=0.3, keep_every=3, cap=3000,
                 rollout_cap={"train": 600, "dev": 300}, rollouts=2, search={"budget": 20},
                 arms=("rule", "random", "local", "lookahead-local", "search-uniform", "search-local",
                       "local-minilm")),
    "calculator": dict(id="s1/Calculator-v0", train=range(1_000, 1_060), dev=range(2_000, 2_020), dev_minilm=20,
                       test=range(3_000, 3_030), test_minilm=30, test_search_uniform=10, noise=0.3, noisy_moves=4,
                       search={"budget": 50, "episode_budget": 200},
                       arms=("rule", "random", "uniform", "local", "local-minilm", "lookahead-local",
                             "search-uniform", "search-local")),
    "tickets": dict(id="s1/TicketRouter-v0", source="tickets/bitext_customer_support.csv", text="instruction",
                    label="category", licence="CDLA-Sharing-1.0 (results of computational use, its section 3.5)",
                    origin="Bitext customer-support sample (github.com/bitext/customer-support-llm-chatbot-"
                           "training-dataset at 337b968), 3,181-row subset", dev_minilm=None, test_minilm=None,
                    arms=("rule", "uniform", "random", "local", "local-minilm")),
    "injection": dict(id="s1/InjectionGuard-v0", source="injection/prompt_injections.jsonl", text="text",
                      label="label", licence="Apache-2.0",
                      origin="deepset/prompt-injections by deepset GmbH (Apache-2.0), 449-row subset of train+test",
                      dev_minilm=None, test_minilm=None, arms=("rule", "uniform", "random", "local", "local-minilm")),
}
FOLDS = {"train": range(0, 6), "dev": range(6, 8), "test": range(8, 10)}


# ------------------------------------------------------------------ data and envs
def text_fold(text: str) -> str:
    """The protocol's fold of a labelled text: sha256 of its normalised form, mod 10."""
    norm = re.sub(r"\s+", " ", re.sub(r"\d+", "0", text.lower())).strip()
    k = int(hashlib.sha256(norm.encode()).hexdigest(), 16) % 10
    return next(f for f, r in FOLDS.items() if k in r)


def fold_file(task: str, fold: str) -> tuple[Path, list[str]]:
    """The fold's rows as JSONL in the cache (text, label), and every label of the whole set, sorted."""
    from s1gym.datasets import load_labelled_texts
    from s1gym.tasks.text.injection import injection_label

    spec = TASKS[task]
    items = load_labelled_texts(str(SHARED / spec["source"]), text_column=spec["text"], label_column=spec["label"],
                                labels=None, label_map=injection_label if task == "injection" else None, what="rows")
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"{task}_{fold}.jsonl"
    with path.open("w") as f:
        for item in items:
            if text_fold(item.text) == fold:
                f.write(json.dumps({"text": item.text, "label": item.label}) + "\n")
    return path, sorted({i.label for i in items})


def make_env(task: str, fold: str = "test"):
    import gymnasium as gym

    import s1gym  # noqa: F401

    spec = TASKS[task]
    if "source" not in spec:
        return gym.make(spec["id"]).unwrapped
    path, labels = fold_file(task, fold)
    if task == "tickets":
        return gym.make(spec["id"], tickets=str(path), text_column="text", label_column="label",
                        queues=labels).unwrapped
    return gym.make(spec["id"], texts=str(path)).unwrapped


def seeds_of(task: str, fold: str, env=None) -> range:
    spec = TASKS[task]
    return range(len(env.items)) if "source" in spec else spec[fold]


# ------------------------------------------------------------------ labelled states
def good_moves(task: str, env, rng: random.Random) -> list[str]:
    """The labels of the env's current state: the expert's move, or for 2048 ``--labels rollout`` the moves
    whose rule rollouts (fresh spawns) end with the best mean log2(largest tile)."""
    if task != "2048" or not LABELS_2048["rollout"]:
        return [env.expert_action()]
    board = env.board.tolist()
    means = {}
    for move in env.candidates:
        values = []
        for _ in range(TASKS[task]["rollouts"]):
            sim = ROLLOUT_ENV
            sim.reset(seed=rng.randrange(2**62), options={"board": board})
            sim.step_move(move)
            while not sim.done:
                sim.step_move(sim.rule_action())
            values.append(math.log2(sim.max_tile))
        means[move] = float(np.mean(values))
    best = max(means.values())
    return [m for m, v in means.items() if v >= best - 1e-9]


LABELS_2048 = {"rollout": False}
ROLLOUT_ENV: Any = None


def collect(task: str, fold: str) -> list[tuple[list[list[str]], list[int]]]:
    """(feature names per candidate, good indices) for every labelled state of ``fold``."""
    from s1gym.policies.family_model import reader

    read = reader(task)
    env = make_env(task, fold)
    spec = TASKS[task]
    groups, kept = [], []
    rng = random.Random(f"{task}-{fold}")
    for seed in seeds_of(task, fold, env):
        env.reset(seed=seed)
        moves = 0
        while not env.done and env.candidates:
            situation = env.situation()
            texts = [c.text for c in situation.candidates]
            if "source" in spec or moves % spec.get("keep_every", 1) == 0:
                kept.append((situation, [texts.index(m) for m in good_moves(task, env, rng)]
                             if task != "2048" else env.board.tolist()))
            noisy = fold == "train" and moves < spec.get("noisy_moves", 10**9) and rng.random() < spec.get("noise", 0)
            env.step_move(rng.choice(texts) if noisy else env.expert_action())
            moves += 1
    env.close()
    if task == "2048":  # label the kept states (the rollouts are the cost), at most ``cap`` of them
        cap = spec["rollout_cap"][fold] if LABELS_2048["rollout"] else spec["cap"]
        if len(kept) > cap:
            kept = random.Random(0).sample(kept, cap)
        sim = make_env(task)
        for situation, board in kept:
            sim.reset(seed=0, options={"board": board})
            texts = [c.text for c in situation.candidates]
            groups.append((read(situation), [texts.index(m) for m in good_moves(task, sim, rng)]))
        return groups
    return [(read(s), good) for s, good in kept]


def design(groups, vocab=None):
    from s1gym.policies.fitting import Design

    if vocab is None:
        counts = Counter(n for rows, _ in groups for n in {n for row in rows for n in row})
        vocab = {n: j for j, n in enumerate(sorted(n for n, k in counts.items() if k >= MIN_COUNT))}
    return Design(groups, vocab=vocab, growing=False)


# ------------------------------------------------------------------ policies and play
def make_policy(task: str, arm: str, model=None):
    from s1gym.policies import Local, Random, Rule, Uniform
    from s1gym.wrappers import Lookahead, Search

    local = (lambda: Local(pairs=model, preload=False))
    if arm == "rule":
        return Rule()
    if arm == "random":
        return Random(seed=0)
    if arm == "uniform":
        return Uniform()
    if arm == "local":
        return local()
    if arm == "local-minilm":
        return Local(pairs=False)
    if arm == "lookahead-local":
        return Lookahead(local())
    if arm in ("search-uniform", "search-local"):
        return Search(Uniform() if arm == "search-uniform" else local(), **TASKS[task]["search"])
    raise SystemExit(f"unknown arm {arm!r}")


def play(env, policy, seed: int) -> dict:
    """One episode: what the report needs of it."""
    started, cpu = time.perf_counter(), time.process_time()
    _, info = env.reset(seed=seed)
    policy.reset()
    calls, gave_up = 0, False
    while not env.done and env.candidates:
        situation = env.situation()
        decision = policy.decide(situation)
        calls += decision.usage.calls
        if decision.give_up:
            gave_up = True
            break
        # by the move's text: an index is a candidate's, and the env's action slots are fixed (2048's four)
        _, _, _, _, info = env.step_move(situation.candidates[decision.action].text)
    line = {"seed": seed, "won": bool(info["won"]), "score": round(float(info["score"]), 4), "steps": env.steps,
            "calls": calls, "gave_up": gave_up, "wall_s": round(time.perf_counter() - started, 3),
            "cpu_s": round(time.process_time() - cpu, 3)}
    for key in ("payoff", "max_tile", "game_score", "display"):
        if key in info:
            line[key] = info[key]
    for key in ("routed", "judged"):
        if info.get(key):
            line["predicted"], line["true"] = info[key][0]
    return line


def metric(task: str, lines: list[dict]) -> float:
    """The dev/test headline: mean payoff, mean log2 largest tile, wins, accuracy, F1 of ``block``."""
    if task == "blackjack":
        return float(np.mean([x["payoff"] for x in lines]))
    if task == "2048":
        return float(np.mean([math.log2(x["max_tile"]) for x in lines]))
    if task == "injection":
        tp = sum(x["predicted"] == x["true"] == "block" for x in lines)
        pb = sum(x["predicted"] == "block" for x in lines)
        tb = sum(x["true"] == "block" for x in lines)
        return 2 * tp / (pb + tb) if pb + tb else 0.0
    return float(np.mean([x["won"] for x in lines]))


def play_arm(task: str, arm: str, fold: str, limit: int | None = None, model=None, on_line=None) -> list[dict]:
    """The arm's episodes on the fold's seeds (the first ``limit``); ``on_line(lines so far)`` after each."""
    env = make_env(task, fold)
    seeds = list(seeds_of(task, fold, env))[:limit]
    policy = make_policy(task, arm, model)
    lines = []
    for s in seeds:
        for attempt in (1, 2):  # an app that dies under a game: the same game again, on a fresh engine
            try:
                lines.append({**play(env, policy, s), **({"replayed": True} if attempt == 2 else {})})
                break
            except EngineCrashed as exc:
                print(f"seed {s}, attempt {attempt}: {exc}", flush=True)
                if attempt == 2:  # it dies again at the same press: the game counts as not won
                    lines.append({"seed": s, "won": False, "score": 0.0, "steps": env.steps, "calls": 0,
                                  "error": str(exc)[:300], "wall_s": 0.0, "cpu_s": 0.0})
        if on_line is not None:
            on_line(lines)
    env.close()
    return lines


# ------------------------------------------------------------------ commands
def cmd_fit(args) -> None:
    from s1gym.policies.family_model import FamilyModel
    from s1gym.policies.fitting import select_l2

    task, spec = args.task, TASKS[args.task]
    LABELS_2048["rollout"] = args.labels == "rollout"
    if task == "2048":
        global ROLLOUT_ENV
        ROLLOUT_ENV = make_env(task)
    t = time.time()
    train_groups = collect(task, "train")
    dev_groups = collect(task, "dev")
    train = design(train_groups)
    dev = design(dev_groups, vocab=train.vocab)
    print(f"{task}: {train.n} train and {dev.n} dev decisions, {len(train.vocab)} names, collected in "
          f"{time.time() - t:.0f} s (load {os.getloadavg()[0]:.1f})", flush=True)
    sel = select_l2(train, dev, L2_GRID)
    weights = train.weights(sel.w)
    print(f"L2 {sel.l2}; dev NLL/decision " + ", ".join(f"{k}: {v:.4f}" for k, v in sel.dev_nll.items())
          + f"; dev top-1 {dev.top1(sel.w):.4f}, train top-1 {train.top1(sel.w):.4f}", flush=True)
    provenance: dict[str, Any] = {
        "name": f"local_{task}", "fitted_by": f"python bench/others_local.py fit {task}"
        + (f" --labels {args.labels}" if task == "2048" else ""),
        "protocol": "bench/others_protocol.md", "l2": sel.l2,
        "dev_nll": {str(k): round(v, 5) for k, v in sel.dev_nll.items()}, "train_decisions": train.n,
        "dev_decisions": dev.n, "dev_top1": round(dev.top1(sel.w), 4)}
    if "source" in spec:
        provenance.update(data=spec["origin"], licence=spec["licence"], folds="sha256(normalised text) % 10: "
                          "0-5 train, 6-7 dev, 8-9 test", min_count=MIN_COUNT)
    else:
        provenance.update(train_seeds=f"{spec['train'].start}-{spec['train'].stop - 1}",
                          dev_seeds=f"{spec['dev'].start}-{spec['dev'].stop - 1}",
                          labels=args.labels if task == "2048" else "the task's expert_action")
    model = FamilyModel(weights, provenance=provenance, kind=task)
    fitted = play_arm(task, "local", "dev", model=model)
    provenance["dev_metric_fitted"] = round(metric(task, fitted), 4)
    cached = CACHE / f"{task}_dev_minilm.json"  # the same arm on the same seeds: played once per task
    if cached.exists():
        minilm = json.loads(cached.read_text())
    else:
        minilm = play_arm(task, "local-minilm", "dev", limit=spec.get("dev_minilm"))
        cached.write_text(json.dumps(minilm))
    n = len(minilm)
    provenance["dev_metric_fitted_same_episodes"] = round(metric(task, fitted[:n]), 4)
    provenance["dev_metric_minilm"] = round(metric(task, minilm), 4)
    pays = metric(task, fitted[:n]) > metric(task, minilm)
    print(f"dev: fitted {metric(task, fitted):.4f} over {len(fitted)}; on the first {n}: fitted "
          f"{metric(task, fitted[:n]):.4f}, MiniLM Local {metric(task, minilm):.4f} -> "
          f"{'pays' if pays else 'does not pay'} ({time.time() - t:.0f} s, load {os.getloadavg()[0]:.1f})", flush=True)
    path = Path(args.out or ROOT / "s1gym" / "data" / f"local_{task}.json")
    if pays or args.out:
        FamilyModel(weights, provenance=provenance, kind=task).save(path)
        print(f"wrote {path}")


def write_lines(task: str, arm: str, lines: list[dict]) -> None:
    """Replace the (task, arm) lines of the file; a lock beside it keeps parallel runs of tasks apart."""
    import fcntl

    OUT.parent.mkdir(parents=True, exist_ok=True)
    with (CACHE / "heldout.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        old = [json.loads(x) for x in OUT.read_text().splitlines()] if OUT.exists() else []
        keep = [x for x in old if (x["task"], x["arm"]) != (task, arm)]
        with OUT.open("w") as f:
            for x in keep + [{"task": task, "arm": arm, **x} for x in lines]:
                f.write(json.dumps(x) + "\n")


def blackjack_blocks(lines: list[dict], meta: dict) -> list[dict]:
    """Blackjack's lines for the file: one per block of 1,000 hands (each hand's payoff as W/P/L, in seed
    order) and a summary."""
    out = []
    for i in range(0, len(lines), 1000):
        block = lines[i:i + 1000]
        out.append({"seeds": [block[0]["seed"], block[-1]["seed"]], "hands": len(block),
                    "payoffs": "".join("WPL"[1 - x["payoff"]] for x in block),
                    "calls": sum(x["calls"] for x in block), "cpu_s": round(sum(x["cpu_s"] for x in block), 2)})
    return out + [{"summary": True, "hands": len(lines), **meta}]


def cmd_heldout(args) -> None:
    task, spec = args.task, TASKS[args.task]
    for arm in args.arms.split(",") if args.arms else spec["arms"]:
        limit = {"local-minilm": spec.get("test_minilm"), "search-local": spec.get("test_search"),
                 "search-uniform": spec.get("test_search_uniform", spec.get("test_search"))}.get(arm)
        load0, t, cpu = os.getloadavg()[0], time.time(), time.process_time()
        # episodes are written as they end (an arm cut short keeps what it played); Blackjack's at the end
        partial = None if task == "blackjack" else (lambda done, arm=arm: write_lines(task, arm, done))
        lines = play_arm(task, arm, "test", limit=limit, on_line=partial)
        meta = {"load_start": round(load0, 1), "load_end": round(os.getloadavg()[0], 1),
                "wall_s": round(time.time() - t, 1), "cpu_s": round(time.process_time() - cpu, 1)}
        if task == "blackjack":
            write_lines(task, arm, blackjack_blocks(lines, meta))
        else:
            write_lines(task, arm, lines + [{"summary": True, "episodes": len(lines), **meta}])
        print(f"{task} {arm}: {len(lines)} episodes, metric {metric(task, lines):.4f}; {meta}", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("fit")
    p.add_argument("task", choices=TASKS)
    p.add_argument("--labels", choices=("rule", "rollout"), default="rule", help="2048's label source")
    p.add_argument("--out", help="write the model here even when it does not pay (e.g. a dev comparison)")
    p.set_defaults(fn=cmd_fit)
    p = sub.add_parser("heldout")
    p.add_argument("task", choices=TASKS)
    p.add_argument("--arms", help="comma list (default: the protocol's arms)")
    p.set_defaults(fn=cmd_heldout)
    p = sub.add_parser("report")
    p.set_defaults(fn=lambda a: __import__("others_report").main())
    args = parser.parse_args(argv)
    os.environ.setdefault("S1GYM_LOCAL_THREADS", "1")
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    args.fn(args)


if __name__ == "__main__":
    main()
