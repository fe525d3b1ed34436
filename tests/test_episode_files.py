"""Episode files: the compact format (each distinct text and list once), old files still read, and
``--frames`` screenshots recorded per tick without extra policy calls."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from job_schema import validate_job
from paint_task import TASK as PAINT
from paint_task import painted_cells

from s1gym import jobs
from s1gym.core import BasePolicy, Decision, Situation, Usage
from s1gym.runner.spec import evaluate

PARA = st.text(alphabet="ab \n:.", max_size=12)
OBS = st.lists(PARA, min_size=1, max_size=4).map("\n\n".join)


@st.composite
def episodes(draw):
    n = draw(st.integers(0, 6))
    ticks = []
    for t in range(n):
        cands = draw(st.lists(st.sampled_from(["a", "b", "c d", "e"]), min_size=1, max_size=3))
        tick = {"t": t, "observation": draw(OBS), "candidates": cands,
                "probabilities": [1.0 / len(cands)] * len(cands), "action": 0, "move": cands[0],
                "latency_s": 0.5, "usage": {"calls": 1}, "info": {"note": draw(PARA)}, "reward": 0.0, "score": 0.0}
        if draw(st.booleans()):
            tick["feedback"] = draw(OBS)
        ticks.append(tick)
    final = {"score": 1.0, "won": True}
    if draw(st.booleans()):
        final["observation"] = draw(OBS)
    return {"task": "s1/X-v0", "options": {}, "seed": 1, "policy": "p", "ticks": ticks, "final": final, "usage": {}}


@settings(max_examples=200, deadline=None)
@given(episodes())
def test_compaction_is_lossless(doc):
    compact = jobs.compact_episode(doc)
    assert compact["format"] == jobs.EPISODE_FORMAT
    assert jobs.expand_episode(json.loads(json.dumps(compact))) == doc


def test_format_1_files_still_read(tmp_path):
    old = {"task": "s1/X-v0", "options": {}, "seed": 3, "policy": "p", "final": {"won": False}, "usage": {},
           "ticks": [{"t": 0, "observation": "Room.\n\nMoves: go", "candidates": ["go"], "probabilities": [1.0],
                      "action": 0, "move": "go", "latency_s": 0.1, "usage": {}, "info": {}, "reward": 0.0, "score": 0.0}]}
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "episode.json").write_text(json.dumps(old))
    assert jobs.read_episode(tmp_path) == old
    assert jobs.read_episode(tmp_path / "agent" / "episode.json") == old


def test_unknown_format_and_missing_file_say_what_to_do(tmp_path):
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "episode.json").write_text(json.dumps({"format": 99, "ticks": []}))
    with pytest.raises(ValueError, match="format 99 .* upgrade s1gym"):
        jobs.read_episode(tmp_path)
    with pytest.raises(FileNotFoundError, match="pass a trial folder"):
        jobs.read_episode(tmp_path / "nothing")


def test_a_long_flat_odds_episode_is_small_and_reads_back(tmp_path):
    """The issue's example: 100 ticks of CookingWorld with flat odds (254 KB in format 1)."""
    evaluate("CookingWorld", "uniform", episodes=1, seed=0, out=tmp_path, job="u")
    trial = tmp_path / "u" / "CookingWorld__0"
    episode = jobs.read_episode(trial)
    assert len(episode["ticks"]) == 100
    old_size = len(json.dumps(episode))  # format 1: every text and list in place
    new_size = (trial / "agent" / "episode.json").stat().st_size
    assert new_size * 4 < old_size, (new_size, old_size)
    first, last = episode["ticks"][0], episode["ticks"][-1]
    assert first["observation"].endswith("Moves: " + ", ".join(first["candidates"]))
    assert first["feedback"] and last["clock_s"] >= first["clock_s"] >= 0
    assert episode["final"]["observation"].startswith(last["feedback"])
    assert episode["final"]["clock_s"] >= last["clock_s"] + last["latency_s"]
    assert validate_job(tmp_path / "u") == 1


class Painter(BasePolicy):
    """Paints the first free cell; counts its calls."""

    name = "painter"
    calls = 0

    def decide(self, situation: Situation) -> Decision:
        Painter.calls += 1
        return Decision.from_probabilities([1.0] + [0.0] * (len(situation.candidates) - 1), Usage(calls=1))


def test_frames_are_recorded_per_tick_without_policy_calls(tmp_path):
    Painter.calls = 0
    summary = evaluate(PAINT, Painter(), episodes=2, seed=0, out=tmp_path, job="f", frames=True)
    assert summary["wins"] == 2 and Painter.calls == 2 * 3 == summary["calls"]
    job = tmp_path / "f"
    assert json.loads((job / "config.json").read_text())["s1gym"]["frames"] is True
    for trial in sorted(p for p in job.iterdir() if p.is_dir()):
        episode = jobs.read_episode(trial)
        frames = [t["frame"] for t in episode["ticks"]] + [episode["final"]["frame"]]
        assert frames == [f"frames/{i:04d}.png" for i in range(4)]
        assert sorted(p.name for p in (trial / "agent" / "frames").iterdir()) == [f"{i:04d}.png" for i in range(4)]
        # each picture shows the state the policy saw at that tick (cells 0..k-1 painted), the last the end
        for k, rel in enumerate(frames):
            assert painted_cells((trial / "agent" / rel).read_bytes()) == set(range(k))
    assert validate_job(job) == 2


def test_frames_travel_from_worker_processes(tmp_path):
    evaluate(PAINT, "random", episodes=2, seed=0, out=tmp_path, job="w", frames=True, workers=2)
    for trial in ("Paint__0", "Paint__1"):
        episode = jobs.read_episode(tmp_path / "w" / trial)
        assert (tmp_path / "w" / trial / "agent" / episode["final"]["frame"]).is_file()
        assert len(list((tmp_path / "w" / trial / "agent" / "frames").glob("*.png"))) == len(episode["ticks"]) + 1


def test_frames_on_a_task_without_screenshots_warn_and_record_nothing(tmp_path):
    with pytest.warns(UserWarning, match="has no screenshot"):
        evaluate("Blackjack", "rule", episodes=1, out=tmp_path, job="b", frames=True)
    assert not list((tmp_path / "b").rglob("frames"))
