"""One live game instance: the :class:`Engine` interface a task's engine implements.

A task whose game lives outside Python (a JVM, a compiled planner library, a browser page, a desktop
window) wraps one instance of it in an :class:`Engine`; :class:`~s1gym.engines.base.EngineEnv` pools
them and forks on top of them (the seam is described in :mod:`s1gym.engines.base`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

__all__ = ["Engine"]


class Engine:
    """One live game instance. Subclasses implement ``new_game``, ``step``, ``close`` and,
    when ``can_snapshot``, ``snapshot`` and ``restore``."""

    #: ``snapshot()``/``restore()`` are implemented and cheap (about one step).
    can_snapshot: ClassVar[bool] = False
    #: ``step_children()`` is implemented: a snapshot's children stepped in one call (see there).
    can_step_children: ClassVar[bool] = False
    #: Closed by :func:`~s1gym.engines.pool.close_pools` at interpreter exit. Engines that hold other processes (a browser, a
    #: desktop) must be; an engine living inside this process (a loaded C library) should not, since
    #: unloading it while the interpreter tears down its objects can crash the exit.
    close_at_exit: ClassVar[bool] = True
    #: What the engine is, as an :class:`~s1gym.errors.EngineCrashed` names it ("TextWorldExpress JVM").
    label: ClassVar[str] = ""

    def new_game(self, game: Any) -> Any:
        """Start ``game``; return the engine's first answer (whatever the env's ``_on_start`` reads)."""
        raise NotImplementedError

    def step(self, move: str) -> Any:
        """Play ``move``; return the engine's answer (whatever the env's ``_on_step`` reads)."""
        raise NotImplementedError

    def replay(self, game: Any, moves: tuple[str, ...]) -> None:
        """Bring this engine to the state after ``moves`` from the start of ``game`` (engines may
        override it with something cheaper than ``new_game`` plus ``step`` per move)."""
        self.new_game(game)
        for move in moves:
            self.step(move)

    def snapshot(self) -> Any:
        """The current state as a value ``restore`` accepts (only when ``can_snapshot``)."""
        raise NotImplementedError(f"{type(self).__name__} cannot snapshot its state")

    def restore(self, game: Any, snapshot: Any) -> None:
        """Bring this engine to ``snapshot`` of ``game`` (only when ``can_snapshot``)."""
        raise NotImplementedError(f"{type(self).__name__} cannot restore a snapshot")

    def step_children(self, game: Any, snapshot: Any, moves: Sequence[str]) -> list[tuple[Any, Any]] | None:
        """For each of ``moves``, the state after it from ``snapshot`` of ``game``: ``(the child's snapshot, the
        engine's answer to the move)`` (what ``step`` returns), in order, in one call into the engine (only
        when ``can_step_children``); ``None`` when the engine does not hold ``snapshot`` (the caller then steps
        the children one by one). Afterwards the engine holds ``snapshot`` (as after ``restore``)."""
        raise NotImplementedError(f"{type(self).__name__} cannot step children in one call")

    def alive(self) -> bool:
        """False once the engine cannot be used any more (its process died); the pool drops it."""
        return True

    def crashed(self, exc: BaseException) -> bool:
        """Whether ``exc``, raised by a call into this engine, means the engine is gone (default: it is not
        :meth:`alive` any more). The env then ends the episode with :class:`~s1gym.errors.EngineCrashed`."""
        return not self.alive()

    def close(self) -> None:
        """Release the engine's resources."""
