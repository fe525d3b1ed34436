"""python -m s1gym.tasks.babyai.fit: fit Local's BabyAI model and progress estimate, write
``data/local_babyai.json``.

Roll-ins on train-fold seeds (the seven default levels in turn, seed s playing ``DEFAULT_LEVELS[s % 7]``):
minigrid's bot plays, with a share of its moves replaced by a random legal move so positions off its path
are seen too. Every decision with a choice, labelled with the bot's move, becomes two groups of s1gym's
shared recipe (:mod:`s1gym.models.fitting`): the plain candidates and the candidates as Lookahead shows
them (its own annotation: outcome, reward, revisits), so one model serves both. The L2 is the one with
the lowest NLL on dev-fold seeds, and the penalty on moves back into a visited state (which the bot, never
looping, cannot teach) the one with the most dev-fold wins under Lookahead (it also weighs the rungs
``out:revisit:4+/8+/16+``, which are left unfitted); test-fold seeds are never used here. The progress estimate is a ridge
fit of the moves left to the episode's end on :func:`.tokens.progress_tokens` (episodes the bot alone
finishes). Needs scipy (``pip install scipy``).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path
from typing import Any

from s1gym.tasks.babyai.env import BabyAIEnv
from s1gym.tasks.babyai.tokens import REVISIT_LADDER, candidate_tokens, progress_tokens
from s1gym.tasks.babyai.world import DEFAULT_LEVELS

__all__ = ["collect", "main"]

OUT = Path(__file__).parent / "data" / "local_babyai.json"


def collect(fold: str, seeds: range, noise: float, cap: int = 200) -> dict[str, list[Any]]:
    """Decision groups (plain and as Lookahead shows them) and progress rows from roll-ins on ``seeds``."""
    from s1gym.policies import Uniform
    from s1gym.wrappers import Lookahead

    look = Lookahead(Uniform())
    env = BabyAIEnv(fold=fold)
    out: dict[str, list[Any]] = {"plain": [], "ahead": [], "rows": [], "left": [], "tags": []}
    for seed in seeds:
        rng = random.Random(seed)
        _obs, info = env.reset(seed=seed)
        clean = rng.random() < 0.5  # half the episodes are the bot's alone: the progress estimate's data
        rows = []
        while not info["game_over"] and info["steps"] < min(cap, env.max_steps):
            situation = env.situation()
            expert = env.expert_action()
            texts = situation.texts
            if len(texts) > 1:
                good = texts.index(expert)
                out["plain"].append((candidate_tokens(situation), good))
                shown, kept, _losing = look.annotate(situation)
                if good in kept:
                    out["ahead"].append((candidate_tokens(shown), kept.index(good)))
                out["tags"].append(env.level)
            rows.append(progress_tokens(situation))
            move = expert if clean or rng.random() >= noise else rng.choice(texts)
            _obs, _r, _te, _tr, info = env.step_move(move)
        if clean and info["won"]:
            out["rows"].extend(rows)
            out["left"].extend(range(len(rows), 0, -1))
    return out


#: the levels (dev fold) on which the revisit penalty is chosen: the cheap ones to play
TUNE_LEVELS = ("GoToLocal", "PickupLoc", "PutNextLocal", "UnlockPickup")
#: the penalties tried: ``out:revisit:1`` loses p, ``out:revisit:2`` loses 2p, each ``out:revisit:k+`` p more
PENALTIES = (0.0, 2.0, 4.0, 8.0)


def _penalised(weights: dict[str, float], p: float) -> dict[str, float]:
    """``weights`` with the revisit penalty ``p``: a move back into a visited state loses p (2p when it was
    visited twice or more), and p more at each rung of :data:`.tokens.REVISIT_LADDER` (4, 8, 16 visits)."""
    out = dict(weights)
    out["out:revisit:1"] = out.get("out:revisit:1", 0.0) - p
    out["out:revisit:2"] = out.get("out:revisit:2", 0.0) - 2 * p
    for k in REVISIT_LADDER:
        out[f"out:revisit:{k}+"] = out.get(f"out:revisit:{k}+", 0.0) - p
    return out


def _revisit_penalty(weights: dict[str, float], seeds: int) -> tuple[float, dict[str, int]]:
    """The penalty on moves back into a state already visited (Lookahead's ``revisits``) with the most dev
    wins under Lookahead: the bot never loops, so its labels cannot weigh that feature."""
    import tempfile

    from s1gym.tasks.babyai.bench import play
    from s1gym.tasks.babyai.model import BabyAIModel

    wins: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for p in PENALTIES:
            path = Path(tmp) / f"p{p}.json"
            BabyAIModel(_penalised(weights, p)).save(path)
            wins[str(p)] = sum(play("lookahead", level, range(seeds), "dev", path)["wins"] for level in TUNE_LEVELS)
    best = max(PENALTIES, key=lambda p: (wins[str(p)], -p))
    return best, wins


def main(argv: list[str] | None = None) -> None:
    from s1gym.models.fitting import Design, fit_ridge, select_l2
    from s1gym.tasks.babyai.model import BabyAIModel

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", type=int, default=350, help="train-fold seeds 0..N-1")
    parser.add_argument("--dev", type=int, default=70, help="dev-fold seeds 0..N-1")
    parser.add_argument("--dev-play", type=int, default=15, help="dev-fold seeds per level to choose the revisit penalty")
    parser.add_argument("--noise", type=float, default=0.25, help="share of the bot's moves replaced at random")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    start = time.time()
    train = collect("train", range(args.train), args.noise)
    dev = collect("dev", range(args.dev), args.noise)
    groups = train["plain"] + train["ahead"]
    design = Design(groups)
    dev_design = Design(dev["plain"] + dev["ahead"], vocab=design.vocab, growing=False)
    best = select_l2(design, dev_design, (0.01, 0.1, 1.0))
    progress = fit_ridge(train["rows"], train["left"], l2=1.0)
    dev_plain = Design(dev["plain"], vocab=design.vocab, growing=False)
    dev_ahead = Design(dev["ahead"], vocab=design.vocab, growing=False)
    provenance = {
        "fitted_by": "python -m s1gym.tasks.babyai.fit",
        "labels": "minigrid BabyAIBot (minigrid 3.2.0); roll-ins with noise " + str(args.noise),
        "levels": list(DEFAULT_LEVELS),
        "train": f"fold train, seeds 0-{args.train - 1}: {len(train['plain'])} plain and {len(train['ahead'])} "
                 "lookahead decisions",
        "dev": f"fold dev, seeds 0-{args.dev - 1}: {len(dev['plain'])} plain and {len(dev['ahead'])} lookahead "
               "decisions",
        "test": "fold test never used",
        "l2": best.l2,
        "dev_nll_per_decision": {str(k): round(v, 4) for k, v in best.dev_nll.items()},
        "dev_top1_plain": round(dev_plain.top1(best.w), 4),
        "dev_top1_lookahead": round(dev_ahead.top1(best.w), 4),
        "progress": f"ridge (L2 1) of moves left on {len(train['rows'])} states of the bot's own won episodes",
        "seconds": round(time.time() - start, 1),
    }
    weights = design.weights(best.w)
    # a move into a state visited 4+ times is rare in the roll-ins (the bot never loops): its rungs are not
    # fitted on those few labels but weighed by the revisit penalty alone
    weights = {k: v for k, v in weights.items() if not any(k == f"out:revisit:{r}+" for r in REVISIT_LADDER)}
    penalty, dev_wins = _revisit_penalty(weights, args.dev_play)
    weights = _penalised(weights, penalty)
    provenance["revisit_penalty"] = {"chosen": penalty, "dev_wins_by_penalty": dev_wins,
                                     "levels": list(TUNE_LEVELS), "seeds": f"fold dev, 0-{args.dev_play - 1}"}
    model = BabyAIModel(weights, progress={k: v for k, v in progress.items() if abs(v) >= 1e-4},
                        provenance=provenance)
    args.out.write_text(json.dumps(model.to_json(), indent=1) + "\n")
    print(json.dumps(provenance, indent=1))


if __name__ == "__main__":
    main()
