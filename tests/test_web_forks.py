"""Forks of the web tasks in a real Chromium: lazy forks that replay exactly, the same page from the
same seed and moves on any page, the cheap restores (a restart in the document, answers remembered per
state and move, MEMO) and the fork determinism fixes, each at its cause."""

from __future__ import annotations

import time

import gymnasium as gym
import pytest

from s1gym.engines import browser
from s1gym.tasks.web.engine import MEMO, RUNTIME_JS, WebEngine, task_url

from web_envs import make, play_rule, play_rule_moves


pytestmark = pytest.mark.usefixtures("no_linger")  # the browser closes with each test's last env


# ------------------------------------------------------------------ forks
def test_forks_are_lazy_replay_exactly_and_stay_independent():
    with make("book-flight") as env:
        play_rule_moves(env, seed=3, moves=3)
        pool = env._pool()
        opened = pool.opened
        fork = env.fork()
        assert pool.opened == opened and fork.game_state is env.game_state  # no page yet
        assert fork.state_text == env.state_text and fork.candidates == env.candidates
        page = env.game_state.engine
        move = env.rule_action()
        _, _, _, _, info_fork = fork.step_move(move)  # the fork takes the env's page: no page opened, no replay
        assert pool.opened == opened and fork.game_state.engine is page and env.game_state.engine is not page
        assert env.steps == 3 and len(env.history) == 3
        _, _, _, _, info_env = env.step_move(move)  # the env answers from the remembered (state, move)
        assert fork.state_text == env.state_text and info_fork["candidates"] == info_env["candidates"]
        env.step_move(env.rule_action())  # a move nobody played: the env restores its state on a page of its own
        assert env.game_state.engine is not page and fork.game_state.engine is page
        fork.close()


def test_screenshot_is_a_png_of_the_envs_state():
    with make("click-button") as env:
        env.reset(seed=1)
        fork = env.fork()
        before = env.screenshot()
        assert before[:8] == b"\x89PNG\r\n\x1a\n" and len(before) > 1000
        fork.step_move(fork.candidates[0])  # typing into a textbox changes the fork's page only
        assert env.screenshot() == before and fork.screenshot() != before
        fork.close()


# ------------------------------------------------------------------ determinism
def _dom_text(env) -> str:
    return env.engine().page.evaluate("() => document.body.innerText + '|' + document.body.innerHTML.length")


@pytest.mark.parametrize("task", ["social-media", "scroll-text-2", "book-flight"])
def test_same_seed_and_moves_give_the_same_page_on_any_page(task):
    """On a fresh page, on a page that played other episodes first (restarted in its document) and on a
    fork's page: the same seed and moves give the same DOM text."""
    import random

    first, other = make(task), make(task)
    try:
        other.reset(seed=41)  # an earlier episode on the second page, with moves
        rng = random.Random(0)
        for _ in range(3):
            if other.candidates:
                other.step_move(rng.choice(other.candidates))
        first.reset(seed=40)
        other.reset(seed=40)
        rng = random.Random(1)
        for _ in range(3):
            if first.done:
                break
            move = rng.choice(first.candidates)
            fork = first.fork()
            fork.step_move(move)
            first.step_move(move)
            other.step_move(move)
            assert _dom_text(first) == _dom_text(other) == _dom_text(fork)
            assert first.state_text == other.state_text == fork.state_text
            assert first.state_key() == other.state_key() == fork.state_key()  # the hidden part too
            fork.close()
    finally:
        first.close()
        other.close()


def test_the_page_has_no_free_randomness_and_no_running_clock():
    with make("click-button") as env:
        env.reset(seed=3)
        page = env.engine().page
        before = page.evaluate("[Date.now(), performance.now(), new Date().getTime()]")
        time.sleep(0.3)
        assert page.evaluate("[Date.now(), performance.now(), new Date().getTime()]") == before
        page.evaluate("__s1.clock.runFor(250)")
        assert page.evaluate("Date.now()") == before[0] + 250
        with browser.holding() as fresh:  # Math.random is seeded before the page's first script: two fresh pages draw the same numbers
            draws = []
            for _ in range(2):
                context, other = fresh.new_page()
                context.add_init_script(RUNTIME_JS)
                other.goto(task_url("click-button"))
                draws.append(other.evaluate("[1, 2, 3].map(() => Math.random())"))
                context.close()
            assert draws[0] == draws[1]


def test_social_media_forks_land_every_click_the_same_way():
    """The issue's divergence: a fork of the same state playing the same move sometimes ended the episode and
    sometimes not (a :hover icon swapped for an image still loading shrank to nothing under the press)."""
    with make("social-media") as env:
        env.reset(seed=9301)
        icons = [m for m in env.candidates if m.startswith("click icon") and "more" not in m][:6]
        for move in icons:
            outcomes = set()
            for _ in range(2):
                fork = env.fork()
                fork.step_move(move)
                outcomes.add((fork.game_over, fork.history[-1][1]))
                fork.close()
            assert len(outcomes) == 1, (move, outcomes)


def test_the_flights_rule_clicks_the_airport_it_names():
    """Seed 9302: the rule's click on "Brownsville, TX (BRO)" landed on "Brooks Lodge, AK (RBH)"."""
    with gym.make("s1/Flights-v0") as env:
        assert play_rule(env, 9302).won, env.history
        assert 'click item "Brownsville, TX (BRO)"' in [m for m, _ in env.history]


# ------------------------------------------------------------------ cheap forks
def test_a_fork_restores_by_restarting_in_the_document_and_replaying_without_reading():
    with make("book-flight") as env:
        play_rule_moves(env, seed=4, moves=4)
        page = env.engine()
        fork = env.fork()
        fork.step_move(fork.candidates[0])  # takes the env's page
        loads, restarts = page.loads, page.restarts
        reads = []
        original = WebEngine._read
        WebEngine._read = lambda self, *a, **k: reads.append(1) or original(self, *a, **k)
        try:
            env.step_move(env.rule_action())  # the env restores its 4 moves on another page, then steps
        finally:
            WebEngine._read = original
        restored = env.game_state.engine
        assert restored.loads <= 1 and (restored is not page)
        assert len(reads) == 1  # after the step only: the next move's elements were read when the state was
        # first reached (the replay only lets the page's time pass after its last move)
        assert page.loads == loads and page.restarts == restarts
        fork.close()


def test_a_move_a_page_already_played_costs_no_page():
    with make("login-user") as env:
        env.reset(seed=1)
        pool = env._pool()
        move = env.candidates[1]
        first = env.fork()
        first.step_move(move)
        hits, restores = pool.answers.hits, pool.restores
        second = env.fork()
        second.step_move(move)  # the same (state, move): the answer without a page
        assert pool.answers.hits == hits + 1 and pool.restores == restores
        assert second.state_text == first.state_text and second.game_state.engine is None
        first.close()
        second.close()


def test_a_memoryless_page_answers_a_move_as_a_page_that_showed_the_same_did_and_as_a_real_page_does():
    """simple-algebra: "7" typed over "5" is the page with "7" typed after a click into the box (typing clears
    the box first), so the second child comes from MEMO without a page, and equals a real page's answer."""
    with make("simple-algebra") as env:
        env.reset(seed=3)
        five, seven = 'type "5" into textbox "x ="', 'type "7" into textbox "x ="'
        typed, clicked = env.fork(), env.fork()
        typed.step_move(five)
        clicked.step_move('click textbox "x ="')
        typed.fork().step_move(seven)  # on a page
        hits = MEMO.hits
        child = clicked.fork()
        child.step_move(seven)
        assert MEMO.hits == hits + 1 and child.game_state.engine is None
        page = WebEngine()
        try:
            page.replay(child.game_state.game, child.game_state.moves[:-1])
            assert page.step(seven) == child._answer  # every field: text, moves, form, digests
        finally:
            page.close()
        assert dict(child._answer.form)["math-answer"] == "7"


def test_restoring_a_state_costs_a_few_steps_not_a_page_load():
    """A fork's restore (in-document restart and replay of 5 moves) against a fresh page load and the same
    replay, measured side by side: the restore is cheaper (bench/web.py has the figures)."""
    with make("book-flight") as env:
        play_rule_moves(env, seed=6, moves=5)
        state = env.game_state
        page = env.engine()
        restore, load = [], []
        for _ in range(3):
            t = time.perf_counter()
            page.replay(state.game, state.moves)
            restore.append(time.perf_counter() - t)
            page._loaded = ""  # the next replay loads the page again first
            t = time.perf_counter()
            page.replay(state.game, state.moves)
            load.append(time.perf_counter() - t)
        assert min(restore) < min(load), (restore, load)


# ------------------------------------------------------------------ fork determinism, per cause
def _form(env) -> dict[str, str]:
    return dict(env._answer.form)


@pytest.mark.parametrize("task", ["simon-says", "form-sequence-3"])
def test_a_restart_in_the_document_is_the_fresh_page(task):
    """simon-says binds another click handler to its four buttons every episode, form-sequence-3 makes its
    selectric drop-down again on the same select: a second episode on the same env, restarted in the same
    document (their catalogue entries' ``restart_js``), must go as on a fresh page (simon-says: not end when
    the first episode's stale sequence is complete)."""
    env, fresh = make(task), make(task)
    try:
        env.reset(seed=1)
        for move in env.candidates[:2]:  # an earlier episode, left unfinished, on the env's page
            env.step_move(move)
        assert not env.done
        page = env.engine()
        loads, restarts = page.loads, page.restarts
        env.reset(seed=2)
        assert (env.engine() is page, page.loads, page.restarts) == (True, loads, restarts + 1)  # not reloaded
        fresh.reset(seed=2)
        for i in range(3):  # simon-says: the first three buttons (a button's name is its colour)
            assert env.candidates == fresh.candidates
            env.step_move(env.candidates[i % len(env.candidates)])
            fresh.step_move(fresh.candidates[i % len(fresh.candidates)])
            assert (env.state_text, env.done, env._answer.raw_reward) == (
                fresh.state_text, fresh.done, fresh._answer.raw_reward)
    finally:
        env.close()
        fresh.close()


def test_simon_says_shows_its_sequence_to_a_player_who_waits():
    """A wait lets 0.1 s of page time pass, so every blink (0.25 s, a lighter colour in the button's name)
    is on the page at some read: pressing the buttons in the order seen wins."""
    with make("simon-says") as env:
        env.reset(seed=1)
        plain = [m for m in env.candidates if m != "wait"]
        seen, before = [], None
        for _ in range(35):  # the sequence (3-5 blinks, 0.6 s apart) is over by 3.25 s
            lit = next((i for i, m in enumerate(env.candidates[:4]) if m != plain[i]), None)
            if lit is not None and lit != before:
                seen.append(lit)
            before = lit
            env.step_move("wait")
        assert 3 <= len(seen) <= 5
        for i in seen:
            env.step_move(env.candidates[i])
        assert env.won


def test_a_paste_before_any_copy_pastes_nothing_after_an_episode_that_copied():
    """The page's clipboard belongs to the episode: what an earlier episode in the same document copied is
    not pasted by the next one (a fresh page has nothing to paste)."""
    env, fresh = make("copy-paste"), make("copy-paste")
    try:
        env.reset(seed=1)
        for move in ("click textarea", "press Control+A", "press Control+C"):
            env.step_move(move)
        env.reset(seed=2)  # restarted in the same document
        fresh.reset(seed=2)
        for move in ("click textbox", "press Control+V"):
            env.step_move(move)
            fresh.step_move(move)
        assert _form(env)["answer-input"] == _form(fresh)["answer-input"] == ""
        assert env.state_text == fresh.state_text
        for move in ("click textarea", "press Control+A", "press Control+C", "click textbox", "press Control+V"):
            env.step_move(move)  # and copy-paste within the episode works
        assert _form(env)["answer-input"] == _form(env)["to-copy"] != ""
    finally:
        env.close()
        fresh.close()


def test_a_list_boxs_options_are_select_moves_that_replay_exactly():
    """click-scroll-list's options are chosen by select moves (no native clicks, which Chromium follows
    with a scroll of its own timing): every option has one, and a fork's replay shows the same page."""
    with make("click-scroll-list") as env:
        env.reset(seed=34002)
        page = env.engine().page
        n = page.evaluate("() => document.getElementById('options').options.length")
        selects = [m for m in env.candidates if m.startswith("select ")]
        assert len(selects) == n and not any(m.startswith("click option") for m in env.candidates)
        for move in (selects[-1], selects[0], selects[-2]):  # below the fold first
            fork = env.fork()
            fork.step_move(move)  # on the env's page
            env.step_move(move)  # restored on another page by a restart and a replay
            assert fork.state_text == env.state_text and fork.candidates == env.candidates
            fork.close()
        chosen = env.engine().page.evaluate(
            "() => [...document.getElementById('options').selectedOptions].map((o) => o.text)")
        assert len(chosen) == 3


@pytest.mark.parametrize(("task", "seed"), [("copy-paste", 0), ("click-shades", 0), ("drag-box", 0)])
def test_what_the_text_leaves_out_is_in_the_state_key(task, seed):
    """Selecting and copying text, clicking a box into the selection, dragging a box change no page text and
    no move, so Search pruned them as moves that change nothing and never solved these tasks: the state key
    tells those states apart, and the rule's path from the start has no state twice."""
    with make(task) as env:
        env.reset(seed=seed)
        keys = [env.state_key()]
        while not env.done:
            env.step_move(env.rule_action())
            keys.append(env.state_key())
        assert env.won and len(set(keys)) == len(keys), env.history


def test_moving_items_offers_waiting_then_the_circles_where_they_are_now_and_its_rule_wins():
    with make("moving-items") as env:
        env.reset(seed=0)
        assert env.candidates == ("wait",)  # no circle has entered the picture yet
        for _ in range(10):
            if any(m.startswith("click circle") for m in env.candidates):
                break
            env.step_move("wait")
        circle = next(m for m in env.candidates if m.startswith("click circle"))
        items = "() => document.querySelectorAll('svg .item').length"
        assert env.engine().page.evaluate(items) == 10
        fork = env.fork()
        fork.step_move(circle)
        env.step_move(circle)
        assert fork.state_text == env.state_text and fork.candidates == env.candidates
        assert env.engine().page.evaluate(items) == 9  # the click hit the circle: the page removed it
        fork.close()
        assert play_rule(env, 1).won, env.history  # the rule: click the first circle offered, else wait
