"""Loopback helpers (real sockets, no mocks): a scripted HTTP server for tests of clients, raw exchanges for tests of servers."""

from __future__ import annotations

import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class ScriptedServer(ThreadingHTTPServer):
    """Serves ``handler`` on a free loopback port in a background thread (a context manager).

    ``script`` holds the replies the handler plays in order; ``requests`` records
    what it received; ``lock`` guards both across the server's threads.
    """

    daemon_threads = True
    #: Appended to the base URL (e.g. "/v1" for OpenAI-style clients).
    url_suffix = ""

    def __init__(self, handler: type[BaseHTTPRequestHandler], script) -> None:
        super().__init__(("127.0.0.1", 0), handler)
        self.script, self.requests, self.lock = list(script), [], threading.Lock()

    def __enter__(self):
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.shutdown()
        self.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{self.url_suffix}"


def exchange(address: tuple[str, int], data: bytes, timeout: float = 5.0) -> tuple[bytes, bool]:
    """Sends raw ``data`` on a new connection and reads until the server closes it or ``timeout`` passes.

    Returns what came back and whether the server closed the connection (for tests of what a
    well-behaved HTTP client would never send).
    """
    with socket.create_connection(address, timeout=timeout) as sock:
        sock.sendall(data)
        return read_until_closed(sock, timeout)


def read_until_closed(sock: socket.socket, timeout: float) -> tuple[bytes, bool]:
    """Reads ``sock`` until EOF (True) or ``timeout`` seconds in all (False); a reset counts as closed."""
    received, deadline = b"", time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        sock.settimeout(left)
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            break
        except ConnectionResetError:
            return received, True
        if not chunk:
            return received, True
        received += chunk
    return received, False


def status_of(response: bytes) -> int | None:
    """The status code of a raw HTTP response, None when there is none."""
    line = response.split(b"\r\n", 1)[0].split()
    return int(line[1]) if len(line) > 1 and line[0].startswith(b"HTTP/") and line[1].isdigit() else None
