"""Replay pages: one self-contained HTML file that plays one or two trials side by side.

The page is one file with its CSS, script and data inline (no network, no
external files): the data is a JSON block with, per trial, the views of
:mod:`s1gym.reporting.replay.views`, and per decision the move, the top candidates by
probability, latency, clock, score and the wrapper events. The script
(``assets/replay.js``) draws them and exposes ``window.replay`` (``show``,
``setMode``, ``schedule``), which the GIF maker drives. A view a family declares is
drawn by its own script and style (:func:`s1gym.reporting.replay.views.view_assets`),
inlined before the page's own (style and script): it registers its drawer as
``window.S1Views[kind] = function (view, box, tick, ui)`` (``ui``: the page's helpers).

Bounds, so pages stay small: at most ``max_ticks`` decisions per trial
(evenly spaced, first and last kept, when an episode is longer; the page says
so), texts cut at :data:`MAX_TEXT` characters, screenshots scaled to at most
``frame_width`` pixels wide.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from s1gym import jobs
from s1gym.errors import S1GymError
from s1gym.runner.agent import AgentDescription
from s1gym.reporting.replay.events import tick_events
from s1gym.reporting.replay.views import Position, episode_positions, episode_views, view_assets, view_kind

__all__ = [
    "DEFAULT_MAX_TICKS",
    "MAX_TEXT",
    "ReplayError",
    "Trial",
    "load_trial",
    "page_html",
    "page_name",
    "trial_data",
    "write_page",
]

#: Decisions per trial a page holds by default (2048's step limit is 2000).
DEFAULT_MAX_TICKS = 2000
#: Longest text a page keeps (a state, a feedback, a plan); longer ones are cut, saying so.
MAX_TEXT = 4000
#: Candidates named in the probability chart (the chosen one is added when it is not among them).
TOP_K = 5
#: Default width of screenshots in a page, in pixels.
DEFAULT_FRAME_WIDTH = 640
#: Time mode's default speed: the longer episode plays in this many seconds.
AUTO_SECONDS = 20.0
#: Step mode's default speed, decisions per second.
STEPS_PER_SECOND = 4.0


class ReplayError(S1GymError, ValueError):
    """A replay cannot be made as asked (not a trial, unfinished, no such seed); the message says how."""


@dataclass(frozen=True)
class Trial:
    """A finished trial on disk: its folder, its result and its episode (texts and lists in place)."""

    path: Path
    result: dict[str, Any]
    episode: dict[str, Any]

    @property
    def name(self) -> str:
        return str(self.result.get("trial_name") or self.path.name)

    @property
    def env_id(self) -> str:
        return str(self.episode.get("task") or self.result.get("task_name") or "?")

    @property
    def seed(self) -> int:
        return int(self.episode.get("seed", jobs.seed_of(self.result)))

    @property
    def agent(self) -> AgentDescription:
        agent = (self.result.get("config") or {}).get("agent") or {}
        if isinstance(agent.get("s1gym"), Mapping):
            return AgentDescription.from_dict(agent["s1gym"])
        return AgentDescription(str(agent.get("name") or self.episode.get("policy") or "?"))

    @property
    def label(self) -> str:
        """``Search(Lookahead(Local))``: the wrappers around the policy, outermost first."""
        agent = self.agent
        text = agent.policy[:1].upper() + agent.policy[1:]
        for kind, _ in reversed(agent.wrappers):
            text = f"{kind[:1].upper()}{kind[1:]}({text})"
        return text


def load_trial(path: Path | str) -> Trial:
    """The trial in folder ``path`` (``<job>/<task>__<seed>``) or of its ``agent/episode.json``."""
    path = Path(path)
    if path.is_file() and path.name == "episode.json":
        path = path.parent.parent
    if not path.is_dir():
        raise ReplayError(f"{path}: no such trial folder; pass <job>/<task>__<seed> (or a job folder with --seed)")
    result_file = path / "result.json"
    if not result_file.is_file():
        raise ReplayError(f"{path}: not a finished trial (no result.json); finish it with `s1 run ... --resume`")
    return Trial(path, jobs.read_json(result_file), jobs.read_episode(path))


def trials_of_job(job_dir: Path) -> dict[int, Path]:
    """The finished trial folders of a job, by seed."""
    out = {}
    for result in jobs.load_trials(job_dir):
        out[jobs.seed_of(result)] = job_dir / result["trial_name"]
    return out


# --------------------------------------------------------------------------
# Page data
# --------------------------------------------------------------------------


class Strings:
    """The page's table of texts: each distinct text once (views and ticks hold its index)."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}

    def add(self, text: str | None) -> int:
        if not text:
            return -1
        if len(text) > MAX_TEXT:
            text = text[:MAX_TEXT] + f"\n… (cut: {len(text):,} characters in all)"
        return self.index.setdefault(text, len(self.index))

    def table(self) -> list[str]:
        return list(self.index)


def shown_ticks(n: int, max_ticks: int) -> list[int]:
    """The decisions a page keeps of ``n``: all, or ``max_ticks`` evenly spaced with the first and last."""
    if n <= max_ticks:
        return list(range(n))
    if max_ticks < 2:
        return [n - 1][:max_ticks]
    step = (n - 1) / (max_ticks - 1)
    return sorted({round(i * step) for i in range(max_ticks)})


def trial_data(
    trial: Trial, strings: Strings, *, max_ticks: int = DEFAULT_MAX_TICKS, frame_width: int = DEFAULT_FRAME_WIDTH
) -> dict[str, Any]:
    """One panel's data: header, per-decision records and one view per position (see the module doc)."""
    ep = trial.episode
    ticks = list(ep.get("ticks") or ())
    positions = episode_positions(ep)
    views = episode_views(trial.env_id, positions)
    final = ep.get("final") or {}
    final_known = len(positions) > len(ticks)
    if not final_known:  # an older file, or an errored episode: the last state seen stands in for the end
        views.append({**(views[-1] if views else {"kind": "transcript"}), "stale": True})
        positions.append(Position(len(ticks), positions[-1].state if positions else "", (), None, None))
    frame_files = [t.get("frame") for t in ticks] + [final.get("frame")]

    keep = shown_ticks(len(ticks), max_ticks)
    clocks = _clocks(ticks)
    end_clock = final.get("clock_s") if isinstance(final.get("clock_s"), (int, float)) else None
    if end_clock is None or (clocks and end_clock < clocks[-1] + ticks[-1]["latency_s"]):
        end_clock = (clocks[-1] + ticks[-1]["latency_s"]) if ticks else 0.0

    out_ticks, out_views = [], []
    for i in [*keep, len(ticks)]:
        view = dict(views[i])
        pos = positions[i]
        if view["kind"] in ("transcript", "screenshot") or frame_files[i]:
            previous = positions[i - 1].feedback if i > 0 else None
            view["now"] = strings.add(_strip_prefix(pos.state, previous))
        if frame_files[i]:
            view["img"] = _frame_uri(trial.path / "agent" / frame_files[i], frame_width)
            view["kind"] = "screenshot" if view["kind"] == "transcript" else view["kind"]
        for key in ("note",):
            if key in view:
                view[key] = strings.add(view[key])
        out_views.append(view)
        if i < len(ticks):
            out_ticks.append(_tick_data(ticks[i], clocks[i], pos, strings))
    exception = trial.result.get("exception_info") or {}
    return {
        "trial": trial.name,
        "job": trial.path.parent.name,
        "label": trial.label,
        "agent": trial.agent.label,
        "env_id": trial.env_id,
        "task": re.sub(r"-v\d+$", "", trial.env_id.split("/")[-1]),
        "seed": trial.seed,
        "kind": view_kind(trial.env_id),
        "n_ticks": len(ticks),
        "sampled": len(keep) < len(ticks),
        "ticks": out_ticks,
        "views": out_views,
        "end": {
            "score": final.get("score"),
            "won": bool(final.get("won")),
            "lost": bool(final.get("lost")),
            "steps": final.get("steps", len(ticks)),
            "truncated": bool(final.get("truncated")),
            "gave_up": bool(final.get("gave_up")),
            "clock": end_clock,
            "known": final_known,
            "error": (f"{exception.get('exception_type')}: {exception.get('exception_message')}"
                      if exception else ""),
            # the failure kind, as the table counts it (s1gym.jobs.summary.trial_outcome)
            "outcome": jobs.trial_outcome(trial.result),
            "verdict": jobs.trial_verdict(trial.result),
        },
    }


def _clocks(ticks: Sequence[Mapping[str, Any]]) -> list[float]:
    """When each decision was asked, in seconds of play: recorded (``clock_s``) or, for older files,
    the latencies before it."""
    if ticks and all(isinstance(t.get("clock_s"), (int, float)) for t in ticks):
        return [float(t["clock_s"]) for t in ticks]
    out, total = [], 0.0
    for t in ticks:
        out.append(total)
        total += float(t.get("latency_s") or 0.0)
    return out


def _strip_prefix(state: str, feedback: str | None) -> str:
    """The state without the previous move's feedback at its top (the transcript shows that)."""
    if feedback and state.startswith(feedback):
        return state[len(feedback):].lstrip("\n")
    return state


def _tick_data(tick: Mapping[str, Any], clock: float, pos: Position, strings: Strings) -> dict[str, Any]:
    probs = [float(p) for p in tick.get("probabilities") or ()]
    cands = list(tick.get("candidates") or ())
    action = int(tick.get("action", 0))
    expert = cands.index(tick["expert"]) if tick.get("expert") in cands else None
    order = sorted((i for i in range(len(probs)) if probs[i] > 0), key=lambda i: (-probs[i], i))
    top = order[:TOP_K]
    named = [i for i in (action, expert) if i is not None and i < len(probs)]
    for i in named:  # the chosen move and the expert's are always named, in place of the least likely others
        if i not in top:
            if len(top) >= TOP_K:
                top.remove(next(j for j in reversed(top) if j not in named))
            top.append(i)
    rest = [i for i in range(len(probs)) if i not in top]
    usage = tick.get("usage") or {}
    return {
        "t": int(tick.get("t", 0)),
        "move": tick.get("move", ""),
        "action": action,
        "expert": expert,
        "n": len(cands),
        "top": [[cands[i] if i < len(cands) else f"#{i}", probs[i], i] for i in top],
        "others": [len(rest), math.fsum(probs[i] for i in rest)] if rest else None,
        "lat": float(tick.get("latency_s") or 0.0),
        "clock": clock,
        "score": tick.get("score"),
        "reward": tick.get("reward"),
        "fb": strings.add(pos.feedback),
        "events": [[kind, strings.add(text)] for kind, text in tick_events(tick)],
        "tokens": [int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0)],
        "cost": float(usage.get("cost_usd") or 0.0),
        "gave_up": bool(tick.get("gave_up")),
    }


def _frame_uri(path: Path, width: int) -> str:
    """A screenshot as a data URI, scaled to at most ``width`` pixels wide."""
    try:
        from PIL import Image
    except ImportError as exc:
        raise ReplayError(f"this trial has screenshots; drawing them needs Pillow: pip install 's1gym[replay]' ({exc})") from exc

    try:
        with Image.open(path) as im:
            im.load()
            if im.width > width:
                im = im.resize((width, max(1, round(im.height * width / im.width))), Image.Resampling.LANCZOS)
            buf = io.BytesIO()
            im.save(buf, format="PNG", optimize=True)
    except (OSError, ValueError) as exc:
        raise ReplayError(f"{path}: cannot read this screenshot ({exc})") from exc
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


# --------------------------------------------------------------------------
# HTML
# --------------------------------------------------------------------------


def _asset(name: str) -> str:
    return resources.files("s1gym.reporting.replay").joinpath("assets", name).read_text(encoding="utf-8")


def _script_json(data: Any) -> str:
    """JSON safe inside a ``<script>`` element (no ``</script>``, no ``<!--``)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def default_speed(panels: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    longest = max((p["end"]["clock"] for p in panels), default=0.0)
    return {"time": longest / AUTO_SECONDS if longest > 0 else 1.0, "step": STEPS_PER_SECOND}


def page_html(
    trials: Sequence[Trial],
    *,
    mode: str = "time",
    speed: float | None = None,
    max_ticks: int = DEFAULT_MAX_TICKS,
    frame_width: int = DEFAULT_FRAME_WIDTH,
    title: str | None = None,
) -> str:
    """The page (one string) replaying ``trials`` (one or two) side by side."""
    if not 1 <= len(trials) <= 2:
        raise ReplayError(f"a replay page shows one or two trials side by side, not {len(trials)}")
    if mode not in ("time", "step"):
        raise ReplayError(f"--mode {mode!r}: choose time (each episode's own clock) or step (decision by decision)")
    strings = Strings()
    panels = [trial_data(t, strings, max_ticks=max_ticks, frame_width=frame_width) for t in trials]
    speeds = default_speed(panels)
    if speed is not None:
        if not (speed > 0 and math.isfinite(speed)):
            raise ReplayError(f"--speed {speed}: give a positive number (time: × real time; step: decisions a second)")
        speeds[mode] = float(speed)
    if title is None:
        seeds = sorted({p["seed"] for p in panels})
        title = f"{panels[0]['task']} · seed {', '.join(map(str, seeds))} · " + " vs ".join(p["label"] for p in panels)
    data = {
        "title": title,
        "mode": mode,
        "speed": speeds,
        "bounds": {"max_ticks": max_ticks, "max_text": MAX_TEXT, "top_k": TOP_K, "frame_width": frame_width},
        "trials": panels,
        "strings": strings.table(),
    }
    assets = dict.fromkeys(view_assets(t.env_id) for t in trials)  # each family's drawers once
    scripts = "".join(f"<script>{script}</script>\n" for script, _ in assets if script)
    styles = "".join(style for _, style in assets)  # before the page's own rules, which win a tie
    return (
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>{html.escape(title)}</title><style>{styles}{_asset('replay.css')}</style></head>\n"
        f"<body><div id=\"app\"></div>\n"
        f"<script type=\"application/json\" id=\"replay-data\">{_script_json(data)}</script>\n"
        f"{scripts}<script>{_asset('replay.js')}</script></body></html>\n"
    )


def page_name(trials: Sequence[Trial]) -> str:
    """The page's file stem: the trial name (``2048__7``), or the two names when they differ."""
    names = list(dict.fromkeys(t.name for t in trials))
    return "__vs__".join(re.sub(r"[^A-Za-z0-9_.-]", "_", n) for n in names)


def write_page(trials: Sequence[Trial], out: Path, name: str | None = None, **options: Any) -> Path:
    """Write the page to ``out/<name>.html`` (default name: :func:`page_name`); returns its path."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name or page_name(trials)}.html"
    path.write_text(page_html(trials, **options), encoding="utf-8")
    return path
