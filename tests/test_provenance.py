"""A score on the games a shipped model was fitted on says so (issue 40): summary.json, s1 run, s1 table."""

from __future__ import annotations

import json

import s1gym
from s1gym.jobs.provenance import fitted_on_played
from s1gym.registration import env_class_or_none
from s1gym.reporting.table import print_rows, table_rows

COOKING = env_class_or_none("s1/CookingWorld-v0")
ALFWORLD = env_class_or_none("s1/ALFWorld-v0")


def test_local_on_the_train_fold_is_its_training_games():
    (notice,) = fitted_on_played(COOKING, {"fold": "train"}, "local")
    assert notice.startswith("Local's shipped model for CookingWorld was fitted on train-fold games")
    assert "not held-out" in notice and "--option fold=test" in notice
    assert fitted_on_played(COOKING, {"fold": "test"}, "local") == []
    assert fitted_on_played(COOKING, {"fold": "dev"}, "local") == []


def test_only_an_agent_that_reads_a_shipped_model_is_flagged():
    assert fitted_on_played(COOKING, {"fold": "train"}, "uniform") == []
    assert fitted_on_played(COOKING, {"fold": "train"}, "local", {"pairs": "mine"}) == []
    # Search's default heuristic is the task's learned progress estimate, fitted with the model
    (notice,) = fitted_on_played(COOKING, {"fold": "train"}, "uniform", {}, [("search", {})])
    assert notice.startswith("Search's learned progress estimate for CookingWorld was fitted on train-fold")
    flat_h = [("search", {"heuristic": None})]  # h_scale * (1 - score): no model
    assert fitted_on_played(COOKING, {"fold": "train"}, "uniform", {}, flat_h) == []
    (both,) = fitted_on_played(COOKING, {"fold": "train"}, "local", {}, [("search", {}), ("lookahead", {})])
    assert both.startswith("Local's shipped model and Search's progress estimate for CookingWorld")
    assert fitted_on_played(env_class_or_none("s1/Blackjack-v0"), {}, "local") == []
    assert fitted_on_played(None, {"fold": "train"}, "local") == []


def test_alfworld_is_flagged_on_the_split_it_was_fitted_on_not_on_the_shipped_scenes():
    (notice,) = fitted_on_played(ALFWORLD, {"split": "valid_seen"}, "local")
    assert notice == ("Local's shipped model for ALFWorld was fitted on the valid_seen games played here: "
                      "the score is on its training games, not held-out ones")
    assert fitted_on_played(ALFWORLD, {"data_dir": "/data/alfworld", "split": None}, "local") == [notice]
    assert fitted_on_played(ALFWORLD, {"split": None, "data_dir": None}, "local") == []
    assert fitted_on_played(ALFWORLD, {"split": "valid_unseen"}, "local") == []


def test_the_job_summary_and_the_table_say_it(tmp_path, capsys):
    """The TWX default fold is train: a default run of a search guided by the shipped estimate is flagged
    in summary.json and under `s1 run`'s / `s1 table`'s table; a test-fold run of the same is not."""
    common = {"wrappers": ["search"], "budget": 20, "episodes": 1, "out": tmp_path, "progress": False}
    default = s1gym.evaluate("CoinCollector", "uniform", job="default", **common)
    held_out = s1gym.evaluate("CoinCollector", "uniform", job="held-out", options={"fold": "test"}, **common)
    assert len(default["fitted_on_played"]) == 1 and "train-fold" in default["fitted_on_played"][0]
    assert held_out["fitted_on_played"] == []
    on_disk = json.loads((tmp_path / "default" / "summary.json").read_text())
    assert on_disk["fitted_on_played"] == default["fitted_on_played"]
    rows = table_rows([tmp_path])
    assert [bool(r["fitted_on_played"]) for r in rows] == [r["options"]["fold"] == "train" for r in rows]
    capsys.readouterr()
    print_rows(rows, "markdown")
    out = capsys.readouterr().out
    assert out.count("note (CoinCollector, uniform+search): Search's learned progress estimate") == 1
    print_rows(rows, "rich")
    assert "train-fold games, the fold these seeds played" in " ".join(capsys.readouterr().out.split())
