"""s1/Blackjack-v0: totals, dealer play, payoffs and naturals on stacked decks,
equivalence with RLCard's own ``BlackjackGame.step``, basic strategy and fork.

The generic contract (check_env, determinism, fork properties) is in test_contract.py.
Stacked decks deal in RLCard's order: player, dealer (face down), player,
dealer (face up), then the player's hits, then the dealer's draws.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import rlcard
from hypothesis import given, settings
from hypothesis import strategies as st

import s1gym  # noqa: F401  (registers the envs)
from s1gym.tasks.games.blackjack import BlackjackEnv, basic_strategy, hand_total

PROPERTY = settings(max_examples=25, deadline=None)


def make(**options) -> BlackjackEnv:
    return gym.make("s1/Blackjack-v0", **options)


def stacked(deck: str, **options) -> BlackjackEnv:
    env = make(**options)
    env.reset(options={"deck": deck})
    return env


def play(env: BlackjackEnv, *moves: str):
    result = None
    for move in moves:
        result = env.step(env.index_of(move))
    return result


@pytest.mark.parametrize(
    ("ranks", "total", "soft"),
    [
        (["A", "6"], 17, True),
        (["A", "6", "T"], 17, False),
        (["A", "A"], 12, True),
        (["A", "A", "9"], 21, True),
        (["A", "A", "A", "A", "7"], 21, True),
        (["A", "K"], 21, True),
        (["A", "5", "A", "K"], 17, False),
        (["K", "Q", "2"], 22, False),
        (["9", "7"], 16, False),
    ],
)
def test_hand_totals_with_aces(ranks, total, soft):
    assert hand_total(ranks) == (total, soft)


@pytest.mark.parametrize(
    ("total", "soft", "up", "move"),
    [
        (16, False, 10, "hit"),
        (16, False, 6, "stand"),
        (12, False, 2, "hit"),
        (12, False, 3, "hit"),
        (12, False, 4, "stand"),
        (13, False, 2, "stand"),
        (11, False, 6, "hit"),
        (17, False, 1, "stand"),
        (17, True, 6, "hit"),
        (18, True, 2, "stand"),
        (18, True, 8, "stand"),
        (18, True, 9, "hit"),
        (18, True, 10, "hit"),
        (18, True, 1, "stand"),
        (19, True, 10, "stand"),
        (21, True, 10, "stand"),
    ],
)
def test_basic_strategy_table(total, soft, up, move):
    assert basic_strategy(total, soft, up) == move


def test_stacked_deal_order_and_observation():
    env = make()
    obs, info = env.reset(options={"deck": "TS 6H 7D TC"})
    assert "Your hand: 10, 7 (hard 17)" in obs
    assert "Dealer shows: 10 (one card face down)" in obs
    assert "6" not in obs.split("Dealer shows:")[1]  # the hole card stays hidden
    assert info["candidates"] == ["hit", "stand"] and info["score"] == 0.0
    assert (info["payoff"], info["outcome"], info["game_over"]) == (0, "playing", False)  # one type per key
    assert env.unwrapped.hand_values == (17, False, 10)


def test_dealer_hits_16_and_beats_the_player():
    env = stacked("TS 6H 7D TC 5D")
    obs, reward, terminated, _, info = play(env, "stand")
    assert terminated and info["payoff"] == -1 and info["outcome"] == "loss"
    assert info["lost"] and not info["won"] and info["score"] == 0.0 and reward == 0.0
    assert "Dealer's hand: 10, 6, 5 (hard 21)" in obs


def test_dealer_stands_on_soft_17():
    env = stacked("TS AH 7D 6C 4D")
    obs, reward, terminated, _, info = play(env, "stand")
    assert "Dealer's hand: 6, A (soft 17)" in obs
    assert info["payoff"] == 0 and info["outcome"] == "push"
    # A push ends the hand neither won nor lost, with score 0.5.
    assert terminated and info["game_over"] and not info["lost"] and not info["won"]
    assert info["score"] == 0.5 and reward == 0.5


def test_dealer_hits_soft_16_and_keeps_drawing_on_hard_totals():
    env = stacked("TS AH 8D 5C TD 5H")
    obs, *_, info = play(env, "stand")
    assert "Dealer's hand: 5, A, 10, 5 (hard 21)" in obs
    assert info["payoff"] == -1


def test_dealer_busts_and_the_player_wins():
    env = stacked("TS 6H 7D TC 9D")
    obs, reward, _terminated, _, info = play(env, "stand")
    assert info["payoff"] == 1 and info["won"] and info["score"] == 1.0 and reward == 1.0
    assert "(25, bust)" in obs and "You win" in obs


def test_player_bust_loses_even_when_the_dealer_busts():
    env = stacked("TS 6H 6D TC 8S 9D")
    obs, _reward, terminated, _, info = play(env, "hit")
    assert terminated and info["payoff"] == -1
    assert "bust with 24" in obs
    assert env.unwrapped._game.dealer.score == 25  # RLCard still plays the dealer's hand


def test_higher_total_wins_and_equal_totals_push():
    env = stacked("TS TH 9D 8C")
    assert play(env, "stand")[4]["payoff"] == 1  # 19 vs 18
    env = stacked("TS TH 8D 8C")
    assert play(env, "stand")[4]["payoff"] == 0  # 18 vs 18


def test_natural_pays_one_like_any_win():
    env = make()
    obs, _ = env.reset(options={"deck": "AS 9H KD 8C"})
    assert "(soft 21 blackjack)" in obs
    assert env.candidates == ("hit", "stand")  # RLCard does not end a natural early
    _, reward, *_, info = play(env, "stand")
    assert info["payoff"] == 1 and reward == 1.0


@pytest.mark.parametrize(
    ("deck", "moves"),
    [
        ("AS AH KD KC", ["stand"]),  # natural vs natural
        ("7S AH 4D KC TH", ["hit", "stand"]),  # three-card 21 vs the dealer's natural
        ("AS 6H KD 5C TH", ["stand"]),  # natural vs the dealer's three-card 21
    ],
)
def test_naturals_are_compared_by_total_only(deck, moves):
    env = stacked(deck)
    assert play(env, *moves)[4]["payoff"] == 0


def test_hitting_on_21_is_allowed_as_in_rlcard():
    env = stacked("AS 9H KD 8C 5H")
    _, _, terminated, _, _info = play(env, "hit")
    assert not terminated and "hard 16" in env.situation().observation


@PROPERTY
@given(seed=st.integers(0, 2**32), choices=st.lists(st.integers(0, 1), min_size=12, max_size=12))
def test_moves_equal_rlcard_blackjack_game_step(seed, choices):
    """Same RNG, same moves: our hand equals RLCard's own env move for move (cards, payoff)."""
    ours = make()
    ours.reset(seed=seed)
    raw = rlcard.make("blackjack")
    raw.game.np_random = np.random.RandomState(np.random.PCG64(seed))  # a plain RandomState
    raw.reset()
    game = ours.unwrapped._game
    for c in choices:
        assert _cards(game) == _cards(raw.game)
        if raw.is_over():
            break
        raw.step(c)
        ours.step(c)
    assert raw.is_over() and ours.done
    assert _cards(game) == _cards(raw.game)
    assert ours.unwrapped.payoff == int(raw.get_payoffs()[0])


def _cards(game) -> tuple:
    return [str(c) for c in game.players[0].hand], [str(c) for c in game.dealer.hand], dict(game.winner)


def test_fork_draws_the_same_cards_and_leaves_the_parent_alone():
    env = make()
    env.reset(seed=12)
    deck_before = len(env.unwrapped._game.dealer.deck)
    a, b = env.fork(), env.fork()
    assert play(a, "hit")[0] == play(b, "hit")[0]
    if not a.done:
        assert play(a, "stand")[0] == play(b, "stand")[0]
    assert len(env.unwrapped._game.dealer.deck) == deck_before and env.steps == 0
    assert a.unwrapped._game.np_random is not env.unwrapped._game.np_random


def test_seeded_hands_are_reproducible_and_differ_between_seeds():
    a, b = make(), make()
    assert a.reset(seed=3)[0] == b.reset(seed=3)[0]
    openings = {make().reset(seed=s)[0] for s in range(20)}
    assert len(openings) > 10


def test_rule_plays_basic_strategy_through_the_rule_policy():
    from s1gym.policies import Rule

    env = stacked("TS 6H 2D TC")  # hard 12 vs 10: hit
    assert env.rule_action() == "hit"
    decision = Rule().decide(env.situation())
    assert env.candidates[decision.action] == "hit"
    env = stacked("TS 6H 2D 5C")  # hard 12 vs 5: stand
    assert env.rule_action() == "stand"


def test_basic_strategy_beats_always_standing_on_a_few_thousand_hands():
    """A coarse check (the exact value, -0.0428, and a 100,000-hand run are in bench/blackjack.py)."""
    env = make()
    totals = {"rule": 0, "stand": 0}
    hands = 3000
    for seed in range(hands):
        for name in totals:
            env.reset(seed=seed)
            while not env.done:
                env.step(env.index_of(env.rule_action() if name == "rule" else "stand"))
            totals[name] += env.payoff
    assert -0.09 < totals["rule"] / hands < 0.0
    assert totals["rule"] > totals["stand"]


def test_infinite_deck_and_several_decks():
    for decks in (0, 6):
        env = make(decks=decks)
        for seed in range(30):
            env.reset(seed=seed)
            while not env.done:
                env.step(env.index_of(env.rule_action()))
            assert env.payoff in (-1, 0, 1)
    six = make(decks=6)
    six.reset(seed=0)
    assert len(six.unwrapped._game.dealer.deck) == 6 * 52 - 4
    infinite = make(decks=0)
    infinite.reset(seed=0)
    assert len(infinite.unwrapped._game.dealer.deck) == 52  # RLCard never removes a card


def test_bad_options_are_clear_errors():
    with pytest.raises(ValueError, match="decks must be a non-negative integer"):
        make(decks=-1)
    env = make()
    with pytest.raises(ValueError, match="bad card 'XX'"):
        env.reset(options={"deck": "AS XX"})
    with pytest.raises(ValueError, match="more often than 1 deck"):
        env.reset(options={"deck": "AS AS"})
    with pytest.raises(ValueError, match="unknown reset option"):
        env.reset(options={"shoe": 1})
    with pytest.raises(ValueError, match="finite deck"):
        make(decks=0).reset(options={"deck": "AS"})


def test_summarize_episodes():
    infos = [{"payoff": 1}, {"payoff": -1}, {"payoff": 0}, {"payoff": -1}, {"payoff": None}]
    summary = BlackjackEnv.summarize_episodes(infos)
    assert summary["hands"] == 4 and summary["mean_payoff"] == pytest.approx(-0.25)
    assert (summary["wins"], summary["pushes"], summary["losses"]) == (1, 1, 2)
    low, high = summary["mean_payoff_ci95"]
    assert low < -0.25 < high
