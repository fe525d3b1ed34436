"""What a replay draws for each task: structured views parsed from the recorded observations.

An episode file holds the observation text of every tick (and, since format 2,
the final one and each move's feedback). :func:`episode_views` turns them into
one *view* per position (before each decision, then the final state), a small
dict the page's script draws:

- ``2048``: the board (16 numbers), score, largest tile, move count, win/loss;
- ``blackjack``: the player's and the dealer's cards (the hole card hidden
  until the dealer plays), their totals and the result;
- ``millionaire``: the question card (question, the four answers with the ones
  50:50 removed, the chosen one and, once known, the right one), the money
  ladder, winnings and lifelines;
- ``transcript`` (every other task: TextWorldExpress, ALFWorld, tickets,
  injection texts): the current state (``now``) under a transcript the page
  builds from the moves and their feedback;
- ``screenshot``: a recorded ``env.screenshot()`` (web and desktop tasks, with
  ``s1 run --frames``) above the same transcript.

Parsing reads the texts the tasks print today; an observation that does not
parse (a task's wording changed) falls back to the transcript view, so a
replay never fails on it (the tests pin the parsers to the real tasks).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Position", "episode_positions", "episode_views", "split_moves", "view_kind"]

MOVES_PREFIX = "Moves: "


def split_moves(observation: str) -> str:
    """The observation without its closing ``Moves: ...`` paragraph (the candidates are shown apart)."""
    head, sep, last = observation.rpartition("\n\n")
    if last.startswith(MOVES_PREFIX):
        return head if sep else ""
    return observation


@dataclass(frozen=True)
class Position:
    """One position of an episode: the state text before decision ``t`` (``t == n``: the end)."""

    t: int
    state: str  # observation without the Moves paragraph
    candidates: tuple[str, ...]
    #: the move played from here and the feedback it got (``None`` at the end)
    move: str | None
    feedback: str | None


def episode_positions(episode: Mapping[str, Any]) -> list[Position]:
    """The positions of an (expanded) episode: one per tick and, when known, the final state.

    Feedback comes from the tick (files of format 2) or, for older files, from
    the paragraphs of the next observation that the current one lacks.
    """
    ticks = list(episode.get("ticks") or ())
    final_obs = (episode.get("final") or {}).get("observation")
    texts = [t["observation"] for t in ticks] + ([final_obs] if isinstance(final_obs, str) else [])
    out = []
    for i, tick in enumerate(ticks):
        feedback = tick.get("feedback")
        if not isinstance(feedback, str):
            feedback = _new_paragraphs(texts[i], texts[i + 1]) if i + 1 < len(texts) else ""
        out.append(Position(i, split_moves(tick["observation"]), tuple(tick["candidates"]), tick["move"], feedback))
    if isinstance(final_obs, str):
        out.append(Position(len(ticks), split_moves(final_obs), (), None, None))
    return out


def _new_paragraphs(before: str, after: str) -> str:
    seen = set(split_moves(before).split("\n\n"))
    return "\n\n".join(p for p in split_moves(after).split("\n\n") if p not in seen)


# --------------------------------------------------------------------------
# Views
# --------------------------------------------------------------------------


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
    from s1gym.tasks.games.millionaire import LADDER, SAFE_HAVENS

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


def view_transcript(pos: Position, _memory: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "transcript"}


#: Task (its short name) -> the view that draws it; the rest get the transcript.
VIEWS: dict[str, Callable[[Position, dict[str, Any]], dict[str, Any] | None]] = {
    "2048": view_2048,
    "Blackjack": view_blackjack,
    "Millionaire": view_millionaire,
}


def view_kind(env_id: str) -> str:
    """The view a task gets (``2048``, ``blackjack``, ``millionaire`` or ``transcript``)."""
    return _short(env_id).lower() if _short(env_id) in VIEWS else "transcript"


def _short(env_id: str) -> str:
    return re.sub(r"-v\d+$", "", env_id.split(":")[-1].split("/")[-1])


def episode_views(env_id: str, positions: Sequence[Position]) -> list[dict[str, Any]]:
    """One view per position (see the module doc); transcript views where a text does not parse."""
    build = VIEWS.get(_short(env_id), view_transcript)
    memory: dict[str, Any] = {}
    views = []
    for pos in positions:
        view = build(pos, memory) or view_transcript(pos, memory)
        views.append(view)
        if pos.move is not None:
            memory["last_move"] = pos.move
    return views
