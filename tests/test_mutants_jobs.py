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


# --- the rest of jobs/ (compare, episodes, export, folder, pins, provenance, remote): hand-made job folders,
# written through JobFolder itself, no engine

from s1gym.jobs import compare, episodes, export, pins, provenance, remote
from s1gym.jobs import folder as jf
from s1gym.jobs.episodes import compact_episode, frame_path, read_episode, with_frame_path

TOY_CONFIG = {"s1gym": {"version": "0"}, "agents": [{"name": "rule", "s1gym": {"policy": "rule", "label": "R"}}],
              "tasks": [{"name": "s1/Toy-v0", "options": {"n": 1}}], "seeds": {"start": 0, "count": 3}}


def toy_files(seed, moves, *, score=1.0, won=True, exc=None, info=None, expert=None):
    ticks = [{"t": i, "observation": f"o{i}\n\npara", "candidates": ["a", "b"], "probabilities": [0.25, 0.75],
              "action": ["a", "b"].index(m), "move": m, "reward": 0.5, "feedback": f"f{i}", "score": i,
              "latency_s": 0.1, "info": dict(info or {}),
              **({"expert": expert, "expert_top": 1.0, "expert_p": 0.5} if expert else {})}
             for i, m in enumerate(moves)]
    episode = {"ticks": ticks, "score": score, "won": won, "steps": len(moves), "usage": {"calls": len(moves)}}
    return harbor.trial_files(task={"name": "s1/Toy-v0", "options": {}}, agent={"name": "rule"}, job_id="J",
                              job_dir="", seed=seed, started="a", finished="b", agent_info={"name": "rule"},
                              episode=episode, exception_info=exc)


def toy_job(out, name, trials, config=TOY_CONFIG):
    job = jf.JobFolder.open(out, name, config, resume=False)
    for files_ in trials:
        job.write_trial(files_)
    return job


def test_compare_rows_notes_and_agreement_exactly(tmp_path):
    # catches: each row field and the end tuple, the agreement's share and its empty case, each note's text,
    # the reward read (a missing result.json is None), only_in, the sort by name
    before = toy_job(tmp_path, "b", [toy_files(0, ["a", "b"], info={"policy_calls": 3, "stop_reason": "x"}),
                                     toy_files(1, ["a", "b", "a"]), toy_files(2, ["a"], score=1.0),
                                     toy_files(3, [])]).path
    after = toy_job(tmp_path, "a", [toy_files(0, ["a", "b"], info={"policy_calls": 3, "stop_reason": "x"}),
                                    toy_files(1, ["a", "a"]), toy_files(2, ["a"], score=0.5),
                                    toy_files(3, []), toy_files(4, ["b"])]).path
    rows, end = compare.ticks(before / "Toy__0")
    assert rows == [("a", [0.25, 0.75], "f0", 0, 3, None, None, None, "x"),
                    ("b", [0.25, 0.75], "f1", 1, 3, None, None, None, "x")]
    assert end == (True, 1.0, 2, 2)
    got = compare.compare_jobs(before, after)
    assert [c.name for c in got] == ["Toy__0", "Toy__1", "Toy__2", "Toy__3", "Toy__4"]
    same, moved, reward, empty, only = got
    assert same == compare.TrialComparison("Toy__0", True, True, 1.0, None) and same.identical
    assert moved == compare.TrialComparison(
        "Toy__1", False, True, 1 / 3,
        "tick 1 differs: before ('b', [0.25, 0.75], 'f1', 1, None, None, None, None, None) / after "
        "('a', [0.25, 0.75], 'f1', 1, None, None, None, None, None)")
    assert reward == compare.TrialComparison("Toy__2", False, False, 1.0,
                                             "1 vs 1 ticks, end (True, 1.0, 1, 1) vs (True, 0.5, 1, 1)")
    assert empty == compare.TrialComparison("Toy__3", True, True, 1.0, None)
    assert only == compare.TrialComparison("Toy__4", False, False, 0.0, "only in after", "after")
    assert not only.identical and not moved.identical
    assert compare.compare_jobs(after, before)[-1].only_in == "before"
    assert compare.compare_jobs(after, before)[-1].difference == "only in before"
    (after / "Toy__0" / "result.json").unlink()  # no reward to read: None against 1.0
    (after / "Toy__0" / "result.json").write_text("{")
    r = compare.compare_trial("Toy__0", before / "Toy__0", after / "Toy__0")
    assert r == compare.TrialComparison("Toy__0", True, False, 1.0, "reward 1.0 vs None") and not r.identical
    assert compare.TrialComparison("x", True, True, 1.0).identical
    assert not compare.TrialComparison("x", True, False, 1.0).identical


def test_job_keys_and_jobs_by_setup(tmp_path):
    # catches: the key's parts and order, the agent without an s1gym description, missing lists, the folder map
    assert compare.job_key(TOY_CONFIG) == '["s1/Toy-v0", {"label": "R", "policy": "rule"}, {"n": 1}]'
    assert compare.job_key({"agents": [{"name": "x"}]}) == '[null, {"name": "x"}, null]'
    assert compare.job_key({}) == "[null, {}, null]"
    toy_job(tmp_path, "one", [])
    other = dict(TOY_CONFIG, tasks=[{"name": "s1/Other-v0"}])
    toy_job(tmp_path, "two", [], other)
    assert compare.jobs_by_setup(tmp_path) == {compare.job_key(TOY_CONFIG): tmp_path / "one",
                                               compare.job_key(other): tmp_path / "two"}


def test_episode_format_2_exactly(tmp_path):
    # catches: the paragraph split and ids, the list table (one id a distinct list), what is compacted and
    # what is left, the head's keys, format 1 read as a copy, the unknown format's message, frame paths
    doc = {"format": 1, "task": "t", "seed": 3,
           "ticks": [{"observation": "A\n\nB", "feedback": "B", "candidates": ["x", "y"], "probabilities": [0.5, 0.5]},
                     {"observation": "A", "feedback": None, "candidates": ["x", "y"], "probabilities": [1.0, 0.0],
                      "move": "x"}],
           "final": {"observation": "C\n\nA", "score": 1}}
    compact = compact_episode(doc)
    assert compact == {"format": 2, "task": "t", "seed": 3, "texts": ["A", "B", "C"],
                       "lists": [["x", "y"], [0.5, 0.5], [1.0, 0.0]],
                       "ticks": [{"observation": [0, 1], "feedback": [1], "candidates": 0, "probabilities": 1},
                                 {"observation": [0], "feedback": None, "candidates": 0, "probabilities": 2,
                                  "move": "x"}],
                       "final": {"observation": [2, 0], "score": 1}}
    assert list(compact) == ["format", "task", "seed", "texts", "lists", "ticks", "final"]
    back = episodes.expand_episode(compact)
    assert back == {k: v for k, v in doc.items() if k != "format"} and list(back) == ["task", "seed", "ticks", "final"]
    assert compact_episode({"a": 1}) == {"format": 2, "a": 1, "texts": [], "lists": [], "ticks": [], "final": {}}
    # the head keeps the document's order, ticks and final after it
    assert list(episodes.expand_episode({"format": 2, "ticks": [], "texts": [], "lists": [], "seed": 1})) == [
        "seed", "ticks", "final"]
    assert episodes.expand_episode({"format": 2, "texts": [], "lists": [], "ticks": []}) == {"ticks": [], "final": {}}
    old = {"ticks": [{"observation": "x"}]}
    assert episodes.expand_episode(old) == old and episodes.expand_episode(old) is not old
    assert episodes.expand_episode(dict(old, format=1)) == dict(old, format=1)
    with pytest.raises(ValueError) as err:
        episodes.expand_episode({"format": "2"})
    assert str(err.value) == ("episode file format '2' is not known to this s1gym (it reads 1 and 2); upgrade "
                              "s1gym to read it")
    (tmp_path / "agent").mkdir()
    files.atomic_write_json(tmp_path / "agent" / "episode.json", compact)
    assert read_episode(tmp_path) == back and read_episode(str(tmp_path / "agent" / "episode.json")) == back
    with pytest.raises(FileNotFoundError) as err:
        read_episode(tmp_path / "agent")
    assert str(err.value) == (f"{tmp_path}/agent/agent/episode.json: no episode file; pass a trial folder "
                              "(<job>/<task>__<seed>) or its agent/episode.json")
    assert frame_path(3) == "frames/0003.png" and frame_path(12345) == "frames/12345.png"
    rec = {"frame": 7, "t": 1}
    assert with_frame_path(rec) == {"frame": "frames/0007.png", "t": 1} and rec == {"frame": 7, "t": 1}
    assert with_frame_path({"frame": None, "t": 1}) == {"t": 1}
    assert with_frame_path({"frame": "x"}) == {"frame": "x"} and with_frame_path({}) == {}


def test_decision_rows_and_chat_records_exactly(tmp_path):
    # catches: every column (its source and its fallback), errored trials left out, the seed and step
    # fallbacks, the chosen index from the move, the system/user/assistant texts, _short's cut
    job = toy_job(tmp_path, "j", [toy_files(0, ["b", "a"], expert="a"), toy_files(1, ["a"], exc={"kind": "engine"}),
                                  toy_files(2, ["a"])]).path
    bare = {"seed": 5, "ticks": [{"t": 4, "candidates": ["p"], "move": "p", "action": 0, "probabilities": [1]},
                                 {"candidates": ["p", "q"], "move": "q", "probabilities": [0, 1], "reward": None}],
            "final": {}}
    files.atomic_write_json(job / "Toy__2" / "agent" / "episode.json", bare)
    rows = list(export.decision_rows(job))
    base = {"job": "j", "task": "s1/Toy-v0", "policy": "R", "candidates": ["a", "b"], "probabilities": [0.25, 0.75],
            "reward": 0.5, "trial": "Toy__0", "seed": 0}
    assert rows == [
        {**base, "step": 0, "observation": "o0\n\npara", "chosen": 1, "move": "b", "expert": 0, "done": False},
        {**base, "step": 1, "observation": "o1\n\npara", "chosen": 0, "move": "a", "expert": 0, "done": True},
        {"job": "j", "task": "s1/Toy-v0", "trial": "Toy__2", "seed": 5, "step": 4, "observation": "",
         "candidates": ["p"], "chosen": 0, "move": "p", "expert": None, "probabilities": [1.0],
         "reward": None, "done": False, "policy": "R"},
        {"job": "j", "task": "s1/Toy-v0", "trial": "Toy__2", "seed": 5, "step": 1, "observation": "",
         "candidates": ["p", "q"], "chosen": 1, "move": "q", "expert": None, "probabilities": [0.0, 1.0],
         "reward": None, "done": True, "policy": "R"}]
    assert [list(r) for r in rows][:1] == [list(export.COLUMNS)]
    assert all(type(p) is float for r in rows for p in r["probabilities"])
    files.atomic_write_json(job / "Toy__2" / "agent" / "episode.json", {"ticks": [{"move": "q", "action": 0}], "final": {}})
    files.atomic_write_json(job / "config.json", {"job_name": "j", "s1gym": {}})
    (last,) = [r for r in export.decision_rows(job) if r["trial"] == "Toy__2"]
    assert (last["seed"], last["task"], last["policy"], last["candidates"]) == (2, "?", "?", [])
    files.atomic_write_json(job / "Toy__2" / "result.json", {"trial_name": "Toy__2", "config": {}})
    (last,) = [r for r in export.decision_rows(job) if r["trial"] == "Toy__2"]
    assert last["seed"] == -1  # no seed anywhere
    assert export._expert_index({"expert": "z", "candidates": ["a"]}) is None
    assert export._expert_index({"expert": 0, "candidates": [0]}) is None and export._expert_index({}) is None
    assert export._expert_index({"expert": "b", "candidates": ["a", "b"]}) == 1
    row = {"candidates": ["go", "stay"], "observation": "  Room é.\n", "task": "s1/Blackjack-v0", "chosen": 1,
           "seed": 3, "step": 2}
    assert export.chat_record(row) == {
        "messages": [
            {"role": "system", "content": "You are playing Blackjack. Each turn you read the situation and choose "
                                          "one of the numbered options."},
            {"role": "user", "content": "Room é.\n\nOptions:\n1. go\n2. stay\n\nReply with the option you choose."},
            {"role": "assistant", "content": "stay"}],
        "task": "s1/Blackjack-v0", "seed": 3, "step": 2}
    assert [export._short(x) for x in ("s1/Blackjack-v0", "Go-v12", "a/b/X-v1", "X-v1a", "X-v", "a-v1/b")] == [
        "Blackjack", "Go", "X", "X-v1a", "X-v", "b"]


def test_export_files_and_errors_exactly(tmp_path, monkeypatch):
    # catches: the formats' check and its message, the missing-job message, the chat file's lines (non-ASCII
    # kept), the counts returned, the Parquet schema, pyarrow missing said before anything is written
    import sys

    toy_job(tmp_path / "jobs", "j", [toy_files(0, ["b", "a"]), toy_files(1, ["a"])])
    files.atomic_write_json(tmp_path / "jobs" / "j" / "Toy__1" / "agent" / "episode.json", {
        "seed": 1, "ticks": [{"observation": "café", "candidates": ["a"], "move": "a", "action": 0}], "final": {}})
    for bad, said in ((("x", "chat"), "['chat', 'x']"), ((), "[]")):
        with pytest.raises(export.ExportError) as err:
            export.export_jobs([tmp_path / "jobs"], tmp_path / "out", formats=bad)
        assert str(err.value) == f"export formats are 'parquet' and 'chat', got {said}"
    (tmp_path / "empty").mkdir()
    with pytest.raises(export.ExportError) as err:
        export.export_jobs([tmp_path / "empty", str(tmp_path / "empty")], tmp_path / "out")
    assert str(err.value) == f"no job folders under {tmp_path}/empty, {tmp_path}/empty (run `s1 run ...` first)"
    out = tmp_path / "a" / "b"
    assert export.export_jobs([tmp_path / "jobs"], out, formats=("chat",)) == {out / "chat.jsonl": 3}
    lines = (out / "chat.jsonl").read_text(encoding="utf-8").split("\n")
    rows = list(export.decision_rows(tmp_path / "jobs" / "j"))
    assert lines == [json.dumps(export.chat_record(r), ensure_ascii=False) for r in rows] + [""]
    assert '"café' in lines[2]
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    written = export.export_jobs([tmp_path / "jobs"], tmp_path / "pq")
    assert written == {tmp_path / "pq" / "decisions.parquet": 3, tmp_path / "pq" / "chat.jsonl": 3}
    table = pq.read_table(tmp_path / "pq" / "decisions.parquet")
    assert table.schema == export._parquet_schema() and tuple(table.schema.names) == export.COLUMNS
    assert table.to_pylist() == rows
    assert export.export_jobs([tmp_path / "jobs"], tmp_path / "p2", formats=("parquet",)) == {
        tmp_path / "p2" / "decisions.parquet": 3}
    assert pa is not None
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(export.ExportError) as err:
        export.export_jobs([tmp_path / "jobs"], tmp_path / "none")
    assert str(err.value) == ("writing Parquet needs pyarrow: pip install 's1gym[export]' (or pyarrow), or pass "
                              "--format chat for the JSONL alone")
    assert not (tmp_path / "none").exists()
    assert export.export_jobs([tmp_path / "jobs"], tmp_path / "c", formats=("chat",)) == {
        tmp_path / "c" / "chat.jsonl": 3}


def test_pin_differences_exactly():
    # catches: each line's text and order, the commit line only when the job knew its commit, the python line
    # only when recorded, the files' three cases, the policy's repr, an equal pin left out
    rec = {"s1gym": {"version": "1", "commit": "c1"}, "python": "3.11", "packages": {"a": "1", "b": "2", "c": "3"},
           "files": {"f": "h1", "g": "h2", "h": "h"}, "policy": {"model": "m", "temperature": 0.5}}
    cur = {"s1gym": {"version": "2", "commit": None}, "python": "3.12", "packages": {"a": "1", "b": "9", "d": "4"},
           "files": {"f": "h1", "g": "hX", "i": "h"}, "policy": {"model": "m", "top_p": 1}}
    assert pins.differences(rec, cur) == [
        "s1gym version: job 1, here 2", "s1gym commit: job c1, here unknown", "python: job 3.11, here 3.12",
        "package b: job 2, here 9", "package c: job 3, here not installed", "package d: job not installed, here 4",
        "file g: changed (SHA-256 differs)", "file h: missing here", "file i: not in the job",
        "policy temperature: job 0.5, here None", "policy top_p: job None, here 1"]
    assert pins.differences(rec, rec) == [] and pins.differences({}, {}) == []
    assert pins.differences(rec, dict(rec, s1gym={"version": "1", "commit": "c2"})) == [
        "s1gym commit: job c1, here c2"]
    assert pins.differences({"s1gym": {"version": "1"}, "policy": {"model": "m"}}, {"python": "3", "s1gym": {
        "version": "1", "commit": "c"}, "files": {"f": "h"}, "policy": {"model": "n"}}) == [
        "file f: not in the job", "policy model: job 'm', here 'n'"]


def test_requirements_versions_hashes_and_sampling(tmp_path):
    # catches: the requirement name's split and the tool extras, a missing distribution's version, the hash
    # over blocks, the data files' keys (no code, no caches), the policy unwrapped to its innermost sampling()
    assert [pins._requirement_name(r) for r in (
        'torch>=2.2; extra == "local"', "pytest; extra == 'test'", 'ruff ; extra=="lint"', "  numpy  ",
        "a[x]>=1", "b (>=1)", "c@ https://x", "d!=1", "e~=1", "f<2", "g;python_version<'3.12'",
        'h; extra == "docs"', 'i; extra == "tests"', 'j; extra == "dev"', 'k; extra == "export"')] == [
        "torch", "", "", "numpy", "a", "b", "c", "d", "e", "f", "g", "", "", "", "k"]
    assert pins._version("numpy") == np.__version__ and pins._version("no-such-dist-zz") is None
    data = os.urandom(3 * (1 << 20) + 5)
    (tmp_path / "big").write_bytes(data)
    assert pins.sha256_file(tmp_path / "big") == __import__("hashlib").sha256(data).hexdigest()
    assert pins.sha256_file(str(tmp_path / "big")) == pins.sha256_file(tmp_path / "big")
    root = tmp_path / "pkg" / "data"
    for rel in ("a.json", "sub/b.bin", "x.py", "y.json", "z.pyc", "__pycache__/y.bin"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(rel)
    from types import SimpleNamespace

    got = pins._data_files(SimpleNamespace(data_folder=root, package="pkg"))
    assert list(got) == ["pkg/data/a.json", "pkg/data/sub/b.bin", "pkg/data/y.json"]
    assert got["pkg/data/sub/b.bin"] == pins.sha256_file(root / "sub" / "b.bin")
    assert pins._data_files(SimpleNamespace(data_folder=tmp_path / "none", package="pkg")) == {}
    from s1gym.family import Family

    assert pins._data_files(Family(name="x", package="no_such_pkg_zz", tasks=())) == {}

    class Inner:
        def sampling(self):
            return {"model": "m"}

    class Wrap:
        kind = "search"

        def __init__(self, policy):
            self.policy = policy

        def sampling(self):
            return {"wrapper": 1}

    class NoKind(Wrap):
        kind = property(lambda self: (_ for _ in ()).throw(AttributeError("kind")))

    class Raises:
        def sampling(self):
            raise RuntimeError("no")

    class Nones:
        def sampling(self):
            return None

    assert pins._sampling(Wrap(Wrap(Inner()))) == {"model": "m"}
    assert pins._sampling(NoKind(Inner())) == {"wrapper": 1}
    assert pins._sampling(Wrap(None)) == {"wrapper": 1}
    assert pins._sampling(Raises()) == {} and pins._sampling(Nones()) == {} and pins._sampling(None) == {}
    assert pins._sampling(SimpleNamespace(sampling={"x": 1})) == {}
    pinned = pins.job_pins("NoSuchTask", {}, Wrap(Inner()))
    assert pinned == {"s1gym": {"version": pins.__version__, **pins.source_commit()},
                      "python": __import__("platform").python_version(), "packages": pins.package_versions("s1gym"),
                      "files": {}, "model_files": [], "policy": {"model": "m"}}
    assert "policy" not in pins.job_pins("NoSuchTask", {}) and pins._model_files("NoSuchTask", {}) == []
    cooking = ["s1gym.tasks.twx/data/local_cookingworld.json"]
    search = {"kind": "search", "options": {"heuristic": "auto"}}
    assert pins._model_files("CookingWorld", {"policy": "rule", "wrappers": [search]}) == cooking
    assert pins._model_files("CookingWorld", {"policy": "rule", "wrappers": [dict(search, options={
        "heuristic": "greedy"})]}) == []
    assert pins._model_files("CookingWorld", {"policy": "rule", "wrappers": [dict(search, kind="lookahead")]}) == []
    assert pins._model_files("CookingWorld", {"policy": "local"}) == cooking
    assert pins._model_files("CookingWorld", {"policy": "local", "policy_options": {"pairs": "p"}}) == []
    assert pins._model_files("CookingWorld", {}) == []
    assert pins.package_versions("s1gym")["numpy"] == np.__version__
    assert "pytest" not in pins.package_versions("s1gym")


def test_a_third_party_familys_distribution_and_commit(tmp_path, monkeypatch):
    # catches: the entry point matched by name, the distribution's requirements pinned (not its tool extras),
    # source_commit's checkout (HEAD, dirty only for tracked changes in the package folders) and its fallback
    # to the commit pip recorded (direct_url.json)
    import subprocess

    info = tmp_path / "site" / "thirdfam-1.2.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: thirdfam\nVersion: 1.2\nRequires-Dist: numpy>=1\n"
                                   "Requires-Dist: pytest; extra == \"test\"\n"
                                   "Requires-Dist: no-such-dist-zz; extra == \"local\"\n")
    (info / "entry_points.txt").write_text("[s1gym.families]\nthirdfam = thirdfam_pkg:FAMILY\n")
    (info / "direct_url.json").write_text('{"url": "https://x", "vcs_info": {"vcs": "git", "commit_id": "abc"}}')
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    assert pins.family_distribution("thirdfam") == "thirdfam"
    assert pins.family_distribution("no-such-family") == "s1gym"
    assert pins.package_versions.__wrapped__("thirdfam") == {"numpy": np.__version__, "thirdfam": "1.2"}
    assert list(pins.package_versions.__wrapped__("thirdfam")) == ["numpy", "thirdfam"]
    assert pins.package_versions.__wrapped__("no-such-dist-zz") == {}
    # its task's pins: its distribution's packages and its own data files
    pkg = tmp_path / "site" / "thirdfam_pkg"
    (pkg / "data").mkdir(parents=True)
    (pkg / "data" / "m.json").write_text("{}")
    (pkg / "__init__.py").write_text("from s1gym.family import Family, Task\nFAMILY = Family(name='thirdfam', "
                                     "package='thirdfam_pkg', tasks=(Task(id='third/Third-v0', "
                                     "entry_point='thirdfam_pkg:Env'),))\n")
    from s1gym import registration

    registration._forget()
    try:
        third = pins.job_pins("Third", {})
        assert third["packages"] == {"numpy": np.__version__, "thirdfam": "1.2"}
        assert third["files"] == {"thirdfam_pkg/data/m.json": pins.sha256_file(pkg / "data" / "m.json")}
    finally:
        monkeypatch.undo()
        __import__("sys").modules.pop("thirdfam_pkg", None)
        registration._forget()
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    # not a checkout: the commit pip recorded
    monkeypatch.setattr(pins, "__file__", str(tmp_path / "plain" / "s1gym" / "jobs" / "pins.py"))
    monkeypatch.setattr(pins, "OWN", "thirdfam")
    assert pins.source_commit.__wrapped__() == {"commit": "abc"}
    (info / "direct_url.json").write_text('{"url": "https://x", "dir_info": {}}')
    assert pins.source_commit.__wrapped__() == {}
    (info / "direct_url.json").write_text("{")
    assert pins.source_commit.__wrapped__() == {}
    (info / "direct_url.json").unlink()
    assert pins.source_commit.__wrapped__() == {}
    monkeypatch.setattr(pins, "OWN", "no-such-dist-zz")
    assert pins.source_commit.__wrapped__() == {}
    # a checkout (a scratch repository in tmp_path, not the project's)
    repo = tmp_path / "repo"
    (repo / "s1gym" / "jobs").mkdir(parents=True)
    for folder in ("s1gym", "policies", "wrappers", "tests"):
        (repo / folder).mkdir(exist_ok=True)
        (repo / folder / "a.py").write_text("1")
    (repo / "other.txt").write_text("1")

    def git(*args):
        return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                              check=True, capture_output=True, text=True).stdout

    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "x")
    head = git("rev-parse", "HEAD").strip()
    monkeypatch.setattr(pins, "__file__", str(repo / "s1gym" / "jobs" / "pins.py"))
    assert pins.source_commit.__wrapped__() == {"commit": head, "dirty": False}
    (repo / "other.txt").write_text("2")
    (repo / "tests" / "a.py").write_text("2")
    (repo / "s1gym" / "new.py").write_text("untracked")
    assert pins.source_commit.__wrapped__() == {"commit": head, "dirty": False}
    for folder in ("s1gym", "policies", "wrappers"):  # a tracked change in any of the package's folders
        (repo / folder / "a.py").write_text("2")
        assert pins.source_commit.__wrapped__() == {"commit": head, "dirty": True}, folder
        (repo / folder / "a.py").write_text("1")


def test_provenance_notices_exactly(tmp_path):
    # catches: the model file's provenance read (bad files are none), which agents read a shipped model, the
    # task name of a class without task_name, the config's options and agent read, each notice line's text
    good, bad = tmp_path / "m.json", tmp_path / "b.json"
    good.write_text('{"provenance": {"fold": "train"}, "x": 1}')
    assert provenance._provenance(good) == {"fold": "train"}
    for i, text in enumerate(("{", "[1]", '{"provenance": [1]}', '{"x": 1}')):
        (tmp_path / f"{i}.json").write_text(text)
        assert provenance._provenance(tmp_path / f"{i}.json") == {}
    assert provenance._provenance(bad) == {}
    model = provenance.registration.model_file("CookingWorld")
    used = provenance._models_used
    assert used("CookingWorld", "local", {"pairs": None}, []) == [("Local's shipped model", model)]
    assert used("CookingWorld", "rule", {}, [("search", {"heuristic": "progress"})]) == [
        ("Search's learned progress estimate", model)]
    assert used("CookingWorld", "rule", {}, [("search", {"heuristic": "greedy"}), ("lookahead", {})]) == []
    assert used("CookingWorld", "Local", {}, []) == [] and used("NoSuchTask", "local", {}, []) == []
    named = type("CookingWorld", (), {})
    (notice,) = provenance.fitted_on_played(named, {"fold": "train"}, "local")
    assert notice == ("Local's shipped model for CookingWorld was fitted on train-fold games, the fold these seeds "
                      "played: the score is on its training games, not held-out ones (held out: --option fold=test)")
    config = {"tasks": [{"name": "s1/CookingWorld-v0", "resolved_options": {"fold": "train"}, "options": {"fold": "test"}}],
              "agents": [{"s1gym": {"policy": "local", "policy_options": {},
                                    "wrappers": [{"kind": "search", "options": {"heuristic": "auto"}}]}}]}
    (both,) = provenance.config_notices(config, named)
    assert both.startswith("Local's shipped model and Search's progress estimate for CookingWorld was fitted")
    assert provenance.config_notices({"tasks": [{"options": {"fold": "train"}}],
                                      "agents": [{"s1gym": {"policy": "local"}}]}, named) == [notice]
    greedy = {"tasks": [{"options": {"fold": "train"}}], "agents": [{"s1gym": {
        "policy": "local", "wrappers": [{"kind": "search", "options": {"heuristic": "greedy"}}]}}]}
    assert provenance.config_notices(greedy, named) == [notice]
    assert provenance.config_notices({"tasks": [{"options": {"fold": "train"}}],
                                      "agents": [{"s1gym": {"policy": "local", "policy_options": {"pairs": "p"}}}]},
                                     named) == []
    assert provenance.config_notices({"tasks": [{"options": {"fold": "train"}}]}, named) == []
    assert provenance.config_notices({}, named) == [] and provenance.config_notices(config, None) == []
    rows = [{"task": "T", "label": "L", "fitted_on_played": ["n1", "n2"]}, {"repeated_episodes": 2, "distinct_games": 3},
            {"task": "U", "repeated_episodes": 0, "fitted_on_played": None},
            {"fitted_on_played": ["n3"]}, {"task": "T", "label": "L", "repeated_episodes": 1, "distinct_games": 1}]
    tail = ("episodes replayed a game already played (the task has a finite list of games): {} distinct games; "
            "its score and interval are over the games, each game's episodes averaged first")
    assert provenance.notice_lines(rows) == [
        "note (T, L): n1", "note (T, L): n2", "note (?, ?): 2 of its " + tail.format(3), "note (?, ?): n3",
        "note (T, L): 1 of its " + tail.format(1)]


def test_a_mirror_of_a_memory_url(tmp_path, monkeypatch):
    # catches: the URL and root trimmed, the mirror's place in the cache (shared or a job's own), pull's three
    # cases (missing, same size, other size) and what it removes, push skipping only temp files, url_of, discard,
    # the errors' texts (s3's own storage: tests/test_remote_jobs.py, a SeaweedFS server, too slow to run here)
    import hashlib
    import uuid

    import fsspec

    monkeypatch.setenv("S1GYM_CACHE", str(tmp_path / "cache"))
    bucket = f"mut-{uuid.uuid4().hex}"
    url = f"memory://{bucket}/jobs"
    fs = fsspec.filesystem("memory")
    try:
        fs.pipe(f"/{bucket}/jobs/j/a.txt", b"abc")
        fs.pipe(f"/{bucket}/jobs/j/sub/b.txt", b"12")
        fs.pipe(f"/{bucket}/jobs/Xtop", b"x")
        m = remote.Mirror(url + "/")
        shared = tmp_path / "cache" / "remote" / hashlib.sha256(url.encode()).hexdigest()[:16]
        assert (m.url, m.root, m.local, m.private) == (url, f"/{bucket}/jobs", shared / "shared", False)
        assert repr(m) == f"Mirror('{url}' -> {shared / 'shared'})" and not (shared / "runs").exists()
        (m.local / "j").mkdir(parents=True)
        (m.local / "gone.txt").write_text("x")
        (m.local / "j" / "a.txt").write_text("xyz")  # same size: kept as is
        assert m.pull() == m.local
        assert sorted(p.relative_to(m.local).as_posix() for p in m.local.rglob("*") if p.is_file()) == [
            "Xtop", "j/a.txt", "j/sub/b.txt"]
        assert (m.local / "j" / "a.txt").read_text() == "xyz" and (m.local / "j" / "sub" / "b.txt").read_text() == "12"
        (m.local / "j" / "a.txt").write_text("xy")  # another size: brought down again
        m.pull()
        assert (m.local / "j" / "a.txt").read_text() == "abc"
        for name, text in (("new.txt", "n"), (".new.txt.123.tmp", "t"), (".hidden", "h"), ("x.tmp", "x")):
            (m.local / "j" / name).write_text(text)
        m.push(m.local / "j")
        assert fs.cat(f"/{bucket}/jobs/j/new.txt") == b"n" and fs.cat(f"/{bucket}/jobs/j/.hidden") == b"h"
        assert fs.cat(f"/{bucket}/jobs/j/x.tmp") == b"x" and not fs.exists(f"/{bucket}/jobs/j/.new.txt.123.tmp")
        (m.local / "top.txt").write_text("t")
        m.push(m.local / "top.txt")
        assert fs.cat(f"/{bucket}/jobs/top.txt") == b"t"
        assert m.url_of(m.local) == url and m.url_of(m.local / "j" / "a.txt") == url + "/j/a.txt"
        m.discard()
        assert m.local.is_dir()
        p = remote.Mirror(url, private=True)
        assert p.private and p.local.parent == shared / "runs" and p.local.name.startswith(f"{os.getpid()}-")
        assert p.local.is_dir() and p.pull() == p.local and (p.local / "top.txt").read_text() == "t"
        p.discard()
        assert not p.local.exists()
        p.discard()  # twice: nothing left to remove, no error
        x = remote.Mirror(f"memory://{bucket}/JOBX/")
        assert (x.url, x.root) == (f"memory://{bucket}/JOBX", f"/{bucket}/JOBX")
        empty = remote.Mirror(f"memory://{bucket}-none/x")
        assert empty.pull() == empty.local and empty.local.is_dir() and list(empty.local.iterdir()) == []
    finally:
        fs.rm(f"/{bucket}", recursive=True)
    assert [remote.is_remote(x) for x in ("s3://b", "memory://x", "file:///x", "/x/y", Path("/x"), "a:/b")] == [
        True, True, False, False, False, False]
    with pytest.raises(remote.RemoteJobsError) as err:
        remote.Mirror("nosuch://x")
    assert str(err.value) == "nosuch://x: not a storage URL fsspec knows (Protocol not known: nosuch); use e.g. s3://bucket/jobs"
    try:
        import gcsfs  # noqa: F401
    except ImportError:
        with pytest.raises(remote.RemoteJobsError) as err:
            remote.Mirror("gcs://b/x")
        assert str(err.value).startswith("gcs://b/x: this storage needs a package s1gym does not have here (")
        assert str(err.value).endswith("); for s3:// install the remote extra: pip install 's1gym[remote]'")
    assert str(m._unreachable("read", KeyError("k"))) == (
        f"cannot read {url} (KeyError: 'k'); check the storage's address and credentials (for S3: "
        "AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, and AWS_ENDPOINT_URL for an S3-compatible server) and that the "
        "bucket exists; a job stopped by it continues with --resume")
    # a storage that fails: a file:// folder below a file (write), a dangling link in the folder (read)
    (tmp_path / "afile").write_text("x")
    w = remote.Mirror(f"file://{tmp_path}/afile/jobs")
    w.local.mkdir(parents=True)
    (w.local / "f").write_text("1")
    with pytest.raises(remote.RemoteJobsError, match=r"^cannot write file://.*/afile/jobs \(NotADirectoryError: "):
        w.push(w.local / "f")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "dangling").symlink_to(tmp_path / "nowhere")
    r = remote.Mirror(f"file://{tmp_path}/src")
    with pytest.raises(remote.RemoteJobsError, match=r"^cannot read file://.*/src \(FileNotFoundError: "):
        r.pull()


def test_an_s3_url_nobody_serves(tmp_path, monkeypatch):
    # catches: the listing's failure said as a read of the URL (a closed port on loopback, no server: fast)
    s3fs = pytest.importorskip("s3fs", reason="the remote extra's s3fs is not installed")
    for key, value in {"AWS_ENDPOINT_URL": "http://127.0.0.1:9", "AWS_ACCESS_KEY_ID": "x",
                       "AWS_SECRET_ACCESS_KEY": "y" * 10, "AWS_MAX_ATTEMPTS": "1",
                       "S1GYM_CACHE": str(tmp_path / "cache")}.items():
        monkeypatch.setenv(key, value)
    s3fs.S3FileSystem.clear_instance_cache()
    try:
        with pytest.raises(remote.RemoteJobsError) as err:
            remote.Mirror("s3://nowhere/jobs").pull()
    finally:
        s3fs.S3FileSystem.clear_instance_cache()
    assert str(err.value).startswith("cannot read s3://nowhere/jobs (EndpointConnectionError: ")


def _job_config(path, **extra):
    files.atomic_write_json(path / "config.json", {"job_name": path.name, "s1gym": {}, **extra})


def test_finding_and_reading_job_folders_exactly(tmp_path):
    # catches: what makes a job folder, the walk (a job's inner folders not searched, order, duplicates), the
    # errors' texts, the trials read (bad files skipped, the sort by seed then name, the digest), both digests
    assert not jf.is_job_dir(tmp_path)
    for i, text in enumerate(("{", "[1]", '{"job_name": "x"}', '{"s1gym": {}}', '{"job_name": "x", "s1gym": 0}')):
        (tmp_path / f"c{i}").mkdir()
        (tmp_path / f"c{i}" / "config.json").write_text(text)
    assert [jf.is_job_dir(tmp_path / f"c{i}") for i in range(5)] == [False, False, False, False, True]
    root = tmp_path / "root"
    for rel in ("b/c", "a", "a/inner", "d/e/f"):
        (root / rel).mkdir(parents=True)
        _job_config(root / rel)
    (root / "plain").mkdir()
    assert jf.find_jobs([root]) == [root / "a", root / "b" / "c", root / "d" / "e" / "f"]
    assert jf.find_jobs([str(root / "a"), root, root / "b"]) == [root / "a", root / "b" / "c", root / "d" / "e" / "f"]
    assert jf.find_jobs([root / "a"]) == [root / "a"] and jf.find_jobs([]) == []
    with pytest.raises(FileNotFoundError) as err:
        jf.find_jobs([tmp_path / "nope"])
    assert str(err.value) == f"{tmp_path}/nope: no such folder; pass a job folder or a folder of jobs (e.g. ./jobs)"
    with pytest.raises(NotADirectoryError) as err:
        jf.find_jobs([root / "a" / "config.json"])
    assert str(err.value) == (f"{root}/a/config.json is a file, not a folder; pass a job folder or a folder of jobs "
                              "(e.g. ./jobs)")
    job = root / "a"
    for name, seed in (("B__1", 1), ("A__1", 1), ("C__0", 0)):
        (job / name).mkdir()
        files.atomic_write_json(job / name / "result.json", {"trial_name": name, "config": {"task": {"seed": seed}}})
    for name, text in (("bad", "{"), ("list", "[1]"), ("nameless", '{"x": 1}')):
        (job / name).mkdir()
        (job / name / "result.json").write_text(text)
    assert [t["trial_name"] for t in jf.load_trials(job)] == ["C__0", "A__1", "B__1"]
    assert jf.load_trials(job, lambda t: {**t, "trial_name": t["trial_name"] + "!"})[0] == {
        "trial_name": "C__0!", "config": {"task": {"seed": 0}}}
    ((config, trials),) = list(jf.iter_job_trials([job], lambda t: {"trial_name": t["trial_name"]}))
    # the digest keeps no seed: the order is the names'
    assert config == {"job_name": "a", "s1gym": {}} and trials == [{"trial_name": n} for n in ("A__1", "B__1", "C__0")]
    result = {"trial_name": "T__3", "config": {"task": {"seed": 3}, "agent": {"x": 1}},
              "verifier_result": {"rewards": {"reward": 1.0}},
              "exception_info": {"exception_type": "E", "exception_message": "m", "kind": "engine", "traceback": "tb"},
              "agent_result": {"n_input_tokens": 1, "n_output_tokens": 2, "cost_usd": 0.5, "n_cache_tokens": 9,
                               "metadata": {"n_calls": 4, "won": True}},
              "retries": [{"kind": "engine", "exception_info": {}}], "finished_at": "f", "started_at": "s"}
    digest = {"trial_name": "T__3", "config": {"task": {"seed": 3}}, "verifier_result": {"rewards": {"reward": 1.0}},
              "exception_info": {"exception_type": "E", "exception_message": "m", "kind": "engine"},
              "agent_result": {"n_input_tokens": 1, "n_output_tokens": 2, "cost_usd": 0.5, "metadata": {"n_calls": 4}}}
    assert jf.trial_digest(result) == digest
    assert jf.summary_digest(result) == {**digest, "agent_result": {**digest["agent_result"], "metadata": {
        "n_calls": 4, "won": True}}, "retries": [{"kind": "engine"}], "finished_at": "f"}
    assert jf.trial_digest({"trial_name": "x"}) == {
        "trial_name": "x", "config": {"task": {"seed": 0}}, "verifier_result": None, "exception_info": None,
        "agent_result": {"n_input_tokens": None, "n_output_tokens": None, "cost_usd": None, "metadata": {"n_calls": None}}}
    assert jf.summary_digest({"trial_name": "x"})["retries"] == [] and jf.summary_digest({"trial_name": "x"})[
        "finished_at"] is None


def test_job_names_write_errors_and_out_folders(tmp_path, monkeypatch):
    # catches: each bad job name, the write error's text and fields, the fresh folder's suffixes, the out
    # folder's checks and texts, an unborn folder
    for bad in ("", ".", "..", "a/b", "a\0b", 5):
        with pytest.raises(jf.JobFolderError) as err:
            jf.check_job_name(bad)
    assert str(err.value) == ("--job 5: a job name is one folder name inside --out (no '/', not '.' or '..', not an "
                              "absolute path), e.g. --job cooking-local; choose the parent folder with --out")
    jf.check_job_name("a..b")
    jf.check_job_name("a b")
    e = jf.JobWriteError(Path("/j"), "Toy__1", OSError(28, "No space left on device"))
    assert str(e) == ("cannot write Toy__1 in /j (No space left on device); the trials written before are complete: "
                      "fix the cause (free space on that disk, or pass another --out) and rerun with --resume")
    assert (e.errno, e.job, e.what) == (28, Path("/j"), "Toy__1") and isinstance(e, OSError)
    assert "in /j (plain);" in str(jf.JobWriteError(Path("/j"), "x", OSError("plain")))
    assert "in /j (OSError);" in str(jf.JobWriteError(Path("/j"), "x", OSError()))
    assert __import__("re").fullmatch(r"\d{4}-\d\d-\d\d__\d\d-\d\d-\d\d", jf.default_job_name())
    monkeypatch.setattr(jf, "default_job_name", lambda: "T")
    assert [jf._fresh_job_path(tmp_path / "o").name for _ in range(3)] == ["T", "T-2", "T-3"]
    # 10,000 jobs in one second: their folders in memory (/dev/shm) where there is one, removed at once
    import shutil
    import tempfile

    many = Path(tempfile.mkdtemp(dir="/dev/shm" if os.access("/dev/shm", os.W_OK) else tmp_path))
    try:
        for k in range(1, 10_000):
            (many / ("T" if k == 1 else f"T-{k}")).mkdir()
        with pytest.raises(jf.JobFolderError) as err:
            jf._fresh_job_path(many)
        assert str(err.value) == f"{many}: 10,000 jobs started at T; pass --job NAME"
    finally:
        shutil.rmtree(many)
    (tmp_path / "file").write_text("x")
    with pytest.raises(jf.JobFolderError) as err:
        jf._fresh_job_path(tmp_path / "file")
    assert str(err.value) == (f"cannot write the job folder at {tmp_path}/file/T (Not a directory); pass --out with "
                              "a folder you can write (e.g. --out jobs or --out ~/s1gym-jobs)")
    with pytest.raises(jf.JobFolderError) as err:
        jf._check_out_dir(tmp_path / "file")
    assert str(err.value) == (f"--out {tmp_path}/file is a file, not a folder; pass a folder for the job folders "
                              "(e.g. --out jobs)")
    with pytest.raises(jf.JobFolderError, match=r"^cannot write the job folder at .*/file/sub \(Not a directory\)"):
        jf._check_out_dir(tmp_path / "file" / "sub")
    jf._check_out_dir(tmp_path / "new" / "deep")
    assert (tmp_path / "new" / "deep").is_dir()
    assert jf._unwritable(Path("/p"), OSError("why")) == (
        "cannot write the job folder at /p (why); pass --out with a folder you can write (e.g. --out jobs or --out "
        "~/s1gym-jobs)")
    u = tmp_path / "u"
    assert not jf._unborn(u)
    u.mkdir()
    assert not jf._unborn(u)
    (u / ".config.json.1.tmp").write_text("")
    assert jf._unborn(u)
    (u / ".x.tmp").mkdir()
    assert not jf._unborn(u)
    (u / ".x.tmp").rmdir()
    (u / ".keep").write_text("")
    assert not jf._unborn(u)
    (u / ".keep").unlink()
    (u / "a.tmp").write_text("")
    assert not jf._unborn(u)


def test_a_job_folder_opened_resumed_and_written_exactly(tmp_path):
    # catches: the config written (name, jobs_dir), the result's counts and key, resume's checks and their texts,
    # the latest matching job found, pending and errors, frames of an earlier attempt removed, the result
    # rewritten at most every RESULT_EVERY_S, the summary's fields
    out = tmp_path / "jobs"
    job = jf.JobFolder.open(out, "j", TOY_CONFIG, resume=False)
    assert job.location == str(out / "j") and job.mirror is None
    assert files.read_json(out / "j" / "config.json") == {**TOY_CONFIG, "job_name": "j", "jobs_dir": str(out)}
    first = files.read_json(out / "j" / "result.json")
    assert (first["id"], first["started_at"], first["finished_at"]) == (job.id, job.started_at, None)
    assert first["n_total_trials"] == 3 and list(first["stats"]["evals"]) == ["rule__s1/Toy-v0"]
    job.RESULT_EVERY_S = 0.0  # every trial rewrites result.json (the default: at most once a second)
    engine = {"kind": "engine", "exception_type": "EngineCrashed", "exception_message": "boom"}
    frames = dict(toy_files(1, ["a"], exc=engine), frames={"frames/0000.png": b"png0", "frames/0001.png": b"png1"})
    job.write_trial(toy_files(0, ["a"]))
    job.write_trial(frames)
    assert sorted(p.name for p in (out / "j" / "Toy__1" / "agent" / "frames").iterdir()) == ["0000.png", "0001.png"]
    assert job.errors() == {"EngineCrashed: boom": ["Toy__1"]}
    assert job.pending([0, 1, 2], "s1/Toy-v0") == [2]
    job.write_trial(toy_files(1, ["a"], exc=dict(engine, exception_message="again")))
    assert not list((out / "j" / "Toy__1" / "agent" / "frames").iterdir())
    assert job.errors() == {"EngineCrashed: again": ["Toy__1"]}
    assert job.pending([0, 1, 2], "s1/Toy-v0", retry_errors=True) == [1, 2] and list(job.trials) == ["Toy__0"]
    job.RESULT_EVERY_S = 3600.0
    job.write_trial(toy_files(2, ["b"]))
    stats = files.read_json(out / "j" / "result.json")["stats"]
    assert (stats["n_trials"], stats["n_errors"]) == (2, 1)  # not rewritten within the hour: Toy__1's error
    episode_text = (out / "j" / "Toy__2" / "agent" / "episode.json").read_text()
    assert "\n" not in episode_text[:-1] and episode_text.endswith("}\n")  # one line, no indent
    job.write_result(None)  # asked directly (every_s 0 by default): rewritten now
    assert files.read_json(out / "j" / "result.json")["stats"]["n_errors"] == 0
    summary = job.finish({"label": "R"}, Metrics)
    result = files.read_json(out / "j" / "result.json")
    assert result["finished_at"] and result["stats"]["n_trials"] == 2 and result["stats"]["n_errors"] == 0
    on_disk = files.read_json(out / "j" / "summary.json")
    assert on_disk == summary and (summary["label"], summary["job_name"], summary["job_dir"]) == ("R", "j", str(out / "j"))
    assert (summary["episodes"], summary["fitted_on_played"], summary["errors"]) == (3, [], 1)
    assert summary["task_metrics"] == {"finals": 2, "arr": [1, 2]}  # the task's metrics, over the scored trials
    job.close()
    # resume: the same id and start, the trials on disk; a different setup, a non-job, a missing name refused
    again = jf.JobFolder.open(out, "j", TOY_CONFIG, resume=True)
    assert (again.id, again.started_at, sorted(again.trials)) == (job.id, job.started_at, ["Toy__0", "Toy__1", "Toy__2"])
    assert again.pending([0, 1, 2, 3], "s1/Toy-v0") == [3]
    with pytest.raises(jf.JobFolderError) as err:
        jf.JobFolder.open(out, "j", TOY_CONFIG, resume=False)
    assert str(err.value) == f"{out}/j already exists; pass --resume to continue it or another --job NAME"
    with pytest.raises(jf.JobFolderError) as err:
        jf.JobFolder.open(out, "j", dict(TOY_CONFIG, seeds={"start": 1, "count": 3}), resume=True)
    assert str(err.value) == (f"--resume: {out}/j ran a different task, options, policy or seed range; start a new job "
                              "(another --job NAME) instead")
    assert jf.JobFolder.open(out, "j", dict(TOY_CONFIG, s1gym={"other": 1}), resume=True).id == job.id
    assert files.read_json(out / "j" / "config.json")["s1gym"] == {"other": 1}  # the config rewritten
    (out / "stray").mkdir()
    (out / "stray" / "x").write_text("")
    with pytest.raises(jf.JobFolderError) as err:
        jf.JobFolder.open(out, "stray", TOY_CONFIG, resume=True)
    assert str(err.value) == f"--resume: {out}/stray is not a job folder (no config.json with job_name)"
    with pytest.raises(jf.JobFolderError) as err:
        jf.JobFolder.open(out, "k", TOY_CONFIG, resume=True)
    assert str(err.value) == (f"--resume: there is no job 'k' in {out} (its jobs: j); drop --resume to start it, or "
                              "pass the --out and --job of the job to continue")
    with pytest.raises(jf.JobFolderError, match=r"\(its jobs: none\)"):
        jf.JobFolder.open(tmp_path / "nothing", "k", TOY_CONFIG, resume=True)
    with pytest.raises(jf.JobFolderError) as err:
        jf.JobFolder.open(tmp_path / "nothing", None, TOY_CONFIG, resume=True)
    assert str(err.value) == (f"--resume: no job in {tmp_path}/nothing ran this task, options, policy and seeds; "
                              "drop --resume to start a new job, or name the job to continue with --job NAME")
    many = tmp_path / "many"
    for i in range(11):
        (many / f"m{i:02d}").mkdir(parents=True)
        _job_config(many / f"m{i:02d}")
        if i >= 9:
            with pytest.raises(jf.JobFolderError) as err:
                jf.JobFolder.open(many, "k", TOY_CONFIG, resume=True)
            more = " ..." if i == 10 else ""
            assert f"(its jobs: {', '.join(f'm{k:02d}' for k in range(10))}{more});" in str(err.value)
    with pytest.raises(jf.JobFolderError, match="^--resume: no job in .*/many ran this task"):
        jf.JobFolder.open(many, None, TOY_CONFIG, resume=True)
    # no name: the latest job of the same setup
    later = jf.JobFolder.open(out, "later", TOY_CONFIG, resume=False)
    jf.JobFolder.open(out, "other", dict(TOY_CONFIG, seeds={"count": 9}), resume=False)
    os.utime(out / "j", (1e9, 1e9))
    os.utime(out / "later", (2e9, 2e9))
    assert jf.JobFolder.open(out, None, TOY_CONFIG, resume=True).path == out / "later"
    os.utime(out / "j", (3e9, 3e9))
    assert jf.JobFolder.open(out, None, TOY_CONFIG, resume=True).id == job.id
    assert later.id != job.id
    # an empty folder, or one holding only a killed run's temp file, starts afresh (resumed or not)
    (out / "empty").mkdir()
    assert jf.JobFolder.open(out, "empty", TOY_CONFIG, resume=True).trials == {}
    (out / "unborn").mkdir()
    (out / "unborn" / ".config.json.9.tmp").write_text("{")
    fresh = jf.JobFolder.open(out, "unborn", TOY_CONFIG, resume=False)
    assert sorted(p.name for p in fresh.path.iterdir()) == ["config.json", "result.json"]
    no_seeds = jf.JobFolder.open(out, "ns", {k: v for k, v in TOY_CONFIG.items() if k != "seeds"}, resume=False)
    no_seeds.write_trial(toy_files(0, ["a"]))
    no_seeds.write_result("f")
    assert files.read_json(no_seeds.path / "result.json")["n_total_trials"] == 1
    bare = jf.JobFolder.open(out, "bare", {"s1gym": {}}, resume=False)
    assert list(files.read_json(bare.path / "result.json")["stats"]["evals"]) == ["?__?"]
    # no name: a fresh folder named by the start time
    assert __import__("re").fullmatch(r"\d{4}-\d\d-\d\d__\d\d-\d\d-\d\d(-\d+)?",
                                      jf.JobFolder.open(tmp_path / "fresh", None, TOY_CONFIG, resume=False).path.name)
    # a job killed before its result.json: resumed with a new id
    (bare.path / "result.json").unlink()
    assert jf.JobFolder.open(out, "bare", {"s1gym": {}}, resume=True).id != bare.id


def test_a_trial_or_result_that_cannot_be_written(tmp_path):
    # catches: the JobWriteError of a trial's files and of the job's result.json (its folder, what, cause)
    job = toy_job(tmp_path, "j", [])
    job.RESULT_EVERY_S = 0.0
    (job.path / "Toy__9").write_text("a file where the trial's folder goes")
    with pytest.raises(jf.JobWriteError) as err:
        job.write_trial(toy_files(9, ["a"]))
    # the cause: the file where the folder goes (EEXIST or ENOTDIR, as the writer makes the folder)
    assert (err.value.job, err.value.what) == (job.path, "Toy__9") and err.value.errno in (17, 20)
    assert str(err.value).startswith(f"cannot write Toy__9 in {job.path} ({os.strerror(err.value.errno)}); the "
                                     "trials written")
    (job.path / "result.json").unlink()
    (job.path / "result.json").mkdir()
    with pytest.raises(jf.JobWriteError) as err:
        job.write_trial(toy_files(1, ["a"]))
    assert (err.value.job, err.value.what, err.value.errno) == (job.path, "result.json", 21)
    assert str(err.value).startswith(f"cannot write result.json in {job.path} (Is a directory); the trials")
    assert (job.path / "Toy__1" / "result.json").is_file()  # the trial itself was written


def test_out_folders_the_system_refuses(tmp_path):
    # catches: the permission check (W_OK and X_OK) and its text, the config's write failure said of the folder
    # (Linux: /proc/self is not writable; /sys passes os.access as root but refuses the write)
    if not Path("/proc/self").is_dir():
        pytest.skip("no /proc here")
    with pytest.raises(jf.JobFolderError) as err:
        jf.JobFolder.open("/proc/self", "j", TOY_CONFIG, resume=False)
    assert str(err.value) == ("--out /proc/self: no permission to write there; pass a folder you can write (e.g. "
                              "--out jobs)")
    if not os.access("/sys", os.W_OK | os.X_OK):
        pytest.skip("/sys is not writable for os.access here (not root)")
    with pytest.raises(jf.JobFolderError) as err:
        jf.JobFolder.open("/sys", "j", TOY_CONFIG, resume=False)
    assert str(err.value).startswith("cannot write the job folder at /sys/j (")
    assert str(err.value).endswith("); pass --out with a folder you can write (e.g. --out jobs or --out ~/s1gym-jobs)")


def test_a_job_at_a_memory_url(tmp_path, monkeypatch):
    # catches: the job's own mirror, every file pushed as written, the location said as a URL (in summary.json
    # and in errors), the mirror removed on close and on a refused open, find_jobs reading a URL
    import hashlib
    import uuid

    import fsspec

    monkeypatch.setenv("S1GYM_CACHE", str(tmp_path / "cache"))
    bucket = f"mut-{uuid.uuid4().hex}"
    url = f"memory://{bucket}/jobs"
    runs = tmp_path / "cache" / "remote" / hashlib.sha256(url.encode()).hexdigest()[:16] / "runs"
    fs = fsspec.filesystem("memory")
    try:
        job = jf.JobFolder.open(url, "j", TOY_CONFIG, resume=False)
        assert job.location == url + "/j" and job.mirror.private and job.path.parent.parent == runs
        assert json.loads(fs.cat(f"/{bucket}/jobs/j/config.json"))["jobs_dir"] == url
        assert json.loads(fs.cat(f"/{bucket}/jobs/j/result.json"))["stats"]["n_trials"] == 0
        job.RESULT_EVERY_S = 0.0
        job.write_trial(toy_files(0, ["a"]))
        assert json.loads(fs.cat(f"/{bucket}/jobs/j/Toy__0/result.json"))["trial_name"] == "Toy__0"
        assert json.loads(fs.cat(f"/{bucket}/jobs/j/result.json"))["stats"]["n_trials"] == 1
        summary = job.finish({}, None)
        assert summary["job_dir"] == url + "/j" and json.loads(fs.cat(f"/{bucket}/jobs/j/summary.json")) == summary
        local = job.path
        job.close()
        assert not local.exists() and list(runs.iterdir()) == []
        with pytest.raises(jf.JobFolderError) as err:
            jf.JobFolder.open(url, "j", TOY_CONFIG, resume=False)
        assert str(err.value) == f"{url}/j already exists; pass --resume to continue it or another --job NAME"
        assert list(runs.iterdir()) == []
        with pytest.raises(jf.JobFolderError):
            jf.JobFolder.open(url, "j", {**TOY_CONFIG, "agents": []}, resume=True)
        assert list(runs.iterdir()) == []
        resumed = jf.JobFolder.open(url, "j", TOY_CONFIG, resume=True)
        assert (resumed.id, list(resumed.trials)) == (job.id, ["Toy__0"])
        resumed.close()
        (found,) = jf.find_jobs([url])
        assert found.name == "j" and found.parent.name == "shared" and (found / "Toy__0" / "result.json").is_file()
    finally:
        fs.rm(f"/{bucket}", recursive=True)


def test_temp_names_never_take_an_existing_file_and_give_up_after_100_tries(tmp_path, monkeypatch):
    # catches: O_EXCL dropped (another's temp file taken over), a taken name ending the search, the number of
    # tries and the random part's size, the message
    target = tmp_path / "f.json"
    taken = tmp_path / ".f.json.00000000.tmp"
    taken.write_text("someone else's")
    draws = iter([b"\0\0\0\0", b"\0\0\0\1"])
    monkeypatch.setattr(files.os, "urandom", lambda n: next(draws))
    files.atomic_write_bytes(target, b"mine")
    assert target.read_bytes() == b"mine" and taken.read_text() == "someone else's"
    sizes = []
    monkeypatch.setattr(files.os, "urandom", lambda n: (sizes.append(n), b"\0\0\0\0")[1])
    with pytest.raises(FileExistsError, match=r"no free temporary name beside .*f\.json after 100 tries"):
        files.atomic_write_bytes(target, b"x")
    assert sizes == [4] * 100 and target.read_bytes() == b"mine"


def test_kept_trials_keep_their_values_and_share_repeated_ones(monkeypatch):
    # catches: a value replaced by None on the way in or once the table is full, repeats not shared
    monkeypatch.setattr(jf, "_SHARED", {})
    first = jf._shared(0.123456789)
    assert first == 0.123456789
    again = jf._shared(float("0.123456789"))
    assert again == first and again is first
    full = {v: v for v in (i + 0.5 for i in range(4096))}
    monkeypatch.setattr(jf, "_SHARED", full)
    usage = (1, 2, 3.5, 7)
    assert jf._shared(usage) == usage and usage not in jf._SHARED  # full: kept as it is, not remembered
    known = next(k for k in full if k == 5.5)
    assert jf._shared(float("5.5")) is known  # full, but a value in the table is still shared
    assert jf._shared([1]) == [1]  # an unhashable one
