"""Issue 28: what a user meets at the edges of the command line, the runner and the setup script.

Each test pins one finding of the issue; it failed before the change and passes after. The calculator's
(close() ends its desktops; typing the answer is not a win) are in test_calculator.py, the replay page's in
test_replay.py, the RL example's in test_rl.py.
"""

from __future__ import annotations

import re
import socket
import subprocess
from pathlib import Path

import pytest

from s1gym.ui.cli import main

ROOT = Path(__file__).resolve().parents[1]
TASK = "test_runner:tinytest/Counter-v0"


def exit_code(*argv: str) -> int:
    """What ``s1 ARGV`` exits with, whether argparse (SystemExit) or a command reports the error."""
    try:
        return main(list(argv))
    except SystemExit as exc:
        return exc.code


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", TASK, "-p", "uniform", "--wrap", "serch"], r"argument --wrap/-w: unknown wrapper 'serch'; choose one of: search"),
        (["run", TASK, "-p", "uniform", "-o", "size"], r"argument --option/-o: 'size': expected KEY=VALUE"),
        (["run", TASK, "-p", "uniform", "--wrap-option", "epsilon"], r"argument --wrap-option: 'epsilon': expected KEY=VALUE"),
        (["run", TASK, "-p", "gpt"], r"argument --policy/-p: unknown policy 'gpt'"),
        (["run", "NoSuchTask", "-p", "random"], r"unknown task"),
        (["run", TASK, "-p", "uniform", "--policy-option", "foo=1"], r"policy 'uniform' has no option 'foo'"),
        (["run", TASK, "-p", "uniform", "--plot", "OUT/x.txt"], r"--plot .*x\.txt: give a picture file name"),
        (["run", TASK, "-p", "uniform", "-n", "0"], r"episodes must be a positive integer"),
        (["play", TASK, "-o", "seed"], r"argument --option/-o: 'seed': expected KEY=VALUE"),
        (["play", "NoSuchTask"], r"unknown task"),
        (["play", TASK, "--seed", "-1"], r"argument --seed/-s: '-1': a seed is a whole number >= 0"),
        (["table", "OUT/missing"], r"no such folder"),
        (["replay", "OUT/missing"], r"no such file or folder"),
        (["replay"], r"pass one or two trials"),
        (["serve", "--port", "70000"], r"argument --port: a port is 0-65535"),
        (["list", "--nope"], r"unrecognized arguments: --nope"),
        ([], r"the following arguments are required"),
    ],
)
def test_usage_errors_exit_2_in_argparse_form(tmp_path, capsys, argv, message):
    """One convention for every command: a usage error exits 2 and ends in ``s1 <command>: error: ...``."""
    out = tmp_path / "jobs"
    argv = [a.replace("OUT", str(out)) for a in argv]
    if argv[:1] == ["run"]:
        argv += ["--out", str(out), "-q"]
    assert exit_code(*argv) == 2
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]
    prog = f"s1 {argv[0]}" if argv else "s1"
    assert last.startswith(f"{prog}: error: ") and re.search(message, last), err
    assert "Traceback" not in err and not out.exists()  # nothing written


@pytest.mark.parametrize("name", ["../../escape", "..", ".", "a/b", "ABSOLUTE", ""])
def test_a_job_name_is_one_folder_inside_out(tmp_path, capsys, name):
    out, name = tmp_path / "a" / "jobs", name.replace("ABSOLUTE", str(tmp_path / "elsewhere" / "job"))
    assert exit_code("run", TASK, "-p", "uniform", "-n", "1", "-q", "--out", str(out), "--job", name) == 2
    err = capsys.readouterr().err
    assert f"s1 run: error: --job {name!r}: a job name is one folder name inside --out" in err
    assert list(tmp_path.rglob("*")) == []  # nothing written, inside --out or elsewhere


def test_an_unreachable_ray_head_is_a_usage_error_naming_the_address_and_writes_nothing(tmp_path, capsys):
    pytest.importorskip("ray")
    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"127.0.0.1:{port}"
    out = tmp_path / "jobs"
    code = exit_code("run", "Blackjack", "--policy", "rule", "--episodes", "20", "--ray", address, "--out", str(out), "-q")
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    (line,) = err.strip().splitlines()
    assert line.startswith(f"s1 run: error: --ray {address}: no Ray head answers at {address}")
    assert "ray start --head" in line and "--ray without an address" in line
    assert not out.exists()  # no half-made job folder


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--budget", "5"], r"--budget 5: wrapper options, but no wrapper was given; .*--wrap search"),
        (["--wrap-option", "epsilon=0.2"], r"--wrap-option epsilon: wrapper options, but no wrapper was given"),
        (["--retry-errors"], r"--retry-errors replays the errored trials of a job being resumed: add --resume"),
        (["--resume", "--job", "nope"], r"--resume: there is no job 'nope' in OUT \(its jobs: made\); drop --resume"),
        (["--resume", "-n", "3"], r"--resume: no job in OUT ran this task, options, policy and seeds"),
    ],
)
def test_flags_that_would_do_nothing_are_usage_errors(tmp_path, capsys, argv, message):
    out = tmp_path / "jobs"
    assert exit_code("run", TASK, "-p", "uniform", "-n", "1", "-q", "--out", str(out), "--job", "made") == 0
    capsys.readouterr()
    argv = ["run", TASK, "-p", "uniform", "-q", "--out", str(out), *argv]
    assert exit_code(*argv) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("s1 run: error: ") and re.search(message.replace("OUT", re.escape(str(out))), line), line
    assert sorted(p.name for p in out.iterdir()) == ["made"]  # no new job was started


def test_table_of_a_file_says_it_wants_a_folder(tmp_path, capsys):
    file = tmp_path / "summary.json"
    file.write_text("{}")
    assert exit_code("table", str(file)) == 2
    assert capsys.readouterr().err.strip() == (
        f"s1 table: error: {file} is a file, not a folder; pass a job folder or a folder of jobs (e.g. ./jobs)"
    )


# --------------------------------------------------------------------------- scripts/setup.sh
APT_NOISE = [
    "Get:1 http://deb.debian.org/debian bookworm/main amd64 xvfb amd64 2:21.1.7-3 [3,330 kB]",
    "Selecting previously unselected package xvfb.",
    "(Reading database ... 45% ",
    "Preparing to unpack .../xvfb_2%3a21.1.7-3_amd64.deb ...",
    "Unpacking xvfb (2:21.1.7-3) ...",
    "Setting up xvfb (2:21.1.7-3) ...",
    "Processing triggers for man-db (2.11.2-2) ...",
]


def _fake_machine(tmp_path: Path, apt_fails: bool) -> tuple[Path, dict[str, str]]:
    """A copy of scripts/setup.sh on a PATH with a noisy fake apt-get and a fake Python (no network, no root,
    nothing installed): only the script's own handling of the output is exercised."""
    repo, bin_dir = tmp_path / "repo", tmp_path / "bin"
    (repo / "scripts").mkdir(parents=True)
    (repo / "scripts" / "setup.sh").write_text((ROOT / "scripts" / "setup.sh").read_text())
    bin_dir.mkdir()
    for tool in ("dirname", "sed", "head", "grep", "tail", "mkdir", "cat", "chmod", "seq", "uname"):
        (bin_dir / tool).symlink_to(subprocess.check_output(["which", tool], text=True).strip())
    noise = "\n".join(APT_NOISE * 40)
    scripts = {
        "sleep": "#!/bin/bash\n",  # apt's retries wait 20 s each: not here
        "apt-get": f"#!/bin/bash\nprintf '%b\\n' '{noise}'\n"
        + ("echo 'E: Unable to locate package mate-calc' >&2; exit 100\n" if apt_fails else "exit 0\n"),
        "python3": "#!/bin/bash\n# -m venv .venv: a venv whose python prints like pip\nmkdir -p .venv/bin\n"
        "printf 'export PATH=\"%s/.venv/bin:$PATH\"\\n' \"$PWD\" > .venv/bin/activate\n"
        "printf '#!/bin/bash\\n[ \"$1\" = --version ] && echo Python 3.11.0 && exit 0\\n"
        "for i in $(seq 50); do echo Collecting package-$i; done\\n' > .venv/bin/python\n"
        "chmod +x .venv/bin/python\n",
    }
    for name, text in scripts.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    return repo, {"PATH": str(bin_dir), "HOME": str(tmp_path)}


@pytest.mark.parametrize("apt_fails", [False, True])
def test_setup_sends_apt_and_dpkg_output_to_the_log(tmp_path, apt_fails):
    repo, env = _fake_machine(tmp_path, apt_fails)
    done = subprocess.run(["/bin/bash", str(repo / "scripts" / "setup.sh")], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=60)
    shown = (done.stdout + done.stderr).splitlines()
    log = (repo / ".venv" / "setup.log").read_text()
    assert log.count("Setting up xvfb") >= 40 and ("Collecting package-50" in log) is not apt_fails
    assert shown[0].startswith("setup: installing ") and shown[0].endswith("from Debian (apt's output: .venv/setup.log)")
    if not apt_fails:
        assert done.returncode == 0 and len(shown) == 2 and shown[1].startswith("setup: ok (Python 3.11.0")
    else:  # four one-line retries, then the log's tail, once
        assert done.returncode == 1 and sum("try" in line for line in shown) == 4
        assert any(line.startswith("setup: 'apt-get install ") and "failed; the last lines of" in line for line in shown)
        assert shown[-1] == "E: Unable to locate package mate-calc" and len(shown) <= 1 + 4 + 1 + 40
