"""What the wrappers (and a chat model) did at a decision, as the lines a replay page lists under it.

Read from the tick's ``info`` as the wrappers record it (Search's plan and stop reason, Rethink's blocks
and plans, Lookahead's dropped moves, a chat model's replies); :func:`tick_events` is the one reader.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["tick_events"]


def _moves(moves: Iterable[str], limit: int = 8) -> str:
    moves = list(moves)
    shown = " → ".join(moves[:limit])
    return shown + (f" → … ({len(moves) - limit} more)" if len(moves) > limit else "")


def tick_events(tick: Mapping[str, Any]) -> list[tuple[str, str]]:
    """What the wrappers (and a chat model) did at a decision, as (kind, text) lines."""
    info = tick.get("info") or {}
    out: list[tuple[str, str]] = []
    stop = info.get("stop_reason")
    if stop == "following_plan":
        step = int(info.get("plan_step") or 0)
        out.append(("search", f"following its plan: move {step + 1} of {step + int(info.get('plan_length') or 0)}"
                    f"{' (a winning plan)' if info.get('solved') else ''}; no model call"))
    elif stop is not None:
        parts = [f"{info.get('policy_calls', 0)} calls", f"{info.get('expansions', 0)} expansions"]
        if isinstance(info.get("elapsed_s"), (int, float)):
            parts.append(f"{info['elapsed_s']:.2f} s")
        solved = "found a win" if info.get("solved") else f"stopped: {stop}"
        out.append(("search", f"searched ({', '.join(parts)}); {solved}"))
        if info.get("plan"):
            score = info.get("plan_score")
            tail = f" (score {score:.2f})" if isinstance(score, (int, float)) else ""
            out.append(("plan", f"plan of {info.get('plan_length', len(info['plan']))}{tail}: {_moves(info['plan'])}"))
        if info.get("note"):
            out.append(("note", str(info["note"])))
    rethink = info.get("rethink") or {}
    if rethink.get("blocked_repeat"):
        out.append(("rethink", f"blocked {rethink['blocked_repeat']!r}: repeated without progress"))
    if rethink.get("stall"):
        out.append(("rethink", "stall: no progress and a state seen before"))
    if rethink.get("blocked_tried"):
        out.append(("rethink", f"blocked moves already tried here: {', '.join(rethink['blocked_tried'])}"))
    if rethink.get("plan"):
        out.append(("plan", f"Rethink's plan: {rethink['plan']}"))
    if rethink.get("blocked"):
        out.append(("rethink", f"blocked: {', '.join(rethink['blocked'])}"))
    if rethink.get("give_up"):
        out.append(("rethink", "gives up: a fourth stall after three plans"))
    look = info.get("lookahead") or {}
    if look.get("dropped_losing"):
        out.append(("lookahead", f"dropped {look['dropped_losing']} losing move(s), showed {look.get('shown')}"))
    if info.get("invalid_replies"):
        out.append(("model", f"{len(info['invalid_replies'])} invalid repl(y/ies)"
                    + (f"; fell back to {info['fallback']}" if info.get("fallback") else "")))
    if isinstance(info.get("reply"), str) and info["reply"].strip():
        out.append(("model", f"replied: {info['reply'].strip()}"))
    if tick.get("gave_up"):
        out.append(("end", "gave up here (the episode ends unsolved)"))
    return out
