"""The eval runner: Harbor-shaped job folders, errors, resume, workers, Ray, secrets.

Most tests use ``tinytest/Counter-v0``, a tiny S1Env registered here (reached
as ``test_runner:tinytest/Counter-v0`` so spawned workers and Ray workers
import this module and register it too), and tiny policies defined here, so
the runner is tested without waiting on the real tasks and models.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
import pytest
from job_schema import validate_job

from s1gym import jobs
from s1gym.core import BasePolicy, Decision, S1Env, Situation, Usage
from s1gym.runner.spec import RunError, evaluate
from s1gym.stats import bootstrap_ci

TASK = "test_runner:tinytest/Counter-v0"
HERE = Path(__file__).resolve().parent


class CounterEnv(S1Env):
    """Count up to a seed-dependent target: 'add 1' and 'add 2' move, overshooting loses.

    Options: ``fail_seed`` makes a move raise in that seed's game (an engine
    crash); ``delay`` sleeps per move (for the kill-and-resume test).
    """

    task_name = "Counter"
    default_max_candidates = 3
    default_max_steps = 12
    option_help: ClassVar[dict[str, str]] = {
        "fail_seed": "seed whose game crashes",
        "delay": "seconds per move",
    }

    def __init__(self, fail_seed: int | None = None, delay: float = 0.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.fail_seed, self.delay = fail_seed, delay

    def _new_game(self, seed, options):
        self.seed_, self.x = seed, 0
        self.target = 3 + int(self.np_random.integers(0, 4))
        return f"Reach {self.target}."

    def _legal_moves(self):
        return ["add 1", "add 2", "wait"]

    def _play(self, move):
        if self.delay:
            time.sleep(self.delay)
        if self.seed_ == self.fail_seed and self.x >= 1:
            raise RuntimeError("engine crashed")
        self.x += {"add 1": 1, "add 2": 2, "wait": 0}[move]
        return f"You {move}."

    def _describe(self):
        return f"Count {self.x} of {self.target}."

    def _progress(self):
        return min(self.x / self.target, 1.0), self.x == self.target, self.x > self.target

    def _fork_into(self, clone):
        pass

    @classmethod
    def summarize_episodes(cls, final_infos):
        return {"final_steps": [int(i["steps"]) for i in final_infos]}


if "tinytest/Counter-v0" not in gym.registry:
    gym.register("tinytest/Counter-v0", entry_point=CounterEnv, order_enforce=False, disable_env_checker=True)


class ExpertCounterEnv(CounterEnv):
    """The counter with an expert: 'add 2' while it cannot overshoot, else 'add 1' (Greedy's choice)."""

    def expert_action(self) -> str:
        return "add 2" if self.target - self.x >= 2 else "add 1"


class LostExpertCounterEnv(CounterEnv):
    """The counter whose expert fails past 2: a lookup that finds nothing (no expert here), then a bug."""

    def expert_action(self) -> str:
        if self.x == 2:
            raise LookupError("no line for 2")  # as a web rule that cannot find what its next move needs
        if self.x > 2:
            raise ValueError("the expert's own bug")
        return "add 1"


for _name, _entry in (("ExpertCounter", ExpertCounterEnv), ("LostExpertCounter", LostExpertCounterEnv)):
    if f"tinytest/{_name}-v0" not in gym.registry:
        gym.register(f"tinytest/{_name}-v0", entry_point=_entry, order_enforce=False, disable_env_checker=True)


class First(BasePolicy):
    """Always the first candidate ('add 1'): wins every game. Reports made-up tokens and cost."""

    name = "first"

    def decide(self, situation: Situation) -> Decision:
        p = np.zeros(len(situation.candidates))
        p[0] = 1.0
        return Decision(
            p, 0, Usage(calls=1, input_tokens=10, output_tokens=1, cost_usd=0.001), {"note": "one"}
        )


class Greedy(BasePolicy):
    """'add 2' while it cannot overshoot, else 'add 1': deterministic, fewer steps than First."""

    name = "greedy"

    def decide(self, situation: Situation) -> Decision:
        x, target = (int(v) for v in situation.observation.split("Count ")[1].split(".")[0].split(" of "))
        action = 1 if target - x >= 2 else 0
        return Decision(np.array([0.25, 0.75, 0.0]) if action else np.array([0.75, 0.25, 0.0]), action)


class Seeded(BasePolicy):
    """An RNG policy with a mutable seed: its games must not depend on which worker played them."""

    name = "seeded"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def reset(self) -> None:
        self.rng = np.random.default_rng(self.seed)

    def decide(self, situation: Situation) -> Decision:
        n = len(situation.candidates)
        return Decision(np.full(n, 1 / n), int(self.rng.integers(2)))


class Leaky(BasePolicy):
    """Carries an API key in its config and echoes an auth header into its info."""

    name = "leaky"

    def __init__(self, api_key: str = "", base_url: str = "") -> None:
        self.api_key = api_key

    def decide(self, situation: Situation) -> Decision:
        return Decision(
            np.array([1.0, 0, 0]),
            0,
            info={"headers": {"Authorization": f"Bearer {self.api_key}"}, "echo": f"key={self.api_key}"},
        )


class Modelled(First):
    name = "modelled"
    model = "tiny-model-1"


class Unpicklable(First):
    def __init__(self) -> None:
        self.hook = lambda: None


def episodes(job_dir: Path) -> dict[int, list[tuple]]:
    """Per seed: the played ticks without timings (what must match across backends)."""
    out = {}
    for path in sorted(job_dir.glob("*/agent/episode.json")):
        doc = jobs.read_episode(path)
        out[doc["seed"]] = [
            (t["observation"], t["move"], t["probabilities"], t["reward"], t["score"]) for t in doc["ticks"]
        ]
    return out


def test_job_folder_matches_schema_and_numbers(tmp_path):
    summary = evaluate(TASK, "test_runner:First", episodes=4, seed=10, out=tmp_path, job="j")
    job = tmp_path / "j"
    assert validate_job(job) == 4
    assert summary["episodes"] == 4 and summary["scored"] == 4 and summary["errors"] == 0
    assert summary["mean_score"] == 1.0 and summary["wins"] == 4
    result = json.loads((job / "result.json").read_text())
    stats = result["stats"]
    assert result["n_total_trials"] == 4 and result["finished_at"]
    assert stats["n_completed_trials"] == 4 and stats["n_errored_trials"] == 0
    steps = sum(
        json.loads(p.read_text())["agent_result"]["metadata"]["n_steps"] for p in job.glob("*/result.json")
    )
    assert summary["calls"] == steps and stats["n_input_tokens"] == 10 * steps
    assert stats["cost_usd"] == pytest.approx(0.001 * steps)
    assert summary["mean_steps"] == steps / 4
    assert summary["task_metrics"]["final_steps"] and sum(summary["task_metrics"]["final_steps"]) == steps
    trial = json.loads((job / "Counter__10" / "result.json").read_text())
    assert trial["verifier_result"]["rewards"]["reward"] == 1.0
    assert trial["config"]["task"]["seed"] == 10
    episode = jobs.read_episode(job / "Counter__10")
    first = episode["ticks"][0]
    assert first["candidates"] == ["add 1", "add 2", "wait"] and first["move"] == "add 1"
    assert first["info"] == {"note": "one"} and first["usage"]["input_tokens"] == 10
    assert episode["final"]["won"] is True
    assert not list(job.rglob("*.tmp"))


def test_an_expert_that_fails_never_ends_the_episode_it_measures(tmp_path):
    """Expert agreement read off an expert that raises: a LookupError is "no expert here", any other error is
    recorded in the tick; the episode is played to its end either way (a web rule off its path had errored
    every Search(Uniform) trial of email-inbox-forward)."""
    summary = evaluate("test_runner:tinytest/LostExpertCounter-v0", "test_runner:First", episodes=1, out=tmp_path,
                       job="lost")
    assert summary["errors"] == 0 and summary["wins"] == 1
    ticks = jobs.read_episode(next((tmp_path / "lost").glob("*/agent/episode.json")))["ticks"]
    by_x = {int(t["observation"].split("Count ")[1].split(" of ")[0]): t for t in ticks}
    assert by_x[0]["expert"] == "add 1" and by_x[1]["expert"] == "add 1"
    assert "expert" not in by_x[2] and "expert_error" not in by_x[2]
    assert by_x[3]["expert_error"] == "ValueError: the expert's own bug" and "expert" not in by_x[3]
    assert summary["expert_decisions"] == 2


def test_agreement_with_the_expert_is_recorded_per_decision_and_summarised(tmp_path):
    from s1gym.reporting.replay.page import Strings, load_trial, trial_data
    from s1gym.reporting.table import COLUMNS, row_cells, table_rows
    from s1gym.runner.episode import agreement

    assert agreement([0.5, 0.3, 0.2], 0) == {"expert_p": 0.5, "expert_top": 1.0}
    assert agreement([0.4, 0.4, 0.2], 1) == {"expert_p": 0.4, "expert_top": 0.5}  # a tie for the top is shared
    assert agreement([0.5, 0.3, 0.2], 2)["expert_top"] == 0.0
    expert = "test_runner:tinytest/ExpertCounter-v0"
    greedy = evaluate(expert, Greedy(), episodes=3, out=tmp_path, job="greedy")
    first = evaluate(expert, "test_runner:First", episodes=3, out=tmp_path, job="first")
    none = evaluate(TASK, Greedy(), episodes=3, out=tmp_path, job="none")
    assert greedy["agreement_at_1"] == 1.0 and greedy["mean_expert_p"] == pytest.approx(0.75)
    assert greedy["expert_decisions"] == greedy["decisions"]
    # First plays 'add 1' with probability 1: it agrees exactly where the expert says 'add 1'
    ticks = [t for p in sorted((tmp_path / "first").glob("*/agent/episode.json")) for t in jobs.read_episode(p)["ticks"]]
    says_one = [t["expert"] == "add 1" for t in ticks]
    assert first["agreement_at_1"] == pytest.approx(sum(says_one) / len(ticks)) == first["mean_expert_p"]
    assert 0 < first["agreement_at_1"] < 1
    assert none["agreement_at_1"] is None and none["expert_decisions"] == 0
    assert all("expert" not in t for p in (tmp_path / "none").glob("*/agent/episode.json")
               for t in jobs.read_episode(p)["ticks"])
    rows = {(r["task"], r["policy"]): row_cells(r) for r in table_rows([tmp_path])}
    at = COLUMNS.index("agree@1")
    assert COLUMNS[at + 1] == "p(expert)"
    assert rows[("tinytest/ExpertCounter", "greedy")][at:at + 2] == ["1.000", "0.750"]
    assert rows[("tinytest/Counter", "greedy")][at:at + 2] == ["–", "–"]  # no expert
    trial = load_trial(next((tmp_path / "first").glob("ExpertCounter__*")))
    data = trial_data(trial, Strings())
    marked = [(tk["expert"], [i for _, _, i in tk["top"]]) for tk in data["ticks"]]
    assert all(e is not None and e in top for e, top in marked)  # the replay names and marks the expert's move


def test_agreement_off_never_asks_the_expert_and_the_table_shows_dashes(tmp_path, monkeypatch):
    from s1gym.reporting.table import COLUMNS, row_cells, table_rows
    from s1gym.ui import cli

    asked = []
    monkeypatch.setattr(ExpertCounterEnv, "expert_action", lambda self: asked.append(self.x) or "add 1")
    expert = "test_runner:tinytest/ExpertCounter-v0"
    off = evaluate(expert, Greedy(), episodes=2, out=tmp_path, job="off", agreement=False)
    assert asked == [] and off["agreement_at_1"] is None and off["expert_decisions"] == 0 and off["wins"] == 2
    assert json.loads((tmp_path / "off" / "config.json").read_text())["s1gym"]["agreement"] is False
    on = evaluate(expert, Greedy(), episodes=2, out=tmp_path, job="on")
    assert len(asked) == on["decisions"] == off["decisions"] and on["agreement_at_1"] is not None
    at = COLUMNS.index("agree@1")
    assert [row_cells(r)[at:at + 2] for r in table_rows([tmp_path / "off"])] == [["–", "–"]]
    assert [row_cells(r)[at:at + 2] for r in table_rows([tmp_path / "on"])] != [["–", "–"]]
    argv = ["run", "CookingWorld", "--policy", "random"]
    assert cli.build_parser(argv).parse_args(argv).agreement == "on"
    assert cli.build_parser(argv).parse_args([*argv, "--agreement", "off"]).agreement == "off"


def test_policy_object_and_wrapper_names(tmp_path):
    summary = evaluate(TASK, Greedy(), episodes=3, out=tmp_path, job="g")
    assert summary["policy"] == "greedy" and summary["wins"] == 3
    assert summary["calls"] == 0 and summary["cost_usd"] == 0


def test_wrapped_policy_through_package_entry_point(tmp_path):
    import s1gym

    summary = s1gym.evaluate(
        TASK, "test_runner:Modelled", wrappers="lookahead", episodes=2, out=tmp_path, job="m"
    )
    assert summary["label"] == "modelled+lookahead" and summary["wins"] == 2
    trial = json.loads((tmp_path / "m" / "Counter__0" / "result.json").read_text())
    assert trial["agent_info"]["model_info"] == {"name": "tiny-model-1", "provider": "test_runner:Modelled"}
    assert trial["agent_info"]["wrappers"] == ["lookahead"]
    assert validate_job(tmp_path / "m") == 2


def test_failing_episode_is_recorded_and_job_completes(tmp_path):
    summary = evaluate(
        TASK, "test_runner:First", episodes=3, seed=0, options={"fail_seed": 1}, out=tmp_path, job="f"
    )
    job = tmp_path / "f"
    assert validate_job(job) == 3
    assert summary["errors"] == 1 and summary["scored"] == 2 and summary["mean_score"] == 1.0
    bad = json.loads((job / "Counter__1" / "result.json").read_text())
    assert bad["exception_info"]["exception_type"] == "RuntimeError"
    assert "engine crashed" in bad["exception_info"]["exception_message"]
    assert "Traceback" in bad["exception_info"]["exception_traceback"]
    assert bad["verifier_result"] is None
    partial = jobs.read_episode(job / "Counter__1")
    assert partial["ticks"] and partial["ticks"][-1]["reward"] is None  # the tick whose step raised
    stats = json.loads((job / "result.json").read_text())["stats"]
    assert stats["n_errored_trials"] == 1 and stats["n_completed_trials"] == 2
    assert next(iter(stats["evals"].values()))["exception_stats"] == {"RuntimeError": ["Counter__1"]}
    # the game after the crash is played on a fresh env and wins
    assert (
        json.loads((job / "Counter__2" / "result.json").read_text())["verifier_result"]["rewards"]["reward"]
        == 1
    )


def test_resume_skips_finished_and_reruns_missing(tmp_path):
    evaluate(TASK, "test_runner:First", episodes=5, out=tmp_path, job="r")
    job = tmp_path / "r"
    kept = json.loads((job / "Counter__0" / "result.json").read_text())["id"]
    (job / "Counter__3" / "result.json").unlink()  # as if killed during trial 3
    (job / ".result.json.abc.tmp").write_text("{half")
    with pytest.raises(RunError, match="already exists"):
        evaluate(TASK, "test_runner:First", episodes=5, out=tmp_path, job="r")
    with pytest.raises(RunError, match="different"):
        evaluate(TASK, "test_runner:Greedy", episodes=5, out=tmp_path, job="r", resume=True)
    summary = evaluate(TASK, "test_runner:First", episodes=5, out=tmp_path, resume=True)  # finds job r
    assert summary["job_name"] == "r" and summary["episodes"] == 5
    assert json.loads((job / "Counter__0" / "result.json").read_text())["id"] == kept
    assert (job / "Counter__3" / "result.json").exists() and not list(job.rglob("*.tmp"))
    assert validate_job(job) == 5


def test_retry_errors_replays_only_errored(tmp_path):
    failing_job = {"episodes": 3, "options": {"fail_seed": 2}, "out": tmp_path, "job": "e"}
    evaluate(TASK, "test_runner:First", **failing_job)
    # same config: a resume keeps the errored trial unless asked to retry it
    assert evaluate(TASK, "test_runner:First", **failing_job, resume=True)["errors"] == 1
    again = evaluate(TASK, "test_runner:First", **failing_job, resume=True, retry_errors=True)
    assert again["errors"] == 1 and again["episodes"] == 3  # deterministic crash: still one error, no duplicates


def test_workers_give_identical_results(tmp_path):
    kw = {"episodes": 6, "seed": 3, "out": tmp_path}
    one = evaluate(TASK, "test_runner:Greedy", job="w1", workers=1, **kw)
    two = evaluate(TASK, "test_runner:Greedy", job="w2", workers=2, **kw)
    assert episodes(tmp_path / "w1") == episodes(tmp_path / "w2")
    for key in ("mean_score", "ci95", "wins", "mean_steps", "calls", "errors"):
        assert one[key] == two[key]
    assert (
        json.loads((tmp_path / "w2" / "config.json").read_text())["orchestrator"]["type"] == "multiprocessing"
    )
    assert validate_job(tmp_path / "w2") == 6


def test_seeded_policy_seeded_per_episode(tmp_path, monkeypatch):
    from s1gym.runner import spec as runner

    monkeypatch.setattr(runner, "SEEDED_POLICIES", frozenset({"random", "test_runner:Seeded"}))
    a = evaluate(TASK, "test_runner:Seeded", episodes=4, seed=0, out=tmp_path, job="a")
    evaluate(TASK, "test_runner:Seeded", episodes=2, seed=2, out=tmp_path, job="b")
    ea, eb = episodes(tmp_path / "a"), episodes(tmp_path / "b")
    assert ea[2] == eb[2] and ea[3] == eb[3]  # a seed's game does not depend on what ran before it
    assert a["episodes"] == 4


def test_unpicklable_policy_with_workers_says_so(tmp_path):
    with pytest.raises(RunError, match="cannot be pickled"):
        evaluate(TASK, Unpicklable(), episodes=2, workers=2, out=tmp_path, job="u")


def test_bad_input_errors(tmp_path):
    with pytest.raises(RunError, match="unknown task"):
        evaluate("NoSuchTask", "test_runner:First", out=tmp_path)
    with pytest.raises(RunError, match="episodes"):
        evaluate(TASK, "test_runner:First", episodes=0, out=tmp_path)
    with pytest.raises(RunError, match="bad option"):
        evaluate(TASK, "test_runner:First", options={"colour": "red"}, out=tmp_path, job="x")
    with pytest.raises(RunError, match="cannot import"):
        evaluate(TASK, "test_runner:Nope", out=tmp_path, job="y")


def test_secrets_never_written(tmp_path, monkeypatch):
    secret = "sk-test-5ecret-value-1234567890"
    monkeypatch.setenv("TYPESAFE_API_KEY", secret)
    evaluate(
        TASK,
        "test_runner:Leaky",
        episodes=2,
        policy_options={"api_key": secret, "base_url": "http://x"},
        out=tmp_path,
        job="s",
    )
    texts = [p.read_text() for p in (tmp_path / "s").rglob("*.json")]
    assert len(texts) == 3 + 3 * 2
    assert not any(secret in t for t in texts)
    config = json.loads((tmp_path / "s" / "config.json").read_text())
    assert config["agents"][0]["kwargs"] == {"api_key": jobs.REDACTED, "base_url": "http://x"}
    episode = jobs.read_episode(tmp_path / "s" / "Counter__0")
    assert episode["ticks"][0]["info"]["headers"]["Authorization"] == jobs.REDACTED
    assert episode["ticks"][0]["info"]["echo"] == f"key={jobs.REDACTED}"


def test_a_secret_set_or_changed_mid_job_is_scrubbed_from_the_next_file(tmp_path, monkeypatch):
    # the secret values are kept between writes while the environment is unchanged: a change must be seen
    monkeypatch.delenv("MID_JOB_TOKEN", raising=False)
    path = tmp_path / "f.json"
    jobs.atomic_write_json(path, {"m": "value-one-123 value-two-456"})
    assert jobs.read_json(path) == {"m": "value-one-123 value-two-456"}
    monkeypatch.setenv("MID_JOB_TOKEN", "value-one-123")
    jobs.atomic_write_json(path, {"m": "value-one-123 value-two-456"})
    assert jobs.read_json(path) == {"m": f"{jobs.REDACTED} value-two-456"}
    monkeypatch.setenv("MID_JOB_TOKEN", "value-two-456")
    jobs.atomic_write_json(path, {"m": "value-one-123 value-two-456"})
    assert jobs.read_json(path) == {"m": f"value-one-123 {jobs.REDACTED}"}
    monkeypatch.delenv("MID_JOB_TOKEN")
    jobs.atomic_write_json(path, {"m": "value-one-123 value-two-456"})
    assert jobs.read_json(path) == {"m": "value-one-123 value-two-456"}


def test_scrub_keeps_token_counts_and_cuts_bearer():
    data = {
        "n_input_tokens": 5,
        "max_tokens": 64,
        "token": "abc",
        "x-api-key": "k",
        "note": "Bearer abcdefghijkl",
    }
    assert jobs.scrub(data) == {
        "n_input_tokens": 5,
        "max_tokens": 64,
        "token": jobs.REDACTED,
        "x-api-key": jobs.REDACTED,
        "note": f"Bearer {jobs.REDACTED}",
    }


def test_atomic_write_leaves_old_file_on_failure(tmp_path):
    path = tmp_path / "a.json"
    jobs.atomic_write_json(path, {"a": 1})

    class Boom:
        def __repr__(self):
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        jobs.atomic_write_json(path, {"a": Boom()})
    assert json.loads(path.read_text()) == {"a": 1} and not list(tmp_path.glob("*.tmp"))


def test_bootstrap_is_deterministic_and_brackets_the_mean():
    x = [0, 1, 1, 0, 1, 1, 1, 0.5]
    lo, hi = bootstrap_ci(x)
    assert (lo, hi) == bootstrap_ci(x) and lo < np.mean(x) < hi
    assert bootstrap_ci([]) == (None, None) and bootstrap_ci([0.3]) == (0.3, 0.3)


@pytest.mark.slow
def test_ray_local_run(tmp_path, monkeypatch):
    """--ray without an address starts a Ray of its own, whatever the machine remembers: here a stale
    address of a cluster that is gone ($RAY_ADDRESS, as a dead `ray start` leaves it in its address file),
    which ray.init() would otherwise try to join ("num_cpus ... must not be provided")."""
    pytest.importorskip("ray")
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:1")
    serial = evaluate(TASK, "test_runner:Greedy", episodes=4, seed=5, out=tmp_path, job="serial")
    remote = evaluate(TASK, "test_runner:Greedy", episodes=4, seed=5, out=tmp_path, job="ray", ray=True)
    assert episodes(tmp_path / "serial") == episodes(tmp_path / "ray")
    assert remote["mean_score"] == serial["mean_score"] and validate_job(tmp_path / "ray") == 4
    assert json.loads((tmp_path / "ray" / "config.json").read_text())["orchestrator"]["type"] == "ray"


def test_cookingworld_small_with_random(tmp_path):
    summary = evaluate(
        "CookingWorld", "random", episodes=2, seed=0, options={"size": "small"}, out=tmp_path, job="cw"
    )
    assert summary["episodes"] == 2 and summary["errors"] == 0, summary
    assert validate_job(tmp_path / "cw") == 2
