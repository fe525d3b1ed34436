"""The replay's views of the games (declared as ``Task.view`` in :mod:`.family`): what a replay page draws for
a position of Blackjack, 2048 or the Millionaire quiz, parsed from the text the player saw.

- ``2048``: the board (16 numbers), score, largest tile, move count, win/loss;
- ``blackjack``: the player's and the dealer's cards (the hole card hidden until the dealer plays), their
  totals and the result;
- ``millionaire``: the question card (question, the four answers with the ones 50:50 removed, the chosen
  one and, once known, the right one), the money ladder, winnings and lifelines.

Each function takes a :class:`s1gym.core.position.Position` and a memory the replay keeps for one episode
(``memory["last_move"]``: the move played before this position), and returns the view (a dict whose
``"kind"`` the page's drawer is registered under) or ``None`` when the text does not parse (a task's
wording changed): the page then shows the transcript, so a replay never fails on it (tests/test_replay.py
pins the parsers to the real tasks). :data:`SCRIPT` and :data:`STYLE` name the files beside this module that
draw the views (``window.S1Views[kind]``); the page inlines them when it shows one of these views.
"""

from __future__ import annotations

import re
from typing import Any

from s1gym.core.position import Position
from s1gym.tasks.games.millionaire import LADDER, SAFE_HAVENS

__all__ = ["SCRIPT", "STYLE", "view_2048", "view_blackjack", "view_millionaire"]

#: The page's drawers of these views (they register ``window.S1Views["2048"]`` and the others).
SCRIPT = "views.js"
#: Their styles.
STYLE = "views.css"


def view_2048(pos: Position, _memory: dict[str, Any]) -> dict[str, Any] | None:
    lines = pos.state.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"Score: (\d+)\s+Largest tile: (\d+)\s+Move (\d+) of (\d+)", line)
        if m:
            break
    else:
        return None
    rows = [r.split() for r in lines[i + 1 : i + 5]]
    if len(rows) != 4 or any(len(r) != 4 or not all(c == "." or c.isdigit() for c in r) for r in rows):
        return None
    rest = "\n".join(lines[i + 5 :])
    status = "won" if "you win" in rest else "lost" if "game over" in rest else ""
    intro = next((j for j, p in enumerate(pos.state.split("\n\n")) if p.startswith("2048:")), 0)
    return {
        "kind": "2048",
        "board": [[0 if c == "." else int(c) for c in r] for r in rows],
        "score": int(m.group(1)),
        "max_tile": int(m.group(2)),
        "move": int(m.group(3)),
        "of": int(m.group(4)),
        "status": status,
        "note": "\n\n".join(pos.state.split("\n\n")[:intro]),
    }


_HAND = re.compile(r"^(Your hand|Dealer shows|Dealer's hand): (.+?) \((.+)\)$", re.MULTILINE)
_RESULT = re.compile(r"^(You win.*|You lose.*|Push.*)$", re.MULTILINE)


def view_blackjack(pos: Position, _memory: dict[str, Any]) -> dict[str, Any] | None:
    hands = {who: (cards.split(", "), total) for who, cards, total in _HAND.findall(pos.state)}
    if "Your hand" not in hands or not ({"Dealer shows", "Dealer's hand"} & hands.keys()):
        return None
    player, player_total = hands["Your hand"]
    if "Dealer's hand" in hands:
        dealer, dealer_total = hands["Dealer's hand"]
    else:
        dealer, dealer_total = [*hands["Dealer shows"][0], "?"], "one card face down"
    result = _RESULT.search(pos.state)
    paragraphs = pos.state.split("\n\n")
    return {
        "kind": "blackjack",
        "player": player,
        "player_total": player_total,
        "dealer": dealer,
        "dealer_total": dealer_total,
        "result": result.group(1) if result else "",
        "note": "\n\n".join(p for p in paragraphs if not p.startswith("Blackjack (") and "Your hand:" not in p),
    }


_QUESTION = re.compile(
    r"Question (\d+) of (\d+) for \$([\d,]+) \(([^,]*), (.*)\)\.\n"
    r"Winnings: \$([\d,]+); a wrong answer leaves you with \$([\d,]+); walking away keeps \$[\d,]+\. "
    r"Lifeline 50:50: (\w+)\.\n\n(.*)",
    re.DOTALL,
)
_GAME_OVER = re.compile(r"Game over \((.+?)\)\. Winnings: \$([\d,]+)\.")
_LIFELINES = ("50:50", "walk away")


def _money(text: str) -> int:
    return int(text.replace(",", ""))


def view_millionaire(pos: Position, memory: dict[str, Any]) -> dict[str, Any] | None:
    ladder = {"ladder": list(LADDER), "havens": list(SAFE_HAVENS)}
    m = _QUESTION.search(pos.state)
    if m:
        number = int(m.group(1))
        answers = [c for c in pos.candidates if c not in _LIFELINES]
        full = memory.setdefault(("answers", number), answers)  # before 50:50 removed two
        card = {
            "number": number,
            "prize": _money(m.group(3)),
            "difficulty": m.group(4),
            "category": m.group(5),
            "question": m.group(9).strip(),
            "answers": full,
            "removed": [a for a in full if a not in answers],
        }
        memory["card"] = card
        memory["fifty_fifty"] = m.group(8) == "available"
        return {
            "kind": "millionaire", **ladder, **card,
            "winnings": _money(m.group(6)),
            "safe": _money(m.group(7)),
            "fifty_fifty": memory["fifty_fifty"],
            "over": "",
            "note": pos.state[: pos.state.find("Question ")].strip(),
        }
    over = _GAME_OVER.search(pos.state)
    if not over:
        return None
    card = dict(memory.get("card") or {})
    right = re.search(r"the right answer was (.+?)\. You leave", pos.state)
    if right:
        card["right"] = right.group(1)
    elif card and re.search(rf"^{re.escape(str(memory.get('last_move')))} is right!", pos.state):
        card["right"] = memory.get("last_move")
    return {
        "kind": "millionaire", **ladder, **card,
        "chosen": memory.get("last_move"),
        "winnings": _money(over.group(2)),
        "fifty_fifty": memory.get("fifty_fifty", True),
        "over": over.group(1),
        "note": pos.state[: over.start()].strip(),
    }
