"""Local on ALFWorld: collect expert data, fit, cross-validate over games, ship the model.

    python bench/alfworld_local.py collect --workers 2   # expert and noisy-expert states of all 140 games
    python bench/alfworld_local.py cv --workers 2        # fit on 4 folds, play the 5th; every fold
    python bench/alfworld_local.py ship                  # fit on all 140 games -> s1gym/data/local_alfworld.json

Protocol (written down and committed before any fitting or measuring)
--------------------------------------------------------------------

Games. The 140 solvable games of ALFWorld's ``valid_seen`` split (../shared/data/alfworld, SOURCE.md),
in :func:`s1gym.tasks.alfworld.find_games` order. The unseen split is not available here; every number
below is cross-validated over these games.

Folds. Five folds of games, grouped by task folder (``<task_type>-<Object>-<MRecep>-<Parent>-<Scene>``:
the trials of one folder always share a fold) and stratified by task type: within each task type (in
:data:`s1gym.tasks.alfworld.TASK_TYPES` order) the folders are sorted by the sha1 of their name and
dealt round-robin to folds 0..4, the deal going on from type to type (:func:`folds`). Fold sizes are
28 games each, give or take one. Rooms (ALFRED floor plans) recur across folders: valid_seen is ALFWorld's
*seen* split, whose rooms also appear in its training data.

Training data, from the training folds only (never the held-out fold's games):

- expert states: every state along the handcoded expert's game (``env.rule_action()``, hygiene on,
  50 steps), labelled with the expert's move;
- noisy-expert states (DART-style roll-ins, Laskey et al. 2017, so that the model also sees states off
  the expert's path and learns to recover): two roll-ins per game in which each move is, with
  probability 0.3, a uniformly random other candidate, else the expert's (``random.Random`` seeded with
  ``1000 * game index + roll-in``), 50 steps; every state is labelled with the expert's move *from that
  state* (the handcoded expert is told every move, so it answers from where the roll-in is);
- states where the expert is lost (its move is not on offer) are dropped; games the expert does not win
  still give their states (its moves are the labels, not the outcome).

Every state is stored with its Lookahead annotation (each candidate's outcome and new moves), so the
features of Local and Lookahead(Local) come from the same record. Proper DAgger (roll-ins with the
learner itself, refitted per fold) costs five times the data collection on this 2-core machine and is
not part of this protocol; the noisy roll-ins are its fold-independent stand-in.

Models fitted per fold (``fit``): Local's ALFWorld model (policies/local.py; the features and the
lexical pair model it adds for ALFWorld are described there) in two stages, as on CookingWorld: the
features a plain decision sees, by conditional-logit likelihood of the expert's move among all
candidates; then the lookahead features alone, the first stage fixed, on the annotated candidates.
The L2 strength is fixed in advance (1.0 on the pair weights, 1e-3 per point on the dense weights).
The progress estimate for Search (``heuristic``): a least-squares fit of the expert's remaining steps on
the expert states of the training folds, clipped at 0.

Play (each held-out game once, ``game=<index>``, ``reset(seed=0)``, hygiene on, 50 steps, the env's
defaults otherwise; all policies deterministic):

- ``Local`` and ``Lookahead(Local)``: every held-out game of every fold (140 games);
- ``Search(Lookahead(Local), budget=10, episode_budget=150, heuristic=<fold's progress estimate>)``,
  the other SearchConfig options at their defaults (phs_h, epsilon 0.1, novelty 100, doubling): on the
  games at positions 0, 5, 10, 15, 20 and 25 of each held-out fold's game list (30 games), since a
  Search game costs minutes of CPU on this machine.

Reported per fold and in total: games won, mean steps, inner-policy calls per game, wall and CPU
seconds per game and per step (the machine is shared; CPU time is the robust one). The model shipped in
s1gym/data/local_alfworld.json is fitted by ``ship`` on all 140 games, after the cross-validated
numbers were measured; those numbers, not the shipped model's, are what docs/benchmarks.md reports.
"""

from __future__ import annotations

import hashlib
import sys
from collections import defaultdict
from pathlib import Path

# Keep bench/ off sys.path (bench/alfworld.py would shadow the alfworld package).
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from s1gym.tasks.alfworld import TASK_TYPES, find_games, task_type_of  # noqa: E402

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "alfworld"
N_FOLDS = 5
NOISE = 0.3
ROLLINS = 2
SEARCH_POSITIONS = (0, 5, 10, 15, 20, 25)


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


if __name__ == "__main__":
    games = find_games(str(SHARED), "valid_seen")
    for k, f in enumerate(folds(games)):
        kinds = defaultdict(int)
        for i in f:
            kinds[task_type_of(games[i])] += 1
        print(k, len(f), dict(kinds))
