"""What a web rule solver may read, and the helpers every solver uses (:mod:`.expert`, :mod:`.rules`)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from s1gym.tasks.web.env import MiniWoBEnv

__all__ = ["BARE_CLICK", "CLICK", "PageView", "need"]

CLICK = re.compile(r'^click (?:(?P<role>[a-z]+) )?"(?P<name>.*?)"(?: in "(?P<context>.*)")?(?: \(\d+\))?$')
BARE_CLICK = re.compile(r"^click (?P<role>[a-z]+)(?: in \"(?P<context>.*)\")?(?: \((?P<k>\d+)\))?$")


class PageView:
    """What a solver may read: fields, page text, candidates, moves played."""

    def __init__(self, env: MiniWoBEnv) -> None:
        self.task = env.task
        self.fields = dict(env.fields)
        self.utterance = env.instruction
        self.page = env.page_text
        self.moves = list(env.candidates)
        self.played = [m for m, _ in env.history]

    def field(self, key: str) -> str:
        return self.fields.get(key, "")

    def clicks(self, name: str | None = None, role: str | None = None, context: str | None = None) -> list[str]:
        """Click moves whose element has this name (exactly), role and context (a substring)."""
        out = []
        for move in self.moves:
            m = CLICK.match(move)
            if not m:
                continue
            if name is not None and m["name"] != name:
                continue
            if role is not None and (m["role"] or "") != role:
                continue
            if context is not None and context not in (m["context"] or ""):
                continue
            out.append(move)
        return out

    def click(self, name: str, role: str | None = None, context: str | None = None) -> str | None:
        found = self.clicks(name, role, context)
        return found[0] if found else None

    def type_into(self, value: str, box: str | None = None) -> str | None:
        """The move typing ``value`` into the text field (or text area) named ``box`` (any, if None)."""
        for move in self.moves:
            for kind in ("textbox", "textarea"):
                if move.startswith(f'type "{value}" into {kind}') and (box is None or f'{kind} "{box}"' in move):
                    return move
        return None

    def did(self, move: str | None) -> bool:
        return move is not None and move in self.played

    def submit(self, *names: str) -> str:
        for name in (*names, "Submit", "submit", "Search", "Login", "OK", "Ok"):
            move = self.click(name, "button")
            if move:
                return move
        raise LookupError("no submit button among the moves")


def need(move: str | None, what: str) -> str:
    if move is None:
        raise LookupError(f"no move to {what}")
    return move
