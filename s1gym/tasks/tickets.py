"""s1/TicketRouter-v0: route customer-support tickets to queues.

Each episode shows ``batch`` tickets (default 1), one at a time; the move is a
queue name. The candidates are the queue names in a fixed order (the
``queues`` option, else the labels of the data sorted), so N = the number of
queues and depends on the data set (5 for the shipped set, 11 for Bitext).

Scoring follows the core contract: ``score`` = right decisions / ``batch``,
reward = score change (1 for a right queue when ``batch`` is 1). The episode
ends after the last ticket, ``won`` when every ticket went to the right queue,
``lost`` otherwise (so with ``batch=1`` the win rate is the accuracy). The
observation never says whether a decision was right; the final info holds
``routed``: one ``[predicted, true]`` pair per decision, revealed only once the
episode is over, which is what :meth:`summarize_episodes` turns into accuracy
and a per-queue confusion matrix.

Forks and labelled data: the env holds the labels, so anything that steps a
fork before deciding learns the answer from the reward, the score or the
``lost`` flag. ``Lookahead`` (which drops moves whose fork loses) and ``Search``
(whose heuristic is the score) are oracles on this task by construction;
compare decision models without them.

Episodes: a fixed permutation of the data (seeded once) is cut into runs of
``batch`` tickets; seed S plays run S (wrapping around), so seeds 0..n/batch-1
see every ticket exactly once.

``Rule`` is the keyword router :func:`keyword_route` (table :data:`KEYWORDS`).

:class:`LabelledTextEnv` is the shared machinery; s1/InjectionGuard-v0 is the
same env with two labels (``allow``/``block``), a pattern baseline and
precision/recall metrics.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np

from s1gym import stats
from s1gym.core import S1Env, charset_for, positive_int
from s1gym.tasks.datasets import LabelledText, load_labelled_texts, packaged

__all__ = ["KEYWORDS", "LabelledTextEnv", "TicketRouterEnv", "bootstrap_interval", "keyword_route"]

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
    default_max_steps = 1
    stall_patience = None

    def __init__(
        self,
        *,
        data: str,
        text_column: str,
        label_column: str,
        labels: Sequence[str] | None = None,
        label_map: Callable[[Any], str | None] | None = None,
        batch: int = 1,
        what: str = "data",
        max_candidates: int | None = None,
        max_steps: int | None = None,
        render_mode: str | None = None,
    ) -> None:
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
            what=what,
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
            max_candidates=len(self.labels) if max_candidates is None else max_candidates,
            max_steps=self.batch if max_steps is None else max_steps,
            charset=_charset(self.items),
            render_mode=render_mode,
        )
        self._episode: tuple[int, ...] = ()
        self._predictions: tuple[str, ...] = ()

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

    def _progress(self) -> tuple[float, bool, bool]:
        correct = sum(p == self.items[j].label for p, j in zip(self._predictions, self._episode))
        over = len(self._predictions) >= self.batch
        return correct / self.batch, over and correct == self.batch, over and correct < self.batch

    def _fork_into(self, clone: S1Env) -> None:
        return None  # all game state is immutable (tuples) and shared safely

    def _extra_info(self) -> dict[str, Any]:
        if len(self._predictions) < self.batch and self._steps < self.max_steps:
            return {}
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


class TicketRouterEnv(LabelledTextEnv):
    """Route support tickets to queues; see the module docstring."""

    task_name = "TicketRouter"
    default_max_candidates = 5
    reveal_key = "routed"
    intro = "Route this customer-support ticket to the queue that should handle it."
    noun = "Ticket"
    verb = "routed to"
    done_text = "Every ticket is routed."
    option_help: ClassVar[Mapping[str, str]] = {
        "tickets": "CSV or JSONL file of tickets (default: the 30 shipped tickets over 5 queues)",
        "text_column": "column with the ticket text (default 'text'; Bitext: 'instruction')",
        "label_column": "column with the queue (default 'queue'; Bitext: 'category')",
        "queues": "queue names in candidate order; other labels are an error (default: the sorted labels)",
        "batch": "tickets per episode, one decision each (default 1)",
        "max_candidates": "candidate cap N (default: the number of queues)",
        "max_steps": "step limit (default: batch)",
    }

    def __init__(
        self,
        *,
        tickets: str | None = None,
        text_column: str = "text",
        label_column: str = "queue",
        queues: Sequence[str] | None = None,
        batch: int = 1,
        max_candidates: int | None = None,
        max_steps: int | None = None,
        render_mode: str | None = None,
    ) -> None:
        super().__init__(
            data=str(tickets) if tickets is not None else str(packaged("tickets.csv")),
            text_column=text_column,
            label_column=label_column,
            labels=queues,
            batch=batch,
            what="tickets",
            max_candidates=max_candidates,
            max_steps=max_steps,
            render_mode=render_mode,
        )

    def rule_action(self) -> str:
        """The keyword router's queue for the current ticket (no knowledge of the label)."""
        return keyword_route(self._current_item().text, self.labels)

    @classmethod
    def summarize_episodes(cls, final_infos: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """Accuracy (95 % bootstrap interval) and the confusion matrix ``{true: {predicted: count}}``."""
        pairs = _revealed(final_infos, cls.reveal_key)
        if not pairs:
            return {"decisions": 0}
        correct = np.array([p == t for p, t in pairs], dtype=np.float64)
        queues = sorted({q for pair in pairs for q in pair})
        confusion = {t: {p: 0 for p in queues} for t in queues}
        for p, t in pairs:
            confusion[t][p] += 1
        return {
            "decisions": len(pairs),
            "accuracy": float(correct.mean()),
            "accuracy_ci95": bootstrap_interval(correct, lambda s: s.mean(axis=1)),
            "confusion": confusion,
        }


# --------------------------------------------------------------- baseline
#: The keyword router's table: queue name (lower case) -> regex fragments matched at a
#: word start, case-insensitively. Each matching fragment scores 1 + its number of
#: spaces (phrases beat single words); the queue with the highest score wins, ties and
#: no match go to the first queue in candidate order. A queue missing from the table
#: uses the words of its own name. It covers the shipped queues and Bitext's 11
#: categories; the words come from the queue/intent names, not from fitting a data set.
KEYWORDS: dict[str, tuple[str, ...]] = {
    "account": ("account", "password", "log ?in", "sign ?(in|up)", "regist", "username", "profile", "user"),
    "billing": (
        "bill",
        "charg",
        "invoice",
        "payment",
        "credit card",
        "subscription",
        "discount",
        "price",
        "vat",
    ),
    "delivery": (
        "deliver",
        "parcel",
        "package",
        "ship",
        "courier",
        "track",
        "arriv",
        "transit",
        "how long",
        "how soon",
    ),
    "returns": (
        "return",
        "refund",
        "exchange",
        "send (it )?back",
        "replacement",
        "broken",
        "damaged",
        "too (small|big|large)",
        "wrong (size|colou?r|item)",
    ),
    "technical": (
        "app\\b",
        "crash",
        "error",
        "bug",
        "website",
        "page",
        "load",
        "sync",
        "update",
        "notification",
        "upload",
        "browser",
        "not working",
        "doesn't work",
        "two-factor",
    ),
    "order": ("order", "purchase", "buy", "bought", "cart", "item"),
    "refund": ("refund", "reimburs", "money back", "compensat"),
    "invoice": ("invoice", "bill", "receipt"),
    "feedback": ("complain", "complaint", "review", "feedback", "opinion", "dissatisf", "unhappy", "claim"),
    "payment": ("pay", "card", "paypal", "payment method", "payment (issue|problem)"),
    "contact": (
        "customer (service|support)",
        "agent",
        "human",
        "representative",
        "contact",
        "speak",
        "talk",
        "call",
        "phone",
        "someone",
        "operator",
        "assistance",
    ),
    "shipping_address": ("address", "shipping address", "delivery address", "ship to"),
    "cancellation_fee": (
        "cancellation (fee|charge|penalt)",
        "fee",
        "penalt",
        "early termination",
        "termination (fee|charge)",
    ),
    "newsletter": ("newsletter", "subscri", "unsubscri", "mailing list", "e-?mails? (list|updates)"),
}


def keyword_route(text: str, queues: Sequence[str]) -> str:
    """The keyword router: the queue whose :data:`KEYWORDS` match ``text`` best."""
    best, best_score = queues[0], 0
    for queue in queues:
        score = sum(w for pattern, w in _patterns(queue) if pattern.search(text))
        if score > best_score:
            best, best_score = queue, score
    return best


@lru_cache(maxsize=256)
def _patterns(queue: str) -> tuple[tuple[re.Pattern[str], int], ...]:
    name = queue.lower()
    fragments = KEYWORDS.get(name) or tuple(w for w in re.split(r"[\s_\-/]+", name) if w)
    return tuple((re.compile(r"\b(?:" + f + ")", re.IGNORECASE), 1 + f.count(" ")) for f in fragments)


# ---------------------------------------------------------------- helpers
def bootstrap_interval(sample: np.ndarray, statistic: Callable[[np.ndarray], np.ndarray]) -> list[float]:
    """95 % percentile bootstrap interval of a task metric (:func:`s1gym.stats.bootstrap_interval`)."""
    return list(stats.bootstrap_interval(sample, statistic, n_resamples=BOOTSTRAP_RESAMPLES, seed=BOOTSTRAP_SEED))


def _revealed(final_infos: Sequence[Mapping[str, Any]], key: str) -> list[tuple[str, str]]:
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
