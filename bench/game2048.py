"""2048 benchmark: s1/2048-v0 against a plain numpy 2048 loop, and the fixed-order baseline.

    python bench/game2048.py                # about a minute on 2 busy cores
    python bench/game2048.py --games 200

1. Steps/s of a fixed-order play loop (down, left, right, up: the first move
   that changes the board) through ``env.step`` against the same loop on a
   plain numpy implementation of the game (4x4 int array, ``np.rot90`` and a
   per-row slide, spawns from ``np.random.Generator``). The numpy loop's step
   computes the next state's legal moves too, as ``env.step`` does for its
   candidates. CPU time (``time.process_time``), so other processes on a busy
   machine do not count.
2. ``env.fork()`` against copying the numpy game's state (board array, score,
   generator) and against ``copy.deepcopy(env)``. Target: under 20 µs.
3. The fixed-order baseline over ``--games`` seeded games (seeds 0..n-1,
   default step limit 2000): distribution of the largest tile, mean game score
   and moves; the numpy game's distribution over a few hundred games as a
   cross-check of the rules (different random streams, same distribution).
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
from collections import Counter
from pathlib import Path

import gymnasium as gym
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _timing import cpu_us

import s1gym  # noqa: F401
from s1gym.core import copy_generator

ORDER = ("down", "left", "right", "up")
TURNS = {"left": 0, "up": 1, "right": 2, "down": 3}  # np.rot90 turns that make the move a left slide


class NumpyGame:
    """The straightforward numpy 2048: the baseline ``env.step`` is measured against."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.board = np.zeros((4, 4), dtype=np.int64)
        self.score = 0
        self.spawn()
        self.spawn()
        self.legal = self.legal_moves()

    def spawn(self) -> None:
        empty = np.flatnonzero(self.board == 0)
        self.board.flat[self.rng.choice(empty)] = 4 if self.rng.random() < 0.1 else 2

    @staticmethod
    def slide(board: np.ndarray, move: str) -> tuple[np.ndarray, int]:
        rotated = np.rot90(board, TURNS[move])
        out = np.zeros_like(rotated)
        points = 0
        for i, row in enumerate(rotated):
            tiles = row[row != 0]
            j = k = 0
            while k < len(tiles):
                if k + 1 < len(tiles) and tiles[k] == tiles[k + 1]:
                    out[i, j] = 2 * tiles[k]
                    points += 2 * int(tiles[k])
                    k += 2
                else:
                    out[i, j] = tiles[k]
                    k += 1
                j += 1
        return np.rot90(out, -TURNS[move]), points

    def legal_moves(self) -> dict[str, tuple[np.ndarray, int]]:
        moves = {}
        for move in ("up", "down", "left", "right"):
            after, points = self.slide(self.board, move)
            if not np.array_equal(after, self.board):
                moves[move] = (after, points)
        return moves

    def step(self, move: str) -> None:
        self.board, points = self.legal[move]
        self.board = self.board.copy()
        self.score += points
        self.spawn()
        self.legal = self.legal_moves()

    def fork(self) -> NumpyGame:
        clone = object.__new__(NumpyGame)
        clone.board, clone.score, clone.legal = self.board.copy(), self.score, self.legal
        clone.rng = copy_generator(self.rng)
        return clone


def play_numpy(seed: int, max_steps: int = 2000) -> tuple[int, int, int]:
    game = NumpyGame(seed)
    steps = 0
    while game.legal and steps < max_steps:
        game.step(next(m for m in ORDER if m in game.legal))
        steps += 1
    return int(game.board.max()), game.score, steps


def play_env(env, seed: int) -> tuple[int, int, int, bool]:
    _, info = env.reset(seed=seed)
    truncated = False
    while not env.done:
        _, _, _, truncated, info = env.step(env.index_of(env.rule_action()))
    return info["max_tile"], info["game_score"], env.steps, truncated


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", type=int, default=1000, help="fixed-order games (default 1000)")
    parser.add_argument("--numpy-games", type=int, default=300, help="numpy cross-check games (default 300)")
    parser.add_argument(
        "--timing-games", type=int, default=30, help="games per speed measurement (default 30)"
    )
    args = parser.parse_args()
    env = gym.make("s1/2048-v0")

    # 1. steps/s of the same fixed-order loop
    rates = {}
    for name, run in (("env", lambda s: play_env(env, s)[2]), ("numpy", lambda s: play_numpy(s)[2])):
        best = 0.0
        for r in range(3):
            t0 = time.process_time()
            steps = sum(run(10_000 + r * args.timing_games + g) for g in range(args.timing_games))
            best = max(best, steps / (time.process_time() - t0))
        rates[name] = best
    print(
        f"step   s1/2048-v0 env.step (fixed-order loop)   {rates['env']:>9,.0f} steps/s  ({1e6 / rates['env']:.1f} µs)"
    )
    print(
        f"step   plain numpy 2048 (same loop)            {rates['numpy']:>9,.0f} steps/s  ({1e6 / rates['numpy']:.1f} µs)"
        f"   env/numpy = {rates['env'] / rates['numpy']:.1f}x faster"
    )

    # 2. fork
    env.reset(seed=1)
    for _ in range(40):
        env.step(env.index_of(env.rule_action()))
    game = NumpyGame(1)
    for _ in range(40):
        game.step(next(m for m in ORDER if m in game.legal))
    t_fork = cpu_us(env.fork, 20_000)
    t_numpy = cpu_us(game.fork, 20_000)
    t_deep = cpu_us(lambda: copy.deepcopy(env), 500)
    print(f"fork   s1/2048-v0 env.fork()                   {t_fork:9.2f} µs  (target < 20 µs)")
    print(
        f"fork   numpy game copy (board, generator)      {t_numpy:9.2f} µs   numpy/fork = {t_numpy / t_fork:.1f}x"
    )
    print(f"fork   copy.deepcopy(env)                      {t_deep:9.2f} µs")

    # 3. fixed-order baseline
    t0 = time.process_time()
    results = [play_env(env, seed) for seed in range(args.games)]
    secs = time.process_time() - t0
    tiles = Counter(r[0] for r in results)
    print(
        f"rule   fixed order over {args.games} games: mean game score {np.mean([r[1] for r in results]):.0f}, "
        f"mean moves {np.mean([r[2] for r in results]):.0f}, truncated {sum(r[3] for r in results)}  [{secs:.1f} s CPU]"
    )
    print("rule   largest tile: " + ", ".join(f"{t}: {tiles[t]}" for t in sorted(tiles)))
    cross = [play_numpy(100_000 + g) for g in range(args.numpy_games)]
    ctiles = Counter(c[0] for c in cross)
    print(
        f"check  numpy game, fixed order, {args.numpy_games} games: mean game score "
        f"{np.mean([c[1] for c in cross]):.0f}; largest tile: "
        + ", ".join(f"{t}: {ctiles[t]}" for t in sorted(ctiles))
    )


if __name__ == "__main__":
    main()
