"""The browser behind the web tasks, a real Chromium: no process outlives its env, replay's pages and
forked children, a browser that dies or a page that hangs (replaced by replay, or the step fails at its
timeout), and the runner recording such a trial as errored and playing on (Search through forks, too)."""

from __future__ import annotations

import json
import os
import time

import pytest

import s1gym
from s1gym.engines import browser

from web_envs import make


pytestmark = pytest.mark.usefixtures("no_linger")  # the browser closes with each test's last env


def wait_until(predicate, seconds: float = 10.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


# ------------------------------------------------------------------ the browser's life
def test_no_chromium_process_outlives_the_env():
    before = browser.chromium_processes()
    env = make("click-button")
    env.reset(seed=1)
    fork = env.fork()
    fork.step_move(fork.candidates[0])
    during = browser.chromium_processes()
    assert len(during) > len(before)
    env.close()  # the last env built by make closes: its pages and the browser go
    assert wait_until(lambda: browser.chromium_processes() == before), browser.chromium_processes()


def test_replay_pages_share_the_threads_playwright_while_a_web_env_runs():
    """A second ``sync_playwright()`` in a thread whose driver runs fails; replay's browser is the
    web tasks' one (CI failed when the replay tests ran after the web tests in one process)."""
    from s1gym.reporting.replay.gif import chromium_page

    with make("click-button") as env:
        env.reset(seed=1)
        with chromium_page(320, 200) as page:
            page.set_content("<p id=x>drawn</p>")
            assert page.inner_text("#x") == "drawn"
            assert page.viewport_size == {"width": 320, "height": 200}
        assert env.step_move(env.candidates[0])[0]  # the env's own page still answers


def test_a_forked_child_starts_without_the_parents_driver_browser_or_pools():
    """An async vector env forks its workers: they must not talk to the parent's Playwright pipe or
    its pages (CI saw "socket hang up" and "Cannot find command to respond" from that)."""
    import multiprocessing

    from s1gym.engines import base as engine

    with make("click-button") as env:
        env.reset(seed=1)
        assert browser.current_browser() is not None and engine.pool_stats()

        def report(conn):
            conn.send((len(browser._DRIVERS), len(browser._BROWSERS), len(engine.pool_stats())))
            conn.close()

        ctx = multiprocessing.get_context("fork")
        parent_end, child_end = ctx.Pipe()
        child = ctx.Process(target=report, args=(child_end,))
        child.start()
        assert parent_end.recv() == (0, 0, 0)
        child.join(30)
        assert env.step_move(env.candidates[0])[0]  # the parent's browser is untouched


def test_a_browser_that_dies_between_moves_is_replaced_by_replay():
    with make("click-button") as env:
        env.reset(seed=1)
        env.step_move(env.candidates[0])  # a move to replay
        old = browser.current_browser()
        old.kill()  # the real process group dies, as in a crash between two decisions
        assert not old.alive()
        env.step_move(f'click button "{dict(env.fields)["target"]}"')  # a fresh browser, the moves replayed
        new = browser.current_browser()
        assert new is not old and new.alive() and new.pid != old.pid and env.won


@pytest.mark.slow  # waits for the watchdog
def test_a_browser_that_dies_during_a_move_fails_the_step():
    import threading

    with make("click-button", step_timeout=60) as env:
        env.reset(seed=1)
        env.engine().page.evaluate("setTimeout(() => { for (;;) {} }, 0)")  # the move will not finish...
        threading.Timer(2.0, browser.current_browser().kill).start()  # ...and the browser dies under it
        with pytest.raises(browser.BrowserCrashed, match="died during"):
            env.step(0)
        obs, _ = env.reset(seed=1)  # the next episode starts a fresh browser
        assert "Instruction:" in obs and browser.current_browser().alive()


@pytest.mark.slow  # waits for the watchdog
def test_a_hung_page_is_killed_at_the_step_timeout():
    with make("click-button", step_timeout=5) as env:
        env.reset(seed=1)
        env.engine().page.evaluate("setTimeout(() => { for (;;) {} }, 0)")  # the page hangs on its next turn
        start = time.monotonic()
        with pytest.raises(browser.BrowserCrashed, match="step_timeout=5 s; killed"):
            env.step(0)
        assert time.monotonic() - start < 60
        obs, _ = env.reset(seed=1)  # and the env goes on with a fresh browser
        assert "Instruction:" in obs


# ------------------------------------------------------------------ the runner
class HangThePageOnce:
    """A rule player that makes the page hang (an endless script) in the first episode, once."""

    name = "hang-once"

    def __init__(self) -> None:
        from s1gym.policies import make_policy

        self.rule = make_policy("rule")
        self.done = False

    def reset(self) -> None:
        self.rule.reset()

    def decide(self, situation):
        if not self.done:
            self.done = True
            env = situation.privileged._env  # the test reaches into the page; no policy may
            env.engine().page.evaluate("setTimeout(() => { for (;;) {} }, 0)")
        return self.rule.decide(situation)

    def decide_many(self, situations):
        return [self.decide(s) for s in situations]


@pytest.mark.slow  # waits for the watchdog
def test_the_runner_records_a_hung_browser_as_an_errored_trial_and_goes_on(tmp_path):
    summary = s1gym.evaluate(
        "MiniWoB", HangThePageOnce(), episodes=2, seed=0, options={"task": "click-button", "step_timeout": 5},
        out=tmp_path, retries=0,
    )
    job_dir = tmp_path / os.path.basename(summary["job_dir"])
    result = json.loads((job_dir / "result.json").read_text())
    assert result["stats"]["n_errored_trials"] == 1
    results = [json.loads((t / "result.json").read_text()) for t in sorted(job_dir.iterdir()) if t.is_dir()]
    errored = [r for r in results if r["exception_info"]]
    assert len(errored) == 1 and errored[0]["exception_info"]["exception_type"] == "BrowserCrashed"
    ok = [r for r in results if not r["exception_info"]]
    assert len(ok) == 1 and ok[0]["verifier_result"]["rewards"]["reward"] == 1.0


def test_search_plays_the_web_through_forks(tmp_path):
    summary = s1gym.evaluate(
        "MiniWoB", "uniform", wrappers=["search"], budget=20, episodes=1, seed=1,
        options={"task": "click-checkboxes"}, out=tmp_path,
    )
    assert summary["wins"] == 1
