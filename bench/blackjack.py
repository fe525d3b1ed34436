"""Blackjack benchmark: our env against RLCard's raw env, and basic strategy's payoff.

    python bench/blackjack.py                 # about a minute or two on 2 busy cores
    python bench/blackjack.py --hands 20000 --no-exact

1. Step: ``env.step`` of s1/Blackjack-v0 against ``rlcard.make("blackjack").step``
   (as shipped, MT19937 RandomState; and with the same PCG64 RandomState ours
   uses), both playing basic strategy from hands dealt before the clock
   starts. CPU time (``time.process_time``), so other processes on a busy
   machine do not count; rounds alternate between the envs and the ratio is
   the median of the per-round ratios.
2. Fork: ``env.fork()`` against ``copy.deepcopy`` of the RLCard env, mid-hand.
3. Basic strategy: mean payoff over ``--hands`` seeded hands (seeds 0..n-1)
   with a 95 % normal interval, against the exact expected payoff of the same
   strategy for the rules RLCard plays (one deck reshuffled every hand, S17,
   hit/stand only, naturals pay 1 and compare by total), computed by
   recursion over deck compositions (about 20 s). The composition-dependent
   optimum (best of hit/stand for the exact cards left) is printed next to it.
"""

from __future__ import annotations

import argparse
import copy
import math
import statistics
import sys
import time
from functools import cache
from pathlib import Path

import gymnasium as gym
import numpy as np
import rlcard

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _timing import cpu_us

import s1gym  # noqa: F401
from s1gym.tasks.games.blackjack import RANK_VALUE, _copy_state, basic_strategy, hand_total


def rlcard_action(game) -> int:
    """Basic strategy's action index (0 hit, 1 stand) read from an RLCard game: same cost for both envs."""
    total, soft = hand_total([c.rank for c in game.players[0].hand])
    return 0 if basic_strategy(total, soft, RANK_VALUE[game.dealer.hand[1].rank]) == "hit" else 1


def copy_raw_env(env):
    """A cheap copy of a raw RLCard env mid-hand (fresh deck/hand lists; the RNG is shared, fine for timing)."""
    game = env.game
    new = copy.copy(env)
    new.action_recorder = list(env.action_recorder)
    new.game = _copy_state(
        game,
        dealer=_copy_state(game.dealer, deck=list(game.dealer.deck), hand=list(game.dealer.hand)),
        players=[_copy_state(p, hand=list(p.hand)) for p in game.players],
        winner=dict(game.winner),
        history=list(game.history),
    )
    return new


def play_block(envs: list, step, over) -> tuple[float, int]:
    """CPU seconds spent playing every env of ``envs`` to the end of its hand, and the steps taken.

    Timed with ``time.process_time`` around the whole block: CPU time, so the
    other processes on a busy machine do not count (wall time does).
    """
    steps = 0
    t0 = time.process_time()
    for env in envs:
        while not over(env):
            step(env, rlcard_action(env.game if hasattr(env, "game") else env._game))
            steps += 1
    return time.process_time() - t0, steps


def bench_step(rounds: int, hands: int) -> None:
    """Hands are dealt before the clock starts; the block only steps them (decisions read the same way)."""
    proto = gym.make("s1/Blackjack-v0")
    raw = rlcard.make("blackjack", config={"seed": 0})
    raw_pcg = rlcard.make("blackjack", config={"seed": 0})
    raw_pcg.game.np_random = np.random.RandomState(np.random.PCG64(0))
    results: dict[str, list[float]] = {"ours": [], "raw": [], "pcg": []}
    for k in range(rounds):
        ours = []
        for seed in range(k * hands, (k + 1) * hands):
            proto.reset(seed=seed)
            ours.append(proto.fork())
        raws, pcgs = [], []
        for env, out in ((raw, raws), (raw_pcg, pcgs)):
            for _ in range(hands):
                env.reset()
                out.append(copy_raw_env(env))
        for name, envs, step, over in (
            ("raw", raws, lambda e, a: e.step(a), lambda e: e.is_over()),
            ("ours", ours, lambda e, a: e.step(a), lambda e: e.done),
            ("pcg", pcgs, lambda e, a: e.step(a), lambda e: e.is_over()),
        ):
            spent, steps = play_block(envs, step, over)
            results[name].append(spent / steps * 1e6)
    med = {k: statistics.median(v) for k, v in results.items()}
    ratio = statistics.median(o / r for o, r in zip(results["ours"], results["raw"]))
    ratio_pcg = statistics.median(o / r for o, r in zip(results["ours"], results["pcg"]))
    print(f"step   s1/Blackjack-v0 env.step              {med['ours']:7.1f} µs")
    print(f"step   RLCard env.step (as shipped, MT19937) {med['raw']:7.1f} µs   ours/raw = {ratio:.2f}x")
    print(f"step   RLCard env.step (PCG64 RandomState)   {med['pcg']:7.1f} µs   ours/raw = {ratio_pcg:.2f}x")


def bench_fork(repeats: int) -> None:
    ours = gym.make("s1/Blackjack-v0")
    ours.reset(seed=1)
    raw = rlcard.make("blackjack", config={"seed": 0})
    raw.reset()
    t_fork = cpu_us(ours.fork, repeats)
    t_deep = cpu_us(lambda: copy.deepcopy(raw), max(1, repeats // 20))
    t_deep_ours = cpu_us(lambda: copy.deepcopy(ours), max(1, repeats // 20))
    print(f"fork   s1/Blackjack-v0 env.fork()            {t_fork:7.1f} µs")
    print(
        f"fork   copy.deepcopy(RLCard env)             {t_deep:7.1f} µs   deepcopy/fork = {t_deep / t_fork:.0f}x"
    )
    print(f"fork   copy.deepcopy(s1 env)                 {t_deep_ours:7.1f} µs")


def simulate(hands: int) -> tuple[float, float, list[int]]:
    env = gym.make("s1/Blackjack-v0")
    payoffs = np.empty(hands)
    for seed in range(hands):
        env.reset(seed=seed)
        while not env.done:
            env.step(env.index_of(env.rule_action()))
        payoffs[seed] = env.payoff
    half = 1.96 * payoffs.std(ddof=1) / math.sqrt(hands)
    counts = [int((payoffs == v).sum()) for v in (1, 0, -1)]
    return float(payoffs.mean()), half, counts


def exact_value(optimal: bool = False, decks: int = 1) -> float:
    """Exact expected payoff of basic strategy (or the composition-dependent optimum), one hand.

    Cards are exchangeable, so the dealer's hole card can be drawn after the
    player's hits: condition on the player's two cards and the up card, then
    recurse over what is left. Payoffs as RLCard settles them.
    """
    full = tuple([4 * decks] * 9 + [16 * decks])  # values 1 (ace) .. 10

    def take(deck: tuple[int, ...], i: int) -> tuple[int, ...]:
        return deck[:i] + (deck[i] - 1,) + deck[i + 1 :]

    @cache
    def dealer(deck: tuple[int, ...], hard: int, ace: bool) -> dict[int, float]:
        total = hard + 10 if ace and hard + 10 <= 21 else hard
        if total >= 17:  # stands on soft 17
            return {min(total, 22): 1.0}
        n, out = sum(deck), {}
        for i, k in enumerate(deck):
            if k:
                for t, p in dealer(take(deck, i), hard + i + 1, ace or i == 0).items():
                    out[t] = out.get(t, 0.0) + p * k / n
        return out

    @cache
    def stand(total: int, deck: tuple[int, ...], up: int) -> float:
        return sum(
            p * (1 if t == 22 or total > t else 0 if total == t else -1)
            for t, p in dealer(deck, up, up == 1).items()
        )

    @cache
    def value(hard: int, ace: bool, deck: tuple[int, ...], up: int) -> float:
        total = hard + 10 if ace and hard + 10 <= 21 else hard
        s = stand(total, deck, up)
        if not optimal and basic_strategy(total, total != hard, up) == "stand":
            return s
        n, h = sum(deck), 0.0
        for i, k in enumerate(deck):
            if k:
                h += (k / n) * (
                    -1.0 if hard + i + 1 > 21 else value(hard + i + 1, ace or i == 0, take(deck, i), up)
                )
        return max(s, h) if optimal else h

    ev = 0.0
    for a in range(10):
        for b in range(10):
            for u in range(10):
                deck, p = list(full), 1.0
                for c in (a, b, u):
                    p *= deck[c] / sum(deck)
                    deck[c] -= 1
                if p > 0:
                    ev += p * value(a + b + 2, a == 0 or b == 0, tuple(deck), u + 1)
    return ev


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--hands", type=int, default=100_000, help="hands of basic strategy (default 100000)")
    parser.add_argument("--rounds", type=int, default=7, help="alternating timing rounds (default 7)")
    parser.add_argument("--round-hands", type=int, default=2000, help="hands per timing round (default 2000)")
    parser.add_argument("--no-exact", action="store_true", help="skip the exact expected-value computation")
    args = parser.parse_args()

    print(f"rlcard {rlcard.__version__ if hasattr(rlcard, '__version__') else '?'}, numpy {np.__version__}")
    bench_step(args.rounds, args.round_hands)
    bench_fork(2000)
    t0 = time.perf_counter()
    mean, half, (wins, pushes, losses) = simulate(args.hands)
    secs = time.perf_counter() - t0
    print(
        f"rule   basic strategy over {args.hands} hands: mean payoff {mean:+.4f} ± {half:.4f} (95 %), "
        f"win/push/loss {wins}/{pushes}/{losses}  [{args.hands / secs:,.0f} hands/s with rule_action]"
    )
    if not args.no_exact:
        t0 = time.perf_counter()
        exact = exact_value()
        best = exact_value(optimal=True)
        inside = abs(mean - exact) <= half
        print(
            f"exact  basic strategy {exact:+.5f}, composition-dependent optimum {best:+.5f} "
            f"({time.perf_counter() - t0:.0f} s); simulation {'inside' if inside else 'OUTSIDE'} its 95 % interval"
        )


if __name__ == "__main__":
    main()
