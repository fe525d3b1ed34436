"""TWX forks restore in-JVM snapshots (s1gym.tasks.twx.snapshots) and stay exact: a fork continued equals the
original continued and a fresh game played from the start, for every TWX game, on the real JVM."""

from __future__ import annotations

import gc

import gymnasium as gym
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from py4j.protocol import Py4JJavaError

import s1gym  # noqa: F401  (registers the envs)
from s1gym.core import S1Env
from s1gym.engines import base as engines
from s1gym.engines import jvm as _jvm
from s1gym.tasks.twx import snapshots
from s1gym.tasks.twx.engine import get_jvm

GAMES = {
    "CookingWorld": {"num_locations": 6, "num_ingredients": 3, "num_distractors": 5, "include_doors": True},
    "CoinCollector": {},
    "TWC": {},
    "MapReader": {},
    "Arithmetic": {},
    "Sorting": {},
    "SimonSays": {},
    "PeckingOrder": {},
}


def play(env, moves) -> list:
    """Each move (an index taken modulo the candidates) and what the step gave, until the game ends."""
    out = []
    for m in moves:
        if env.done:
            break
        i = m % len(env.candidates)
        obs, reward, terminated, truncated, info = env.step(i)
        out.append((env.history[-1][0], obs, reward, terminated, truncated, info["score"], tuple(info["candidates"])))
    return out


@pytest.mark.parametrize("task", list(GAMES))
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(
    seed=st.integers(0, 999),
    prefix=st.lists(st.integers(0, 500), max_size=25),
    suffix=st.lists(st.integers(0, 500), min_size=1, max_size=12),
    fork_first=st.booleans(),
)
def test_a_fork_continued_is_the_original_continued(task, seed, prefix, suffix, fork_first):
    env = gym.make(f"s1/{task}-v0", **GAMES[task])
    fresh = gym.make(f"s1/{task}-v0", **GAMES[task])
    try:
        env.reset(seed=seed)
        played = play(env, prefix)
        pool = env._pool()
        replayed = pool.replayed_moves
        fork = env.fork()
        second = env.fork()
        if fork_first:  # the fork takes the engine; the original restores its snapshot
            a, b = play(fork, suffix), play(env, suffix)
        else:
            b, a = play(env, suffix), play(fork, suffix)
        c = play(second, suffix)
        grand = second.fork() if not second.done else None
        fresh.reset(seed=seed)
        truth = play(fresh, [m for m in prefix[: len(played)]] + list(suffix))
        assert played + a == truth[: len(played) + len(a)]
        assert a == b == c
        assert pool.replayed_moves == replayed  # restored from snapshots, never replayed
        if grand is not None:
            assert play(grand, suffix) == play(fresh, suffix)
    finally:
        env.close()
        fresh.close()


def test_dropped_snapshots_are_freed_with_the_next_call():
    env = gym.make("s1/CookingWorld-v0")
    env.reset(seed=3)
    helper = env.engine().snaps
    base = helper.held()
    forks = []
    for _ in range(6):
        forks.append(env.fork())  # an unstepped fork holds the state it was made at, and so its snapshot
        env.step(0)
    assert helper.held() == base + 6
    del forks
    gc.collect()
    assert len(helper.pending) == 6  # queued, no round trip yet
    assert helper.held() == base
    assert not helper.pending
    env.close()


def test_a_snapshot_of_a_jvm_that_died_is_replayed_in_the_next():
    env = gym.make("s1/CookingWorld-v0")
    env.reset(seed=5)
    for i in (0, 1, 2):
        env.step(i)
    fork = env.fork()
    assert env.game_state.snapshot is not None
    _jvm.shutdown_jvm()
    engines.close_pools()
    got = play(fork, [4, 5, 6])
    fresh = gym.make("s1/CookingWorld-v0")
    fresh.reset(seed=5)
    assert got == play(fresh, [0, 1, 2, 4, 5, 6])[3:]
    for x in (env, fork, fresh):
        x.close()


def test_without_the_helper_forks_replay_and_agree(monkeypatch):
    monkeypatch.setenv("S1GYM_TWX_SNAPSHOTS", "0")
    jvm = get_jvm()
    monkeypatch.delitem(jvm.cache, "twx-snapshots", raising=False)
    engines.close_pools()
    env = gym.make("s1/CookingWorld-v0")
    env.reset(seed=6)
    assert not env.engine().can_snapshot
    play(env, [1, 2, 3])
    fork = env.fork()
    a = play(fork, [7, 8, 9])
    assert env._pool().replayed_moves >= 3
    assert a == play(env, [7, 8, 9])
    env.close()
    fork.close()
    engines.close_pools()
    jvm.cache.pop("twx-snapshots", None)


def test_the_helper_is_compiled_once_into_the_cache(tmp_path, monkeypatch):
    from textworld_express.constants import JAR_PATH

    monkeypatch.setenv("S1GYM_CACHE", str(tmp_path))
    monkeypatch.setattr(snapshots, "_built", {})
    folder = snapshots.helper_classpath(JAR_PATH)
    assert folder is not None and folder.startswith(str(tmp_path))
    stamp = (tmp_path / "java").iterdir().__next__().stat().st_mtime_ns
    monkeypatch.setattr(snapshots, "_built", {})
    assert snapshots.helper_classpath(JAR_PATH) == folder
    assert next((tmp_path / "java").iterdir()).stat().st_mtime_ns == stamp
    assert [p.name for p in (tmp_path / "java").iterdir()] == [folder.rsplit("/", 1)[1]]  # no build folder left


def _child(env, result) -> tuple:
    obs, reward, terminated, truncated, info = result
    info = {k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in info.items()}
    return obs, reward, terminated, truncated, info, env.candidates, env.history, env.state_key(), env.steps


@pytest.mark.parametrize("task", ["CookingWorld", "MapReader", "SimonSays"])
def test_children_stepped_in_one_call_are_the_children_stepped_one_by_one(task):
    env = gym.make(f"s1/{task}-v0", **GAMES[task]).unwrapped
    env.reset(seed=11)
    play(env, [3, 1, 4, 1, 5])
    moves = env.candidates
    one = [S1Env.fork_step(env, m) for m in moves]  # the plain path: a fork, then a step on it
    twin = env.fork()
    pool = env._pool()
    restores, hits = pool.restores, pool.transitions.hits
    batch = list(env.fork_steps(moves, keep=True))
    assert pool.restores == restores  # no child was restored on an engine of its own: one call stepped them
    assert [_child(*c) for c in batch] == [_child(*c) for c in one]
    steps = pool.steps
    again = list(env.fork_steps(moves))  # kept: the cache serves every child, rebuilt without an engine call
    assert pool.transitions.hits == hits + len(moves) and pool.steps == steps and pool.restores == restores
    assert [_child(*c) for c in again] == [_child(*c) for c in one]
    for (a, _), (b, _), (c, _) in zip(batch, one, again, strict=True):
        suffix = [2, 7, 1, 8]
        assert play(a, suffix) == play(b, suffix) == play(c, suffix)
    assert play(env, [0, 2]) == play(twin, [0, 2])  # the parent is untouched
    for x in [env, twin] + [c for c, _ in batch + one + again]:
        x.close()


@pytest.mark.parametrize("task", ["CookingWorld", "TWC"])
def test_every_restore_of_a_snapshot_continues_alike(task):
    """The first restore copies the stored game by walking it, the second makes its plan while copying, the
    later ones copy from the plan (S1Snapshots.java): all of them continue as the original does."""
    env = gym.make(f"s1/{task}-v0", **GAMES[task])
    env.reset(seed=4)
    play(env, [2, 7, 1, 8, 2, 8])
    pool = env._pool()
    replayed = pool.replayed_moves
    forks = [env.fork() for _ in range(6)]
    suffix = [3, 1, 4, 1, 5, 9, 2, 6]
    runs = [play(f, suffix) for f in forks]  # the first takes env's engine; each other restores the snapshot
    assert all(r == runs[0] for r in runs) and runs[0] == play(env, suffix)
    assert pool.replayed_moves == replayed
    for x in (env, *forks):
        x.close()


def test_a_fork_shares_the_generator_until_either_env_reads_it():
    env = gym.make("s1/CookingWorld-v0").unwrapped
    env.reset(seed=2)
    env.np_random.random(3)
    fork = env.fork()
    assert fork._np_random is env._np_random  # no copy made by the fork itself
    second = env.fork()
    a = env.np_random.random(4).tolist()  # env reads first: it takes its own copy, the forks keep theirs
    assert fork._np_random is second._np_random is not env._np_random
    assert fork.np_random.random(4).tolist() == a == second.np_random.random(4).tolist()
    assert env.np_random.random(2).tolist() == fork.np_random.random(2).tolist()
    grand = fork.fork()
    fork.reset()  # a reset without a seed draws the game from the generator: the grandchild is untouched
    assert grand.np_random.random(2).tolist() == env.np_random.random(2).tolist()
    for x in (env, fork, second, grand):
        x.close()


@pytest.mark.parametrize("by_address", [False, True])
def test_the_shared_copier_keeps_sharing_and_cycles_and_its_plans_copy_alike(by_address):
    gateway = get_jvm().gateway
    jvm = gateway.jvm
    none = gateway.new_array(jvm.Object, 0)
    copier = jvm.s1gym.jvm.S1DeepCopy(None, False, by_address)
    inner = jvm.java.util.ArrayList()
    inner.add("x")
    root = jvm.java.util.ArrayList()
    for item in (inner, inner, "s"):
        root.add(item)
    root.add(root)  # a cycle
    kept = jvm.java.util.HashMap()
    root.add(kept)
    shared = gateway.new_array(jvm.Object, 1)
    shared[0] = kept
    plan = copier.planned(root, shared)
    copies = [plan.takeFirst(), plan.copy(), plan.copy(), copier.copy(root, shared)]
    assert plan.takeFirst() is None and plan.objects() == 4  # root, its array, inner, inner's array
    ident = jvm.java.lang.System.identityHashCode
    for c in copies:
        assert c.size() == 5 and c.get(0).equals(inner) and c.get(2) == "s"
        assert ident(c) != ident(root) and ident(c.get(0)) != ident(inner)  # copied
        assert ident(c.get(0)) == ident(c.get(1))  # sharing kept
        assert ident(c.get(3)) == ident(c)  # the cycle closes on the copy
        assert ident(c.get(4)) == ident(kept)  # kept as it is
    c = copies[1]
    c.get(0).add("y")  # copies are independent of the original and of each other
    assert inner.size() == 1 and copies[2].get(0).size() == 1 and c.get(1).size() == 2
    of_copy = copier.copied(root, shared)
    twin = of_copy.copy()
    assert ident(of_copy.root()) != ident(root) and of_copy.root().get(0).size() == 1
    assert ident(twin.get(3)) == ident(twin) and ident(twin.get(0)) == ident(twin.get(1))
    assert copier.copy(None, none) is None and copier.copy("s", none) == "s"
    live = jvm.java.util.ArrayList()  # an object Python holds, brought to a copy's state field by field
    copier.copyFields(twin, live, gateway.new_array(jvm.long, 0))
    assert live.size() == 5 and ident(live.get(0)) == ident(twin.get(0)) and ident(live.get(3)) == ident(twin)
    with pytest.raises(Py4JJavaError, match="copyFields"):
        copier.copyFields(twin, kept, gateway.new_array(jvm.long, 0))
