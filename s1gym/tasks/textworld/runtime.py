"""One TextWorld game in play: jericho's interpreter state plus TextWorld's Python-side state tracker.

TextWorld's own env stack (``textworld.start``: ``JerichoEnv`` under the ``TWInform7`` wrappers) runs the
game in jericho's Z-machine interpreter and tracks it in Python (``GameProgression``: the facts, the
admissible commands, the quests and the winning policy). Its ``copy()`` is exact but copies the whole
stack. Here the two halves are kept apart:

- a :class:`GameRuntime` per game file and process holds what never changes (the ``Game``, its
  ``Inform7Game``) and one interpreter (``jericho.FrotzEnv``), shared by every env and fork of that game;
- a :class:`Play` holds one game's state: the interpreter's state (``FrotzEnv.get_state()``, restored
  before each step: a few hundredths of a millisecond), the tracker (``GameProgression``) and the
  texts the game printed last.

:meth:`Play.step` does what TextWorld's wrappers do on a step (send the command, read the tags the game
prints, feed the Inform 7 events to the tracker), so its texts, score, admissible and policy commands are
TextWorld's own (tests/test_textworld.py checks them against ``textworld.start`` and ``env.copy()``).
:meth:`Play.copy` copies the tracker and shares the immutable interpreter state: a fork.
"""

from __future__ import annotations

import threading
import warnings
from collections import OrderedDict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

__all__ = ["GameRuntime", "Play", "runtime_for"]

#: What the game prints after every turn between tags (TextWorld's ``tw-extra-infos``).
TRACKED = ("inventory", "description", "moves", "score")
#: Interpreters kept alive per process (one per game file, least recently used closed first).
RUNTIMES = 32

_runtimes: OrderedDict[str, GameRuntime] = OrderedDict()
_lock = threading.Lock()


class GameRuntime:
    """A game file's unchanging parts and the one interpreter every play of it in this process shares."""

    def __init__(self, path: Path) -> None:
        import jericho
        from textworld.generator.game import Game
        from textworld.generator.inform7 import Inform7Game

        self.path = path
        self.game = Game.load(str(path.with_suffix(".json")))
        self.inform7 = Inform7Game(self.game)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "not fully supported": jericho knows only its own game list
            self.frotz = jericho.FrotzEnv(str(path))
        self.lock = threading.Lock()
        self.max_score = int(self.game.max_score)
        self.objective = str(self.game.objective).strip()

    def commands(self, actions: Any) -> list[str]:
        return list(self.inform7.gen_commands_from_actions(actions))

    def start(self) -> Play:
        """A new play of the game, as TextWorld's ``reset`` leaves it."""
        from textworld.envs.wrappers.tw_inform7 import _detect_extra_infos
        from textworld.generator.game import GameProgression

        with self.lock:
            self.frotz.reset()
            self.frotz.step("tw-trace-actions")
            texts: dict[str, str] = {}
            for tag in TRACKED:
                out, *_ = self.frotz.step(f"tw-extra-infos {tag}")
                found, _ = _detect_extra_infos(out, [tag])
                texts.update({k: v for k, v in found.items() if v is not None})
            state = self.frotz.get_state()
        progression = GameProgression(self.game, track_quests=True)
        return Play(self, state, progression, feedback="", description=texts.get("description", ""),
                    inventory=texts.get("inventory", ""), score=_int(texts.get("score")))

    def close(self) -> None:
        self.frotz.close()


def runtime_for(path: Path) -> GameRuntime:
    """The shared runtime of game file ``path`` (made on first use)."""
    key = str(path)
    with _lock:
        rt = _runtimes.get(key)
        if rt is not None:
            _runtimes.move_to_end(key)
            return rt
    rt = GameRuntime(path)
    with _lock:
        rt = _runtimes.setdefault(key, rt)
        _runtimes.move_to_end(key)
        while len(_runtimes) > RUNTIMES:
            _runtimes.popitem(last=False)  # its interpreter closes when the last play holding it is gone
    return rt


def _int(text: str | None) -> int:
    if not text:
        return 0
    return int(text.strip().split("\n")[0])


@dataclass
class Play:
    """One game's state (see the module docstring): stepped in place, copied by :meth:`copy`."""

    runtime: GameRuntime
    #: ``FrotzEnv.get_state()``: a tuple of fresh arrays, never written to, so copies share it
    frotz_state: tuple[Any, ...]
    progression: Any
    feedback: str
    description: str
    inventory: str
    score: int
    won: bool = False
    lost: bool = False

    def copy(self) -> Play:
        """An independent play in the same state (the tracker copied as TextWorld's ``env.copy()`` does)."""
        return replace(self, progression=self.progression.copy())

    def admissible(self) -> list[str]:
        """TextWorld's admissible commands: sorted, duplicates removed."""
        return sorted(set(self.runtime.commands(self.progression.valid_actions)))

    def policy(self) -> list[str]:
        """TextWorld's policy commands from here (``[]`` when no winning policy is left)."""
        policy = self.progression.winning_policy
        return [] if policy is None else self.runtime.commands(policy)

    def facts(self) -> list[str]:
        """The tracker's facts, as sorted strings (a key of the world's state)."""
        return sorted(str(f) for f in self.progression.state.facts)

    def step(self, command: str) -> str:
        """Play ``command``; returns its feedback (the game's text without tags) and updates the state."""
        from textworld.envs.wrappers.tw_inform7 import _detect_extra_infos, _detect_i7_events_debug_tags

        rt = self.runtime
        with rt.lock:
            rt.frotz.set_state(self.frotz_state)
            out, *_ = rt.frotz.step(command)
            self.frotz_state = rt.frotz.get_state()
        found, out = _detect_extra_infos(out, list(TRACKED))
        events, out = _detect_i7_events_debug_tags(out)
        for event in events:
            action = rt.inform7.detect_action(event, self.progression.valid_actions)
            if action is not None:
                self.progression.update(action)
        self.description = found.get("description") or self.description
        self.inventory = found.get("inventory") or self.inventory
        if found.get("score") is not None:
            self.score = _int(found["score"])
        self.feedback = out
        self.won = "*** The End ***" in out
        self.lost = "*** You lost! ***" in out
        return out
