"""The environment side of the contract: :class:`S1Env`, whose class docstring is what every task keeps."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from s1gym.checks import positive_int
from s1gym.core.forks import Forks
from s1gym.core.helpers import BASE_CHARSET, action_index, text_atoms
from s1gym.core.progress import Progress, TooManyCandidatesError
from s1gym.core.readouts import Readouts, init_defaults
from s1gym.core.situation import Candidate, Privileged, Situation

__all__ = ["HIDDEN_OUTCOME", "S1Env", "StepResult"]

StepResult = tuple[str, float, bool, bool, dict[str, Any]]  #: what ``step`` returns (Gymnasium's five)
#: A planning fork's feedback after an answer move it does not play (``Forks.is_answer_move``)
HIDDEN_OUTCOME = "You chose: {move}. What it does is known only once it is played in the game itself."


class S1Env(Forks, Readouts, gym.Env[str, np.int64]):
    """Base class of every s1gym task: the environment contract.

    **Spaces.** ``observation_space`` is ``Text`` over the task's charset;
    ``action_space`` is ``Discrete(N)`` (N the task's candidate cap). Index
    ``i`` means ``info["candidates"][i]``. Most tasks list their legal moves
    there, in a deterministic order. Tasks whose moves are a fixed set
    (2048's four directions, Blackjack's hit/stand) declare
    :attr:`action_slots`: then ``N = len(action_slots)``, index ``i`` always
    means slot ``i`` and ``info["candidates"]`` is the slots; the mask says
    which are legal now. A slot may be worded by the state while keeping its
    meaning (the quiz's "first listed answer"): hook ``_slot_moves()``.

    **Mask.** ``info["action_mask"]`` (int8, shape ``(N,)``, also
    :meth:`action_masks` for sb3-contrib) marks the legal indices. When the
    game is over no move is legal and the mask is all ones: any index is then
    accepted as a no-op (so masked sampling never meets an empty mask, and a
    vector env's autoreset step, which ignores the action, works).

    **Steps.** ``reset(seed=s)`` starts game ``s`` (same seed, same indices:
    same observations, infos and rewards). ``step(i)`` plays candidate ``i``;
    ``reward`` is the change of ``score``; ``terminated`` when the game ends
    (won, lost or over); ``truncated`` when :attr:`steps` reaches
    ``max_steps``. A masked or out-of-range index is a no-op move: state
    unchanged, reward 0, ``info["invalid_action"]`` true and feedback that
    says so; it still counts as a step toward ``max_steps``, so an agent that
    only plays invalid moves is truncated like any other.

    **Info.** Every ``reset`` and ``step`` info holds ``candidates`` (list of
    str), ``action_mask``, ``score`` (float), ``won``, ``lost``,
    ``game_over``, ``invalid_action`` (bool) and ``steps`` (int), plus the
    task's :meth:`_extra_info`; each key keeps one type for the whole episode
    (Gymnasium's vector envs stack them).

    **Fork.** :meth:`fork` returns an independent env in exactly this state,
    RNG included; stepping either never changes the other. Planners get
    :meth:`planning_fork` (``Situation.fork``): the same, except that on a
    game with chance events (``chance_events``) the fork's future is drawn
    from a fresh stream, so no wrapper plans with the real future, and that
    it does not play an answer move (``is_answer_move``: ScienceWorld's
    ``focus on``): the fork ends there, neither won nor lost, with
    ``outcome_hidden`` set, so no wrapper reads an answer's verdict.
    :meth:`situation` is what a policy may know; privileged knowledge reaches
    baselines only through :class:`Privileged`.

    **Hooks** (subclasses implement the game; the base owns everything above):

    - ``_new_game(seed, options) -> str``: start a game, return the opening feedback.
    - ``_legal_moves() -> list[str]``: the legal moves now, in a deterministic order.
    - ``_play(move) -> str``: apply a legal move, return the feedback text.
    - ``_describe() -> str``: the current state as text (no feedback, no moves).
    - ``_progress() -> Progress``: score, won, lost, over.
    - ``_fork_into(clone)``: give ``clone`` (a shallow copy of ``self``, base
      bookkeeping and RNG already copied) its own copy of every mutable part
      of the game state.
    - optional: ``_extra_info()``, ``state_key()``, ``expert_action()``,
      ``rule_action()``, ``summarize_episodes()``.

    Engines without a cheap copy (a JVM, a browser) build on
    :class:`s1gym.engines.base.EngineEnv`, which implements ``_new_game``,
    ``_play`` and ``_fork_into`` over pooled engines (docs/adding-a-task.md).
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "human"]}

    #: The task's name as policies see it (``Situation.task``).
    task_name: ClassVar[str] = "task"
    #: Default candidate cap N (``Discrete(N)``); options may change it.
    default_max_candidates: ClassVar[int] = 8
    #: Default step limit (truncation).
    default_max_steps: ClassVar[int] = 100
    #: A fork knows what the player must not (the right answer, the label): stepping a copy reveals
    #: whether a move is right. Lookahead and Search refuse such tasks unless told to measure the oracle.
    fork_reveals_answer: ClassVar[bool] = False
    #: Options ``gym.make`` accepts, name -> one-line help (shown by ``s1 list``).
    option_help: ClassVar[Mapping[str, str]] = {}
    #: Longest observation the Text space accepts.
    max_observation_length: ClassVar[int] = 100_000

    def __init__(
        self,
        *,
        max_candidates: int | None = None,
        max_steps: int | None = None,
        charset: frozenset[str] = BASE_CHARSET,
        render_mode: str | None = None,
        action_slots: Sequence[str] | None = None,
    ) -> None:
        """``action_slots``: the task's fixed moves (index i always means slot i); ``None``: the
        candidates are the legal moves of each state, capped at ``max_candidates``."""
        super().__init__()
        self.action_slots: tuple[str, ...] | None = None if action_slots is None else tuple(action_slots)
        if self.action_slots is not None:
            if len(set(self.action_slots)) != len(self.action_slots) or not self.action_slots:
                raise ValueError(f"{self.task_name}: action_slots must be distinct and non-empty")
            if max_candidates is not None and max_candidates != len(self.action_slots):
                raise ValueError(
                    f"{self.task_name}: the moves are a fixed set of {len(self.action_slots)} "
                    f"({', '.join(self.action_slots)}); max_candidates cannot change it (got {max_candidates})"
                )
            self.max_candidates = len(self.action_slots)
            self._slots_now = self.action_slots
            self._slot_index = {m: i for i, m in enumerate(self.action_slots)}
        else:
            self.max_candidates = positive_int("max_candidates", max_candidates, self.default_max_candidates)
        self.max_steps = positive_int("max_steps", max_steps, self.default_max_steps)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"{self.task_name}: render_mode={render_mode!r} is not supported; use one of "
                f"{self.metadata['render_modes']} or None"
            )
        self.render_mode = render_mode
        self.action_space = spaces.Discrete(self.max_candidates)
        self.observation_space = spaces.Text(
            max_length=self.max_observation_length, min_length=0, charset=charset
        )
        self._candidates: tuple[str, ...] = ()
        self._history: tuple[tuple[str, str], ...] = ()
        self._rewards: tuple[float, ...] = ()  # each history move's reward (``Situation.rewards``)
        #: the keys of the states left so far this episode (``Situation.visited``) and of this one, once a
        #: situation was taken in it (a key is computed only then: plain stepping costs nothing)
        self._visited: tuple[str, ...] = ()
        self._key_now: str | None = None
        self._feedback = ""
        self._episode_seed: int | None = None
        self._planning_forks = 0  # planning forks this env gave (each draws its own fresh chance stream)
        self._steps = 0
        self._score = 0.0
        self._won = False
        self._lost = False
        self._over = False
        self._started = False

    # ---------------------------------------------------------------- hooks
    def _new_game(self, seed: int | None, options: dict[str, Any]) -> str:
        raise NotImplementedError

    def _legal_moves(self) -> list[str]:
        raise NotImplementedError

    def _play(self, move: str) -> str:
        raise NotImplementedError

    def _describe(self) -> str:
        raise NotImplementedError

    def _progress(self) -> Progress:
        raise NotImplementedError

    def _fork_into(self, clone: S1Env) -> None:
        raise NotImplementedError

    def _slot_moves(self) -> Sequence[str]:
        """Fixed action slots only: the move each slot stands for now (default: the slot names).

        A slot keeps one meaning (the quiz's "first listed answer") while its
        wording may change with the state; such a task returns the wording here.
        """
        return self.action_slots or ()

    def _extra_info(self) -> dict[str, Any]:
        """Task-specific entries added to ``info`` (never privileged knowledge; one type per key)."""
        return {}

    def state_key(self) -> str:
        """A key of the game state, independent of the path that reached it.

        The default is the state description plus the candidates; tasks whose
        description leaves out part of the state override it.
        """
        return self._describe() + "\n#" + "|".join(self._candidates)

    def state_atoms(self) -> frozenset[str]:
        """The facts that hold in this state, as short texts (Search's novelty counts the new ones).

        The default is the sentences and lines of the state description; tasks may give finer facts.
        """
        return text_atoms(self._describe())

    @classmethod
    def resolve_options(cls, options: Mapping[str, Any]) -> dict[str, Any]:
        """``options`` with every default in force filled in: what the runner records and ``s1 table``
        keys rows by (so ``size=medium`` and the default medium are one setup). The default reads
        the defaults of the ``__init__`` keywords along the class hierarchy
        (:func:`s1gym.core.readouts.init_defaults`); tasks with options outside their signature override it."""
        out = init_defaults(cls, S1Env)
        if cls.option_help:  # the documented options only (base classes take internal arguments too)
            out = {k: v for k, v in out.items() if k in cls.option_help}
        out.update(options)
        return out

    def game_of(self, seed: int) -> str | None:
        """Which game of the task's finite list ``reset(seed=seed)`` plays under this env's options, as a
        key (two seeds with one key play the same game), or ``None`` when every seed makes a game of its
        own. The runner reads it to say when a job's seeds repeat games and to compute the table's
        interval over distinct games; tasks that play a fixed list of games or texts override it. It never
        starts a game."""
        return None

    @classmethod
    def summarize_episodes(cls, final_infos: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """Task-specific metrics over finished episodes (the runner adds them to its summary)."""
        return {}

    # ------------------------------------------------------------ contract
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Start game ``seed`` (``None``: drawn from the env's RNG); returns ``(observation, info)``."""
        super().reset(seed=seed)
        self._episode_seed = seed
        self._feedback = self._new_game(seed, dict(options or {}))
        self._history, self._rewards = (), ()
        self._visited, self._key_now = (), None
        self._steps = 0
        self._started = True
        self._refresh()
        return self._observation(), self._info(invalid=False)

    def step(self, action: Any) -> StepResult:
        """Play index ``action``; ``(observation, reward, terminated, truncated, info)`` (see the class doc)."""
        self._require_started()
        move = self._move_at(action_index(action))
        if move is None:
            return self._invalid_step(action)
        before = self._score
        hidden = self.hides_outcome(move)
        self._feedback = HIDDEN_OUTCOME.format(move=move) if hidden else self._play(move)
        self._steps += 1
        self._history = self._history + ((move, self._feedback),)
        if self._key_now is not None:
            self._visited, self._key_now = self._visited + (self._key_now,), None
        if hidden:  # a planning fork ends at an answer it does not play: nothing known after it
            self.outcome_hidden = self._over = True
            self._candidates = ()
        else:
            self._refresh()
        reward = self._score - before
        self._rewards = self._rewards + (float(reward),)
        return self._observation(), float(reward), self._over, self._truncated(), self._info(invalid=False)

    def _move_at(self, index: int | None) -> str | None:
        """The legal move at ``index``, or ``None`` (out of range, masked, or the game is over)."""
        if index is None or self._over:
            return None
        texts = self._slots_now if self.action_slots is not None else self._candidates
        if not 0 <= index < len(texts):
            return None
        move = texts[index]
        if self.action_slots is not None and move not in self._legal_set:
            return None
        return move

    def _truncated(self) -> bool:
        return (not self._over) and self._steps >= self.max_steps

    def _invalid_step(self, action: Any) -> StepResult:
        if self._over:
            reason = "the game is over"
        elif len(self._candidates) == 0:
            reason = "there are no moves"
        elif self.action_slots is not None:
            legal = ", ".join(f"{self._slot_index[m]} ({m})" for m in self._candidates)
            reason = f"legal moves now are {legal}"
        else:
            reason = f"valid moves are 0..{len(self._candidates) - 1}"
        self._feedback = f"Invalid move {action!r}: {reason}. Nothing happened."
        if not self._over:
            self._steps += 1  # counts toward max_steps, so an agent cannot stall forever on invalid moves
        return self._observation(), 0.0, self._over, self._truncated(), self._info(invalid=True)

    def _refresh(self) -> None:
        progress = self._progress()
        if not isinstance(progress, Progress):
            progress = Progress(*progress)
        self._score, self._won, self._lost = float(progress.score), bool(progress.won), bool(progress.lost)
        self._over = progress.ended
        moves = [] if self._over else list(self._legal_moves())
        if self.action_slots is not None:
            slots = self._slot_moves()
            if slots is not self._slots_now and tuple(slots) != self._slots_now:
                slots = tuple(slots)
                if len(slots) != len(self.action_slots) or len(set(slots)) != len(slots):
                    raise RuntimeError(
                        f"{self.task_name}: _slot_moves() must give {len(self.action_slots)} distinct moves, "
                        f"got {slots}"
                    )
                self._slots_now, self._slot_index = slots, {m: i for i, m in enumerate(slots)}
            stray = [m for m in moves if m not in self._slot_index]
            if stray:
                raise RuntimeError(f"{self.task_name}: legal moves {stray} are not among its action slots")
            moves.sort(key=self._slot_index.__getitem__)
            self._legal_set = frozenset(moves)
        elif len(moves) > self.max_candidates:
            raise TooManyCandidatesError(self.task_name, self.max_candidates, len(moves))
        self._candidates = tuple(moves)

    def _state_text(self) -> str:
        """Feedback and state description: the observation without its ``Moves:`` paragraph."""
        parts = [p for p in (self._feedback.strip(), self._describe().strip()) if p]
        return "\n\n".join(parts)

    def _observation(self) -> str:
        state = self._state_text()
        if not self._candidates:
            return state
        moves = "Moves: " + ", ".join(self._candidates)
        return f"{state}\n\n{moves}" if state else moves

    def _info(self, invalid: bool) -> dict[str, Any]:
        info = {
            "candidates": list(self._slots_now if self.action_slots is not None else self._candidates),
            "action_mask": self.action_masks(),
            "score": self._score,
            "won": self._won,
            "lost": self._lost,
            "game_over": self._over,
            "invalid_action": invalid,
            "steps": self._steps,
        }
        info.update(self._extra_info())
        return info

    def _require_started(self) -> None:
        if not self._started:
            raise gym.error.ResetNeeded(f"{self.task_name}: call env.reset() before env.step()")

    def action_masks(self) -> np.ndarray:
        """The legal indices as int8 ones (all ones once the game is over: see the class doc)."""
        if self._over:
            return np.ones(self.max_candidates, dtype=np.int8)
        mask = np.zeros(self.max_candidates, dtype=np.int8)
        if self.action_slots is not None:
            mask[[self._slot_index[m] for m in self._candidates]] = 1
        else:
            mask[: len(self._candidates)] = 1
        return mask

    def index_of(self, move: str) -> int:
        """The action index of a legal move by its text; ``ValueError`` when it is not legal now."""
        if move in self._candidates:
            return self._slot_index[move] if self.action_slots is not None else self._candidates.index(move)
        shown = ", ".join(repr(c) for c in self._candidates[:12])
        more = "" if len(self._candidates) <= 12 else f", ... ({len(self._candidates)} in all)"
        raise ValueError(
            f"{self.task_name}: {move!r} is not a candidate move now; candidates are [{shown}{more}]"
        )

    def step_move(self, move: str) -> StepResult:
        """``step(index_of(move))``: play a legal move by its text."""
        return self.step(self.index_of(move))

    def situation(self, notes: Sequence[str] = ()) -> Situation:
        """What a policy may know now."""
        self._require_started()
        state = self._state_text()
        self._key_now = key = self.state_key()
        return Situation(
            task=self.task_name,
            observation=self._observation(),
            candidates=tuple(Candidate(t) for t in self._candidates),
            history=self._history,
            rewards=self._rewards,
            notes=tuple(notes),
            score=self._score,
            fork=self.planning_fork,
            state_key=key,
            state_text=state,
            visited=self._visited,
            privileged=Privileged(self),
        )

    def render(self) -> str | None:
        text = self._observation() if self._started else ""
        if self.render_mode == "human":
            print(text)
            return None
        return text
