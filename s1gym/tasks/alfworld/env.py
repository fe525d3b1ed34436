"""ALFWorld's text games (``s1/ALFWorld-v0``) on the real ALFWorld engine (``pip install alfworld==0.4.2``).

The engine is textworld's ``PddlEnv`` with alfworld's ``AlfredDemangler``: the
game state lives in a compiled Fast Downward library (one private copy of
``libdownward.so`` per engine), which has no copy operation. Replaying moves
costs one engine step per move, so the env stands on the engine seam
(:mod:`s1gym.engines.base`) with *state snapshots*:

- A snapshot is the library's state vector (one value per SAS variable,
  followed move by move with Fast Downward's semantics from the library's
  reading at the game's start) plus textworld's fact sets and the state's id
  in the library's state registry.
  Restoring it into the engine that took it sets the state by that id;
  into another engine it re-loads the game's already-translated SAS task
  with that state as the initial state (``load_sas``), which costs about one
  step, at any depth.
- Forks are lazy (they share the parent's state until stepped); engines live
  in a small process-wide pool whose least recently used engine is taken over
  (after snapshotting the state it held) when it is full, so search trees with
  thousands of forks use a handful of engines.
- The PDDL->SAS translation (the bulk of ALFWorld's load/reset) and the game
  logic parse are cached per game, so resets cost one restore.

The experts (alfworld's handcoded agent, tracked along the episode, and Fast
Downward's planner) live in :mod:`s1gym.tasks.alfworld.expert`.

ALFWorld gives no partial credit: ``score`` is 1 on success, else 0.
"""

from __future__ import annotations

import copy
import json
import os
from collections import defaultdict
from collections.abc import Hashable
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

from s1gym.checks import positive_int
from s1gym.core import Progress, text_atoms
from s1gym.engines.base import EngineEnv
from s1gym.tasks.alfworld import expert as alfworld_expert
from s1gym.tasks.alfworld.engine import ENGINE_CAPACITY, ALFEngine, EngineAnswer, close_engines, import_engine

__all__ = ["SHIPPED_DATA", "TASK_TYPES", "ALFWorldEnv", "close_engines", "find_games"]

TASK_TYPES = (
    "pick_and_place_simple",
    "look_at_obj_in_light",
    "pick_clean_then_place_in_recep",
    "pick_heat_then_place_in_recep",
    "pick_cool_then_place_in_recep",
    "pick_two_obj_and_place",
)
#: The scenes s1gym ships (authored here, see author_scenes.py and data/README.md).
SHIPPED_DATA = Path(__file__).resolve().parent / "data"
HYGIENE_DROPS = ("examine", "look", "inventory", "help")


# --------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------


#: Where ``import alfworld`` points ALFWORLD_DATA when it is unset (it also sets the variable).
_ALFWORLD_CACHE = Path("~/.cache/alfworld").expanduser()


def default_data_dir() -> Path:
    """``ALFWORLD_DATA`` when set, else the scenes s1gym ships.

    ``import alfworld`` sets ALFWORLD_DATA to ~/.cache/alfworld when it is
    unset, so that value only counts when the data is really there.
    """
    env = os.environ.get("ALFWORLD_DATA")
    if env:
        path = Path(env).expanduser()
        if path != _ALFWORLD_CACHE or (path / "json_2.1.1").is_dir():
            return path
    return SHIPPED_DATA


@lru_cache(maxsize=32)
def find_games(data_dir: str, split: str) -> tuple[str, ...]:
    """The solvable games of a split, sorted by path (ALFWorld's own layout and solvable flag)."""
    root = Path(data_dir) / "json_2.1.1" / split
    if not root.is_dir():
        splits = sorted(p.name for p in (Path(data_dir) / "json_2.1.1").glob("*") if p.is_dir())
        raise FileNotFoundError(
            f"ALFWorld-v0: no ALFWorld data at {root}"
            + (f" (splits there: {', '.join(splits)})" if splits else "")
            + ". Point the data_dir option or ALFWORLD_DATA at a folder holding json_2.1.1/<split>/"
            "<task>/<trial>/game.tw-pddl; get the data with `alfworld-download` (where the network allows),"
            " or omit data_dir and ALFWORLD_DATA to play the scenes s1gym ships (split='scenes')."
        )
    games = []
    for path in sorted(root.glob("*/*/game.tw-pddl")):
        with open(path) as f:
            if json.load(f).get("solvable", False):
                games.append(str(path))
    if not games:
        raise FileNotFoundError(
            f"ALFWorld-v0: {root} holds no solvable game.tw-pddl files; run alfworld-generate"
        )
    return tuple(games)


def task_type_of(gamefile: str) -> str:
    return Path(gamefile).parent.parent.name.split("-", 1)[0]


# --------------------------------------------------------------------------
# The env
# --------------------------------------------------------------------------


class ALFWorldEnv(EngineEnv):
    """ALFWorld (text): household tasks in a room of receptacles, on alfworld's own engine and data."""

    task_name: ClassVar[str] = "ALFWorld"
    #: Candidate cap N, with headroom over the most admissible commands seen along the valid_seen walkthroughs
    #: and random walks (bench/alfworld.py --caps; docs/benchmarks.md, "Figures behind the code").
    default_max_candidates: ClassVar[int] = 100
    default_max_steps: ClassVar[int] = 50
    engine_capacity: ClassVar[int] = ENGINE_CAPACITY
    option_help: ClassVar[dict[str, str]] = {
        "data_dir": "folder holding json_2.1.1/<split>/ (default: $ALFWORLD_DATA, else the scenes s1gym ships)",
        "split": "valid_seen, valid_unseen, train, ... (default: valid_seen; 'scenes' for the shipped scenes)",
        "game": "play one game: its index in the split or part of its path (default: seed picks)",
        "stride": "seed s plays game (s * stride) % n, e.g. 11 spreads seeds over the six task types (default 1)",
        "hygiene": "drop examine/look/inventory/help from the candidates (default True, as every shipped "
        "model was fitted; false offers every admissible command)",
        "expert": "'handcoded' (alfworld's, default), 'planner' (Fast Downward) or None (no expert tracking)",
        "max_steps": "step limit (default 50)",
        "max_candidates": "candidate cap N (default 100)",
    }

    def __init__(
        self,
        *,
        data_dir: str | os.PathLike | None = None,
        split: str | None = None,
        game: int | str | None = None,
        stride: int = 1,
        hygiene: bool = True,
        expert: str | None = "handcoded",
        max_candidates: int | None = None,
        max_steps: int | None = None,
        render_mode: str | None = None,
    ) -> None:
        import_engine()
        root = Path(data_dir).expanduser() if data_dir is not None else default_data_dir()
        if split is None:
            split = "scenes" if root == SHIPPED_DATA else "valid_seen"
        self.data_dir, self.split = str(root), split
        self.games = find_games(self.data_dir, split)
        if expert not in ("handcoded", "planner", None):
            raise ValueError(f"ALFWorld-v0: expert must be 'handcoded', 'planner' or None, got {expert!r}")
        self.stride, self.hygiene, self.expert = positive_int("stride", stride), bool(hygiene), expert
        self.game = None if game is None else self._game_index(game)
        super().__init__(
            max_candidates=max_candidates,
            max_steps=max_steps,
            render_mode=render_mode,
        )
        self._gamefile = ""
        self._game_number = -1
        self._admissible: tuple[str, ...] = ()
        self._won_now = False
        self._task_line = ""
        self._room_line = ""
        self._where = ""
        self._holding = ""
        #: the handcoded expert, told every move (``expert="handcoded"``)
        self._tracker: alfworld_expert.HandcodedTracker | None = None
        #: the planner's plan from the state after ``moves``: (moves, plan); following it needs no replanning
        self._plan_cache: tuple[tuple[str, ...], tuple[str, ...]] | None = None

    # ------------------------------------------------------------- games
    def _game_index(self, game: int | str) -> int:
        if isinstance(game, (int,)) and not isinstance(game, bool):
            if not 0 <= game < len(self.games):
                raise ValueError(
                    f"ALFWorld-v0: game={game} is outside 0..{len(self.games) - 1} for split {self.split}"
                )
            return game
        if isinstance(game, str):
            hits = [i for i, g in enumerate(self.games) if game in g]
            if len(hits) == 1:
                return hits[0]
            raise ValueError(
                f"ALFWorld-v0: game={game!r} matches {len(hits)} games of split {self.split}; "
                "give an index or a longer part of the path (e.g. '<task folder>/<trial>')"
            )
        raise ValueError(f"ALFWorld-v0: game must be an index or part of a path, got {game!r}")

    # ------------------------------------------------------------- engine
    def _pool_key(self) -> Hashable:
        return ("alfworld", self._wants_facts())

    def _open_engine(self) -> ALFEngine:
        return ALFEngine(self._wants_facts())

    def _transition_settings(self) -> Hashable:
        return (*super()._transition_settings(), self.hygiene, self.expert)

    def _wants_facts(self) -> bool:
        return self.expert == "handcoded"

    def _adopt(self, answer: EngineAnswer) -> None:
        state = answer.state
        self._won_now = bool(state["won"])
        self._admissible = tuple(state["admissible_commands"])
        self._holding = answer.holding

    def game_of(self, seed: int) -> str:
        """The game file ``seed`` plays (seed s plays game ``(s * stride) % n``, or the ``game`` option's)."""
        index = self.game if self.game is not None else (int(seed) * self.stride) % len(self.games)
        return f"game {index} of {len(self.games)}"

    # ------------------------------------------------------------- hooks
    def _choose_game(self, seed: int | None, options: dict[str, Any]) -> str:
        unknown = set(options) - {"game"}
        if unknown:
            raise ValueError(f"ALFWorld-v0: unknown reset options {sorted(unknown)}; known: ['game']")
        if "game" in options:
            index = self._game_index(options["game"])
        elif self.game is not None:
            index = self.game
        elif seed is not None:
            index = (int(seed) * self.stride) % len(self.games)
        else:
            index = int(self.np_random.integers(len(self.games)))
        self._gamefile = self.games[index]
        self._game_number = index
        return self._gamefile

    def _on_start(self, answer: EngineAnswer) -> str:
        intro = answer.state["feedback"]
        self._task_line = next((ln.strip() for ln in intro.splitlines() if ln.startswith("Your task is to")), "")
        self._room_line = next((ln.strip() for ln in intro.splitlines() if "Looking quickly around you" in ln), "")
        self._where = ""
        self._plan_cache = None
        self._adopt(answer)
        if self.expert == "handcoded":
            self._tracker = alfworld_expert.HandcodedTracker(self._gamefile, intro, self._game_number)
        return "-= Welcome to TextWorld, ALFRED! =-"

    def _on_step(self, move: str, answer: EngineAnswer) -> str:
        moves = self.game_state.moves
        if move.startswith("go to "):
            self._where = move[len("go to ") :]
        self._adopt(answer)
        # PDDL actions are deterministic: after the plan's first move the rest of it is a plan.
        cached = self._plan_cache
        on_plan = cached is not None and cached[0] == moves[:-1] and cached[1][:1] == (move,) and cached[1][1:]
        self._plan_cache = (moves, cached[1][1:]) if on_plan else None
        if self._tracker is not None:
            self._tracker.observe(answer.state, move)
        return answer.state["feedback"]

    def _legal_moves(self) -> list[str]:
        if self.hygiene:
            return [c for c in self._admissible if c.split(" ", 1)[0] not in HYGIENE_DROPS]
        return list(self._admissible)

    def _describe(self) -> str:
        where = f"You are at {self._where}." if self._where else "You are in the middle of the room."
        holding = f"You are carrying {self._holding}." if self._holding else "You are carrying nothing."
        return "\n".join(p for p in (self._task_line, self._room_line, f"{where} {holding}") if p)

    def _progress(self) -> Progress:
        return Progress(1.0 if self._won_now else 0.0, won=self._won_now)

    def _fork_into(self, clone: EngineEnv) -> None:
        assert isinstance(clone, ALFWorldEnv)
        super()._fork_into(clone)
        if self._tracker is not None:
            clone._tracker = copy.deepcopy(self._tracker)

    def _extra_info(self) -> dict[str, Any]:
        return {"game": self._game_number, "task_type": task_type_of(self._gamefile) if self._gamefile else ""}

    def state_key(self) -> str:
        return f"{self._where}|{self.snapshot().key}"

    def state_atoms(self) -> frozenset[str]:
        """The description's facts plus what the last move revealed (an opened fridge's contents live in
        the feedback, not in the description)."""
        return super().state_atoms() | text_atoms(self._feedback)

    # ------------------------------------------------------------- expert
    def expert_action(self) -> str:
        """The expert's next move, always one of the candidates under this env's options. ``rule_action()``
        (the ``Rule`` baseline) is this same move, as the base class defines it; fitting labels states with it.

        It is :meth:`engine_expert_action`'s move where that is a candidate; under ``hygiene`` the handcoded
        expert's ``look`` / ``examine`` are played on a fork that shows every move and the expert's state
        after them adopted, so this is the candidate it goes on to
        (:func:`s1gym.tasks.alfworld.expert.candidate_action`). Raises
        :class:`~s1gym.tasks.alfworld.expert.ExpertLost` (a ``RuntimeError``) where the expert names no
        candidate: the game is over, or the expert lost track of the game.
        """
        move, tracker = alfworld_expert.candidate_action(self)
        if tracker is not None:
            self._tracker = tracker
        if move not in self.candidates:
            raise alfworld_expert.ExpertLost(
                f"ALFWorld-v0: the {self.expert} expert names no candidate here "
                + ("(the game is over)" if self.done else f"(it asks for {move!r}, which is not on offer)")
            )
        return move

    def engine_expert_action(self) -> str:
        """The raw engine expert's next move: alfworld's handcoded one ("look" when it is lost), or Fast
        Downward's plan with ``expert='planner'``. Under ``hygiene`` it may be a move the env does not offer;
        players take :meth:`expert_action`."""
        self._require_started()
        if self.expert is None:
            raise NotImplementedError("ALFWorld-v0 was made with expert=None; use expert='handcoded' or 'planner'")
        if self._tracker is not None:
            return self._tracker.next
        move, self._plan_cache = alfworld_expert.planner_action(self)
        return move

    def expert_move(self) -> str | None:
        """:meth:`expert_action`, or ``None`` where it names no candidate; always ``None`` with the planner,
        which can take minutes a game (the runner asks after every decision)."""
        return None if self.expert == "planner" else super().expert_move()

    def expert_view(self) -> alfworld_expert.ALFWorldExpertView:
        """What the experts read beyond the public state (privileged; never in observations)."""
        return alfworld_expert.ALFWorldExpertView(self._tracker, self._plan_cache)

    def fork_showing_every_move(self) -> ALFWorldEnv:
        """A fork whose candidates are every admissible command (``hygiene`` off), for the expert's moves
        that only inform."""
        probe = self.fork()
        probe.hygiene = False
        probe._refresh()
        return probe

    @classmethod
    def summarize_episodes(cls, final_infos):
        by_type: dict[str, list[float]] = defaultdict(list)
        for info in final_infos:
            if "task_type" in info:
                by_type[info["task_type"]].append(1.0 if info.get("won") else 0.0)
        return {"success_by_task_type": {t: sum(v) / len(v) for t, v in sorted(by_type.items())}}
