"""s1/TicketRouter-v0: route customer-support tickets to queues.

Each episode shows ``batch`` tickets (default 1), one at a time; the move is a
queue name. The queues are fixed action slots in the order of the ``queues``
option, else the labels of the data sorted, so N = the number of queues and
depends on the data set (5 for the shipped set, 11 for Bitext).

Scoring, episodes, what is revealed when (``info["routed"]``: ``[predicted,
true]`` pairs once the episode is over) and why Lookahead and Search are
oracles here: :mod:`s1gym.tasks.text.labelled`. :meth:`TicketRouterEnv.summarize_episodes`
turns the pairs into accuracy and a per-queue confusion matrix.

``Rule`` is the keyword router :func:`keyword_route` (table :data:`KEYWORDS`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np

from s1gym.tasks.text.labelled import LabelledTextEnv, bootstrap_interval, revealed_pairs

__all__ = ["KEYWORDS", "TicketRouterEnv", "keyword_route"]


class TicketRouterEnv(LabelledTextEnv):
    """Route support tickets to queues; see the module docstring."""

    task_name = "TicketRouter"
    default_max_candidates = 5
    reveal_key = "routed"
    data_file = "tickets.csv"
    what = "tickets"
    intro = "Route this customer-support ticket to the queue that should handle it."
    noun = "Ticket"
    verb = "routed to"
    done_text = "Every ticket is routed."
    option_help: ClassVar[Mapping[str, str]] = {
        "tickets": "CSV or JSONL file of tickets (default: the 30 shipped tickets over 5 queues)",
        "text_column": "column with the ticket text (default 'text'; Bitext: 'instruction')",
        "label_column": "column with the queue (default 'queue'; Bitext: 'category')",
        "queues": "queue names in candidate order; other labels are an error (default: the sorted labels)",
        **LabelledTextEnv.shared_help("tickets"),
    }

    def __init__(
        self,
        *,
        tickets: str | None = None,
        label_column: str = "queue",
        queues: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> None:
        """The other options (``text_column``, ``batch``, ``max_steps``, ...): :class:`LabelledTextEnv`."""
        super().__init__(data=tickets, label_column=label_column, labels=queues, **kwargs)

    def rule_action(self) -> str:
        """The keyword router's queue for the current ticket (no knowledge of the label)."""
        return keyword_route(self._current_item().text, self.labels)

    @classmethod
    def summarize_episodes(cls, final_infos: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """Accuracy (95 % bootstrap interval) and the confusion matrix ``{true: {predicted: count}}``."""
        pairs = revealed_pairs(final_infos, cls.reveal_key)
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
