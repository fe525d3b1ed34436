"""Fit Local's TextWorld model on the expert's moves and write ``data/local_textworld.json``.

``python -m s1gym.tasks.textworld.fit`` plays the train fold's seeds (default 0-79: 20 games of each
challenge, medium difficulty) and the dev fold's (0-19); the test fold is never read. The expert
(:meth:`TextWorldEnv.expert_action`) plays with ``EXPLORE`` of its moves replaced by a random candidate
(a generator seeded by the seed), so positions off its path are seen. Every decision with a choice becomes
a group of s1gym's fitting recipe (:mod:`s1gym.models.fitting`: each candidate's
:func:`.tokens.candidate_tokens`, the expert's move the good one), once as the plain situation and once as
Lookahead annotates it (each move's outcome, reward and revisits; losing moves dropped), so the ``out:*``
weights are fitted too. The L2 with the lowest dev NLL is kept. Then ``--rounds`` rounds of DAgger: the
same seeds are played again by the model just fitted under Lookahead (its own moves, so the positions its
mistakes lead to, such as going back and forth between two rooms or preparing the meal before the
ingredients are ready, are seen), every decision labelled with the expert's move, and the model is refitted
on all groups so far (train and dev alike). The progress estimate is a ridge fit of the
expert's moves left (its policy's length, plus one while the cookbook is unread) on
:func:`.tokens.progress_tokens`. Provenance records seeds, counts, the L2 and dev top-1. Deterministic.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from s1gym.models.fitting import Design, fit_ridge, select_l2
from s1gym.tasks.textworld.env import COOKBOOK, TextWorldEnv
from s1gym.tasks.textworld.games import generate, spec_for
from s1gym.tasks.textworld.model import TextWorldModel
from s1gym.tasks.textworld.tokens import candidate_tokens, progress_tokens

__all__ = ["collect", "main"]

DATA = Path(__file__).parent / "data"
GRID = (0.01, 0.1, 1.0, 10.0)
EXPLORE = 0.25
ROUNDS = 2
DAGGER_STEPS = 40
PROGRESS_L2 = 1.0


def collect(seeds: range, fold: str, learner: TextWorldModel | None = None,
            max_steps: int = 60) -> tuple[list, list[list[str]], list[float]]:
    """Decision groups (plain and looked-ahead), progress rows and their moves-left targets of ``seeds``.

    Without ``learner`` the expert plays (``EXPLORE`` of its moves random); with one, Local with that model
    under Lookahead plays (DAgger); the labels are the expert's moves either way."""
    from s1gym.policies import Local, Uniform
    from s1gym.wrappers import Lookahead

    generate([spec_for(s, fold, None, "medium") for s in seeds])
    look = Lookahead(Uniform())
    local = Local(pairs=learner, preload=False) if learner is not None else None
    env = TextWorldEnv(fold=fold)
    groups: list = []
    rows: list[list[str]] = []
    targets: list[float] = []
    for seed in seeds:
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        while not env.done and env.steps < max_steps:
            situation, move = env.situation(), env.expert_action()
            play = env.play_state
            left = len(play.policy()) + (env.challenge == "tw-cooking" and not env._recipe)
            if play.policy() or env.won:
                rows.append(progress_tokens(situation))
                targets.append(float(left))
            annotated = None
            if len(situation.candidates) > 1:
                groups.append((candidate_tokens(situation), situation.texts.index(move)))
                annotated, _, _ = look.annotate(situation)
                texts = annotated.texts
                if move in texts and len(texts) > 1:
                    groups.append((candidate_tokens(annotated), texts.index(move)))
            if local is not None:
                if annotated is not None:
                    move = annotated.texts[local.decide(annotated).action]
            elif rng.random() < EXPLORE:
                move = situation.texts[int(rng.integers(len(situation.texts)))]
            env.step_move(move)
    return groups, rows, targets


def _fit(train_groups: list, dev_groups: list, progress: dict) -> tuple:
    train = Design(train_groups)
    dev = Design(dev_groups, vocab=train.vocab, growing=False)
    chosen = select_l2(train, dev, GRID)
    return train, dev, chosen, TextWorldModel(train.weights(chosen.w), progress=progress)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m s1gym.tasks.textworld.fit", description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", type=int, default=80, help="train seeds 0..N-1 (default 80)")
    parser.add_argument("--dev", type=int, default=20, help="dev seeds 0..N-1 (default 20)")
    parser.add_argument("--rounds", type=int, default=ROUNDS, help=f"DAgger rounds (default {ROUNDS})")
    parser.add_argument("--out", type=Path, default=DATA / "local_textworld.json")
    args = parser.parse_args(argv)
    train_groups, rows, targets = collect(range(args.train), "train")
    dev_groups, _, _ = collect(range(args.dev), "dev")
    progress = fit_ridge([["*", *r] for r in rows], targets, PROGRESS_L2)
    train, dev, chosen, model = _fit(train_groups, dev_groups, progress)
    print(f"round 0: {train.n} train / {dev.n} dev decisions, L2 {chosen.l2}, "
          f"dev top-1 {dev.top1(chosen.w):.4f}")
    for r in range(1, args.rounds + 1):
        more, _, _ = collect(range(args.train), "train", learner=model, max_steps=DAGGER_STEPS)
        train_groups += more
        more, _, _ = collect(range(args.dev), "dev", learner=model, max_steps=DAGGER_STEPS)
        dev_groups += more
        train, dev, chosen, model = _fit(train_groups, dev_groups, progress)
        print(f"round {r}: {train.n} train / {dev.n} dev decisions, L2 {chosen.l2}, "
              f"dev top-1 {dev.top1(chosen.w):.4f}")
    provenance = {
        "name": "local_textworld", "fitted_by": "python -m s1gym.tasks.textworld.fit",
        "labels": "TextWorldEnv.expert_action (TextWorld's policy commands; the cookbook first)",
        "behaviour": f"expert, {EXPLORE} of the moves uniform at random; then {args.rounds} DAgger round(s): "
                     f"the model fitted so far under Lookahead, {DAGGER_STEPS} moves at most; each decision "
                     "plain and looked ahead",
        "difficulty": "medium", "train_seeds": f"train fold 0-{args.train - 1}",
        "dev_seeds": f"dev fold 0-{args.dev - 1}", "train_decisions": train.n, "dev_decisions": dev.n,
        "l2": chosen.l2, "dev_nll": {str(k): round(v, 5) for k, v in chosen.dev_nll.items()},
        "dev_top1": round(dev.top1(chosen.w), 4), "progress_rows": len(rows), "progress_l2": PROGRESS_L2,
        "cookbook_move": COOKBOOK,
    }
    model = TextWorldModel(train.weights(chosen.w), progress=progress, provenance=provenance)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    model.save(args.out)
    print(f"wrote {args.out}: {train.n} train / {dev.n} dev decisions, L2 {chosen.l2}, "
          f"dev top-1 {provenance['dev_top1']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
