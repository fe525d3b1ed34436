"""Faults cost one episode, never the job: the real engine process is killed mid-job (found among the
test's descendants through /proc) and the job must finish with a typed error on the trial that met it,
a fresh engine for the rest, and the crashed episode played again from its seed (``--retries``)."""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from fault_policies import descendants

from s1gym import jobs
from s1gym.engines.browser import BrowserCrashed
from s1gym.errors import EngineCrashed, S1GymError
from s1gym.runner import evaluate
from s1gym.runner.backends import WorkerCrashed
from s1gym.tasks.desktop.calculator import CalculatorCrashed, unavailable

ROOT = Path(__file__).resolve().parents[1]
COOKING = {"max_steps": 8}


def _results(job_dir: str | Path) -> dict[int, dict]:
    return {jobs.seed_of(t): t for t in jobs.load_trials(Path(job_dir))}


def _kills(log: Path) -> list[tuple[str, int]]:
    lines = log.read_text().splitlines() if log.exists() else []
    return [(what, int(pid)) for what, pid in (line.split() for line in lines)]


def test_engine_crashed_names_engine_seed_and_step_and_survives_pickling():
    exc = EngineCrashed("the JVM died: Py4JError", engine="TextWorldExpress JVM", step=3)
    exc.locate(seed=7, step=9)
    assert str(exc) == "the JVM died: Py4JError (engine TextWorldExpress JVM, seed 7, step 3)"
    back = pickle.loads(pickle.dumps(WorkerCrashed("gone", seed=2)))
    assert type(back) is WorkerCrashed and (back.seed, back.step, str(back)) == (2, None, "gone (seed 2)")
    assert issubclass(CalculatorCrashed, EngineCrashed) and issubclass(BrowserCrashed, EngineCrashed)
    assert issubclass(EngineCrashed, S1GymError) and issubclass(EngineCrashed, RuntimeError)


@pytest.fixture
def jvm_killed_in_step(monkeypatch):
    """``arm(game, n)``: the real JVM is SIGKILLed as the ``n``-th engine step of TWX game ``game`` (a seed
    of the train fold) begins, so the step's call meets a dying JVM (what an engine dying under a move looks
    like). Returns the list of killed pids."""
    from s1gym.engines import jvm
    from s1gym.tasks.twx.engine import TWXEngine

    killed: list[int] = []
    real_step, real_new_game = TWXEngine.step, TWXEngine.new_game
    now = {"game": None, "steps": 0}

    def arm(game: int, n: int) -> list[int]:
        def new_game(self: TWXEngine, which: tuple[int, str]) -> tuple[str, str]:
            now.update(game=which[0], steps=0)
            return real_new_game(self, which)

        def step(self: TWXEngine, move: str) -> str:
            now["steps"] += 1
            if now["game"] == game and now["steps"] == n and not killed:
                killed.append(jvm.current_jvm().process.pid)
                os.kill(killed[-1], signal.SIGKILL)
            return real_step(self, move)

        monkeypatch.setattr(TWXEngine, "step", step)
        monkeypatch.setattr(TWXEngine, "new_game", new_game)
        return killed

    return arm


def test_a_jvm_killed_under_a_move_costs_one_attempt_and_the_rest_of_the_job_gets_a_fresh_jvm(
    tmp_path, jvm_killed_in_step
):
    from s1gym.engines import jvm

    killed = jvm_killed_in_step(401, 4)  # seed 8401 plays train game 401
    summary = evaluate("CookingWorld", "uniform", episodes=4, seed=8400, options=COOKING, out=tmp_path, job="j",
                       agreement=False)
    assert len(killed) == 1 and jvm.current_jvm().process.pid != killed[0]
    trials = _results(summary["job_dir"])
    assert (summary["episodes"], summary["errors"], summary["retried"]) == (4, 0, 1)
    assert [s for s, t in trials.items() if t["retries"]] == [8401]
    (retry,) = trials[8401]["retries"]
    assert (retry["exception_type"], retry["kind"], retry["attempt"]) == ("EngineCrashed", "engine", 1)
    assert "TextWorldExpress JVM died: Py4J" in retry["exception_message"]
    assert retry["exception_message"].endswith("(engine TextWorldExpress JVM, seed 8401, step 3)")
    assert "py4j" in retry["exception_traceback"]
    assert all(t["agent_result"]["metadata"]["n_steps"] == 8 for t in trials.values())
    log_text = (Path(summary["job_dir"]) / "job.log").read_text()
    assert "CookingWorld__8401 (seed 8401): attempt 1 failed (engine)" in log_text and "Traceback" in log_text


def test_without_retries_the_crash_is_recorded_on_its_trial_and_the_job_goes_on(tmp_path, jvm_killed_in_step):
    jvm_killed_in_step(400, 2)
    summary = evaluate("CookingWorld", "uniform", episodes=3, seed=8400, options=COOKING, out=tmp_path, job="j",
                       agreement=False,
                       retries=0)
    trials = _results(summary["job_dir"])
    assert (summary["episodes"], summary["errors"], summary["retried"]) == (3, 1, 0)
    info = trials[8400]["exception_info"]
    assert info["exception_type"] == "EngineCrashed" and info["kind"] == "engine"
    assert info["exception_message"].endswith("(engine TextWorldExpress JVM, seed 8400, step 1)")
    assert trials[8400]["retries"] == [] and trials[8400]["verifier_result"] is None
    assert [trials[s]["exception_info"] for s in (8401, 8402)] == [None, None]


def test_a_jvm_killed_between_moves_costs_nothing_the_game_goes_on_in_a_fresh_jvm(tmp_path):
    from s1gym.engines import jvm

    log = tmp_path / "kills"
    summary = evaluate(
        "CookingWorld", "fault_policies:killer", episodes=3, seed=8400, options=COOKING, out=tmp_path,
        job="j", policy_options={"target": "jvm", "at": 12, "log": str(log)},
    )
    ((what, pid),) = _kills(log)
    assert what == "jvm" and jvm.current_jvm().process.pid != pid
    trials = _results(summary["job_dir"])
    assert (summary["episodes"], summary["errors"], summary["retried"]) == (3, 0, 0)
    assert all(t["agent_result"]["metadata"]["n_steps"] == 8 for t in trials.values())
    # the same game as without the kill: the fresh JVM replayed seed 8401's moves
    plain = evaluate("CookingWorld", "uniform", episodes=3, seed=8400, options=COOKING, out=tmp_path, job="k")
    assert [t["verifier_result"] for t in _results(plain["job_dir"]).values()] == [
        t["verifier_result"] for t in trials.values()
    ]


def test_a_policy_error_is_not_retried_by_default_but_is_with_policy_retries(tmp_path):
    common = {"episodes": 2, "seed": 0, "out": tmp_path, "policy_options": {"fail_on": 0}}
    plain = evaluate("Blackjack", "fault_policies:flaky", job="a", **common)
    again = evaluate("Blackjack", "fault_policies:flaky", job="b", policy_retries=1, **common)
    first = _results(plain["job_dir"])[0]
    assert first["exception_info"]["exception_type"] == "PolicyServerError" and first["retries"] == []
    second = _results(again["job_dir"])[0]
    assert second["exception_info"] is None and [r["kind"] for r in second["retries"]] == ["policy"]
    assert (plain["errors"], again["errors"]) == (1, 0)


def test_a_killed_worker_process_costs_one_attempt(tmp_path):
    log = tmp_path / "kills"
    summary = evaluate(
        "Blackjack", "fault_policies:killer", episodes=6, seed=0, out=tmp_path, job="j", workers=2,
        policy_options={"target": "self", "at": 2, "log": str(log), "once": True},
    )
    assert len(_kills(log)) == 1
    trials = _results(summary["job_dir"])
    assert (summary["episodes"], summary["errors"]) == (6, 0)
    retried = [t for t in trials.values() if t["retries"]]
    assert len(retried) == 1
    (retry,) = retried[0]["retries"]
    assert retry["exception_type"] == "WorkerCrashed" and "killed by SIGKILL" in retry["exception_message"]


@pytest.mark.skipif(bool(unavailable()), reason=unavailable() or "")
def test_a_killed_x_server_between_moves_costs_nothing_the_game_goes_on_on_a_fresh_desktop(tmp_path):
    log = tmp_path / "kills"
    summary = evaluate(
        "Calculator", "fault_policies:killer", episodes=3, seed=0, out=tmp_path, job="j",
        options={"max_steps": 4}, policy_options={"target": "xvfb", "at": 6, "log": str(log)},
    )
    ((what, pid),) = _kills(log)
    assert what == "xvfb" and pid not in descendants(os.getpid(), (b"Xvfb",))
    trials = _results(summary["job_dir"])
    assert (summary["episodes"], summary["errors"], summary["retried"]) == (3, 0, 0)
    assert [t["agent_result"]["metadata"]["n_steps"] for t in trials.values()] == [4, 4, 4]


_WRITE_LIMITED = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead of killing
resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))  # the job config fits, a trial's episode does not
from s1gym.ui.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_write_that_fails_stops_the_job_leaves_whole_files_and_resume_finishes_it(tmp_path):
    """A real failing write (the file-size limit, EFBIG: what ENOSPC looks like to the writer) in the
    middle of a job: the job stops with one line saying what failed and how to go on, every file written
    before is whole, no half or temp file is left, and --resume plays exactly the missing trials."""
    args = ["run", "Blackjack", "--policy", "uniform", "--seed", "0", "--out", str(tmp_path), "--job", "j",
            "--quiet"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    first = subprocess.run([sys.executable, "-m", "s1gym.ui.cli", *args, "--episodes", "5"], env=env,
                           capture_output=True, text=True, timeout=120, check=False)
    assert first.returncode == 0, first.stderr
    job = tmp_path / "j"
    for seed in (3, 4):  # unfinished, as a kill leaves them: no result.json
        (job / f"Blackjack__{seed}" / "result.json").unlink()
    before = {p: p.read_bytes() for p in job.rglob("*.json") if p.exists()}
    failed = subprocess.run([sys.executable, "-c", _WRITE_LIMITED, *args, "--episodes", "5", "--resume"],
                            env=env, capture_output=True, text=True, timeout=120, check=False)
    assert failed.returncode == 1
    assert "cannot write Blackjack__3 in" in failed.stderr and "rerun with --resume" in failed.stderr
    assert "Traceback" not in failed.stderr
    assert not [p for p in job.rglob("*") if p.name.endswith(".tmp")]
    for path in job.rglob("*.json"):
        json.loads(path.read_text())  # whole, never half written
    finished = [p for p in before if p.parent.name in ("Blackjack__0", "Blackjack__1", "Blackjack__2")]
    assert len(finished) == 6 and all(p.read_bytes() == before[p] for p in finished)  # the finished trials
    assert not (job / "Blackjack__3" / "result.json").exists()
    done = subprocess.run([sys.executable, "-m", "s1gym.ui.cli", *args, "--episodes", "5", "--resume"], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert sorted(jobs.seed_of(t) for t in jobs.load_trials(job)) == [0, 1, 2, 3, 4]
    assert all(t["exception_info"] is None for t in jobs.load_trials(job))


def test_a_jvm_killed_inside_a_worker_process_costs_nothing_and_the_job_completes(tmp_path):
    """--workers 2: each worker has its own JVM; the one a worker started is killed between two moves (once
    over the job): that worker's game goes on in a fresh JVM, the other worker never notices."""
    log = tmp_path / "kills"
    summary = evaluate(
        "CookingWorld", "fault_policies:killer", episodes=6, seed=8400, options=COOKING, out=tmp_path, job="j",
        workers=2, agreement=False, policy_options={"target": "jvm", "at": 12, "log": str(log), "once": True},
    )
    ((what, _),) = _kills(log)
    trials = _results(summary["job_dir"])
    assert what == "jvm" and (summary["episodes"], summary["errors"], summary["retried"]) == (6, 0, 0)
    assert sorted(trials) == list(range(8400, 8406))
    assert all(t["agent_result"]["metadata"]["n_steps"] == 8 for t in trials.values())
