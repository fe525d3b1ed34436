"""s1/Blackjack-v0: one hand of blackjack against RLCard's dealer.

The game is RLCard's ``blackjack`` game (``rlcard.games.blackjack``, rlcard
1.2.0): its ``BlackjackGame.init_game`` deals, and its dealer and judger play
and settle the hand. A move calls them in the order ``BlackjackGame.step``
does for one player, without building the state dicts ``step`` returns
(they cost a third of its time and this env reads the objects directly);
``tests/test_blackjack.py`` checks move for move that the result equals
``BlackjackGame.step``. The rules it plays (read from its source):

- ``decks`` standard 52-card decks (default 1, RLCard's default; 0 means an
  infinite deck, cards are not removed). The deck is rebuilt and shuffled for
  every hand, and each card is drawn at a uniformly random position of what
  is left (``np_random.choice``).
- Deal order: player, dealer (face down), player, dealer (face up).
- Moves: ``hit`` and ``stand`` only: no double, split, surrender or insurance.
  RLCard lets the player hit at any total, 21 included.
- The dealer draws to 17 and stands on all 17s, soft 17 included (S17). The
  dealer has no peek: a dealer blackjack is not checked before the player
  plays.
- Payoffs: +1 win, 0 push, -1 loss. A player who busts loses, whatever the
  dealer does. Naturals get no special treatment: a natural pays 1 (not 3:2),
  and hands are compared by total only, so a player's natural ties a dealer's
  three-card 21 and a player's three-card 21 ties a dealer's natural.

The exact expected payoff of basic strategy for these rules (one deck) is
-0.0428 a hand (the composition-dependent optimum -0.0425), computed by
``bench/blackjack.py``; 100,000 simulated hands give -0.0433 ± 0.0059.

Contract mapping: ``score`` is 0 while the hand is open and
``(payoff + 1) / 2`` once it is settled (1 win, 0.5 push, 0 loss), so the
episode's summed reward equals the final score; the raw payoff is in
``info["payoff"]`` (an int: 0 while the hand is open, so read it with
``info["game_over"]``) and ``info["outcome"]`` (``"playing"`` while the hand is
open, then ``"win"``/``"push"``/``"loss"``): one type per key, as Gymnasium's
vector envs need. A push ends the episode neither won nor
lost (``won=False, lost=False``, ``info["game_over"]=True``, score 0.5).

Seeding: every hand is dealt from a ``numpy.random.RandomState`` over a PCG64
bit generator seeded with the reset seed (``reset()`` without a seed draws one
from ``env.np_random``). RLCard's own envs seed an MT19937 state through a
SHA-512 hash; PCG64 is used here because its state copies an order of magnitude
faster than MT19937's (docs/benchmarks.md, "Figures behind the code"). RLCard's code calls the same
``RandomState`` methods on it; ``choice(n)`` is answered by ``randint(n)``,
which draws exactly the same numbers (numpy's ``choice`` calls it) in half the
time. ``fork()`` copies only the mutable game state
(deck, hands, statuses, winner table) and that generator, so a fork draws the
same cards: a fork shows the very card a hit would draw, so the task says so
(``fork_reveals_answer``) and Lookahead and Search refuse it unless the oracle
is asked for (``allow_oracle=True``).

``reset(options={"deck": "AS KH 7D 9C ..."})`` stacks the deck for a hand:
the listed cards (rank then suit, ``T`` or ``10`` for ten) come first in deal
order, then the rest of the deck in RLCard's standard order.

Actions: two fixed slots, 0 ``hit`` and 1 ``stand``, both legal until the
hand is settled. :attr:`BlackjackEnv.hand_values` is the structured state
(player total, soft, dealer's up card), the triple Gymnasium's Blackjack-v1
observes, for RL encoders (:mod:`s1gym.rl`).

``Rule`` is the hit/stand basic strategy :data:`BASIC_STRATEGY`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, NamedTuple

import numpy as np
from rlcard.games.base import Card
from rlcard.games.blackjack import Game as RLCardGame

from s1gym.checks import non_negative_int
from s1gym.core import Progress, S1Env

__all__ = ["BASIC_STRATEGY", "BlackjackEnv", "HandValues", "basic_strategy", "hand_total"]

HIT, STAND = "hit", "stand"
MOVES = (HIT, STAND)

#: Value of each RLCard rank (an ace counts 1 here; :func:`hand_total` makes it 11 when that fits).
RANK_VALUE: Mapping[str, int] = {r: min(i + 1, 10) for i, r in enumerate("A23456789TJQK")}
RANK_NAME: Mapping[str, str] = {r: ("10" if r == "T" else r) for r in RANK_VALUE}
SUITS = ("S", "H", "D", "C")

#: Hit/stand basic strategy for one deck, dealer stands on soft 17, no
#: double/split/surrender: the hit/stand cells of the single-deck S17 chart of
#: Baldwin, Cantey, Maisel & McDermott, "The Optimum Strategy in Blackjack",
#: JASA 51 (1956) 429-439, as tabulated by the Wizard of Odds single-deck
#: basic strategy (S17), with "double if allowed, else hit/stand" read as
#: hit/stand since RLCard has no double. Columns: dealer up card 2-9, 10, A.
#: Rows: ("hard"|"soft", player total); totals not listed: hard <= 11 and
#: soft <= 17 hit, hard >= 17 and soft >= 19 stand.
BASIC_STRATEGY: Mapping[tuple[str, int], str] = {
    #                 2  3  4  5  6  7  8  9  T  A
    ("hard", 12): "H H S S S H H H H H",
    ("hard", 13): "S S S S S H H H H H",
    ("hard", 14): "S S S S S H H H H H",
    ("hard", 15): "S S S S S H H H H H",
    ("hard", 16): "S S S S S H H H H H",
    ("soft", 18): "S S S S S S S H H S",
}
_UP_COLUMN = {2: 0, 3: 1, 4: 2, 5: 3, 6: 4, 7: 5, 8: 6, 9: 7, 10: 8, 1: 9}


def hand_total(ranks: Sequence[str]) -> tuple[int, bool]:
    """``(total, soft)`` of a hand of RLCard ranks: one ace counts 11 when that stays <= 21 (soft)."""
    hard = sum(map(RANK_VALUE.__getitem__, ranks))
    if hard <= 11 and "A" in ranks:
        return hard + 10, True
    return hard, False


def _cards_total(cards: Sequence[Card]) -> tuple[int, bool]:
    return hand_total([c.rank for c in cards])


def _hand_text(cards: Sequence[Card]) -> str:
    """``"A, 6 (soft 17)"``, ``"10, 7, 9 (26, bust)"``, ``"A, K (soft 21 blackjack)"``."""
    total, soft = _cards_total(cards)
    names = ", ".join([RANK_NAME[c.rank] for c in cards])
    if total > 21:
        return f"{names} ({total}, bust)"
    natural = " blackjack" if total == 21 and len(cards) == 2 else ""
    return f"{names} ({'soft' if soft else 'hard'} {total}{natural})"


#: RLCard's ``game.winner["player0"]`` -> payoff (0 there means the hand is open).
_PAYOFF = {2: 1, 1: 0, -1: -1}
_RESULT_TEXT = {1: "You win (payoff +1).", 0: "Push (payoff 0).", -1: "You lose (payoff -1)."}
_OUTCOME = {None: "playing", 1: "win", 0: "push", -1: "loss"}


class HandValues(NamedTuple):
    """What a blackjack player sees, as numbers (Gymnasium Blackjack-v1's observation triple)."""

    player_total: int  # 2..31 (over 21 is bust)
    soft: bool  # an ace counts 11
    dealer_up: int  # the dealer's face-up card: 1 (ace) to 10


def basic_strategy(total: int, soft: bool, dealer_up: int) -> str:
    """``"hit"`` or ``"stand"`` from :data:`BASIC_STRATEGY`; ``dealer_up`` is 1 (ace) to 10."""
    if soft:
        if total <= 17:
            return HIT
        if total >= 19:
            return STAND
    else:
        if total <= 11:
            return HIT
        if total >= 17:
            return STAND
    row = BASIC_STRATEGY[("soft" if soft else "hard", total)].split()
    return HIT if row[_UP_COLUMN[dealer_up]] == "H" else STAND


class _DealingRandomState(np.random.RandomState):
    """RLCard's dealer RNG: a RandomState whose ``choice(n)`` skips ``choice``'s argument handling.

    ``RandomState.choice(n)`` returns ``randint(0, n)`` for an int ``n``
    (same draws, same type); calling ``randint`` directly saves its argument handling on every card.
    """

    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None) -> Any:
        if size is None and p is None and type(a) is int:
            return self.randint(a)
        return super().choice(a, size, replace, p)


class _StackedDeck:
    """An RNG stand-in for RLCard's dealer that deals a given card order.

    RLCard's ``Dealer`` shuffles its deck once (``shuffle``) and then draws
    ``deck[choice(len(deck))]``; this "shuffle" puts the stack in reverse
    and ``choice`` always takes the last card, so the stack is dealt in order.
    It holds no state after the shuffle, so forks share it.
    """

    def __init__(self, order: Sequence[Card]) -> None:
        self._order = list(order)

    def shuffle(self, deck: np.ndarray) -> None:
        deck[:] = np.array(self._order[::-1], dtype=object)

    @staticmethod
    def choice(n: int) -> int:
        return n - 1


def _parse_card(code: str) -> Card:
    text = code.strip().upper()
    rank, suit = text[:-1], text[-1:]
    rank = "T" if rank == "10" else rank
    if rank not in RANK_VALUE or suit not in SUITS:
        raise ValueError(
            f"Blackjack: bad card {code!r} in options['deck']; write rank then suit, e.g. 'AS', 'TH', '10D', '7C'"
        )
    return Card(suit, rank)


def _copy_state(obj: Any, **changes: Any) -> Any:
    """A shallow copy of an RLCard object (no ``__init__``), with some attributes replaced."""
    new = object.__new__(type(obj))
    new.__dict__.update(obj.__dict__)
    new.__dict__.update(changes)
    return new


def _copy_rng(rng: Any) -> Any:
    """An independent RandomState that continues exactly where ``rng`` is (stacked decks are shared)."""
    if isinstance(rng, _StackedDeck):
        return rng
    bit_generator = np.random.PCG64(_SEED_SEQUENCE)
    bit_generator.state = rng._bit_generator.state
    return _DealingRandomState(bit_generator)


#: Any seed sequence: only used to construct a PCG64 whose state is then overwritten (cheap).
_SEED_SEQUENCE = np.random.SeedSequence(0)


class BlackjackEnv(S1Env):
    """One hand of RLCard blackjack per episode (rules and scoring in the module docstring)."""

    task_name = "Blackjack"
    default_max_candidates = 2
    #: A fork deals from the same shuffled deck: looking ahead would read the next card.
    fork_reveals_answer = True
    #: A one-deck hand ends within 12 moves; an infinite deck allows 21 aces and a bust.
    default_max_steps = 25
    option_help: ClassVar[Mapping[str, str]] = {
        "decks": "number of 52-card decks in the shoe, reshuffled every hand (default 1; 0 = infinite deck)",
        "max_steps": "step limit of a hand (default 25; a hand never needs that many)",
    }

    def __init__(
        self,
        *,
        decks: int = 1,
        max_candidates: int | None = None,
        max_steps: int | None = None,
        render_mode: str | None = None,
    ) -> None:
        self.decks = non_negative_int("Blackjack: decks", decks)
        super().__init__(
            max_candidates=max_candidates, max_steps=max_steps, render_mode=render_mode, action_slots=MOVES
        )
        self._game = RLCardGame()
        self._game.configure({"game_num_players": 1, "game_num_decks": self.decks})
        deck_text = "an infinite deck" if self.decks == 0 else f"{self.decks} deck{'s' * (self.decks > 1)}"
        self._intro = (
            f"Blackjack ({deck_text}, shuffled every hand): get closer to 21 than the dealer without going "
            "over. Aces count 1 or 11, face cards 10. The dealer draws to 17 and stands on all 17s. "
            "A win pays 1 (a blackjack too), a tie is a push."
        )

    # ---------------------------------------------------------------- hooks
    def _new_game(self, seed: int | None, options: dict[str, Any]) -> str:
        unknown = set(options) - {"deck"}
        if unknown:
            raise ValueError(f"Blackjack: unknown reset option(s) {sorted(unknown)}; the only one is 'deck'")
        if "deck" in options:
            self._game.np_random = self._stacked_deck(options["deck"])
        else:
            if seed is None:
                seed = int(self.np_random.integers(2**63))
            self._game.np_random = _DealingRandomState(np.random.PCG64(seed))
        self._game.init_game()
        self._update()
        return "New hand."

    def _stacked_deck(self, deck: Any) -> _StackedDeck:
        if self.decks == 0:
            raise ValueError("Blackjack: options['deck'] needs a finite deck; make the env with decks >= 1")
        codes = deck.split() if isinstance(deck, str) else list(deck)
        top = [_parse_card(c) for c in codes]
        rest = [Card(s, r) for s in SUITS for r in "A23456789TJQK"] * self.decks  # RLCard's deck order
        for card in top:
            if card not in rest:
                raise ValueError(
                    f"Blackjack: options['deck'] lists {card.rank}{card.suit} more often than "
                    f"{self.decks} deck(s) hold it"
                )
            rest.remove(card)
        return _StackedDeck(top + rest)

    def _legal_moves(self) -> list[str]:
        return list(MOVES)

    def _play(self, move: str) -> str:
        game = self._game
        player, dealer, judger = game.players[0], game.dealer, game.judger
        # BlackjackGame.step for one player (allow_step_back is off, so no history).
        if move == HIT:
            dealer.deal_card(player)
        player.status, player.score = judger.judge_round(player)
        if move == STAND or player.status == "bust":
            while judger.judge_score(dealer.hand) < 17:
                dealer.deal_card(dealer)
            dealer.status, dealer.score = judger.judge_round(dealer)
            judger.judge_game(game, 0)
            game.game_pointer = 0
        self._update()
        total = player.score
        if move == HIT:
            card = RANK_NAME[player.hand[-1].rank]
            if total > 21:
                return f"You hit and draw {card}: bust with {total}."
            return f"You hit and draw {card}: {self._player_text}."
        drew = ", ".join([RANK_NAME[c.rank] for c in dealer.hand[2:]])
        drew = f" and draws {drew}" if drew else ""
        final = "bust" if dealer.score > 21 else str(dealer.score)
        return f"You stand on {total}. The dealer turns over {RANK_NAME[dealer.hand[0].rank]}{drew}: {final}."

    def _update(self) -> None:
        """Cache the payoff and the state text after RLCard moved (read several times a step)."""
        game = self._game
        player, dealer = game.players[0], game.dealer
        self._payoff = _PAYOFF.get(game.winner["player0"])
        total, soft = _cards_total(player.hand)
        self._player_text = f"{'soft' if soft else 'hard'} {total}"
        lines = [self._intro, "Your hand: " + _hand_text(player.hand)]
        if self._payoff is None:
            lines.append(f"Dealer shows: {RANK_NAME[dealer.hand[1].rank]} (one card face down)")
        else:
            lines.append("Dealer's hand: " + _hand_text([dealer.hand[1], dealer.hand[0], *dealer.hand[2:]]))
            lines.append(_RESULT_TEXT[self._payoff])
        self._text = "\n".join(lines)

    def _describe(self) -> str:
        return self._text

    def _progress(self) -> Progress:
        payoff = self._payoff
        if payoff is None:
            return Progress(0.0)
        return Progress((payoff + 1) / 2, won=payoff > 0, lost=payoff < 0, over=True)

    def _fork_into(self, clone: S1Env) -> None:
        game = self._game
        rng = _copy_rng(game.np_random)
        dealer = game.dealer
        clone._game = _copy_state(
            game,
            np_random=rng,
            dealer=_copy_state(dealer, np_random=rng, deck=list(dealer.deck), hand=list(dealer.hand)),
            players=[_copy_state(p, np_random=rng, hand=list(p.hand)) for p in game.players],
            judger=_copy_state(game.judger, np_random=rng),
            winner=dict(game.winner),
            history=list(game.history),
        )

    def _extra_info(self) -> dict[str, Any]:
        return {"payoff": self._payoff or 0, "outcome": _OUTCOME[self._payoff]}

    # ------------------------------------------------------------ baseline
    def rule_action(self) -> str:
        """Basic strategy (:func:`basic_strategy`) from the player's total and the dealer's up card."""
        return basic_strategy(*self.hand_values)

    def expert_action(self) -> str:
        """Same as :meth:`rule_action`: basic strategy uses only what the player sees."""
        return self.rule_action()

    # ------------------------------------------------------------- helpers
    @property
    def payoff(self) -> int | None:
        """The settled hand's payoff (+1, 0, -1; RLCard's ``get_payoffs``), ``None`` while the hand is open."""
        self._require_started()
        return self._payoff

    @property
    def hand_values(self) -> HandValues:
        """The player's total and softness and the dealer's up card (what basic strategy reads)."""
        self._require_started()
        total, soft = _cards_total(self._game.players[0].hand)
        return HandValues(total, soft, RANK_VALUE[self._game.dealer.hand[1].rank])

    @classmethod
    def summarize_episodes(cls, final_infos: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """Mean payoff with a normal 95 % interval, and win/push/loss counts of the settled hands."""
        settled = [i["payoff"] for i in final_infos if i.get("payoff") is not None and i.get("outcome") != "playing"]
        payoffs = np.array(settled, dtype=float)
        if payoffs.size == 0:
            return {}
        half = 1.96 * payoffs.std(ddof=1) / math.sqrt(payoffs.size) if payoffs.size > 1 else float("nan")
        return {
            "hands": int(payoffs.size),
            "mean_payoff": float(payoffs.mean()),
            "mean_payoff_ci95": [float(payoffs.mean() - half), float(payoffs.mean() + half)],
            "wins": int((payoffs > 0).sum()),
            "pushes": int((payoffs == 0).sum()),
            "losses": int((payoffs < 0).sum()),
        }
