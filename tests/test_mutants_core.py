"""The contract's floor (s1gym/core/) pinned where mutation testing (bench/mutation.py, issue 57) found it loose:
exact observations, infos, rewards and error texts of a small env written here, a fixed-slot env, the planner's
fork stream, Decision/Usage, the positions of an episode file, the option defaults. Each test says what it
catches."""

from __future__ import annotations

import hashlib

import gymnasium as gym
import numpy as np
import pytest

from s1gym.core import Decision, S1Env, Situation, Usage
from s1gym.core.decision import BasePolicy
from s1gym.core.estimates import TokenProgress, intercept_only
from s1gym.core.helpers import action_index, copy_generator
from s1gym.core.lru import LRU
from s1gym.core.position import Position, episode_positions, split_moves
from s1gym.core.progress import Progress, TooManyCandidatesError
from s1gym.core.readouts import init_defaults


class Line(S1Env):
    """Walk forward to the end of a line of ``length`` cells; ``wait`` does nothing."""

    task_name = "line"
    default_max_candidates = 3
    default_max_steps = 6
    option_help = {"length": "cells"}

    def __init__(self, length: int = 2, moves: tuple[str, ...] = ("forward", "wait"), **kwargs):
        super().__init__(**kwargs)
        self.length, self.moves = length, moves

    def _new_game(self, seed, options):
        self.pos, self.seen = 0, (seed, options)
        return "You start."

    def _legal_moves(self):
        return list(self.moves)

    def _play(self, move):
        if move == "forward":
            self.pos += 1
            return f"You step to {self.pos}."
        return "You wait."

    def _describe(self):
        return f"At {self.pos} of {self.length}."

    def _progress(self):
        return Progress(self.pos / self.length, won=self.pos == self.length)

    def _fork_into(self, clone):
        pass


class Dice(Line):
    """Line with chance: each forward step moves a die-roll of 1 or 2 (drawn from its own stream)."""

    chance_events = True

    def _new_game(self, seed, options):
        self.rng = np.random.default_rng(seed)
        return super()._new_game(seed, options)

    def _play(self, move):
        if move == "forward":
            self.pos = min(self.length, self.pos + int(self.rng.integers(1, 3)))
        return "Rolled."

    def _fork_into(self, clone):
        clone.rng = copy_generator(self.rng)

    def _reseed_chance(self, seed):
        self.reseeded = seed
        self.rng = np.random.default_rng(seed)


class Slots(Line):
    """Fixed slots ``left, wait, right``; ``wait`` only is illegal once at the end."""

    task_name = "slots"

    def __init__(self, **kwargs):
        super().__init__(action_slots=("left", "wait", "right"), **kwargs)

    def _legal_moves(self):
        return ["right", "left"] if self.pos < self.length else []

    def _play(self, move):
        self.pos += 1 if move == "right" else 0
        return f"You go {move}."


def test_a_whole_episode_reads_exactly():
    # catches: the initial bookkeeping (steps, score, won, lost, over, feedback, history, visited) set to other
    # values, the reward as score + before, steps += 2, the Moves paragraph's joiner, the info's keys and
    # values, reset passing no seed/options to the game, invalid=True on a good step
    env = Line(length=2)
    assert (env.steps, env.score, env.won, env.lost, env.game_over, env.history, env.candidates) == (
        0, 0.0, False, False, False, (), ())
    assert env._feedback == "" and env._visited == () and env._key_now is None and env._episode_seed is None
    assert env.render() == ""
    obs, info = env.reset(seed=7, options={"x": 1})
    assert env.seen == (7, {"x": 1}) and env._episode_seed == 7
    assert obs == "You start.\n\nAt 0 of 2.\n\nMoves: forward, wait"
    assert info == {"candidates": ["forward", "wait"], "action_mask": info["action_mask"], "score": 0.0,
                    "won": False, "lost": False, "game_over": False, "invalid_action": False, "steps": 0}
    assert info["action_mask"].dtype == np.int8 and info["action_mask"].tolist() == [1, 1, 0]
    assert env.state_key() == "At 0 of 2.\n#forward|wait"
    assert env.state_text == "You start.\n\nAt 0 of 2."
    env.situation()  # the state's key is recorded as visited once the step leaves it
    obs, reward, term, trunc, info = env.step(0)
    assert (obs, reward, term, trunc) == ("You step to 1.\n\nAt 1 of 2.\n\nMoves: forward, wait", 0.5, False, False)
    assert (info["steps"], info["score"], info["invalid_action"]) == (1, 0.5, False)
    assert env._visited == ("At 0 of 2.\n#forward|wait",) and env._key_now is None
    env.step(np.int64(1))
    obs, reward, term, trunc, info = env.step(0)
    assert (obs, reward, term, trunc) == ("You step to 2.\n\nAt 2 of 2.", 0.5, True, False)
    assert (info["won"], info["game_over"], info["steps"], info["candidates"]) == (True, True, 3, [])
    assert env.history == (("forward", "You step to 1."), ("wait", "You wait."), ("forward", "You step to 2."))
    assert env.action_masks().tolist() == [1, 1, 1] and env.action_masks().dtype == np.int8
    assert env.render() == "You step to 2.\n\nAt 2 of 2."


def test_rendering_in_human_mode_prints(capsys):
    # catches: render's mode test inverted, printing nothing
    env = Line(render_mode="human")
    env.reset(seed=0)
    assert env.render() is None
    assert capsys.readouterr().out == "You start.\n\nAt 0 of 2.\n\nMoves: forward, wait\n"
    assert Line(render_mode="ansi").render() == ""


def test_invalid_moves_say_why_exactly():
    # catches: every reason's text, the range's bound, the count toward max_steps
    env = Line(length=2, max_steps=4)
    with pytest.raises(gym.error.ResetNeeded, match=r"^line: call env.reset\(\) before env.step\(\)$"):
        env.step(0)
    env.reset(seed=0)
    obs, reward, term, trunc, info = env.step(2)
    assert obs.startswith("Invalid move 2: valid moves are 0..1. Nothing happened.\n\n")
    assert (reward, info["invalid_action"], info["steps"]) == (0.0, True, 1)
    assert env.step("0")[4]["invalid_action"] and env.step(None)[4]["invalid_action"]
    assert env.step(-1)[0].startswith("Invalid move -1")
    assert env.step(1)[3] is True  # four steps: truncated
    empty = Line(moves=())
    empty.reset(seed=0)
    assert empty.step(0)[0] == "Invalid move 0: there are no moves. Nothing happened.\n\nAt 0 of 2."
    done = Line(length=1)
    done.reset(seed=0)
    done.step(0)
    obs, reward, term, trunc, info = done.step(5)
    assert obs == "Invalid move 5: the game is over. Nothing happened.\n\nAt 1 of 1."
    assert (term, info["steps"]) == (True, 1)  # no step counted once the game is over


def test_index_of_names_the_candidates_shown():
    # catches: the listing's joiner, its cut at 12, the "... (N in all)" tail
    env = Line(moves=tuple(f"m{i}" for i in range(13)), max_candidates=13)
    env.reset(seed=0)
    assert env.index_of("m12") == 12
    shown = ", ".join(repr(f"m{i}") for i in range(12))
    with pytest.raises(ValueError) as err:
        env.index_of("fly")
    assert str(err.value) == f"line: 'fly' is not a candidate move now; candidates are [{shown}, ... (13 in all)]"
    twelve = Line(moves=tuple(f"m{i}" for i in range(12)), max_candidates=12)
    twelve.reset(seed=0)
    with pytest.raises(ValueError) as err:
        twelve.index_of("fly")
    assert str(err.value) == f"line: 'fly' is not a candidate move now; candidates are [{shown}]"
    with pytest.raises(TooManyCandidatesError) as err:
        Line(moves=("a", "b", "c", "d")).reset(seed=0)
    assert (err.value.cap, err.value.count) == (3, 4)


def test_constructor_checks_and_spaces():
    # catches: the slots' checks and their messages, the option name in positive_int, render_mode dropped,
    # the Text space's min_length
    with pytest.raises(ValueError, match=r"^line: action_slots must be distinct and non-empty$"):
        Line(action_slots=("a", "a"))
    with pytest.raises(ValueError, match=r"^line: action_slots must be distinct and non-empty$"):
        Line(action_slots=())
    with pytest.raises(ValueError) as err:
        Line(action_slots=("a", "b"), max_candidates=3)
    assert str(err.value) == "line: the moves are a fixed set of 2 (a, b); max_candidates cannot change it (got 3)"
    with pytest.raises(ValueError, match=r"^max_candidates must be a positive integer, got 0$"):
        Line(max_candidates=0)
    env = Line(render_mode="ansi")
    assert env.render_mode == "ansi" and env.observation_space.min_length == 0
    assert env.observation_space.contains("")


def test_fixed_slots_keep_their_indices():
    # catches: the slot masks and messages, _slots_now not set, the slot-order sort
    env = Slots(length=1)
    assert env._slots_now == ("left", "wait", "right") and env.max_candidates == 3
    obs, info = env.reset(seed=0)
    assert info["candidates"] == ["left", "wait", "right"] and env.candidates == ("left", "right")
    assert obs.endswith("Moves: left, right") and info["action_mask"].tolist() == [1, 0, 1]
    assert env.index_of("right") == 2
    obs, reward, *_ = env.step(1)
    assert obs.startswith("Invalid move 1: legal moves now are 0 (left), 2 (right). Nothing happened.")
    assert env.step(3)[4]["invalid_action"]
    assert env.step(2)[1] == 1.0


class Worded(Slots):
    """Slots whose wording follows the state (the quiz's "first listed answer")."""

    words = ("left", "wait", "right")

    def _slot_moves(self):
        return self.words

    def _legal_moves(self):
        return [self.words[0], self.words[-1]]


def test_slot_wording_may_change_but_not_its_count():
    # catches: the rewording test and its checks, the new slot index, the stray-move check and its message
    env = Worded()
    env.reset(seed=0)
    env.words = ("west", "stay", "east")
    env._refresh()
    assert env._slots_now == ("west", "stay", "east") and env._slot_index == {"west": 0, "stay": 1, "east": 2}
    assert env.candidates == ("west", "east") and env.index_of("east") == 2
    env.words = ["west", "stay", "east"]  # equal, not the same object: nothing to redo
    env._refresh()
    assert env._slots_now == ("west", "stay", "east")
    env.words = ("a", "a", "b")
    with pytest.raises(RuntimeError) as err:
        env._refresh()
    assert str(err.value) == "slots: _slot_moves() must give 3 distinct moves, got ('a', 'a', 'b')"
    env.words = ("a", "b")
    with pytest.raises(RuntimeError, match="must give 3 distinct moves"):
        env._refresh()
    env.words = ("a", "b", "c")
    env._legal_moves = lambda: ["a", "z"]
    with pytest.raises(RuntimeError) as err:
        env._refresh()
    assert str(err.value) == "slots: legal moves ['z'] are not among its action slots"


def test_the_situation_holds_what_a_policy_may_know():
    # catches: any Situation field dropped or left at None
    env = Line()
    env.reset(seed=0)
    env.step(1)
    s = env.situation(notes=["n"])
    assert (s.task, s.observation, s.texts, s.history, s.notes, s.score) == (
        "line", "You wait.\n\nAt 0 of 2.\n\nMoves: forward, wait", ("forward", "wait"), (("wait", "You wait."),),
        ("n",), 0.0)
    assert s.state_key == "At 0 of 2.\n#forward|wait" == env._key_now
    assert s.state_text == "You wait.\n\nAt 0 of 2." and s.visited == ()
    env.step(0)
    assert env.situation().visited == ("At 0 of 2.\n#forward|wait",)
    bare = Situation(task="t", observation="o", candidates=())
    assert bare.state_text == "o"


def test_a_planning_fork_draws_a_fixed_stream_of_its_own():
    # catches: the fork counter (+= 2, -= 1, = 1), the key, the hash and its byte order, no reseed
    env = Dice(length=50)
    env.reset(seed=3)
    env.step(0)
    seeds = [env.planning_fork().reseeded for _ in range(3)]
    for n, seed in enumerate(seeds, start=1):
        key = f"3/1/{n}/{env.state_key()}"
        assert seed == int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little")
    assert env._planning_forks == 3
    assert not hasattr(Line().__class__, "reseeded")
    plain = Line()
    plain.reset(seed=0)
    assert not hasattr(plain.planning_fork(), "reseeded") and plain._planning_forks == 0


def test_fork_step_and_fork_steps_leave_the_env_alone():
    # catches: keep's default (a fork_step override sees it), fork_steps not passing keep
    seen = []

    class Keeps(Line):
        def fork_step(self, move, keep=False):
            seen.append(keep)
            return super().fork_step(move, keep)

    env = Keeps()
    env.reset(seed=0)
    child, result = env.fork_step("forward")
    assert result[1] == 0.5 and env.steps == 0 and child.steps == 1
    assert [r[0] for _, r in env.fork_steps(["forward", "wait"], keep=True)] == [
        "You step to 1.\n\nAt 1 of 2.\n\nMoves: forward, wait", "You wait.\n\nAt 0 of 2.\n\nMoves: forward, wait"]
    list(env.fork_steps(["wait"]))
    assert seen == [False, True, True, False]
    with pytest.raises(NotImplementedError, match=r"^line declares chance_events but no _reseed_chance\(seed\)$"):
        env._reseed_chance(1)


def test_action_index_takes_ints_and_integer_scalars_only():
    # catches: each test of action_index
    assert action_index(3) == 3 and type(action_index(np.int64(3))) is int and action_index(np.int8(2)) == 2
    assert action_index(np.array(4)) == 4
    assert action_index(True) is None or action_index(True) == 1  # a bool is an integer scalar to NumPy
    for bad in (2.0, np.float64(1), "1", None, [1], np.array([1]), object()):
        assert action_index(bad) is None, bad


def test_copy_generator_continues_the_stream():
    # catches: another seed for the new bit generator (the state is copied over it either way)
    rng = np.random.default_rng(5)
    rng.random(3)
    copy = copy_generator(rng)
    assert copy.random(4).tolist() == rng.random(4).tolist()
    assert type(copy.bit_generator) is type(rng.bit_generator)


def test_decision_and_usage_exactly():
    # catches: the probabilities kept as given (ints, lists), action and give_up not normalised, the range
    # message, Usage.as_dict's keys, from_probabilities' argmax and action
    d = Decision([1, 3], np.int64(1), give_up=1)
    assert d.probabilities.dtype == np.float64 and d.probabilities.tolist() == [1.0, 3.0]
    assert type(d.action) is int and d.action == 1 and d.give_up is True
    with pytest.raises(ValueError) as err:
        Decision([0.5, 0.5], 2)
    assert str(err.value) == "Decision.action 2 is outside 0..1"
    f = Decision.from_probabilities([1, 2, 2])
    assert f.action == 1 and f.probabilities.dtype == np.float64 and f.usage == Usage(calls=1)
    assert Decision.from_probabilities([0.9, 0.1], action=1).action == 1
    assert Decision.from_probabilities([0.9, 0.1], action=0).action == 0
    u = Usage(1, 2, 3, 0.5, 0.25)
    assert u.as_dict() == {"calls": 1, "input_tokens": 2, "output_tokens": 3, "cost_usd": 0.5, "latency_s": 0.25}
    assert repr(BasePolicy()) == "BasePolicy(name='policy')"


def test_positions_of_an_episode_file():
    # catches: split_moves (rpartition, the prefix, a lone Moves paragraph), the positions' fields, the final
    # position, feedback from the next observation's new paragraphs in files of format 1
    assert split_moves("A.\n\nB.\n\nMoves: x, y") == "A.\n\nB."
    assert split_moves("Moves: x") == "" and split_moves("A.\n\nB.") == "A.\n\nB."
    assert split_moves("Moves: x\n\nA.") == "Moves: x\n\nA."
    episode = {
        "ticks": [
            {"observation": "Hi.\n\nRoom 1.\n\nMoves: go, wait", "candidates": ["go", "wait"], "move": "go"},
            {"observation": "You go.\n\nRoom 2.\n\nMoves: back", "candidates": ["back"], "move": "back",
             "feedback": "Said."},
        ],
        "final": {"observation": "You are back.\n\nRoom 1."},
    }
    assert episode_positions(episode) == [
        Position(0, "Hi.\n\nRoom 1.", ("go", "wait"), "go", "You go.\n\nRoom 2."),
        Position(1, "You go.\n\nRoom 2.", ("back",), "back", "Said."),
        Position(2, "You are back.\n\nRoom 1.", (), None, None),
    ]
    no_final = {"ticks": episode["ticks"][:1] + [dict(episode["ticks"][0], feedback=None)]}
    got = episode_positions(no_final)
    assert [p.feedback for p in got] == ["", ""] and len(got) == 2  # the last tick has no next text
    assert episode_positions({"ticks": None, "final": None}) == []


def test_option_defaults_along_the_hierarchy():
    # catches: init_defaults' walk (order, base class, the left-out arguments) and resolve_options' filter
    assert init_defaults(Line, S1Env) == {"length": 2, "moves": ("forward", "wait"), "max_candidates": None,
                                          "max_steps": None}
    assert init_defaults(Line, Line) == {"length": 2, "moves": ("forward", "wait")}
    assert list(init_defaults(Line, S1Env)) == ["max_candidates", "max_steps", "length", "moves"]
    assert Line.resolve_options({"length": 4}) == {"length": 4}
    assert Line.resolve_options({}) == {"length": 2}

    class Loose(Line):
        option_help = {}

        def __init__(self, width: int = 3, **kw):
            super().__init__(**kw)

    assert Loose.resolve_options({"x": 1}) == {"max_candidates": None, "max_steps": None, "length": 2,
                                               "moves": ("forward", "wait"), "width": 3, "x": 1}


def test_the_expert_move_is_a_candidate_or_none():
    # catches: expert_move's filter and its message
    env = Line()
    env.reset(seed=0)
    with pytest.raises(NotImplementedError, match="^line has no expert; use another policy than Rule$"):
        env.expert_action()
    assert env.expert_move() is None
    env.expert_action = lambda: "forward"
    assert env.expert_move() == "forward"
    env.expert_action = lambda: "fly"
    assert env.expert_move() is None


def test_token_progress_and_lru_counters():
    # catches: the intercept's default and token, hits/misses set to 1 instead of counted
    s = Situation(task="t", observation="o", candidates=())
    assert intercept_only(s) == ["*"]
    assert TokenProgress({"a": 2.0}, lambda _: ["a", "*"])(s) == 2.0
    assert TokenProgress({"*": 1.5, "a": 2.0}, lambda _: ["a", "*"])(s) == 3.5
    lru = LRU(2)
    lru.put("a", 1)
    for _ in range(3):
        assert lru.get("a") == 1 and lru.get("b") is None
    assert (lru.hits, lru.misses) == (3, 3)


class Silent(Line):
    """No feedback and no description: the observation is the Moves paragraph alone; loses at -1."""

    def _new_game(self, seed, options):
        super()._new_game(seed, options)
        return ""

    def _describe(self):
        return ""

    def _play(self, move):
        self.pos += -1 if move == "wait" else 1
        return ""

    def _progress(self):
        return Progress(max(self.pos, 0) / self.length, won=self.pos == self.length, lost=self.pos < 0)


def test_a_bare_observation_and_a_lost_game():
    # catches: the Moves paragraph prefixed by a blank line when there is no state text; `lost` dropped
    env = Silent()
    obs, info = env.reset(seed=1)
    assert obs == "Moves: forward, wait"
    obs, reward, term, trunc, info = env.step(1)
    assert (obs, reward, term, info["lost"], info["won"], env.lost) == ("", 0.0, True, True, False, True)


def test_reset_seeds_the_envs_own_generator_and_the_situation_has_the_score():
    # catches: super().reset(seed=None) (the env's np_random not seeded by the episode's seed), the
    # situation's score left at its default
    env = Line()
    env.reset(seed=3)
    assert env.np_random.random() == gym.utils.seeding.np_random(3)[0].random()
    env.step(0)
    assert env.situation().score == 0.5


def test_action_index_keeps_a_python_int_as_is():
    # catches: Python ints sent through NumPy (an int beyond int64 would be no index at all)
    assert action_index(2**70) == 2**70


def test_a_last_tick_without_feedback_reads_it_from_the_final_observation():
    # catches: the next text looked for one place too far
    episode = {"ticks": [{"observation": "Room 1.\n\nMoves: go", "candidates": ["go"], "move": "go"}],
               "final": {"observation": "You go.\n\nRoom 2."}}
    assert episode_positions(episode)[0].feedback == "You go.\n\nRoom 2."


def test_an_lru_pickles_with_its_entries_and_a_fresh_lock():
    # catches: the lock pickled (it cannot be) or not made again, the entries or counters lost
    import pickle

    lru = LRU(2)
    lru.put("a", 1)
    lru.get("a")
    lru.get("b")
    back = pickle.loads(pickle.dumps(lru))
    assert (len(back), back.hits, back.misses, back.capacity) == (1, 1, 1, 2)
    assert back.get("a") == 1 and back._lock is not lru._lock
    back.put("b", 2)
    back.put("c", 3)
    assert "a" not in back and "c" in back and len(lru) == 1
