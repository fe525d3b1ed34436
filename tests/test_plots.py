"""Pictures: solve rate against the call budget and the score distribution per arm, from real job
folders (``s1gym.reporting.plots``, ``s1 table --plot``, ``s1 run --plot``) and from search-benchmark lines
(bench/plot_search.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from s1gym.reporting import drawing, plots
from s1gym.runner.spec import evaluate
from s1gym.stats import bootstrap_ci
from s1gym.ui.cli import main, table_rows

TASK = "test_runner:tinytest/Counter-v0"
ROOT = Path(__file__).resolve().parents[1]
#: Search with a cap of 1 call a game: it wins only what one call solves, its curve ends at 1 below 100 %
SEARCH = {"wrappers": ["search"], "budget": 1, "wrapper_options": {"episode_budget": 1}}
SEARCH_LABEL = "uniform + search(budget=1 episode_budget=1)"


@pytest.fixture(scope="module")
def jobs_dir(tmp_path_factory) -> Path:
    """Two tasks: Counter with three arms (uniform, random, uniform in a capped Search), Blackjack two."""
    out = tmp_path_factory.mktemp("jobs")
    evaluate(TASK, "uniform", episodes=10, out=out, job="counter-uniform")
    evaluate(TASK, "random", episodes=10, out=out, job="counter-random")
    evaluate(TASK, "uniform", episodes=10, out=out, job="counter-search", **SEARCH)
    evaluate("Blackjack", "random", episodes=16, out=out, job="bj-random")
    evaluate("Blackjack", "uniform", episodes=16, out=out, job="bj-uniform")
    return out


@pytest.fixture(scope="module")
def figures(jobs_dir, tmp_path_factory) -> list[plots.TaskFigure]:
    return plots.plot_jobs([jobs_dir], tmp_path_factory.mktemp("pics") / "table.png")


def trials_of(job: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(job.glob("*/result.json"))]


def assert_png(path: Path, n_arms: int) -> np.ndarray:
    """The file is a PNG of the documented size with drawn content; returns its RGB pixels."""
    with Image.open(path) as im:
        im.verify()  # a truncated or corrupt file raises here
    with Image.open(path) as im:
        assert im.format == "PNG"
        width, height = plots.figure_size(n_arms)
        assert im.size == (round(width * plots.DPI), round(height * plots.DPI))
        pixels = np.asarray(im.convert("RGB"))
    assert len(np.unique(pixels.reshape(-1, 3), axis=0)) > 50  # not a blank canvas
    return pixels


def has_color(pixels: np.ndarray, hex_color: str, at_least: int = 100) -> bool:
    rgb = np.array([int(hex_color[i : i + 2], 16) for i in (1, 3, 5)])
    return int((np.abs(pixels.astype(int) - rgb).sum(axis=2) < 20).sum()) >= at_least


def test_solve_curve_steps_at_the_winning_call_counts():
    c = plots.solve_curve([0, 3, 5, 7, 3], [True, True, False, True, True], cap=10, label="x")
    assert c.budgets.tolist() == [1, 3, 7, 10] and c.solve_rate.tolist() == [0.2, 0.6, 0.8, 0.8]
    assert (c.games, c.won, c.cap) == (5, 4, 10)
    # every budget from 1 to the end: the share of games won with at most b calls (0 calls counts from 1)
    brute = [
        np.mean([w and max(n, 1) <= b for n, w in zip([0, 3, 5, 7, 3], [1, 1, 0, 1, 1])])
        for b in range(1, 11)
    ]
    assert c.at(np.arange(1, 11)).tolist() == pytest.approx(brute)
    with pytest.raises(ValueError, match="ends at 10"):
        c.at(11)
    with pytest.raises(ValueError, match="won with 12 calls, past the call cap 10"):
        plots.solve_curve([12], [True], cap=10)
    with pytest.raises(ValueError, match="no games"):
        plots.solve_curve([], [])
    free = plots.solve_curve([0, 3, 5], [True, True, False])  # no cap: the last step holds for any budget
    assert free.budgets.tolist() == [1, 3] and free.cap is None and free.at(10**6) == pytest.approx(2 / 3)


def test_plot_jobs_one_figure_per_task_with_the_tables_arms(jobs_dir, figures):
    by_task = {f.env_id: f for f in figures}
    assert set(by_task) == {TASK, "s1/Blackjack-v0"}
    assert by_task[TASK].path.name == "table-tinytest_Counter.png"  # several tasks: OUT-<task>.png
    assert by_task["s1/Blackjack-v0"].path == by_task[TASK].path.with_name("table-Blackjack.png")
    rows = table_rows([jobs_dir])
    for figure in figures:
        mine = [r for r in rows if r["env_id"] == figure.env_id]
        pixels = assert_png(figure.path, len(mine))
        assert all(
            has_color(pixels, c) for c in ("#1f77b4", "#ff7f0e")
        )  # the first two arms' colours (C0, C1)
        labels = [a.label for a in figure.arms]
        assert len(set(labels)) == len(labels) == len(mine) == len(figure.curves)
        assert [c.label for c in figure.curves] == labels
        for arm, curve, row in zip(figure.arms, figure.curves, mine, strict=True):
            # labelled as `s1 table` labels the row; the score panel shows the table's mean and interval
            assert row["policy"] in arm.label and (
                row["wrapper_setup"] == "-" or row["wrapper_setup"] in arm.label
            )
            assert arm.mean_score == row["mean_score"] and list(arm.ci95) == row["ci95"]
            assert list(arm.ci95) == list(bootstrap_ci(arm.scores.tolist()))
            assert len(arm.scores) == row["episodes"] - row["errors"]
            # the curve: starts at 1, non-decreasing, ends at the arm's wins over its games
            assert curve.budgets[0] == 1 and np.all(np.diff(curve.budgets) > 0)
            assert curve.cap == arm.call_cap and (curve.cap is None or curve.budgets[-1] == curve.cap)
            assert np.all(np.diff(curve.solve_rate) >= 0)
            assert curve.solve_rate[-1] == pytest.approx(row["wins"] / len(arm.scores))
    counter = by_task[TASK]
    assert has_color(assert_png(counter.path, 3), "#2ca02c")  # the third arm (C2)
    search = next(a for a in counter.arms if "search" in a.label)
    assert search.label == SEARCH_LABEL and search.call_cap == 1
    curves = {c.label: c for c in counter.curves}
    assert curves[search.label].cap == 1  # a capped arm speaks only up to its cap
    assert curves["uniform"].cap is curves["random (seed=0)"].cap is None  # no cap: any budget


def test_curves_match_the_trials_on_disk(jobs_dir, figures):
    """Read the result.json files directly: the curve at every budget is the share won within it."""
    (figure,) = [f for f in figures if f.env_id == TASK]
    for job, label in (
        ("counter-uniform", "uniform"),
        ("counter-random", "random (seed=0)"),
        ("counter-search", SEARCH_LABEL),
    ):
        trials = trials_of(jobs_dir / job)
        calls = np.array([t["agent_result"]["metadata"]["n_calls"] for t in trials])
        won = np.array([t["agent_result"]["metadata"]["won"] for t in trials])
        curve = next(c for c in figure.curves if c.label == label)
        b = np.arange(1, (curve.cap or 20) + 1)
        expected = ((np.maximum(calls, 1)[None, :] <= b[:, None]) & won[None, :]).mean(axis=1)
        assert curve.at(b).tolist() == pytest.approx(expected.tolist())
    # the capped Search loses the games one call cannot win: not every curve reaches 100 %
    assert 0 < next(c for c in figure.curves if "search" in c.label).solve_rate[-1] < 1


def test_errored_episodes_are_left_out_and_counted(tmp_path):
    evaluate(TASK, "uniform", episodes=4, options={"fail_seed": 2}, out=tmp_path, job="crash")
    (figure,) = plots.plot_jobs([tmp_path], tmp_path / "crash.png")
    (arm,) = figure.arms
    assert (arm.errors, len(arm.scores), figure.curves[0].games) == (1, 3, 3)
    assert "1 errored, left out" in drawing._with_errors(arm)
    assert_png(figure.path, 1)


def run_cli(*argv: str) -> int:
    return main(list(argv))


def test_table_plot_flag(jobs_dir, tmp_path, capsys):
    out = tmp_path / "one" / "t.png"
    assert (
        run_cli(
            "table",
            str(jobs_dir / "bj-random"),
            str(jobs_dir / "bj-uniform"),
            "--plot",
            str(out),
            "--format",
            "json",
        )
        == 0
    )
    captured = capsys.readouterr()
    assert len(json.loads(captured.out)) == 2  # stdout stays the table
    assert f"wrote {out}" in captured.err
    assert_png(out, 2)  # one task: the name given
    assert run_cli("table", str(jobs_dir), "--plot", str(tmp_path / "many.png")) == 0
    assert sorted(p.name for p in tmp_path.glob("many*.png")) == [
        "many-Blackjack.png",
        "many-tinytest_Counter.png",
    ]
    capsys.readouterr()
    assert run_cli("table", str(jobs_dir), "--plot", str(tmp_path / "table.txt")) == 2
    assert "give a picture file name ending in .png" in capsys.readouterr().err


def test_run_plot_flag_draws_the_job_and_checks_the_name_first(tmp_path, capsys):
    def run(job: str, plot: Path) -> int:
        out = str(tmp_path / "jobs")
        return run_cli(
            "run", TASK, "-p", "uniform", "-n", "3", "--out", out, "--job", job, "-q", "--plot", str(plot)
        )

    pic = tmp_path / "run.png"
    assert run("j", pic) == 0
    assert f"wrote {pic}" in capsys.readouterr().err
    assert_png(pic, 1)
    assert run("k", tmp_path) == 2  # a folder, not a file name: refused before playing
    assert "give a picture file name" in capsys.readouterr().err
    assert not (tmp_path / "jobs" / "k").exists()


def test_import_s1gym_does_not_import_matplotlib():
    code = "import sys, s1gym, s1gym.ui.cli, s1gym.reporting.plots; sys.exit('matplotlib' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False, cwd=ROOT, timeout=300).returncode == 0


def test_bench_plot_search_draws_a_panel_per_size(tmp_path, monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    import plot_search
    from search_cooking import Game  # the benchmark's own record, so the keys follow it

    games = [
        Game("uniform", "phs_h", "small", 1, True, 40, 5, 5, 50, 1.0),
        Game("uniform", "phs_h", "small", 2, True, 300, 5, 5, 350, 1.0),
        Game("uniform", "phs_h", "small", 3, False, 1000, 9, 5, 1100, 1.0),
        Game("uniform", "levin", "small", 1, True, 20, 5, 5, 30, 1.0),
        Game("uniform", "levin", "small", 2, False, 1000, 8, 5, 1200, 1.0),
        Game("local", "phs_h", "small", 1, True, 8, 5, 5, 9, 1.0),
        Game("local", "phs_h", "medium", 1, False, 1000, 12, 9, 1300, 1.0),
        Game("local", "phs_h", "medium", 1, True, 600, 12, 9, 700, 1.0),  # replayed: the last line counts
    ]
    lines = tmp_path / "search.jsonl"
    lines.write_text("".join(json.dumps(asdict(g)) + "\n" for g in games))
    out = tmp_path / "docs" / "search_budget.png"
    assert plot_search.main([str(lines), "--out", str(out)]) == 0
    assert "1 repeated game line" in capsys.readouterr().err
    with Image.open(out) as im:
        assert im.format == "PNG" and im.size[0] == round(plots.WIDTH_IN * plots.DPI)
    by_size = plot_search.size_curves(plot_search.read_games(lines)[0], 1000)
    assert list(by_size) == ["small", "medium"]
    small = {c.label: c for c in by_size["small"]}
    assert list(small) == ["uniform phs_h", "uniform levin", "local phs_h"]
    assert small["uniform phs_h"].at([39, 40, 299, 300, 1000]).tolist() == pytest.approx(
        [0, 1 / 3, 1 / 3, 2 / 3, 2 / 3]
    )
    assert small["uniform levin"].solve_rate[-1] == 0.5 and small["local phs_h"].at(8) == 1.0
    assert by_size["medium"][0].won == 1 and by_size["medium"][0].games == 1
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"policy": "uniform"}\n')
    with pytest.raises(SystemExit, match="game 1 lacks priority, size, seed, solved, calls"):
        plot_search.main([str(bad), "--out", str(out)])
    with pytest.raises(SystemExit, match="won with 300 calls, past the call cap 100"):
        plot_search.main([str(lines), "--out", str(out), "--budget", "100"])
