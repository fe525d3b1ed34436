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

The stdlib ``ThreadingHTTPServer`` (HTTP/1.1 keep-alive, a thread per
connection) is enough here: two endpoints, loopback traffic, and decisions
serialised on one policy anyway; it adds no dependency and starts in
milliseconds inside a test.
"""

from __future__ import annotations

import argparse
import hmac
import io
import json
import logging
import re
import threading
import time
import uuid
from collections.abc import Mapping
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

from s1gym.core import BasePolicy, Candidate, Situation

__all__ = ["S1Server", "add_arguments", "make_server", "run"]

log = logging.getLogger("s1gym.server")

SYSTEM_ONE_PATH = "/v1/systemone"
MODELS_PATH = "/v1/models"
MAX_BODY_BYTES = 32 * 1024 * 1024
MIN_COMPRESSED_RESPONSE = 1024
RELEASE_DATE = "2025-01-01"
_TOKENS = re.compile(r"\w+|[^\w\s]")


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

    def __init__(self, policy: BasePolicy, host: str, port: int, api_key: str | None = None) -> None:
        super().__init__((host, port), _Handler)
        self.policy = policy
        self.model_name = f"s1gym-{policy.name}"
        self._api_key = api_key
        self._policy_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        #: Successful requests, and requests whose body came zstd-compressed (for tests and benches).
        self.requests_served = 0
        self.zstd_requests = 0

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

    def __enter__(self) -> S1Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

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
        request = _validate(body)
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
        with self._policy_lock:  # policies are not promised to be thread-safe
            decision = self.policy.decide(situation.with_candidates(candidates))
        p = np.asarray(decision.probabilities, dtype=np.float64)
        return p / p.sum()


def _validate(body: Any) -> Any:
    """The request as the SDK's wire model; 422 naming the field otherwise."""
    from pydantic import ValidationError
    from typesafe_sdk._schemas import models as wire

    if not isinstance(body, dict):
        raise _unprocessable([], "The request body must be a JSON object", "model_attributes_type")
    if body.get("assets"):
        raise _unprocessable(["assets"], "s1 serve has no vision model; requests with image assets are not supported")
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


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: S1Server
    server_version = "s1gym-serve"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        log.debug("%s %s", self.address_string(), format % args)  # never headers

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        self._handle(lambda: self._get())

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        self._handle(lambda: self._post())

    def _get(self) -> dict[str, Any]:
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
        try:
            body = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise _unprocessable([getattr(error, "pos", 0)], f"JSON decode error: {error}", "json_invalid") from None
        return self.server.system_one(body)

    def _read_body(self) -> bytes:
        length = self.headers.get("Content-Length")
        if length is None:
            self.close_connection = True
            raise RequestError(411, {"detail": "Content-Length is required"})
        size = int(length)
        if size > MAX_BODY_BYTES:
            self.close_connection = True
            raise RequestError(413, {"detail": f"Request body over {MAX_BODY_BYTES} bytes"})
        raw = self.rfile.read(size)
        encoding = (self.headers.get("Content-Encoding") or "identity").strip().lower()
        if encoding == "zstd":
            import zstandard

            try:
                reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw))
                raw = reader.read(MAX_BODY_BYTES + 1)
            except zstandard.ZstdError as error:
                raise RequestError(400, {"detail": f"Invalid zstd body: {error}"}) from None
            if len(raw) > MAX_BODY_BYTES:
                raise RequestError(413, {"detail": f"Decompressed body over {MAX_BODY_BYTES} bytes"})
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
            log.exception("s1 serve: request failed")
            status, body = 500, {"detail": f"{type(error).__name__}: {error}"}
        self._send(status, body, headers)
        if status == 200:
            self.server.requests_served += 1
        log.debug("%s %s -> %s in %.1f ms", self.command, self.path, status, (time.perf_counter() - started) * 1e3)

    def _send(self, status: int, body: Any, headers: Mapping[str, str]) -> None:
        data = json.dumps(body, ensure_ascii=False, allow_nan=False).encode("utf-8")
        accepts = (self.headers.get("Accept-Encoding") or "").lower()
        encoded = len(data) >= MIN_COMPRESSED_RESPONSE and "zstd" in accepts
        if encoded:
            import zstandard

            data = zstandard.ZstdCompressor(write_content_size=True).compress(data)
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


def make_server(
    policy: str | BasePolicy = "local",
    host: str = "127.0.0.1",
    port: int = 0,
    api_key: str | None = None,
    **policy_kwargs: Any,
) -> S1Server:
    """A server answering with ``policy`` (a name for ``make_policy`` or an instance); port 0 picks a free one.

    Call ``.start()`` to serve in a background thread and ``.stop()`` to end it.
    """
    if isinstance(policy, str):
        if policy.strip().lower() == "rule":
            raise ValueError("s1 serve cannot use the 'rule' policy: it needs a live env, which requests do not carry")
        from s1gym.policies import make_policy

        policy = make_policy(policy, **policy_kwargs)
    elif policy_kwargs:
        raise ValueError("policy keyword arguments are only used with a policy name")
    return S1Server(policy, host, port, api_key)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``s1 serve`` options."""
    parser.add_argument("--policy", default="local", help="decision model answering requests: local (default), uniform, random, jev, chat")
    parser.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8765, help="port (default 8765; 0 picks a free one)")
    parser.add_argument(
        "--api-key",
        default=None,
        help="accept only this bearer key (default: any key; also S1_SERVE_API_KEY)",
    )


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted (``s1 serve``)."""
    import os

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    api_key = args.api_key or os.environ.get("S1_SERVE_API_KEY") or None
    server = make_server(args.policy, host=args.host, port=args.port, api_key=api_key)
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
    _parser = argparse.ArgumentParser(prog="s1 serve", description=__doc__.split("\n\n", 1)[0])
    add_arguments(_parser)
    raise SystemExit(run(_parser.parse_args()))
