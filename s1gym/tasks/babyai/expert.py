"""The BabyAI family's expert: minigrid's ``BabyAIBot``, kept on a shadow copy of the game.

The bot is stateful (what it has seen, its stack of subgoals) and must be told every action taken, in
order, right after it is taken. :class:`BotShadow` gives it its own copy of the world (a *shadow*, made
from the game's state at reset) and steps that copy with the game's moves when asked, so the bot sees
every intermediate state and plays from any position, whatever moves were taken (the bot re-plans after a
move it did not suggest). A fork of the env does not copy the shadow: a fork asked for the expert's move
rebuilds one from the reset state and replays the moves so far (:meth:`BotShadow.replay`), so forks stay
cheap. When the bot gives up (it raises when a box it did not open was opened, or on a state it was never
meant to see), a fresh bot starts from the current state.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from s1gym.tasks.babyai.world import copy_world

__all__ = ["BotShadow"]


class BotShadow:
    """A ``BabyAIBot`` on its own copy of the world, synchronised with a move history on demand."""

    def __init__(self, world: Any) -> None:
        from minigrid.utils.baby_ai_bot import BabyAIBot

        self.world = copy_world(world)
        self.bot = BabyAIBot(self.world)
        self.suggestion: int = int(self.bot.replan())
        self.steps = 0  # moves of the history this shadow has played

    @classmethod
    def replay(cls, start: Any, moves: Sequence[int]) -> BotShadow:
        """A shadow built at the reset state ``start`` that has played ``moves``."""
        shadow = cls(start)
        shadow.follow(moves)
        return shadow

    def follow(self, moves: Sequence[int]) -> int:
        """Play the moves of ``moves`` this shadow has not played yet and return the bot's move (-1: the
        bot has no advice). When the bot fails on the way, a fresh bot goes on from the shadow's state."""
        for action in moves[self.steps:]:
            self.world.step(action)
            self.steps += 1
            try:
                self.suggestion = int(self.bot.replan(action))
            except Exception:  # noqa: BLE001 - the bot's own failures: DisappearedBoxError, its asserts off its plan
                self.restart()
        return self.suggestion

    def restart(self) -> int:
        """A fresh bot from the shadow's state (it has seen nothing yet); its move (-1: no advice)."""
        from minigrid.utils.baby_ai_bot import BabyAIBot

        self.bot = BabyAIBot(self.world)
        try:
            self.suggestion = int(self.bot.replan())
        except Exception:  # noqa: BLE001 - as above: no advice from here
            self.suggestion = -1
        return self.suggestion
