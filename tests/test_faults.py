"""Faults cost one episode, never the job: the real engine process is killed mid-job (found among the
test's descendants through /proc) and the job must finish with a typed error on the trial that met it,
a fresh engine for the rest, and the crashed episode played again from its seed (``--retries``)."""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
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


def test_an_alfworld_game_that_cannot_continue_ends_with_engine_crashed_and_the_next_game_gets_a_fresh_engine():
    """ALFWorld runs in-process (textworld and a libdownward copy), so it does not die as a process does: a call
    into the game that raises leaves the planner's state unknown. Here the real engine loses its planner state
    mid-game; the move ends the episode with EngineCrashed (engine, seed, step), the engine is never used again,
    and the same game starts on a fresh engine."""
    import gymnasium as gym

    env = gym.make("s1/ALFWorld-v0")
    try:
        first = env.reset(seed=0)[0]
        env.step(env.unwrapped.index_of("go to desk 1"))
        broken = env.unwrapped.engine()
        broken.pddl._pddl_state = None  # the planner's state is gone: the game cannot continue on this engine
        with pytest.raises(EngineCrashed) as crash:
            env.step(env.unwrapped.index_of("go to bed 1"))
        assert (crash.value.engine, crash.value.seed, crash.value.step) == ("ALFWorld engine", 0, 1)
        assert str(crash.value).startswith("the ALFWorld engine died: AttributeError")
        assert broken.failed and not broken.alive()
        again, info = env.reset(seed=0)
        assert env.unwrapped.engine() is not broken and again == first
        assert not info["won"] and "go to desk 1" in info["candidates"]
    finally:
        env.close()


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


_KILLED_IN_A_WRITE = """
import os, signal, sys
from pathlib import Path
from s1gym.jobs import files
from s1gym.runner import backends

where, how, plays, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
job = Path(args[args.index("--out") + 1]).resolve() / args[args.index("--job") + 1]

def killed() -> None:
    os.kill(os.getpid(), signal.SIGKILL)

def ours(path: str) -> bool:  # the file of the job named by `where` (its temp file while it is written)
    path = Path(path)
    if path.name.endswith(".tmp"):
        path = path.with_name(path.name[1:].rsplit(".", 2)[0])
    return path.resolve() == job / where

class Half:  # writes half of what it is given, then the process is killed
    def __init__(self, f): self.f = f
    def __enter__(self): return self
    def __exit__(self, *exc): self.f.close()
    def write(self, data):
        self.f.write(data[: len(data) // 2]); self.f.flush(); os.fsync(self.f.fileno()); killed()
    def __getattr__(self, name): return getattr(self.f, name)

class OS:  # what the job's file writer sees of the os module
    def __getattr__(self, name): return getattr(os, name)
    def fdopen(self, fd, *a, **k):
        f = os.fdopen(fd, *a, **k)
        return Half(f) if how == "half" and ours(os.readlink(f"/proc/self/fd/{fd}")) else f
    def replace(self, src, dst):
        if how == "before-replace" and ours(dst): killed()
        os.replace(src, dst)
        if how == "after-replace" and ours(dst): killed()

files.os = OS()
real_play = backends.Player.play
def play(self, seed, *a, **k):
    with open(plays, "a") as f: f.write(f"{seed}\\n")
    return real_play(self, seed, *a, **k)
backends.Player.play = play

from s1gym.ui.cli import main
sys.exit(main(args))
"""


def test_a_runner_killed_in_the_middle_of_any_write_loses_nothing_and_resume_plays_each_trial_once(tmp_path):
    """``kill -9`` of the real ``s1 run`` process at the worst moments of its writes (half of a file on disk,
    a whole temp file not yet renamed, a trial's result renamed but the job's totals not), each followed by
    ``--resume``: every file on disk parses after every kill, a finished trial is never played or written
    again, an unfinished one is played once more, and the last resume finishes the job."""
    args = ["run", "Blackjack", "--policy", "uniform", "--seed", "0", "--episodes", "5", "--out", str(tmp_path),
            "--job", "j", "--quiet"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    job, finished = tmp_path / "j", {}
    kills = [  # (file of the job, moment of the kill, seeds this run plays)
        ("config.json", "half", []),  # the job's first write: nothing recorded yet
        ("Blackjack__1/agent/episode.json", "half", [0, 1]),
        ("Blackjack__2/result.json", "before-replace", [1, 2]),
        ("Blackjack__3/result.json", "after-replace", [2, 3]),  # trial 3 finished, the job's result.json not
        ("summary.json", "half", [4]),
        ("", "", []),  # the last resume: nothing left to play, the summary written
    ]
    for i, (where, how, seeds) in enumerate(kills):
        plays = tmp_path / f"plays{i}"
        plays.touch()
        run = subprocess.run([sys.executable, "-c", _KILLED_IN_A_WRITE, where, how, str(plays), *args,
                              *(["--resume"] if i else [])], env=env, capture_output=True, text=True, timeout=120,
                             check=False)
        assert run.returncode == (0 if not where else -signal.SIGKILL), run.stderr
        assert "Traceback" not in run.stderr and "error" not in run.stderr.lower()
        assert [int(s) for s in plays.read_text().split()] == seeds, where
        for path in job.rglob("*.json"):
            json.loads(path.read_text())  # whole, never half written
        for name, data in finished.items():
            assert (job / name / "result.json").read_bytes() == data, f"{name} written again"  # not replayed
        finished.update({p.parent.name: p.read_bytes() for p in job.glob("*/result.json")})
    assert sorted(finished) == [f"Blackjack__{s}" for s in range(5)] and len(list(job.glob("*/"))) == 5
    assert not [p for p in job.rglob("*") if p.name.endswith(".tmp")]
    result = json.loads((job / "result.json").read_text())
    assert (result["stats"]["n_completed_trials"], result["stats"]["n_errored_trials"]) == (5, 0)
    assert json.loads((job / "summary.json").read_text())["episodes"] == 5
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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _identities(pids: list[int]) -> dict[int, str]:
    """Each live pid's start time (field 22 of /proc/PID/stat): a later process given the same pid differs."""
    out = {}
    for pid in pids:
        with contextlib.suppress(OSError):
            stat = Path(f"/proc/{pid}/stat").read_text()
            out[pid] = stat[stat.rindex(")") + 2 :].split()[19]
    return out


@pytest.fixture
def ray_head():
    """A real Ray head on loopback (127.0.0.2: Ray swaps 127.0.0.1 for the machine's routable address,
    see s1gym.runner.ray_cluster.LoopbackCluster), as a user starts one (``ray start --head``), with Ray's token
    authentication on (its default where a token exists) and this checkout on its workers' path; yields
    (address, the environment a driver needs). Stopped after: SIGTERM to ``ray start --block`` ends every
    process it started, and any left over (found by ancestry before) is killed by pid."""
    pytest.importorskip("ray")
    temp = Path(tempfile.mkdtemp(prefix="s1ray", dir="/tmp"))  # short: Ray's socket paths have a length limit
    port = _free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")]),
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN": secrets.token_hex(32),
    }
    args = [str(Path(sys.executable).with_name("ray")), "start", "--head", "--block", "--node-ip-address=127.0.0.2",
            f"--port={port}", f"--temp-dir={temp}", "--num-cpus=2", "--include-dashboard=false",
            "--disable-usage-stats", f"--dashboard-port={_free_port()}",
            f"--dashboard-agent-listen-port={_free_port()}"]
    log = open(temp / "head.log", "wb")  # noqa: SIM115  closed in the finalizer
    head = subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    started: dict[int, str] = {}  # pid -> its start time: a pid reused meanwhile by another process is spared
    try:
        deadline = time.monotonic() + 120  # seconds on a loaded machine; about 7 on an idle one
        while b"Ray runtime started" not in (temp / "head.log").read_bytes():
            if head.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"ray start --head did not start:\n{(temp / 'head.log').read_text()[-3000:]}")
            time.sleep(0.2)
        started = _identities(descendants(head.pid, (b"",)))
        yield f"127.0.0.2:{port}", env
    finally:
        started.update(_identities(descendants(head.pid, (b"",))))
        head.send_signal(signal.SIGTERM)
        try:
            head.wait(60)
        except subprocess.TimeoutExpired:
            head.kill()
            head.wait(10)
        for pid, since in started.items():
            if _identities([pid]).get(pid) == since:  # still the process the head started
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        log.close()
        shutil.rmtree(temp, ignore_errors=True)


@pytest.mark.slow  # starts a Ray head and three actors: 80-90 s on this machine under load
def test_a_ray_worker_killed_on_a_real_head_costs_one_attempt_and_the_job_completes(tmp_path, ray_head):
    """``s1 run --ray HOST:PORT`` on a real head (``ray start --head``, token auth): the Ray worker process
    playing an episode is SIGKILLed mid-episode (once over the job); the job completes, the lost episode is
    played again on a new actor and its trial says why, and the terminal shows one line and no traceback."""
    address, env = ray_head
    log = tmp_path / "kills"
    command = [sys.executable, "-m", "s1gym.ui.cli", "run", "Blackjack", "--policy", "fault_policies:killer",
               "--policy-option", "target=self", "--policy-option", "at=3", "--policy-option", f"log={log}",
               "--policy-option", "once=1", "--episodes", "6", "--seed", "0", "--ray", address,
               "--out", str(tmp_path), "--job", "j", "--quiet"]
    # without the cluster's token: one line saying so and how to give it (Ray's own retries cut to one)
    tokenless = {k: v for k, v in env.items() if not k.startswith("RAY_AUTH")}
    refused = subprocess.run(command, env={**tokenless, "RAY_gcs_server_port_wait_time_s": "1"},
                             capture_output=True, text=True, timeout=180, check=False)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    (line,) = [ln for ln in refused.stderr.splitlines() if ln.startswith("s1 run: error:")]
    assert line.startswith(f"s1 run: error: --ray {address}: the Ray head there refused this driver's token; ")
    assert "RAY_AUTH_MODE=token" in line and not (tmp_path / "j").exists()
    run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=180, check=False)
    assert run.returncode == 0, run.stderr
    ((what, pid),) = _kills(log)
    trials = _results(tmp_path / "j")
    assert what == "self" and sorted(trials) == list(range(6))
    assert all(t["exception_info"] is None for t in trials.values())
    ((seed, trial),) = [(s, t) for s, t in trials.items() if t["retries"]]
    (retry,) = trial["retries"]
    assert (retry["exception_type"], retry["kind"], retry["attempt"]) == ("WorkerCrashed", "engine", 1)
    assert re.match(rf"the Ray actor \(pid {pid} on [\d.]+\) playing seed {seed} died \(SYSTEM_ERROR: ",
                    retry["exception_message"])
    assert retry["exception_message"].endswith(f"(engine Ray actor, seed {seed})")
    assert "ActorDiedError" in retry["exception_traceback"]  # Ray's whole report, for the job's log
    assert "Traceback" not in run.stderr and "A worker died" not in run.stdout + run.stderr  # Ray's note: the log's
    assert "A worker died or was killed" in (tmp_path / "j" / "job.log").read_text()
    assert f"s1 run: Blackjack__{seed} (seed {seed}) completed on attempt 2 after WorkerCrashed" in run.stderr
    result = json.loads((tmp_path / "j" / "result.json").read_text())
    assert (result["stats"]["n_completed_trials"], result["stats"]["n_errored_trials"]) == (6, 0)
