"""The job folders' records pinned where mutation testing (bench/mutation.py, issue 57) found them loose: a
trial's files, the job's Harbor result, our summary and its failure counts, the JSON walk and its scrubbing,
read back exactly from hand-made trials. Each test says what it catches."""

from __future__ import annotations

import dataclasses
import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

from s1gym.jobs import files, harbor
from s1gym.jobs.episodes import expand_episode
from s1gym.jobs.summary import distinct_games, failures, summarize_trials, trial_outcome, trial_verdict
from s1gym.stats import bootstrap_ci


def trial(seed, reward=None, *, won=False, exc=None, name=None, **meta):
    return {
        "trial_name": name or f"T__{seed}",
        "config": {"task": {"seed": seed}},
        "verifier_result": None if reward is None else {"rewards": {"reward": reward}},
        "exception_info": exc,
        "agent_result": {"n_input_tokens": meta.pop("tin", 0), "n_output_tokens": meta.pop("tout", 0),
                         "cost_usd": meta.pop("cost", 0.0), "metadata": {"won": won, **meta}},
    }


def test_trial_names_seeds_and_keys():
    # catches: each rewrite of the env id, the 32-character cut, the seed's default
    assert harbor.trial_name("s1/CookingWorld-v0", 7) == "CookingWorld__7"
    assert harbor.trial_name("pkg.mod:s1/A b!-v12", 0) == "A_b___0"
    assert harbor.trial_name("x" * 40, 1) == "x" * 32 + "__1"
    assert harbor.trial_name("Game-v2x", 3) == "Game-v2x__3"
    assert harbor.seed_of({"config": {"task": {"seed": 5}}}) == 5
    assert harbor.seed_of({"config": {"task": {"seed": "5"}}}) == 0 and harbor.seed_of({}) == 0
    assert harbor.eval_key("rule", "s1/Blackjack-v0") == "rule__s1/Blackjack-v0"
    assert harbor.seed_record(3, 2) == {"start": 3, "count": 2, "list": [3, 4]}
    assert harbor.trial_reward({}) == 0.0 and harbor.trial_reward(trial(0, 0.25)) == 0.25
    assert harbor.trial_metadata({}) == {} and harbor.trial_metadata({"agent_result": {"metadata": None}}) == {}
    assert harbor.task_checksum("t", {"a": 1}, 2) == __import__("hashlib").sha256(
        json.dumps({"env_id": "t", "options": {"a": 1}, "seed": 2}, sort_keys=True).encode()).hexdigest()


def test_the_job_result_counts_exactly():
    # catches: every JobStats counter, the reward and exception groups, the pending count's floor at 0
    trials = [trial(0, 1.0, name="a", tin=3, tout=4, cost=0.5, n_calls=2), trial(1, 0.1234567, name="b"),
              trial(2, None, name="c", exc={"exception_type": "Boom"}), trial(3, 1.0, name="d")]
    r = harbor.job_result(job_id="j", started_at="s", finished_at="f", n_total_trials=6, trials=trials, key="k")
    assert r == {
        "id": "j", "started_at": "s", "finished_at": "f", "n_total_trials": 6,
        "stats": {"n_trials": 4, "n_errors": 1, "n_completed_trials": 3, "n_errored_trials": 1,
                  "n_running_trials": 0, "n_pending_trials": 2, "n_cancelled_trials": 0, "n_retries": 0,
                  "n_input_tokens": 3, "n_cache_tokens": 0, "n_output_tokens": 4, "cost_usd": 0.5,
                  "evals": {"k": {"n_trials": 4, "n_errors": 1, "metrics": [{"mean": pytest.approx(2.1234567 / 3)}],
                                  "reward_stats": {"reward": {"1.0": ["a", "d"], "0.123457": ["b"]}},
                                  "exception_stats": {"Boom": ["c"]}}}},
    }
    few = harbor.job_result(job_id="j", started_at="s", finished_at=None, n_total_trials=1, trials=trials, key="k")
    assert few["stats"]["n_pending_trials"] == 0
    assert harbor.usage_totals(trials) == {"calls": 2, "input_tokens": 3, "output_tokens": 4, "cost_usd": 0.5}


def test_a_trials_files_exactly(tmp_path):
    # catches: every metadata field, the result's records, the verifier's reward and won, the episode's final
    ticks = [
        {"observation": "o1", "candidates": ["a", "b"], "move": "a", "latency_s": 0.5, "planning_s": 0.25,
         "expert": "a", "expert_top": 1.0, "expert_p": 0.75, "info": {"fallback": "greedy"}},
        {"observation": "o2", "candidates": ["a"], "move": "a", "latency_s": 0.125, "planning_s": None,
         "info": {"invalid_replies": 2}},
    ]
    episode = {"ticks": ticks, "usage": {"calls": 3, "input_tokens": 10, "output_tokens": 5, "cost_usd": 0.25},
               "score": 0.5, "won": True, "lost": False, "gave_up": False, "truncated": True, "game": "g1",
               "steps": 2, "final_observation": "end", "final_info": {"x": 1}, "terminated": True}
    task = {"name": "s1/Toy-v0", "options": {"n": 1}, "resolved_options": {"n": 1, "m": 2}}
    out = harbor.trial_files(task=task, agent={"name": "rule"}, job_id="J", job_dir=str(tmp_path), seed=4,
                             started="t0", finished="t1", agent_info={"name": "rule"}, episode=episode,
                             exception_info=None)
    assert (out["name"], out["seed"], out["frames"]) == ("Toy__4", 4, {})
    assert out["config"] == {"task": {**task, "seed": 4}, "trial_name": "Toy__4", "trials_dir": str(tmp_path),
                             "agent": {"name": "rule"}, "job_id": "J"}
    r = out["result"]
    assert r["agent_result"] == {
        "n_input_tokens": 10, "n_cache_tokens": 0, "n_output_tokens": 5, "cost_usd": 0.25, "rollout_details": None,
        "metadata": {"n_calls": 3, "n_steps": 2, "won": True, "lost": False, "gave_up": False, "truncated": True,
                     "game": "g1", "decision_latency_s": [0.5, 0.125], "search_time_s": [0.25],
                     "expert_decisions": 1, "expert_top": 1.0, "expert_p": 0.75, "fallback_moves": 1,
                     "invalid_decisions": 1, "final_info": {"x": 1}}}
    assert r["verifier_result"] == {"rewards": {"reward": 0.5, "won": 1}} and r["exception_info"] is None
    assert (r["task_name"], r["trial_name"], r["task_id"], r["source"]) == ("s1/Toy-v0", "Toy__4",
                                                                            {"path": "s1/Toy-v0"}, "s1gym")
    assert r["trial_uri"] == (tmp_path / "Toy__4").resolve().as_uri()
    assert r["task_checksum"] == harbor.task_checksum("s1/Toy-v0", {"n": 1, "m": 2}, 4)
    assert (r["started_at"], r["finished_at"], r["agent_execution"]) == (
        "t0", "t1", {"started_at": "t0", "finished_at": "t1"})
    doc = expand_episode(out["episode"])
    assert (doc["task"], doc["options"], doc["seed"], doc["policy"]) == ("s1/Toy-v0", {"n": 1}, 4, "rule")
    assert doc["final"]["observation"] == "end" and doc["final"]["score"] == 0.5 and doc["final"]["truncated"]
    assert doc["usage"] == episode["usage"]
    failed = harbor.trial_files(task=task, agent={}, job_id="J", job_dir="", seed=4, started="t0", finished="t1",
                                agent_info={}, episode=dict(episode, usage={}), exception_info={"kind": "engine"})
    assert failed["result"]["verifier_result"] is None and failed["result"]["exception_info"] == {"kind": "engine"}
    assert failed["result"]["trial_uri"] == "Toy__4"
    assert failed["result"]["agent_result"]["metadata"]["n_calls"] == 0
    rec = harbor.exception_record(ValueError("bad"), "tb")
    assert (rec["exception_type"], rec["exception_message"], rec["exception_traceback"]) == ("ValueError", "bad", "tb")


def test_outcomes_verdicts_and_failures():
    # catches: each outcome and verdict text, the plural, every failure counter
    engine = trial(1, exc={"kind": "engine", "exception_type": "EngineCrashed"})
    policy = trial(2, exc={"kind": "policy", "exception_type": None})
    other = trial(3, exc={"kind": "odd", "exception_type": "KeyError"})
    won = trial(4, 1.0, won=True, invalid_decisions=1)
    lost = trial(5, 0.0, lost=True, invalid_decisions=3)
    assert [trial_outcome(t) for t in (engine, policy, other, won, lost)] == [
        "engine_error", "policy_error", "other_error", "won", "task"]
    assert trial_verdict(engine) == "engine error: EngineCrashed"
    assert trial_verdict(policy) == "policy error: unknown"
    assert trial_verdict(other) == "error: KeyError"
    assert trial_verdict(won) == "won; 1 invalid decision"
    assert trial_verdict(lost) == "task failure: lost; 3 invalid decisions"
    assert trial_verdict(trial(6, 0.0, gave_up=True, lost=True)) == "task failure: gave up"
    assert trial_verdict(trial(6, 0.0, truncated=True)) == "task failure: step limit"
    assert trial_verdict(trial(6, 0.0)) == "task failure: out of moves"
    assert failures([engine, policy, other, won, lost, trial(7, 0.0)]) == {
        "task": 2, "invalid_decisions": 4, "invalid_episodes": 2, "policy_errors": 1, "engine_errors": 1,
        "other_errors": 1}


def test_distinct_games_average_each_game_first():
    # catches: the game key (a trial without one is its own game), the counts, the per-game means and interval
    trials = [trial(0, 1.0, game="g"), trial(1, 0.0, game="g"), trial(2, 1.0), trial(3, 0.0), trial(2, 0.5)]
    got = distinct_games(trials)
    per_game = [0.5, 0.75, 0.0]
    assert got == {"distinct_games": 3, "repeated_episodes": 2, "games_mean_score": pytest.approx(1.25 / 3),
                   "games_ci95": list(bootstrap_ci(per_game))}


class Metrics:
    @staticmethod
    def summarize_episodes(finals):
        return {"finals": len(finals), "arr": np.array([1, 2])}


class Broken:
    @staticmethod
    def summarize_episodes(finals):
        raise KeyError("x")


def test_the_summary_exactly():
    # catches: every field of summary.json and its inputs (scored vs errored trials, latencies, searches,
    # agreement, fallback moves), the task metrics and their error
    trials = [
        trial(1, 1.0, won=True, n_steps=3, decision_latency_s=[0.5, 1.5], search_time_s=[1.0], expert_decisions=2,
              expert_top=1.0, expert_p=1.5, fallback_moves=1, gave_up=False, n_calls=4, final_info={"a": 1}),
        trial(0, 0.5, n_steps=5, decision_latency_s=[1.0], search_time_s=None, expert_decisions=0, gave_up=True,
              n_calls=1),
        trial(2, None, exc={"kind": "engine", "exception_type": "X"}),
    ]
    trials[0]["retries"] = [{"why": "crash"}]
    s = summarize_trials(trials, Metrics)
    ci = bootstrap_ci([0.5, 1.0])
    assert s == {
        "episodes": 3, "scored": 2, "errors": 1, "retried": 1, "mean_score": 0.75, "ci95": list(ci), "wins": 1,
        "win_rate": 0.5, "gave_up": 1, "mean_steps": 4.0, "median_latency_s": 1.0, "mean_latency_s": 1.0,
        "decision_time_s": 3.0, "mean_search_s": 1.0, "decisions": 3, "expert_decisions": 2,
        "agreement_at_1": 0.5, "mean_expert_p": 0.75, "fallback_moves": 1,
        "failures": {"task": 1, "invalid_decisions": 0, "invalid_episodes": 0, "policy_errors": 0,
                     "engine_errors": 1, "other_errors": 0},
        "distinct_games": 2, "repeated_episodes": 0, "games_mean_score": 0.75, "games_ci95": list(ci),
        "calls": 5, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0,
        "task_metrics": {"finals": 2, "arr": [1, 2]},
    }
    assert summarize_trials(trials, Broken)["task_metrics"] == {"error": "KeyError: 'x'"}
    none = summarize_trials([trials[2]], Metrics)
    assert none["win_rate"] is None and none["agreement_at_1"] is None and "task_metrics" not in none
    assert summarize_trials(trials[:2])["agreement_at_1"] == 0.5 and "task_metrics" not in summarize_trials(trials)


@dataclasses.dataclass
class Point:
    x: int
    api_key: str


def test_to_jsonable_and_scrub(monkeypatch):
    # catches: each type the walk converts, non-finite floats, key scrubbing (only with _scrub_keys, never
    # numbers), env secrets in every form, bearer tokens
    value = {1: (np.int64(2), np.float32(0.5)), "s": {3}, "a": np.array([[1, 2]]), "p": Path("/x"),
             "d": Point(1, "k"), "nan": math.nan, "inf": -math.inf, "o": object, "b": True, "n": None}
    got = files.to_jsonable(value)
    assert got == {"1": [2, 0.5], "s": [3], "a": [[1, 2]], "p": "/x", "d": {"x": 1, "api_key": "k"},
                   "nan": None, "inf": None, "o": repr(object), "b": True, "n": None}
    assert files.to_jsonable({"api_key": "v", "token_count": 3, "auth": None}, _scrub_keys=True) == {
        "api_key": "[REDACTED]", "token_count": 3, "auth": None}
    assert files.to_jsonable([Point(1, "k")], _scrub_keys=True) == [{"x": 1, "api_key": "[REDACTED]"}]
    monkeypatch.setenv("MY_API_KEY", 'se"cret-12345')
    monkeypatch.setenv("SHORT_TOKEN", "1234567")  # shorter than 8: noise, kept
    monkeypatch.setenv("PLAIN", "abcdefghijk")  # not a secret-looking name
    text = 'the se"cret-12345 1234567 abcdefghijk; Authorization: Bearer abcdefgh12 and basic xy'
    assert files.scrub({"msg": text}) == {
        "msg": "the [REDACTED] 1234567 abcdefghijk; Authorization: Bearer [REDACTED] and basic xy"}
    assert files._dumps({"a": [1, 2]}, None) == '{"a":[1,2]}'
    assert files._dumps({"a": 1}, 2) == '{\n  "a": 1\n}'


def test_atomic_writes_and_temp_files(tmp_path):
    # catches: the written text (scrubbed, newline-terminated), the umask's permissions, the temp cleanup
    path = tmp_path / "sub" / "f.json"
    files.atomic_write_json(path, {"a": 1, "api_key": "x"}, fsync=True)
    assert path.read_text() == '{\n  "a": 1,\n  "api_key": "[REDACTED]"\n}\n'
    assert files.read_json(path) == {"a": 1, "api_key": "[REDACTED]"}
    files.atomic_write_json(path, {"a": [1]}, indent=None)
    assert path.read_text() == '{"a":[1]}\n'
    mask = os.umask(0o027)
    try:
        files.atomic_write_bytes(tmp_path / "b", b"x")
    finally:
        os.umask(mask)
    assert (tmp_path / "b").stat().st_mode & 0o777 == 0o640
    (tmp_path / ".a.json.123.tmp").write_text("x")
    (tmp_path / "sub" / ".b.tmp").write_text("x")
    (tmp_path / "keep.tmp").write_text("x")
    assert files.remove_stale_temp_files(tmp_path) == 2 and (tmp_path / "keep.tmp").exists()
    assert [p.name for p in tmp_path.rglob(".*")] == []

    class Fails:
        def __repr__(self):
            raise RuntimeError("no")

    with pytest.raises(RuntimeError):
        files.atomic_write_json(tmp_path / "c.json", {"x": Fails()})
    assert not (tmp_path / "c.json").exists() and [p.name for p in tmp_path.glob(".c.json*")] == []
    assert files.now_iso().endswith("+00:00")


def test_a_trials_flags_and_counts_come_from_the_episode():
    # catches: each flag's key and default (lost, gave_up, won, truncated, steps), the expert count's test,
    # the trial id, the plural of one against two invalid decisions, the exception's time
    import uuid

    tick = {"observation": "o", "candidates": ["a"], "move": "a", "latency_s": 0.1}
    ticks = [dict(tick, expert="a", expert_top=1.0, expert_p=1.0), dict(tick, expert="a", expert_top=0.0,
             expert_p=0.5), dict(tick)]
    task = {"name": "s1/Toy-v0", "options": {}}
    args = dict(task=task, agent={}, job_id="J", job_dir="", seed=0, started="a", finished="b", agent_info={},
                exception_info=None)
    flags = harbor.trial_files(episode={"ticks": ticks, "score": 0.0, "won": False, "lost": True, "gave_up": True},
                               **args)
    meta = flags["result"]["agent_result"]["metadata"]
    assert (meta["lost"], meta["gave_up"], meta["won"], meta["truncated"], meta["n_steps"]) == (
        True, True, False, False, 3)
    assert (meta["expert_decisions"], meta["expert_top"], meta["expert_p"]) == (2, 1.0, 1.5)
    bare = harbor.trial_files(episode={"ticks": ticks[:1], "score": 1.0, "won": True, "steps": 5}, **args)
    meta = bare["result"]["agent_result"]["metadata"]
    assert (meta["lost"], meta["gave_up"], meta["won"], meta["truncated"], meta["n_steps"]) == (
        False, False, True, False, 5)
    ids = {flags["result"]["id"], bare["result"]["id"]}
    assert len(ids) == 2 and all(str(uuid.UUID(i)) == i for i in ids)
    assert trial_verdict(trial(1, 0.0, invalid_decisions=2)) == "task failure: out of moves; 2 invalid decisions"
    rec = harbor.exception_record(ValueError("bad"), "tb")
    assert rec["occurred_at"].endswith("+00:00")


def test_a_trials_final_record_checksum_and_usage_defaults():
    # catches: each key of the episode's final record, the checksum's key order and its options fallback,
    # the usage defaults, the name cut at the last ':'
    assert harbor.trial_name("pkg/mod:Game-v0", 1) == "Game__1"
    assert harbor.task_checksum("t", {"b": 1, "a": 2}, 0) == __import__("hashlib").sha256(
        b'{"env_id": "t", "options": {"a": 2, "b": 1}, "seed": 0}').hexdigest()
    episode = {"ticks": [], "score": 0.25, "won": False, "lost": True, "steps": 4, "terminated": True,
               "truncated": False, "gave_up": True, "clock_s": 1.5, "final_observation": "end"}
    out = harbor.trial_files(task={"name": "s1/Toy-v0", "options": {"z": 1, "y": 2}}, agent={}, job_id="J",
                             job_dir="", seed=2, started="a", finished="b", agent_info={}, episode=episode,
                             exception_info=None)
    assert expand_episode(out["episode"])["final"] == {
        "score": 0.25, "won": False, "lost": True, "steps": 4, "terminated": True, "truncated": False,
        "gave_up": True, "clock_s": 1.5, "observation": "end"}  # no frame recorded: no frame key
    r = out["result"]
    assert r["task_checksum"] == harbor.task_checksum("s1/Toy-v0", {"z": 1, "y": 2}, 2)
    assert (r["agent_result"]["n_input_tokens"], r["agent_result"]["n_output_tokens"],
            r["agent_result"]["cost_usd"]) == (0, 0, 0.0)


def test_writes_keep_their_temp_file_beside_the_target_and_fsync_when_asked(tmp_path, monkeypatch):
    # catches: the temp file's folder, prefix and suffix (what remove_stale_temp_files finds after a kill),
    # fsync not passed on, the permissions' base 0o666, a temp file left (or a TypeError) when the rename fails,
    # ensure_ascii in the JSON (non-ASCII text kept as is)
    replaced, synced = [], []
    real_replace = os.replace
    monkeypatch.setattr(files.os, "replace", lambda src, dst: (replaced.append(src), real_replace(src, dst)))
    real_fsync = os.fsync
    monkeypatch.setattr(files.os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    target = tmp_path / "t.json"
    files.atomic_write_json(target, {"a": "é"}, fsync=True)
    (src,) = replaced
    assert Path(src).parent == tmp_path and Path(src).name.startswith(".t.json.") and src.endswith(".tmp")
    assert len(synced) == 1 and target.read_text(encoding="utf-8") == '{\n  "a": "é"\n}\n'
    files.atomic_write_json(target, {"a": 1})
    assert len(synced) == 1
    mask = os.umask(0o002)
    try:
        files.atomic_write_bytes(tmp_path / "m", b"x")
    finally:
        os.umask(mask)
    assert (tmp_path / "m").stat().st_mode & 0o777 == 0o664
    assert len(synced) == 1  # atomic_write_bytes does not fsync unless asked

    def broken(src, dst):
        raise OSError("disk gone")

    monkeypatch.setattr(files.os, "replace", broken)
    with pytest.raises(OSError, match="disk gone"):
        files.atomic_write_bytes(tmp_path / "x", b"1")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m", "t.json"]


def test_scrubbing_nested_values_and_overlapping_secrets(monkeypatch):
    # catches: the key scrubbing not passed down (dicts in dicts, in arrays); secrets replaced shortest or
    # alphabetically first (a secret inside another leaves the rest visible); an 8-character secret skipped;
    # a non-ASCII secret's JSON form
    assert files.to_jsonable({"o": {"api_key": "v"}, "a": np.array([{"token": "t"}], dtype=object)},
                             _scrub_keys=True) == {"o": {"api_key": "[REDACTED]"}, "a": [{"token": "[REDACTED]"}]}
    monkeypatch.setenv("A_TOKEN", "zzzzzzzz")
    monkeypatch.setenv("B_TOKEN", "aaaaaaaa-zzzzzzzz")
    monkeypatch.setenv("C_SECRET", 'sé"cret-9')
    assert files.scrub({"m": 'x aaaaaaaa-zzzzzzzz y zzzzzzzz z sé"cret-9'}) == {
        "m": "x [REDACTED] y [REDACTED] z [REDACTED]"}


def test_summary_counts_from_partial_metadata():
    # catches: two errors of a kind counted as one, a missing latency list, missing steps counted as 1, the
    # task metrics fed something else than each trial's final info
    e = [trial(i, exc={"kind": "engine", "exception_type": "X"}) for i in (1, 2)]
    assert failures(e)["engine_errors"] == 2

    class Echo:
        @staticmethod
        def summarize_episodes(finals):
            return {"finals": finals}

    bare = trial(0, 0.5)
    s = summarize_trials([bare, trial(1, 1.0, n_steps=4, final_info={"k": 2})], Echo)
    assert (s["decisions"], s["mean_steps"], s["median_latency_s"]) == (0, 2.0, None)
    assert s["task_metrics"] == {"finals": [{}, {"k": 2}]}
    errored = harbor.trial_files(task={"name": "t", "options": {}}, agent={}, job_id="J", job_dir="", seed=0,
                                 started="a", finished="b", agent_info={}, episode={"ticks": []},
                                 exception_info={"kind": "policy"})
    meta = errored["result"]["agent_result"]["metadata"]
    assert (meta["won"], meta["lost"], meta["gave_up"], meta["truncated"], meta["n_steps"]) == (
        False, False, False, False, 0)
