"""s1/TextWorld-v0: games made by TextWorld's generator, played on TextWorld's interpreter and state tracker."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from typing import Any, ClassVar

from s1gym.core import Progress, S1Env
from s1gym.tasks.textworld.games import (
    CHALLENGES,
    DIFFICULTIES,
    FOLDS,
    MAX_SEED,
    check_choice,
    make_game,
    spec_for,
)
from s1gym.tasks.textworld.runtime import Play, runtime_for

__all__ = ["TextWorldEnv"]

#: Moves the ``hygiene`` rule leaves out: they change nothing the observation does not already show.
HYGIENE_VERBS = ("look", "inventory", "examine")
#: The one ``examine`` the rule keeps: the cookbook holds the recipe (tw-cooking).
COOKBOOK = "examine cookbook"
_BLANKS = re.compile(r"\n\s*\n+")


def clean(text: str) -> str:
    """The game's text as printable ASCII, blank-line runs folded, trimmed."""
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = "".join(ch for ch in text if ch.isprintable() or ch == "\n")
    return _BLANKS.sub("\n\n", text).strip()


class TextWorldEnv(S1Env):
    """TextWorld's own games (``tw-make``'s four challenges) behind the s1gym contract.

    **Description.** ``reset(seed=s)`` plays the game TextWorld's generator makes for seed ``s`` of the
    fold: tw-simple (the house: fetch, unlock, put), tw-cooking (read the cookbook, gather, cut, cook,
    prepare and eat the meal), tw-treasure_hunter (find the named object in a maze; taking a wrong one
    loses) or tw-coin_collector (walk a chain of rooms to the coin). A game is generated and compiled the
    first time its seed is played and cached on disk (:mod:`s1gym.tasks.textworld.games`); then a reset
    loads it. The game runs in jericho's interpreter with TextWorld's state tracker beside it
    (:mod:`s1gym.tasks.textworld.runtime`), as ``textworld.start`` runs it.

    **Action space.** ``Discrete(N)`` over TextWorld's admissible commands, sorted alphabetically. With
    ``hygiene`` (default) ``look``, ``inventory`` and ``examine ...`` are left out (the observation already
    holds the room, the inventory and what examining shows is flavour), except ``examine cookbook`` and
    the expert's move, which are always kept. A state with more candidates than N raises
    ``TooManyCandidatesError`` (nothing is dropped silently).

    **Observation.** The last feedback; the goal (TextWorld's objective); the recipe once the cookbook
    was examined (the player remembers it); the room (TextWorld's ``description``); the inventory; the
    score; the moves.

    **Rewards.** The change of ``score`` = TextWorld's score / the game's max score, in [0, 1].

    **Starting state.** The game's start, as TextWorld's ``reset`` leaves it.

    **Episode end.** ``terminated`` when TextWorld reports ``won`` ("*** The End ***") or ``lost``
    ("*** You lost! ***"); ``truncated`` at ``max_steps`` (default 100).

    **Arguments.** ``challenge`` (one of the four, or None: seed mod 4 picks it in the order tw-simple,
    tw-cooking, tw-treasure_hunter, tw-coin_collector), ``difficulty`` (easy, medium: default, hard;
    ``games.SETTINGS`` holds the ``tw-make`` settings), ``fold`` (train: default, dev or test; each fold
    has its own games, game seed = offset + seed), ``cache_dir`` (where games are kept), ``hygiene``,
    ``max_candidates``, ``max_steps``.

    **Fork.** Exact: the interpreter's state is restored before each step from the env's own copy, the
    tracker (``GameProgression``) is copied as TextWorld's ``env.copy()`` copies it. A fork costs a
    tracker copy (a fraction of a step); docs/benchmarks.md has the measured ratio.

    **Expert.** TextWorld's policy commands (the tracker recomputes the winning policy after any move);
    on tw-cooking it first examines the cookbook when it is at hand and unread.

    **Version history.** v0: first version (TextWorld 1.7.0).
    """

    task_name: ClassVar[str] = "TextWorld"
    default_max_candidates: ClassVar[int] = 128
    default_max_steps: ClassVar[int] = 100
    option_help: ClassVar[dict[str, str]] = {
        "challenge": "tw-simple, tw-cooking, tw-treasure_hunter or tw-coin_collector (default: seed mod 4 picks)",
        "difficulty": "easy, medium (default) or hard: each challenge's tw-make settings",
        "fold": "which games the seeds pick: train (default), dev or test",
        "cache_dir": "folder of generated games (default: $S1GYM_TEXTWORLD_GAMES, else <s1gym cache>/textworld)",
        "hygiene": "leave out look, inventory and examine (default True; the expert's move is always kept)",
        "max_candidates": "candidate cap N (default 128); more raise TooManyCandidatesError",
        "max_steps": "step limit (default 100)",
    }

    def __init__(
        self,
        *,
        challenge: str | None = None,
        difficulty: str = "medium",
        fold: str = "train",
        cache_dir: str | None = None,
        hygiene: bool = True,
        max_candidates: int | None = None,
        max_steps: int | None = None,
        render_mode: str | None = None,
    ) -> None:
        super().__init__(max_candidates=max_candidates, max_steps=max_steps, render_mode=render_mode)
        if challenge is not None:
            check_choice("challenge", challenge, CHALLENGES, self.task_name)
        self.challenge_option = challenge
        self.difficulty = check_choice("difficulty", difficulty, DIFFICULTIES, self.task_name)
        self.fold = check_choice("fold", fold, FOLDS, self.task_name)
        self.cache_dir = cache_dir
        self.hygiene = bool(hygiene)
        self.challenge = ""
        self.game_seed = -1
        self._play_state: Play | None = None
        self._recipe = ""

    # ---------------------------------------------------------------- hooks
    def _new_game(self, seed: int | None, options: dict[str, Any]) -> str:
        if options:
            raise ValueError(f"{self.task_name}: reset takes no options (got {sorted(options)}); "
                             "pass challenge=, difficulty=, fold= to gym.make")
        if seed is None:
            seed = int(self.np_random.integers(0, MAX_SEED + 1))
        spec = spec_for(int(seed), self.fold, self.challenge_option, self.difficulty)
        self.challenge, self.game_seed = spec.challenge, spec.seed
        self._play_state = runtime_for(make_game(spec, self.cache_dir)).start()
        self._recipe = ""
        return ""

    @property
    def play_state(self) -> Play:
        if self._play_state is None:
            raise RuntimeError(f"{self.task_name}: call env.reset() first")
        return self._play_state

    def _legal_moves(self) -> list[str]:
        moves = self.play_state.admissible()
        if not self.hygiene:
            return moves
        keep = {COOKBOOK, self._expert_move(moves)}
        return [m for m in moves if m in keep or m.split(" ", 1)[0] not in HYGIENE_VERBS]

    def _play(self, move: str) -> str:
        feedback = clean(self.play_state.step(move))
        if move == COOKBOOK and not self._recipe:
            self._recipe = feedback
        return feedback

    def _describe(self) -> str:
        p = self.play_state
        rt = p.runtime
        lines = [f"Goal: {clean(rt.objective)}"]
        if self._recipe:
            lines.append(f"Recipe (from the cookbook): {self._recipe}")
        if p.description:
            lines.append(f"Room: {clean(p.description)}")
        if p.inventory:
            lines.append(f"Inventory: {clean(p.inventory)}")
        lines.append(f"Score: {p.score} of {rt.max_score}. Moves: {self._steps}.")
        return "\n\n".join(lines)

    def _progress(self) -> Progress:
        p = self.play_state
        return Progress(p.score / max(1, p.runtime.max_score), won=p.won, lost=p.lost)

    def _fork_into(self, clone: S1Env) -> None:
        assert isinstance(clone, TextWorldEnv)
        if self._play_state is not None:
            clone._play_state = self._play_state.copy()

    def _extra_info(self) -> dict[str, Any]:
        return {"challenge": self.challenge, "game_seed": self.game_seed}

    def state_key(self) -> str:
        """The tracker's facts (the world's state, whatever path reached it) and whether the recipe is
        known."""
        facts = "\n".join(self.play_state.facts())
        digest = hashlib.blake2b(facts.encode(), digest_size=16).hexdigest()
        return f"{self.game_seed}:{digest}:{int(bool(self._recipe))}"

    # --------------------------------------------------------------- expert
    def _expert_move(self, admissible: list[str]) -> str | None:
        if self.challenge == "tw-cooking" and not self._recipe and COOKBOOK in admissible:
            return COOKBOOK
        policy = self.play_state.policy()
        return policy[0] if policy else None

    def expert_action(self) -> str:
        """TextWorld's next policy command (the cookbook first on tw-cooking), always a candidate. When no
        winning policy is left (a lost game that goes on), the first candidate; ``RuntimeError`` once the
        game is over."""
        if self._over or not self._candidates:
            raise RuntimeError(f"{self.task_name}: the game is over; there is no expert move")
        move = self._expert_move(list(self._candidates))
        return move if move in self._candidates else self._candidates[0]

    def walkthrough(self) -> list[str]:
        """The game's walkthrough as TextWorld's generator wrote it (privileged)."""
        return list(self.play_state.runtime.game.metadata.get("walkthrough", []))
