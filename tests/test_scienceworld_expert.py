"""The ScienceWorld expert after the player leaves the gold path (issue 52): it replans on forks from the
rest of the gold path and plays a plan checked to win, or says it is lost; asking it never moves the game."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("scienceworld", reason="the scienceworld extra is not installed")

import s1gym  # noqa: F401
from s1gym.tasks.scienceworld.env import ScienceWorldEnv

GOLD = ("open door to kitchen", "go to kitchen", "look around", "focus on cupboard", "move cupboard to red box")


def kitchen() -> ScienceWorldEnv:
    """find-non-living-thing, train variation index 0, three gold moves in: the player stands in the kitchen."""
    env = gym.make("s1/ScienceWorld-v0", task="find-non-living-thing").unwrapped
    env.reset(seed=0)
    assert env.gold_path() == GOLD
    for _ in range(3):
        env.step_move(env.expert_action())
    assert env.game_state.moves == ("wait1", "go to kitchen", "look around")
    return env


def plain(value):
    """``value`` with its arrays as lists (a step's info holds the action mask), to compare with ``==``."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [plain(v) for v in value]
    return value


def play_expert(env: ScienceWorldEnv) -> list[str]:
    played = []
    while not env.done:
        played.append(env.expert_action())
        env.step_move(played[-1])
    return played


def test_after_leaving_the_room_the_expert_goes_back_and_wins():
    env = kitchen()
    env.step_move("teleport to art studio")  # off the gold path, in a room the gold path never visits
    assert env.expert_action() == "teleport to kitchen"
    assert (env.replans, env.replan_offset, env.replan_steps) == (1, "back", 3)
    assert play_expert(env) == ["teleport to kitchen", "focus on cupboard", "move cupboard to red box"]
    assert env.won and env.score == 1.0 and env.steps == 7
    assert (env.replans, env.replan_steps) == (1, 3)  # following the checked plan costs no more forks
    env.close()


def test_after_a_harmless_move_the_expert_takes_up_the_gold_path_and_rule_plays_it():
    env = kitchen()
    env.step_move("move thermometer to sink")
    assert env.rule_action() == env.expert_action() == "focus on cupboard"
    assert (env.replans, env.replan_offset) == (1, "+0")
    assert play_expert(env) == ["focus on cupboard", "move cupboard to red box"]
    assert env.won and env.steps == 6
    env.close()


def test_after_a_stray_connection_the_expert_disconnects_it_and_wins():
    env = gym.make("s1/ScienceWorld-v0", task="power-component").unwrapped
    env.reset(seed=1)
    for _ in range(5):  # in the workshop, before the gold path's focus and wiring
        env.step_move(env.expert_action())
    env.step_move("connect orange to red wire terminal 2")  # the red wire's end the gold path wires later
    assert env.expert_action() == "disconnect red wire"
    assert env.replan_offset == "undo"
    played = play_expert(env)
    assert played[:2] == ["disconnect red wire", "focus on red light bulb"]
    assert env.won and env.steps == 6 + len(played)
    env.close()


def test_where_no_rest_of_the_gold_path_wins_the_expert_is_lost_and_rule_waits():
    env = kitchen()
    env.step_move("focus on apple")  # the task's focus spent on another thing: the gold path's cannot win
    assert not env.done
    with pytest.raises(RuntimeError, match="the expert is lost"):
        env.expert_action()
    assert env.replan_offset is None
    spent = (env.replans, env.replan_steps)
    assert spent[0] == 1 and spent[1] > 0
    assert env.expert_move() is None and env.rule_action() == "wait1"
    env.step_move("wait1")  # lost here and at every state after it: no more forks spent
    assert env.rule_action() == "wait1"
    assert (env.replans, env.replan_steps) == spent
    env.close()


def test_asking_the_expert_leaves_the_game_as_it_was():
    env = kitchen()
    env.step_move("teleport to art studio")
    seed_of = env.engine().jvm.gateway.jvm.s1gym.scienceworld.S1ScienceWorld.globalSeed
    before = plain((env._observation(), env._info(False), env.candidates, env.history, int(seed_of())))
    assert env.expert_action() == "teleport to kitchen"  # three fork steps in the JVM's one engine
    assert plain((env._observation(), env._info(False), env.candidates, env.history, int(seed_of()))) == before
    # the game goes on exactly as a game that never asked: the same moves replayed on a fresh env
    replay = gym.make("s1/ScienceWorld-v0", task="find-non-living-thing").unwrapped
    replay.reset(seed=0)
    for move in env.game_state.moves:
        replay.step_move(move)
    assert replay._observation() == env._observation()
    assert plain(env.step_move("look around")) == plain(replay.step_move("look around"))
    assert plain(env.step_move("focus on table")) == plain(replay.step_move("focus on table"))
    env.close()
    replay.close()
