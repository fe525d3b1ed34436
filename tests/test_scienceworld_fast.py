"""The ScienceWorld family's fast paths against the full ones, on the real JVM (issue 52): the helper's valid
list against ScienceWorld's own call, the one-round-trip read against the py4j calls one by one, a snapshot
fork and an exact replay against the game played straight. Equality is exact: texts, candidates, scores, infos
and the JVM-global random generator (reading ScienceWorld's valid list draws from it)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("scienceworld", reason="the scienceworld extra is not installed")

import s1gym  # noqa: F401
from s1gym.tasks.scienceworld.env import ScienceWorldEnv
from s1gym.tasks.scienceworld.helper import Snapshot


def make(**options) -> ScienceWorldEnv:
    return gym.make("s1/ScienceWorld-v0", **options)


def helper_of(env: ScienceWorldEnv):
    helper = env.engine().helper
    if helper is None:
        pytest.skip("no javac here: the family's JVM helper is not compiled (forks replay)")
    return helper


def seed_now(env: ScienceWorldEnv) -> int:
    return int(env.engine().jvm.gateway.jvm.s1gym.scienceworld.S1ScienceWorld.globalSeed())


def comparable(result):
    obs, reward, terminated, truncated, info = result
    info = dict(info)
    mask = info.pop("action_mask")
    return obs, reward, terminated, truncated, info, mask.tobytes()


@pytest.mark.parametrize("task", ["mendelian-genetics-known-plant", "test-conductivity"])
def test_the_helpers_valid_list_is_scienceworlds_with_the_same_random_draws(task):
    rng = np.random.default_rng(3)
    env = make(task=task)
    env.reset(seed=0)
    helper_of(env)
    check = env.engine().jvm.gateway.jvm.s1gym.scienceworld.S1ScienceWorld.checkValid
    drew = 0
    for _ in range(12):  # states along a walk of moves that do not end the game (a wrong focus fails it)
        before = seed_now(env)
        assert str(check(env.engine().server)) == ""
        drew += seed_now(env) != before
        safe = [c for c in env.candidates if not c.startswith("focus on")]
        env.step_move(safe[int(rng.integers(len(safe)))])
    assert drew >= 6  # the check compares the generator too, and ScienceWorld's list does draw from it
    env.close()


def test_one_round_trip_reads_what_the_calls_one_by_one_read():
    env = make(task="boil")
    env.reset(seed=1)
    for _ in range(3):
        env.step_move(env.expert_action())
    engine = env.engine()
    helper = helper_of(env)
    snap = engine.snapshot()
    fast, fast_seed = engine._read(""), seed_now(env)
    engine.restore(engine.loaded, snap)
    engine.helper = None  # ScienceWorld's own calls, one py4j call each
    try:
        full, full_seed = engine._read(""), seed_now(env)
    finally:
        engine.helper = helper
    assert fast == full and fast_seed == full_seed
    assert len(full["valid"]) > 50 and full["look"].startswith("This room is called")
    env.close()


def test_a_snapshot_fork_and_an_exact_replay_continue_as_the_game_played_straight():
    rng = np.random.default_rng(5)
    env = make(task="mendelian-genetics-known-plant")
    env.reset(seed=0)
    helper_of(env)
    def pick():  # a random move that does not end the game (a wrong focus fails the task)
        safe = [c for c in env.candidates if not c.startswith("focus on")]
        return safe[int(rng.integers(len(safe)))]

    moves = []
    for _ in range(5):
        moves.append(pick())
        env.step_move(moves[-1])
    walk = [pick(), "look around", "wait1"]
    fork = env.fork()  # a snapshot in the JVM: the fork takes the engine, the original restores the copy
    a = [comparable(fork.step_move(m)) for m in walk]
    a_seed = seed_now(fork)
    b = [comparable(env.step_move(m)) for m in walk]
    b_seed = seed_now(env)
    straight = make(task="mendelian-genetics-known-plant")  # the game played straight, every read made
    straight.reset(seed=0)
    for m in moves:
        straight.step_move(m)
    c = [comparable(straight.step_move(m)) for m in walk]
    c_seed = seed_now(straight)
    assert a == c and b == c and a_seed == b_seed == c_seed
    # an exact replay (load and the moves with every read between them) reaches the same state
    engine = straight.engine()
    state = straight.game_state
    snap = engine.snapshot()
    held, held_seed = engine._read(""), seed_now(straight)
    engine.replay(state.game, state.moves)
    assert (engine._read(""), seed_now(straight)) == (held, held_seed)
    # a snapshot the JVM holds nothing for (a failed copy, or a JVM that died) restores by that replay
    engine.restore(state.game, Snapshot(engine.helper, -1, state.game, state.moves))
    assert (engine._read(""), seed_now(straight)) == (held, held_seed)
    engine.restore(state.game, snap)
    for e in (env, fork, straight):
        e.close()
