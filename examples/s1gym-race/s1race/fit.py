"""Fit Local's model of Race on the expert's moves and write it to ``s1race/data/local_race.json``.

``python -m s1race.fit`` plays games on the train seeds and the dev seeds and labels every decision with a
choice by the expert (:meth:`s1race.race.RaceEnv.expert_action`). The games are played by the expert with
an explorer's random move mixed in (``EXPLORE`` of the moves, drawn from a generator seeded with the game's
seed), so the decisions include positions the expert alone never reaches: the ones a weaker player (or a
wrapper that drops a move) lands in. Each decision becomes a group of s1gym's shared fitting recipe
(:mod:`s1gym.models.fitting`: each candidate's :func:`s1race.model.race_tokens`, the expert's move the good
one); a conditional logit is fitted at each L2 of the grid and the one with the lowest dev NLL is kept.

The file's provenance records the seeds, the fit and the dev win rates of the fitted model (greedy on its
scores), of the expert and of two baselines: ``most`` (always add the most the goal allows) and ``random``
(a uniform legal move, seeded by the game's seed). The game has only 34 openings (17 goals, 2 starters), so
train, dev and the seeds ``s1 run`` plays share them: the dev numbers measure the features, which name
neither goal nor total, not unseen games. Deterministic: the same seeds give the same file.

Needs scipy (s1gym's ``rl`` or ``alfworld`` extra, or ``pip install scipy``).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import numpy as np

from s1gym.core import Situation
from s1gym.models.fitting import Design, select_l2
from s1race.model import RaceModel, race_tokens
from s1race.race import RaceEnv

__all__ = ["decisions", "main", "win_rate"]

DATA = Path(__file__).parent / "data"
#: far from the seeds `s1 run` plays by default (0, 1, ...)
TRAIN, DEV = range(1_000_000, 1_002_000), range(2_000_000, 2_000_500)
GRID = (0.01, 0.1, 1.0, 10.0)
#: the share of moves the explorer plays at random while collecting decisions
EXPLORE = 0.3

Choose = Callable[[Situation, np.random.Generator], str]


def decisions(seeds: range) -> list[tuple[list[list[str]], int]]:
    """The expert's labels of the decisions with a choice met on ``seeds``: (each candidate's feature names,
    the expert's move's index)."""
    env, out = RaceEnv(), []
    for seed in seeds:
        env.reset(seed=seed)
        explore = np.random.default_rng(seed)
        while not env.done:
            situation, move = env.situation(), env.expert_action()
            if len(situation.candidates) > 1:
                out.append((race_tokens(situation), situation.texts.index(move)))
            if explore.random() < EXPLORE:
                move = situation.texts[int(explore.integers(len(situation.texts)))]
            env.step_move(move)
    return out


def win_rate(seeds: range, choose: Choose) -> float:
    """The share of games on ``seeds`` that ``choose`` (situation, the game's generator -> move) wins."""
    env, wins = RaceEnv(), 0
    for seed in seeds:
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        while not env.done:
            env.step_move(choose(env.situation(), rng))
        wins += env.won
    return wins / len(seeds)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m s1race.fit", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DATA / "local_race.json", help="model file to write")
    args = parser.parse_args(argv)
    train = Design(decisions(TRAIN))
    dev = Design(decisions(DEV), vocab=train.vocab, growing=False)
    chosen = select_l2(train, dev, GRID)
    provenance = {
        "name": "local_race", "fitted_by": "python -m s1race.fit", "labels": "RaceEnv.expert_action",
        "behaviour": f"expert, {EXPLORE} of the moves uniform at random",
        "train_seeds": f"{TRAIN.start}-{TRAIN.stop - 1}", "dev_seeds": f"{DEV.start}-{DEV.stop - 1}",
        "train_decisions": train.n, "dev_decisions": dev.n, "l2": chosen.l2,
        "dev_nll": {str(k): round(v, 5) for k, v in chosen.dev_nll.items()},
        "dev_top1": round(dev.top1(chosen.w), 4),
    }
    model = RaceModel(train.weights(chosen.w), provenance=provenance)
    players: dict[str, Choose] = {
        "fitted": lambda s, _: s.texts[int(np.argmax(model.scores(s)))],
        "expert": lambda s, _: s.privileged.expert_action(),
        "most": lambda s, _: s.texts[-1],
        "random": lambda s, rng: s.texts[int(rng.integers(len(s.texts)))],
    }
    rates = {f"dev_win_rate_{name}": win_rate(DEV, choose) for name, choose in players.items()}
    model = RaceModel(model.weights, provenance={**provenance, **rates})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    model.save(args.out)
    print(f"wrote {args.out}: {train.n} train decisions, L2 {chosen.l2}, dev top-1 {provenance['dev_top1']}, "
          "dev wins " + ", ".join(f"{k.removeprefix('dev_win_rate_')} {v:.3f}" for k, v in rates.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
