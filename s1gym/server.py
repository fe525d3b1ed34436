"""``s1 serve``: a local System One server in TypeSafe's wire format.

``POST /v1/systemone`` answers ``choice``, ``noul`` and ``score`` questions
with any s1gym policy (``local`` by default, ``uniform`` for fast tests) and
``GET /v1/models`` lists what it serves, so the official ``typesafe-sdk`` -- and
with it the :class:`~s1gym.policies.Jev` policy -- works against it with only
``TYPESAFE_BASE_URL`` changed:

    s1 serve --policy local --port 8765
    TYPESAFE_BASE_URL=http://127.0.0.1:8765 s1 run CookingWorld --policy jev

Wire details follow the SDK (``typesafe_sdk._schemas.models`` is generated
from the API's OpenAPI document and is what requests are validated against):

- JSON bodies, ``Content-Encoding: zstd`` when the client has zstd (the SDK
  compresses bodies of 1 KiB or more); responses are zstd-compressed when the
  client's ``Accept-Encoding`` lists zstd, else plain JSON.
- ``Authorization: Bearer <key>`` is required; any key is accepted unless the
  server was started with ``--api-key`` (then others get 401).
- Schema violations get 422 with FastAPI's ``{"detail": [{"loc": ["body", ...],
  "msg": ..., "type": ...}]}`` body, which the SDK turns into a message naming
  the field. Box questions and image assets need a vision model: 422.
- Answers: a choice question becomes a Situation whose candidates are the
  labels (descriptions as lookahead outcomes); a noul is a two-way choice
  (yes/no, described by its criteria or instructions); a score is a choice over
  its levels with the expected level as the score. Token usage is an estimate
  (words and punctuation of the request); the model name is ``s1gym-<policy>``
  whatever alias the request names.

Limits (it is a network server; the ``s1 serve`` options named change them):

- Body: at most 4 MiB (``--max-body-bytes``), after zstd decompression too;
  more is 413. ``Content-Length`` must be one non-negative integer (else 400;
  missing or chunked: 411). JSON nested deeper than 64 levels is 422.
- Questions: at most 64 a request (``--max-questions``) and 1024 choices or
  score levels a question (``--max-candidates``, above every task's
  candidate cap N); more is 422 naming the field, before the policy runs.
- Time: a whole request (line, headers, body) must arrive within 10 s of the
  connection opening or the previous answer (``--timeout``), and an answer
  must be sent within as long; else 408 (or, before the headers, a close).
  Keep-alive connections idle for that long are closed.
- Connections: at most 64 open at once (``--max-connections``); more get
  503 with ``Retry-After: 1``, which the SDK retries.

Decisions run one at a time on a single policy thread (policies are not
promised to be thread-safe) and in arrival order, so a client asking many
questions is interleaved with the others rather than holding them up; the
candidate cap bounds what one decision costs. Client disconnects and
timeouts are logged at debug level; a failing policy is a 500 whose first
traceback per error type is logged, later ones as one line each.

The stdlib ``ThreadingHTTPServer`` (HTTP/1.1 keep-alive, a thread per
connection, bounded above) is enough here: two endpoints, local traffic and
decisions serialised on one policy anyway; it adds no dependency and starts in
milliseconds inside a test.
"""

from __future__ import annotations

import argparse
import errno
import hmac
import io
import json
import logging
import os
import re
import socket
import sys
import threading
import time
import uuid
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, fields
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

from s1gym.core import BasePolicy, Candidate, Situation

__all__ = ["Limits", "PortError", "S1Server", "add_arguments", "make_server", "run"]

log = logging.getLogger("s1gym.server")

SYSTEM_ONE_PATH = "/v1/systemone"
MODELS_PATH = "/v1/models"
MIN_COMPRESSED_RESPONSE = 1024
RELEASE_DATE = "2025-01-01"
_TOKENS = re.compile(r"\w+|[^\w\s]")
_DIGITS = re.compile(r"[0-9]+")


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


class RequestError(Exception):
    """An HTTP error response: status and JSON body."""

    def __init__(self, status: int, body: Any, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(status)
        self.status, self.body, self.headers = status, body, dict(headers or {})


def _unprocessable(loc: list[Any], msg: str, kind: str = "value_error") -> RequestError:
    return RequestError(422, {"detail": [{"loc": ["body", *loc], "msg": msg, "type": kind}]})


class S1Server(ThreadingHTTPServer):
    """The HTTP server plus the policy that answers; ``.url``, ``.start()``, ``.stop()``."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128  # the listen backlog; connections beyond max_connections are answered 503

    def __init__(
        self,
        policy: BasePolicy | None,
        host: str,
        port: int,
        api_key: str | None = None,
        limits: Limits | None = None,
    ) -> None:
        self.policy = policy  # None until make_server has built it (the port is bound first)
        self.limits = limits or Limits()
        self._api_key = api_key
        # one policy thread, first come first served: decisions never overlap and never starve a client
        self._decider = ThreadPoolExecutor(max_workers=1, thread_name_prefix="s1-serve-policy")
        self._count_lock = threading.Lock()
        #: Connections being served now (at most limits.max_connections).
        self.open_connections = 0
        self._logged_kinds: set[str] = set()
        self._thread: threading.Thread | None = None
        #: Successful requests, and requests whose body came zstd-compressed (for tests and benches).
        self.requests_served = 0
        self.zstd_requests = 0
        super().__init__((host, port), _Handler)  # binds and listens; closes itself on failure

    @property
    def model_name(self) -> str:
        return f"s1gym-{self.policy.name}" if self.policy is not None else "s1gym"

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        host = f"[{host}]" if ":" in str(host) else host
        return f"http://{host}:{port}"

    def start(self) -> S1Server:
        """Serve in a background daemon thread (for tests and benchmarks)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self.serve_forever, name="s1-serve", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self.shutdown()
            self._thread.join(timeout=10)
            self._thread = None
        self.server_close()

    def server_close(self) -> None:
        super().server_close()
        self._decider.shutdown(wait=False, cancel_futures=True)

    def __enter__(self) -> S1Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------- connections
    def process_request(self, request: Any, client_address: Any) -> None:
        """A thread per connection up to ``max_connections``; beyond, a 503 from the accepting thread."""
        with self._count_lock:
            full = self.open_connections >= self.limits.max_connections
            self.open_connections += not full
        if full:
            self._refuse(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._closed_one()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._closed_one()

    def _closed_one(self) -> None:
        with self._count_lock:
            self.open_connections -= 1

    def _refuse(self, request: socket.socket) -> None:
        body = json.dumps(
            {"detail": f"s1 serve has {self.limits.max_connections} connections open (its --max-connections); retry shortly"}
        ).encode()
        head = (
            "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
            f"Connection: close\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        try:
            request.setblocking(False)
            request.send(head.encode() + body)  # a fresh socket's send buffer takes it whole
            for _ in range(16):  # take what the client already sent, so the close does not reset the answer
                if not request.recv(65536):
                    break
        except OSError:
            pass
        self.shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up or stalls is routine (debug); anything else is logged once per kind."""
        error = sys.exc_info()[1]
        if isinstance(error, ConnectionError | TimeoutError):
            log.debug("s1 serve: %s: connection ended: %s", client_address[0], error)
        elif error is not None:
            self.report("connection", error)

    def report(self, what: str, error: BaseException) -> None:
        """Log a failure: the first of each exception type with its traceback, later ones on one line."""
        kind = type(error).__qualname__
        first = kind not in self._logged_kinds
        self._logged_kinds.add(kind)
        if first:
            log.error("s1 serve: %s failed: %s: %s", what, kind, error, exc_info=error)
        else:
            log.error("s1 serve: %s failed: %s: %s (traceback logged before)", what, kind, error)

    # ------------------------------------------------------------- logic
    def check_key(self, header: str | None) -> None:
        scheme, _, key = (header or "").partition(" ")
        if scheme.lower() != "bearer" or not key.strip():
            raise RequestError(401, {"detail": "Missing API key: send Authorization: Bearer <key>"})
        if self._api_key is not None and not hmac.compare_digest(key.strip().encode(), self._api_key.encode()):
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

    def system_one(self, body: Any) -> dict[str, Any]:
        request = _validate(body, self.limits)
        state = request.state
        answers: dict[str, Any] = {}
        for name, wrapped in request.questions.items():
            question = wrapped.root
            answers[name] = self._answer(name, state, question)
        tokens_in = len(_TOKENS.findall(json.dumps(body, ensure_ascii=False)))
        return {
            "model": self.model_name,
            "answers": answers,
            "usage": {"input_tokens": tokens_in, "output_tokens": len(answers)},
        }

    def _answer(self, name: str, state: Any, question: Any) -> dict[str, Any]:
        kind = question.type
        situation = _situation(state, question.instructions)
        if kind == "choice":
            labels = list(question.criteria)
            candidates = [Candidate(label, _text(question.criteria[label])) for label in labels]
            p = self._decide(situation, candidates)
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
            p = self._decide(situation, candidates)
            return {"type": "noul", "noul": float(p[0])}
        if kind == "score":
            levels = [_text(c) or "" for c in question.criteria]
            p = self._decide(situation, [Candidate(level) for level in levels])
            best = int(np.argmax(p))
            return {
                "type": "score",
                "score": float(np.dot(np.arange(len(p)), p)),
                "confidence": float(p[best]),
                "legend": {str(i): c for i, c in enumerate(question.criteria)},
                "probabilities": {str(i): float(v) for i, v in enumerate(p)},
            }
        raise _unprocessable(["questions", name, kind], f"{kind!r} questions need an image model; s1 serve answers choice, noul and score")

    def _decide(self, situation: Situation, candidates: list[Candidate]) -> np.ndarray:
        decision = self._decider.submit(self.policy.decide, situation.with_candidates(candidates)).result()
        p = np.asarray(decision.probabilities, dtype=np.float64)
        return p / p.sum()


def _parse_json(raw: bytes, max_depth: int) -> Any:
    """The body as JSON; 422 when it is not JSON or nests deeper than ``max_depth``."""
    try:
        body = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise _unprocessable([getattr(error, "pos", 0)], f"JSON decode error: {error}", "json_invalid") from None
    except RecursionError:  # the decoder's own guard (about 1000 levels)
        too_deep = True
    else:
        too_deep = _deeper_than(body, max_depth)
    if too_deep:
        raise _unprocessable([], f"JSON nested deeper than {max_depth} levels; flatten the state", "json_too_deep")
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
    from pydantic import ValidationError
    from typesafe_sdk._schemas import models as wire

    if not isinstance(body, dict):
        raise _unprocessable([], "The request body must be a JSON object", "model_attributes_type")
    if body.get("assets"):
        raise _unprocessable(["assets"], "s1 serve has no vision model; requests with image assets are not supported")
    _check_sizes(body.get("questions"), limits)
    try:
        request = wire.SystemOneRequest.model_validate(body)
    except ValidationError as error:
        detail = [
            {"loc": ["body", *e["loc"]], "msg": e["msg"], "type": e["type"]}
            for e in error.errors(include_url=False, include_context=False, include_input=False)
        ]
        raise RequestError(422, {"detail": detail}) from None
    for name, wrapped in request.questions.items():
        question = wrapped.root
        if question.type == "choice" and not question.criteria:
            raise _unprocessable(["questions", name, "choice", "criteria"], "A choice question needs at least one choice", "too_short")
        if question.type == "noul" and question.instructions is None and (
            question.criteria is None or (question.criteria.true is None and question.criteria.false is None)
        ):
            raise _unprocessable(["questions", name, "noul"], "A noul question needs instructions or a described outcome")
    return request


def _check_sizes(questions: Any, limits: Limits) -> None:
    """422 for too many questions or candidates, before the schema or the policy spends time on them."""
    if not isinstance(questions, dict):
        return  # the schema names what is wrong
    if len(questions) > limits.max_questions:
        raise _unprocessable(
            ["questions"],
            f"At most {limits.max_questions} questions a request (s1 serve --max-questions); got {len(questions)}",
            "too_long",
        )
    for name, question in questions.items():
        criteria = question.get("criteria") if isinstance(question, dict) else None
        if isinstance(criteria, dict | list) and len(criteria) > limits.max_candidates:
            raise _unprocessable(
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


class _DeadlineReader(io.RawIOBase):
    """Socket reads that end at the handler's deadline: a client sending slowly cannot hold a thread."""

    def __init__(self, sock: socket.socket, handler: _Handler) -> None:
        self._sock, self._handler = sock, handler

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        left = self._handler.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"request not complete within {self._handler.server.limits.timeout:g} s")
        self._sock.settimeout(left)
        return self._sock.recv_into(buffer)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: S1Server
    server_version = "s1gym-serve"

    def setup(self) -> None:
        super().setup()
        self.rfile.close()  # the stdlib's reader; ours checks the deadline before every read
        self.rfile = io.BufferedReader(_DeadlineReader(self.connection, self))
        self.deadline = time.monotonic() + self.server.limits.timeout
        self.unread = 0

    def handle_one_request(self) -> None:
        # the next request (its line, headers and body) must arrive within the timeout: an idle
        # keep-alive connection, a half-sent request and a trickle all end there
        self.deadline, self.unread = time.monotonic() + self.server.limits.timeout, 0
        super().handle_one_request()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        log.debug("%s %s", self.address_string(), format % args)  # never headers

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        self._handle(lambda: self._get())

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        self._handle(lambda: self._post())

    def _get(self) -> dict[str, Any]:
        if self.headers.get("Content-Length", "0").strip() != "0" or self.headers.get("Transfer-Encoding"):
            self.close_connection = True  # a GET body is not read: the connection cannot carry another request
        if self.path.split("?", 1)[0] != MODELS_PATH:
            raise RequestError(404, {"detail": "Not Found"})
        self.server.check_key(self.headers.get("Authorization"))
        return self.server.models()

    def _post(self) -> dict[str, Any]:
        raw = self._read_body()
        if self.path.split("?", 1)[0] != SYSTEM_ONE_PATH:
            raise RequestError(404, {"detail": "Not Found"})
        self.server.check_key(self.headers.get("Authorization"))
        content_type = (self.headers.get("Content-Type") or "application/json").split(";")[0].strip().lower()
        if content_type == "multipart/form-data":
            raise _unprocessable(["assets"], "s1 serve has no vision model; multipart requests with assets are not supported")
        if content_type != "application/json":
            raise RequestError(415, {"detail": f"Unsupported Content-Type {content_type!r}; send application/json"})
        return self.server.system_one(_parse_json(raw, self.server.limits.max_json_depth))

    def _content_length(self) -> int:
        """The declared body size; 411/400 (and the connection closed) unless it is one plain number."""
        values = {value.strip() for value in self.headers.get_all("Content-Length") or ()}
        if self.headers.get("Transfer-Encoding") is not None or not values:
            self.close_connection = True
            raise RequestError(411, {"detail": "Content-Length is required (chunked request bodies are not supported)"})
        text = values.pop()
        if values or not _DIGITS.fullmatch(text):
            self.close_connection = True
            shown = ", ".join(sorted({text, *values}))[:40]
            raise RequestError(400, {"detail": f"Content-Length must be one non-negative integer, got {shown!r}"})
        return int(text) if len(text) <= 18 else sys.maxsize

    def _read_body(self) -> bytes:
        limits = self.server.limits
        size = self._content_length()
        too_big = f"Request body over {limits.max_body_bytes} bytes{{}} (s1 serve --max-body-bytes)"
        if size > limits.max_body_bytes:
            self.close_connection, self.unread = True, size  # read and dropped after the answer
            raise RequestError(413, {"detail": too_big.format("")})
        try:
            raw = self.rfile.read(size)
        except TimeoutError:
            self.close_connection = True
            raise RequestError(408, {"detail": f"Request body not received within {limits.timeout:g} s (s1 serve --timeout)"}) from None
        if len(raw) < size:
            self.close_connection = True
            raise RequestError(400, {"detail": f"Request body ended after {len(raw)} of {size} bytes"})
        encoding = (self.headers.get("Content-Encoding") or "identity").strip().lower()
        if encoding == "zstd":
            import zstandard

            try:
                decompressor = zstandard.ZstdDecompressor(max_window_size=1 << 23)
                raw = decompressor.stream_reader(io.BytesIO(raw)).read(limits.max_body_bytes + 1)
            except zstandard.ZstdError as error:
                raise RequestError(400, {"detail": f"Invalid zstd body: {error}"}) from None
            if len(raw) > limits.max_body_bytes:
                raise RequestError(413, {"detail": too_big.format(" once decompressed")})
            self.server.zstd_requests += 1
        elif encoding not in ("identity", ""):
            raise RequestError(415, {"detail": f"Unsupported Content-Encoding {encoding!r}; use zstd or none"})
        return raw

    def _handle(self, produce: Any) -> None:
        started = time.perf_counter()
        headers: dict[str, str] = {}
        try:
            status, body = 200, produce()
        except RequestError as error:
            status, body, headers = error.status, error.body, error.headers
        except Exception as error:  # a policy failure must not kill the connection thread
            self.server.report(f"{self.command} {self.path}", error)
            status, body = 500, {"detail": f"{type(error).__name__}: {error}"}
        self._send(status, body, headers)
        if status == 200:
            self.server.requests_served += 1
        self._drain()
        log.debug("%s %s -> %s in %.1f ms", self.command, self.path, status, (time.perf_counter() - started) * 1e3)

    def _send(self, status: int, body: Any, headers: Mapping[str, str]) -> None:
        data = json.dumps(body, ensure_ascii=False, allow_nan=False).encode("utf-8")
        accepts = (self.headers.get("Accept-Encoding") or "").lower()
        encoded = len(data) >= MIN_COMPRESSED_RESPONSE and "zstd" in accepts
        if encoded:
            import zstandard

            data = zstandard.ZstdCompressor(write_content_size=True).compress(data)
        self.connection.settimeout(self.server.limits.timeout)  # a client that does not read cannot hold us
        self.send_response(status, HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else None)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("x-typesafe-request-id", uuid.uuid4().hex)
        if encoded:
            self.send_header("Content-Encoding", "zstd")
        for name, value in headers.items():
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)

    def _drain(self) -> None:
        """Read and drop a refused body, so the client gets to read the answer rather than a reset.

        Only while it keeps coming: within the request's deadline and with no pause over a second.
        """
        end = self.deadline
        while self.unread > 0:
            self.deadline = min(end, time.monotonic() + 1.0)
            try:
                chunk = self.rfile.read1(min(self.unread, 1 << 16))
            except OSError:  # TimeoutError included: the deadline ends the courtesy
                return
            if not chunk:
                return
            self.unread -= len(chunk)


def make_server(
    policy: str | BasePolicy = "local",
    host: str = "127.0.0.1",
    port: int = 0,
    api_key: str | None = None,
    limits: Limits | None = None,
    **policy_kwargs: Any,
) -> S1Server:
    """A server answering with ``policy`` (a name for ``make_policy`` or an instance); port 0 picks a free one.

    The port is bound before the policy is built, so a busy port fails fast with a :class:`PortError`
    naming the fix. Call ``.start()`` to serve in a background thread and ``.stop()`` to end it.
    """
    if isinstance(policy, str):
        if policy.strip().lower() == "rule":
            raise ValueError("s1 serve cannot use the 'rule' policy: it needs a live env, which requests do not carry")
    elif policy_kwargs:
        raise ValueError("policy keyword arguments are only used with a policy name")
    try:
        server = S1Server(None, host, port, api_key, limits)
    except OSError as error:
        raise PortError(host, port, error) from None
    try:
        if isinstance(policy, str):
            from s1gym.policies import make_policy

            policy = make_policy(policy, **policy_kwargs)
    except BaseException:
        server.server_close()
        raise
    server.policy = policy
    return server


class PortError(OSError):
    """The server cannot listen where it was asked; the message names the address and the fix."""

    def __init__(self, host: str, port: int, error: OSError) -> None:
        code = error.errno
        if code == errno.EADDRINUSE:
            holder = _port_holder(port)
            message = (
                f"port {port} on {host} is already in use{f' by {holder}' if holder else ''}: "
                f"pass another --port (--port 0 picks a free one) or stop "
                + ("that process" if holder else f"what holds it (ss -ltnp 'sport = :{port}' shows it)")
            )
        elif code == errno.EACCES:
            message = f"no permission to listen on port {port}: ports below 1024 need root; pass --port 8765 or another above 1023"
        elif code == errno.EADDRNOTAVAIL or isinstance(error, socket.gaierror):
            message = (
                f"cannot listen on {host!r}: not an address of this machine; "
                "pass --host 127.0.0.1 (this machine only) or --host 0.0.0.0 (every interface)"
            )
        else:
            message = f"cannot listen on {host}:{port}: {error.strerror or error}"
        super().__init__(message)
        self.errno, self.host, self.port = code, host, port


def _port_holder(port: int) -> str | None:
    """``pid 123 (its command line)`` listening on TCP ``port``, where this user may see it (Linux /proc)."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table, encoding="ascii") as file:
                rows = [line.split() for line in file.readlines()[1:]]
        except OSError:
            continue
        # columns: sl local_address rem_address st ... inode (10th); st 0A is LISTEN
        inodes.update(r[9] for r in rows if len(r) > 9 and r[3] == "0A" and int(r[1].rsplit(":", 1)[1], 16) == port)
    if not inodes:
        return None
    sockets = {f"socket:[{inode}]" for inode in inodes}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:  # gone, or another user's
            continue
        if any(_readlink(f"/proc/{pid}/fd/{fd}") in sockets for fd in fds):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as file:
                    command = file.read().replace(b"\0", b" ").decode(errors="replace").strip()
            except OSError:
                command = "?"
            return f"pid {pid} ({command[:100]})"
    return None


def _readlink(path: str) -> str | None:
    try:
        return os.readlink(path)
    except OSError:  # closed meanwhile
        return None


def _whole(minimum: int) -> Any:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {value}")
        return value

    return parse


def _port(text: str) -> int:
    value = _whole(0)(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"a port is 0-65535, got {value}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected seconds > 0, got {text!r}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``s1 serve`` options; the help ends with the server's limits (from this module's docstring)."""
    limits = Limits()
    paragraphs = (__doc__ or "").replace("``", "").split("\n\n")
    parser.description = paragraphs[0]
    starts = [i for i, text in enumerate(paragraphs) if text.startswith("Limits")]
    if starts:  # the docstring's two paragraphs on limits (absent under python -OO; the options still say)
        parser.epilog = "\n\n".join(paragraphs[starts[0] : starts[0] + 2])
        parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument(
        "--policy", default="local", help="decision model answering requests: local (default), uniform, random, jev, chat"
    )
    parser.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=_port, default=8765, help="port (default 8765; 0 picks a free one)")
    parser.add_argument(
        "--api-key",
        default=None,
        help="accept only this bearer key (default: any key; also S1_SERVE_API_KEY)",
    )
    mib = f"{limits.max_body_bytes / 2**20:g} MiB"
    for name, kind, metavar, text in (
        ("max_body_bytes", _whole(1), "N", f"largest request body, also after zstd decompression (default %(default)s = {mib}); more: 413"),
        ("max_questions", _whole(1), "N", "questions a request (default %(default)s); more: 422"),
        ("max_candidates", _whole(1), "N", "choices or score levels a question (default %(default)s); more: 422"),
        ("timeout", _seconds, "SECONDS", "to receive a whole request, and to send an answer (default %(default)s); "
         "slower: 408 or closed"),
        ("max_connections", _whole(1), "N", "connections open at once (default %(default)s); more: 503 with Retry-After"),
    ):
        parser.add_argument(f"--{name.replace('_', '-')}", type=kind, default=getattr(limits, name), metavar=metavar, help=text)


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted (``s1 serve``)."""
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    api_key = args.api_key or os.environ.get("S1_SERVE_API_KEY") or None
    limits = Limits(**{f.name: getattr(args, f.name) for f in fields(Limits) if hasattr(args, f.name)})
    try:
        server = make_server(args.policy, host=args.host, port=args.port, api_key=api_key, limits=limits)
    except PortError as error:
        from s1gym.cli import usage_error

        return usage_error("serve", error)
    print(f"s1 serve: System One API ({server.model_name}) on {server.url}", flush=True)
    print(f"  use it with: export TYPESAFE_BASE_URL={server.url}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":  # python -m s1gym.server
    _parser = argparse.ArgumentParser(prog="s1 serve")
    add_arguments(_parser)
    raise SystemExit(run(_parser.parse_args()))
