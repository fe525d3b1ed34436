"""The TextWorldExpress games as rows: one :class:`TWXGame` per game (its TWX name, parameters as gym.make
options, candidate cap N, what the player remembers), all played by the one env class
:class:`~s1gym.tasks.twx.env.TWXEnv`. Adding a TWX game is adding a row to :data:`GAMES` (tale-suite
registers its TWX games the same way). This module is data only: ``import s1gym`` reads it to register the
ids without loading the engine."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from s1gym.core.estimates import TokenReader, intercept_only
from s1gym.family import GAIN_PATIENCE

__all__ = ["GAMES", "Param", "Preset", "TWXGame", "doors", "inventory_limit"]


@dataclass(frozen=True)
class Param:
    """A TWX game parameter exposed as a gym.make option."""

    option: str
    twx: str
    lo: int
    hi: int
    default: int
    help: str
    boolean: bool = False

    def value(self, raw: Any, task: str) -> int:
        if self.boolean:
            if isinstance(raw, bool) or raw in (0, 1):
                return int(raw)
            raise ValueError(f"{task}: {self.option} must be True or False, got {raw!r}")
        if isinstance(raw, bool) or not isinstance(raw, int) or not (self.lo <= raw <= self.hi):
            raise ValueError(
                f"{task}: {self.option} must be an integer in {self.lo}..{self.hi}, got {raw!r}"
            )
        return int(raw)


def doors(default: int = 0) -> Param:
    return Param("include_doors", "includeDoors", 0, 1, default, "rooms are joined by doors to open", True)


def inventory_limit(default: int = 0) -> Param:
    return Param(
        "limit_inventory_size", "limitInventorySize", 0, 1, default, "the inventory holds a few items only", True
    )


@dataclass(frozen=True)
class Preset:
    """An option that sets several parameters at once (CookingWorld's ``size``), each choice with its cap N.

    Options given by hand override the choice's parameters; then (or with doors) the cap is ``custom_cap``,
    since the measured caps hold for the presets only."""

    option: str
    choices: Mapping[str, Mapping[str, int]]
    caps: Mapping[str, int]
    default: str
    custom_cap: int
    help: str


#: A game whose cap N and step limit follow from its options: options -> (max_candidates, max_steps), either
#: ``None`` to keep the class default.
Limits = Callable[[Mapping[str, Any]], "tuple[int | None, int | None]"]


@dataclass(frozen=True)
class TWXGame:
    """One TextWorldExpress game as an s1gym task (``s1/<task_name>-v0``): a row of :data:`GAMES`."""

    #: s1gym's name of the task (the gym id is ``s1/<task_name>-v0``, the class ``<task_name>Env``).
    task_name: str
    #: TWX's game name (``cookingworld``, ``coin``, ...).
    game: str
    #: One line: what the player does (the env class's docstring, ``s1 list``).
    doc: str
    #: The candidate cap N, over the most candidates measured (docs/benchmarks.md, "Figures behind the code").
    cap: int = 8
    #: The game's parameters exposed as options.
    params: tuple[Param, ...] = ()
    #: Moves whose feedback the player keeps in the observation (the recipe, the map, the math problem).
    remembered_moves: tuple[str, ...] = ()
    #: Keep only the latest remembered text (PeckingOrder's book names the current instruction only).
    remember_latest: bool = False
    #: Only one live game per JVM (TWX Sorting: two live games change each other's objects).
    exclusive: bool = False
    #: The feedback (Simon's order) is part of the state.
    feedback_in_state: bool = False
    stall_patience: int | None = 6
    #: Search's gain patience here (:attr:`s1gym.family.Task.gain_patience`)
    gain_patience: float | None = GAIN_PATIENCE
    preset: Preset | None = None
    limits: Limits | None = None
    #: Help of options beyond the parameters (shown after them; overrides the common help of the same option).
    extra_help: Mapping[str, str] = field(default_factory=dict)
    #: How the game's progress estimate reads a situation; ``None``: the TWX tokens
    #: (:func:`s1gym.tasks.twx.tokens.progress_tokens`).
    progress_tokens: TokenReader | None = None
    #: Local's dense weights on this game when it plays without a fitted model (``"module:ATTR"``)
    local_weights: str | None = None

    @property
    def gym_id(self) -> str:
        return f"s1/{self.task_name}-v0"

    @property
    def class_name(self) -> str:
        return f"{self.task_name}Env"

    @property
    def model_file(self) -> str:
        """The packaged file that holds Local's model of the game and its progress estimate."""
        return f"local_{self.task_name.lower()}.json"


def _simon_says_limits(options: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """TWX lists every order and distractor as a move; a game of n orders takes at least n moves."""
    length = options.get("game_length", 5)
    distractors = options.get("num_distractors", 3)
    cap = steps = None
    if isinstance(length, int) and isinstance(distractors, int):
        cap = max(16, length + distractors + 8)
    if isinstance(length, int):
        steps = max(100, 2 * length)
    return cap, steps


_COOKING_SIZES = Preset(
    "size",
    {
        "small": {"num_locations": 1, "num_ingredients": 1, "num_distractors": 2},
        "medium": {"num_locations": 3, "num_ingredients": 2, "num_distractors": 5},
        "large": {"num_locations": 6, "num_ingredients": 3, "num_distractors": 5},
    },
    caps={"small": 128, "medium": 192, "large": 256},
    default="medium",
    custom_cap=256,
    help=(
        "small (1 room, 1 ingredient, 2 distractors), medium (3, 2, 5; default) or large (6, 3, 5); no doors"
    ),
)

#: Every TWX game s1gym registers, in the order ``s1 list`` shows them.
GAMES: tuple[TWXGame, ...] = (
    TWXGame(
        "CookingWorld", "cookingworld",
        "TWX CookingWorld: find the recipe's ingredients, cut and cook them, prepare and eat the meal.",
        cap=_COOKING_SIZES.caps["medium"],
        params=(
            Param("num_locations", "numLocations", 1, 11, 3, "rooms (1-11)"),
            Param("num_ingredients", "numIngredients", 1, 5, 2, "recipe ingredients (1-5)"),
            Param("num_distractors", "numDistractorItems", 0, 10, 5, "distractor items (0-10)"),
            doors(0),
            inventory_limit(0),
        ),
        remembered_moves=("read cookbook",),
        preset=_COOKING_SIZES,
        # As shipped, this estimate was read with ALFWorld's tokens (its file names no ``progress_tokens``),
        # of which only ``*`` is among its weights: the estimate is the constant ``w["*"]``. Kept so Search's
        # CookingWorld figures reproduce; deleting this reads it with the TWX tokens it was fitted on.
        progress_tokens=intercept_only,
        local_weights="s1gym.tasks.twx.cooking_weights:COOKING_WEIGHTS",
        # a search commits at its first gain: on hard games the same wins with 0.55-0.67x the calls of 1.0
        # (train 0-7, test 150-169 and the main job's 100-129; docs/benchmarks.md, "Calls after a gain")
        gain_patience=0.0,
    ),
    TWXGame(
        "CoinCollector", "coin", "TWX Coin Collector: explore the house and take the coin.",
        cap=32,
        params=(
            Param("num_locations", "numLocations", 1, 11, 11, "rooms (1-11)"),
            Param("num_distractors", "numDistractorItems", 0, 10, 0, "distractor items (0-10)"),
            doors(1),
            inventory_limit(1),
        ),
    ),
    TWXGame(
        "TWC", "twc", "TWX TextWorld Commonsense: put the misplaced items where they belong.",
        cap=96,
        params=(
            Param("num_locations", "numLocations", 1, 3, 3, "rooms (1-3)"),
            Param("num_items", "numItemsToPutAway", 1, 4, 4, "items to put away (1-4)"),
            doors(0),
            inventory_limit(0),
        ),
    ),
    TWXGame(
        "MapReader", "mapreader", "TWX Map Reader: read the map, fetch the coin, bring it to the box.",
        cap=64,
        params=(
            Param("num_locations", "numLocations", 2, 30, 15, "rooms (2-30)"),
            Param("max_distance", "maxDistanceApart", 1, 8, 4, "most rooms between coin and box (1-8)"),
            Param(
                "max_distractors", "maxDistractorItemsPerLocation", 0, 3, 3, "most distractor items a room (0-3)"
            ),
            doors(0),
            inventory_limit(0),
        ),
        remembered_moves=("read map",),
    ),
    TWXGame(
        "Arithmetic", "arithmetic",
        "TWX Arithmetic: solve the math problem, put the item with that quantity in the box.",
        cap=96,
        remembered_moves=("read math problem",),
    ),
    TWXGame(
        "Sorting", "sorting", "TWX Sorting: put the items in the box from the smallest quantity up.",
        cap=64,
        exclusive=True,
    ),
    TWXGame(
        "SimonSays", "simonsays", "TWX Simon Says: do exactly what Simon says.",
        params=(
            Param("game_length", "gameLength", 1, 1000, 5, "orders in a game (1-1000)"),
            Param("num_distractors", "numDistractors", 0, 5, 3, "distractor moves (0-5)"),
        ),
        feedback_in_state=True,
        stall_patience=None,
        limits=_simon_says_limits,
        extra_help={"max_candidates": "the candidate cap N; default game_length + num_distractors + 8"},
    ),
    TWXGame(
        "PeckingOrder", "peckingorder",
        "TWX Pecking Order: read the instructions book and follow it, again and again.",
        cap=48,
        remembered_moves=("read instructions book",),
        remember_latest=True,
    ),
)
