"""``s1 replay``: pages drawn from real trials, checked in real Chromium (DOM and pictures), GIFs, index.

The browser tests need Chromium and Playwright (``scripts/setup.sh`` installs
both; CI runs them). Truth comes from the envs themselves where they expose
it (2048's ``env.board``), else from the texts the player saw.
"""

from __future__ import annotations

import base64
import io
import json
import re
import shutil
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from paint_task import TASK as PAINT
from paint_task import painted_cells

from s1gym import jobs
from s1gym.ui.cli import main
from s1gym.core import BasePolicy, Decision, Situation
from s1gym.registration import task_ids
from s1gym.reporting.replay.gif import MIN_FRAME_MS, frames_gif, page_gif
from s1gym.reporting.replay.index import write_index
from s1gym.reporting.replay.page import ReplayError, Strings, load_trial, page_html, shown_ticks, trial_data, write_page
from s1gym.runner.spec import evaluate

# --------------------------------------------------------------------------
# Jobs the tests replay (made once)
# --------------------------------------------------------------------------


class FiftyFifty(BasePolicy):
    """Millionaire: takes the 50:50 as soon as it can, then the first answer."""

    name = "fifty"

    def decide(self, situation: Situation) -> Decision:
        texts = situation.texts
        i = texts.index("50:50") if "50:50" in texts else 0
        p = np.full(len(texts), 0.1 / max(1, len(texts) - 1))
        p[i] = 0.9 if len(texts) > 1 else 1.0
        return Decision(p / p.sum(), i)


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    root = tmp_path_factory.mktemp("jobs")
    evaluate("2048", "rule", episodes=1, seed=7, out=root, job="2048-rule")
    evaluate("2048", "uniform", episodes=1, seed=7, out=root, job="2048-uniform")
    evaluate("Blackjack", "rule", episodes=6, seed=0, out=root, job="bj")
    evaluate("Millionaire", FiftyFifty(), episodes=2, seed=0, out=root, job="quiz")
    evaluate(PAINT, "random", episodes=1, seed=0, out=root, job="paint", frames=True)
    evaluate("CookingWorld", "rule", episodes=1, seed=2, options={"size": "small"}, out=root, job="cw-rule")
    evaluate("CookingWorld", "uniform", episodes=1, seed=2, options={"size": "small", "max_steps": 12}, out=root,
             job="cw-uniform", wrappers=["rethink"])
    return root


def panel(trial, strings=None):
    return trial_data(trial, strings or Strings())


# --------------------------------------------------------------------------
# Views (no browser)
# --------------------------------------------------------------------------


def test_2048_views_are_the_real_boards(made):
    trial = load_trial(made / "2048-uniform" / "2048__7")
    data = panel(trial)
    env = gym.make("s1/2048-v0").unwrapped
    env.reset(seed=7)
    for tick, view in zip(trial.episode["ticks"], data["views"], strict=False):
        assert view["kind"] == "2048"
        assert view["board"] == env.board.tolist() and view["move"] == tick["t"]
        env.step_move(tick["move"])
    end = data["views"][-1]
    assert end["board"] == env.board.tolist() and end["status"] == "lost" and data["end"]["known"]
    assert end["score"] == env.game_score and end["max_tile"] == env.max_tile


def test_blackjack_views_show_hands_and_the_hole_card_only_at_the_end(made):
    for trial_dir in sorted((made / "bj").glob("Blackjack__*")):
        data = panel(load_trial(trial_dir))
        first, end = data["views"][0], data["views"][-1]
        assert first["kind"] == end["kind"] == "blackjack"
        assert len(first["player"]) == 2 and first["dealer"][-1] == "?" and len(first["dealer"]) == 2
        assert "?" not in end["dealer"] and end["result"].split()[0] in ("You", "Push")
        outcome = load_trial(trial_dir).result["agent_result"]["metadata"]["final_info"]["outcome"]
        assert {"win": "You win", "loss": "You lose", "push": "Push"}[outcome] in end["result"]


def test_millionaire_views_card_ladder_and_fifty_fifty(made):
    trial = load_trial(made / "quiz" / "Millionaire__0")
    data = panel(trial)
    ticks = trial.episode["ticks"]
    first, after = data["views"][0], data["views"][1]
    assert ticks[0]["move"] == "50:50"
    assert first["number"] == 1 and len(first["answers"]) == 4 and first["removed"] == [] and first["fifty_fifty"]
    assert after["answers"] == first["answers"] and len(after["removed"]) == 2 and not after["fifty_fifty"]
    assert set(first["answers"]) - set(after["removed"]) == {c for c in ticks[1]["candidates"] if c != "walk away"}
    assert first["ladder"][0] == 100 and first["ladder"][-1] == 1_000_000 and first["havens"] == [5, 10]
    end = data["views"][-1]
    assert end["over"] and end["chosen"] == ticks[-1]["move"]
    if not trial.episode["final"]["won"] and end["over"] == "wrong answer":
        assert end["right"] in end["answers"] and end["right"] != end["chosen"]


def test_transcript_views_and_wrapper_events(made):
    trial = load_trial(made / "cw-uniform" / "CookingWorld__2")
    data = panel(trial)
    assert {v["kind"] for v in data["views"]} == {"transcript"}
    strings = Strings()
    data = trial_data(trial, strings)
    table = strings.table()
    tick0 = data["ticks"][0]
    assert table[data["views"][0]["now"]].startswith("Task:") and "Moves:" not in table[data["views"][0]["now"]]
    assert table[tick0["fb"]] == trial.episode["ticks"][0]["feedback"]
    kinds = {k for t in data["ticks"] for k, _ in t["events"]}
    assert "rethink" in kinds  # flat odds on "examine cookbook" repeat; Rethink blocks the repeat


def test_search_events_name_calls_plan_and_following():
    from s1gym.reporting.replay.page import tick_events

    searched = {"info": {"stop_reason": "budget", "policy_calls": 100, "expansions": 103, "elapsed_s": 2.5,
                         "solved": False, "plan": ["read cookbook", "take knife"], "plan_length": 2, "plan_score": 0.5}}
    lines = dict(tick_events(searched))
    assert lines["search"] == "searched (100 calls, 103 expansions, 2.50 s); stopped: budget"
    assert lines["plan"] == "plan of 2 (score 0.50): read cookbook → take knife"
    following = {"info": {"stop_reason": "following_plan", "plan_step": 1, "plan_length": 4, "solved": True}}
    assert tick_events(following) == [("search", "following its plan: move 2 of 5 (a winning plan); no model call")]


def test_probability_chart_names_the_top_and_the_chosen(made):
    data = panel(load_trial(made / "cw-rule" / "CookingWorld__2"))
    for tick in data["ticks"]:
        assert len(tick["top"]) <= 5 and tick["action"] in [i for _, _, i in tick["top"]]
        shown = sum(p for _, p, _ in tick["top"]) + (tick["others"][1] if tick["others"] else 0)
        assert shown == pytest.approx(1.0)


def test_old_episode_files_replay(made, tmp_path):
    """A format-1 file (no feedback, clock or final state) still replays: feedback from the next
    observation, the clock from the latencies, the last state standing in for the end."""
    trial_dir = tmp_path / "old" / "CookingWorld__2"
    shutil.copytree(made / "cw-rule" / "CookingWorld__2", trial_dir)
    doc = jobs.read_episode(trial_dir)
    for t in doc["ticks"]:
        t.pop("feedback"), t.pop("clock_s")
    doc["final"] = {k: v for k, v in doc["final"].items() if k not in ("observation", "clock_s")}
    (trial_dir / "agent" / "episode.json").write_text(json.dumps(doc))
    data = panel(load_trial(trial_dir))
    assert not data["end"]["known"] and data["views"][-1]["stale"]
    assert data["ticks"][1]["clock"] == pytest.approx(doc["ticks"][0]["latency_s"])
    strings = Strings()
    data = trial_data(load_trial(trial_dir), strings)
    assert "You take the" in strings.table()[data["ticks"][1]["fb"]] or strings.table()[data["ticks"][1]["fb"]]


def test_shown_ticks_bound():
    assert shown_ticks(5, 10) == [0, 1, 2, 3, 4]
    picks = shown_ticks(1000, 7)
    assert len(picks) == 7 and picks[0] == 0 and picks[-1] == 999


def test_page_is_self_contained_and_bounded(made):
    trials = [load_trial(made / "2048-rule" / "2048__7"), load_trial(made / "2048-uniform" / "2048__7")]
    page = page_html(trials, mode="step", max_ticks=20)
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page) and "@import" not in page
    data = json.loads(re.search(r'<script type="application/json" id="replay-data">(.*?)</script>', page, re.S).group(1))
    assert data["mode"] == "step" and data["bounds"]["max_ticks"] == 20
    assert all(len(t["ticks"]) <= 20 and len(t["views"]) == len(t["ticks"]) + 1 for t in data["trials"])
    assert [t["label"] for t in data["trials"]] == ["Rule", "Uniform"]
    assert "</script>" not in page.split('id="replay-data">')[1].split("</script>")[0]


# --------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------


def test_cli_writes_pages_and_index(made, tmp_path, capsys):
    a, b = made / "2048-rule", made / "2048-uniform"
    assert main(["replay", str(a / "2048__7"), str(b / "2048__7"), "--out", str(tmp_path / "one")]) == 0
    assert (tmp_path / "one" / "2048__7.html").is_file()
    assert main(["replay", str(a), str(b), "--seed", "7", "--out", str(tmp_path / "seed"), "--mode", "step"]) == 0
    assert (tmp_path / "seed" / "2048__7.html").is_file()
    assert main(["replay", str(made / "bj"), "--out", str(tmp_path / "idx")]) == 0
    index = (tmp_path / "idx" / "index.html").read_text()
    links = re.findall(r'href="([^"]+)"', index)
    assert len(links) == 6 and all((tmp_path / "idx" / link).is_file() for link in links)
    assert "rule" in index and "score [95% CI]" in index
    capsys.readouterr()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["/nonexistent/trial"], "no such file or folder"),
        (["JOB", "JOB", "JOB"], "one or two trials"),
        (["JOB", "--seed", "99"], "no finished trial of seed 99; its seeds: 7"),
        (["TRIAL", "--seed", "7"], "trial folders already"),
        (["TRIAL", "JOB"], "not both"),
        (["TRIAL", "--speed", "-1"], "--speed -1"),
        (["TRIAL", "--max-frames", "0"], "--max-frames 0"),
        (["TRIAL", "--from-frames", "x"], "--from-frames takes folders of PNGs"),
        (["--from-frames", "/nonexistent"], "no PNG files there"),
        ([], "pass one or two trials"),
    ],
)
def test_cli_errors_say_what_to_do(made, tmp_path, capsys, args, message):
    job, trial = made / "2048-rule", made / "2048-rule" / "2048__7"
    argv = ["replay", *[str(job) if a == "JOB" else str(trial) if a == "TRIAL" else a for a in args],
            "--out", str(tmp_path)]
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_unfinished_trial_is_named(made, tmp_path, capsys):
    trial = tmp_path / "j" / "2048__7"
    shutil.copytree(made / "2048-rule" / "2048__7", trial)
    (trial / "result.json").unlink()
    with pytest.raises(ReplayError, match="not a finished trial"):
        load_trial(trial)


# --------------------------------------------------------------------------
# In Chromium
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser():
    from s1gym.reporting.replay.gif import chromium_page

    with chromium_page(1300, 950) as page:
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.errors = errors
        yield page


def open_page(page, path: Path):
    page.errors.clear()
    page.goto(path.resolve().as_uri())
    page.wait_for_function("() => window.replay !== undefined")
    return page


def tiles(page, k: int) -> list[list[int]]:
    values = page.eval_on_selector_all(f".panel[data-trial='{k}'] .board .tile", "els => els.map(e => +e.dataset.value)")
    return [values[i : i + 4] for i in range(0, 16, 4)]


def test_2048_pair_in_chromium_step_by_step(made, tmp_path, browser):
    trials = [load_trial(made / "2048-rule" / "2048__7"), load_trial(made / "2048-uniform" / "2048__7")]
    path = write_page(trials, tmp_path, mode="step")
    page = open_page(browser, path)
    envs = []
    for _ in trials:
        env = gym.make("s1/2048-v0").unwrapped
        env.reset(seed=7)
        envs.append(env)
    last = max(len(t.episode["ticks"]) for t in trials)
    for step in range(last + 1):
        if step:
            page.click("text=next ›")
        for k, (trial, env) in enumerate(zip(trials, envs, strict=True)):
            ticks = trial.episode["ticks"]
            assert tiles(page, k) == env.board.tolist(), (k, step)
            where = page.get_attribute(f".panel[data-trial='{k}'] .decision", "data-tick")
            if step < len(ticks):
                assert where == str(step)
                move = page.inner_text(f".panel[data-trial='{k}'] .move")
                assert move == f"→ {ticks[step]['move']}"
                bars = page.eval_on_selector_all(f".panel[data-trial='{k}'] .bar", "els => els.map(e => [e.dataset.name, +e.dataset.p])")
                want = {c: p for c, p in zip(ticks[step]["candidates"], ticks[step]["probabilities"], strict=True) if p > 0}
                assert dict(bars) == pytest.approx(want)
                env.step_move(ticks[step]["move"])
            else:
                assert where == "end" and "Final: task failure: lost" in page.inner_text(f".panel[data-trial='{k}'] .decision")
    assert page.errors == []
    # keyboard: back one step
    page.keyboard.press("ArrowLeft")
    assert page.evaluate("() => replay.state().pos") == last - 1
    shot = page.screenshot()
    from PIL import Image

    im = Image.open(io.BytesIO(shot)).convert("RGB")
    colors = im.getcolors(1 << 20)
    assert colors and len(colors) > 50  # tiles, bars and text drawn, not a blank page
    # 2048's tile colours are on the picture (the "2" tile's #eee4da)
    assert any(c == (0xEE, 0xE4, 0xDA) for _, c in colors)


def test_time_mode_follows_each_episodes_clock(made, tmp_path, browser):
    trials = [load_trial(made / "cw-rule" / "CookingWorld__2"), load_trial(made / "cw-uniform" / "CookingWorld__2")]
    path = write_page(trials, tmp_path, mode="time")
    page = open_page(browser, path)
    datas = [panel(t) for t in trials]
    moments = sorted({t["clock"] + f * t["lat"] for d in datas for t in d["ticks"] for f in (0.5, 1.0)})
    for moment in moments[:: max(1, len(moments) // 25)]:
        page.evaluate("t => replay.show(t)", moment)
        state = page.evaluate("() => replay.state()")
        for k, d in enumerate(datas):
            starts = [t["clock"] for t in d["ticks"]]
            if moment >= d["end"]["clock"]:
                want = {"i": len(starts), "thinking": False}
            else:
                i = max([j for j, s in enumerate(starts) if s <= moment], default=0)
                want = {"i": i, "thinking": moment < starts[i] + d["ticks"][i]["lat"]}
            assert state["positions"][k] == want, (moment, k)
            assert page.get_attribute(f".panel[data-trial='{k}']", "data-position") == str(want["i"])
            thinking = "thinking" in page.get_attribute(f".panel[data-trial='{k}'] .decision", "class")
            assert thinking == want["thinking"]
    assert page.errors == []
    # Rethink's blocks are listed under the decision they changed, once it is made
    tick = next(t for t in datas[1]["ticks"] if any(k == "rethink" for k, _ in t["events"]))
    page.evaluate("t => replay.show(t)", tick["clock"] + tick["lat"])
    assert page.get_attribute(".panel[data-trial='1'] .decision", "data-tick") == str(tick["t"])
    assert "blocked" in page.inner_text(".panel[data-trial='1'] .events li[data-kind='rethink']")
    left = page.evaluate("() => replay.state()")["positions"][0]["i"]
    page.evaluate("() => replay.setMode('step')")  # switching modes keeps the left panel's decision
    assert page.evaluate("() => replay.state()")["mode"] == "step"
    assert page.get_attribute(".panel[data-trial='0']", "data-position") == str(left)


def test_screenshots_are_shown(made, tmp_path, browser):
    trial = load_trial(made / "paint" / "Paint__0")
    page = open_page(browser, write_page([trial], tmp_path, mode="step"))
    n = len(trial.episode["ticks"])
    for step in range(n + 1):
        page.evaluate("p => replay.show(p)", step)
        src = page.get_attribute(".panel img.shot", "src")
        png = base64.b64decode(src.split(",", 1)[1])
        assert painted_cells(png) == painted_cells((trial.path / "agent" / f"frames/{step:04d}.png").read_bytes())
        assert page.evaluate("() => document.querySelector('img.shot').naturalWidth") == 96
    assert page.errors == []


def test_gif_of_a_page_has_the_scheduled_frames(made, tmp_path, browser):
    trials = [load_trial(made / "2048-rule" / "2048__7"), load_trial(made / "2048-uniform" / "2048__7")]
    path = write_page(trials, tmp_path, mode="step", speed=5)
    page = open_page(browser, path)
    plan = page.evaluate("() => replay.schedule(12, 1500)")
    assert len(plan) <= 13 and plan[-1] == [max(len(t.episode["ticks"]) for t in trials), 1500]
    done = page_gif(path, tmp_path / "pair.gif", max_frames=12, width=600, hold_ms=1500, page=page)
    from PIL import Image

    with Image.open(tmp_path / "pair.gif") as gif:
        durations = []
        for i in range(gif.n_frames):
            gif.seek(i)
            durations.append(gif.info["duration"])
        assert gif.n_frames == done["frames"] == len(plan)  # every step changes the picture
        assert gif.size == done["size"] and gif.size[0] == 600
    assert sum(durations) == pytest.approx(sum(ms for _, ms in plan), abs=10)


def _slow_think(trial, k: int = 3, seconds: float = 14.8):
    """``trial`` as if its decision ``k`` had taken ``seconds`` (Search thinking), the clocks after it later."""
    import copy

    trial = copy.deepcopy(trial)
    ticks = trial.episode["ticks"]
    extra = seconds - float(ticks[k]["latency_s"])
    ticks[k]["latency_s"] = seconds
    for later in [*ticks[k + 1 :], trial.episode.get("final") or {}]:
        if isinstance(later.get("clock_s"), (int, float)):
            later["clock_s"] += extra
    return trial


def _overlap(a: dict, b: dict) -> bool:
    return a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"] and a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"]


def test_the_thinking_label_takes_only_the_move_line_and_says_how_long(made, tmp_path, browser):
    trials = [_slow_think(load_trial(made / "2048-rule" / "2048__7")), load_trial(made / "2048-uniform" / "2048__7")]
    page = open_page(browser, write_page(trials, tmp_path, mode="time"))
    start = panel(trials[0])["ticks"][3]["clock"]
    page.evaluate("t => replay.show(t)", start + 5.0)
    box = ".panel[data-trial='0'] .decision"
    assert "thinking" in page.get_attribute(box, "class")
    label = page.locator(f"{box} .thinking-label")
    where = label.bounding_box()
    for other in (".dline", ".bars", ".meta.latency", ".events"):
        other_box = page.locator(f"{box} {other}").bounding_box()
        assert other_box is None or not _overlap(where, other_box), other
    assert where["height"] > 0 and where == page.locator(f"{box} .move-row").bounding_box()
    assert label.inner_text() == "deciding… 5.00 s of 14.80 s"
    assert page.errors == []


def test_a_long_think_holds_a_gif_frame_at_most_two_seconds(made, tmp_path, browser):
    from PIL import Image

    trials = [_slow_think(load_trial(made / "2048-rule" / "2048__7")), load_trial(made / "2048-uniform" / "2048__7")]
    path = write_page(trials, tmp_path, mode="time")
    page_gif(path, tmp_path / "slow.gif", max_frames=30, width=480, page=open_page(browser, path))
    with Image.open(tmp_path / "slow.gif") as gif:
        durations = []
        for i in range(gif.n_frames):
            gif.seek(i)
            durations.append(gif.info["duration"])
    # the last frame's hold, as before, give or take what is carried forward: the schedule moves its last kept
    # time to the episode's end, so the gap before it (set by the run's own latencies) can be shorter than a GIF
    # frame, whose minimum the hold pays back
    assert max(durations) <= 2000 and abs(durations[-1] - 2000) <= MIN_FRAME_MS


def test_gif_from_frame_folders(made, tmp_path):
    trial = made / "paint" / "Paint__0" / "agent" / "frames"
    n = len(list(trial.glob("*.png")))
    done = frames_gif([trial, trial], tmp_path / "f.gif", fps=5, width=1000)
    assert done["frames"] == n and done["size"] == (2 * 96 + 12, 96)
    done = frames_gif([trial], tmp_path / "g.gif", max_frames=2)
    assert done["frames"] == 2


def test_index_links_open_replays(made, tmp_path, browser):
    index, pages = write_index([made / "2048-rule", made / "2048-uniform"], tmp_path)
    assert [p.name for p in pages] == ["2048__7.html"]
    page = browser
    page.errors.clear()
    page.goto(index.resolve().as_uri())
    assert page.locator("table.setups tr").count() == 3  # header + one row per setup
    page.click("table.trials a")
    page.wait_for_function("() => window.replay !== undefined")
    assert page.locator(".panel").count() == 2 and page.errors == []


@pytest.mark.slow
def test_every_task_replays_in_chromium(tmp_path, browser):
    """One short episode of every registered task, replayed and drawn without a script error."""
    kinds = {"s1/2048-v0": "2048", "s1/Blackjack-v0": "blackjack", "s1/Millionaire-v0": "millionaire",
             "s1/BabyAI-v0": "babyai"}
    for env_id in task_ids():
        job = env_id.split("/")[-1]
        evaluate(env_id, "random", episodes=1, seed=1, options={"max_steps": 4}, out=tmp_path, job=job)
        (trial_dir,) = [p for p in (tmp_path / job).iterdir() if p.is_dir()]
        page = open_page(browser, write_page([load_trial(trial_dir)], tmp_path / "pages", mode="step"))
        n = len(jobs.read_episode(trial_dir)["ticks"])
        for step in range(n + 1):
            page.evaluate("p => replay.show(p)", step)
            kind = page.get_attribute(".panel .view", "class")
            assert f"kind-{kinds.get(env_id, 'transcript')}" in kind, (env_id, step, kind)
        assert page.errors == [], env_id



def test_a_family_view_names_its_drawers_and_the_page_inlines_them_once(made):
    from s1gym.reporting.replay.views import view_assets, view_kind

    script, style = view_assets("s1/2048-v0")
    assert 'VIEWS["2048"]' in script and ".g2048" in style
    assert view_assets("s1/Blackjack-v0") == (script, style) and view_kind("s1/Blackjack-v0") == "blackjack"
    assert view_assets("s1/CookingWorld-v0") == ("", "") and view_kind("s1/CookingWorld-v0") == "transcript"
    page = page_html([load_trial(made / "2048-rule" / "2048__7"), load_trial(made / "2048-uniform" / "2048__7")])
    assert page.count("window.S1Views = window.S1Views || {}") == 1 and page.count(".g2048 {") == 1
    assert page.index(".g2048 {") < page.index(":root {")  # the page's own rules come after, as they did
    cw = page_html([load_trial(made / "cw-rule" / "CookingWorld__2")])
    assert 'VIEWS["2048"]' not in cw and ".g2048" not in cw
