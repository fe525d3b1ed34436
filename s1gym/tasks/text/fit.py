"""Fit Local's models of the ticket router and the injection guard and play their held-out arms
(bench/others_protocol.md says which rows and arms, and why); the harness is :mod:`s1gym.tools.token_fit`.

    python -m s1gym.tasks.text.fit fit tickets         # train -> L2 on dev -> does it pay on dev? -> data/
    python -m s1gym.tasks.text.fit heldout injection   # the protocol's test arms -> docs/data/others_heldout.jsonl
    python -m s1gym.tasks.text.fit report              # the tables for docs/benchmarks.md

Labels: the data's own. The rows are the shared sets (``$S1GYM_SHARED_DATA`` or ../shared/data beside the
checkout), split into folds by a hash of each normalised text (:func:`text_fold`); each fold's rows are
written as JSONL to ``~/.cache/s1gym/others`` (never into the repository) and played one row a seed.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from s1gym.tools.token_fit import CACHE, MIN_COUNT, ROOT, Line, Protocol, main
from s1gym.tasks.text.model import InjectionModel, TicketsModel

DATA = Path(__file__).resolve().parent / "data"
SHARED = Path(os.environ.get("S1GYM_SHARED_DATA") or ROOT.parent / "shared" / "data")
COMMAND = "python -m s1gym.tasks.text.fit fit"
FOLDS = {"train": range(0, 6), "dev": range(6, 8), "test": range(8, 10)}

SETS: dict[str, dict[str, Any]] = {
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


def text_fold(text: str) -> str:
    """The protocol's fold of a labelled text: sha256 of its normalised form, mod 10."""
    norm = re.sub(r"\s+", " ", re.sub(r"\d+", "0", text.lower())).strip()
    k = int(hashlib.sha256(norm.encode()).hexdigest(), 16) % 10
    return next(f for f, r in FOLDS.items() if k in r)


def fold_file(task: str, fold: str) -> tuple[Path, list[str]]:
    """The fold's rows as JSONL in the cache (text, label), and every label of the whole set, sorted."""
    from s1gym.tasks.text.data_files import load_labelled_texts
    from s1gym.tasks.text.injection import injection_label

    spec = SETS[task]
    items = load_labelled_texts(str(SHARED / spec["source"]), text_column=spec["text"], label_column=spec["label"],
                                labels=None, label_map=injection_label if task == "injection" else None, what="rows")
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"{task}_{fold}.jsonl"
    with path.open("w") as f:
        for item in items:
            if text_fold(item.text) == fold:
                f.write(json.dumps({"text": item.text, "label": item.label}) + "\n")
    return path, sorted({i.label for i in items})


def make_env(task: str, fold: str) -> Any:
    """The task's env over the fold's rows (a ticket router over every queue of the whole set)."""
    import gymnasium as gym

    import s1gym  # noqa: F401  (registers the ids)

    path, labels = fold_file(task, fold)
    if task == "tickets":
        return gym.make(SETS[task]["id"], tickets=str(path), text_column="text", label_column="label",
                        queues=labels).unwrapped
    return gym.make(SETS[task]["id"], texts=str(path)).unwrapped


def block_f1(lines: list[Line]) -> float:
    """F1 of ``block``: the injection guard's headline."""
    tp = sum(x["predicted"] == x["true"] == "block" for x in lines)
    pb = sum(x["predicted"] == "block" for x in lines)
    tb = sum(x["true"] == "block" for x in lines)
    return 2 * tp / (pb + tb) if pb + tb else 0.0


def _protocol(task: str, model: type, metric: Any) -> Protocol:
    spec = SETS[task]
    return Protocol(
        task=task, id=spec["id"], model=model, data=DATA, spec=spec, metric=metric,
        make_env=lambda fold: make_env(task, fold), seeds=lambda fold, env: range(len(env.items)),
        pairs=("routed", "judged"), command=f"{COMMAND} {task}",
        provenance=lambda args: {"data": spec["origin"], "licence": spec["licence"],
                                 "folds": "sha256(normalised text) % 10: 0-5 train, 6-7 dev, 8-9 test",
                                 "min_count": MIN_COUNT})


PROTOCOLS = {
    "tickets": _protocol("tickets", TicketsModel, lambda lines: float(np.mean([x["won"] for x in lines]))),
    "injection": _protocol("injection", InjectionModel, block_f1),
}


if __name__ == "__main__":
    main(PROTOCOLS, prog="python -m s1gym.tasks.text.fit", description=__doc__.splitlines()[0])
