"""``s1 serve``: a local System One server in TypeSafe's wire format.

``POST /v1/systemone`` answers ``choice``, ``noul`` and ``score`` questions
with any s1gym policy (``local`` by default, ``uniform`` for fast tests) and
``GET /v1/models`` lists what it serves, so the official ``typesafe-sdk`` -- and
with it the :class:`~s1gym.policies.Jev` policy -- works against it with only
``TYPESAFE_BASE_URL`` changed:

    s1 serve --policy local --port 8765
    TYPESAFE_BASE_URL=http://127.0.0.1:8765 s1 run CookingWorld --policy jev

Wire details (:mod:`s1gym.ui.system_one` holds the schema and the answers):

- JSON bodies, ``Content-Encoding: zstd`` when the client has zstd (the SDK
  compresses bodies of 1 KiB or more); responses are zstd-compressed when the
  client's ``Accept-Encoding`` lists zstd, else plain JSON.
- ``Authorization: Bearer <key>`` is required; any key is accepted unless the
  server was started with ``--api-key`` (then others get 401, whose body says
  nothing about the key; keys are compared in constant time).
- Safe by default: on an address other than loopback (``--host 0.0.0.0``, a
  LAN address) the server refuses to start without ``--api-key`` (or
  ``S1_SERVE_API_KEY``), since anyone reaching the port could otherwise spend
  the hosted model behind ``--policy jev``/``chat``; ``--insecure`` overrides
  (:mod:`s1gym.ui.address` holds that rule and the errors for a busy port).
- Schema violations get 422 with FastAPI's ``{"detail": [{"loc": ["body", ...],
  "msg": ..., "type": ...}]}`` body, which the SDK turns into a message naming
  the field. Box questions and image assets need a vision model: 422.

Limits (it is a network server; the ``s1 serve`` options named change them):

- Body: at most 4 MiB (``--max-body-bytes``), after zstd decompression too;
  more is 413. ``Content-Length`` must be one non-negative integer (else 400;
  missing or chunked: 411). JSON nested deeper than 64 levels is 422.
- Questions: at most 64 a request (``--max-questions``) and 1024 choices or
  score levels a question (``--max-candidates``, above every task's
  candidate cap N); more is 422 naming the field, before the policy runs.
- Time: a whole request (line, headers, body) must arrive within 10 s of the
  connection opening or the previous answer (``--timeout``); else 408 (or,
  before the headers, a close). Keep-alive connections idle for that long are
  closed.
- Connections: at most 64 open at once (``--max-connections``); more get
  503 with ``Retry-After: 1``, which the SDK retries.

Transport: uvicorn (HTTP/1.1 parsing and framing, keep-alive, flow control)
serves a Starlette app. What uvicorn leaves to the application is added in
:class:`~s1gym.ui.transport.Protocol` (the connection cap with its 503, the request deadline, 400
answers in JSON) and in the app (411, 413 after reading what the client sent
so that it reads the answer, 408 on a body that does not arrive). Decisions
run one at a time on a single policy thread, in arrival order, so a client
asking many questions is interleaved with the others rather than holding
them up. Client disconnects are logged at debug level; a failing policy is a
500 whose first traceback per error type is logged, later ones as one line
each.
"""

from __future__ import annotations

import argparse
import logging
import os
import socket
import threading
import time
from dataclasses import fields
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route

from s1gym.core import BasePolicy
from s1gym.policies import make_policy
from s1gym.ui.address import InsecureServeError, PortError, is_loopback
from s1gym.ui.system_one import Limits, RequestError, SystemOne, parse_json, unprocessable
from s1gym.ui.transport import Protocol, json_response, read_body

__all__ = ["InsecureServeError", "Limits", "PortError", "S1Server", "add_arguments", "is_loopback", "make_server", "run"]

log = logging.getLogger("s1gym.ui.serve")

SYSTEM_ONE_PATH = "/v1/systemone"
MODELS_PATH = "/v1/models"


class S1Server:
    """The System One API on uvicorn: ``.url``, ``.start()`` (a background thread), ``.stop()``,
    ``.serve_forever()`` (this thread, until interrupted)."""

    def __init__(
        self,
        policy: BasePolicy | None,
        host: str,
        port: int,
        api_key: str | None = None,
        limits: Limits | None = None,
    ) -> None:
        self.limits = limits or Limits()
        self.api = SystemOne(policy, api_key, self.limits)
        #: Connections being served now (at most limits.max_connections).
        self.open_connections = 0
        #: Successful requests, and requests whose body came zstd-compressed (for tests and benches).
        self.requests_served = 0
        self.zstd_requests = 0
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.socket = socket.create_server((host, port), family=family, backlog=128)  # binds now: fails fast
        self.server_address = self.socket.getsockname()
        protocol = type("S1Protocol", (Protocol,), {"owner": self})
        config = uvicorn.Config(
            _app(self), http=protocol, lifespan="off", log_config=None, access_log=False, server_header=False,
            timeout_keep_alive=self.limits.timeout, timeout_graceful_shutdown=5,
        )
        self._uvicorn = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    @property
    def policy(self) -> BasePolicy | None:
        return self.api.policy

    @policy.setter
    def policy(self, policy: BasePolicy) -> None:
        self.api.policy = policy

    @property
    def model_name(self) -> str:
        return self.api.model_name

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        host = f"[{host}]" if ":" in str(host) else host
        return f"http://{host}:{port}"

    def serve_forever(self) -> None:
        """Serve in this thread until interrupted (uvicorn handles Ctrl-C and SIGTERM)."""
        self._uvicorn.run(sockets=[self.socket])

    def start(self) -> S1Server:
        """Serve in a background daemon thread (for tests and benchmarks)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self.serve_forever, name="s1-serve", daemon=True)
            self._thread.start()
            while not self._uvicorn.started and self._thread.is_alive():
                time.sleep(0.005)
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._uvicorn.should_exit = True
            self._thread.join(timeout=10)
            self._thread = None
        self.server_close()

    def server_close(self) -> None:
        self.socket.close()
        self.api.close()

    def __enter__(self) -> S1Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


# ------------------------------------------------------------------ the app
def _app(server: S1Server) -> Starlette:
    api, limits = server.api, server.limits

    async def models(request: Request) -> Response:
        return await _answer(request, lambda: _models(request))

    async def _models(request: Request) -> dict[str, Any]:
        api.check_key(request.headers.get("authorization"))
        return api.models()

    async def system_one(request: Request) -> Response:
        return await _answer(request, lambda: _system_one(request))

    async def _system_one(request: Request) -> dict[str, Any]:
        raw = await read_body(request, server)
        api.check_key(request.headers.get("authorization"))
        content_type = (request.headers.get("content-type") or "application/json").split(";")[0].strip().lower()
        if content_type == "multipart/form-data":
            raise unprocessable(["assets"], "s1 serve has no vision model; multipart requests with assets are not supported")
        if content_type != "application/json":
            raise RequestError(415, {"detail": f"Unsupported Content-Type {content_type!r}; send application/json"})
        return await api.system_one(parse_json(raw, limits.max_json_depth))

    async def _answer(request: Request, produce: Any) -> Response:
        started = time.perf_counter()
        headers: dict[str, str] = {}
        close = False
        try:
            status, body = 200, await produce()
        except RequestError as error:
            status, body, headers, close = error.status, error.body, error.headers, error.close
        except ClientDisconnect:
            log.debug("s1 serve: %s: connection ended before the request did", _client(request))
            return Response(status_code=499)  # nobody reads it
        except Exception as error:  # a policy failure is the client's 500, not the server's crash
            api.report(f"{request.method} {request.url.path}", error)
            status, body = 500, {"detail": f"{type(error).__name__}: {error}"}
        if status == 200:
            server.requests_served += 1
        log.debug("%s %s -> %s in %.1f ms", request.method, request.url.path, status, (time.perf_counter() - started) * 1e3)
        return json_response(request, status, body, headers, close)

    async def not_found(request: Request, exc: Exception) -> Response:
        return json_response(request, 404, {"detail": "Not Found"}, {}, False)

    return Starlette(
        routes=[Route(MODELS_PATH, models, methods=["GET"]), Route(SYSTEM_ONE_PATH, system_one, methods=["POST"])],
        exception_handlers={404: not_found},
    )


def _client(request: Request) -> str:
    return request.client.host if request.client else "?"


def make_server(
    policy: str | BasePolicy = "local",
    host: str = "127.0.0.1",
    port: int = 0,
    api_key: str | None = None,
    limits: Limits | None = None,
    insecure: bool = False,
    **policy_kwargs: Any,
) -> S1Server:
    """A server answering with ``policy`` (a name for ``make_policy`` or an instance); port 0 picks a free one.

    The port is bound before the policy is built, so a busy port fails fast with a :class:`PortError`
    naming the fix. Call ``.start()`` to serve in a background thread and ``.stop()`` to end it. A host
    that is not loopback needs an ``api_key`` unless ``insecure=True`` (:class:`InsecureServeError`).
    """
    if not api_key and not insecure and not is_loopback(host):
        raise InsecureServeError(host)
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
            policy = make_policy(policy, **policy_kwargs)
    except BaseException:
        server.server_close()
        raise
    server.policy = policy
    return server


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
        help="accept only this bearer key (also S1_SERVE_API_KEY); required on a --host other than loopback",
    )
    parser.add_argument(
        "--insecure",
        action="store_true",
        help="serve on a non-loopback --host with no --api-key (any key accepted: anyone reaching the port may use it)",
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
        server = make_server(
            args.policy, host=args.host, port=args.port, api_key=api_key, limits=limits,
            insecure=getattr(args, "insecure", False),
        )
    except (PortError, InsecureServeError) as error:
        from s1gym.ui.cli import usage_error

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


if __name__ == "__main__":  # python -m s1gym.ui.serve
    _parser = argparse.ArgumentParser(prog="s1 serve")
    add_arguments(_parser)
    raise SystemExit(run(_parser.parse_args()))
