"""A task family in a package of its own (examples/s1gym-race) plugs into s1gym through its entry point alone.

The module pip-installs the example package into the running interpreter's environment (editable, no
dependencies, no build isolation: it needs nothing s1gym's venv lacks) and uninstalls it at the end, so the
other test modules see s1gym's own families only. Every check runs in a new interpreter: entry points and an
editable install's import hook are read at start-up, so this process would not see the family.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "examples" / "s1gym-race"
#: the ``s1`` command of this interpreter's environment (``python -m s1gym`` when the script is not there)
S1 = [str(Path(sys.executable).with_name("s1"))] if Path(sys.executable).with_name("s1").exists() else \
    [sys.executable, "-m", "s1gym"]
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def _pip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pip", *args], check=False, capture_output=True, text=True,
                          env=ENV, timeout=300)


@pytest.fixture(scope="module", autouse=True)
def race_installed() -> Iterator[None]:
    if _pip("--version").returncode != 0:
        pytest.skip(f"pip is not available in {sys.executable}, so the example family cannot be installed")
    done = _pip("install", "--no-deps", "--no-build-isolation", "-e", str(PACKAGE))
    assert done.returncode == 0, done.stdout + done.stderr
    try:
        yield
    finally:
        gone = _pip("uninstall", "-y", "s1gym-race")
        assert gone.returncode == 0, gone.stdout + gone.stderr


def run(args: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, check=False, capture_output=True, text=True, env=ENV, cwd=cwd, timeout=600)


def python(code: str) -> str:
    """Run ``code`` in a new interpreter and return its stdout (a failure shows its stderr)."""
    done = run([sys.executable, "-c", textwrap.dedent(code)])
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_s1_list_shows_the_task() -> None:
    done = run([*S1, "list"])
    assert done.returncode == 0, done.stderr
    assert "s1race/Race-v0" in done.stdout
    assert "at most 16 of your moves" in done.stdout  # the env's option_help reached the generic listing


def test_the_registry_answers_from_the_declaration() -> None:
    out = python("""
        from s1gym import registration
        family, task = registration.task_named("Race")
        model = registration.local_model("Race")
        kind, view = registration.replay_view("Race")
        print(family.name, task.id, type(model).__name__, model.provenance["dev_top1"], kind, view.__module__)
        print(registration.resolve_id("race"), registration.model_file("Race").name,
              registration.env_class("s1race/Race-v0").fork_reveals_answer)
    """)
    assert out.split() == ["race", "s1race/Race-v0", "RaceModel", "1.0", "race", "s1race.views",
                           "s1race/Race-v0", "local_race.json", "False"]


def test_gym_make_passes_the_env_checker() -> None:
    out = python("""
        import warnings
        import gymnasium as gym
        from gymnasium.utils.env_checker import check_env
        import s1gym  # registers every declared family's ids

        env = gym.make("s1race/Race-v0")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Gymnasium's render_fps note
            check_env(env.unwrapped, skip_render_check=True)
        obs, info = env.reset(seed=0)
        print(type(env.unwrapped).__name__, info["candidates"], info["action_mask"].tolist())
    """)
    assert out.strip().splitlines()[-1] == "RaceEnv ['add 1', 'add 2', 'add 3'] [1, 1, 1]"


def test_fork_is_exact_and_the_expert_names_a_candidate() -> None:
    out = python("""
        import numpy as np
        import gymnasium as gym
        import s1gym

        def play(env, moves):
            return [env.step(int(a)) for a in moves]

        checked = 0
        for seed in (0, 1, 2, 3, 5, 8, 13, 21, 34, 55):
            env = gym.make("s1race/Race-v0").unwrapped
            env.reset(seed=seed)
            picks = np.random.default_rng(seed)
            while not env.done:
                assert env.expert_action() in env.candidates, (seed, env.state_key())
                if picks.random() < 0.3:  # fork here: the copy and the original go on identically
                    before = env.state_key()
                    fork = env.fork()
                    moves = picks.integers(0, 3, size=12)
                    theirs = play(fork, moves)
                    assert env.state_key() == before  # stepping the fork left the original alone
                    mine = play(env.fork(), moves)
                    for (o1, r1, t1, u1, i1), (o2, r2, t2, u2, i2) in zip(theirs, mine, strict=True):
                        assert (o1, r1, t1, u1) == (o2, r2, t2, u2), seed
                        assert {k: v for k, v in i1.items() if k != "action_mask"} == \\
                               {k: v for k, v in i2.items() if k != "action_mask"}
                    checked += 1
                env.step_move(env.expert_action())
        print(checked)
    """)
    assert int(out) > 20


def test_run_lookahead_and_replay(tmp_path: Path) -> None:
    # The game has no chance and the house's rule is stated in the observation, so a fork reveals nothing a
    # player could not compute (fork_reveals_answer is False): Lookahead runs without the oracle flag.
    # exactly the command of the issue (and of docs/adding-a-family.md): no --job, no oracle flag
    done = run([*S1, "run", "Race", "--policy", "local", "--wrap", "lookahead", "--episodes", "3",
                "--seed", "0", "--out", str(tmp_path / "jobs")])
    assert done.returncode == 0, done.stdout + done.stderr
    (job,) = (tmp_path / "jobs").iterdir()  # the job folder s1 run named
    summary = json.loads((job / "summary.json").read_text())
    assert summary["task"] == "s1race/Race-v0"
    assert (summary["episodes"], summary["scored"], summary["errors"]) == (3, 3, 0)
    assert sorted(p.name for p in job.glob("Race__*")) == ["Race__0", "Race__1", "Race__2"]
    assert summary["agreement_at_1"] > 0.9  # the fitted model plays the expert's moves
    assert summary["fitted_on_played"] == []

    pages = tmp_path / "replays"
    shown = run([*S1, "replay", str(job), "--seed", "1", "--out", str(pages)])
    assert shown.returncode == 0, shown.stdout + shown.stderr
    (page,) = pages.glob("*.html")
    html = page.read_text()
    assert '"kind":"race"' in html and '"steps":[[' in html  # view_race's output, in the page's data
    assert "S1Views" in html and ".race-track" in html  # its drawer and style, inlined
