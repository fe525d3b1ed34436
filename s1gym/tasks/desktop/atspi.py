"""A small AT-SPI client over D-Bus, on ``jeepney`` (pure Python; no GObject introspection).

AT-SPI is how Linux assistive technologies read and operate GTK and Qt apps:
each app exposes its widget tree on the accessibility bus (a D-Bus bus of its
own, found by asking ``org.a11y.Bus`` on the session bus), one object per
widget with a role, a name, a state set and interfaces (``Text``, ``Action``,
``Component``, ...). This module reads that tree and presses buttons; it knows
nothing about any particular app.

Calls are plain D-Bus method calls with a timeout; :meth:`Atspi.calls` sends a
batch before reading any reply (one round trip for, say, the states of every
button of a window). A D-Bus error reply raises :class:`AtspiError`.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from jeepney import DBusAddress, HeaderFields, MessageType, new_method_call
from jeepney.io.blocking import DBusConnection, open_dbus_connection

from s1gym.errors import S1GymError

__all__ = ["ACCESSIBLE", "STATE", "Atspi", "AtspiError", "Call", "Node", "states_of"]

ACCESSIBLE = "org.a11y.atspi.Accessible"
REGISTRY = "org.a11y.atspi.Registry"
ROOT_PATH = "/org/a11y/atspi/accessible/root"

#: AT-SPI state numbers (``AtspiStateType``) the desktop tasks read.
STATE = {"sensitive": 24, "showing": 25}


class AtspiError(S1GymError, RuntimeError):
    """An AT-SPI call failed (the app is gone, hung, or the object does not exist)."""


class Node(NamedTuple):
    """One accessible object: the app's bus name and the object's path."""

    bus: str
    path: str


class Call(NamedTuple):
    """One method call on an accessible object, for :meth:`Atspi.calls`."""

    node: Node
    interface: str
    method: str
    signature: str | None = None
    body: tuple = ()


def states_of(bits: Sequence[int]) -> frozenset[int]:
    """The state numbers set in AT-SPI's two-word state bitfield."""
    return frozenset(i for i in range(64) if (bits[i // 32] >> (i % 32)) & 1)


class Atspi:
    """A connection to the accessibility bus of the desktop whose session bus is ``session_bus``."""

    def __init__(self, session_bus: str, *, timeout: float = 30.0) -> None:
        self.timeout = timeout
        session = open_dbus_connection(session_bus)
        try:
            reply = session.send_and_get_reply(
                new_method_call(DBusAddress("/org/a11y/bus", "org.a11y.Bus", "org.a11y.Bus"), "GetAddress"),
                timeout=timeout,
            )
            self.address = _unwrap(reply, "org.a11y.Bus.GetAddress")[0]
        finally:
            session.close()
        self.conn: DBusConnection = open_dbus_connection(self.address)

    def close(self) -> None:
        self.conn.close()

    # ------------------------------------------------------------------ calls
    def call(self, node: Node, interface: str, method: str, signature: str | None = None, body: tuple = ()):
        return self.calls([Call(node, interface, method, signature, body)])[0]

    def calls(self, batch: Sequence[Call]) -> list[tuple]:
        """The reply bodies of ``batch``, in order; every call is sent before the first reply is read."""
        serials = {}
        for i, c in enumerate(batch):
            address = DBusAddress(c.node.path, c.node.bus, c.interface)
            msg = new_method_call(address, c.method, c.signature, c.body)
            serial = next(self.conn.outgoing_serial)
            self.conn.send(msg, serial=serial)
            serials[serial] = i
        out: list[Any] = [None] * len(batch)
        deadline = time.monotonic() + self.timeout
        left = len(batch)
        while left:
            try:
                msg = self.conn.receive(timeout=max(deadline - time.monotonic(), 0.0))
            except TimeoutError:
                c = batch[min(i for i, o in enumerate(out) if o is None)]
                what = f"{c.interface}.{c.method} on {c.node}"
                raise AtspiError(f"no reply to {what} within {self.timeout} s") from None
            i = serials.pop(msg.header.fields.get(HeaderFields.reply_serial, -1), None)
            if i is None:
                continue  # a signal or a late reply to an abandoned call
            c = batch[i]
            out[i] = _unwrap(msg, f"{c.interface}.{c.method} on {c.node}")
            left -= 1
        return out

    # ----------------------------------------------------------- the tree
    def applications(self) -> list[Node]:
        """The apps registered on the accessibility bus (their root objects)."""
        kids = self.call(Node(REGISTRY, ROOT_PATH), ACCESSIBLE, "GetChildren")[0]
        return [Node(*k) for k in kids]

    def pid_of(self, bus_name: str) -> int:
        addr = DBusAddress("/org/freedesktop/DBus", "org.freedesktop.DBus", "org.freedesktop.DBus")
        reply = self.conn.send_and_get_reply(
            new_method_call(addr, "GetConnectionUnixProcessID", "s", (bus_name,)), timeout=self.timeout
        )
        return _unwrap(reply, "GetConnectionUnixProcessID")[0]

    def application_of(self, pid: int) -> Node | None:
        """The root of the app whose process is ``pid``, once it has registered."""
        for app in self.applications():
            try:
                if self.pid_of(app.bus) == pid:
                    return app
            except AtspiError:
                continue  # an app that just went away
        return None

    def walk(self, root: Node, prune: Iterable[str] = ()) -> list[dict[str, Any]]:
        """Every object under ``root`` (breadth first) as ``{node, role, name, description, states,
        depth, parent}``; the children of objects whose role is in ``prune`` are not visited (menus,
        say, with hundreds of items)."""
        prune = set(prune)
        out: list[dict[str, Any]] = []
        level: list[tuple[Node, Node | None]] = [(root, None)]
        depth = 0
        while level:
            batch: list[Call] = []
            for node, _ in level:
                batch += [
                    Call(node, ACCESSIBLE, "GetRoleName"),
                    Call(node, "org.freedesktop.DBus.Properties", "Get", "ss", (ACCESSIBLE, "Name")),
                    Call(node, "org.freedesktop.DBus.Properties", "Get", "ss", (ACCESSIBLE, "Description")),
                    Call(node, ACCESSIBLE, "GetState"),
                    Call(node, ACCESSIBLE, "GetChildren"),
                ]
            replies = self.calls(batch)
            nxt: list[tuple[Node, Node | None]] = []
            for k, (node, parent) in enumerate(level):
                role, name, desc, state, kids = (r[0] for r in replies[5 * k : 5 * k + 5])
                item = {
                    "node": node,
                    "role": role,
                    "name": name[1],
                    "description": desc[1],
                    "states": states_of(state),
                    "depth": depth,
                    "parent": parent,
                }
                out.append(item)
                if role not in prune:
                    nxt += [(Node(*kid), node) for kid in kids]
            level, depth = nxt, depth + 1
        return out

    # --------------------------------------------------------- interfaces
    def attribute_run(self, node: Node, offset: int) -> tuple[dict[str, str], int, int]:
        """The text attributes at ``offset`` that differ from the defaults and the run they span."""
        attrs, start, end = self.call(node, "org.a11y.atspi.Text", "GetAttributeRun", "ib", (offset, False))
        return dict(attrs), start, end

    def extents(self, node: Node) -> tuple[int, int, int, int]:
        """``(x, y, width, height)`` on the screen."""
        return tuple(self.call(node, "org.a11y.atspi.Component", "GetExtents", "u", (0,))[0])

    def do_action(self, node: Node, index: int = 0) -> bool:
        """Perform action ``index`` (a button's 'click'); GTK 3 clicks before it replies."""
        return bool(self.call(node, "org.a11y.atspi.Action", "DoAction", "i", (index,))[0])


def _unwrap(msg, what: str) -> tuple:
    if msg.header.message_type == MessageType.error:
        name = msg.header.fields.get(HeaderFields.error_name, "error")
        detail = msg.body[0] if msg.body else ""
        raise AtspiError(f"{what}: {name}: {detail}")
    return msg.body
