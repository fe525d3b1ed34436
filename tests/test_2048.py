"""s1/2048-v0: merge rules, move tables, spawns, scoring, the Rule order and fork.

The generic contract (check_env, determinism, fork properties) is in test_contract.py.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import s1gym  # noqa: F401  (registers the envs)
from s1gym.tasks.games.game2048 import (
    MOVES,
    PCG32,
    Game2048Env,
    _tables,
    exponents,
    pack_board,
    slide_row,
    slides,
)

PROPERTY = settings(max_examples=25, deadline=None)

# Hand-written rows: (row, after sliding left, points).
MERGE_TABLE = [
    ([2, 2, 2, 2], [4, 4, 0, 0], 8),
    ([4, 4, 8, 0], [8, 8, 0, 0], 8),  # no double merge: the new 8 does not merge with the old 8
    ([2, 2, 4, 4], [4, 8, 0, 0], 12),
    ([4, 2, 2, 0], [4, 4, 0, 0], 4),
    ([2, 2, 2, 0], [4, 2, 0, 0], 4),  # the pair nearest the wall merges first
    ([2, 0, 0, 2], [4, 0, 0, 0], 4),
    ([0, 0, 0, 2], [2, 0, 0, 0], 0),
    ([2, 0, 2, 4], [4, 4, 0, 0], 4),
    ([8, 8, 8, 8], [16, 16, 0, 0], 32),
    ([2, 4, 8, 16], [2, 4, 8, 16], 0),
    ([0, 0, 0, 0], [0, 0, 0, 0], 0),
    ([1024, 1024, 0, 0], [2048, 0, 0, 0], 2048),
    ([32768, 32768, 0, 0], [32768, 32768, 0, 0], 0),  # the 4-bit cap: never reached in play
]


def make(**options) -> Game2048Env:
    return gym.make("s1/2048-v0", **options)


def board_env(rows, **options) -> Game2048Env:
    env = make(**options)
    env.reset(seed=0, options={"board": rows})
    return env


@pytest.mark.parametrize(("row", "expected", "points"), MERGE_TABLE)
def test_slide_row_merge_rules(row, expected, points):
    assert slide_row(row) == (expected, points)


@pytest.mark.parametrize(("row", "expected", "points"), MERGE_TABLE)
def test_env_moves_follow_the_merge_table_in_every_direction(row, expected, points):
    """Each row, placed as a row or column, moved each way: the result before the new tile."""
    grid = np.zeros((4, 4), dtype=int)
    cases = {
        "left": (lambda r: _set(grid, 1, slice(None), r), lambda g: g[1, :]),
        "right": (lambda r: _set(grid, 2, slice(None), r[::-1]), lambda g: g[2, ::-1]),
        "up": (lambda r: _set(grid, slice(None), 0, r), lambda g: g[:, 0]),
        "down": (lambda r: _set(grid, slice(None), 3, r[::-1]), lambda g: g[::-1, 3]),
    }
    for move, (place, read) in cases.items():
        start = place(row)
        moves = slides(pack_board(start))
        if expected == row:
            assert move not in moves
            continue
        after, got_points = moves[move]
        tiles = np.array([(1 << e) if e else 0 for e in exponents(after)]).reshape(4, 4)
        assert read(tiles).tolist() == expected, move
        assert got_points == points


def _set(grid, i, j, values):
    g = grid.copy()
    g[i, j] = values
    return g


def test_row_tables_match_the_reference_rule_on_all_rows():
    t = _tables()
    for r in range(1 << 16):
        cells = [(1 << ((r >> (4 * i)) & 0xF)) if (r >> (4 * i)) & 0xF else 0 for i in range(4)]
        out, points = slide_row(cells)
        packed = sum((v.bit_length() - 1 if v else 0) << (4 * i) for i, v in enumerate(out))
        assert (t.left[r], t.points_left[r]) == (packed, points), cells


@PROPERTY
@given(st.lists(st.integers(0, 11), min_size=16, max_size=16))
def test_packed_moves_match_a_numpy_reference(cells):
    grid = np.array([(1 << e) if e else 0 for e in cells]).reshape(4, 4)
    moves = slides(pack_board(grid))
    for move in MOVES:
        expected, points = _numpy_move(grid, move)
        if np.array_equal(expected, grid):
            assert move not in moves
        else:
            after, got = moves[move]
            tiles = np.array([(1 << e) if e else 0 for e in exponents(after)]).reshape(4, 4)
            assert np.array_equal(tiles, expected) and got == points, move
    assert list(moves) == [m for m in MOVES if m in moves]  # fixed order


def _numpy_move(grid: np.ndarray, move: str) -> tuple[np.ndarray, int]:
    """Rotate so the move is 'left', slide each row, rotate back."""
    turns = {"left": 0, "up": 1, "right": 2, "down": 3}[move]
    g = np.rot90(grid, turns)
    rows, points = zip(*(slide_row(list(r)) for r in g))
    return np.rot90(np.array(rows), -turns), sum(points)


def test_pcg32_matches_the_reference_implementation():
    # pcg-c-basic's pcg32-demo: pcg32_srandom(42, 54), first six outputs.
    rng = PCG32(42, 54)
    assert [rng.next() for _ in range(6)] == [
        0xA15C02B7,
        0x7B47F409,
        0xBA1D3330,
        0x83D2F293,
        0xBFA4784B,
        0xCBED606E,
    ]


def test_spawn_distribution_over_many_seeds():
    """Start tiles: a 4 one time in ten, every cell equally likely (tolerances ~4 sigma)."""
    env = make()
    n = 3000
    fours = 0
    first_cells = np.zeros(16)
    for seed in range(n):
        env.reset(seed=seed)
        tiles = env.board.ravel()
        assert (tiles > 0).sum() == 2
        fours += int((tiles == 4).sum())
        first_cells += tiles > 0
    assert abs(fours / (2 * n) - 0.1) < 4 * math.sqrt(0.09 / (2 * n))
    expected = 2 * n / 16
    assert np.all(np.abs(first_cells - expected) < 4 * math.sqrt(expected)), first_cells


def test_a_move_adds_exactly_one_tile_on_an_empty_cell():
    env = board_env([[2, 2, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 4]])
    _, _, _, _, info = env.step(env.index_of("left"))
    before_spawn = np.array([[4, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [4, 0, 0, 0]])
    new = env.board - before_spawn
    assert (new != 0).sum() == 1 and new.max() in (2, 4)
    assert before_spawn.ravel()[np.argmax(new.ravel() != 0)] == 0
    assert info["points"] == 4 and info["game_score"] == 4


def test_candidates_are_the_moves_that_change_the_board_in_fixed_slots():
    env = board_env([[2, 4, 8, 16], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])
    assert env.candidates == ("down",)
    assert env.action_masks().tolist() == [0, 1, 0, 0] and env.index_of("down") == 1  # index 1 is always down
    env = board_env([[2, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])
    assert env.candidates == ("down", "right")
    env = board_env([[0, 0, 0, 0], [0, 2, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])
    assert env.candidates == MOVES


def test_no_move_means_lost():
    env = make()
    obs, info = env.reset(seed=0, options={"board": [[2, 4, 2, 4], [4, 2, 4, 2], [2, 4, 2, 4], [4, 2, 4, 2]]})
    assert info["lost"] and not info["won"] and env.candidates == ()
    assert info["candidates"] == list(MOVES) and info["action_mask"].tolist() == [1, 1, 1, 1]  # game over: all ones
    assert "game over" in obs
    _, reward, terminated, _, info = env.step(0)
    assert info["invalid_action"] and reward == 0.0 and terminated


def test_reaching_the_target_wins_and_score_is_log2_of_the_largest_tile():
    env = make(target=8)
    _, info = env.reset(seed=0, options={"board": [[4, 4, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 2]]})
    assert info["score"] == pytest.approx(2 / 3) and info["max_tile"] == 4
    obs, reward, terminated, truncated, info = env.step(env.index_of("left"))
    assert terminated and not truncated and info["won"] and info["score"] == 1.0
    assert reward == pytest.approx(1 / 3) and info["max_tile"] == 8
    assert "you win" in obs


def test_default_score_and_reward_follow_log2_over_11():
    env = board_env([[2, 0, 0, 2], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])
    assert env.score == pytest.approx(1 / 11)
    _, reward, *_ = env.step(env.index_of("left"))
    assert env.score == pytest.approx(2 / 11) and reward == pytest.approx(1 / 11)


def test_truncation_at_max_steps():
    env = make(max_steps=3)
    env.reset(seed=1)
    results = [env.step(0) for _ in range(3)]
    assert [r[3] for r in results] == [False, False, True]
    assert env.done


def test_rule_prefers_down_left_right_up():
    env = board_env([[2, 4, 8, 16], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])
    assert env.rule_action() == "down"
    env = board_env([[0, 0, 0, 2], [0, 0, 0, 4], [0, 0, 0, 8], [0, 0, 0, 16]])
    assert env.rule_action() == "left"
    env = board_env([[2, 0, 0, 0], [4, 0, 0, 0], [8, 0, 0, 0], [16, 0, 0, 0]])
    assert env.rule_action() == "right"


def test_rule_policy_plays_the_fixed_order():
    from s1gym.policies import Rule

    env = make()
    env.reset(seed=4)
    decision = Rule().decide(env.situation())
    assert env.candidates[decision.action] == env.rule_action()


def test_observation_shows_an_aligned_grid_score_and_largest_tile():
    env = board_env([[2, 0, 0, 1024], [0, 16, 0, 0], [0, 0, 0, 0], [0, 0, 0, 4]])
    obs = env.situation().observation
    assert "Score: 0   Largest tile: 1024" in obs
    lines = obs.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Score:")) + 1
    grid = lines[start : start + 4]
    assert grid[0] == "    2     .     .  1024"
    assert len({len(line) for line in grid}) == 1


def test_state_key_is_the_board_alone():
    a, b = make(), make()
    a.reset(seed=0, options={"board": [[2, 2, 0, 0], [0] * 4, [0] * 4, [0] * 4]})
    b.reset(seed=0, options={"board": [[0, 4, 0, 0], [0] * 4, [0] * 4, [0] * 4]})
    a.step(a.index_of("left"))
    b.step(b.index_of("left"))
    assert a.game_score != b.game_score and a.state_key() == b.state_key()


@PROPERTY
@given(seed=st.integers(0, 2**32), moves=st.lists(st.integers(0, 3), min_size=1, max_size=20))
def test_fork_draws_the_same_tiles_and_shares_no_generator(seed, moves):
    env = make()
    env.reset(seed=seed)
    fork = env.fork()
    for m in moves:  # the fork and the parent meet the same tiles for the same moves
        if env.done:
            break
        a = env.step(m % len(env.candidates))
        b = fork.step(m % len(fork.candidates))
        assert a[0] == b[0] and a[1] == b[1]
    # The Gymnasium generator is copied on access: reading it in one never moves the other.
    twin = env.fork()
    drawn = env.np_random.integers(1 << 30, size=3)
    assert np.array_equal(twin.np_random.integers(1 << 30, size=3), drawn)
    # Seedless resets continue the same stream in a parent and its fork.
    left, right = env.fork(), env.fork()
    assert left.reset()[0] == right.reset()[0]


def test_seedless_reset_after_a_seeded_one_is_reproducible():
    a, b = make(), make()
    a.reset(seed=9)
    b.reset(seed=9)
    assert a.reset()[0] == b.reset()[0]


def test_bad_options_are_clear_errors():
    with pytest.raises(ValueError, match="target must be a power of two"):
        make(target=1000)
    env = make()
    with pytest.raises(ValueError, match="4x4 integers"):
        env.reset(options={"board": [[2, 2]]})
    with pytest.raises(ValueError, match="powers of two"):
        env.reset(options={"board": [[3, 0, 0, 0], [0] * 4, [0] * 4, [0] * 4]})
    with pytest.raises(ValueError, match="unknown reset option"):
        env.reset(options={"tiles": 3})


def test_summarize_episodes():
    summary = Game2048Env.summarize_episodes(
        [
            {"max_tile": 256, "game_score": 2000},
            {"max_tile": 512, "game_score": 5000},
            {"max_tile": 256, "game_score": 3000},
        ]
    )
    assert summary["max_tile_counts"] == {"256": 2, "512": 1}
    assert summary["mean_game_score"] == pytest.approx(10000 / 3)
