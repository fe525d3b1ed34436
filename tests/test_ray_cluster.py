"""A job on a real multi-node Ray cluster on this machine (issue 56): three nodes started with Ray's own
``ray start`` (a head on 127.0.0.2, worker nodes on 127.0.0.3 and 127.0.0.4, one CPU each: every address on
the loopback interface, see :class:`s1gym.runner.ray_cluster.LoopbackCluster`), driven by ``s1 run --ray
ADDRESS`` as a user drives one. The tests share one cluster and run in file order: a job spread over every
node; a worker node's raylet killed mid-job; the driver killed mid-job; the head killed mid-job (last: the
cluster is gone after it).

The episodes are Blackjack's rule player slowed by a sleep per decision (:func:`slow`), so a job lasts long
enough to lose a node in the middle of it; the sleep changes no decision, and the rewards are compared seed
by seed with a local run's.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from s1gym.policies import BasePolicy, make_policy

from s1gym import jobs
from s1gym.core import Decision, Situation
from s1gym.runner import evaluate

pytestmark = pytest.mark.slow  # a three-node cluster: ~35 s to start on this machine, ~100 s for the file

ROOT = Path(__file__).resolve().parents[1]
TASK = "Blackjack"


class Slow(BasePolicy):
    """Blackjack's rule player, sleeping ``delay`` seconds before each decision."""

    name = "slow"

    def __init__(self, delay: float = 0.2) -> None:
        self.delay = float(delay)
        self.inner = make_policy("rule")

    def options(self) -> dict[str, object]:
        return {"delay": self.delay}

    def decide(self, situation: Situation) -> Decision:
        time.sleep(self.delay)
        return self.inner.decide(situation)


def slow(**options: object) -> Slow:
    return Slow(**options)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def cluster():
    pytest.importorskip("ray")
    from s1gym.runner.ray_cluster import LoopbackCluster

    node = LoopbackCluster(nodes=3, cpus=1, env={"PYTHONPATH": f"{ROOT}:{ROOT / 'tests'}"})
    try:
        node.start()
        yield node
    finally:
        node.stop()
        assert node.leftovers() == []  # nothing of the cluster runs after it


def _command(cluster, out: Path, job: str, episodes: int, seed: int, delay: float, *more: str) -> list[str]:
    return [sys.executable, "-m", "s1gym.ui.cli", "run", TASK, "--policy", "test_ray_cluster:slow",
            "--policy-option", f"delay={delay}", "--episodes", str(episodes), "--seed", str(seed),
            "--ray", cluster.address, "--out", str(out), "--job", job, "--quiet", *more]


def _by_seed(job_dir: Path) -> dict[int, dict]:
    trials = jobs.load_trials(job_dir)
    seeds = [jobs.seed_of(t) for t in trials]
    assert len(seeds) == len(set(seeds)), f"a seed recorded twice: {sorted(seeds)}"
    assert len(list(job_dir.glob("*/result.json"))) == len(trials)
    return {jobs.seed_of(t): t for t in trials}


def _outcome(trial: dict) -> tuple:
    """What a trial played: its reward, its moves and its error (none)."""
    return (trial["verifier_result"]["rewards"]["reward"], trial["agent_result"]["metadata"]["n_steps"],
            trial["exception_info"])


def _local(tmp_path: Path, seed: int, episodes: int) -> dict[int, tuple]:
    summary = evaluate(TASK, "test_ray_cluster:slow", policy_options={"delay": 0}, episodes=episodes, seed=seed,
                       out=tmp_path, job="local")
    return {s: _outcome(t) for s, t in _by_seed(Path(summary["job_dir"])).items()}


def _placements(job_dir: Path) -> dict[str, int]:
    (line,) = [ln for ln in (job_dir / "job.log").read_text().splitlines() if "episodes per Ray node:" in ln]
    return {m[0]: int(m[1]) for m in re.findall(r"(127\.0\.0\.\d+) \(node \w+\): (\d+)", line)}


def test_a_job_spreads_over_every_node_and_writes_what_a_local_run_writes(cluster, tmp_path):
    run = subprocess.run(_command(cluster, tmp_path, "ray", 12, 500, 0.1), env=cluster.env, capture_output=True,
                         text=True, timeout=240, check=False)
    assert run.returncode == 0, run.stderr
    job = tmp_path / "ray"
    placements = _placements(job)
    assert len(placements) >= 2 and set(placements) <= {"127.0.0.2", "127.0.0.3", "127.0.0.4"}, placements
    assert sum(placements.values()) == 12
    remote = {s: _outcome(t) for s, t in _by_seed(job).items()}
    assert sorted(remote) == list(range(500, 512)) and remote == _local(tmp_path, 500, 12)
    assert all(not t["retries"] for t in _by_seed(job).values())
    # the same files (and job.log, where the Ray run notes which node played how many episodes)
    names = sorted(p.relative_to(job).as_posix().split("__")[-1] for p in job.rglob("*") if p.is_file())
    local = tmp_path / "local"
    assert names == sorted([*(p.relative_to(local).as_posix().split("__")[-1] for p in local.rglob("*")
                              if p.is_file()), "job.log"])
    result = json.loads((job / "result.json").read_text())
    assert (result["stats"]["n_completed_trials"], result["stats"]["n_errored_trials"]) == (12, 0)
    config = json.loads((job / "config.json").read_text())
    assert config["orchestrator"] == {"type": "ray", "address": cluster.address, "n_concurrent_trials": None}


def _wait_trials(job: Path, n: int, run: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while len(list(job.glob("*/result.json"))) < n:
        assert run.poll() is None and time.monotonic() < deadline, "the job ended (or stalled) too early"
        time.sleep(0.1)


def test_a_worker_node_lost_mid_job_has_its_episodes_played_on_the_others_exactly_once(cluster, tmp_path):
    """The raylet of the worker node on 127.0.0.4 is SIGKILLed (its actor with it) while every actor plays:
    the episode it was playing is played again on another node without costing a retry (``--retries 0``),
    every seed is recorded once, the job ends (no idle wait for an actor that cannot be placed), and the
    terminal gets one line naming the node."""
    job = tmp_path / "lost"
    # enough episodes that the queue outlasts a slow start of the third node's actor (24 drained before the kill
    # on a loaded machine once: node 2's actor was idle with nothing left to play, so nothing was lost)
    episodes = 60
    run = subprocess.Popen(_command(cluster, tmp_path, "lost", episodes, 700, 0.25, "--retries", "0"), env=cluster.env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_trials(job, 4, run)
        deadline = time.monotonic() + 60
        while len(_actors(cluster)) < 3:  # the third node's actor has started (and then gets an episode)
            assert run.poll() is None and time.monotonic() < deadline, "no actor on every node"
            time.sleep(0.1)
        time.sleep(1.0)
        assert len(list(job.glob("*/result.json"))) < episodes - 6, "the job was nearly over before the kill"
        cluster.kill_node(2)
        _, err = run.communicate(timeout=180)
    finally:
        run.kill()
    assert run.returncode == 0, err
    trials = _by_seed(job)
    assert sorted(trials) == list(range(700, 700 + episodes))  # seed by seed: each once
    assert {s: _outcome(t) for s, t in trials.items()} == _local(tmp_path, 700, episodes)
    ((seed, trial),) = [(s, t) for s, t in trials.items() if t["retries"]]
    (attempt,) = trial["retries"]
    assert (attempt["exception_type"], attempt["kind"]) == ("WorkerCrashed", "node")
    assert attempt["exception_message"].startswith("the Ray node 127.0.0.4 (node ")
    assert attempt["exception_message"].endswith(f"playing seed {seed} was lost (engine Ray node, seed {seed})")
    lines = [ln for ln in err.splitlines() if "127.0.0.4" in ln]
    assert len(lines) == 1 and lines[0].startswith(f"s1 run: {TASK}__{seed} (seed {seed}) completed on attempt 2")
    assert "Traceback" not in err
    assert "Ray node 127.0.0.4 (node " in (job / "job.log").read_text()
    assert "127.0.0.4" not in _placements(job) or _placements(job)["127.0.0.4"] < episodes
    assert sum(_placements(job).values()) == episodes
    result = json.loads((job / "result.json").read_text())
    assert (result["stats"]["n_completed_trials"], result["stats"]["n_errored_trials"]) == (episodes, 0)


def _actors(cluster) -> list[int]:
    """The cluster's live actor processes of s1gym (Ray names them ``ray::_RayPlayer``)."""
    from s1gym.runner.ray_cluster import _proc_table

    return [pid for pid, (_, cmd) in _proc_table().items() if cmd.startswith("ray::_RayPlayer")
            and any(pid in _descendants_of(cluster, i) for i in range(len(cluster.procs)))]


def _descendants_of(cluster, node: int) -> list[int]:
    from s1gym.runner.ray_cluster import _descendants

    return _descendants(cluster.procs[node].pid)


def test_the_driver_killed_mid_job_leaves_no_actor_and_resume_plays_exactly_the_rest(cluster, tmp_path):
    job = tmp_path / "driver"
    command = _command(cluster, tmp_path, "driver", 24, 1100, 0.25)
    run = subprocess.Popen(command, env=cluster.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_trials(job, 4, run)
        assert _actors(cluster)  # one a live node
    finally:
        run.kill()
        run.wait()
    deadline = time.monotonic() + 60
    while _actors(cluster):  # Ray ends a dead driver's actors (and their engines) itself
        assert time.monotonic() < deadline, f"actors left 60 s after their driver died: {_actors(cluster)}"
        time.sleep(0.5)
    before = _by_seed(job)
    assert 4 <= len(before) < 24
    again = subprocess.run([*command, "--resume"], env=cluster.env, capture_output=True, text=True, timeout=240,
                           check=False)
    assert again.returncode == 0, again.stderr
    after = _by_seed(job)
    assert sorted(after) == list(range(1100, 1124))
    assert all(after[s]["finished_at"] == t["finished_at"] for s, t in before.items())
    assert sum(_placements(job).values()) == 24 - len(before)  # the resumed run played only the rest


def test_a_head_lost_mid_job_ends_it_with_a_typed_error_and_resume_completes_it(cluster, tmp_path):
    """Runs last (the cluster is gone after it): the head's processes are SIGKILLed mid-job; the job ends
    within seconds with one line naming the head and --resume, every trial written is whole, and
    ``--resume`` on a local Ray plays exactly the rest."""
    job = tmp_path / "headless"
    command = _command(cluster, tmp_path, "headless", 60, 900, 0.25)
    run = subprocess.Popen(command, env=cluster.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_trials(job, 3, run)
        cluster.kill_head()
        killed = time.monotonic()
        _, err = run.communicate(timeout=120)
    finally:
        run.kill()
    took = time.monotonic() - killed
    assert run.returncode == 2, err
    (line,) = [ln for ln in err.splitlines() if ln.startswith("s1 run: error:")]
    assert line.startswith(f"s1 run: error: --ray {cluster.address}: the Ray head stopped answering mid-job")
    assert "--resume" in line and "Traceback" not in err and took < 60
    before = _by_seed(job)
    assert 3 <= len(before) < 60 and all(t["exception_info"] is None for t in before.values())
    resume = [*command[: command.index("--ray")], *command[command.index("--ray") + 2 :], "--resume", "--workers", "2"]
    again = subprocess.run(resume, capture_output=True, text=True, timeout=240, check=False, cwd=ROOT,
                           env=cluster.env)
    assert again.returncode == 0, again.stderr
    after = _by_seed(job)
    assert sorted(after) == list(range(900, 960))
    assert all(after[s]["trial_name"] == t["trial_name"] and after[s]["finished_at"] == t["finished_at"]
               for s, t in before.items())  # the trials from before the loss stayed as written
