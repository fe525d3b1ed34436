"""What Local's fitted BabyAI model reads: the text view parsed back (:func:`read_view`) and, per
candidate move, feature names (:func:`candidate_tokens`).

Everything is read from the observation text (and, under Lookahead, from each move's outcome text), never
from the env. The mission is split into clauses in the order they must be done ("A, then B"; "A after you
B" is B first; "A and B" in the order written); "Parts of the mission done: k of n (A; ...)" names the
clauses done, and the current clause is the first one not done. The current clause names a target object (for "put X next to Y": X until it is carried, then Y) and what
to do with it (``goto``, ``open``, ``pickup``, ``putnext``). A move's features pair the move with what is
in front, what is carried, where the nearest target is (or the nearest door, when no target is in view),
whether the move starts the view's shortest way to the target (or, with no known way to one, to the nearest
unseen cell), and with Lookahead, whether the move brings the target closer (in moves along that way), shows
it, or earns a part of the mission. A description placed from the start ("the box on your left") matches
only objects the view says lay there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from s1gym.core import Candidate, Situation

__all__ = ["REVISIT_LADDER", "View", "candidate_tokens", "clauses_in_order", "goal_of", "parse_mission", "progress_tokens", "read_view"]

_DESC = re.compile(r"\b(?:the|a|an) (?:(red|green|blue|purple|yellow|grey) )?(door|ball|box|key|object)\b"
                   r"(?: (in front|behind|on your left|on your right)(?= you\b|$|[ ,]))?")
_SEEN = re.compile(r"^- an? (?:(locked|closed|open) )?(\w+) (\w+) (?:(\d+) steps? (ahead|behind)|in your row)"
                   r"(?:, (\d+) to the (left|right))?"
                   r"(?: \((?:(\d+) moves? away(?:, first (turn left|turn right|move forward|toggle|pick up))?|(no known way))"
                   r"(?:; at the start: ([a-z ,]+))?\))?$")
_UNSEEN = re.compile(r"^Nearest unseen cell: (?:(\d+) moves? away(?:, first ([a-z ]+))?|none within reach)\.$",
                     re.MULTILINE)
_CELLS = re.compile(r"^Cells seen so far: (\d+)\.$", re.MULTILINE)
_PARTS = re.compile(r"^Parts of the mission done: (\d+) of (\d+)(?: \((.*)\))?\.$", re.MULTILINE)
_WALLS = re.compile(r"^Walls: ahead .*, left (\d+|none)\D.*, right (\d+|none)\D", re.MULTILINE)
_FRONT = re.compile(r"^In front of you: (.*)$", re.MULTILINE)
_CARRY = re.compile(r"^You carry (?:an? )?(.*)\.$", re.MULTILINE)


@dataclass(frozen=True)
class Seen:
    kind: str  # ball, box, key, door
    color: str
    state: str  # locked/closed/open for doors, "" otherwise
    ahead: int
    right: int

    in_view: bool = True
    walk: int | None = None  # moves to face it over the cells seen (the view's note); None: no note or no way
    first: str = ""  # the first of those moves
    no_way: bool = False  # the view says there is no known way to it
    places: tuple[str, ...] | None = None  # where it lay seen from the start ("in front", ...); None: not said

    @property
    def distance(self) -> int:
        """Moves to face it when the view gives them, else the cells between (plus 1000 with no known way)."""
        if self.walk is not None:
            return self.walk
        return abs(self.ahead) + abs(self.right) + (1000 if self.no_way else 0)


@dataclass(frozen=True)
class View:
    mission: str
    done: int
    seen: tuple[Seen, ...]
    front: str  # "nothing (the cell is free)", "a wall", "a closed red door", ...
    carrying: str  # "nothing" or "red ball"
    cells: int = 0  # cells seen so far
    done_parts: tuple[str, ...] = ()  # the mission's clauses done, as the view names them
    narrow: bool = False  # walls 1 step to the left and to the right (a doorway or a corridor)
    unseen: tuple[int, str] | None = None  # moves to face the nearest cell not seen yet and the first of them


#: a move back into a state visited this often or more also reads ``out:revisit:k+`` (k = 4, 8, 16): the
#: fit weighs these by its revisit penalty, so an agent stuck going round the same states leaves them
REVISIT_LADDER = (4, 8, 16)


def read_view(text: str) -> View | None:
    """The view's facts from an observation (or a Lookahead outcome); ``None`` when there is no view."""
    mission = re.search(r"^Mission: (.*)$", text, re.MULTILINE)
    front, carry = _FRONT.search(text), _CARRY.search(text)
    if mission is None or front is None or carry is None:
        return None
    parts = _PARTS.search(text)
    seen = []
    in_view = True
    for line in text.splitlines():
        if line.startswith("Seen before"):
            in_view = False
        m = _SEEN.match(line)
        if m:
            state, color, kind, ahead, back, side, way, walk, first, no_way, places = m.groups()
            right = int(side or 0) * (-1 if way == "left" else 1)
            steps = int(ahead or 0) * (-1 if back == "behind" else 1)
            at = None if places is None else () if places == "another room" else tuple(places.split(", "))
            seen.append(Seen(kind, color, state or "", steps, right, in_view, None if walk is None else int(walk),
                             first or "", no_way is not None, at))
    cells = _CELLS.search(text)
    walls = _WALLS.search(text)
    unseen = _UNSEEN.search(text)
    done_parts = tuple(parts[3].split("; ")) if parts and parts[3] else ()
    return View(mission[1], int(parts[1]) if parts else 0, tuple(seen), front[1].rstrip("."), carry[1],
                int(cells[1]) if cells else 0, done_parts,
                walls is not None and walls[1] == "1" and walls[2] == "1",
                None if unseen is None or unseen[1] is None else (int(unseen[1]), unseen[2] or ""))


def _descs(text: str) -> list[tuple[str, ...]]:
    """``(colour, kind)`` per object the text names, ``(colour, kind, place)`` when it is placed from the
    agent's start ("the box on your left": ``("", "box", "on your left")``)."""
    return [(color or "", kind, loc) if loc else (color or "", kind) for color, kind, loc in _DESC.findall(text)]


def parse_mission(mission: str) -> list[list[tuple[str, str, tuple[tuple[str, str], ...]]]]:
    """The mission's clause groups in the order they are done; a clause is ``(text, verb, descriptors)``."""
    def clause(text: str) -> tuple[str, str, tuple[tuple[str, str], ...]]:
        text = text.strip()
        verb = next((v for v in ("go to", "open", "pick up", "put") if text.startswith(v)), "go to")
        return text, verb, tuple(_descs(text))

    def group(text: str) -> list[tuple[str, str, tuple[tuple[str, str], ...]]]:
        return [clause(c) for c in text.split(" and ")]

    if ", then " in mission:
        first, second = mission.split(", then ", 1)
        return [group(first), group(second)]
    if " after you " in mission:
        first, second = mission.split(" after you ", 1)
        return [group(second), group(first)]
    return [group(mission)]


def _matches(seen: Seen, desc: tuple[str, ...]) -> bool:
    color, kind = desc[:2]
    if len(desc) > 2 and seen.places is not None and desc[2] not in seen.places:
        return False  # placed from the start, and the view says it lay elsewhere
    return (kind in ("object", seen.kind)) and (not color or color == seen.color)


def _carried_matches(carrying: str, desc: tuple[str, ...]) -> bool:
    if carrying == "nothing":
        return False
    color, kind = carrying.rsplit(" ", 1)[0], carrying.rsplit(" ", 1)[-1]
    return (desc[1] in ("object", kind)) and (not desc[0] or desc[0] == color)


def clauses_in_order(mission: str) -> list[tuple[str, str, tuple[tuple[str, str], ...]]]:
    """The mission's clauses in the order they are done: ``(text, verb, descriptors)``."""
    out = []
    for group in parse_mission(mission):
        out.extend(group)
    return out


def goal_of(view: View) -> tuple[str, list[tuple[str, str]]]:
    """What the current clause (the first not done) asks (``goto``/``open``/``pickup``/``putnext``) and its
    target descriptors."""
    clauses = clauses_in_order(view.mission)
    done = list(view.done_parts)
    skip = 0 if done else view.done  # a view without the names: the first ``done`` clauses
    current = clauses[-1]
    for k, clause in enumerate(clauses):
        if clause[0] in done:
            done.remove(clause[0])
        elif k >= skip:
            current = clause
            break
    _text, verb, descs = current
    if verb == "put" and len(descs) == 2:
        if _carried_matches(view.carrying, descs[0]):
            return "putnext", [descs[1]]
        return "pickup", [descs[0]]
    return {"go to": "goto", "open": "open", "pick up": "pickup"}.get(verb, "goto"), list(descs[:1])


def _where(s: Seen | None) -> str:
    if s is None:
        return "none"
    if s.ahead == 1 and s.right == 0:
        return "front"
    if s.ahead < 0:
        return "behind" + ("" if s.right == 0 else "left" if s.right < 0 else "right")
    if s.right == 0:
        return "ahead"
    if s.ahead == 0:
        return "row" + ("left" if s.right < 0 else "right")
    return "left" if s.right < 0 else "right"


def _key_detour(view: View, targets: list[tuple[str, str]]) -> tuple[str, list[tuple[str, str]]] | None:
    """When no target has been seen and a locked door has: open it with its key (pick the key up first; the
    door to open is then a locked one of the key's colour, not another door of that colour)."""
    if any(any(_matches(s, t) for t in targets) for s in view.seen):
        return None
    for door in sorted((s for s in view.seen if s.state == "locked"), key=lambda s: s.distance):
        if _carried_matches(view.carrying, (door.color, "key")):
            return "open", [(door.color, "door")]
        if any(s.kind == "key" and s.color == door.color for s in view.seen):
            return "pickup", [(door.color, "key")]
    return None


def _facts(view: View) -> dict[str, object]:
    """The facts the features are named from, for one view."""
    what, targets = goal_of(view)
    detour = _key_detour(view, targets)
    what, targets = detour or (what, targets)
    tseen = [s for s in view.seen if any(_matches(s, t) for t in targets)]
    if what == "open":  # a door to open: not one open already (the detour's: the locked one), unless all the
        # doors that match are open (toggled shut and open again, it counts as opened)
        shut = [s for s in tseen if s.state == "locked" or (not detour and s.state != "open")]
        tseen = shut or ([] if detour else tseen)
    near = min(tseen, key=lambda s: (s.distance, s.ahead), default=None)
    doors = [s for s in view.seen if s.kind == "door"]
    door = min(doors, key=lambda s: (s.distance, s.ahead), default=None)
    front = view.front
    front_target = near is not None and near.ahead == 1 and near.right == 0
    if front_target:
        fcat = "target"
    elif front.startswith("nothing"):
        fcat = "free"
    elif front == "a wall":
        fcat = "wall"
    elif front.endswith("door"):
        fcat = "door_" + front.split(" ")[1]
    else:
        fcat = "obj"
    carry = "none" if view.carrying == "nothing" else (
        "target" if any(_carried_matches(view.carrying, t) for t in targets) else "other")
    drop_next = fcat == "free" and what == "putnext" and any(
        abs(s.ahead - 1) + abs(s.right) == 1 for s in tseen)
    return {"what": what, "near": near, "door": door, "front": fcat, "carry": carry, "drop_next": drop_next,
            "cells": view.cells, "narrow": view.narrow, "unseen": view.unseen}


def _compare(before: Seen | None, after: Seen | None) -> str:
    if before is None:
        return "none" if after is None else "found"
    if after is None:
        return "lost"
    if after.distance < before.distance:
        return "closer"
    return "farther" if after.distance > before.distance else "same"


def _move_tokens(move: str, f: dict[str, object]) -> list[str]:
    what, front, carry = f["what"], f["front"], f["carry"]
    near = f["near"]
    where = _where(near) + ("" if near is None or near.in_view else "~")  # type: ignore[arg-type,union-attr]
    out = [move, f"{move}|front:{front}", f"{move}|{what}|front:{front}", f"{move}|{what}|carry:{carry}",
           f"{move}|{what}|tgt:{where}", f"{move}|tgt:{where}|front:{front}",
           f"{move}|{what}|front:{front}|carry:{carry}"]
    if f["narrow"]:
        out.append(f"{move}|narrow")
    if where == "none":
        out.append(f"{move}|door:{_where(f['door'])}|front:{front}")  # type: ignore[arg-type]
    if f["drop_next"]:
        out.append(f"{move}|dropnext")
    if near is not None and near.walk is not None:  # type: ignore[union-attr]
        if near.walk > 0:  # type: ignore[union-attr]
            way = "first" if move == near.first else "other"  # type: ignore[union-attr]
            out += [f"{move}|way:{way}", f"{move}|{what}|way:{way}"]
    elif f["unseen"] is not None:  # no target with a known way: the nearest unseen cell
        way = "first" if move == f["unseen"][1] else "other"  # type: ignore[index]
        out += [f"{move}|explore:{way}", f"{move}|{what}|explore:{way}|tgt:{'none' if near is None else 'noway'}"]
    return out


def _outcome_tokens(c: Candidate, f: dict[str, object]) -> list[str]:
    out = []
    if c.reward is not None and c.reward > 0:
        out.append("out:gain")
    if c.revisits is not None:
        out.append(f"out:revisit:{min(c.revisits, 2)}")
        out.extend(f"out:revisit:{k}+" for k in REVISIT_LADDER if c.revisits >= k)
    after = read_view(c.outcome or "")
    if after is None:
        return out
    g = _facts(after)
    change = _compare(f["near"], g["near"])  # type: ignore[arg-type]
    out.append(f"out:tgt:{change}")
    out.append(f"{c.text}|out:tgt:{change}")
    out.append(f"out:front:{g['front']}")
    if change == "none":
        out.append(f"out:door:{_compare(f['door'], g['door'])}")  # type: ignore[arg-type]
    if g["drop_next"]:
        out.append("out:dropnext")
    if after.cells > f["cells"]:  # type: ignore[operator]
        out.append(f"out:explore|tgt:{change}")
    near = f["near"]
    if (near is None or near.walk is None) and f["unseen"] is not None:  # type: ignore[union-attr]
        before, now = f["unseen"][0], None if after.unseen is None else after.unseen[0]  # type: ignore[index]
        out.append("out:unseen:" + ("none" if now is None else "closer" if now < before else
                                    "farther" if now > before else "same"))
    return out


def candidate_tokens(situation: Situation) -> list[list[str]]:
    """Per candidate, the feature names (see the module docstring); the move alone when no view reads."""
    view = read_view(situation.state_text or "")
    if view is None:
        return [[c.text] for c in situation.candidates]
    f = _facts(view)
    rows = []
    for c in situation.candidates:
        row = _move_tokens(c.text, f)
        if c.outcome is not None:
            row += _outcome_tokens(c, f)
        rows.append(row)
    return rows


def progress_tokens(situation: Situation) -> list[str]:
    """The situation's tokens for Search's progress estimate (moves left): the current goal, whether its
    target is in view and how far, what is in front and carried."""
    view = read_view(situation.state_text or "")
    if view is None:
        return ["*"]
    f = _facts(view)
    near = f["near"]
    dist = "none" if near is None else str(min(near.distance, 8))  # type: ignore[union-attr]
    parts = re.search(r"done: (\d+) of (\d+)", situation.state_text or "")
    left = 1 if parts is None else int(parts[2]) - int(parts[1])
    return ["*", f"{f['what']}|dist:{dist}", f"front:{f['front']}", f"carry:{f['carry']}", f"left:{left}",
            f"{f['what']}|where:{_where(near)}"]  # type: ignore[arg-type]
