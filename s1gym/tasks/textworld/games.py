"""TextWorld's games for s1/TextWorld-v0: the four challenges, their difficulty settings, the seed folds and
the on-disk cache of generated games.

A game is named by ``(challenge, difficulty, game seed)`` and made by TextWorld's own generator in-process
(what ``tw-make <challenge> --seed <game seed> ...`` runs: ``textworld.challenges`` then
``textworld.generator.compile_game``, Inform 7 compilers from the wheel), once: the ``.z8`` and ``.json``
land in the cache folder (``$S1GYM_TEXTWORLD_GAMES``, else ``<s1gym cache>/textworld/games``; the env's
``cache_dir`` option overrides both) and every later reset loads them. Generation writes into a scratch
folder and renames the finished files into place, so processes generating the same game at once never see
half a file. :func:`generate` makes many games ahead of a job, with a progress bar.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from s1gym.datasets import cache_root

__all__ = ["CHALLENGES", "DIFFICULTIES", "FOLDS", "GameSpec", "cache_folder", "game_seed", "generate",
           "make_game", "spec_for"]

#: The four challenges, in the order the default draw uses (seed mod 4).
CHALLENGES = ("tw-simple", "tw-cooking", "tw-treasure_hunter", "tw-coin_collector")
DIFFICULTIES = ("easy", "medium", "hard")

#: Each challenge's ``tw-make`` settings by difficulty (medium is the default).
SETTINGS: Mapping[str, Mapping[str, Mapping[str, Any]]] = {
    "tw-simple": {
        "easy": {"rewards": "dense", "goal": "detailed", "test": False},
        "medium": {"rewards": "balanced", "goal": "detailed", "test": False},
        "hard": {"rewards": "sparse", "goal": "brief", "test": False},
    },
    "tw-cooking": {
        "easy": {"recipe": 1, "take": 1, "go": 1, "open": True, "cook": True, "cut": True},
        "medium": {"recipe": 2, "take": 2, "go": 6, "open": True, "cook": True, "cut": True},
        "hard": {"recipe": 3, "take": 3, "go": 9, "open": True, "cook": True, "cut": True, "drop": True},
    },
    "tw-treasure_hunter": {"easy": {"level": 5}, "medium": {"level": 15}, "hard": {"level": 25}},
    "tw-coin_collector": {"easy": {"level": 5}, "medium": {"level": 15}, "hard": {"level": 30}},
}
_COOKING_DEFAULTS = {"drop": False, "recipe_seed": 0, "split": None, "open": False, "cook": False, "cut": False}

#: Seeds pick game seeds by fold: game seed = offset + seed, so train and test never share a game.
FOLDS: Mapping[str, int] = {"train": 0, "dev": 1_000_000, "test": 2_000_000}
#: Largest seed a fold takes (the folds' game seeds stay apart).
MAX_SEED = 999_999
#: Environment variable naming the games folder.
CACHE_ENV = "S1GYM_TEXTWORLD_GAMES"


@dataclass(frozen=True)
class GameSpec:
    """One generated game: its challenge, difficulty and TextWorld seed."""

    challenge: str
    difficulty: str
    seed: int

    @property
    def stem(self) -> str:
        return f"{self.challenge}-{self.difficulty}-{self.seed}"

    def settings(self) -> dict[str, Any]:
        base = dict(_COOKING_DEFAULTS) if self.challenge == "tw-cooking" else {}
        base.update(SETTINGS[self.challenge][self.difficulty])
        return base


def check_choice(name: str, value: Any, allowed: Iterable[str], task: str) -> str:
    allowed = tuple(allowed)
    if value not in allowed:
        raise ValueError(f"{task}: {name} must be one of {list(allowed)}, got {value!r}")
    return value


def game_seed(seed: int, fold: str) -> int:
    """TextWorld's seed of s1gym seed ``seed`` in ``fold``."""
    if not 0 <= seed <= MAX_SEED:
        raise ValueError(f"TextWorld: seed must be in 0..{MAX_SEED} (each fold has its own games), got {seed}")
    return FOLDS[fold] + seed


def spec_for(seed: int, fold: str, challenge: str | None, difficulty: str) -> GameSpec:
    """The game seed ``seed`` names: ``challenge=None`` draws the challenge from the seed (seed mod 4)."""
    gs = game_seed(seed, fold)
    return GameSpec(challenge or CHALLENGES[seed % len(CHALLENGES)], difficulty, gs)


def cache_folder(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where generated games live: ``cache_dir``, else ``$S1GYM_TEXTWORLD_GAMES``, else s1gym's cache."""
    if cache_dir is not None:
        return Path(cache_dir)
    env = os.environ.get(CACHE_ENV)
    return Path(env) if env else cache_root() / "textworld" / "games"


def make_game(spec: GameSpec, cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The ``.z8`` of ``spec``, generated and compiled the first time it is asked for."""
    folder = cache_folder(cache_dir)
    target = folder / f"{spec.stem}.z8"
    if target.is_file() and target.with_suffix(".json").is_file():
        return target
    import textworld
    import textworld.challenges

    folder.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{spec.stem}-", dir=folder))
    try:
        options = textworld.GameOptions()
        options.seeds = spec.seed
        options.path = str(scratch / f"{spec.stem}.z8")
        options.file_ext = ".z8"
        options.force_recompile = True
        make = textworld.challenges.CHALLENGES[spec.challenge][1]
        with warnings.catch_warnings():  # compiling loads the game in jericho, which knows only its own list
            warnings.simplefilter("ignore")
            game = make(settings=spec.settings(), options=options)
            textworld.generator.compile_game(game, options)
        os.replace(scratch / f"{spec.stem}.json", target.with_suffix(".json"))
        os.replace(scratch / f"{spec.stem}.z8", target)  # last: a .z8 in place means the pair is complete
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return target


def generate(specs: Iterable[GameSpec], cache_dir: str | os.PathLike[str] | None = None,
             progress: bool = True) -> list[Path]:
    """Generate every game of ``specs`` not yet in the cache (a progress bar when ``progress``)."""
    specs = list(specs)
    folder = cache_folder(cache_dir)
    todo = [s for s in specs if not (folder / f"{s.stem}.z8").is_file()]
    if todo and progress:
        from tqdm import tqdm

        for spec in tqdm(todo, desc="generating TextWorld games", unit="game"):
            make_game(spec, cache_dir)
    else:
        for spec in todo:
            make_game(spec, cache_dir)
    return [folder / f"{s.stem}.z8" for s in specs]
