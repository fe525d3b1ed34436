"""The states Local's ALFWorld model is fitted on: the games, their folds, and the collected states.

Collecting plays the handcoded expert's games and the noisy and learner roll-ins of the protocol
(:mod:`s1gym.tasks.alfworld.fit`), every state stored with its Lookahead annotation and the expert's move
there (``env.expert_action()``: always a candidate, hygiene on). States go to ``$S1GYM_ALFWORLD_STATES``
(default ``~/.cache/s1gym/alfworld_states``), one gzipped JSON-lines file per game; nothing collected is part
of the repository.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import random
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from s1gym.tasks.alfworld.env import TASK_TYPES, find_games, task_type_of
from s1gym.tasks.alfworld.expert import ExpertLost

#: The shared ALFWorld data beside the project (../shared/data/alfworld; ``S1GYM_SHARED_DATA`` overrides).
SHARED = Path(os.environ.get("S1GYM_SHARED_DATA", Path(__file__).resolve().parents[4] / "shared" / "data")) / "alfworld"
#: Where ``collect`` writes one gzipped JSON-lines file of states per game (not part of the repository).
STATES = Path(os.environ.get("S1GYM_ALFWORLD_STATES", "~/.cache/s1gym/alfworld_states")).expanduser()
N_FOLDS = 5
NOISE = 0.3
ROLLINS = 1
ROLLIN_MOVES = 30


def valid_seen() -> tuple[str, ...]:
    """The protocol's games: the solvable games of the shared ``valid_seen`` split, in find_games order."""
    return find_games(str(SHARED), "valid_seen")


def task_folder(gamefile: str) -> str:
    return Path(gamefile).parent.parent.name


def folds(games: tuple[str, ...] | list[str], n_folds: int = N_FOLDS) -> list[list[int]]:
    """Game indices per fold: grouped by task folder, stratified by task type (see the protocol)."""
    by_type: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for i, g in enumerate(games):
        by_type[task_type_of(g)][task_folder(g)].append(i)
    out: list[list[int]] = [[] for _ in range(n_folds)]
    deal = 0
    for t in TASK_TYPES:
        for folder in sorted(by_type.get(t, {}), key=lambda f: hashlib.sha1(f.encode()).hexdigest()):
            out[deal % n_folds].extend(by_type[t][folder])
            deal += 1
    return [sorted(f) for f in out]


def interleaved(games: tuple[str, ...] | list[str]) -> list[int]:
    """Game indices, the i-th of each task type (by sha1 of the folder name) for i = 0, 1, ..."""
    by_type: dict[str, list[int]] = defaultdict(list)
    for i, g in enumerate(games):
        by_type[task_type_of(g)].append(i)
    ranked = {t: sorted(v, key=lambda i: (hashlib.sha1(task_folder(games[i]).encode()).hexdigest(), i))
              for t, v in by_type.items()}
    out = []
    for r in range(max(map(len, ranked.values()))):
        out.extend(ranked[t][r] for t in TASK_TYPES if r < len(ranked.get(t, ())))
    return out


def make_env(game: int, **options):
    import gymnasium as gym

    import s1gym  # noqa: F401

    return gym.make("s1/ALFWorld-v0", data_dir=str(SHARED), split="valid_seen", hygiene=True, game=game, **options)


# --------------------------------------------------------------------------
# collect
# --------------------------------------------------------------------------


def collect_game(game: int) -> tuple[int, int, float]:
    """The expert's game and the noisy roll-ins of one game, every state with its lookahead annotation."""

    def play(players: _Players) -> list[dict]:
        records = []
        for rollin in range(ROLLINS + 1):
            rng = random.Random(1000 * game + rollin)

            def noisy_expert(annotated, expert: str | None, rng=rng, rollin=rollin) -> str:
                texts = annotated.texts
                noisy = rollin > 0 and rng.random() < NOISE
                others = [t for t in texts if t != expert]
                move = rng.choice(others) if (noisy or expert not in texts) and others else expert
                return move if move in texts else texts[0]

            records += players.play(rollin, noisy_expert, None if rollin == 0 else ROLLIN_MOVES)
        return records

    return _collect(STATES / f"{game:03d}.jsonl.gz", game, play)


def collect_learner_game(job: tuple[int, str]) -> tuple[int, int, float]:
    """One learner roll-in of a game (``rollin`` 2): Lookahead(Local) with a roller model chooses every move,
    the expert labels every state (DAgger's data; which roller plays which game: :func:`roller_fold`)."""
    from s1gym.policies.local import Local
    from s1gym.tasks.alfworld.model import ALFWorldModel

    game, model_path = job
    roller = int(Path(model_path).stem.removeprefix("fold"))

    def play(players: _Players) -> list[dict]:
        local = Local(pairs=ALFWorldModel.load(model_path), preload=False)

        def learner(annotated, expert: str | None) -> str:
            return annotated.texts[local.decide(annotated).action]

        return [{**r, "roller": roller} for r in players.play(2, learner, ROLLIN_MOVES)]

    return _collect(STATES / "learner" / f"{game:03d}.jsonl.gz", game, play)


def _collect(out: Path, game: int, play: Callable[[_Players], list[dict]]) -> tuple[int, int, float]:
    """``play``'s records of ``game`` written to ``out`` (skipped when it exists): (game, states, CPU s)."""
    if out.exists():
        return game, -1, 0.0
    t0 = time.process_time()
    with _Players(game) as players:
        records = play(players)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    with gzip.open(tmp, "wt") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")
    tmp.rename(out)
    return game, len(records), time.process_time() - t0


class _Players:
    """The env that tracks the expert and its twin without (the lookahead forks come from the twin: facts and
    the expert cost a third of a step; both play the same moves, so they show the same texts)."""

    def __init__(self, game: int) -> None:
        from s1gym.policies import Uniform
        from s1gym.wrappers import Lookahead

        self.game = game
        self.env = make_env(game)
        self.twin = make_env(game, expert=None)
        self.lookahead = Lookahead(Uniform())

    def __enter__(self) -> _Players:
        return self

    def __exit__(self, *exc) -> None:
        self.env.close()
        self.twin.close()

    def play(self, rollin: int, choose, max_moves: int | None) -> list[dict]:
        """One game from the start, ``choose(annotated situation, expert move or None) -> move`` choosing the
        moves; every state where the expert names a candidate is recorded with it as the label (``None``: the
        expert is lost there)."""
        env, twin = self.env, self.twin
        env.reset(seed=0)
        twin.reset(seed=0)
        records, info = [], {}
        while not env.done and (max_moves is None or env.steps < max_moves):
            situation = twin.situation()
            try:
                expert = env.expert_action()
            except ExpertLost:
                expert = None
            texts = situation.texts
            assert texts == env.candidates and situation.state_text == env.state_text
            annotated, kept, _ = self.lookahead.annotate(situation)
            shown = {c.text: c for c in annotated.candidates}
            if expert is not None:
                records.append({
                    "game": self.game, "rollin": rollin, "step": env.steps, "state_text": situation.state_text,
                    "history": [list(h) for h in situation.history], "candidates": list(texts),
                    "outcomes": [shown[t].outcome if t in shown else None for t in texts],
                    "new_actions": [list(shown[t].new_actions) if t in shown else [] for t in texts],
                    "expert": expert,
                })
            move = choose(annotated, expert)
            *_, info = env.step(env.index_of(move))
            twin.step(twin.index_of(move))
        won = bool(info.get("won"))
        for r in records:
            r["won"] = won
            r["remaining"] = env.steps - r["step"] if won else None
        return records


# --------------------------------------------------------------------------
# load
# --------------------------------------------------------------------------


def load_states(games, learner: bool = False, skip_tidy: bool = False) -> list[dict]:
    """The collected records of ``games`` (with ``learner``: also their learner roll-ins, where collected;
    with ``skip_tidy``: relabelled by :func:`skip_tidying`)."""
    out = []
    for g in games:
        paths = [STATES / f"{g:03d}.jsonl.gz"]
        if learner and (STATES / "learner" / f"{g:03d}.jsonl.gz").exists():
            paths.append(STATES / "learner" / f"{g:03d}.jsonl.gz")
        for path in paths:
            with gzip.open(path, "rt") as f:
                out.extend(json.loads(line) for line in f)
    return skip_tidying(out) if skip_tidy else out


def collected() -> list[int]:
    """The games whose states were collected."""
    return sorted(int(p.name[:3]) for p in STATES.glob("*.jsonl.gz"))


def skip_tidying(records: list[dict]) -> list[dict]:
    """Records labelled ``close X`` take the label of the state after the close instead (same roll-in, the
    close played, that label on offer here): alfworld's expert closes every receptacle it opened, which no
    ALFWorld goal needs and which costs a move each time."""
    by_step = {(r["game"], r["rollin"], r["step"]): r for r in records}
    out = []
    for r in records:
        nxt = by_step.get((r["game"], r["rollin"], r["step"] + 1))
        if (r["expert"].startswith("close ") and nxt is not None and nxt["history"]
                and nxt["history"][-1][0] == r["expert"] and nxt["expert"] in r["candidates"]):
            r = {**r, "expert": nxt["expert"], "tidy": r["expert"]}
        out.append(r)
    return out


def roller_fold(fold: int) -> int:
    """The fold whose states fit the model that plays the learner roll-ins of ``fold``'s games."""
    return (fold + 1) % N_FOLDS


def usable(record: dict, forbidden: set[int], fold_games: list[list[int]]) -> bool:
    """A record may train a model that must not see the ``forbidden`` games: not one of them, and (a learner
    roll-in) not played by a roller fitted on any of them."""
    if record["game"] in forbidden:
        return False
    return "roller" not in record or not forbidden.intersection(fold_games[record["roller"]])
