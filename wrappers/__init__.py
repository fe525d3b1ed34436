"""Policy wrappers (``s1gym.wrappers``): System Two work layered on any decision model.

Each wrapper is a Policy that holds a Policy, so they compose:
``Search(Lookahead(Local()))``, ``Rethink(Lookahead(Chat()), planner=chat)``,
``Search(Uniform())``, or by name ``wrap(policy, ["search", "lookahead"])``.
"""

from ._base import OracleForkError, Wrapper, WrapperOrderError
from .compose import WRAPPERS, wrap
from .lookahead import Lookahead
from .rethink import Rethink
from .rethink_planner import PLANNERS, ForkPlanner
from .search import (
    DEFAULT_PRIORITY,
    PRIORITIES,
    Search,
    SearchConfig,
    SearchGuidance,
    SearchLimits,
    SearchTies,
    log_priority,
)

__all__ = [
    "DEFAULT_PRIORITY",
    "ForkPlanner",
    "OracleForkError",
    "PLANNERS",
    "PRIORITIES",
    "WRAPPERS",
    "Lookahead",
    "Rethink",
    "Search",
    "SearchConfig",
    "SearchGuidance",
    "SearchLimits",
    "SearchTies",
    "Wrapper",
    "WrapperOrderError",
    "log_priority",
    "wrap",
]
