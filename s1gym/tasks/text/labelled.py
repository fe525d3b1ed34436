"""Labelled-text tasks: one labelling decision per text, ``batch`` texts per episode.

:class:`LabelledTextEnv` is the shared machinery of s1/TicketRouter-v0 (queues)
and s1/InjectionGuard-v0 (``allow``/``block``); each subclass names its data,
labels, wording, rule baseline and metrics. The options every such task takes
(``text_column``, ``batch``, ``max_steps``, ...) are this class's keywords; a
task's ``__init__`` declares only its own (its data file, its label column's
default, its labels) and passes the rest on.

Actions: the labels are fixed action slots (N = the number of labels, index i
always label i, in the order the task gives, else sorted); every label is
legal until the episode is over.

Scoring follows the core contract: ``score`` = right decisions / ``batch``,
reward = score change (1 for a right label when ``batch`` is 1). The episode
ends after the last text, ``won`` when every text got the right label,
``lost`` otherwise (so with ``batch=1`` the win rate is the accuracy). The
observation never says whether a decision was right; the info's
``reveal_key`` entry (``routed``, ``judged``) is an empty list until the
episode is over and then one ``[predicted, true]`` pair per decision, which
the task's ``summarize_episodes`` turns into its metrics.

Forks and labelled data: the env holds the labels, so anything that steps a
fork before deciding learns the answer from the reward, the score or the
``lost`` flag. ``Lookahead`` (which drops moves whose fork loses) and ``Search``
(whose heuristic is the score) are oracles on these tasks by construction
(``fork_reveals_answer``); compare decision models without them.

Episodes: a fixed permutation of the data (seeded once) is cut into runs of
``batch`` texts; seed S plays run S (wrapping around), so seeds 0..n/batch-1
see every text exactly once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np

from s1gym import stats
from s1gym.checks import positive_int
from s1gym.core import Progress, S1Env, charset_for
from s1gym.tasks.text.data_files import LabelledText, load_labelled_texts
from s1gym.tasks.text.family import FAMILY

__all__ = ["LabelledTextEnv", "bootstrap_interval", "revealed_pairs"]

#: Seed of the fixed permutation that orders a data set into episodes.
ORDER_SEED = 20_240_607
#: Resamples and seed of the bootstrap intervals (deterministic).
BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_SEED = 0


class LabelledTextEnv(S1Env):
    """One labelling decision per text, ``batch`` texts per episode (see the module docstring)."""

    fork_reveals_answer = True

    #: Key of the final info's ``[[predicted, true], ...]`` list.
    reveal_key: ClassVar[str] = "routed"
    #: Wording of the observation.
    intro: ClassVar[str] = ""
    noun: ClassVar[str] = "Text"
    verb: ClassVar[str] = "labelled"
    done_text: ClassVar[str] = "Every text is labelled."
    #: The shipped data set (a file of the family's ``data/``), used when no ``data`` is given.
    data_file: ClassVar[str] = ""
    #: What the data's rows are called in load errors ("tickets", "texts").
    what: ClassVar[str] = "data"
    default_max_steps = 1

    def __init__(
        self,
        *,
        data: str | None = None,
        text_column: str = "text",
        label_column: str = "label",
        labels: Sequence[str] | None = None,
        label_map: Callable[[Any], str | None] | None = None,
        batch: int = 1,
        max_candidates: int | None = None,
        max_steps: int | None = None,
        render_mode: str | None = None,
    ) -> None:
        data = str(data) if data is not None else str(FAMILY.data(self.data_file))
        if labels is not None:
            labels = [str(q) for q in labels]
            if not labels or len(set(labels)) != len(labels):
                raise ValueError(
                    f"{self.task_name}: the label list must be non-empty and distinct, got {labels!r}"
                )
        self.items: tuple[LabelledText, ...] = load_labelled_texts(
            data,
            text_column=text_column,
            label_column=label_column,
            labels=labels,
            label_map=label_map,
            what=self.what,
        )
        self.labels: tuple[str, ...] = (
            tuple(labels) if labels is not None else tuple(sorted({i.label for i in self.items}))
        )
        self.batch = positive_int("batch", batch, 1)
        if self.batch > len(self.items):
            raise ValueError(
                f"{self.task_name}: batch={self.batch} exceeds the {len(self.items)} texts in {data}"
            )
        self._order = _permutation(len(self.items))
        super().__init__(
            max_candidates=max_candidates,
            max_steps=self.batch if max_steps is None else max_steps,
            charset=_charset(self.items),
            render_mode=render_mode,
            action_slots=self.labels,
        )
        self._episode: tuple[int, ...] = ()
        self._predictions: tuple[str, ...] = ()

    @classmethod
    def resolve_options(cls, options: Mapping[str, Any]) -> dict[str, Any]:
        # The keywords are split between this class and the task's: list them in option_help's order.
        defaults = super().resolve_options({})
        return {**{k: defaults[k] for k in cls.option_help if k in defaults}, **options}

    @staticmethod
    def shared_help(what: str) -> dict[str, str]:
        """``option_help`` entries of the options every labelled-text task takes, with ``what`` naming its rows."""
        return {
            "batch": f"{what} per episode, one decision each (default 1)",
            "max_steps": "step limit (default: batch)",
        }

    def game_of(self, seed: int) -> str:
        """The run of texts ``seed`` plays: runs of ``batch`` texts wrap around the fixed order, so seeds whose
        runs start at the same place play the same texts."""
        return f"texts from {int(seed) * self.batch % len(self.items)} of {len(self.items)}, {self.batch} a run"

    # ---------------------------------------------------------------- hooks
    def _new_game(self, seed: int | None, options: dict[str, Any]) -> str:
        run = seed if seed is not None else int(self.np_random.integers(2**31 - 1))
        n = len(self.items)
        self._episode = tuple(int(self._order[(run * self.batch + j) % n]) for j in range(self.batch))
        self._predictions = ()
        return ""

    def _legal_moves(self) -> list[str]:
        return list(self.labels) if len(self._predictions) < self.batch else []

    def _play(self, move: str) -> str:
        self._predictions = (*self._predictions, move)
        return f"{self.noun} {len(self._predictions)} of {self.batch} {self.verb} {move}."

    def _describe(self) -> str:
        i = len(self._predictions)
        if i >= self.batch:
            return self.done_text
        text = self.items[self._episode[i]].text
        return f"{self.intro}\n\n{self.noun} {i + 1} of {self.batch}:\n{text}"

    def _progress(self) -> Progress:
        correct = sum(p == self.items[j].label for p, j in zip(self._predictions, self._episode))
        over = len(self._predictions) >= self.batch
        return Progress(
            correct / self.batch, won=over and correct == self.batch, lost=over and correct < self.batch
        )

    def _fork_into(self, clone: S1Env) -> None:
        return None  # all game state is immutable (tuples) and shared safely

    def _extra_info(self) -> dict[str, Any]:
        if len(self._predictions) < self.batch and self._steps < self.max_steps:
            return {self.reveal_key: []}  # present on every step (one type per key), empty until the end
        truth = [self.items[j].label for j in self._episode]
        return {self.reveal_key: [[p, t] for p, t in zip(self._predictions, truth)]}

    def state_key(self) -> str:
        # The decisions so far are part of the state (they set the score); the description is not enough.
        return super().state_key() + "\n#" + "|".join(self._predictions)

    # -------------------------------------------------------------- players
    @property
    def current_text(self) -> str | None:
        """The text being decided now (``None`` once the episode is over)."""
        i = len(self._predictions)
        return self.items[self._episode[i]].text if i < self.batch else None

    def _current_item(self) -> LabelledText:
        """The item being decided now; a clear error once the episode is over."""
        i = len(self._predictions)
        if i >= self.batch:
            raise RuntimeError(f"{self.task_name}: the episode is over; there is nothing left to decide")
        return self.items[self._episode[i]]

    def expert_action(self) -> str:
        """The true label of the current text (privileged: tests and oracles only)."""
        return self._current_item().label


# ---------------------------------------------------------------- helpers
def bootstrap_interval(sample: np.ndarray, statistic: Callable[[np.ndarray], np.ndarray]) -> list[float]:
    """95 % percentile bootstrap interval of a task metric (:func:`s1gym.stats.bootstrap_interval`)."""
    return list(stats.bootstrap_interval(sample, statistic, n_resamples=BOOTSTRAP_RESAMPLES, seed=BOOTSTRAP_SEED))


def revealed_pairs(final_infos: Sequence[Mapping[str, Any]], key: str) -> list[tuple[str, str]]:
    """Every ``(predicted, true)`` pair the episodes' final infos revealed."""
    pairs = []
    for info in final_infos:
        for pair in info.get(key) or ():
            predicted, true = pair
            pairs.append((str(predicted), str(true)))
    return pairs


@lru_cache(maxsize=16)
def _permutation(n: int) -> np.ndarray:
    order = np.random.default_rng(ORDER_SEED).permutation(n)
    order.flags.writeable = False
    return order


@lru_cache(maxsize=16)
def _charset(items: tuple[LabelledText, ...]) -> frozenset[str]:
    return charset_for(s for item in items for s in (item.text, item.label))
