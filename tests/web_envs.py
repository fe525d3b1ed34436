"""Helpers the web test files share (test_web_pages.py, test_web_forks.py, test_web_browser.py): make a
MiniWoB env, play an episode (or its first moves) by the page's scripted rule. Importing it skips the
importing test file where the web extra is not installed (pytest.importorskip raises a module-level skip)."""

from __future__ import annotations

import gymnasium as gym
import pytest

pytest.importorskip("playwright", reason="the web extra is not installed: pip install 's1gym[web]'")
pytest.importorskip("miniwob", reason="the web extra is not installed: pip install 's1gym[web]'")

from s1gym.tasks.web.env import MiniWoBEnv


def make(task: str = "click-button", **kw) -> MiniWoBEnv:
    return gym.make("s1/MiniWoB-v0", task=task, **kw)


def play_rule_moves(env: MiniWoBEnv, seed: int, moves: int) -> MiniWoBEnv:
    """Reset to ``seed`` and play the first ``moves`` moves of the page's scripted rule: a state mid-episode."""
    env.reset(seed=seed)
    for _ in range(moves):
        env.step_move(env.rule_action())
    return env


def play_rule(env: MiniWoBEnv, seed: int) -> MiniWoBEnv:
    env.reset(seed=seed)
    while not env.done:
        env.step_move(env.rule_action())
    return env
