"""Every episode reusable as training data (issue 57): ``s1 export`` writes one row a decision as Parquet
(loadable by ``datasets``) and as chat-format JSONL, matching the episode files."""

from __future__ import annotations

import json

import pytest

from s1gym.jobs import read_episode
from s1gym.jobs.export import COLUMNS, ExportError, export_jobs
from s1gym.runner.spec import evaluate
from s1gym.ui.cli import main


@pytest.fixture(scope="module")
def jobs(tmp_path_factory):
    root = tmp_path_factory.mktemp("jobs")
    evaluate("Blackjack", "rule", episodes=4, seed=0, out=root, job="bj-rule")
    evaluate("2048", "local", episodes=1, seed=0, options={"max_steps": 6}, out=root, job="2048-local")
    return root


def _episode_rows(root):
    """(task, seed, step, observation, candidates, chosen, expert, probabilities, reward, done) from the
    episode files themselves."""
    rows = []
    for job in sorted(p for p in root.iterdir() if p.is_dir()):
        for trial in sorted(p for p in job.iterdir() if (p / "agent" / "episode.json").is_file()):
            ep = read_episode(trial)
            for i, t in enumerate(ep["ticks"]):
                expert = t["candidates"].index(t["expert"]) if "expert" in t else None
                rows.append((job.name, ep["seed"], t["t"], t["observation"], t["candidates"], t["action"], expert,
                             t["probabilities"], t["reward"], i == len(ep["ticks"]) - 1))
    return sorted(rows, key=lambda r: (r[0], r[1], r[2]))


def test_parquet_loads_with_datasets_and_matches_the_episode_files(jobs, tmp_path):
    datasets = pytest.importorskip("datasets", reason="the test extra's datasets is not installed")
    assert main(["export", str(jobs), "--to", str(tmp_path / "data")]) == 0
    data = datasets.load_dataset("parquet", data_files=str(tmp_path / "data" / "decisions.parquet"),
                                 cache_dir=str(tmp_path / "cache"))["train"]
    assert tuple(data.column_names) == COLUMNS
    got = sorted(((r["job"], r["seed"], r["step"], r["observation"], r["candidates"], r["chosen"], r["expert"],
                   r["probabilities"], r["reward"], r["done"]) for r in data), key=lambda r: (r[0], r[1], r[2]))
    assert got == _episode_rows(jobs)
    rule = [r for r in data if r["job"] == "bj-rule"]
    # the rule is Blackjack's expert: every chosen move is the expert's
    assert rule and all(r["chosen"] == r["expert"] for r in rule) and {r["policy"] for r in rule} == {"rule"}
    assert sum(r["done"] for r in rule) == 4 and {r["task"] for r in rule} == {"s1/Blackjack-v0"}


def test_chat_jsonl_asks_the_situation_and_answers_the_chosen_candidate(jobs, tmp_path):
    written = export_jobs([jobs / "bj-rule"], tmp_path, formats=("chat",))
    assert list(written) == [tmp_path / "chat.jsonl"]
    records = [json.loads(line) for line in (tmp_path / "chat.jsonl").read_text().splitlines()]
    episode = read_episode(jobs / "bj-rule" / "Blackjack__0")
    first = records[0]
    assert (first["task"], first["seed"], first["step"]) == ("s1/Blackjack-v0", 0, 0)
    system, user, assistant = first["messages"]
    assert [m["role"] for m in first["messages"]] == ["system", "user", "assistant"]
    assert "Blackjack" in system["content"] and "-v0" not in system["content"]
    tick = episode["ticks"][0]
    assert user["content"].startswith(tick["observation"].strip())
    assert all(f"{k}. {c}" in user["content"] for k, c in enumerate(tick["candidates"], 1))
    assert assistant["content"] == tick["move"]
    assert written[tmp_path / "chat.jsonl"] == len(records) == sum(1 for _ in _bj_ticks(jobs))


def _bj_ticks(jobs):
    for trial in sorted((jobs / "bj-rule").glob("Blackjack__*")):
        yield from read_episode(trial)["ticks"]


def test_export_errors_are_plain(tmp_path):
    with pytest.raises(ExportError, match="formats"):
        export_jobs([tmp_path], tmp_path / "out", formats=("csv",))
    with pytest.raises(ExportError, match="no job folders"):
        export_jobs([tmp_path], tmp_path / "out", formats=("chat",))
