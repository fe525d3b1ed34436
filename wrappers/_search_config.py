"""Search's options (:class:`SearchConfig`), grouped by concern and checked once when they are made.

Three groups, each a frozen dataclass, plus two settings of how a search runs:

- :class:`SearchLimits`: what one search and the whole episode may spend, and when a search stops early;
- :class:`SearchGuidance`: the order nodes are expanded in (priority formula, trust in the policy, ``h``);
- :class:`SearchTies`: how nodes the policy is indifferent between are ordered (novelty), how much of
  what a search found is committed to (partial plans, the first gain), and what the next search reuses;
- ``batch_size`` and ``trace`` (on :class:`SearchConfig` itself).

Users, ``wrap`` and job configs pass the options flat (``Search(p, budget=100, heuristic="progress")``,
``--wrap-option novelty=0``) and read them flat (``config.budget``); :class:`SearchConfig` routes each to
its group. ``SearchConfig(limits=SearchLimits(...))`` builds it from the groups.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from s1gym.checks import fraction, non_negative_float, non_negative_int, positive_float, positive_int
from s1gym.core import Situation

__all__ = [
    "AUTO",
    "DEFAULT_PRIORITY",
    "FALLBACKS",
    "GREEDY",
    "OPTION_NAMES",
    "PRIORITIES",
    "PROGRESS",
    "SearchConfig",
    "SearchGuidance",
    "SearchLimits",
    "SearchTies",
]

PRIORITIES = ("levin", "phs_h", "phs*")
DEFAULT_PRIORITY = "phs_h"

#: ``SearchConfig(heuristic=PROGRESS)``: the task's learned progress estimate.
PROGRESS = "progress"
#: ``SearchConfig(heuristic=AUTO)`` (the default): the task's learned progress estimate where it ships one,
#: else ``h_scale * (1 - score)``.
AUTO = "auto"

#: ``SearchConfig(fallback=GREEDY)``: play the inner policy's choice once the episode's calls are spent.
GREEDY = "greedy"
FALLBACKS = (None, GREEDY)


@dataclass(frozen=True)
class SearchLimits:
    """What one search and the whole episode may spend, and when a search stops before its budget."""

    budget: int = 1000
    """Inner-policy calls per search (one per situation asked; exactly respected)."""
    episode_budget: int | None = None
    """Inner-policy calls for a whole episode (all its searches); once spent with no plan to follow,
    the decision gives up (``Decision.give_up``) and the runner ends the episode unsolved, or with
    ``fallback="greedy"`` plays on greedily."""
    fallback: str | None = None
    """What a decision does once ``episode_budget`` is spent and no plan is left: ``None`` gives up;
    ``"greedy"`` asks the inner policy once a move and plays its choice (``info["fallback"] =
    "greedy"``), so a game whose searches found nothing is still played to its end (these calls
    are counted in the usage, beyond ``episode_budget``)."""
    doubling: bool = True
    """With ``episode_budget``: a search whose budget ends before it found anything better than the
    current score doubles its budget and goes on from the same tree (LevinTS-style), within what is
    left of the episode's calls, instead of playing a move that leads nowhere and searching again from
    scratch (which walks back and forth when the next gain lies beyond one search's horizon)."""
    search_cap: int | None = None
    """With ``doubling``: the most calls one search may double up to (``None``: what is left of the
    episode's), so that one search cannot spend the whole ``episode_budget`` on a single move."""
    gain_patience: float | str | None = AUTO
    """Once a search has found a state scoring above the current one after ``c`` calls, it goes on for at
    most ``gain_patience * c`` more calls looking for something better (a win, a bigger gain), then
    plays its best plan: a gain found early costs little, and a task with many small gains is not
    charged a whole budget for each. ``None`` spends the whole budget every time; ``"auto"`` (the
    default): the task's, as its family declares it (:func:`s1gym.registration.gain_patience`:
    :data:`s1gym.family.GAIN_PATIENCE` unless the family says otherwise)."""
    max_expansions: int | None = None
    """Stop a search after this many expansions (``None``: no limit). ``budget`` counts inner-policy calls
    only, and a node left with one move after pruning is a forced move that costs no call, so where
    forced moves chain into wide states (a web date picker: pick a date, reopen the picker, ~33 children
    each time) a search can expand without end at no call; there a cap of about ``budget`` bounds its
    work (bench/web.py uses ``max_expansions=20`` with ``budget=20``)."""
    max_seconds: float | None = None
    """Stop a search after this many seconds (``None``: no limit)."""
    width: int | None = None
    """Step only the ``width`` moves of a node the inner policy likes best (``None``: every move). A node
    with more moves than that is asked about *before* its children are stepped (the same one call, and
    the answer is reused for their π), and the other moves are not generated while one of the favourites
    survives pruning: the search is no longer complete, and a winning move outside the top ``width`` goes
    unseen. When every favourite is pruned (it loses, or leads to a state already reached: ScienceWorld's
    ``focus on`` a wrong thing ends the game) the next ``width`` favourites are stepped, and so on until
    one survives, so a node is never left without children while it has a move that leads somewhere new
    (``info["refills"]`` counts those groups). For tasks whose states offer hundreds of moves that each
    cost an engine step (ScienceWorld); a search costs about ``width`` steps a call."""

    def __post_init__(self) -> None:
        positive_int("budget (inner-policy calls per search)", self.budget)
        positive_int("width (moves stepped per node)", self.width, optional=True)
        positive_int("max_expansions", self.max_expansions, optional=True)
        positive_float("max_seconds", self.max_seconds, optional=True)
        positive_int("episode_budget (inner-policy calls per episode)", self.episode_budget, optional=True)
        if self.fallback not in FALLBACKS:
            raise ValueError(f"fallback must be one of {FALLBACKS} (None gives up once the episode's calls are "
                             f"spent); got {self.fallback!r}")
        positive_int("search_cap (inner-policy calls one search may double up to)", self.search_cap, optional=True)
        if self.gain_patience is not None and self.gain_patience != AUTO:
            try:
                non_negative_float("gain_patience", self.gain_patience)
            except ValueError:
                raise ValueError(f"gain_patience must be a finite number >= 0, {AUTO!r} (the task's, the default) "
                                 f"or None (the whole budget every search); got {self.gain_patience!r}") from None


@dataclass(frozen=True)
class SearchGuidance:
    """The order nodes are expanded in: the priority formula, how far the policy is trusted, the heuristic."""

    priority: str = DEFAULT_PRIORITY
    """Node order: ``levin``, ``phs_h`` or ``phs*`` (see :mod:`s1gym.wrappers.search`)."""
    epsilon: float = 0.1
    """Share of flat odds mixed into the inner policy's probabilities (so no move has π = 0)."""
    h_scale: float = 10.0
    """Without a learned estimate the heuristic is ``h_scale * (1 - score)``."""
    heuristic: Callable[[Situation], float] | str | None = AUTO
    """``"auto"`` (default): the task's learned estimate of the moves left where its family ships one
    (:func:`s1gym.registration.progress_estimate`, see :mod:`s1gym.core.estimates`), else
    ``h_scale * (1 - score)``; ``"progress"``: the task's estimate, an error where it has none;
    ``None``: always ``h_scale * (1 - score)``; or any ``heuristic(situation) -> h >= 0``. Where a task
    ships an estimate, Search with it was measured better than with the score alone (docs/benchmarks.md)."""

    def __post_init__(self) -> None:
        if self.priority not in PRIORITIES:
            raise ValueError(f"unknown search priority {self.priority!r}; use one of {', '.join(PRIORITIES)}")
        fraction("epsilon (share of flat odds mixed into the policy)", self.epsilon)
        non_negative_float("h_scale", self.h_scale)
        if self.heuristic is not None and not callable(self.heuristic) and self.heuristic not in (PROGRESS, AUTO):
            raise ValueError(f"heuristic must be a callable(situation) -> float, {PROGRESS!r} for the task's "
                             f"learned progress estimate, {AUTO!r} for that estimate where the task ships one, or "
                             f"None for h_scale * (1 - score); got {self.heuristic!r}")
        object.__setattr__(self, "epsilon", float(self.epsilon))
        object.__setattr__(self, "h_scale", float(self.h_scale))


@dataclass(frozen=True)
class SearchTies:
    """Ties and reuse: how nodes the policy is indifferent between are ordered, and how much of what a
    search found is committed to."""

    novelty: float = 100.0
    """Width-based novelty (Lipovetzky & Geffner's IW(1) and BFWS): a node that makes no fact true
    (``env.state_atoms()``) that no node generated before it in this search with the same score made
    true has its priority multiplied by ``1 + novelty``, so states that show something new are expanded
    first; the others wait, but are not pruned (the search stays complete). Novelty breaks the policy's
    indifference, never its preference: a move the inner policy gave at least twice its flat share is
    exempt. 0 turns it off. The default was chosen on the CookingWorld train fold (docs/benchmarks.md)."""
    commit_partial: bool = True
    """Follow a partial plan that raised the score to its end with no calls, then search again from
    there: with a budget smaller than the episode's allowance, a receding-horizon search that banks
    each gain instead of re-finding it."""
    until_gain: bool = False
    """Stop each search at the first state whose score beats the current one and commit to it
    (enforced hill-climbing, Hoffmann & Nebel 2001). Off by default: on a task whose score can rise
    into a dead end, committing to the first gain is a gamble a search for the win does not take."""
    avoid_revisits: bool = False
    """A partial plan (the search ended without a win) ends, among the nodes of the best score, in the state
    the episode has been in least often (``Situation.visited``), and only then in the one of the lowest
    ``h``: a receding-horizon search that finds no gain within its budget otherwise walks the cycle its
    heuristic likes best for ever (ScienceWorld: pick up the pot, put it in the box, activate the sink,
    deactivate it, pick up the pot...). Off by default: published tables ran without it."""
    policy_answers: bool = True
    """Answer moves whose outcome a planning fork hides (``S1Env.is_answer_move``: ScienceWorld's ``focus on
    X``) are never stepped: the search plans with the other moves only (``width`` counts those), and the
    decision commits to an answer (``stop_reason="commit"``) only when the inner policy's own choice at the
    real state is one. ``False`` (the rule before 2026-12-06): an answer is a leaf at its parent's score and
    ``h``, and the search commits to the first one its frontier pops, which a search whose other moves raise
    ``h`` pops early, often at a state the policy itself would not answer in. Measured on ScienceWorld's dev
    gate and test games (docs/benchmarks.md, "A larger gate"). Tasks that name no answer move (every family
    but ScienceWorld) play the same either way."""
    answer_confidence: float = 0.0
    """With ``policy_answers``: the least probability the inner policy must give its answer at the real state
    for the decision to commit to it; below it the search plans with the other moves, as when the policy picks
    no answer (an answer on a weak preference ends most of ScienceWorld's games at 0, what was scored lost).
    0 (the default) commits to every answer the policy picks. A floor of 0.3 (fitted on dev games) was measured
    worse on ScienceWorld's dev gate: the fitted Local is as sure of its wrong answers as of its right ones
    (docs/benchmarks.md, "A floor under the policy's answers")."""
    stall_share: float = 0.0
    """A stalled search (no win found, and no plan scoring above the real state) plays a move the inner policy
    likes: one given at least this share of its favourite's probability at the real state. The plan played is
    the best, by the usual order, among those whose first state a liked move leads to, and the liked move is
    played into it even where the search reached that state by a sibling (ScienceWorld's ``look at X`` all lead
    to one state); a liked move that leads straight back to the real state is a plan of its own; where no liked
    move was stepped, the usual pick. 0 (the default) always plays the usual pick: the lowest ``h`` among the
    nodes of the best score, whatever the policy thinks of its first move. ScienceWorld's tables use 0.5,
    measured better on its dev and test games (docs/benchmarks.md, "A larger gate": arm R)."""
    reuse: int = 4096
    """Tree reuse: the inner policy's answers an episode's searches keep for the next ones (at most this
    many, least recently used out), keyed by the state, the moves and feedback that reached it and the
    notes. After a move is played, every node of the last search under it is reached again by the same
    history, so the next search gets its answers without a call; the rest is evicted as it ages. A
    reused answer counts in ``budget`` like a call (the search expands what it expanded before) but not
    in the calls spent (``policy_calls``, ``episode_budget``, the usage). 0 turns it off."""

    def __post_init__(self) -> None:
        non_negative_float("novelty", self.novelty)
        non_negative_int("reuse (inner-policy answers kept between searches)", self.reuse)
        fraction("answer_confidence (the inner policy's least probability of an answer it commits to)",
                 self.answer_confidence)
        object.__setattr__(self, "answer_confidence", float(self.answer_confidence))
        fraction("stall_share (the least share of the policy's favourite a stalled plan's first move needs)",
                 self.stall_share)
        object.__setattr__(self, "stall_share", float(self.stall_share))


#: group field of :class:`SearchConfig` -> its class
_GROUPS: dict[str, type] = {"limits": SearchLimits, "guidance": SearchGuidance, "ties": SearchTies}
#: flat option -> the group holding it
_GROUP_OF: dict[str, str] = {f.name: group for group, cls in _GROUPS.items() for f in dataclasses.fields(cls)}
#: Every flat option, in the order ``Search.options()`` records them (job configs keep that order).
OPTION_NAMES: tuple[str, ...] = (
    "budget", "priority", "epsilon", "h_scale", "heuristic", "max_expansions", "max_seconds", "batch_size",
    "trace", "commit_partial", "until_gain", "episode_budget", "fallback", "search_cap", "novelty",
    "gain_patience", "doubling", "reuse", "width", "avoid_revisits", "policy_answers",
    "answer_confidence", "stall_share",
)
assert set(OPTION_NAMES) == {*_GROUP_OF, "batch_size", "trace"}, "OPTION_NAMES must list every option once"


@dataclass(frozen=True, init=False)
class SearchConfig:
    """Every option of :class:`~s1gym.wrappers.Search`, in groups, checked once when it is made.

    ``SearchConfig(budget=100, novelty=0)`` (flat options, as ``Search`` and job configs pass them) or
    ``SearchConfig(limits=SearchLimits(budget=100), ties=SearchTies(novelty=0))``; a flat option given
    with its group replaces that group's value. Every option reads flat too: ``config.budget`` is
    ``config.limits.budget``.
    """

    limits: SearchLimits
    guidance: SearchGuidance
    ties: SearchTies
    batch_size: int
    """Nodes popped at once and asked about in one ``decide_many`` (Jev/Chat run them concurrently).
    Children of the first are pushed after the whole batch, so the order can differ slightly."""
    trace: bool
    """Record every expanded plan in ``info["trace"]``."""

    def __init__(
        self,
        *,
        limits: SearchLimits | None = None,
        guidance: SearchGuidance | None = None,
        ties: SearchTies | None = None,
        batch_size: int = 1,
        trace: bool = False,
        **options: Any,
    ) -> None:
        unknown = sorted(set(options) - set(_GROUP_OF))
        if unknown:
            raise TypeError(
                f"SearchConfig: unknown option(s) {unknown}; options are {', '.join(OPTION_NAMES)}"
            )
        given = {"limits": limits, "guidance": guidance, "ties": ties}
        for name, cls in _GROUPS.items():
            flat = {k: v for k, v in options.items() if _GROUP_OF[k] == name}
            group = given[name]
            if group is None:
                group = cls(**flat)
            elif not isinstance(group, cls):
                raise TypeError(f"SearchConfig({name}=...) takes a {cls.__name__}, got {group!r}")
            elif flat:
                group = dataclasses.replace(group, **flat)
            object.__setattr__(self, name, group)
        positive_int("batch_size", batch_size)
        object.__setattr__(self, "batch_size", batch_size)
        object.__setattr__(self, "trace", trace)

    def __getattr__(self, name: str) -> Any:
        """A flat option (``config.budget``) from its group; only called for names not found otherwise."""
        group = _GROUP_OF.get(name)
        if group is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return getattr(object.__getattribute__(self, group), name)

    @classmethod
    def option_names(cls) -> tuple[str, ...]:
        """Every flat option (what ``Search(...)``, ``wrap`` and ``--wrap-option`` accept)."""
        return OPTION_NAMES

    def flat(self) -> dict[str, Any]:
        """Every option by its flat name, in :data:`OPTION_NAMES` order."""
        return {name: getattr(self, name) for name in OPTION_NAMES}
