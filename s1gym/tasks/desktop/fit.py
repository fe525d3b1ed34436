"""Fit Local's model of the calculator and play its held-out arms (bench/others_protocol.md says which goals
and arms, and why); the harness is :mod:`s1gym.tools.token_fit`.

    python -m s1gym.tasks.desktop.fit fit calculator       # train -> L2 on dev -> does it pay on dev? -> data/
    python -m s1gym.tasks.desktop.fit heldout calculator   # the protocol's test arms -> docs/data/others_heldout.jsonl
    python -m s1gym.tasks.desktop.fit report               # the tables for docs/benchmarks.md

Labels: the calculator's typing plan (the task's expert) on the states roll-ins visit (a random button 30 %
of the time for an episode's first four presses). Needs the desktop stack (``bash scripts/setup.sh``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from s1gym.tools.token_fit import Protocol, main
from s1gym.tasks.desktop.model import CalculatorModel

DATA = Path(__file__).resolve().parent / "data"

CALCULATOR = dict(train=range(1_000, 1_060), dev=range(2_000, 2_020), dev_minilm=20, test=range(3_000, 3_030),
                  test_minilm=30, test_search_uniform=10, noise=0.3, noisy_moves=4,
                  search={"budget": 50, "episode_budget": 200},
                  arms=("rule", "random", "uniform", "local", "local-minilm", "lookahead-local", "search-uniform",
                        "search-local"))

PROTOCOLS = {
    "calculator": Protocol(
        task="calculator", id="s1/Calculator-v0", model=CalculatorModel, data=DATA, spec=CALCULATOR,
        metric=lambda lines: float(np.mean([x["won"] for x in lines])), keep=("display",),
        command="python -m s1gym.tasks.desktop.fit fit calculator",
        provenance=lambda args: {"train_seeds": f"{CALCULATOR['train'].start}-{CALCULATOR['train'].stop - 1}",
                                 "dev_seeds": f"{CALCULATOR['dev'].start}-{CALCULATOR['dev'].stop - 1}",
                                 "labels": "the task's expert_action"}),
}


if __name__ == "__main__":
    main(PROTOCOLS, prog="python -m s1gym.tasks.desktop.fit", description=__doc__.splitlines()[0])
