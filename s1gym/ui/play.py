"""``s1 play``: a human plays a task in the terminal, picking numbered candidates.

This is how a newcomer meets a task: the same observation and candidate list a
policy sees, one number per move.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any, TextIO

from s1gym.runner.spec import make_env, resolve_task

__all__ = ["play"]

HELP = "Type a move's number (or its exact text); 'q' quits."


def play(
    task: str,
    seed: int = 0,
    options: Mapping[str, Any] | None = None,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
) -> dict[str, Any]:
    """Play one game from ``stdin``; returns ``{score, won, lost, steps, quit}``."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    env = make_env(resolve_task(task), options or {})

    def say(text: str = "") -> None:
        stdout.write(text + "\n")
        stdout.flush()

    try:
        _, info = env.reset(seed=seed)
        say(f"{env.task_name} (seed {seed}). {HELP}")
        terminated = truncated = quit_ = False
        while not (terminated or truncated) and info["candidates"]:
            situation = env.situation()
            say("\n" + situation.observation.split("\n\nMoves: ")[0])
            say(f"\nscore {info['score']:.3f} · step {env.steps}/{env.max_steps}")
            for i, text in enumerate(situation.texts):
                say(f"  [{i}] {text}")
            index = None
            while index is None:
                stdout.write("> ")
                stdout.flush()
                line = stdin.readline()
                if not line or line.strip().lower() in {"q", "quit", "exit"}:
                    quit_ = True
                    break
                index = _parse_choice(line.strip(), situation.texts)
                if index is None:
                    say(f"Not a move. {HELP}")
            if quit_:
                break
            _, reward, terminated, truncated, info = env.step_move(situation.texts[index])
            if reward:
                say(f"(reward {reward:+.3f})")
        if not quit_:
            say("\n" + env.render().split("\n\nMoves: ")[0])
        outcome = "won" if info["won"] else "lost" if info["lost"] else "quit" if quit_ else "stopped"
        say(f"\nGame over: {outcome}, score {info['score']:.3f} after {env.steps} moves.")
        return {
            "score": info["score"],
            "won": info["won"],
            "lost": info["lost"],
            "steps": env.steps,
            "quit": quit_,
        }
    finally:
        env.close()


def _parse_choice(text: str, candidates: tuple[str, ...]) -> int | None:
    if text.isdigit():
        i = int(text)
        return i if 0 <= i < len(candidates) else None
    return candidates.index(text) if text in candidates else None
