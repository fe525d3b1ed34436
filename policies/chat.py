"""Chat: any OpenAI-compatible ``/v1/chat/completions`` endpoint as a decision model.

The model sees the task, notes, recent moves, the observation and a numbered
list of the candidates (with lookahead outcomes when present), and is asked for
one option number. The reply is constrained to the option numbers where the server can
(a llama.cpp grammar, vLLM's ``guided_choice``, a JSON schema: :mod:`s1gym.policies.chat_modes`,
detected on the first decision and kept); when the server returns ``logprobs``/``top_logprobs``, the
probabilities come from the answer tokens' distributions over the option numbers (mode ``"logprobs"``),
otherwise the decision is one-hot on the answer (``"choice"``). Free text is the last resort (``"free"``):
a reply that names no offered option is retried once with a reminder, then falls back to flat odds,
recorded in ``Decision.info["invalid_replies"]`` and counted in ``info["invalid"]`` -- a bad *reply*
never ends an episode. Transport failures (401, 429/5xx after retries, timeouts) raise
typed :mod:`s1gym.policies.errors` errors, which the runner records.

Configuration: ``OPENAI_BASE_URL`` (an API root ending in ``/v1``),
``OPENAI_API_KEY`` and ``MODEL_NAME``, or OpenRouter through
``OPENROUTER_API_KEY`` (base URL ``https://openrouter.ai/api/v1`` then). A
server on loopback (llama.cpp, vLLM, Ollama) needs no key.

Numbers are read however the tokenizer writes them (one token, a space token
first, or a token per digit as Llama and Gemma do): :mod:`s1gym.policies.chat_reply`
follows the digits through each position's ``top_logprobs``. A decision and a
plan are each one conversation (:meth:`Chat._exchange`, :meth:`Chat._attempts`:
retries included) that the HTTP driver runs; the requests, the driver and
what each HTTP status means are in :mod:`s1gym.policies.chat_http`.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
from s1gym.policies import errors
from s1gym.policies.chat_http import RETRY_STATUSES as RETRY_STATUSES
from s1gym.policies.chat_http import ChatHTTP, Exchange
from s1gym.policies.chat_http import Step as Step
from s1gym.policies.chat_modes import (
    CONSTRAINTS,
    GRAMMAR_TOP_LOGPROBS,
    ORDER,
    answer_text,
    constraint_body,
    constraint_of_extra_body,
    server_seconds,
)
from s1gym.policies.chat_reply import parse_option, probabilities_from_logprobs, reply_of, token_count
from s1gym.policies.common import (
    Secret,
    describe_candidate,
    flat_decision,
    history_lines,
    is_loopback,
    require_candidates,
)

from s1gym.core import BasePolicy, Decision, Situation, Usage

__all__ = ["SYSTEM_PROMPT", "Chat", "probabilities_from_logprobs"]

OPENAI_BASE_URL = "https://api.openai.com/v1"
OPENROUTER_BASE_URL = "https://openrouter.ai/api/v1"
SYSTEM_PROMPT = (
    "You choose the next move in a text-based task. Read the situation and the numbered options, "
    "then reply with the number of the single best option and nothing else."
)
PLANNER_PROMPT = "You are a planner for a text-based task. Answer with a short, concrete plan in plain text."


class Chat(ChatHTTP, BasePolicy):
    """A chat model as a decision model (see the module docstring); requests, retries and errors in
    :class:`~s1gym.policies.chat_http.ChatHTTP`.

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
        constraint: how the reply is held to the option numbers: ``"auto"`` (the first decision tries
            ``grammar``, ``guided_choice``, ``json_schema``, then ``none`` and keeps the first the server
            honours), or one of those. A constraint set in ``extra_body`` is kept as it is.
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
        constraint: str = "auto",
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
        if constraint not in CONSTRAINTS:
            raise ValueError(f"Chat: constraint must be one of {sorted(CONSTRAINTS)}, not {constraint!r}")
        own = constraint_of_extra_body(self.extra_body)
        self._own_constraint = own is None  # a caller's grammar/guided_choice/response_format is sent as it is
        self.constraint = own or constraint
        #: the constraint in use: None until the first decision has found one (``constraint="auto"``)
        self.detected: str | None = None if self.constraint == "auto" else self.constraint
        self._client: Any = None

    def __repr__(self) -> str:
        return f"Chat(model={self.model!r}, base_url={self.base_url!r})"

    def options(self) -> dict[str, Any]:
        return {"model": self.model, "base_url": self.base_url}

    def sampling(self) -> dict[str, Any]:
        """What a rerun needs to ask the same way (a job's ``pins.policy``): the model, the sampling
        settings and the SHA-256 of the system prompt; never the key."""
        return {"model": self.model, "temperature": self.temperature, "max_tokens": self.max_tokens,
                "logprobs": self.logprobs, "top_logprobs": self.top_logprobs, "history_limit": self.history_limit,
                "constraint": self.constraint,
                "system_prompt_sha256": hashlib.sha256(self.system_prompt.encode("utf-8")).hexdigest(),
                **({"extra_body": dict(self.extra_body)} if self.extra_body else {})}

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

    def _body(self, messages: list[dict[str, str]], max_tokens: int, logprobs: bool, constraint: str = "none",
              n: int = 0) -> dict[str, Any]:
        """One request; ``constraint`` (with ``n`` options) adds the fields that hold the reply to a number.
        The messages come first and are the same whatever the constraint, so llama.cpp's prompt cache
        reuses the prefix the last decision left."""
        fields = constraint_body(constraint, n) if n and self._own_constraint else {}
        if "response_format" in fields:
            max_tokens = max(max_tokens, 16)  # '{"option": 12}' is about eight tokens
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "max_tokens": max_tokens,
            **fields,
            **self.extra_body,
        }
        if logprobs and self.logprobs:
            top = max(self.top_logprobs, GRAMMAR_TOP_LOGPROBS) if "grammar" in fields else self.top_logprobs
            body.update(logprobs=True, top_logprobs=top)
        return body

    # ---------------------------------------------------------- decisions
    def _exchange(self, situation: Situation) -> Exchange:
        """The decision as a conversation of :data:`Step` s (returns the Decision).

        Written as a generator (no I/O of its own: the driver posts and sleeps), retries included. One request
        under the constraint in use; the first decision (``constraint="auto"``) tries :data:`ORDER` until
        the server honours one, then free text.
        """
        n = require_candidates(situation, self.name)
        messages = self.messages(situation)
        usage = Usage()
        notes: dict[str, Any] = {}
        tried: list[str] = []
        detecting = self.detected is None
        for constraint in ORDER if detecting else (self.detected,):
            if constraint == "none":
                break
            try:
                data, latency = yield from self._attempts(self._body(messages, self.max_tokens, True, constraint, n))
            except errors.PolicyRequestError as exc:  # 400/422: the server does not know these fields
                if not detecting:
                    raise
                tried.append(f"{constraint}: {str(exc)[:200]}")
                continue
            usage = usage + self._usage(data, latency)
            self._note(data, notes)
            content, token_logprobs, _ = reply_of(data)
            index = parse_option(answer_text(constraint, content), situation.texts)
            if index is None:  # ignored (a server that drops unknown fields) or cut: not this constraint
                tried.append(f"{constraint}: reply {content[:60]!r} is not an option")
                if detecting:
                    continue
                break  # the constraint in use did not hold this once: free text for this decision
            self.detected = constraint
            probabilities, source = probabilities_from_logprobs(token_logprobs, content, index, n)
            info = {"policy": self.name, "model": data.get("model", self.model), "reply": content,
                    "mode": "logprobs" if source == "logprobs" else "choice", "constraint": constraint,
                    "probabilities_from": source, "invalid": 0, **notes}
            if tried:
                info["constraints_tried"] = tried
            return Decision(probabilities, int(np.argmax(probabilities)), usage, info)
        if detecting:
            self.detected = "none"
        return (yield from self._free(situation, messages, usage, notes, tried))

    def _free(self, situation: Situation, messages: list[dict[str, str]], usage: Usage, notes: dict[str, Any],
              tried: list[str]) -> Exchange:
        """Free text, parsed: asked again once with a reminder, then flat odds (the last resort)."""
        n = len(situation.candidates)
        replies: list[str] = []
        base = {"mode": "free", "constraint": "none", **({"constraints_tried": tried} if tried else {})}
        for _attempt in range(2):
            data, latency = yield from self._attempts(self._body(messages, self.max_tokens, logprobs=True))
            usage = usage + self._usage(data, latency)
            self._note(data, notes)
            content, token_logprobs, _ = reply_of(data)
            index = parse_option(content, situation.texts)
            if index is not None:
                probabilities, source = probabilities_from_logprobs(token_logprobs, content, index, n)
                info = {"policy": self.name, "model": data.get("model", self.model), "reply": content,
                        **base, "probabilities_from": source, "invalid": len(replies), **notes}
                if replies:
                    info["invalid_replies"] = replies
                return Decision(probabilities, int(np.argmax(probabilities)), usage, info)
            replies.append(content)
            messages = [
                *messages,
                {"role": "assistant", "content": content},
                {"role": "user", "content": f"That is not one of the options. Reply with one number from 1 to {n}."},
            ]
        return flat_decision(n, usage, {"policy": self.name, **base, "invalid": len(replies),
                                        "invalid_replies": replies, "fallback": "flat odds", **notes})

    @staticmethod
    def _note(data: Mapping[str, Any], notes: dict[str, Any]) -> None:
        """What a response says beside its reply: no usage, a cut by max_tokens, the server's own time."""
        if not isinstance(data.get("usage"), Mapping):
            notes["usage_missing"] = True  # the server reported no token counts: tokens and cost read 0
        if reply_of(data)[2] == "length":
            notes["cut_by_max_tokens"] = notes.get("cut_by_max_tokens", 0) + 1
        seconds = server_seconds(data)
        if seconds is not None:
            notes["server_s"] = round(notes.get("server_s", 0.0) + seconds, 6)

    def _usage(self, data: Mapping[str, Any], latency: float) -> Usage:
        raw = data.get("usage") if isinstance(data.get("usage"), Mapping) else {}
        tokens_in, tokens_out = token_count(raw.get("prompt_tokens")), token_count(raw.get("completion_tokens"))
        cost = (tokens_in * self.input_price_per_million + tokens_out * self.output_price_per_million) / 1e6
        return Usage(calls=1, input_tokens=tokens_in, output_tokens=tokens_out, cost_usd=cost, latency_s=latency)

    def decide(self, situation: Situation) -> Decision:
        return self._drive(self._exchange(situation))

    def decide_many(self, situations: Sequence[Situation]) -> list[Decision]:
        """Decisions for many situations, at most ``max_concurrency`` requests in flight, on this policy's one
        HTTP client (its kept-alive connections serve every decision; httpx's Client is thread-safe). While the
        server's mode is not known yet, the first decision detects it alone, so the rest never race to."""
        situations = list(situations)
        if len(situations) <= 1 or self.max_concurrency == 1:
            return [self.decide(s) for s in situations]
        first = [self.decide(situations[0])] if self.detected is None else []
        rest = situations[len(first):]
        self._http()  # made once, before the threads share it
        with ThreadPoolExecutor(min(self.max_concurrency, len(rest)), thread_name_prefix="s1gym-chat") as pool:
            return first + list(pool.map(self.decide, rest))

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
