"""What the families' fitting scripts share around the fit itself: playing games in worker processes,
departing from the expert in noisy and learner roll-ins, keeping the labelled states they collect (gzipped
JSON lines, written whole or not at all, with Lookahead's annotation of each candidate) and reading them
back as the situations Local decides."""

from __future__ import annotations

import gzip
import json
import multiprocessing as mp
import random
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from s1gym.core import Candidate, Situation

__all__ = [
    "ANNOTATION", "RollIns", "annotation", "pool_map", "read_states", "recorded_situations", "run_games",
    "save_fitted", "set_chosen_weights", "write_states",
]

#: Lookahead's annotation of a candidate as a state record keeps it: (record key, :class:`Candidate`
#: field, the value of a candidate Lookahead dropped; tuples are kept as lists). A record holds the columns
#: its script asked for.
ANNOTATION: tuple[tuple[str, str, Any], ...] = (
    ("outcomes", "outcome", None),
    ("new_actions", "new_actions", ()),
    ("rewards", "reward", None),
    ("revisits", "revisits", None),
)


def pool_map(fn: Callable[[Any], Any], items: Iterable[Any], workers: int,
             tasks_per_worker: int | None = None) -> Iterator[Any]:
    """``fn`` over ``items`` in ``workers`` spawned processes (in order of completion; each worker replaced
    after ``tasks_per_worker`` items, e.g. to free a browser), or here, in order, when ``workers`` is 1."""
    if workers <= 1:
        yield from map(fn, items)
        return
    with mp.get_context("spawn").Pool(workers, maxtasksperchild=tasks_per_worker) as pool:
        yield from pool.imap_unordered(fn, items)


def run_games(fn: Callable[[Any], tuple[str, int, float]], jobs: Sequence[Any], workers: int, every: int,
              tasks_per_worker: int | None = None) -> None:
    """:func:`pool_map` of a collect's games (``fn(job)`` -> (file, states or -1 when already there,
    seconds)), printing the count every ``every`` games and after the last."""
    t = time.time()
    n = 0
    for i, (_path, count, secs) in enumerate(pool_map(fn, jobs, workers, tasks_per_worker)):
        n += max(0, count)
        if i % every == 0 or i == len(jobs) - 1:
            print(f"{i + 1}/{len(jobs)} games, {n} states, {time.time() - t:.0f} s (last {secs:.1f} s)", flush=True)


@dataclass(frozen=True)
class RollIns:
    """How a collect's games depart from the expert: in a ``dart`` game (noisy roll-in, Laskey et al. 2017)
    each of the first ``noisy_moves`` moves is, with probability ``noise``, a uniformly random candidate; in
    a ``dagger`` game (learner roll-in, Ross et al. 2011) each of the first ``learner_moves`` moves is, with
    probability ``learner_share``, the learner's; every other move is the expert's. A departure that would
    be an answer move (:meth:`s1gym.core.S1Env.is_answer_move`) other than the expert's is not played (the
    expert's is): a wrong answer ends the game, and the states after a departure are what a roll-in is for."""

    noise: float
    noisy_moves: int
    learner_share: float
    learner_moves: int

    def move(self, kind: str, env: Any, expert: str, rng: random.Random, learner: Any = None) -> str:
        """The move a game of ``kind`` plays in ``env`` where the expert plays ``expert`` (``rng`` is drawn
        only in a game of a roll-in kind within its moves)."""
        move = expert
        if kind == "dart" and env.steps < self.noisy_moves and rng.random() < self.noise:
            move = rng.choice(env.candidates)
        elif kind == "dagger" and env.steps < self.learner_moves and rng.random() < self.learner_share:
            situation = env.situation()
            move = situation.texts[learner.decide(situation).action]
        return expert if move != expert and env.is_answer_move(move) else move


def annotation(lookahead: Any, situation: Situation, keys: Sequence[str]) -> dict[str, list]:
    """Lookahead's annotation of ``situation``'s candidates as record columns (the :data:`ANNOTATION`
    ``keys`` asked for), one entry per candidate, a dropped candidate's entry its default."""
    annotated, _kept, _ = lookahead.annotate(situation)
    shown = {c.text: c for c in annotated.candidates}
    out = {}
    for key, field, dropped in ANNOTATION:
        if key in keys:
            values = [getattr(shown[t], field) if t in shown else dropped for t in situation.texts]
            out[key] = [list(v) if isinstance(v, tuple) else v for v in values]
    return out


def recorded_situations(task: str, record: dict) -> tuple[Situation, Situation | None]:
    """A state record's decision as Local sees it plainly, and with Lookahead (the candidates it kept, with
    the recorded annotation); ``None`` where the record has no annotation or Lookahead kept nothing."""
    texts = record["candidates"]
    plain = Situation(task=task, observation=record["state_text"], state_text=record["state_text"],
                      candidates=tuple(Candidate(t) for t in texts), score=record["score"],
                      history=tuple(tuple(h) for h in record["history"]),
                      rewards=tuple(record.get("history_rewards", ())))
    if "outcomes" not in record:
        return plain, None
    columns = [(field, record[key]) for key, field, _ in ANNOTATION if key in record]
    if any(len(values) != len(texts) for _, values in columns):
        raise ValueError(f"a state record's annotation does not match its {len(texts)} candidates")
    kept = [Candidate(t, **{f: tuple(v[i]) if f == "new_actions" else v[i] for f, v in columns})
            for i, t in enumerate(texts) if record["outcomes"][i] is not None]
    return plain, plain.with_candidates(kept) if kept else None


def write_states(out: Path, records: Iterable[dict]) -> None:
    """Labelled states as gzipped JSON lines, whole or not at all (a killed collect leaves no half file)."""
    tmp = out.with_suffix(".tmp")
    with gzip.open(tmp, "wt") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")
    tmp.rename(out)


def read_states(path: Path) -> list[dict]:
    """The records :func:`write_states` wrote."""
    with gzip.open(path, "rt") as f:
        return [json.loads(line) for line in f]


def set_chosen_weights(model: Any, items: Iterable[str] | None) -> None:
    """Set the weights given as ``NAME=VALUE`` (``--set``): weights chosen on dev games, not fitted (e.g. a
    token no expert's state shows, such as a revisit); the model's provenance records them."""
    for item in items or ():
        name, _, value = item.partition("=")
        model.weights[name] = float(value)
        model.provenance.setdefault("chosen_on_dev", {})[name] = float(value)


def save_fitted(model: Any, stats: dict, out: str | Path, chosen: Iterable[str] | None) -> None:
    """The end of a fitting script's ``fit``: set the weights chosen on dev (``--set``,
    :func:`set_chosen_weights`), print the fit's statistics and write the model to ``out``."""
    set_chosen_weights(model, chosen)
    print(json.dumps(stats))
    model.save(out)
