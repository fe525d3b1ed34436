"""The System One API answered by an s1gym policy, independent of the HTTP server (:mod:`s1gym.ui.serve`).

The wire format is TypeSafe's (``POST /v1/systemone``, ``GET /v1/models``), written here as pydantic models
from the API's OpenAPI document (the official ``typesafe-sdk`` keeps its copy private), and requests are
validated against them within :class:`Limits`. Schema violations are 422 with FastAPI's
``{"detail": [{"loc": ["body", ...], "msg": ..., "type": ...}]}`` body, which the SDK turns into a
message naming the field.

Answers: a choice question becomes a Situation whose candidates are the labels (descriptions as
lookahead outcomes); a noul is a two-way choice (yes/no, described by its criteria or instructions); a
score is a choice over its levels with the expected level as the score. Token usage is an estimate
(words and punctuation of the request); the model name is ``s1gym-<policy>`` whatever alias the request
names. Decisions run one at a time on a single policy thread (policies are not promised to be
thread-safe) and in arrival order.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import re
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, Field, ValidationError

from s1gym.core import BasePolicy, Candidate, Situation
from s1gym.errors import S1GymError

__all__ = ["Limits", "RequestError", "SystemOne", "SystemOneRequest", "parse_json", "unprocessable"]

log = logging.getLogger("s1gym.ui.serve")

RELEASE_DATE = "2025-01-01"
_TOKENS = re.compile(r"\w+|[^\w\s]")

#: A question's text: a string, a JSON object or an array.
Content = str | dict[str, Any] | list[Any]


@dataclass(frozen=True)
class Limits:
    """What one client may ask of the server (the module docstring says why each exists)."""

    #: request body in bytes, after zstd decompression too (413 beyond)
    max_body_bytes: int = 4 * 1024 * 1024
    #: questions in one request (422 beyond)
    max_questions: int = 64
    #: choices or score levels in one question (422 beyond); every task's candidate cap N is below it
    max_candidates: int = 1024
    #: nesting of the JSON body (422 beyond)
    max_json_depth: int = 64
    #: seconds to receive a whole request, and to send an answer (408 / closed beyond)
    timeout: float = 10.0
    #: connections open at once (503 with Retry-After beyond)
    max_connections: int = 64

    def __post_init__(self) -> None:
        for name in ("max_body_bytes", "max_questions", "max_candidates", "max_json_depth", "max_connections"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"s1 serve: {name} must be a whole number >= 1, got {value!r}")
        if not (isinstance(self.timeout, int | float) and 0 < self.timeout < float("inf")):
            raise ValueError(f"s1 serve: timeout must be a number of seconds > 0, got {self.timeout!r}")


class RequestError(S1GymError):
    """An HTTP error response: status and JSON body (``close``: the connection cannot carry another request)."""

    def __init__(self, status: int, body: Any, headers: Mapping[str, str] | None = None, close: bool = False) -> None:
        super().__init__(status)
        self.status, self.body, self.headers, self.close = status, body, dict(headers or {}), close


def unprocessable(loc: list[Any], msg: str, kind: str = "value_error") -> RequestError:
    """A 422 in FastAPI's shape (what the SDK reads): the body location, the message, the error type."""
    return RequestError(422, {"detail": [{"loc": ["body", *loc], "msg": msg, "type": kind}]})


# ------------------------------------------------------------------ the wire schema (TypeSafe's OpenAPI)
class NoulCriteria(BaseModel):
    true: Content | None = None
    false: Content | None = None


class NoulQuestion(BaseModel):
    type: Literal["noul"]
    instructions: Content | None = None
    criteria: NoulCriteria | None = None


class ChoiceQuestion(BaseModel):
    type: Literal["choice"]
    instructions: Content | None = None
    criteria: dict[str, Content | None]


class ScoreQuestion(BaseModel):
    type: Literal["score"]
    instructions: Content | None = None
    criteria: list[Content] = Field(min_length=1)


class BoxQuestion(BaseModel):
    type: Literal["box"]
    instructions: Content | None = None


Question = Annotated[NoulQuestion | ChoiceQuestion | ScoreQuestion | BoxQuestion, Field(discriminator="type")]


class SystemOneRequest(BaseModel):
    model: str
    state: Content
    questions: dict[str, Question] = Field(min_length=1)
    assets: dict[str, Any] | None = None


# ------------------------------------------------------------------ reading a request
def parse_json(raw: bytes, max_depth: int) -> Any:
    """The body as JSON; 422 when it is not JSON or nests deeper than ``max_depth``."""
    try:
        body = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise unprocessable([getattr(error, "pos", 0)], f"JSON decode error: {error}", "json_invalid") from None
    except RecursionError:  # the decoder's own guard (about 1000 levels)
        too_deep = True
    else:
        too_deep = _deeper_than(body, max_depth)
    if too_deep:
        raise unprocessable([], f"JSON nested deeper than {max_depth} levels; flatten the state", "json_too_deep")
    return body


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether objects and arrays nest more than ``limit`` levels (iterative: the check must not recurse)."""
    stack = [(value, 1)]
    while stack:
        value, depth = stack.pop()
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def _validate(body: Any, limits: Limits) -> Any:
    """The request as the SDK's wire model within ``limits``; 422 naming the field otherwise."""
    if not isinstance(body, dict):
        raise unprocessable([], "The request body must be a JSON object", "model_attributes_type")
    if body.get("assets"):
        raise unprocessable(["assets"], "s1 serve has no vision model; requests with image assets are not supported")
    _check_sizes(body.get("questions"), limits)
    try:
        request = SystemOneRequest.model_validate(body)
    except ValidationError as error:
        detail = [
            {"loc": ["body", *e["loc"]], "msg": e["msg"], "type": e["type"]}
            for e in error.errors(include_url=False, include_context=False, include_input=False)
        ]
        raise RequestError(422, {"detail": detail}) from None
    for name, question in request.questions.items():
        if question.type == "choice" and not question.criteria:
            raise unprocessable(["questions", name, "choice", "criteria"], "A choice question needs at least one choice", "too_short")
        if question.type == "noul" and question.instructions is None and (
            question.criteria is None or (question.criteria.true is None and question.criteria.false is None)
        ):
            raise unprocessable(["questions", name, "noul"], "A noul question needs instructions or a described outcome")
    return request


def _check_sizes(questions: Any, limits: Limits) -> None:
    """422 for too many questions or candidates, before the schema or the policy spends time on them."""
    if not isinstance(questions, dict):
        return  # the schema names what is wrong
    if len(questions) > limits.max_questions:
        raise unprocessable(
            ["questions"],
            f"At most {limits.max_questions} questions a request (s1 serve --max-questions); got {len(questions)}",
            "too_long",
        )
    for name, question in questions.items():
        criteria = question.get("criteria") if isinstance(question, dict) else None
        if isinstance(criteria, dict | list) and len(criteria) > limits.max_candidates:
            raise unprocessable(
                ["questions", name, str(question.get("type")), "criteria"],
                f"At most {limits.max_candidates} choices a question (s1 serve --max-candidates); got {len(criteria)}",
                "too_long",
            )


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _situation(state: Any, instructions: Any) -> Situation:
    """A Situation from a request's state; Jev's ``{task, observation, history, notes}`` is read back."""
    task, observation, history, notes = "", "", (), ()
    if isinstance(state, dict) and "observation" in state:
        task = str(state.get("task") or "")
        observation = _text(state.get("observation")) or ""
        history = tuple(
            (str(h.get("move", "")), str(h.get("feedback", "")))
            for h in state.get("history") or []
            if isinstance(h, dict)
        )
        notes = tuple(str(n) for n in state.get("notes") or [])
    else:
        observation = _text(state) or ""
    if not task and instructions is not None:
        task = _text(instructions) or ""
    return Situation(task=task, observation=observation, candidates=(), history=history, notes=notes)


# ------------------------------------------------------------------ answering
class SystemOne:
    """The API's logic on ``policy``: key check, models, answers (decided on one policy thread)."""

    def __init__(self, policy: BasePolicy | None, api_key: str | None, limits: Limits) -> None:
        self.policy = policy  # None until make_server has built it (the port is bound first)
        self.limits = limits
        self._api_key = api_key
        # one policy thread, first come first served: decisions never overlap and never starve a client
        self._decider = ThreadPoolExecutor(max_workers=1, thread_name_prefix="s1-serve-policy")
        self._logged_kinds: set[str] = set()

    @property
    def model_name(self) -> str:
        return f"s1gym-{self.policy.name}" if self.policy is not None else "s1gym"

    def close(self) -> None:
        self._decider.shutdown(wait=False, cancel_futures=True)

    def report(self, what: str, error: BaseException) -> None:
        """Log a failure: the first of each exception type with its traceback, later ones on one line."""
        kind = type(error).__qualname__
        first = kind not in self._logged_kinds
        self._logged_kinds.add(kind)
        if first:
            log.error("s1 serve: %s failed: %s: %s", what, kind, error, exc_info=error)
        else:
            log.error("s1 serve: %s failed: %s: %s (traceback logged before)", what, kind, error)

    def check_key(self, header: str | None) -> None:
        scheme, _, key = (header or "").partition(" ")
        if scheme.lower() != "bearer" or not key.strip():
            raise RequestError(401, {"detail": "Missing API key: send Authorization: Bearer <key>"})
        # digests of equal length: the comparison's time says nothing about the key, its length included
        if self._api_key is not None and not hmac.compare_digest(
            hashlib.sha256(key.strip().encode()).digest(), hashlib.sha256(self._api_key.encode()).digest()
        ):
            raise RequestError(401, {"detail": "Invalid API key"})

    def models(self) -> dict[str, Any]:
        return {
            "models": [
                {
                    "name": self.model_name,
                    "description": f"s1gym local System One server answering with the {self.policy.name!r} policy; "
                    "every model name in a request is served by it.",
                    "release_date": RELEASE_DATE,
                }
            ]
        }

    async def system_one(self, body: Any) -> dict[str, Any]:
        request = _validate(body, self.limits)
        state = request.state
        answers: dict[str, Any] = {}
        for name, question in request.questions.items():
            answers[name] = await self._answer(name, state, question)
        tokens_in = len(_TOKENS.findall(json.dumps(body, ensure_ascii=False)))
        return {
            "model": self.model_name,
            "answers": answers,
            "usage": {"input_tokens": tokens_in, "output_tokens": len(answers)},
        }

    async def _answer(self, name: str, state: Any, question: Any) -> dict[str, Any]:
        kind = question.type
        situation = _situation(state, question.instructions)
        if kind == "choice":
            labels = list(question.criteria)
            candidates = [Candidate(label, _text(question.criteria[label])) for label in labels]
            p = await self._decide(situation, candidates)
            best = int(np.argmax(p))
            return {
                "type": "choice",
                "choice": labels[best],
                "confidence": float(p[best]),
                "probabilities": {label: float(v) for label, v in zip(labels, p)},
            }
        if kind == "noul":
            criteria = question.criteria
            asked = _text(question.instructions) or ""
            yes = _text(criteria.true) if criteria is not None else None
            no = _text(criteria.false) if criteria is not None else None
            candidates = [Candidate("yes", yes or asked), Candidate("no", no or f"not: {asked}")]
            p = await self._decide(situation, candidates)
            return {"type": "noul", "noul": float(p[0])}
        if kind == "score":
            levels = [_text(c) or "" for c in question.criteria]
            p = await self._decide(situation, [Candidate(level) for level in levels])
            best = int(np.argmax(p))
            return {
                "type": "score",
                "score": float(np.dot(np.arange(len(p)), p)),
                "confidence": float(p[best]),
                "legend": {str(i): c for i, c in enumerate(question.criteria)},
                "probabilities": {str(i): float(v) for i, v in enumerate(p)},
            }
        raise unprocessable(["questions", name, kind], f"{kind!r} questions need an image model; s1 serve answers choice, noul and score")

    async def _decide(self, situation: Situation, candidates: list[Candidate]) -> np.ndarray:
        loop = asyncio.get_running_loop()
        decision = await loop.run_in_executor(self._decider, self.policy.decide, situation.with_candidates(candidates))
        p = np.asarray(decision.probabilities, dtype=np.float64)
        return p / p.sum()
