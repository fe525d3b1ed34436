"""Chat's HTTP side: one request with its retries, the driver that runs it, and what a status means.

A decision or a plan is a conversation of :data:`Step` s (see :mod:`s1gym.policies.chat`): the
conversation asks its driver to post a body or to sleep, and :meth:`ChatHTTP._attempts` turns one
request into those steps, retries included. One ``httpx.Client`` a policy serves every request, from
any thread (``decide_many`` runs decisions on a thread pool), over kept-alive connections. Failures become typed :mod:`s1gym.policies.errors` errors: 401/403 auth, 429 rate limit
(with the server's ``retry-after``), 5xx server, other 4xx request errors, timeouts and connection
errors; a 400 about logprobs (or llama-cpp-python's 500 "logprobs is not supported for models created with
logits_all=False") switches them off and resends without counting as a retry.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

from s1gym.policies import errors
from s1gym.policies.common import Secret
from s1gym.policies.errors import redact

__all__ = ["RETRY_STATUSES", "ChatHTTP", "Exchange", "Step"]

RETRY_STATUSES = frozenset({408, 409, 429, *range(500, 600)})
#: What a conversation asks its driver for: ``("post", body)`` -> ``(response, transport error)``, or
#: ``("sleep", seconds)`` -> ``None``. :meth:`ChatHTTP._drive` is the only code that does I/O.
Step = tuple[str, Any]
Exchange = Generator[Step, Any, Any]


class ChatHTTP:
    """The requests of :class:`~s1gym.policies.chat.Chat`, which sets the attributes read here
    (``base_url``, ``model``, ``timeout``, ``max_retries``, ``backoff_*``, ``logprobs``, ``_key``, ``_client``)."""

    base_url: str
    model: str
    timeout: float
    max_retries: int
    backoff_initial: float
    backoff_max: float
    logprobs: bool
    _key: Secret
    _client: Any
    #: guards the making of a policy's client (one lock for the class: a policy stays picklable)
    _client_lock = threading.Lock()

    @property
    def url(self) -> str:
        return self.base_url + "/chat/completions"

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._key.get():
            headers["Authorization"] = f"Bearer {self._key.get()}"
        return headers

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def _attempts(self, body: dict[str, Any]) -> Exchange:
        """One request with its retries, as :data:`Step` s; returns ``(json, latency)`` or raises typed."""
        started = time.perf_counter()
        attempt = 0
        while True:
            response, failure = yield ("post", body)
            kind, value = self._judge(body, response, failure, attempt)
            if kind == "done":
                return value, time.perf_counter() - started
            if kind == "resend":
                body = value
                continue
            yield ("sleep", self._delay(attempt, response))
            attempt += 1

    def _http(self) -> Any:
        """This policy's ``httpx.Client`` (made on first use; thread-safe, its connections kept alive)."""
        import httpx

        with self._client_lock:
            if self._client is None:
                self._client = httpx.Client(timeout=self.timeout)
            return self._client

    def _drive(self, steps: Exchange) -> Any:
        """Runs a conversation on the blocking client; returns what it returns."""
        import httpx

        client = self._http()
        reply: Any = None
        while True:
            try:
                op, arg = steps.send(reply)
            except StopIteration as stop:
                return stop.value
            if op == "sleep":
                time.sleep(arg)
                reply = None
                continue
            try:
                reply = (client.post(self.url, json=arg, headers=self._headers()), None)
            except httpx.TransportError as exc:
                reply = (None, exc)

    def _judge(self, body: dict[str, Any], response: Any, failure: Exception | None, attempt: int) -> tuple[str, Any]:
        """What one attempt means: ``("done", reply)``, ``("resend", body)`` or ``("retry", None)``; raises when final."""
        import httpx

        if failure is not None:
            if isinstance(failure, httpx.TimeoutException):
                error: errors.PolicyError = errors.PolicyTimeoutError(
                    f"Chat ({self.url}): request timed out after {self.timeout} s")
            else:
                error = errors.PolicyConnectionError(self._redact(f"Chat ({self.url}): connection failed: {failure}"))
        else:
            outcome = self._outcome(response, body)
            if isinstance(outcome, _Resend):
                return "resend", outcome.body
            if not isinstance(outcome, errors.PolicyError):
                return "done", outcome
            error = outcome
            if response.status_code not in RETRY_STATUSES:
                raise error
        if attempt >= self.max_retries:
            raise self._exhausted(error)
        return "retry", None

    def _outcome(self, response: Any, body: dict[str, Any]) -> dict[str, Any] | _Resend | errors.PolicyError:
        """The JSON of a 200, a body to resend without logprobs, or the error of the status."""
        status = response.status_code
        if status == 200:
            try:
                data = response.json()
            except ValueError:
                return errors.PolicyResponseError(f"Chat ({self.url}): the 200 response is not JSON: {response.text[:200]!r}")
            if not isinstance(data, dict):
                return errors.PolicyResponseError(f"Chat ({self.url}): the response is not a JSON object")
            return data
        text = self._redact(response.text[:300])
        lowered = response.text.lower()
        # a 400 about logprobs, or llama-cpp-python's 500 when started with --logits_all False (it cannot
        # compute them then): ask again without them
        about_logprobs = "logprobs" in body and "logprob" in lowered
        if about_logprobs and (status == 400 or (status == 500 and "logits_all" in lowered)):
            top = getattr(self, "top_logprobs", 0)
            if status == 400 and body.get("top_logprobs", 0) > top:  # more than the server lists: the asked number
                return _Resend({**body, "top_logprobs": top})
            self.logprobs = False  # the server does not do logprobs; stop asking
            return _Resend({k: v for k, v in body.items() if k not in ("logprobs", "top_logprobs")})
        where = f"Chat ({self.url}): HTTP {status}: {text}"
        if status in (401, 403):
            return errors.PolicyAuthError(where + " (check OPENAI_API_KEY / OPENROUTER_API_KEY)")
        if status == 429:
            return errors.PolicyRateLimitError(where, _retry_after(response))
        if status in RETRY_STATUSES:
            return errors.PolicyServerError(where)
        return errors.PolicyRequestError(where + f" (is MODEL_NAME={self.model!r} right?)")

    def _exhausted(self, error: errors.PolicyError) -> errors.PolicyError:
        kind = type(error)
        message = f"{error} (after {self.max_retries} retries)"
        if isinstance(error, errors.PolicyRateLimitError):
            return errors.PolicyRateLimitError(message, error.retry_after_s)
        return kind(message)

    def _delay(self, attempt: int, response: Any) -> float:
        hinted = _retry_after(response) if response is not None else None
        if hinted is not None:
            return min(hinted, 60.0)
        return min(self.backoff_max, self.backoff_initial * 2**attempt)

    def _redact(self, text: str) -> str:
        return redact(text, [self._key.get()])


@dataclass(frozen=True)
class _Resend:
    """Send this body instead (the server rejected logprobs); not counted as a retry."""

    body: dict[str, Any]


def _retry_after(response: Any) -> float | None:
    """Seconds from ``retry-after-ms`` or ``retry-after`` (seconds), when valid."""
    for name, scale in (("retry-after-ms", 1e-3), ("retry-after", 1.0)):
        raw = response.headers.get(name)
        if raw is None:
            continue
        try:
            value = float(raw)
        except ValueError:
            continue
        if math.isfinite(value) and value >= 0:
            return value * scale
    return None
