"""s1/Calculator-v0: goals (pure Python) and the real mate-calc window under Xvfb, pressed over AT-SPI.

The window tests need the desktop stack (xvfb, at-spi2-core, mate-calc, jeepney, Pillow); they skip with
the setup command only where it is absent (scripts/setup.sh installs it, so CI runs them).
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from s1gym.core import BasePolicy, Decision
from s1gym.tasks.desktop import goals
from s1gym.tasks.desktop.calculator import SLOTS, CalculatorCrashed, CalculatorEngine, CalculatorEnv, unavailable
from s1gym.tasks.desktop.goals import GoalError
from s1gym.tasks.desktop.session import DesktopSession, DesktopUnavailable, group_members
from s1gym.engines.base import close_pools

desktop = pytest.mark.skipif(bool(unavailable()), reason=unavailable() or "")


def close_calculator_pools() -> None:
    close_pools(lambda key: key is CalculatorEnv)


@pytest.fixture
def own_pool():
    """A calculator pool of this test's own (so counting and killing processes touches nothing else)."""
    close_calculator_pools()
    yield
    close_calculator_pools()


def make(**options) -> CalculatorEnv:
    return gym.make("s1/Calculator-v0", **options)


# ------------------------------------------------------------------ goals


@pytest.mark.parametrize(
    ("goal", "tokens", "value"),
    [
        ("compute 12 times 7", ["12", "×", "7"], 84),
        ("Multiply 12 by 7.", ["12", "×", "7"], 84),
        ("what is 12 × 7?", ["12", "×", "7"], 84),
        ("12*7", ["12", "×", "7"], 84),
        ("subtract 19 from 64", ["64", "−", "19"], 45),
        ("compute 19 minus 64", ["19", "−", "64"], -45),
        ("add 35 and 48", ["35", "+", "48"], 83),
        ("divide 84 by 7", ["84", "÷", "7"], 12),
        ("calculate 3 + 4 × 5", ["3", "+", "4", "×", "5"], 23),
        ("what is (3 + 4) × 5?", ["(", "3", "+", "4", ")", "×", "5"], 35),
        ("the square root of 81", ["√", "81"], 9),
        ("compute 1.5 squared", ["1.5", "²"], Fraction(9, 4)),
    ],
)
def test_goals_read_in_words_or_symbols(goal, tokens, value):
    assert goals.parse(goal) == tokens
    assert goals.evaluate(tokens) == value
    assert goals.plan(tokens)[-1] == "result"
    assert "".join(goals.GLYPH_OF[b] for b in goals.plan(tokens)[:-1]) == "".join(tokens)


def test_goal_errors_name_the_problem_and_the_fix():
    with pytest.raises(GoalError, match="cannot read the goal"):
        goals.parse("make me a sandwich")
    with pytest.raises(GoalError, match="expect="):
        goals.goal_from("compute 1 divided by 3", None)
    assert goals.goal_from("compute 1 divided by 3", "0.333333333").expect == "0.333333333"
    with pytest.raises(GoalError, match="divides by zero"):
        goals.evaluate(goals.parse("5 divided by 0"))
    assert goals.goal_from("compute 12 times 7", None).expect == "84"


def test_generated_goals_are_seeded_and_exact():
    seen = set()
    for seed in range(300):
        goal = goals.generate(np.random.default_rng(seed))
        assert goal == goals.generate(np.random.default_rng(seed))
        value = goals.evaluate(goals.parse(goal.text))
        assert value.denominator == 1 and goal.expect == str(value.numerator)
        seen.add(goals.parse(goal.text)[1])
    assert seen == {"×", "+", "−", "÷"}


@pytest.mark.parametrize(
    ("display", "expect", "same"),
    [
        ("84", "84", True),
        ("−12", "-12", True),
        ("2.5", "2.50", True),
        ("1.2×10⁵", "120000", True),
        ("84+", "84", False),
        ("83", "84", False),
        ("Error", "Error", True),
    ],
)
def test_display_values(display, expect, same):
    assert goals.same_value(display, expect) is same


@pytest.mark.parametrize(
    ("expression", "goal", "computes"),
    [
        ("240÷8", "divide 240 by 8", True),
        ("30", "divide 240 by 8", False),  # the answer typed in
        ("2400÷80", "divide 240 by 8", False),  # the same value from other numbers
        ("7×12", "compute 12 times 7", True),
        ("1,234×5", "compute 1234 times 5", True),
        ("(3+4)×5", "what is (3 + 4) × 5?", True),
        ("", "compute 12 times 7", False),
        ("84", goals.Goal("make it 84", "84"), True),  # a goal the task cannot read asks only for the value
    ],
)
def test_a_win_needs_the_goals_computation(expression, goal, computes):
    goal = goal if isinstance(goal, goals.Goal) else goals.goal_from(goal, None)
    assert goals.computes(expression, goal) is computes


def test_a_machine_without_the_desktop_stack_gets_the_setup_command(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no Xvfb, no dbus-daemon, no mate-calc on it
    with pytest.raises(DesktopUnavailable, match=r"bash scripts/setup.sh.*mate-calc"):
        gym.make("s1/Calculator-v0")
    assert "Xvfb (xvfb)" in unavailable() and "mate-calc (mate-calc)" in unavailable()


def test_options_are_checked():
    with pytest.raises(GoalError, match="needs goal="):
        CalculatorEnv(expect="84")
    with pytest.raises(GoalError, match="expect="):
        CalculatorEnv(goal="compute 2 divided by 3")


# ---------------------------------------------------------------- the window


@desktop
def test_rule_computes_12_times_7_on_the_real_window():
    with make(goal="compute 12 times 7", expect="84") as env:
        obs, info = env.reset(seed=0)
        assert "Goal: compute 12 times 7" in obs and 'edit bar (the display): ""' in obs
        assert info["candidates"] == list(SLOTS) and info["action_mask"].all()
        assert "multiply: Multiply [*]" in obs and "result: Calculate Result" in obs
        pressed, total = [], 0.0
        while not env.done:
            move = env.rule_action()
            pressed.append(move)
            obs, reward, terminated, _, info = env.step_move(move)
            total += reward
        assert pressed == ["1", "2", "multiply", "7", "result"]
        assert terminated and info["won"] and total == 1.0 and info["display"] == "84"
        assert 'edit bar (the display): "84" (bold: a result)' in obs


@desktop
def test_typing_the_answer_and_equals_is_not_a_win():
    with make(goal="divide 240 by 8") as env:
        env.reset(seed=9301)
        for move in ("3", "0", "result"):
            _, reward, terminated, _, info = env.step_move(move)
        assert env.view.display == "30" and env.view.is_result and env.view.expression == "30"
        assert not info["won"] and not terminated and reward == 0.0 and info["score"] == 0.0
        while not env.done:  # the rule types 240÷8 and wins
            _, reward, terminated, _, info = env.step_move(env.rule_action())
        assert info["won"] and terminated and reward == 1.0 and env.view.expression == "240÷8"


@desktop
def test_errors_repeat_and_equals_on_a_result_goes_back():
    with make(goal="compute 5 plus 0", expect="6") as env:  # never won: the moves below explore the app
        env.reset(seed=0)
        env.step_move("divide")
        env.step_move("result")
        assert (env.view.display, env.view.status) == ("÷", "Malformed expression")
        env.step_move("result")  # the same expression again: nothing visible changes
        assert (env.view.display, env.view.status) == ("÷", "Malformed expression")
        env.step_move("clear")
        assert (env.view.display, env.view.status) == ("", "")
        for move in ("5", "add", "0", "result"):
            env.step_move(move)
        assert env.view.display == "5" and env.view.is_result and not env.won
        env.step_move("result")  # '=' on a result shows the expression that gave it
        assert env.view.display == "5+0" and not env.view.bold
        env.step_move("add")
        env.step_move("x_squared")
        assert env.view.display == "5+0+²"


def _random_moves(rng: np.random.Generator, n: int) -> list[str]:
    """Moves weighted towards the ones with history: undo, result, clear."""
    weights = np.array([6.0 if m in ("undo", "result", "clear") else 1.0 for m in SLOTS])
    return [SLOTS[i] for i in rng.choice(len(SLOTS), size=n, p=weights / weights.sum())]


def _agree(fresh: CalculatorEngine, reused: CalculatorEngine, rng: np.random.Generator, n: int) -> None:
    reused.new_game(None)
    for move in _random_moves(rng, 12):  # an earlier game leaves undo history behind
        reused.step(move)
    assert reused.new_game(None) == fresh.restart()
    assert fresh.clean and not reused.clean
    for move in _random_moves(rng, n):
        assert reused.step(move) == fresh.step(move), f"after {fresh.moves}"


@desktop
def test_a_reused_window_shows_what_a_fresh_one_shows():
    a, b = CalculatorEngine(), CalculatorEngine()
    try:
        _agree(a, b, np.random.default_rng(1), 16)
    finally:
        a.close()
        b.close()


@desktop
@pytest.mark.slow
def test_reused_and_fresh_windows_agree_on_many_sequences():
    a, b = CalculatorEngine(), CalculatorEngine()
    try:
        for seed in range(2, 6):  # four random sequences of 30 presses (twelve took 15 s of the suite)
            _agree(a, b, np.random.default_rng(seed), 30)
    finally:
        a.close()
        b.close()


@desktop
def test_screenshots_show_the_state_of_each_fork():
    from PIL import Image

    with make(goal="compute 12 times 7") as env:
        env.reset(seed=0)
        for move in ("1", "2", "multiply"):
            env.step_move(move)
        png = env.screenshot()
        image = Image.open(io.BytesIO(png))
        assert image.format == "PNG" and image.size[0] > 200 and image.size[1] > 150
        fork = env.fork()
        assert fork.screenshot() == png  # another window brought to the same state looks the same
        fork.step_move("7")
        assert fork.screenshot() != png and env.screenshot() == png


@desktop
@pytest.mark.slow
def test_no_process_or_file_outlives_closing(own_pool):
    envs = [make() for _ in range(2)]
    for i, env in enumerate(envs):
        env.reset(seed=i)
        env.step_move("7")
        env.fork().step_move("8")
    engines = list(envs[0]._pool()._engines)
    sessions = [(e.session.pgid, e.session.root) for e in engines]
    assert len(sessions) >= 3
    names = {name for pgid, _ in sessions for _, name in group_members(pgid)}
    assert {"Xvfb", "dbus-daemon", "mate-calc", "at-spi-bus-laun", "at-spi2-registr", "sh"} <= names
    close_calculator_pools()
    for pgid, root in sessions:
        assert group_members(pgid) == [], f"processes left in group {pgid}"
        assert not root.exists()


def _processes() -> dict[int, tuple[int, int]]:
    """pid -> (parent pid, process group) of every live (non-zombie) process, from /proc."""
    out = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(entry.path, "stat").read_text()
            except OSError:
                continue
            state, ppid, pgrp = stat[stat.rindex(")") + 2 :].split()[:3]
            if state != "Z":
                out[int(entry.name)] = (int(ppid), int(pgrp))
    return out


def _descendants(pid: int) -> set[int]:
    """The live processes started, directly or not, by ``pid`` (by parent links, not by name)."""
    children: dict[int, list[int]] = {}
    for child, (parent, _) in _processes().items():
        children.setdefault(parent, []).append(child)
    out, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in out:
                out.add(child)
                todo.append(child)
    return out


@desktop
def test_closing_the_env_and_its_forks_ends_every_process_they_started(own_pool):
    """Counted by ancestry: what this process started since, and the process groups those lead (a
    process whose parent died is re-parented away from us but stays in its group)."""
    before = _descendants(os.getpid())
    env = make(goal="compute 12 times 7")
    env.reset(seed=0)
    env.step_move("1")
    forks = [env.fork(), env.fork()]
    for fork in forks:
        fork.step_move("2")  # each fork takes a desktop of its own
    started = _descendants(os.getpid()) - before
    processes = _processes()
    groups = {processes[pid][1] for pid in started if pid in processes}
    assert len(groups) == 3 and len(started) >= 3 * 4  # a guard, Xvfb, a bus, the app (and AT-SPI) each
    env.close()
    for fork in forks:
        fork.close()
    left = (_descendants(os.getpid()) - before) | {pid for pid, (_, g) in _processes().items() if g in groups}
    assert left == set(), f"{len(left)} processes outlived close(): {sorted(left)}"


def _win(env: CalculatorEnv) -> None:
    while not env.done:
        env.step_move(env.rule_action())
    assert env.won


@desktop
@pytest.mark.parametrize("victim", ["app", pytest.param("xvfb", marks=pytest.mark.slow)])
def test_a_desktop_that_died_between_moves_is_replaced_and_the_game_goes_on(own_pool, victim):
    with make(goal="compute 12 times 7") as env:
        env.reset(seed=0)
        env.step_move("1")
        engine = env.engine()
        pgid = engine.session.pgid
        process = engine.app if victim == "app" else engine.session.xvfb
        process.kill()
        process.wait()
        assert not engine.alive()
        env.step_move("2")  # replayed on another desktop
        assert env.engine() is not engine and env.view.display == "12"
        assert group_members(pgid) == []  # the pool closed the dead one
        _win(env)


@desktop
@pytest.mark.slow
def test_a_hung_app_errors_the_move_and_the_next_game_starts_fresh(own_pool):
    with make(goal="compute 12 times 7") as env:
        env.reset(seed=0)
        engine = env.engine()
        pgid = engine.session.pgid
        engine.app.send_signal(signal.SIGSTOP)
        engine.atspi.timeout = 1.0
        with pytest.raises(CalculatorCrashed, match="mate-calc stopped answering"):
            env.step_move("1")
        assert not engine.alive()
        env.reset(seed=0)
        assert env.engine() is not engine and group_members(pgid) == []
        _win(env)


class HangsTheAppOnce(BasePolicy):
    """Plays the rule, but stops the calculator app (SIGSTOP) at its second decision of the first episode."""

    name = "hangs-once"

    def __init__(self) -> None:
        self.decisions = 0

    def decide(self, situation):
        self.decisions += 1
        if self.decisions == 2:
            for engine in list(CalculatorEnv()._pool()._engines):
                engine.atspi.timeout = 1.0
                engine.app.send_signal(signal.SIGSTOP)
        move = situation.privileged.rule_action()
        p = np.zeros(len(situation.candidates))
        p[situation.texts.index(move)] = 1.0
        return Decision.from_probabilities(p)


@desktop
@pytest.mark.slow
def test_the_runner_marks_a_hung_app_errored_and_plays_the_next_trial_fresh(tmp_path, own_pool):
    from s1gym.runner.spec import evaluate

    summary = evaluate("Calculator", HangsTheAppOnce(), episodes=3, seed=0, out=tmp_path, job="crash",
                       retries=0)
    assert summary["errors"] == 1 and summary["wins"] == 2


@desktop
@pytest.mark.slow
def test_the_guard_ends_a_desktop_whose_python_process_was_killed(tmp_path):
    code = (
        "from s1gym.tasks.desktop.session import DesktopSession\n"
        "s = DesktopSession(); print(s.pgid, s.root, flush=True)\n"
        "import time; time.sleep(60)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    pgid, root = child.stdout.readline().split()
    pgid = int(pgid)
    assert {name for _, name in group_members(pgid)} >= {"Xvfb", "dbus-daemon", "sh"}
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    deadline = time.monotonic() + 10
    while group_members(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert group_members(pgid) == [] and not Path(root).exists()


@desktop
def test_a_session_closes_cleanly_on_its_own():
    session = DesktopSession()
    pgid, root = session.pgid, session.root
    assert session.alive() and session.display.startswith(":")
    session.close()
    assert not session.alive() and group_members(pgid) == [] and not root.exists()
