"""A sample is what it says (issue 57): a job whose seeds replay games of a finite list says so before it
starts, and its summary and table count the distinct games and give the interval over them."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import s1gym  # noqa: F401
from s1gym import jobs
from s1gym.reporting.table import COLUMNS, row_cells, table_rows
from s1gym.runner.spec import evaluate
from s1gym.stats import bootstrap_ci


def test_a_job_over_a_finite_list_of_games_counts_and_intervals_by_game(tmp_path):
    with pytest.warns(UserWarning, match=r"s1/Millionaire-v0: the 7 seeds 0\.\.6 play 3 distinct games: 4 seeds "
                                         r"replay a game already in this job \(seed 3 plays ladder 0 of 3, as seed 0"):
        summary = evaluate("Millionaire", "random", episodes=7, seed=0, options={"ladders": 3}, out=tmp_path, job="j")
    trials = {jobs.seed_of(t): t for t in jobs.load_trials(tmp_path / "j")}
    games = {s: jobs.trial_metadata(t)["game"] for s, t in trials.items()}
    assert games == {s: f"ladder {s % 3} of 3" for s in range(7)}
    rewards = {s: jobs.trial_reward(t) for s, t in trials.items()}
    per_game = [sum(rewards[s] for s in range(g, 7, 3)) / len(range(g, 7, 3)) for g in range(3)]
    assert (summary["distinct_games"], summary["repeated_episodes"]) == (3, 4)
    assert summary["games_mean_score"] == pytest.approx(sum(per_game) / 3)
    assert summary["games_ci95"] == pytest.approx(list(bootstrap_ci(per_game)))
    assert json.loads((tmp_path / "j" / "summary.json").read_text())["games_ci95"] == summary["games_ci95"]
    (row,) = table_rows([tmp_path])
    cells = dict(zip(COLUMNS, row_cells(row), strict=True))
    lo, hi = summary["games_ci95"]
    assert cells["episodes"] == "7 (3 games)"
    assert cells["score [95% CI]"] == f"{summary['games_mean_score']:.3f} [{lo:.3f}, {hi:.3f}]"


def test_a_job_of_new_games_says_nothing_and_its_intervals_agree(tmp_path, recwarn):
    summary = evaluate("Millionaire", "random", episodes=4, seed=0, out=tmp_path, job="j")
    assert not [w for w in recwarn if "distinct games" in str(w.message)]
    assert (summary["distinct_games"], summary["repeated_episodes"]) == (4, 0)
    assert summary["games_ci95"] == summary["ci95"] and summary["games_mean_score"] == summary["mean_score"]
    (row,) = table_rows([tmp_path])
    assert dict(zip(COLUMNS, row_cells(row), strict=True))["episodes"] == "4"


def test_twx_seeds_a_fold_apart_play_the_same_game():
    env = gym.make("s1/CookingWorld-v0", fold="test").unwrapped
    try:
        n = int(env.game_of(0).split(" of ")[1])
        assert env.game_of(0) == env.game_of(n) == f"test game 0 of {n}" != env.game_of(1)
        first = env.reset(seed=0)[0]
        assert env.reset(seed=n)[0] == first != env.reset(seed=1)[0]
    finally:
        env.close()
