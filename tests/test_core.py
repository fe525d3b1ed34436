"""The core types and the packaging promise of DESIGN.md (``s1gym.wrappers`` / ``s1gym.policies``)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import s1gym
from s1gym.core import (
    BASE_CHARSET,
    BasePolicy,
    Candidate,
    Decision,
    Policy,
    Privileged,
    Progress,
    S1Env,
    Situation,
    TooManyCandidatesError,
    Usage,
    charset_for,
)
from s1gym.registration import resolve_id

ROOT = Path(__file__).resolve().parents[1]


class Corridor(S1Env):
    """A walk along a corridor to a seeded goal; tiny, for testing the base class."""

    task_name = "Corridor"
    default_max_candidates = 2
    default_max_steps = 6

    def _new_game(self, seed, options):
        self.pos = 0
        self.goal = int(self.np_random.integers(2, 4))
        return "Walk to the door."

    def _legal_moves(self):
        return ["back", "forward"] if self.pos > 0 else ["forward"]

    def _play(self, move):
        self.pos += 1 if move == "forward" else -1
        return f"You step {move}."

    def _describe(self):
        return f"You are {self.pos} steps in; the door is {self.goal} steps in."

    def _progress(self):
        return self.pos / self.goal, self.pos == self.goal, False

    def _fork_into(self, clone):
        pass

    def expert_action(self):
        return "forward"


def test_usage_adds_up():
    total = Usage.total([Usage(1, 10, 2, 0.5, 0.1), Usage(2, 5, 1, 0.25, 0.2)])
    assert total == Usage(3, 15, 3, 0.75, pytest.approx(0.3))
    assert total.as_dict()["input_tokens"] == 15


def test_decision_validates_and_picks_the_most_likely():
    d = Decision.from_probabilities([0.1, 0.7, 0.2])
    assert d.action == 1 and d.probabilities.dtype == np.float64
    with pytest.raises(ValueError, match="outside"):
        Decision(np.array([0.5, 0.5]), 2)
    with pytest.raises(ValueError, match="non-empty"):
        Decision(np.array([]), 0)


def test_situation_is_immutable_and_helpers_replace():
    s = Situation("t", "obs", (Candidate("a"), Candidate("b", outcome="x", new_actions=("c",))))
    assert s.texts == ("a", "b")
    with pytest.raises(Exception):
        s.observation = "other"  # type: ignore[misc]
    assert s.with_notes(["plan"]).notes == ("plan",)
    assert s.with_candidates([Candidate("z")]).texts == ("z",)


def test_charset_extends_the_base():
    cs = charset_for(["Grüße, ß"])
    assert BASE_CHARSET < cs and {"ü", "ß"} <= cs


def test_base_env_contract_on_a_tiny_task():
    env = Corridor()
    obs, info = env.reset(seed=0)
    assert info["candidates"] == ["forward"]
    assert env.observation_space.contains(obs)
    obs, reward, terminated, truncated, info = env.step(0)
    assert reward == pytest.approx(1 / env.goal) and not terminated
    assert env.history == (("forward", "You step forward."),)
    # the fork continues the RNG exactly where the original is
    fork = env.fork()
    assert fork.np_random.random() == env.np_random.random()
    sit = env.situation()
    assert isinstance(sit.privileged, Privileged)
    assert sit.privileged.expert_action() == "forward"
    assert sit.state_text == sit.observation.rsplit("\n\nMoves: ", 1)[0] and "Moves:" not in sit.state_text


def test_invalid_moves_count_toward_the_step_limit():
    env = Corridor(max_steps=10)
    env.reset(seed=4)
    truncated = False
    for i in range(10):
        *_, terminated, truncated, info = env.step(-1)
        assert info["invalid_action"] and info["steps"] == i + 1 and not terminated
    assert truncated and env.done


def test_game_over_mask_is_all_ones_and_any_index_is_a_no_op():
    env = Corridor()
    env.reset(seed=0)
    while not env.game_over:
        *_, info = env.step(env.index_of("forward"))
    assert info["candidates"] == [] and info["action_mask"].tolist() == [1, 1]
    obs, reward, terminated, truncated, info = env.step(1)
    assert info["invalid_action"] and reward == 0.0 and terminated and "game is over" in obs


class Lights(S1Env):
    """Three fixed switches; a switch already on is not a legal move. Tests fixed action slots."""

    task_name = "Lights"

    def __init__(self, **kw):
        super().__init__(action_slots=("red", "green", "blue"), **kw)

    def _new_game(self, seed, options):
        self.on = frozenset()
        return "Three switches."

    def _legal_moves(self):
        return [m for m in ("blue", "green", "red") if m not in self.on]  # any order: the base sorts by slot

    def _play(self, move):
        self.on = self.on | {move}
        return f"{move} is on."

    def _describe(self):
        return "On: " + (", ".join(sorted(self.on)) or "none")

    def _progress(self):
        return Progress(len(self.on) / 3, won=len(self.on) == 3)

    def _fork_into(self, clone):
        pass


def test_fixed_action_slots_keep_one_meaning_per_index():
    env = Lights()
    obs, info = env.reset(seed=0)
    assert env.action_space.n == 3 and info["candidates"] == ["red", "green", "blue"]
    assert info["action_mask"].tolist() == [1, 1, 1]
    *_, info = env.step(1)  # green
    assert info["candidates"] == ["red", "green", "blue"] and info["action_mask"].tolist() == [1, 0, 1]
    assert env.candidates == ("red", "blue") and env.index_of("blue") == 2
    assert [c.text for c in env.situation().candidates] == ["red", "blue"]
    *_, info = env.step(1)  # green again: masked, a no-op
    assert info["invalid_action"] and "2 (blue)" in env.situation().observation
    with pytest.raises(ValueError, match="not a candidate"):
        env.index_of("green")
    with pytest.raises(ValueError, match="fixed set of 3"):
        Lights(max_candidates=5)


def test_decision_give_up_is_a_typed_field():
    d = Decision.from_probabilities([0.5, 0.5], give_up=True)
    assert d.give_up is True and "give_up" not in d.info
    assert Decision.from_probabilities([1.0]).usage.calls == 1  # user policies count their calls


def test_step_limit_truncates_and_step_before_reset_is_an_error():
    env = Corridor(max_steps=2)
    with pytest.raises(gym.error.ResetNeeded):
        env.step(0)
    env.reset(seed=1)
    env.step(0)
    env.step(0)
    *_, terminated, truncated, _ = env.step(0)
    assert env.won or truncated


def test_bad_constructor_values_are_named():
    with pytest.raises(ValueError, match="max_steps must be a positive integer"):
        Corridor(max_steps=0)
    with pytest.raises(ValueError, match="render_mode"):
        Corridor(render_mode="rgb_array")


def test_too_many_candidates_raises_with_task_and_cap():
    env = Corridor(max_candidates=1)
    env.reset(seed=0)
    with pytest.raises(TooManyCandidatesError, match=r"Corridor.*N=1"):
        env.step(0)  # now "back" and "forward": two moves, cap 1


def test_base_policy_is_a_policy():
    class First(BasePolicy):
        name = "first"

        def decide(self, situation):
            return Decision.from_probabilities(np.eye(len(situation.candidates))[0])

    p = First()
    assert isinstance(p, Policy)
    env = Corridor()
    env.reset(seed=0)
    assert [d.action for d in p.decide_many([env.situation(), env.situation()])] == [0, 0]


def test_resolve_id_accepts_short_names():
    assert resolve_id("cookingworld") == "s1/CookingWorld-v0"
    assert resolve_id("s1/2048-v0") == "s1/2048-v0"
    with pytest.raises(ValueError, match="known tasks"):
        resolve_id("Chess")


def test_every_task_is_registered_without_wrappers():
    for env_id in s1gym.task_ids():
        spec = gym.spec(env_id)
        assert spec.order_enforce is False and spec.disable_env_checker is True
        assert spec.max_episode_steps is None


@pytest.mark.slow
def test_wheel_ships_policies_and_wrappers_as_subpackages(tmp_path):
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("s1gym-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "s1gym/policies/__init__.py" in names
    assert "s1gym/wrappers/__init__.py" in names
    assert not any(n.startswith(("policies/", "wrappers/")) for n in names), "generic top-level packages leaked"
