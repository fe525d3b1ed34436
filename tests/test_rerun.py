"""Every number reproducible from its folder (issue 57): a job pins what a rerun needs, and ``s1 rerun`` replays
it and says per trial whether decisions and reward came out identical."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from s1gym import registration
from s1gym.jobs.compare import compare_jobs
from s1gym.jobs.pins import differences, job_pins, sha256_file
from s1gym.runner.rerun import rerun, rerun_arguments
from s1gym.runner.spec import evaluate
from s1gym.ui.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _config(job: Path) -> dict:
    return json.loads((job / "config.json").read_text())


def _assert_reproduced(job: Path, tmp_path: Path) -> None:
    report = rerun(job, out=tmp_path / "reruns")
    assert report.differences == []
    assert report.trials and all(t.identical for t in report.trials), report.lines()
    assert all(t.agreement == 1.0 for t in report.trials)
    assert report.identical and report.new_job.parent == tmp_path / "reruns"
    assert _config(report.new_job)["spec"] == _config(job)["spec"]


def test_a_job_pins_versions_files_and_the_model_it_reads(tmp_path):
    evaluate("Blackjack", "local", episodes=2, seed=0, out=tmp_path, job="bj")
    config = _config(tmp_path / "bj")
    assert config["spec"] == {"task": "Blackjack", "policy": "local", "seed": 0, "episodes": 2, "retries": 1,
                              "policy_retries": 0}
    pins = config["pins"]
    assert pins["s1gym"]["version"] and pins["python"]
    if (ROOT / ".git").exists():
        assert len(pins["s1gym"]["commit"]) == 40
    # the engines and runtimes s1gym requires, where installed; no test tools
    assert pins["packages"]["gymnasium"] and pins["packages"]["rlcard"] and "pytest" not in pins["packages"]
    model = registration.model_file("Blackjack")
    key = f"s1gym.tasks.games/data/{model.name}"
    assert pins["model_files"] == [key] and pins["files"][key] == sha256_file(model)
    assert "policy" not in pins  # an offline policy has no sampling settings
    # the rule reads no shipped model; the same files are pinned
    assert job_pins("Blackjack", {"policy": "rule"})["model_files"] == []


def test_a_chat_policy_pins_its_model_and_sampling_but_never_its_key():
    from s1gym.policies.chat import Chat

    chat = Chat(model="gemma-3-270m", base_url="http://127.0.0.1:9", api_key="sk-secret-123456789",
                temperature=0.7)
    pins = job_pins("Blackjack", {"policy": "chat"}, chat)
    assert pins["policy"]["model"] == "gemma-3-270m" and pins["policy"]["temperature"] == 0.7
    assert len(pins["policy"]["system_prompt_sha256"]) == 64
    assert "sk-secret" not in json.dumps(pins)
    changed = job_pins("Blackjack", {"policy": "chat"}, Chat(model="gemma-3-270m", base_url="http://127.0.0.1:9",
                                                             temperature=0.0))
    assert differences(pins, changed) == ["policy temperature: job 0.7, here 0.0"]


def test_blackjack_rule_reruns_bit_for_bit(tmp_path):
    evaluate("Blackjack", "rule", episodes=6, seed=10, out=tmp_path, job="bj")
    _assert_reproduced(tmp_path / "bj", tmp_path)


def test_cooking_search_local_reruns_bit_for_bit(tmp_path):
    evaluate("CookingWorld", "local", wrappers=["search"], budget=20, episodes=2, seed=3,
             options={"size": "small", "max_steps": 15}, out=tmp_path, job="cw")
    _assert_reproduced(tmp_path / "cw", tmp_path)


def test_alfworld_lookahead_local_reruns_bit_for_bit(tmp_path):
    pytest.importorskip("alfworld", reason="the optional extra alfworld==0.4.2 is not installed")
    evaluate("ALFWorld", "local", wrappers=["lookahead"], episodes=2, seed=0, options={"split": "scenes"},
             out=tmp_path, job="af")
    _assert_reproduced(tmp_path / "af", tmp_path)


def test_a_changed_pin_is_named_before_the_rerun_and_a_changed_decision_after(tmp_path, capsys):
    evaluate("Blackjack", "rule", episodes=3, seed=0, out=tmp_path, job="bj")
    copy = tmp_path / "copy"
    shutil.copytree(tmp_path / "bj", copy)
    config = _config(copy)
    config["pins"]["packages"]["rlcard"] = "0.0.1"
    first_file = min(config["pins"]["files"])
    config["pins"]["files"][first_file] = "0" * 64
    (copy / "config.json").write_text(json.dumps(config))
    # an episode edited after the fact: the comparison finds the tick
    episode = json.loads((copy / "Blackjack__1" / "agent" / "episode.json").read_text())
    episode["ticks"][0]["score"] = 123.0
    (copy / "Blackjack__1" / "agent" / "episode.json").write_text(json.dumps(episode))

    assert main(["rerun", str(copy), "--out", str(tmp_path / "reruns"), "-q"]) == 1
    out, err = capsys.readouterr()
    assert "2 pinned version(s) or file(s) differ" in err
    installed = json.loads((tmp_path / "bj" / "config.json").read_text())["pins"]["packages"]["rlcard"]
    assert f"package rlcard: job 0.0.1, here {installed}" in err
    assert f"file {first_file}: changed (SHA-256 differs)" in err
    assert "Blackjack__0: identical" in out and "Blackjack__2: identical" in out
    assert "Blackjack__1: decisions differ, reward identical" in out and "tick 0 differs" in out
    assert "2 of 3 trials identical" in out
    assert (tmp_path / "reruns" / "copy-rerun").is_dir()


def test_rerun_arguments_replay_the_command_line(tmp_path):
    evaluate("Blackjack", "uniform", wrappers="search", wrapper_options={"budget": 5}, episodes=2, seed=4,
             policy_options={}, agreement=False, out=tmp_path, job="j")
    args = rerun_arguments(_config(tmp_path / "j"))
    assert args["task"] == "Blackjack" and args["policy"] == "uniform" and args["wrappers"] == ["search"]
    assert args["wrapper_options"] == {"budget": 5} and (args["seed"], args["episodes"]) == (4, 2)
    assert args["agreement"] is False


def test_a_policy_object_cannot_be_rerun_from_the_command_line(tmp_path):
    from s1gym.policies import make_policy

    from s1gym.runner.rerun import RunError

    evaluate("Blackjack", make_policy("uniform"), episodes=1, out=tmp_path, job="obj")
    with pytest.raises(RunError, match="Python object"):
        rerun(tmp_path / "obj")


def test_ab_jobs_bench_is_the_same_comparison(tmp_path):
    for side in ("before", "after"):
        evaluate("Blackjack", "rule", episodes=2, seed=0, out=tmp_path / side, job="bj")
    assert [c.identical for c in compare_jobs(tmp_path / "before" / "bj", tmp_path / "after" / "bj")] == [True, True]
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "ab_jobs.py"), str(tmp_path / "before"),
                           str(tmp_path / "after")], check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "rule: 2 trials compared, 2 identical, 0 different" in done.stdout
