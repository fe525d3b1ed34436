"""Chat: any OpenAI-compatible ``/v1/chat/completions`` endpoint as a decision model.

The model sees the task, notes, recent moves, the observation and a numbered
list of the candidates (with lookahead outcomes when present), and is asked for
one option number. When the server returns ``logprobs``/``top_logprobs``, the
probabilities come from the answer tokens' distributions over the option
numbers; otherwise the decision is one-hot on the parsed number. A reply that names no
offered option is retried once with a reminder, then falls back to flat odds,
recorded in ``Decision.info["invalid_replies"]`` -- a bad *reply* never ends
an episode. Transport failures (401, 429/5xx after retries, timeouts) raise
typed :mod:`s1gym.policies.errors` errors, which the runner records.

Configuration: ``OPENAI_BASE_URL`` (an API root ending in ``/v1``),
``OPENAI_API_KEY`` and ``MODEL_NAME``, or OpenRouter through
``OPENROUTER_API_KEY`` (base URL ``https://openrouter.ai/api/v1`` then). A
server on loopback (llama.cpp, vLLM, Ollama) needs no key.

Numbers are read however the tokenizer writes them (one token, a space token
first, or a token per digit as Llama and Gemma do): :mod:`s1gym.policies.chat_reply`
follows the digits through each position's ``top_logprobs``. A decision and a
plan are each one conversation (:meth:`Chat._exchange`, :meth:`Chat._attempts`:
retries included) that a blocking or an async driver runs.
"""

from __future__ import annotations

import asyncio
import math
import os
import time
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from s1gym.core import BasePolicy, Decision, Situation, Usage
from s1gym.policies import errors
from s1gym.policies.chat_reply import parse_option, probabilities_from_logprobs, reply_of, token_count
from s1gym.policies.common import (
    Secret,
    describe_candidate,
    flat_decision,
    gather_bounded,
    history_lines,
    is_loopback,
    require_candidates,
    run_sync,
)
from s1gym.policies.errors import redact

__all__ = ["SYSTEM_PROMPT", "Chat", "probabilities_from_logprobs"]

OPENAI_BASE_URL = "https://api.openai.com/v1"
OPENROUTER_BASE_URL = "https://openrouter.ai/api/v1"
SYSTEM_PROMPT = (
    "You choose the next move in a text-based task. Read the situation and the numbered options, "
    "then reply with the number of the single best option and nothing else."
)
PLANNER_PROMPT = "You are a planner for a text-based task. Answer with a short, concrete plan in plain text."
RETRY_STATUSES = frozenset({408, 409, 429, *range(500, 600)})
#: What a conversation asks its driver for: ``("post", body)`` -> ``(response, transport error)``, or
#: ``("sleep", seconds)`` -> ``None``. The sync and async drivers are the only code that differs.
Step = tuple[str, Any]
Exchange = Generator[Step, Any, Any]


class Chat(BasePolicy):
    """A chat model as a decision model (see the module docstring).

    Args:
        model: Model name (default ``MODEL_NAME``; required).
        base_url: API root (default ``OPENAI_BASE_URL``, OpenRouter's with only
            ``OPENROUTER_API_KEY`` set, else OpenAI's).
        api_key: Key (default ``OPENAI_API_KEY``, then ``OPENROUTER_API_KEY``).
        input_price_per_million / output_price_per_million: USD per million tokens.
        logprobs / top_logprobs: ask for token log-probabilities (switched off for
            the rest of the run when the server rejects them with a 400).
        max_retries: retries of 408/409/429/5xx, timeouts and connection errors,
            with exponential backoff (``backoff_initial`` doubling up to
            ``backoff_max``) or the server's ``retry-after``.
        max_concurrency: Requests in flight in :meth:`decide_many`.
    """

    name = "chat"

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        input_price_per_million: float = 0.0,
        output_price_per_million: float = 0.0,
        temperature: float = 0.0,
        logprobs: bool = True,
        top_logprobs: int = 20,
        max_tokens: int = 8,
        timeout: float = 60.0,
        max_retries: int = 2,
        backoff_initial: float = 0.5,
        backoff_max: float = 8.0,
        max_concurrency: int = 8,
        history_limit: int | None = 8,
        plan_max_tokens: int = 300,
        system_prompt: str = SYSTEM_PROMPT,
        extra_body: Mapping[str, Any] | None = None,
    ) -> None:
        openai_key = os.environ.get("OPENAI_API_KEY", "").strip()
        router_key = os.environ.get("OPENROUTER_API_KEY", "").strip()
        default_base = OPENROUTER_BASE_URL if router_key and not openai_key else OPENAI_BASE_URL
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL", "").strip() or default_base).rstrip("/")
        key = api_key if api_key is not None else (openai_key or router_key)
        if not key and not is_loopback(self.base_url):
            raise errors.PolicyConfigError(
                f"Chat needs an API key for {self.base_url}: set OPENAI_API_KEY (or OPENROUTER_API_KEY "
                "for OpenRouter), or pass Chat(api_key=...). Servers on 127.0.0.1/localhost need none."
            )
        self._key = Secret(key or "")
        self.model = model or os.environ.get("MODEL_NAME", "").strip()
        if not self.model:
            raise errors.PolicyConfigError("Chat needs a model name: set MODEL_NAME or pass Chat(model=...)")
        if max_concurrency < 1 or max_retries < 0 or max_tokens < 1 or not timeout > 0:
            raise ValueError("Chat: max_concurrency >= 1, max_retries >= 0, max_tokens >= 1 and timeout > 0 are required")
        self.input_price_per_million = float(input_price_per_million)
        self.output_price_per_million = float(output_price_per_million)
        self.temperature = float(temperature)
        self.logprobs = bool(logprobs)
        self.top_logprobs = int(top_logprobs)
        self.max_tokens = int(max_tokens)
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.backoff_initial = float(backoff_initial)
        self.backoff_max = float(backoff_max)
        self.max_concurrency = int(max_concurrency)
        self.history_limit = history_limit
        self.plan_max_tokens = int(plan_max_tokens)
        self.system_prompt = system_prompt
        self.extra_body = dict(extra_body or {})
        self._client: Any = None

    def __repr__(self) -> str:
        return f"Chat(model={self.model!r}, base_url={self.base_url!r})"

    def options(self) -> dict[str, Any]:
        return {"model": self.model, "base_url": self.base_url}

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

    # ------------------------------------------------------------ prompts
    def messages(self, situation: Situation) -> list[dict[str, str]]:
        """The chat messages asking for one option number."""
        n = require_candidates(situation, self.name)
        lines = [f"Task: {situation.task}"]
        if situation.notes:
            lines += ["Notes:", *(f"- {note}" for note in situation.notes)]
        recent = history_lines(situation, self.history_limit)
        if recent:
            lines.append("Recent moves:")
            for move, feedback in recent:
                short = " ".join(feedback.split())
                lines.append(f"> {move}: {short[:300]}{'...' if len(short) > 300 else ''}")
        lines += ["", "Current situation:", situation.state_text.strip(), "", "Options:"]
        for i, candidate in enumerate(situation.candidates, 1):
            lines.append(f"{i}. {candidate.text}")
            extra = describe_candidate(candidate)
            if extra:
                lines += [f"   {line}" for line in extra.splitlines()]
        lines += ["", f"Reply with one number from 1 to {n}."]
        return [{"role": "system", "content": self.system_prompt}, {"role": "user", "content": "\n".join(lines)}]

    def _body(self, messages: list[dict[str, str]], max_tokens: int, logprobs: bool) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "max_tokens": max_tokens,
            **self.extra_body,
        }
        if logprobs and self.logprobs:
            body.update(logprobs=True, top_logprobs=self.top_logprobs)
        return body

    # ---------------------------------------------------------- decisions
    def _exchange(self, situation: Situation) -> Exchange:
        """The decision as a conversation of :data:`Step` s (returns the Decision).

        Written once as a generator so the sync and async drivers share it, retries included.
        """
        n = require_candidates(situation, self.name)
        messages = self.messages(situation)
        usage = Usage()
        replies: list[str] = []
        notes: dict[str, Any] = {}
        for _attempt in range(2):
            data, latency = yield from self._attempts(self._body(messages, self.max_tokens, logprobs=True))
            usage = usage + self._usage(data, latency)
            content, token_logprobs, finish = reply_of(data)
            if not isinstance(data.get("usage"), Mapping):
                notes["usage_missing"] = True  # the server reported no token counts: tokens and cost read 0
            if finish == "length":
                notes["cut_by_max_tokens"] = notes.get("cut_by_max_tokens", 0) + 1
            index = parse_option(content, situation.texts)
            if index is not None:
                probabilities, source = probabilities_from_logprobs(token_logprobs, content, index, n)
                info = {"policy": self.name, "model": data.get("model", self.model), "reply": content,
                        "probabilities_from": source, **notes}
                if replies:
                    info["invalid_replies"] = replies
                return Decision(probabilities, int(np.argmax(probabilities)), usage, info)
            replies.append(content)
            messages = [
                *messages,
                {"role": "assistant", "content": content},
                {"role": "user", "content": f"That is not one of the options. Reply with one number from 1 to {n}."},
            ]
        return flat_decision(n, usage, {"policy": self.name, "invalid_replies": replies, "fallback": "flat odds",
                                        **notes})

    def _usage(self, data: Mapping[str, Any], latency: float) -> Usage:
        raw = data.get("usage") if isinstance(data.get("usage"), Mapping) else {}
        tokens_in, tokens_out = token_count(raw.get("prompt_tokens")), token_count(raw.get("completion_tokens"))
        cost = (tokens_in * self.input_price_per_million + tokens_out * self.output_price_per_million) / 1e6
        return Usage(calls=1, input_tokens=tokens_in, output_tokens=tokens_out, cost_usd=cost, latency_s=latency)

    def decide(self, situation: Situation) -> Decision:
        return self._drive(self._exchange(situation))

    def decide_many(self, situations: Sequence[Situation]) -> list[Decision]:
        """Decisions for many situations, at most ``max_concurrency`` requests in flight."""
        situations = list(situations)
        if len(situations) <= 1 or self.max_concurrency == 1:
            return [self.decide(s) for s in situations]
        return run_sync(lambda: self._decide_many_async(situations))

    async def _decide_many_async(self, situations: Sequence[Situation]) -> list[Decision]:
        import httpx

        async with httpx.AsyncClient(timeout=self.timeout) as client:

            async def one(situation: Situation) -> Decision:
                return await self._drive_async(client, self._exchange(situation))

            return await gather_bounded(situations, one, self.max_concurrency)

    # ------------------------------------------------------------ planner
    def plan_with_usage(self, situation: Situation, prompt: str) -> tuple[str, Usage]:
        """A free-text completion for Rethink's planner, with what it cost."""
        lines = [prompt.strip(), "", f"Task: {situation.task}"]
        lines += [f"Note: {note}" for note in situation.notes]
        recent = history_lines(situation, self.history_limit)
        if recent:
            lines.append("Recent moves: " + "; ".join(move for move, _ in recent))
        lines += ["", situation.state_text.strip()]
        if situation.candidates:
            lines += ["", "Available moves: " + ", ".join(situation.texts)]
        messages = [{"role": "system", "content": PLANNER_PROMPT}, {"role": "user", "content": "\n".join(lines)}]
        data, latency = self._drive(self._attempts(self._body(messages, self.plan_max_tokens, logprobs=False)))
        content, _, finish = reply_of(data)
        #: whether the last plan was cut by ``plan_max_tokens`` (the text is what the server sent)
        self.last_plan_cut = finish == "length"
        return content.strip(), self._usage(data, latency)

    def plan(self, situation: Situation, prompt: str) -> str:
        """A free-text plan (Rethink's planner interface); usage in ``last_plan_usage``, and
        ``last_plan_cut`` says whether ``plan_max_tokens`` cut it."""
        text, self.last_plan_usage = self.plan_with_usage(situation, prompt)
        return text

    # --------------------------------------------------------------- HTTP
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

    def _drive(self, steps: Exchange) -> Any:
        """Runs a conversation on the blocking client; returns what it returns."""
        import httpx

        if self._client is None:
            self._client = httpx.Client(timeout=self.timeout)
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
                reply = (self._client.post(self.url, json=arg, headers=self._headers()), None)
            except httpx.TransportError as exc:
                reply = (None, exc)

    async def _drive_async(self, client: Any, steps: Exchange) -> Any:
        """:meth:`_drive` on an ``httpx.AsyncClient``."""
        import httpx

        reply: Any = None
        while True:
            try:
                op, arg = steps.send(reply)
            except StopIteration as stop:
                return stop.value
            if op == "sleep":
                await asyncio.sleep(arg)
                reply = None
                continue
            try:
                reply = (await client.post(self.url, json=arg, headers=self._headers()), None)
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
        if status == 400 and "logprobs" in body and "logprob" in response.text.lower():
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
