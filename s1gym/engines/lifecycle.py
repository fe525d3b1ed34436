"""What happens to the engines' process-wide state when the process forks or exits: one registry.

Engines keep state per process: the pools of live games (:mod:`s1gym.engines.base`), the JVM
(:mod:`s1gym.engines.jvm`), the browsers and Playwright drivers (:mod:`s1gym.engines.browser`). Two
moments concern all of them, and this module is the one place that hooks them:

- **fork**: a child made by ``os.fork`` (an async vector env's worker, a ``fork`` multiprocessing
  start) inherits the parent's pools, sockets and pipes. Talking to them from the child interleaves two
  processes on one connection, and freeing them runs finalizers that close the *parent's* objects. A
  module hands :func:`at_fork_in_child` a function that forgets what it inherited (keeping a reference
  to it, so that no finalizer runs), and the child starts afresh;
- **exit**: engines that hold other processes (a browser, a desktop app) are closed politely, in
  :data:`EXIT_STAGES` order: graphics contexts first (offscreen renderers' GL contexts), then the pools
  (their engines close pages and windows while the browser is still up), then the browsers, then the
  JVM. A module hands :func:`at_exit` a function and its stage.

The registry installs one ``os.register_at_fork`` and one ``atexit`` handler, when the first hook is
registered (so at import of the first engine module; importing a module twice registers nothing twice).
A library that registers an exit handler of its own on first use, which must run after s1gym's hooks
(an EGL binding that ends EGL at exit: the GL contexts made on it must be freed before), is followed by
:func:`exit_before_later_handlers`.
"""

from __future__ import annotations

import atexit
import os
import traceback
from collections.abc import Callable

__all__ = ["EXIT_STAGES", "at_exit", "at_fork_in_child", "exit_before_later_handlers"]

#: The order in which exit hooks run, by stage.
EXIT_STAGES = ("graphics", "pools", "browsers", "jvm")

_fork_hooks: list[Callable[[], None]] = []
_exit_hooks: dict[str, list[Callable[[], None]]] = {stage: [] for stage in EXIT_STAGES}
_installed = False


def at_fork_in_child(hook: Callable[[], None]) -> Callable[[], None]:
    """Run ``hook`` in every child this process forks (in registration order); returns ``hook``."""
    _install()
    if hook not in _fork_hooks:
        _fork_hooks.append(hook)
    return hook


def at_exit(stage: str, hook: Callable[[], None]) -> Callable[[], None]:
    """Run ``hook`` at interpreter exit in ``stage`` (one of :data:`EXIT_STAGES`); returns ``hook``."""
    if stage not in _exit_hooks:
        raise ValueError(f"unknown exit stage {stage!r}; the stages are {', '.join(EXIT_STAGES)}")
    _install()
    if hook not in _exit_hooks[stage]:
        _exit_hooks[stage].append(hook)
    return hook


def exit_before_later_handlers() -> None:
    """Register the exit handler again, so that it runs before every ``atexit`` handler registered so far
    (``atexit`` runs the last registered first): called right after a library registered its own handler
    on first use, one that must run after the hooks (its resources are freed by them first)."""
    _install()
    atexit.unregister(_run_exit_hooks)
    atexit.register(_run_exit_hooks)


def _run_fork_hooks() -> None:
    for hook in list(_fork_hooks):
        _run(hook)


def _run_exit_hooks() -> None:
    for stage in EXIT_STAGES:
        for hook in list(_exit_hooks[stage]):
            _run(hook)


def _run(hook: Callable[[], None]) -> None:
    """One hook; its failure is printed and the others still run (as separate atexit handlers would)."""
    try:
        hook()
    except Exception:  # noqa: BLE001 - at fork and exit there is no caller to raise to
        traceback.print_exc()


def _install() -> None:
    global _installed
    if not _installed:
        _installed = True
        os.register_at_fork(after_in_child=_run_fork_hooks)
        atexit.register(_run_exit_hooks)
