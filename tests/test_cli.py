"""The ``s1`` command line: run (killed and resumed), table, list, play, bad input."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from job_schema import validate_job

from s1gym.ui.cli import main, parse_value, table_rows

HERE = Path(__file__).resolve().parent
TASK = "test_runner:tinytest/Counter-v0"


def run_cli(*argv: str) -> int:
    return main(list(argv))


def run_argv(out: Path, job: str, *extra: str, policy="test_runner:First", episodes=3) -> list[str]:
    """The arguments of a quiet ``s1 run`` of TASK writing job ``job`` under ``out``."""
    played = ["--policy", policy, "--episodes", str(episodes), *extra]
    return ["run", TASK, *played, "--out", str(out), "--job", job, "-q"]


def test_run_prints_summary_table(tmp_path, capsys):
    assert run_cli(*run_argv(tmp_path, "a")) == 0
    out = capsys.readouterr().out
    assert "Counter" in out and "1.000 [1.000, 1.000]" in out and "first" in out
    assert validate_job(tmp_path / "a") == 3


def test_run_killed_then_resumed_has_no_duplicates(tmp_path):
    """SIGKILL a real `s1 run` mid-job; every JSON left is whole; --resume finishes each seed once."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    slow = ("--option", "delay=0.04")
    argv = [sys.executable, "-m", "s1gym.ui.cli", *run_argv(tmp_path, "k", *slow, episodes=12)]
    job = tmp_path / "k"
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while len(list(job.glob("*/result.json"))) < 3:
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, "the run made no progress"
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    finished_before = {p.parent.name: json.loads(p.read_text())["id"] for p in job.glob("*/result.json")}
    assert 3 <= len(finished_before) < 12
    for path in job.rglob("*.json"):
        json.loads(path.read_text())  # never half-written
    assert json.loads((job / "result.json").read_text())["finished_at"] is None

    assert run_cli(*run_argv(tmp_path, "k", *slow, "--resume", episodes=12)) == 0
    trials = sorted(p.parent.name for p in job.glob("*/result.json"))
    assert trials == sorted(f"Counter__{s}" for s in range(12))
    for name, trial_id in finished_before.items():  # finished trials were not replayed
        assert json.loads((job / name / "result.json").read_text())["id"] == trial_id
    result = json.loads((job / "result.json").read_text())
    assert (
        result["n_total_trials"] == 12
        and result["stats"]["n_completed_trials"] == 12
        and result["finished_at"]
    )
    assert not list(job.rglob("*.tmp")) and validate_job(job) == 12


def test_table_over_two_jobs(tmp_path, capsys):
    assert run_cli(*run_argv(tmp_path, "one", episodes=4)) == 0
    greedy = run_argv(tmp_path, "two", "--option", "fail_seed=2", policy="test_runner:Greedy", episodes=4)
    assert run_cli(*greedy) == 0
    capsys.readouterr()
    assert run_cli("table", str(tmp_path), "--format", "json") == 0
    rows = {r["policy"].split(":")[-1].lower(): r for r in json.loads(capsys.readouterr().out)}
    assert set(rows) == {"first", "greedy"}
    assert rows["first"]["episodes"] == 4 and rows["first"]["errors"] == 0 and rows["first"]["wins"] == 4
    assert (
        rows["greedy"]["errors"] == 1 and rows["greedy"]["mean_score"] == 1.0
    )  # scores over scored episodes
    assert rows["first"]["mean_steps"] > rows["greedy"]["mean_steps"]
    assert rows["first"]["calls"] == rows["first"]["mean_steps"] * 4
    assert run_cli("table", str(tmp_path), "--format", "markdown") == 0
    md = capsys.readouterr().out.splitlines()
    assert md[0].startswith("| task | policy | wrappers | episodes | score [95% CI]") and len(md) == 4
    assert run_cli("table", str(tmp_path / "one")) == 0  # a job folder itself works too
    assert "first" in capsys.readouterr().out
    assert table_rows([tmp_path / "one"])[0]["episodes"] == 4


def test_table_on_empty_or_missing_folder(tmp_path, capsys):
    assert run_cli("table", str(tmp_path)) == 1
    assert "no job folders" in capsys.readouterr().err
    assert run_cli("table", str(tmp_path / "nope")) == 2
    assert "no such folder" in capsys.readouterr().err


def test_list_shows_tasks_and_options(capsys):
    assert run_cli("list") == 0
    out = capsys.readouterr().out
    assert "s1/CookingWorld-v0" in out and "s1/Blackjack-v0" in out


def test_play_reads_numbered_moves(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO("7\nadd 2\n" + "0\n" * 12))
    assert run_cli("play", TASK, "--seed", "1") == 0
    out = capsys.readouterr().out
    assert "[0] add 1" in out and "Not a move" in out and "Game over: won" in out


def test_play_quit(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO("q\n"))
    assert run_cli("play", TASK) == 0
    assert "Game over: quit" in capsys.readouterr().out


def test_parse_value():
    assert [parse_value(v) for v in ("3", "0.5", "true", "off", "null", "[1, 2]", "small")] == [
        3,
        0.5,
        True,
        False,
        None,
        [1, 2],
        "small",
    ]
