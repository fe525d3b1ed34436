"""Jev: TypeSafe's System One API through the official ``typesafe-sdk``.

One request per decision. The ``state`` is a JSON object with the task, the
observation (without the trailing ``Moves:`` list, which the question already
carries), the recent history and the notes; the one ``Choice`` question's
criteria labels are the candidate texts, and a label's description carries the
lookahead outcome and new moves when a :class:`~s1gym.wrappers.Lookahead`
filled them in. Labels are JSON object keys, so repeated candidate texts are
made unique (``"wait (2)"``) and mapped back by position.

Configuration: ``TYPESAFE_API_KEY``, ``TYPESAFE_BASE_URL``,
``TYPESAFE_DEFAULT_MODEL`` or the matching arguments. Without a key, the
constructor raises :class:`PolicyConfigError` naming ``TYPESAFE_API_KEY``,
except when the base URL is on loopback (a local ``s1 serve``, which accepts
any key): then a placeholder key is sent.

Retries (401 is not retried; 408/429/5xx, timeouts and connection errors are)
follow the SDK's :class:`typesafe_sdk.RetryPolicy` (pass ``retry=`` to change
it); what still fails becomes a typed :mod:`s1gym.policies.errors` error.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from s1gym.core import BasePolicy, Decision, Situation, Usage
from s1gym.policies import errors
from s1gym.policies.common import (
    Secret,
    check_probabilities,
    describe_candidate,
    gather_bounded,
    history_lines,
    is_loopback,
    require_candidates,
    run_sync,
    unique_labels,
)
from s1gym.policies.errors import redact

if TYPE_CHECKING:
    from typesafe_sdk import RetryPolicy, SystemOneResponse

__all__ = ["DEFAULT_INSTRUCTIONS", "Jev", "LOCAL_PLACEHOLDER_KEY", "QUESTION"]

API_KEY_ENV = "TYPESAFE_API_KEY"
BASE_URL_ENV = "TYPESAFE_BASE_URL"
MODEL_ENV = "TYPESAFE_DEFAULT_MODEL"
#: Sent to a loopback server when no key is configured (``s1 serve`` accepts any key).
LOCAL_PLACEHOLDER_KEY = "s1gym-local"
#: The name of the one question in every request (and of its answer).
QUESTION = "move"
DEFAULT_INSTRUCTIONS = (
    "You are playing the task in the state. Choose the move that makes the most progress "
    "toward completing the task from the current observation. Criteria descriptions, when "
    "present, show what would happen after each move."
)
#: USD per million input tokens (TypeSafe's price for Jev; output tokens are free).
DEFAULT_INPUT_PRICE = 0.042


class Jev(BasePolicy):
    """TypeSafe's Jev as a decision model (see the module docstring).

    Args:
        model: Model name (default ``TYPESAFE_DEFAULT_MODEL``, else the SDK's ``jev-latest``).
        api_key: API key (default ``TYPESAFE_API_KEY``); never shown in reprs or errors.
        base_url: API root (default ``TYPESAFE_BASE_URL``, else ``https://api.typesafe.ai``).
        input_price_per_million / output_price_per_million: USD per million tokens for ``Usage.cost_usd``.
        timeout: Seconds per HTTP attempt (SDK default 10).
        retry: A :class:`typesafe_sdk.RetryPolicy` (SDK default: 2 retries, 30 s budget).
        max_concurrency: Requests in flight in :meth:`decide_many`.
        history_limit: Last moves sent in the state (``None``: all). The observation is
            already the whole state, so the history only adds context and tokens.
        instructions: The Choice question's instructions.
    """

    name = "jev"

    def __init__(
        self,
        model: str | None = None,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        input_price_per_million: float = DEFAULT_INPUT_PRICE,
        output_price_per_million: float = 0.0,
        timeout: float | None = None,
        retry: RetryPolicy | None = None,
        max_concurrency: int = 8,
        history_limit: int | None = 10,
        instructions: str = DEFAULT_INSTRUCTIONS,
        compression: Any = None,
    ) -> None:
        try:
            import typesafe_sdk
        except ImportError as error:  # pragma: no cover - a core dependency
            raise errors.PolicyConfigError("Jev needs the `typesafe-sdk` package: pip install typesafe-sdk") from error
        from typesafe_sdk.constants import DEFAULT_BASE_URL

        self.base_url = (base_url or os.environ.get(BASE_URL_ENV, "").strip() or DEFAULT_BASE_URL).rstrip("/")
        key = api_key if api_key is not None else os.environ.get(API_KEY_ENV, "").strip()
        if not key:
            if not is_loopback(self.base_url):
                raise errors.PolicyConfigError(
                    f"Jev needs a TypeSafe API key: set {API_KEY_ENV} (or pass Jev(api_key=...)). "
                    f"To play offline against a local `s1 serve`, set {BASE_URL_ENV}=http://127.0.0.1:8765 instead."
                )
            key = LOCAL_PLACEHOLDER_KEY
        self._key = Secret(key)
        self.model = model or os.environ.get(MODEL_ENV, "").strip() or None
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency}")
        for label, price in (("input", input_price_per_million), ("output", output_price_per_million)):
            if not price >= 0:
                raise ValueError(f"{label}_price_per_million must be >= 0, got {price}")
        self.input_price_per_million = float(input_price_per_million)
        self.output_price_per_million = float(output_price_per_million)
        self.max_concurrency = int(max_concurrency)
        self.history_limit = history_limit
        self.instructions = instructions
        self._client_options = {"timeout": timeout, "retry": retry, "compression": compression}
        try:
            self._client = typesafe_sdk.TypeSafeClient(**self._sdk_options())
        except typesafe_sdk.TypeSafeError as error:
            raise errors.PolicyConfigError(f"Jev: {redact(str(error), [key])}") from None

    def _sdk_options(self) -> dict[str, Any]:
        return {
            "api_key": self._key.get(),
            "base_url": self.base_url,
            "model": self.model,
            **self._client_options,
        }

    def __repr__(self) -> str:
        return f"Jev(model={self.model or 'jev-latest'!r}, base_url={self.base_url!r})"

    def options(self) -> dict[str, Any]:
        return {"model": self.model or "jev-latest", "base_url": self.base_url}

    def sampling(self) -> dict[str, Any]:
        """What a rerun needs to ask the same way (a job's ``pins.policy``): the model, the history kept
        and the SHA-256 of the instructions; never the key."""
        return {"model": self.model or "jev-latest", "history_limit": self.history_limit,
                "instructions_sha256": hashlib.sha256(self.instructions.encode("utf-8")).hexdigest()}

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> Jev:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ request
    def request(self, situation: Situation) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
        """The ``state``, ``questions`` and labels sent for ``situation`` (public for tests and docs)."""
        from typesafe_sdk import Choice

        require_candidates(situation, self.name)
        labels = unique_labels(situation.texts)
        criteria = {label: describe_candidate(c) for label, c in zip(labels, situation.candidates)}
        state: dict[str, Any] = {
            "task": situation.task,
            "observation": situation.state_text,
            "history": [
                {"move": move, "feedback": feedback} for move, feedback in history_lines(situation, self.history_limit)
            ],
            "notes": list(situation.notes),
        }
        questions = {QUESTION: Choice(instructions=self.instructions, criteria=criteria)}
        return state, questions, labels

    def _decision(self, response: SystemOneResponse, labels: Sequence[str], latency: float) -> Decision:
        answer = response.choices.get(QUESTION)
        if answer is None:
            raise errors.PolicyResponseError(f"Jev: the response has no choice answer named {QUESTION!r}")
        probabilities, renormalised = check_probabilities(labels, answer.probabilities, "Jev")
        usage_in = response.usage.input_tokens or 0
        usage_out = response.usage.output_tokens or 0
        usage = Usage(
            calls=1,
            input_tokens=usage_in,
            output_tokens=usage_out,
            cost_usd=(usage_in * self.input_price_per_million + usage_out * self.output_price_per_million) / 1e6,
            latency_s=latency,
        )
        info: dict[str, Any] = {
            "policy": self.name,
            "model": response.model,
            "confidence": answer.confidence,
            "renormalised": renormalised,
        }
        return Decision.from_probabilities(probabilities, usage, info)

    # ----------------------------------------------------------- decisions
    def decide(self, situation: Situation) -> Decision:
        state, questions, labels = self.request(situation)
        started = time.perf_counter()
        try:
            response = self._client.system_one(state=state, questions=questions)
        except Exception as error:
            raise self._translate(error) from None
        return self._decision(response, labels, time.perf_counter() - started)

    def decide_many(self, situations: Sequence[Situation]) -> list[Decision]:
        """Decisions for many situations, at most ``max_concurrency`` requests in flight."""
        situations = list(situations)
        if len(situations) <= 1 or self.max_concurrency == 1:
            return [self.decide(s) for s in situations]
        return run_sync(lambda: self._decide_many_async(situations))

    async def _decide_many_async(self, situations: Sequence[Situation]) -> list[Decision]:
        from typesafe_sdk import AsyncTypeSafeClient

        async with AsyncTypeSafeClient(**self._sdk_options()) as client:

            async def one(situation: Situation) -> Decision:
                state, questions, labels = self.request(situation)
                started = time.perf_counter()
                try:
                    response = await client.system_one(state=state, questions=questions)
                except Exception as error:
                    raise self._translate(error) from None
                return self._decision(response, labels, time.perf_counter() - started)

            return await gather_bounded(situations, one, self.max_concurrency)

    # -------------------------------------------------------------- errors
    def _translate(self, error: BaseException) -> BaseException:
        """A typed, key-free :mod:`s1gym.policies.errors` error for an SDK failure."""
        import typesafe_sdk as ts

        if not isinstance(error, ts.TypeSafeError):
            return error
        where = f"Jev ({self.base_url})"
        message = redact(f"{where}: {type(error).__name__}: {error}", [self._key.get()])
        if isinstance(error, ts.TypeSafeAPITimeoutError):
            return errors.PolicyTimeoutError(message + " (after the SDK's retries; raise timeout= or retry=)")
        if isinstance(error, ts.TypeSafeAPIConnectionError):
            return errors.PolicyConnectionError(message + " (after the SDK's retries; is the server up?)")
        if isinstance(error, ts.TypeSafeAPIResponseValidationError):
            return errors.PolicyResponseError(message)
        if isinstance(error, (ts.TypeSafeAuthenticationError, ts.TypeSafePermissionDeniedError)):
            return errors.PolicyAuthError(message + f" (check {API_KEY_ENV})")
        if isinstance(error, ts.TypeSafeRateLimitError):
            after = None if error.retry_after_ms is None else error.retry_after_ms / 1000
            return errors.PolicyRateLimitError(message + " (still rate limited after the SDK's retries)", after)
        if isinstance(error, ts.TypeSafeInternalServerError):
            return errors.PolicyServerError(message + " (after the SDK's retries)")
        if isinstance(error, ts.TypeSafeAPIError):
            return errors.PolicyRequestError(message)
        return errors.PolicyError(message)

