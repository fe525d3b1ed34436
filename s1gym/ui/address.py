"""Where ``s1 serve`` may listen: whether a host is loopback, and the errors for an address it must not
or cannot listen on (:class:`InsecureServeError`, :class:`PortError`), each naming the fix.

A :class:`PortError` for a busy port names the process holding it when this user may see it
(Linux ``/proc``), so the message says what to stop.
"""

from __future__ import annotations

import errno
import ipaddress
import os
import socket

from s1gym.errors import S1GymError

__all__ = ["InsecureServeError", "PortError", "is_loopback"]


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only (127.0.0.0/8, ::1, ``localhost``)."""
    if host.strip().lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name other than localhost: it may resolve anywhere
        return False


class InsecureServeError(S1GymError, ValueError):
    """``s1 serve`` asked to listen beyond loopback with no API key: anyone reaching the port could use it."""

    def __init__(self, host: str) -> None:
        super().__init__(
            f"refusing to serve on {host!r} without an API key: anyone who reaches the port could spend the "
            "policy's hosted-model key; pass --api-key KEY (or set S1_SERVE_API_KEY), listen on --host 127.0.0.1, "
            "or pass --insecure to accept any key"
        )
        self.host = host


class PortError(S1GymError, OSError):
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

