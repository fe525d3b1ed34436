"""A scripted HTTP server on 127.0.0.1 for tests of HTTP clients (real sockets, no mocks)."""

from __future__ import annotations

import threading
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
