"""s1/Millionaire-v0: climb a 15-question quiz ladder, "Who Wants to Be a Millionaire?" style.

The ladder (prize after answering question k right; * = safe haven)::

     1 $100       6 $2,000      11 $64,000
     2 $200       7 $4,000      12 $125,000
     3 $300       8 $8,000      13 $250,000
     4 $500       9 $16,000     14 $500,000
     5 $1,000 *  10 $32,000 *   15 $1,000,000

Questions 1-5 are easy, 6-10 medium, 11-15 hard. Moves: the four answers in
a shuffled order, ``50:50`` while that lifeline is unused (it removes two
wrong answers; the question stays) and ``walk away`` (leave with the current
winnings). A wrong answer drops the winnings to the last safe haven passed and
ends the game. Actions are six fixed slots (N = 6): 0-3 the first to fourth
listed answer, 4 ``50:50``, 5 ``walk away``; ``info["candidates"]`` words the
six slots for the current question, the mask marks the legal ones (answers
removed by 50:50 and a used lifeline are masked) and ``env.candidates`` lists
those.

``score`` = winnings / 1,000,000 (reward = its change, so a wrong answer can
cost), ``info["winnings"]`` in dollars, ``info["outcome"]``: ``playing``,
``millionaire``, ``walked away`` or ``wrong answer``. ``won`` means the million,
``lost`` a wrong answer; walking away ends the game neither won nor lost
(``info["game_over"]``).

Randomness: the game RNG is seeded by the ladder number, which is the reset
seed (modulo the ``ladders`` option when given, so ``ladders=6`` replays six
fixed ladders like the harness). It draws five questions per tier, shuffles
each question's answers (from a sorted order, so the order never depends on
which answer is right) and, when 50:50 is played, which wrong answer stays.
``fork`` copies it, so a fork mid-ladder continues identically.

``Rule`` (no knowledge of the answers): play 50:50 on the first hard question
(question 11), walk away as soon as the winnings pass the second safe haven
($64,000), otherwise answer the first listed answer. Walking away exactly at a
safe haven would be pointless (a wrong answer there keeps the haven anyway);
after $64,000 a blind guess is worth less than the money in hand.
:meth:`MillionaireEnv.expert_action` is the oracle (the right answer) for tests.

Forks know the answers: a wrong answer loses in a fork, so ``Lookahead`` (which
drops losing moves) and ``Search`` would answer every question right. The env
says so (``fork_reveals_answer``), and both wrappers refuse it unless asked
to measure that oracle (``allow_oracle=True``).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from s1gym import stats
from s1gym.checks import positive_int
from s1gym.core import Progress, S1Env, charset_for, copy_generator
from s1gym.datasets import DataError
from s1gym.tasks.games.family import FAMILY
from s1gym.tasks.games.trivia import DIFFICULTIES, TriviaQuestion, default_trivia_cache, load_trivia

__all__ = ["LADDER", "SAFE_HAVENS", "TOP_PRIZE", "MillionaireEnv"]

#: Prize after answering question k (index k-1) right.
LADDER: tuple[int, ...] = (
    100,
    200,
    300,
    500,
    1_000,
    2_000,
    4_000,
    8_000,
    16_000,
    32_000,
    64_000,
    125_000,
    250_000,
    500_000,
    1_000_000,
)
#: Questions whose prize is kept after a later wrong answer.
SAFE_HAVENS: tuple[int, ...] = (5, 10)
TOP_PRIZE = LADDER[-1]
PER_TIER = 5
FIFTY_FIFTY = "50:50"
WALK_AWAY = "walk away"
#: The six action slots: the answers by listed position, then the lifeline and walking away.
SLOTS = ("answer 1", "answer 2", "answer 3", "answer 4", FIFTY_FIFTY, WALK_AWAY)


@dataclass(frozen=True)
class _Step:
    """One rung of a drawn ladder: the question and its answers in display order."""

    question: TriviaQuestion
    answers: tuple[str, str, str, str]


def prize(level: int) -> int:
    """Winnings after ``level`` right answers."""
    return LADDER[level - 1] if level > 0 else 0


def guaranteed(level: int) -> int:
    """What a wrong answer leaves after ``level`` right answers: the last safe haven passed."""
    return max((prize(h) for h in SAFE_HAVENS if h <= level), default=0)


class MillionaireEnv(S1Env):
    """The quiz ladder; see the module docstring."""

    fork_reveals_answer = True

    task_name = "Millionaire"
    default_max_candidates = 6
    default_max_steps = 16  # 15 answers + one 50:50
    option_help: ClassVar[Mapping[str, str]] = {
        "questions": "JSONL in Open Trivia DB's fields (default: the 36 shipped questions); 'opentdb' = the "
        "local cache filled by `python -m s1gym.tasks.games.trivia fetch`",
        "ladders": "distinct ladders; seed S plays ladder S mod ladders (default: each seed its own)",
        "max_steps": "step limit (default 16)",
    }

    def __init__(
        self,
        *,
        questions: str | os.PathLike[str] | None = None,
        ladders: int | None = None,
        max_candidates: int | None = None,
        max_steps: int | None = None,
        render_mode: str | None = None,
    ) -> None:
        if questions is None:
            path = FAMILY.data("trivia.jsonl")
        elif str(questions) == "opentdb":
            path = default_trivia_cache()
            if not path.is_file():
                raise DataError(
                    f"questions='opentdb': no cache at {path} yet; fill it with "
                    f"`python -m s1gym.tasks.games.trivia fetch --amount 200` (needs network)"
                )
        else:
            path = questions
        bank = load_trivia(path)
        clash = [q.question for q in bank if {FIFTY_FIFTY, WALK_AWAY} & {a.lower() for a in q.answers}]
        if clash:
            raise DataError(
                f"questions: {path} has answers named like a lifeline move ({FIFTY_FIFTY!r}, {WALK_AWAY!r}), "
                f"e.g. in {clash[0]!r}; reword those answers"
            )
        self.tiers: dict[str, tuple[TriviaQuestion, ...]] = {
            d: tuple(q for q in bank if q.difficulty == d) for d in DIFFICULTIES
        }
        short = {d: len(qs) for d, qs in self.tiers.items() if len(qs) < PER_TIER}
        if short:
            raise DataError(
                f"questions: {path} has too few questions for a ladder ({short}); "
                f"it needs at least {PER_TIER} easy, {PER_TIER} medium and {PER_TIER} hard"
            )
        self.ladders = positive_int("ladders", ladders, optional=True)
        super().__init__(
            max_candidates=max_candidates,
            max_steps=max_steps,
            charset=charset_for(s for q in bank for s in q.texts()),
            render_mode=render_mode,
            action_slots=SLOTS,
        )
        self._rng: np.random.Generator | None = None
        self._ladder_id = 0
        self._ladder: tuple[_Step, ...] = ()
        self._level = 0
        self._fifty_used = False
        self._removed: frozenset[str] = frozenset()
        self._outcome = "playing"
        self._winnings = 0

    def game_of(self, seed: int) -> str | None:
        """With ``ladders=N`` seed s plays ladder ``s mod N``; without it every seed is a ladder of its own."""
        return None if self.ladders is None else f"ladder {int(seed) % self.ladders} of {self.ladders}"

    # ---------------------------------------------------------------- hooks
    def _new_game(self, seed: int | None, options: dict[str, Any]) -> str:
        ladder_id = seed if seed is not None else int(self.np_random.integers(2**31 - 1))
        if self.ladders is not None:
            ladder_id %= self.ladders
        self._ladder_id = ladder_id
        self._rng = rng = np.random.default_rng(ladder_id)
        steps = []
        for difficulty in DIFFICULTIES:
            tier = self.tiers[difficulty]
            for i in rng.choice(len(tier), size=PER_TIER, replace=False):
                q = tier[int(i)]
                answers = sorted(q.answers)
                a, b, c, d = (answers[int(j)] for j in rng.permutation(4))
                steps.append(_Step(q, (a, b, c, d)))
        self._ladder = tuple(steps)
        self._level, self._fifty_used, self._removed = 0, False, frozenset()
        self._outcome, self._winnings = "playing", 0
        return f"Welcome to the quiz! Ladder {ladder_id}: 15 questions from $100 to $1,000,000."

    def _legal_moves(self) -> list[str]:
        moves = [a for a in self._ladder[self._level].answers if a not in self._removed]
        if not self._fifty_used:
            moves.append(FIFTY_FIFTY)
        moves.append(WALK_AWAY)
        return moves

    def _slot_moves(self) -> tuple[str, ...]:
        # After the last question the level is 15; the slots keep the last question's wording.
        return (*self._ladder[min(self._level, len(LADDER) - 1)].answers, FIFTY_FIFTY, WALK_AWAY)

    def _play(self, move: str) -> str:
        step = self._ladder[self._level]
        if move == WALK_AWAY:
            self._outcome = "walked away"
            return f"You walk away with ${self._winnings:,}."
        if move == FIFTY_FIFTY:
            assert self._rng is not None
            wrong = sorted(step.question.incorrect_answers)
            keep = wrong[int(self._rng.integers(len(wrong)))]
            self._fifty_used = True
            self._removed = frozenset(w for w in wrong if w != keep)
            return "50:50: two wrong answers are gone."
        if move == step.question.correct_answer:
            self._level += 1
            self._removed = frozenset()
            self._winnings = prize(self._level)
            if self._level == len(LADDER):
                self._outcome = "millionaire"
                return f"{move} is right! You win $1,000,000!"
            return f"{move} is right! You have ${self._winnings:,}."
        self._winnings = guaranteed(self._level)
        self._outcome = "wrong answer"
        return (
            f"{move} is wrong; the right answer was {step.question.correct_answer}. "
            f"You leave with ${self._winnings:,}."
        )

    def _describe(self) -> str:
        if self._outcome != "playing":
            return f"Game over ({self._outcome}). Winnings: ${self._winnings:,}."
        k = self._level + 1
        step = self._ladder[self._level]
        haven = guaranteed(self._level)
        lifeline = "used" if self._fifty_used else "available"
        return (
            f"Question {k} of 15 for ${prize(k):,} ({step.question.difficulty}, {step.question.category}).\n"
            f"Winnings: ${self._winnings:,}; a wrong answer leaves you with ${haven:,}; walking away keeps "
            f"${self._winnings:,}. Lifeline 50:50: {lifeline}.\n\n{step.question.question}"
        )

    def _progress(self) -> Progress:
        return Progress(
            self._winnings / TOP_PRIZE,
            won=self._outcome == "millionaire",
            lost=self._outcome == "wrong answer",
            over=self._outcome != "playing",
        )

    def _fork_into(self, clone: S1Env) -> None:
        assert isinstance(clone, MillionaireEnv)
        if self._rng is not None:
            clone._rng = copy_generator(self._rng)  # everything else is immutable

    def _extra_info(self) -> dict[str, Any]:
        return {
            "winnings": self._winnings,
            "outcome": self._outcome,
            "question_number": min(self._level + 1, len(LADDER)),
            "fifty_fifty_used": self._fifty_used,
            "ladder": self._ladder_id,
        }

    # -------------------------------------------------------------- players
    def expert_action(self) -> str:
        """The right answer to the current question (privileged: tests and oracles only)."""
        if self._outcome != "playing":
            raise RuntimeError("Millionaire: the game is over; there is no question to answer")
        return self._ladder[self._level].question.correct_answer

    def rule_action(self) -> str:
        """The documented fixed strategy (module docstring); it never looks at the answer."""
        if self._outcome != "playing":
            raise RuntimeError("Millionaire: the game is over; there is no question to answer")
        if self._winnings > prize(SAFE_HAVENS[-1]):
            return WALK_AWAY
        if self._level + 1 == 2 * PER_TIER + 1 and not self._fifty_used:
            return FIFTY_FIFTY
        return self._candidates[0]

    @classmethod
    def summarize_episodes(cls, final_infos: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """Mean winnings in dollars, the furthest question reached and how games ended."""
        if not final_infos:
            return {}
        winnings = np.array([float(i.get("winnings", 0)) for i in final_infos])
        outcomes = Counter(str(info.get("outcome", "playing")) for info in final_infos)
        return {
            "mean_winnings": float(winnings.mean()),
            "mean_winnings_ci95": list(stats.bootstrap_ci(winnings)),
            "median_winnings": float(np.median(winnings)),
            "outcomes": dict(outcomes),
        }
