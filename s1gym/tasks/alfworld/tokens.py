"""ALFWorld's pair tokens: (situation token, move token) pairs, what ALFWorld's fitted model weighs.

Local's dense features (policies/local.py) say how a move relates to the goal
text as a whole. On a game whose goal is reached in stages (ALFWorld: find the
object, take it, heat/cool/clean it or find a lamp, then carry it to a place)
that is not enough: which move is right depends on what was already done, on
what the player holds, and on world knowledge (apples lie on countertops, a
"hot" goal means the microwave). ALFWorld's model
(:class:`s1gym.tasks.alfworld.model.ALFWorldModel`) scores each candidate by the sum
of the learned weights of the pairs ``(c, m)`` where ``c`` is a token of the
situation and ``m`` a token of the move, from what a player sees only:

Situation tokens (:func:`s1gym.tasks.alfworld.goals.context_tokens`, shared with the progress estimate):

- ``*``: always present (so every move token has a base weight);
- ``g:<word>``: the goal's words (the first line of each goal paragraph, e.g.
  ``Your task is to: put a hot egg in diningtable.``), digits dropped;
- ``hold:g`` / ``hold:x`` / ``hold:-``: carrying something the goal names /
  something else / nothing (``You are carrying ...``);
- ``at:g`` / ``at:x``: the place the player is at (``You are at ...``) is / is
  not named by the goal;
- ``did:<verb>``, ``did:<verb>+g``: verbs of the moves played so far, and
  those whose move named a goal word (``did:heat+g`` once the egg was heated);
- ``seen:g``: a goal word other than the verb showed up in the game's answers
  (after the moves), i.e. the object was seen somewhere;
- what the player did with the goal's *thing* (the object the goal line names,
  :func:`~s1gym.tasks.alfworld.goals.goal_target`; instances are ``<thing> <n>``), read from
  the moves and answers (:func:`~s1gym.tasks.alfworld.goals.memory`): ``two:<k>`` when the
  goal asks for two of them and ``k`` (0, 1, 2) are now at the goal's place, put
  there by the player; ``seen:free`` when the player holds none of them and one
  it has not placed was seen somewhere other than the goal's place.

Move tokens (:func:`move_tokens`):

- ``v:<verb>`` and ``v:<verb>+g<k>`` (the move names k goal words, k <= 2),
  ``v:<verb>+held`` (it names what the player carries), ``v:<verb>+again``
  (played before in this episode), ``v:go+seen`` (it goes to where a free
  instance of the thing was last seen, while the player holds none), ``v:go+searched``
  (it goes back to a place, not the goal's, whose contents the player has seen and
  where no free instance of the thing lies), ``v:take+placed`` (it takes back an
  instance the player put at the goal's place);
- ``o:<class>``: the things the move names (``go to countertop 2`` ->
  ``o:countertop``), which pair with the goal's words only (the priors: where an
  apple is found, which appliance a "hot" goal needs);
- with lookahead (the candidate carries an outcome): ``out:seen`` (the game's
  answer repeats one already seen: nothing new there), ``out:g<k>`` (the answer
  names k goal words the move itself does not: the move reveals the object),
  ``out:none`` (it names none), ``out:free`` (it names an instance of the thing
  that the player neither holds nor placed: the second of two, not the first
  again), and for each move it makes available,
  ``new:<verb>`` / ``new:<verb>+g<k>`` (``go to microwave 1`` while holding the
  egg opens ``heat egg 1 with microwave 1``: ``new:heat+g1``).

Goal-word tokens ``g:<word>`` pair with the plain ``v:<verb>``, ``new:<verb>``
and ``o:<class>`` tokens (a "hot" goal and the verb ``heat``, an apple and a
countertop); the other situation tokens pair with every move token except
``o:*``. The weights are
fitted by :mod:`s1gym.tasks.alfworld.fit` and shipped as JSON in the family's data/ (with
their provenance); pairs never seen in training weigh 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from s1gym.tasks.alfworld.goals import FILLER as _FILLER
from s1gym.tasks.alfworld.goals import (
    INSTANCE,
    Memory,
    Target,
    context_tokens,
    goal_target,
    goal_words,
    memory,
    words,
)
from s1gym.tasks.alfworld.goals import feedback_words as _feedback_words
from s1gym.tasks.alfworld.goals import held_words as _held

if TYPE_CHECKING:
    from s1gym.core.situation import Candidate, Situation

__all__ = ["move_tokens", "pairs", "situation_pairs"]


def move_tokens(candidate: Candidate, situation: Situation, goal: frozenset[str], held: Iterable[str] = (),
                played: Iterable[str] = (), seen_feedback: Iterable[str] = (), target: Target = Target(),
                mem: Memory | None = None) -> list[str]:
    """The move's tokens (see the module docstring); lookahead tokens when it carries an outcome."""
    mw = words(candidate.text)
    if not mw:
        return []
    mem = Memory() if mem is None else mem
    verb, rest = mw[0], [w for w in mw[1:] if w not in _FILLER]
    k = min(2, len(goal & set(rest)))
    out = [f"v:{verb}", f"v:{verb}+g{k}"]
    if set(held) & set(rest):
        out.append(f"v:{verb}+held")
    if candidate.text in set(played):
        out.append(f"v:{verb}+again")
    if verb == "go":
        place = candidate.text.removeprefix("go to ")
        if not mem.held and place in mem.free_places(target):
            out.append("v:go+seen")
        elif place in mem.searched_places(target):
            out.append("v:go+searched")
    if verb == "take" and mem.placed and any(f"{a} {b}" in mem.placed for a, b in INSTANCE.findall(candidate.text)):
        out.append("v:take+placed")
    out.extend(f"o:{w}" for w in sorted(set(rest)))
    if candidate.outcome is not None:
        answer = candidate.outcome.strip().split("\n\n", 1)[0]
        if answer.strip() in set(seen_feedback):
            out.append("out:seen")
        revealed = min(2, len(goal & (_feedback_words(answer) - set(mw))))
        out.append(f"out:g{revealed}" if revealed else "out:none")
        if target.thing and any(a == target.thing and f"{a} {b}" not in mem.placed and f"{a} {b}" not in mem.held
                                for a, b in INSTANCE.findall(answer.lower())):
            out.append("out:free")
        for action in candidate.new_actions:
            aw = words(action)
            if aw:
                out.append(f"new:{aw[0]}")
                ka = min(2, len(goal & set(aw[1:])))
                if ka:
                    out.append(f"new:{aw[0]}+g{ka}")
    return list(dict.fromkeys(out))


def pairs(context: Sequence[str], moves: Sequence[str]) -> list[str]:
    """The ``c|m`` pairs scored (goal words pair with verbs and things, the rest with all but things)."""
    out = []
    for c in context:
        if c.startswith("g:"):
            out.extend(f"{c}|{m}" for m in moves if m.startswith(("o:", "v:", "new:")) and "+" not in m)
        else:
            out.extend(f"{c}|{m}" for m in moves if not m.startswith("o:"))
    return out


def situation_pairs(situation: Situation) -> list[list[str]]:
    """Per candidate, the pairs it scores."""
    state = situation.state_text or ""
    goal = goal_words(state, situation.notes)
    target = goal_target(state)
    mem = memory(situation.history, target)
    context = context_tokens(situation, goal, target, mem)
    held = _held(state)
    played = [m for m, _ in situation.history]
    seen_feedback = [f.strip() for _, f in situation.history]
    return [pairs(context, move_tokens(c, situation, goal, held, played, seen_feedback, target, mem))
            for c in situation.candidates]
