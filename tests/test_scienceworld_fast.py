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


def child_view(child, result):
    """Everything a child shows: the step's result (mask as bytes), its candidates, history and state key."""
    return (*comparable(result), tuple(child.candidates), child.history, child.state_key(), child.steps)


@pytest.mark.parametrize(("task", "expert", "walk"), [("boil", 2, 4), ("mendelian-genetics-known-plant", 0, 5)])
def test_children_stepped_in_one_call_are_forks_stepped_one_by_one(task, expert, walk):
    """``fork_steps`` on ScienceWorld steps a state's children in one JVM round trip (the helper's ``children``):
    each child equals a fork stepped with the move (observation, reward, flags, info with candidates, score,
    won and lost, mask), continues as it does, and the parent is left as it was."""
    rng = np.random.default_rng(7)
    env = make(task=task).unwrapped
    env.reset(seed=0)
    helper_of(env)
    env.engine().can_step_children = True  # the default (S1GYM_SW_CHILDREN=0 turns it off): the path under test
    for k in range(walk):  # the expert's path (its gold path costs seconds: boil only), then moves that do not end the game
        if k < expert:
            env.step_move(env.expert_action())
        else:
            safe = [c for c in env.candidates if not c.startswith("focus on")]
            env.step_move(safe[int(rng.integers(len(safe)))])
    cands = env.candidates
    focus = [c for c in cands if c.startswith("focus on")]
    picks = sorted(set(rng.choice(len(cands), size=8, replace=False).tolist()))
    moves = [cands[i] for i in picks] + focus[:2] + ["look around", "wait1"]  # focuses: some lose the game
    twin = env.fork()
    pool = env._pool()
    restores = pool.restores
    batch = list(env.fork_steps(moves))
    assert pool.restores == restores  # one call stepped them: no child restored the parent on its own
    (engine,) = list(pool)  # the family's one engine (read without env.engine(), which would restore)
    assert engine.loaded == env.game_state.game and engine.moves == env.game_state.moves  # left at the parent
    one = [(fork, fork.step_move(m)) for m in moves for fork in [env.fork()]]
    assert [child_view(*c) for c in batch] == [child_view(*c) for c in one]
    assert any(r[4]["lost"] for _, r in one) or not focus  # the losing branch is among those compared
    a, b = next((a, b) for (a, _), (b, _) in zip(batch, one, strict=True) if not a.done)
    grand = [x for x in a.candidates if not x.startswith("focus on")][:3]  # a child's own children, in one call
    assert [child_view(*c) for c in a.fork_steps(grand)] == [child_view(f, f.step_move(m)) for m in grand
                                                             for f in [b.fork()]]
    suffix = ["look around", "wait1"]
    for (a, _), (b, _) in list(zip(batch, one, strict=True))[:3]:
        if a.done:
            continue
        extra = [x for x in a.candidates if not x.startswith("focus on")][:1]
        ra = [comparable(a.step_move(m)) for m in suffix + extra]
        sa = seed_now(a)
        rb = [comparable(b.step_move(m)) for m in suffix + extra]
        assert ra == rb and sa == seed_now(b)  # and the JVM's global random generator agrees
    assert [comparable(env.step_move(m)) for m in suffix] == [comparable(twin.step_move(m)) for m in suffix]
    for e in [env, twin] + [c for c, _ in batch + one]:
        e.close()


def test_the_engine_holds_the_parent_after_stepping_its_children():
    """After the helper's ``children`` the JVM's game and global state are the parent's (the engine records
    it); children of a snapshot the JVM does not hold fall back (``None``: the caller steps them one by one)."""
    env = make(task="boil").unwrapped
    env.reset(seed=1)
    helper_of(env)
    for _ in range(3):
        env.step_move(env.expert_action())
    engine = env.engine()
    state = env.game_state
    snap = engine.snapshot()
    kids = engine.step_children(state.game, snap, env.candidates[:5])
    assert len(kids) == 5 and [k.moves for k, _ in kids] == [(*state.moves, m) for m in env.candidates[:5]]
    assert all(k.id is None and k.parent is snap for k, _ in kids)  # held as the parent and the move
    assert (engine.loaded, engine.moves) == (state.game, state.moves)
    after, after_seed = engine._read(""), seed_now(env)
    engine.restore(state.game, snap)
    assert (engine._read(""), seed_now(env)) == (after, after_seed)
    gone = Snapshot(engine.helper, -1, state.game, state.moves)
    assert engine.step_children(state.game, gone, env.candidates[:2]) is None and engine.loaded is None
    env.close()


def test_the_compact_valid_list_is_scienceworlds_json_and_narrows_to_the_same_candidates():
    """The helper sends the valid list as compact rows (``validWire``, about half the JSON's length);
    parsed, they are the rows of ScienceWorld's own JSON with the same draws from the global generator, and
    the env's candidates (narrowed once per distinct list, :func:`~.env.narrowed`) are those of the JSON's
    rows; a list the Python side holds already is named, not sent again; a child snapshotted again from its
    parent (``stepTake``, no answer sent) continues as a fork."""
    from s1gym.tasks.scienceworld.candidates import narrow_ids
    from s1gym.tasks.scienceworld.engine import valid_list

    rng = np.random.default_rng(11)
    env = make(task="test-conductivity").unwrapped
    env.reset(seed=0)
    helper = helper_of(env)
    cls = env.engine().jvm.gateway.jvm.s1gym.scienceworld.S1ScienceWorld
    compact = 0
    for _ in range(8):  # states along a walk of moves that do not end the game
        engine = env.engine()
        snap = engine.snapshot()
        wire, wire_seed = str(cls.validWire(engine.server)), seed_now(env)
        engine.restore(engine.loaded, snap)
        json_text, json_seed = str(engine.server.getValidActionObjectCombinationsJSON()), seed_now(env)
        engine.restore(engine.loaded, snap)
        assert valid_list(wire) == valid_list(json_text) and wire_seed == json_seed
        assert len(valid_list(wire)) > 20
        compact += wire.startswith("[") and len(wire) < 0.6 * len(json_text)
        cap = env.max_candidates - (len(env._moves_now) - len(env._move_ids))  # less the prompt's answers
        assert list(env._move_ids) == list(narrow_ids(valid_list(json_text), env._look, env._inventory, cap))
        safe = [c for c in env.candidates if not c.startswith("focus on")]
        env.step_move(safe[int(rng.integers(len(safe)))])
    assert compact == 8
    # a child held as its parent and its move, snapshotted in one call that sends nothing back
    engine = env.engine()
    parent = engine.snapshot()
    move = next(c for c in env.candidates if not c.startswith("focus on"))
    (kid, answer), (_, again) = engine.step_children(env.game_state.game, parent, [move, move])
    assert again.valid_text is answer.valid_text  # the same list again: named by its number, not sent
    assert kid.id is None
    assert helper.restore(engine.server, kid) and kid.id is not None and kid.id > 0
    after, after_seed = engine._read(""), seed_now(env)
    engine.restore(env.game_state.game, parent)
    straight = engine.step(move)
    assert dict(straight) == dict(answer)
    assert (engine._read(""), seed_now(env)) == (after, after_seed)
    engine.loaded = None  # the engine is not at the env's state: the env restores it
    env.close()
