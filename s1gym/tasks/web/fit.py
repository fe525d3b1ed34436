"""Fit Local's web model (MiniWoB++): collect rule-labelled states, then fit on them.

    python -m s1gym.tasks.web.fit collect --kinds rule --seeds 40000 --lookahead    # rule games, Lookahead
    python -m s1gym.tasks.web.fit collect --kinds dart --seeds 40000-40002          # noisy roll-ins
    python -m s1gym.tasks.web.fit collect --kinds dagger --seeds 40002 --model FILE # learner roll-ins
    python -m s1gym.tasks.web.fit fit --kinds rule,dart --seeds 40000-40009         # -> data/local_web.json

(Lookahead annotates the states with at most 20 moves; a dagger game's learner is the model in FILE.)

The protocol (tasks, train/dev/test seeds, arms, targets) is bench/web_protocol.md, committed before any fit;
``bench/web_local.py`` plays the arms on dev and held-out seeds and reports them.

Data: the 108 tasks with a rule, on train seeds. Every state of a ``rule`` game (the rule plays) or a ``dart``
game (each of the first 5 moves is, with probability 0.3, a uniform random candidate, then the rule; a
``dagger`` game: each of the first 10 moves is, with probability 0.7, a fitted Local's (``--model``), then
the rule; :data:`ROLL_INS`) is stored with the rule's move there as its label; with ``--lookahead`` also
each candidate's Lookahead annotation (outcome, reward, new moves, revisits; losing and no-change moves left
out, as Lookahead shows them). States go to
``$S1GYM_WEB_STATES`` (default ``~/.cache/s1gym/web_states``), one gzipped JSON-lines file per task, seed
and kind; nothing collected is part of the repository.

Fit: the one recipe of Local's fitted models (s1gym.models.fitting's ``Design``, the conditional-logit
fit the TWX and ALFWorld models share): the plain names on all candidates, then the ``out:*`` names alone
(the rest fixed) on the candidates Lookahead keeps. L2 1.0, fixed in advance by the protocol.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from s1gym.models import collect

STATES = Path(os.environ.get("S1GYM_WEB_STATES", "~/.cache/s1gym/web_states")).expanduser()
L2 = 1.0
#: How the ``dart`` and ``dagger`` games depart from the rule (see the module docstring).
ROLL_INS = collect.RollIns(noise=0.3, noisy_moves=5, learner_share=0.7, learner_moves=10)
#: The Lookahead annotation a ``--lookahead`` state keeps (:data:`s1gym.models.collect.ANNOTATION`).
ANNOTATED = ("outcomes", "new_actions", "rewards", "revisits")
#: The shipped model (the family's data file).
MODEL = Path(__file__).resolve().parent / "data" / "local_web.json"


def rule_tasks() -> list[str]:
    from s1gym.tasks.web.expert import SOLVERS

    return sorted(SOLVERS)


def seeds_of(spec: str) -> list[int]:
    out: list[int] = []
    for part in spec.split(","):
        a, _, b = part.partition("-")
        out.extend(range(int(a), int(b or a) + 1))
    return out


_KEEPER = []


def make_env(task: str):
    """The task's env; the worker keeps one env open so its browser outlives each game's env."""
    import gymnasium as gym

    import s1gym  # noqa: F401

    if not _KEEPER:
        _KEEPER.append(gym.make("s1/MiniWoB-v0", task="click-test"))
    return gym.make("s1/MiniWoB-v0", task=task).unwrapped


# --------------------------------------------------------------------------
# collect
# --------------------------------------------------------------------------


def _record(env, label: str, lookahead, meta: dict) -> dict:
    situation = env.situation()
    rec = {**meta, "step": env.steps, "state_text": situation.state_text, "score": situation.score,
           "history": [list(h) for h in situation.history], "candidates": list(situation.texts),
           "label": label}
    if lookahead is not None:
        rec.update(collect.annotation(lookahead, situation, ANNOTATED))
    return rec


def collect_game(job: tuple[str, int, str, bool, int, str | None]) -> tuple[str, int, float]:
    """Play one game of one kind and write its labelled states (with Lookahead's annotation on the states
    with at most ``cap`` candidates, when asked: a fork steps each candidate, so large states cost most)."""
    task, seed, kind, with_lookahead, cap, model_path = (*job, None)[:6]
    from s1gym.policies import Uniform
    from s1gym.wrappers import Lookahead

    out = STATES / task / f"{seed}-{kind}{'-la' if with_lookahead else ''}.jsonl.gz"
    if out.exists():
        return str(out), -1, 0.0
    out.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    env = make_env(task)
    env.reset(seed=seed)
    rng = random.Random(f"{task}-{seed}-{kind}")
    annotate = Lookahead(Uniform()) if with_lookahead else None
    learner = None
    if kind == "dagger":
        from s1gym.policies import Local

        learner = Local(pairs=model_path, preload=False)
    records = []
    error = None
    info: dict = {}
    while env.candidates and not env.done:
        try:
            label = env.rule_action()
        except (LookupError, RuntimeError, ValueError, KeyError, IndexError, AttributeError, TypeError) as exc:  # a state the rule cannot read
            error = f"{type(exc).__name__}: {exc}"
            break
        shown = annotate if annotate is not None and len(env.candidates) <= cap else None
        records.append(_record(env, label, shown, {"task": task, "seed": seed, "kind": kind}))
        move = ROLL_INS.move(kind, env, label, rng, learner)
        *_, info = env.step_move(move)
        if env.steps >= env.max_steps:
            break
    won = bool(info.get("won"))
    for r in records:
        r["won"] = won
        r["rule_error"] = error
    env.close()
    collect.write_states(out, records)
    return str(out), len(records), time.perf_counter() - t0


#: Games a worker plays before it is replaced, with its browser.
TASKS_PER_WORKER = 60


def pool_map(fn, items: list, workers: int) -> Iterable:
    """:func:`s1gym.models.collect.pool_map` with each worker replaced, with its browser, after
    :data:`TASKS_PER_WORKER` items."""
    return collect.pool_map(fn, items, workers, tasks_per_worker=TASKS_PER_WORKER)


def cmd_collect(args) -> None:
    tasks = args.tasks.split(",") if args.tasks else rule_tasks()
    jobs = [(t, s, k, args.lookahead, args.cap, args.model) for s in seeds_of(args.seeds) for k in args.kinds.split(",") for t in tasks]
    collect.run_games(collect_game, jobs, args.workers, every=20, tasks_per_worker=TASKS_PER_WORKER)


def load_records(kinds: Iterable[str] | None = None, seeds: set[int] | None = None) -> list[dict]:
    out = []
    kinds = set(kinds) if kinds else None
    for path in sorted(STATES.glob("*/*.jsonl.gz")):
        seed, kind = path.name.removesuffix(".jsonl.gz").split("-")[:2]
        if (kinds and kind not in kinds) or (seeds and int(seed) not in seeds):
            continue
        out.extend(collect.read_states(path))
    return out


# --------------------------------------------------------------------------
# fit
# --------------------------------------------------------------------------


def situations(record: dict):
    """The record's decision as Local sees it plainly and (when recorded) with Lookahead (kept moves only)."""
    return collect.recorded_situations(f"MiniWoB {record['task']}", record)


def build(records: list[dict], drop_task: bool = False):
    from s1gym.tasks.web.tokens import candidate_tokens

    def tokens(s):
        rows = candidate_tokens(s)
        return [[t for t in r if not t.startswith("t:")] for r in rows] if drop_task else rows

    plain_rows, plain_good, ahead_rows, ahead_good = [], [], [], []
    for r in records:
        plain, annotated = situations(r)
        if r["label"] not in plain.texts:
            continue
        plain_rows.append(tokens(plain))
        plain_good.append([plain.texts.index(r["label"])])
        if annotated is not None and r["label"] in annotated.texts and len(annotated.candidates) > 1:
            ahead_rows.append(tokens(annotated))
            ahead_good.append([annotated.texts.index(r["label"])])
    return plain_rows, plain_good, ahead_rows, ahead_good


def fit_model(records: list[dict], name: str, drop_task: bool = False):
    from s1gym.models.fitting import Design
    from s1gym.tasks.web.model import WebModel

    t = time.time()
    plain_rows, plain_good, ahead_rows, ahead_good = build(records, drop_task)
    plain = Design(zip(plain_rows, plain_good, strict=True))
    w_plain = plain.fit(L2)
    weights = plain.weights(w_plain)
    stats = {"decisions": plain.n, "nll_plain": round(plain.loss_grad(w_plain)[0] / plain.n, 4),
             "top1_plain": round(plain.top1(w_plain), 4)}
    if ahead_rows:
        ahead = Design(zip(ahead_rows, ahead_good, strict=True), vocab=plain.vocab)
        free = np.zeros(len(ahead.vocab), dtype=bool)
        free[[j for n, j in ahead.vocab.items() if n.startswith("out:") or "|out:" in n]] = True
        w_both = ahead.fit(L2, start=w_plain, free=free)
        weights = ahead.weights(w_both)
        stats.update({"lookahead_decisions": ahead.n, "nll_lookahead": round(ahead.loss_grad(w_both)[0] / ahead.n, 4),
                      "top1_lookahead": round(ahead.top1(w_both), 4)})
    stats.update({"features": len(weights), "fit_seconds": round(time.time() - t)})
    return WebModel(weights, {"name": name, **stats}), stats


def cmd_fit(args) -> None:
    kinds = args.kinds.split(",") if args.kinds else None
    records = load_records(kinds, set(seeds_of(args.seeds)) if args.seeds else None)
    model, stats = fit_model(records, args.name or Path(args.out).stem, args.drop_task)
    model.provenance.update({
        "tasks": len({r["task"] for r in records}), "kinds": sorted({r["kind"] for r in records}),
        "train_seeds": sorted({r["seed"] for r in records}), "l2": L2,
        "games": len({(r["task"], r["seed"], r["kind"]) for r in records}),
        "lookahead_games": len({(r["task"], r["seed"], r["kind"]) for r in records if "outcomes" in r}),
        "labels": "the task's rule (s1gym.tasks.web.expert) on every state visited",
        "protocol": "bench/web_protocol.md",
        "script": f"python -m s1gym.tasks.web.fit fit{' --kinds ' + args.kinds if args.kinds else ''}"
                  f"{' --seeds ' + args.seeds if args.seeds else ''}{' --drop-task' if args.drop_task else ''}"
                  " --out FILE"})
    if args.note:
        model.provenance["dev"] = args.note
    collect.save_fitted(model, stats, args.out, args.set)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--tasks")
    c.add_argument("--kinds", default="rule")
    c.add_argument("--seeds", default="40000")
    c.add_argument("--lookahead", action="store_true")
    c.add_argument("--cap", type=int, default=20, help="with --lookahead: annotate states with at most this many "
                   "candidates")
    c.add_argument("--model", help="dagger: the learner's model file")
    c.add_argument("--workers", type=int, default=2)
    f = sub.add_parser("fit")
    f.add_argument("--kinds")
    f.add_argument("--seeds")
    f.add_argument("--out", default=str(MODEL), help="default: the shipped model, data/local_web.json")
    f.add_argument("--name")
    f.add_argument("--drop-task", action="store_true", help="only the generic names (no t:<task>|... names)")
    f.add_argument("--set", action="append", metavar="NAME=WEIGHT", help="a weight chosen on dev, not fitted")
    f.add_argument("--note", help="what the dev seeds chose, kept in the provenance")
    args = ap.parse_args(argv)
    {"collect": cmd_collect, "fit": cmd_fit}[args.cmd](args)


if __name__ == "__main__":
    main()
