"""The HTTP edges uvicorn leaves to the application, for ``s1 serve`` (:mod:`s1gym.ui.serve`): the connection
cap (a 503 with ``Retry-After``), the deadline of each request, 400 answers in JSON naming the problem,
request bodies within the limits (411, 413 after reading what the client sent, 408, zstd), JSON answers."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sys
import time
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import h11
import zstandard
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from uvicorn.protocols.http.h11_impl import H11Protocol

from s1gym.ui.system_one import RequestError

if TYPE_CHECKING:
    from s1gym.ui.serve import S1Server

__all__ = ["Protocol", "json_response", "read_body"]

log = logging.getLogger("s1gym.ui.serve")

#: Bytes of a connection's input kept to tell a too-long Content-Length from a malformed one.
RECENT_BYTES = 16384
_CONTENT_LENGTH = re.compile(rb"(?im)^content-length:[ \t]*([^\r\n]*)")

#: A client that stops sending the body of a refused request for this long is not waited for.
DRAIN_PAUSE_S = 1.0
MIN_COMPRESSED_RESPONSE = 1024


def json_response(request: Request, status: int, body: Any, headers: Mapping[str, str], close: bool) -> Response:
    """JSON, zstd-compressed when the client accepts it and it is worth it; every answer has a request id."""
    data = json.dumps(body, ensure_ascii=False, allow_nan=False).encode("utf-8")
    out = {"x-typesafe-request-id": uuid.uuid4().hex, **headers}
    if len(data) >= MIN_COMPRESSED_RESPONSE and "zstd" in (request.headers.get("accept-encoding") or "").lower():
        data = zstandard.ZstdCompressor(write_content_size=True).compress(data)
        out["content-encoding"] = "zstd"
    if close:
        out["connection"] = "close"
    return Response(data, status_code=status, headers=out, media_type="application/json")


async def read_body(request: Request, server: S1Server) -> bytes:
    """The request body within the limits and the request's deadline, zstd-decoded: 411, 413, 408, 400, 415."""
    limits = server.limits
    declared = request.headers.get("content-length")
    if "transfer-encoding" in request.headers or declared is None:
        raise RequestError(411, {"detail": "Content-Length is required (chunked request bodies are not supported)"},
                           close=True)
    size = int(declared)  # uvicorn's parser answered anything but one non-negative integer with a 400
    deadline = request.scope.get("s1.deadline", time.monotonic() + limits.timeout)
    too_big = f"Request body over {limits.max_body_bytes} bytes{{}} (s1 serve --max-body-bytes)"
    if size > limits.max_body_bytes:
        await _drain(request, deadline)
        raise RequestError(413, {"detail": too_big.format("")}, close=True)
    chunks: list[bytes] = []
    try:
        async with asyncio.timeout(max(0.0, deadline - time.monotonic())):
            async for chunk in request.stream():
                chunks.append(chunk)
    except TimeoutError:
        raise RequestError(408, {"detail": f"Request body not received within {limits.timeout:g} s (s1 serve --timeout)"},
                           close=True) from None
    raw = b"".join(chunks)
    encoding = (request.headers.get("content-encoding") or "identity").strip().lower()
    if encoding == "zstd":
        try:
            decompressor = zstandard.ZstdDecompressor(max_window_size=1 << 23)
            raw = decompressor.stream_reader(raw).read(limits.max_body_bytes + 1)
        except zstandard.ZstdError as error:
            raise RequestError(400, {"detail": f"Invalid zstd body: {error}"}) from None
        if len(raw) > limits.max_body_bytes:
            raise RequestError(413, {"detail": too_big.format(" once decompressed")})
        server.zstd_requests += 1
    elif encoding not in ("identity", ""):
        raise RequestError(415, {"detail": f"Unsupported Content-Encoding {encoding!r}; use zstd or none"})
    return raw


async def _drain(request: Request, deadline: float) -> None:
    """Read and drop a refused body, so the client gets to read the answer rather than a reset.

    Only while it keeps coming: within the request's deadline and with no pause over :data:`DRAIN_PAUSE_S`.
    """
    stream = request.stream().__aiter__()
    while (left := deadline - time.monotonic()) > 0:
        try:
            await asyncio.wait_for(anext(stream), min(left, DRAIN_PAUSE_S))
        except (StopAsyncIteration, TimeoutError, ClientDisconnect):
            return


class Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol plus the connection cap (a 503 with ``Retry-After``), the deadline of
    each request (from the connection's start or the previous answer) and 400 answers in JSON."""

    owner: ClassVar[S1Server]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.refused = False
        #: the last bytes received (a refused request head is read back from them: see send_400_response)
        self.recent = b""
        self.deadline = 0.0
        self._expiry: asyncio.TimerHandle | None = None
        app = self.app

        async def with_deadline(scope: Any, receive: Any, send: Any) -> None:
            await app({**scope, "s1.deadline": self.deadline}, receive, send)

        self.app = with_deadline

    def connection_made(self, transport: Any) -> None:  # type: ignore[override]
        owner = self.owner
        if owner.open_connections >= owner.limits.max_connections:
            self.refused, self.transport = True, transport
            body = json.dumps({"detail": f"s1 serve has {owner.limits.max_connections} connections open "
                                         "(its --max-connections); retry shortly"}).encode()
            transport.write(
                b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
                + f"Connection: close\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body
            )
            transport.write_eof()  # what the client sends meanwhile is read and dropped, so it reads the answer
            self.loop.call_later(DRAIN_PAUSE_S, transport.close)
            return
        owner.open_connections += 1
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if not self.refused:
            self.recent = (self.recent + data)[-RECENT_BYTES:]
            super().data_received(data)

    def eof_received(self) -> None:
        if self.refused:
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.refused:
            return
        self.owner.open_connections -= 1
        if self._expiry is not None:
            self._expiry.cancel()
        if exc is not None:
            log.debug("s1 serve: %s: connection ended: %s", (self.client or ("?",))[0], exc)
        super().connection_lost(exc)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()  # the next request has the whole timeout from now

    def _arm(self) -> None:
        if self._expiry is not None:
            self._expiry.cancel()
        timeout = self.owner.limits.timeout
        self.deadline = time.monotonic() + timeout
        self._expiry = self.loop.call_later(timeout, self._expired)

    def _expired(self) -> None:
        """No request in progress by the deadline (headers not finished, or idle): close. A request in
        progress answers 408 itself when its body is late."""
        if (self.cycle is None or self.cycle.response_complete) and not self.transport.is_closing():
            self.transport.close()

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to a request its parser refused, as JSON naming what was wrong."""
        error = sys.exc_info()[1]
        reason = str(error) if error is not None else msg
        status, detail = 400, f"Malformed HTTP request ({reason})"
        if "Content-Length" in reason:
            declared = {v.strip() for v in _CONTENT_LENGTH.findall(self.recent)}
            if len(declared) == 1 and declared.pop().isdigit():  # a length too long for the parser to take
                status, detail = 413, f"Request body over {self.owner.limits.max_body_bytes} bytes (s1 serve --max-body-bytes)"
            else:
                detail = f"Content-Length must be one non-negative integer ({reason})"
        body = json.dumps({"detail": detail}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                   (b"connection", b"close")]
        phrase = b"Bad Request" if status == 400 else b"Content Too Large"
        for event in (h11.Response(status_code=status, headers=headers, reason=phrase), h11.Data(data=body),
                      h11.EndOfMessage()):
            self.transport.write(self.conn.send(event))
        self.transport.close()
