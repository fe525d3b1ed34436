"""The web family's declaration on real pages in Chromium: every web env's task name is a row the family
declares, so the generic layers find the shipped model (``data/local_web.json``), Rethink's patience and no
progress estimate by it; and Local, finding the model that way, decides on a live page as on the recorded
state of tests/test_web_model.py."""

from __future__ import annotations

import gymnasium as gym
import pytest

pytest.importorskip("playwright", reason="the web extra is not installed: pip install 's1gym[web]'")
pytest.importorskip("miniwob", reason="the web extra is not installed: pip install 's1gym[web]'")

import s1gym  # noqa: F401  (registers the ids)
from s1gym import registration


@pytest.fixture(autouse=True)
def no_linger(monkeypatch):
    """The browser closes as soon as its last env does (no reuse between tests)."""
    monkeypatch.setenv("S1GYM_BROWSER_LINGER", "0")


@pytest.mark.parametrize(("env_id", "options", "name"), [
    ("s1/MiniWoB-v0", {}, "MiniWoB click-button"),
    ("s1/MiniWoB-v0", {"task": "login-user"}, "MiniWoB login-user"),
    ("s1/MiniWoB-use-slider-v0", {}, "MiniWoB use-slider"),
    ("s1/Flights-v0", {}, "MiniWoB book-flight"),
])
def test_each_web_envs_task_name_is_declared_with_the_shipped_model(env_id, options, name):
    from s1gym.tasks.web.family import FAMILY
    from s1gym.tasks.web.model import WebModel

    env = gym.make(env_id, **options)
    try:
        assert env.unwrapped.task_name == name
        family, task = registration.task_named(name)
        assert family is FAMILY and task.task_name == name
        assert registration.model_file(name) == FAMILY.data("local_web.json")
        assert isinstance(registration.local_model(name), WebModel)
        assert registration.stall_patience(name) == 4 and registration.progress_estimate(name) is None
    finally:
        env.close()


def test_local_finds_the_model_by_the_live_pages_task_and_decides_as_on_the_recorded_state():
    from s1gym.policies import Local

    env = gym.make("s1/MiniWoB-login-user-v0").unwrapped
    try:
        env.reset(seed=40000)
        situation = env.situation()
        decision = Local(preload=False).decide(situation)
        assert situation.texts[decision.action] == 'type "keli" into textbox "Username"'
        assert decision.probabilities == pytest.approx([0.0001, 0.9191, 0.0014, 0.0001, 0.0091, 0.0701, 0.0001],
                                                       abs=1e-4)
    finally:
        env.close()
