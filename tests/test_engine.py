"""The engine seam (s1gym.engines.base) on the toy tally task of tests/toy_engine.py."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from s1gym.engines.base import EnginePool, close_pools, pool_for, pool_stats

from toy_engine import SnapshotTallyEngine, TallyEngine, TallyEnv

ENGINES = [TallyEngine, SnapshotTallyEngine]
PROPERTY = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(autouse=True)
def fresh_pools():
    close_pools(lambda key: isinstance(key, tuple) and key[0] == "tally")
    yield
    close_pools(lambda key: isinstance(key, tuple) and key[0] == "tally")


def make(engine_class=TallyEngine, seed=0, **kw) -> TallyEnv:
    env = TallyEnv(engine_class, **kw)
    env.reset(seed=seed)
    return env


def pool(env: TallyEnv) -> EnginePool:
    return env._pool()


@pytest.mark.parametrize("engine_class", ENGINES)
def test_the_toy_passes_gymnasiums_checker(engine_class):
    check_env(TallyEnv(engine_class), skip_render_check=True)


@pytest.mark.parametrize("engine_class", ENGINES)
def test_a_fork_is_lazy_and_the_owner_keeps_its_engine(engine_class):
    env = make(engine_class)
    env.step_move("add 2")
    owner_engine = env.game_state.engine
    fork = env.fork()
    assert fork.game_state is env.game_state and len(pool(env)) == 1  # nothing made yet
    fork.step_move("double")
    assert fork.total == 4 and env.total == 2
    if engine_class.can_snapshot:
        # a snapshot engine is cheap to bring back: the fork took the owner's engine and the owner restores
        assert fork.game_state.engine is owner_engine and env.game_state.snapshot == 2
    else:
        assert env.game_state.engine is owner_engine and fork.game_state.engine is not owner_engine
    env.step_move("add 1")
    assert (env.total, fork.total) == (3, 4)


@pytest.mark.parametrize("engine_class", ENGINES)
def test_a_full_pool_takes_over_the_least_recently_used_engine(engine_class):
    envs = [make(engine_class, seed=s) for s in range(5)]
    for e in envs:
        e.step_move("add 1")
    p = pool(envs[0])
    assert len(p) == 2 and p.opened == 2 and p.takeovers >= 3
    for e in envs:  # every env still plays on from its own state, restoring or replaying it
        before = e.total
        e.step_move("add 2")
        assert e.total == before + 2
    assert len(p) == 2
    if engine_class.can_snapshot:
        assert p.replayed_moves == 0 and p.restores > 0
    else:
        assert p.replayed_moves > 0


def test_close_makes_the_engine_idle_for_the_next_env():
    env = make()
    engine = env.game_state.engine
    env.close()
    other = make(seed=1)
    assert other.game_state.engine is engine and pool(other).opened == 1


def test_a_dead_engine_is_dropped_and_the_state_replayed():
    env = make()
    env.step_move("add 2")
    dead = env.game_state.engine
    dead.alive = lambda: False  # its process died
    env.step_move("add 1")
    assert env.total == 3 and env.game_state.engine is not dead and dead not in pool(env)._engines


def test_pools_are_per_key_and_closed_pools_are_remade():
    env = make()
    assert ("tally", TallyEngine) in pool_stats()
    close_pools(lambda key: key == ("tally", TallyEngine))
    env.step_move("double")  # a new pool, the state replayed into a new engine
    assert env.total == 0 and pool(env).opened == 1
    p = pool_for(("tally", "other"), TallyEngine, 1)
    assert p is not pool(env) and pool_for(("tally", "other"), TallyEngine, 1) is p


@PROPERTY
@given(
    engine=st.sampled_from(ENGINES),
    seed=st.integers(0, 1000),
    prefix=st.lists(st.integers(0, 2), max_size=4),
    branches=st.lists(st.lists(st.integers(0, 2), min_size=1, max_size=4), min_size=1, max_size=5),
)
def test_forks_of_forks_under_a_tiny_pool_match_fresh_replays(engine, seed, prefix, branches):
    """Whatever the interleaving, takeovers and restores, every fork is where a fresh env would be."""
    env = make(engine, seed)
    moves = ("add 1", "add 2", "double")

    def play(e, indices):
        for i in indices:
            if e.done:
                break
            e.step_move(moves[i])

    play(env, prefix)
    forks = [env.fork() for _ in branches]
    for f, b in zip(forks, branches, strict=True):
        play(f, b)
        play(f.fork(), b)  # a grandchild steps too, competing for the two engines
    for f, b in zip(forks, branches, strict=True):
        fresh = make(engine, seed)
        play(fresh, prefix)
        play(fresh, b)
        assert (f.total, f.won, f.lost, f.history) == (fresh.total, fresh.won, fresh.lost, fresh.history)
        if not f.done:  # and it plays on identically
            assert f.step_move("add 1")[:4] == fresh.step_move("add 1")[:4]


def same_info(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) if isinstance(a[k], np.ndarray) else a[k] == b[k]
                                        for k in a)


@PROPERTY
@given(
    engine=st.sampled_from(ENGINES),
    seed=st.integers(0, 1000),
    paths=st.lists(st.lists(st.integers(0, 2), min_size=1, max_size=4), min_size=1, max_size=6),
)
def test_a_transition_served_from_the_cache_is_the_step_it_replaces(engine, seed, paths):
    """Children kept by ``fork_step(keep=True)`` are handed out again (no engine step) exactly as stepping gives
    them, and play on identically, whatever the pool does in between."""
    moves = ("add 1", "add 2", "double")
    env = make(engine, seed)
    for path in paths:
        fresh, cached = make(engine, seed), env
        for i in path:
            if fresh.done:
                break
            want = fresh.step_move(moves[i])
            steps = pool(env).steps
            cached, got = cached.fork_step(moves[i], keep=True)
            hit = pool(env).steps == steps
            assert hit or pool(env).steps == steps + 1
            assert got[:4] == want[:4] and same_info(got[4], want[4]), (path, i, hit)
            assert (cached.total, cached.steps, cached.history, cached.state_text) == (
                fresh.total, fresh.steps, fresh.history, fresh.state_text)
        if not fresh.done:
            assert cached.step_move("add 1")[:4] == fresh.step_move("add 1")[:4]


@pytest.mark.parametrize("engine_class", ENGINES)
def test_children_of_an_engine_that_cannot_batch_are_stepped_one_by_one_as_asked(engine_class):
    moves = ("add 1", "add 2", "double")
    env = make(engine_class)
    env.step_move("add 2")
    want = [env.fork_step(m) for m in moves]
    steps = pool(env).steps
    kids = env.fork_steps(moves, keep=True)
    first = next(kids)
    assert pool(env).steps == steps + 1  # the others are stepped only when the caller asks for them
    got = [first, *kids]
    assert pool(env).steps == steps + 3 and [c.total for c, _ in got] == [3, 4, 4]
    for (child, result), (twin, expected) in zip(got, want, strict=True):
        assert result[:4] == expected[:4] and same_info(result[4], expected[4]) and child.history == twin.history
    assert [c.total for c, _ in env.fork_steps(moves)] == [3, 4, 4] and pool(env).steps == steps + 3  # kept


def test_the_transition_cache_is_bounded_and_keyed_by_the_whole_state(monkeypatch):
    monkeypatch.setattr(TallyEnv, "transition_capacity", 2)
    env = make(SnapshotTallyEngine)
    cache = pool(env).transitions
    for move in ("add 1", "add 2", "double"):
        env.fork_step(move, keep=True)
    assert len(cache) == 2 and cache.stored == 3  # least recently used out
    steps = pool(env).steps
    env.fork_step("double")
    env.fork_step("add 1")  # evicted: stepped again, and not stored (keep=False only reads)
    assert pool(env).steps == steps + 1 and cache.hits == 1 and len(cache) == 2
    env.fork_step("double")
    assert cache.hits == 2 and pool(env).steps == steps + 1
    other = make(SnapshotTallyEngine, max_steps=1)  # same game and moves, another step limit: another key
    _, (_, _, _, truncated, _) = other.fork_step("add 2")
    assert truncated and cache.hits == 2 and pool(env).steps == steps + 2


def test_the_docs_show_this_toy_verbatim():
    doc = (Path(__file__).resolve().parents[1] / "docs" / "adding-a-task.md").read_text()
    code = (Path(__file__).with_name("toy_engine.py")).read_text()
    blocks = re.findall(r"```python\n(.*?)```", doc, re.S)
    assert code.split('"""', 2)[2].strip() in [b.strip() for b in blocks]


class AnswerTallyEnv(TallyEnv):
    """The tally whose ``double`` is an answer move (a planner's fork does not play it)."""

    def is_answer_move(self, move: str) -> bool:
        return move == "double"


@pytest.mark.parametrize("engine_class", ENGINES)
def test_a_planners_fork_never_gets_an_answers_outcome_from_the_transition_cache(engine_class):
    env = AnswerTallyEnv(engine_class)
    env.reset(seed=0)
    env.step_move("add 2")
    oracle = env.situation().fork()
    oracle.reveal_answers()
    played, result = oracle.fork_step("double", keep=True)  # the real outcome, now in the pool's cache
    assert not played.outcome_hidden and result[0] == "You double: 4.\n\nTotal 4 of 27.\n\nMoves: add 1, add 2, double"
    planning = env.situation().fork()
    for child, (obs, reward, terminated, _, info) in (planning.fork_step("double", keep=True),
                                                      *planning.fork_steps(["double"], keep=True)):
        assert child.outcome_hidden and (reward, terminated, info["won"], info["lost"]) == (0.0, True, False, False)
        assert obs.startswith("You chose: double.")
        child.close()
    added, (obs, *_) = planning.fork_step("add 1", keep=True)  # every other move is played
    assert obs == "You add 1: 3.\n\nTotal 3 of 27.\n\nMoves: add 1, add 2, double"
    for e in (env, oracle, played, planning, added):
        e.close()
