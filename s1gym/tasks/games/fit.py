"""Fit Local's models of Blackjack and 2048 and play their held-out arms (bench/others_protocol.md says which
seeds and arms, and why); the harness is :mod:`s1gym.tools.token_fit`.

    python -m s1gym.tasks.games.fit fit blackjack        # train -> L2 on dev -> does it pay on dev? -> data/
    python -m s1gym.tasks.games.fit fit 2048 --labels rollout
    python -m s1gym.tasks.games.fit heldout blackjack    # the protocol's test arms -> docs/data/others_heldout.jsonl
    python -m s1gym.tasks.games.fit report               # the tables for docs/benchmarks.md

Labels: Blackjack's basic strategy (the task's expert) on the states roll-ins visit; for 2048 the rule's move
or its one-step improvement by rollouts (``--labels rule|rollout``), on every third state the roll-ins
visit, at most ``cap`` of them (the rollouts are the cost).
"""

from __future__ import annotations

import argparse
import math
import random
from pathlib import Path
from typing import Any

import numpy as np

from s1gym.tools.token_fit import Line, Protocol, main, walk
from s1gym.tasks.games.model import BlackjackModel, BoardModel

DATA = Path(__file__).resolve().parent / "data"
COMMAND = "python -m s1gym.tasks.games.fit fit"
#: 2048's label source (``--labels``) and the env its rollouts play on, set by :func:`configure_2048`
LABELS_2048: dict[str, Any] = {"rollout": False, "env": None}


def good_moves_2048(env: Any, rng: random.Random, rollouts: int) -> list[str]:
    """The labels of the env's state: the rule's move, or with ``--labels rollout`` the moves whose rule
    rollouts (fresh spawns) end with the best mean log2(largest tile)."""
    if not LABELS_2048["rollout"]:
        return [env.expert_action()]
    board = env.board.tolist()
    sim = LABELS_2048["env"]
    means = {}
    for move in env.candidates:
        values = []
        for _ in range(rollouts):
            sim.reset(seed=rng.randrange(2**62), options={"board": board})
            sim.step_move(move)
            while not sim.done:
                sim.step_move(sim.rule_action())
            values.append(math.log2(sim.max_tile))
        means[move] = float(np.mean(values))
    best = max(means.values())
    return [m for m, v in means.items() if v >= best - 1e-9]


def collect_2048(protocol: Protocol, fold: str) -> list[tuple[list[list[str]], list[int]]]:
    """Every third state the roll-ins visit (at most ``cap``, sampled), labelled on a board set to it."""
    spec = protocol.spec
    rng = random.Random(f"{protocol.task}-{fold}")
    kept = walk(protocol, fold, lambda s, env, moves: (s, env.board.tolist()) if moves % spec["keep_every"] == 0
                else None, rng)
    cap = spec["rollout_cap"][fold] if LABELS_2048["rollout"] else spec["cap"]
    if len(kept) > cap:
        kept = random.Random(0).sample(kept, cap)
    sim = protocol.env()
    groups = []
    for situation, board in kept:
        sim.reset(seed=0, options={"board": board})
        texts = [c.text for c in situation.candidates]
        groups.append((BoardModel.read(situation),
                       [texts.index(m) for m in good_moves_2048(sim, rng, spec["rollouts"])]))
    return groups


def configure_2048(args: argparse.Namespace) -> None:
    LABELS_2048["rollout"] = args.labels == "rollout"
    LABELS_2048["env"] = PROTOCOLS["2048"].env()


def blackjack_blocks(lines: list[Line], meta: dict[str, Any]) -> list[Line]:
    """Blackjack's lines for the file: one per block of 1,000 hands (each hand's payoff as W/P/L, in seed
    order) and a summary."""
    out = []
    for i in range(0, len(lines), 1000):
        block = lines[i:i + 1000]
        out.append({"seeds": [block[0]["seed"], block[-1]["seed"]], "hands": len(block),
                    "payoffs": "".join("WPL"[1 - x["payoff"]] for x in block),
                    "calls": sum(x["calls"] for x in block), "cpu_s": round(sum(x["cpu_s"] for x in block), 2)})
    return out + [{"summary": True, "hands": len(lines), **meta}]


def _seeds(spec: dict[str, Any], labels: str) -> dict[str, Any]:
    return {"train_seeds": f"{spec['train'].start}-{spec['train'].stop - 1}",
            "dev_seeds": f"{spec['dev'].start}-{spec['dev'].stop - 1}", "labels": labels}


BLACKJACK = dict(train=range(1_000_000, 1_020_000), dev=range(2_000_000, 2_005_000), dev_minilm=1_000,
                 test=range(3_000_000, 3_020_000), test_minilm=2_000, noise=0.3,
                 arms=("rule", "random", "uniform", "local", "local-minilm"))
GAME_2048 = dict(train=range(10_000, 10_100), dev=range(20_000, 20_030), dev_minilm=30, test=range(31_000, 31_100),
                 test_minilm=20, test_search=20, noise=0.3, keep_every=3, cap=3000,
                 rollout_cap={"train": 600, "dev": 300}, rollouts=2, search={"budget": 20},
                 arms=("rule", "random", "local", "lookahead-local", "search-uniform", "search-local", "local-minilm"))

PROTOCOLS = {
    "blackjack": Protocol(
        task="blackjack", id="s1/Blackjack-v0", model=BlackjackModel, data=DATA, spec=BLACKJACK,
        metric=lambda lines: float(np.mean([x["payoff"] for x in lines])), keep=("payoff",),
        provenance=lambda args: _seeds(BLACKJACK, "the task's expert_action"), heldout_lines=blackjack_blocks,
        command=f"{COMMAND} blackjack"),
    "2048": Protocol(
        task="2048", id="s1/2048-v0", model=BoardModel, data=DATA, spec=GAME_2048,
        metric=lambda lines: float(np.mean([math.log2(x["max_tile"]) for x in lines])),
        keep=("max_tile", "game_score"), collect=collect_2048, configure=configure_2048,
        provenance=lambda args: {"fitted_by": f"{COMMAND} 2048 --labels {args.labels}",
                                 **_seeds(GAME_2048, args.labels)},
        command=f"{COMMAND} 2048"),
}


if __name__ == "__main__":
    main(PROTOCOLS, prog="python -m s1gym.tasks.games.fit", description=__doc__.splitlines()[0],
         options=[(("--labels",), {"choices": ("rule", "rollout"), "default": "rule", "help": "2048's label source"})])
