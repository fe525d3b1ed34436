"""Registers every s1gym task with Gymnasium under the ``s1/`` namespace.

Envs are registered with ``order_enforce=False`` and ``disable_env_checker=True``
and no ``max_episode_steps`` (each task handles its own step limit), so
``gym.make`` returns the task env itself and ``env.fork()`` is a direct call.
"""

from __future__ import annotations

import gymnasium as gym

from s1gym.tasks import alfworld, desktop, games, robot, text, twx, web

#: env id -> entry point ("module:Class"), from each task family's ``TASKS``. Imported lazily by gym.make.
TASKS: dict[str, str] = {**twx.TASKS, **games.TASKS, **text.TASKS, **alfworld.TASKS, **web.TASKS, **desktop.TASKS,
                        **robot.TASKS}


#: Ids that name one task of a family: id -> (the family's id, its options), from each family's
#: ``ALIASES`` (the MiniWoB++ pages: ``s1/MiniWoB-<task>-v0``). Not in TASKS: ``s1 list`` and the contract
#: tests go by family.
ALIASES: dict[str, tuple[str, dict[str, str]]] = {**web.ALIASES}


def aliases() -> dict[str, tuple[str, dict[str, str]]]:
    return ALIASES


def register_all() -> None:
    for env_id, entry_point in TASKS.items():
        if env_id in gym.registry:
            continue
        gym.register(
            id=env_id,
            entry_point=entry_point,
            order_enforce=False,
            disable_env_checker=True,
        )
    for env_id, (family, kwargs) in aliases().items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=TASKS[family], kwargs=kwargs, order_enforce=False, disable_env_checker=True)


def task_ids() -> list[str]:
    return list(TASKS)


def env_class(env_id: str) -> type:
    """The env class behind an id without making an env: s1gym's short names and ids, any registered
    id, or ``module:id`` (the module registers the id when imported)."""
    import importlib

    module, sep, short = env_id.partition(":")
    if sep and module != "s1gym":
        importlib.import_module(module)
        env_id = short
    else:
        try:
            env_id = resolve_id(env_id)
        except ValueError:
            if env_id not in gym.registry:
                raise
    entry = TASKS.get(env_id) or gym.spec(env_id).entry_point
    if isinstance(entry, str):
        mod, _, name = entry.partition(":")
        return getattr(importlib.import_module(mod), name)
    if isinstance(entry, type):
        return entry
    raise ValueError(f"{env_id}: its entry point {entry!r} is not a class")


def env_class_or_none(env_id: str) -> type | None:
    """:func:`env_class`, or ``None`` when the id cannot be resolved (readers of old job folders)."""
    try:
        return env_class(env_id)
    except Exception:  # noqa: BLE001 - an unknown or unimportable task only loses its task metrics
        return None


def resolve_id(task: str) -> str:
    """Accept ``s1/CookingWorld-v0``, ``CookingWorld-v0`` or ``CookingWorld`` (any case), and the
    per-task aliases (``MiniWoB-click-button``)."""
    wanted = task.lower().removeprefix("s1gym:").removeprefix("s1/")
    for env_id in [*TASKS, *aliases()]:
        short = env_id.removeprefix("s1/")
        if wanted in (short.lower(), short.lower().removesuffix("-v0")):
            return env_id
    known = ", ".join(env_id.removeprefix("s1/").removesuffix("-v0") for env_id in TASKS)
    raise ValueError(f"unknown task {task!r}; known tasks: {known}")
