"""Honest chance: the contract's fork() replays the real future exactly, but the fork a planner gets
(``Situation.fork``, ``env.planning_fork()``) draws the game's future chance events from a fresh stream, so
Search and Lookahead can never read the tile the real game will spawn next (2048)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

import s1gym  # noqa: F401  (registers the s1/ envs)
from s1gym.wrappers import Lookahead
from s1gym.policies import Uniform

SEEDS = range(40)


def next_boards(seed: int) -> tuple[bytes, bytes, bytes]:
    """The board after the same first move in the real game, an exact fork and a planner's fork."""
    env = gym.make("s1/2048-v0")
    env.reset(seed=seed)
    exact, planning = env.fork(), env.situation().fork()
    move = env.candidates[0]
    boards = []
    for e in (env, exact, planning):
        e.step_move(move)
        boards.append(e.unwrapped.board.tobytes())
    return tuple(boards)


def test_an_exact_fork_knows_the_next_spawn_and_a_planners_fork_does_not():
    same_exact = same_planning = 0
    for seed in SEEDS:
        real, exact, planning = next_boards(seed)
        same_exact += exact == real
        same_planning += planning == real
    assert same_exact == len(SEEDS)  # the contract: exact, RNG included
    # a fresh stream picks the spawn's cell among ~14 empty ones and its value (2 or 4): it matches the real
    # one by chance only (expected ~3 of 40 on these openings), never systematically
    assert same_planning <= 10, same_planning


def test_planning_forks_are_reproducible_and_each_draws_its_own_stream():
    def spawns(seed: int) -> list[bytes]:
        env = gym.make("s1/2048-v0")
        env.reset(seed=seed)
        out = []
        for _ in range(6):  # six planning forks of the same state
            fork = env.situation().fork()
            fork.step_move(env.candidates[0])
            out.append(fork.unwrapped.board.tobytes())
        return out

    first, again = spawns(7), spawns(7)
    assert first == again  # the same run plans the same way every time
    assert len(set(first)) > 1  # but forks do not all share one future


def test_the_real_game_is_untouched_by_planning_and_plays_as_without_it():
    played, planned = gym.make("s1/2048-v0"), gym.make("s1/2048-v0")
    played.reset(seed=11)
    planned.reset(seed=11)
    lookahead = Lookahead(Uniform())
    for _ in range(30):
        lookahead.decide(planned.situation())  # forks and steps every candidate
        move = planned.candidates[0]
        a, b = played.step_move(move), planned.step_move(move)
        assert a[0] == b[0] and a[1:4] == b[1:4]
    assert np.array_equal(played.unwrapped.board, planned.unwrapped.board)


def test_a_game_without_chance_gets_exact_planning_forks():
    env = gym.make("s1/CookingWorld-v0", size="small")
    env.reset(seed=3)
    fork = env.situation().fork()
    move = env.candidates[0]
    assert fork.step_move(move)[0] == env.fork().step_move(move)[0]
    env.close()


# ------------------------------------------------------------------ answers a planner's fork does not play
ANSWER_GRAPH = {"start": [("focus on rock", "lose"), ("focus on fox", "win"), ("go out", "out")],
                "out": [("go in", "start")]}


def test_a_planning_fork_ends_at_an_answer_move_without_playing_it():
    from toy_tasks import make

    from s1gym.core.env import HIDDEN_OUTCOME

    env = make(ANSWER_GRAPH, answers=("focus on",))
    planning = env.situation().fork()
    obs, reward, terminated, truncated, info = planning.step_move("focus on fox")
    assert planning.outcome_hidden and planning.played == []  # the game never saw the move
    assert (reward, terminated, truncated, info["won"], info["lost"], info["game_over"]) == (0.0, True, False,
                                                                                             False, False, True)
    assert info["candidates"] == [] and info["score"] == 0.0 and info["steps"] == 1
    assert obs == HIDDEN_OUTCOME.format(move="focus on fox") + "\n\nYou are at start."
    # every other move plays as on the real game; an answer is played by an exact fork, a fork told to reveal
    # answers (the wrappers' allow_oracle) and the real game
    assert env.situation().fork().step_move("go out")[4]["candidates"] == ["go in"]
    assert env.fork().step_move("focus on fox")[4]["won"]
    oracle = env.situation().fork()
    oracle.reveal_answers()
    assert oracle.step_move("focus on rock")[4]["lost"] and not oracle.outcome_hidden
    assert not env.done and env.steps == 0 and env.step_move("focus on fox")[4]["won"]
    # forks of a planning fork (Search's nodes) hide answers too; a task without answer moves hides nothing
    env = make(ANSWER_GRAPH, answers=("focus on",))
    assert env.situation().fork().fork().step_move("focus on rock")[4]["lost"] is False
    assert make(ANSWER_GRAPH).situation().fork().step_move("focus on rock")[4]["lost"]
