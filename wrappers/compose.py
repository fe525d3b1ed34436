"""``wrap(policy, ["search", "lookahead"])``: build a wrapper stack by name (what ``s1 run --wrap`` uses)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from s1gym.core import Policy
from s1gym.policies.registry import Registry

from ._base import Wrapper
from .lookahead import Lookahead
from .rethink import Rethink
from .search import Search

#: name -> wrapper class; the names ``wrap``, the command line and the runner accept (checked here only).
WRAPPERS: Registry[type[Wrapper]] = Registry(
    "wrapper", {"search": Search, "lookahead": Lookahead, "rethink": Rethink}
)


#: Options every listed wrapper that accepts them receives (not only the outermost).
_SHARED_OPTIONS = frozenset({"allow_oracle"})


def wrap(policy: Policy, names: Sequence[str] | str, **kwargs: Any) -> Policy:
    """Wrap ``policy`` in the named wrappers, outermost first.

    ``wrap(p, ["search", "lookahead"])`` is ``Search(Lookahead(p))``; a comma
    separated string (``"search,lookahead"``) works too. Each keyword goes to
    the wrapper that accepts it (``budget`` -> Search, ``planner`` -> Rethink);
    a keyword no listed wrapper accepts is an error, not silently ignored, and
    so is an order that cannot work (:class:`WrapperOrderError`, e.g. Search
    around Rethink).
    """
    wanted = WRAPPERS.keys_of(names)
    if len(set(wanted)) != len(wanted):
        raise ValueError(f"each wrapper may appear once, got {list(wanted)}")
    routed: dict[str, dict[str, Any]] = {n: {} for n in wanted}
    for key, value in kwargs.items():
        takers = [n for n in wanted if key in WRAPPERS[n].option_names()]
        if not takers:
            owners = [n for n, cls in WRAPPERS.items() if key in cls.option_names()]
            hint = f"it belongs to {', '.join(owners)}, which is not in {list(wanted)}" if owners else (
                "no wrapper has that option"
            )
            raise ValueError(f"wrapper option {key!r} was given but {hint}")
        for taker in takers if key in _SHARED_OPTIONS else takers[:1]:
            routed[taker][key] = value
    for name in reversed(wanted):
        policy = WRAPPERS[name](policy, **routed[name])
    return policy
