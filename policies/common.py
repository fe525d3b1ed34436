"""Helpers shared by the decision models: labels, probability checks, secrets, async.

Kept free of heavy imports so ``import s1gym.policies`` stays fast.
"""

from __future__ import annotations

import asyncio
import ipaddress
import math
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar
from urllib.parse import urlsplit

import numpy as np

from s1gym.core import Candidate, Decision, Situation, Usage
from s1gym.policies.errors import PolicyResponseError

T = TypeVar("T")


class Secret:
    """A string that never shows itself in ``repr``/``str``/logs (API keys)."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def get(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __reduce__(self) -> Any:  # never pickle a key into a job folder or a Ray worker by accident
        raise TypeError("a Secret (API key) cannot be pickled; pass the key through the environment")


def is_loopback(url: str) -> bool:
    """True when ``url`` points at this machine (a local ``s1 serve`` or a local LLM server)."""
    host = urlsplit(url if "//" in url else f"//{url}").hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def unique_labels(texts: Sequence[str]) -> list[str]:
    """One distinct label per candidate, in order.

    Wire formats key answers by label (a JSON object), so two candidates with
    the same text would collapse into one. Repeats get `` (2)``, `` (3)``...,
    skipping any suffix that is itself a candidate's text; an empty text
    becomes ``(empty move)``. Index i of the result always belongs to
    candidate i, which is how answers map back.
    """
    taken = set(texts)
    seen: dict[str, int] = {}
    labels: list[str] = []
    used: set[str] = set()
    for text in texts:
        base = text if text.strip() else "(empty move)"
        if base not in used:
            label = base
        else:
            k = seen.get(base, 1)
            while True:
                k += 1
                label = f"{base} ({k})"
                if label not in taken and label not in used:
                    break
            seen[base] = k
        used.add(label)
        labels.append(label)
    return labels


def describe_candidate(candidate: Candidate, max_new: int = 12) -> str | None:
    """The lookahead text of a candidate (outcome, score change, a return to an earlier state, new moves), or
    ``None`` when it has none."""
    parts = []
    if candidate.outcome:
        parts.append(f"Outcome: {candidate.outcome}")
    if candidate.reward:
        parts.append(f"Score change: {candidate.reward:+.3g}")
    if candidate.revisits:
        times = "once" if candidate.revisits == 1 else f"{candidate.revisits} times"
        parts.append(f"Back to a state this episode was already in ({times})")
    if candidate.new_actions:
        shown = list(candidate.new_actions[:max_new])
        more = len(candidate.new_actions) - len(shown)
        parts.append("New moves: " + ", ".join(shown) + (f" (+{more} more)" if more > 0 else ""))
    return "\n".join(parts) if parts else None


def check_probabilities(
    labels: Sequence[str], answer: Mapping[str, Any], source: str, tolerance: float | None = None
) -> tuple[np.ndarray, bool]:
    """Probabilities in candidate order from a ``label -> probability`` answer.

    Raises :class:`PolicyResponseError` unless the labels are exactly the ones
    sent and every value is a finite number >= 0 whose sum is 1 up to rounding
    (``tolerance``; default 0.01 + 0.0005 per label, i.e. values rounded to
    three decimals). Rounding is renormalised away; the flag says so.
    """
    sent, got = set(labels), set(answer)
    if sent != got:
        missing = sorted(sent - got)
        extra = sorted(got - sent)
        raise PolicyResponseError(
            f"{source}: the answer's labels are not the candidates sent "
            f"(missing {_preview(missing)}, unexpected {_preview(extra)})"
        )
    values = []
    for label in labels:
        v = answer[label]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(float(v)) or v < 0:
            raise PolicyResponseError(
                f"{source}: probability of {label!r} is {v!r}; every probability must be a finite number >= 0"
            )
        values.append(float(v))
    p = np.asarray(values, dtype=np.float64)
    total = float(p.sum())
    tol = 0.01 + 0.0005 * len(labels) if tolerance is None else tolerance
    if not abs(total - 1.0) <= tol:
        raise PolicyResponseError(
            f"{source}: probabilities sum to {total:.6g}, not 1 (tolerance {tol:.3g}); refusing to guess a move"
        )
    return p / total, abs(total - 1.0) > 1e-9


def _preview(items: Sequence[str], limit: int = 5) -> str:
    if not items:
        return "none"
    shown = ", ".join(repr(x) for x in items[:limit])
    return f"[{shown}{', ...' if len(items) > limit else ''}] ({len(items)})"


def flat_decision(n: int, usage: Usage = Usage(), info: Mapping[str, Any] | None = None) -> Decision:
    """Flat odds over ``n`` candidates; picks index 0 (first on ties)."""
    if n <= 0:
        raise ValueError("a decision needs at least one candidate; this situation has none")
    return Decision(np.full(n, 1.0 / n), 0, usage, dict(info or {}))


def require_candidates(situation: Situation, who: str) -> int:
    n = len(situation.candidates)
    if n == 0:
        raise ValueError(f"{who}: situation of task {situation.task!r} has no candidates to choose from")
    return n


def history_lines(situation: Situation, limit: int | None) -> list[tuple[str, str]]:
    history = list(situation.history)
    return history if limit is None else history[-limit:] if limit > 0 else []


def run_sync(factory: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine to completion from sync code, even inside a running loop (Jupyter).

    With a running loop in this thread, the coroutine runs on a fresh loop in
    a helper thread, since a loop cannot be re-entered.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_await(factory))
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(_await(factory))
        except BaseException as error:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = error

    thread = threading.Thread(target=target, name="s1gym-policy-async")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


async def _await(factory: Callable[[], Awaitable[T]]) -> T:
    return await factory()


async def gather_bounded(items: Sequence[Any], worker: Callable[[Any], Awaitable[T]], limit: int) -> list[T]:
    """``worker`` over ``items`` with at most ``limit`` in flight, results in order.

    A TaskGroup cancels the rest on the first failure, so one bad request
    fails the batch quickly instead of waiting out every retry.
    """
    semaphore = asyncio.Semaphore(max(1, int(limit)))
    results: list[Any] = [None] * len(items)

    async def one(i: int, item: Any) -> None:
        async with semaphore:
            results[i] = await worker(item)

    try:
        async with asyncio.TaskGroup() as group:
            for i, item in enumerate(items):
                group.create_task(one(i, item))
    except BaseExceptionGroup as group_error:
        raise _first_leaf(group_error) from None
    return results


def _first_leaf(error: BaseException) -> BaseException:
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    return error
