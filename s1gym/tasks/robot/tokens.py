"""The robot tasks' reading of a situation as feature names, for Local's fitted model (:mod:`.model`).

Everything is read off the text a player sees (the observation, each move's text and, under Lookahead, its
outcome): the goal, what the gripper holds and is over, what stands on the block to move or on the target,
whether the gripper is turned to a long block; per candidate, the skill's kind and the role of the block it
names (the subject, the support, a block in the way, another); under Lookahead, what the move did (the
subject nearer its goal or not, a block in or out of the gripper, a slip, a fall, the goal reached).
:func:`progress_tokens` is what the task's progress estimate (the skills left to a win, which Search uses as
h) weighs: the same facts of the situation, counted and bucketed, alone and with the goal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from s1gym.core import Situation

__all__ = ["RobotState", "candidate_tokens", "progress_tokens", "read_state"]

_GOAL = re.compile(r"Goal: (Put|Hold|Stack|Clear)(?: the (\w+) block)?(?: on the (\w+) block)?")
_BLOCK = re.compile(r"^- (\w+) block \(([\dx]+) cm\): ([^,]+?) at x=([+-]\d+) y=([+-]\d+)(.*)$", re.MULTILINE)
_TARGET = re.compile(r"Target(?: area)?: .*?x=([+-]\d+) y=([+-]\d+)")
_GRIP = re.compile(r"Gripper: (open|closed) .*?, (empty|holding the (\w+) block), at x=([+-]\d+) y=([+-]\d+), "
                   r"(-?\d+) cm high, turned (-?\d+) degrees(?:; above the (\w+) block)?")
_DIST = re.compile(r"(\d+) cm from (?:the target|its place)")
_TURN = re.compile(r"(?:its long side turned|turned) (-?\d+) degrees")
_SKILL = [("carry_to", re.compile(r"^carry the \w+ block to the target$")),
          ("above_target", re.compile(r"^(?:move|carry the \w+ block) above the target$")),
          ("free", re.compile(r"^(?:move|carry the \w+ block) to the free spot$")),
          ("above", re.compile(r"^(?:move|carry the \w+ block) above the (\w+) block$")),
          ("turn", re.compile(r"^turn the gripper to the (\w+) block$")),
          ("push_to", re.compile(r"^push the (\w+) block toward the target$")),
          ("push_away", re.compile(r"^push the (\w+) block away from the target$"))]


@dataclass(frozen=True)
class RobotState:
    goal: str
    subject: str | None
    support: str | None
    held: str | None
    closed: bool
    over: str | None
    height: int
    blocks: dict            # colour -> (where, x, y, rest of the line)
    distance: int | None    # the subject's distance to its goal, cm
    misaligned: frozenset   # long blocks the gripper is not turned to
    in_way: frozenset       # blocks on the subject or support, or on the target (place), or inside (clear)


def read_state(text: str) -> RobotState | None:
    """The facts of an observation (or outcome) text; ``None`` when it is not a robot scene."""
    g = _GOAL.search(text)
    grip = _GRIP.search(text)
    if not g or not grip:
        return None
    verb, subject, support = g.groups()
    goal = {"Put": "place", "Hold": "air", "Stack": "stack", "Clear": "clear"}[verb]
    blocks = {m[1]: (m[3], int(m[4]), int(m[5]), m[6]) for m in _BLOCK.finditer(text)}
    target = _TARGET.search(text)
    gyaw = int(grip[7])
    misaligned, in_way = set(), set()
    distance = None
    for colour, (where, x, y, rest) in blocks.items():
        turn = _TURN.search(rest)
        if "long side" in rest and turn and abs((int(turn[1]) - gyaw + 90) % 180 - 90) > 12:
            misaligned.add(colour)
        if colour == subject:
            d = _DIST.search(rest)
            distance = int(d[1]) if d else None
            continue
        if where in (f"on the {subject} block", f"on the {support} block") and where != "on the None block":
            in_way.add(colour)
        if goal == "place" and target and where == "on the table" and (
                (x - int(target[1])) ** 2 + (y - int(target[2])) ** 2) ** 0.5 < 7:
            in_way.add(colour)
        if goal == "clear" and "inside the target area" in rest:
            in_way.add(colour)
    return RobotState(goal, subject, support, grip[3], grip[1] == "closed", grip[8], int(grip[6]), blocks,
                      distance, frozenset(misaligned), frozenset(in_way))


def _skill(text: str) -> tuple[str, str | None]:
    for kind, pattern in _SKILL:
        m = pattern.match(text)
        if m:
            return kind, (m.group(1) if m.groups() else None)
    return text.replace(" ", "_"), None


def _role(state: RobotState, colour: str | None) -> str:
    if colour is None:
        return "-"
    if colour == state.subject:
        return "subject"
    if colour == state.support:
        return "support"
    return "in_way" if colour in state.in_way else "other"


def _held(state: RobotState) -> str:
    return "none" if state.held is None else ("subject" if state.held == state.subject else (
        "in_way" if state.held in state.in_way else "other"))


def _context(state: RobotState) -> list[str]:
    held = _held(state)
    over = "none" if state.over is None else _role(state, state.over)
    return [f"goal={state.goal}", f"held={held}", f"closed={int(state.closed)}", f"over={over}",
            f"low={int(state.height < 6)}", f"blocked={int(bool(state.in_way))}",
            f"turned={int(bool(state.misaligned & {state.subject, *state.in_way}))}",
            f"near={'?' if state.distance is None else int(state.distance < 3)}"]


#: what a skill's feedback says (env.py's events) -> its outcome token
EVENTS = {"The goal is reached.": "won", "slipped out of the gripper": "slipped", "closed on nothing": "missed",
          "fell off the table": "fell", "tipped over": "tipped"}


def _outcome(before: RobotState, text: str) -> list[str]:
    after = read_state(text)
    out = [token for phrase, token in EVENTS.items() if phrase in text]
    if re.search(r"The \w+ block moved \d+ cm", text):
        out.append("disturbed")
    if after is not None:
        if before.distance is not None and after.distance is not None:
            delta = after.distance - before.distance
            out.append("nearer" if delta <= -3 else ("farther" if delta >= 3 else "same_distance"))
        out.append(f"held={'none' if after.held is None else _role(before, after.held)}")
        out.append(f"in_way={'fewer' if len(after.in_way) < len(before.in_way) else ('more' if len(after.in_way) > len(before.in_way) else 'same')}")
        out.append(f"over={'none' if after.over is None else _role(before, after.over)}")
    return ["out:" + o for o in out]


def candidate_tokens(situation: Situation) -> list[list[str]]:
    """Per candidate, the feature names the robot model weighs: the skill and its block's role, alone and with
    each context fact; under Lookahead also what it did (``out:*``), alone and with the skill."""
    state = read_state(situation.observation)
    if state is None:
        return [[] for _ in situation.candidates]
    context = _context(state)
    rows = []
    for c in situation.candidates:
        kind, colour = _skill(c.text)
        move = f"{kind}:{_role(state, colour)}"
        names = [move] + [f"{move}|{ctx}" for ctx in context]
        if c.outcome is not None:
            outs = _outcome(state, c.outcome)
            names += outs + [f"{move}|{o}" for o in outs]
        rows.append(names)
    return rows


#: the subject's distance to its goal (cm) in the progress estimate's buckets: up to each bound
DISTANCE_BUCKETS = (2, 5, 10, 20)


def progress_tokens(situation: Situation) -> list[str]:
    """What the robot task's progress estimate weighs (the skills left to a win): the intercept ``*``, the
    goal, and each fact of the situation alone and with the goal: what is held, the fingers, what the gripper
    is over and whether it is low, how many blocks are in the way, a turned long block to take, where the
    block to move rests and how far from its goal it is (bucketed), and what is held with each of those."""
    state = read_state(situation.observation)
    if state is None:
        return ["*"]
    held = _held(state)
    over = _role(state, state.over) if state.over else "none"
    facts = [f"held={held}", f"closed={int(state.closed)}", f"over={over}",
             f"low={int(state.height < 6)}", f"in_way={min(2, len(state.in_way))}",
             f"turned={int(bool(state.misaligned & {state.subject, *state.in_way}))}"]
    if state.subject is not None and state.subject in state.blocks:
        where = state.blocks[state.subject][0]
        rests = ("held" if held == "subject" else "table" if where == "on the table" else
                 "block" if where.startswith("on the") else "fallen" if where.startswith("fallen") else "air")
        upright = "tipped" if "tipped over" in state.blocks[state.subject][3] else "upright"
        d = state.distance
        bucket = "?" if d is None else next((f"<={b}" for b in DISTANCE_BUCKETS if d <= b),
                                            f">{DISTANCE_BUCKETS[-1]}")
        facts += [f"subject={rests}", f"subject={upright}", f"distance{bucket}"]
    facts += [f"held={held}|{f}" for f in facts if not f.startswith("held=")]
    return ["*", f"goal={state.goal}", *facts, *(f"{state.goal}|{f}" for f in facts)]
