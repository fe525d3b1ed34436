"""s1/ScienceWorld-v0 on the real simulator (one JVM for the module): options, the seed-to-game map, the
candidate narrowing and the gold map, the expert, forks against a replay."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("scienceworld", reason="the scienceworld extra is not installed")

import s1gym  # noqa: F401
from s1gym.tasks.scienceworld.candidates import gold_candidate, narrow, verb_of
from s1gym.tasks.scienceworld.env import TASKS, ScienceWorldEnv


def make(**options) -> ScienceWorldEnv:
    return gym.make("s1/ScienceWorld-v0", **options)


# ---------------------------------------------------------------------------------------- no JVM
def test_the_thirty_task_types_in_scienceworlds_order():
    assert len(TASKS) == 30 and TASKS[0] == "boil" and TASKS[1] == "melt" and TASKS[-1] == "mendelian-genetics-unknown-plant"
    assert len(set(TASKS)) == 30


@pytest.mark.parametrize(("options", "named"), [
    ({"task": "boiling"}, "unknown task 'boiling'"),
    ({"fold": "validation"}, "fold must be one of"),
    ({"simplifications": "easy,teleport"}, "unknown simplifications \\['teleport'\\]"),
])
def test_bad_options_are_refused_with_the_fix(options, named):
    with pytest.raises(ValueError, match=named):
        ScienceWorldEnv(**options)


def test_the_gold_map_reads_scienceworlds_other_wordings():
    cands = ["look around", "look at substance in metal pot", "look at metal pot", "put down thermometer",
             "use thermometer on substance in metal pot", "use thermometer on metal pot",
             "connect black wire terminal 1 to anode in battery", "wait1"]
    assert gold_candidate("examine substance in metal pot", cands) == "look at substance in metal pot"
    assert gold_candidate("drop thermometer", cands) == "put down thermometer"
    assert gold_candidate("use thermometer in inventory on substance in metal pot", cands) == \
        "use thermometer on substance in metal pot"
    # a connection has no direction; the gold names the battery's anode the other way round
    assert gold_candidate("connect battery anode to black wire terminal 1", cands) == \
        "connect black wire terminal 1 to anode in battery"
    # no-ops under the easy preset (doors start open) and answers to the ambiguity prompt: one tick
    assert gold_candidate("open door to kitchen", cands) == "look around"
    assert gold_candidate("0", cands) == "look around"
    assert gold_candidate("wait1", cands) == "wait1"
    assert gold_candidate("eat banana", cands) is None


def test_narrowing_keeps_moves_on_what_is_in_view_and_in_hand():
    # (text, template id, object ids, type ids); 47 thermometer, 24 cupboard (furniture), 4 container
    valid = [
        ("look around", 3, (), ()), ("inventory", 20, (), ()), ("task", 24, (), ()),
        ("put down thermometer", 22, (1,), (47,)), ("look in cupboard", 5, (2,), (24,)),
        ("look in pot", 5, (3,), (4,)), ("pick up pot", 21, (3,), (4,)),
        ("move thermometer to cupboard", 9, (1, 2), (47, 24)), ("move cupboard to pot", 9, (2, 3), (24, 4)),
        ("move pot to inventory", 9, (3, 0), (4, 1)), ("use thermometer on pot", 13, (1, 3), (47, 4)),
        ("use pot on thermometer", 13, (3, 1), (4, 47)), ("focus on pot", 11, (3,), (4,)),
        ("focus on metal pot", 11, (3,), (4,)),
    ]
    moves = narrow(valid, look="a pot (containing nothing)", inventory="a thermometer")
    assert moves == ["look around", "focus on pot", "pick up pot", "put down thermometer", "look in cupboard",
                     "look in pot", "move thermometer to cupboard",
                     "use thermometer on pot", "wait1", "wait"]
    assert all(verb_of(m) for m in moves)


# ------------------------------------------------------------------------------------ on the JVM
def test_seed_picks_task_and_variation_and_the_game_starts_with_load_alone():
    env = make()
    obs, info = env.reset(seed=31)  # no task: TASKS[31 % 30], the second train variation
    assert info["task"] == TASKS[1] and info["steps"] == 0 and env.history == ()
    assert obs.startswith("Task Description:") and "This room is called" in obs
    assert info["score"] == 0.0 and not env.done
    first = env.engine().folds(TASKS[1], "easy")["train"][1]
    assert info["variation"] == first
    # the game a seed plays, asked as the runner asks after a reset, leaves the live game its engine
    pool = env.unwrapped._pool()
    taken = (pool.takeovers, pool.restores)
    n = len(env.engine().folds(TASKS[1], "easy")["train"])
    assert env.game_of(31) == env.game_of(31 + 30 * n) == f"{TASKS[1]} variation {first}"
    env.step(0)
    assert (pool.takeovers, pool.restores) == taken
    env.close()


def test_the_expert_plays_boil_to_a_win_and_the_next_game_starts_fresh():
    env = make(task="boil")
    env.reset(seed=0)
    rewards = []
    while not env.done:
        move = env.expert_move()
        assert move is not None and move in env.candidates
        rewards.append(env.step_move(move)[1])
    assert env.won and env.score == 1.0 and sum(rewards) == pytest.approx(1.0)
    assert env.steps == 36
    # ScienceWorld's load keeps the finished game's score until a step: the env starts the next game at 0
    _, info = env.reset(seed=1)
    assert info["score"] == 0.0 and not env.done and not info["won"]
    with pytest.raises(RuntimeError, match="left the gold path"):
        env.step_move("wait1")
        env.expert_action()
    env.close()


def test_a_fork_matches_a_replay_of_the_same_moves():
    rng = np.random.default_rng(7)
    env = make(task="find-living-thing")
    env.reset(seed=2)
    moves = []
    for _ in range(4):
        moves.append(env.candidates[int(rng.integers(len(env.candidates)))])
        env.step_move(moves[-1])
        if env.done:
            break
    fork = env.fork()
    walk = ("look around", "wait1", "look around")
    a = [fork.step_move(m)[:2] for m in walk]
    replay = make(task="find-living-thing")
    replay.reset(seed=2)
    for m in moves:
        replay.step_move(m)
    b = [replay.step_move(m)[:2] for m in walk]
    assert a == b
    c = [env.step_move(m)[:2] for m in walk]  # the original, stepped after its fork, goes the same way
    assert c == a
    for e in (env, fork, replay):
        e.close()
