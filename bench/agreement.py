"""What measuring agreement with the expert costs a cheap policy: ``Random`` on CookingWorld medium test games.

    python bench/agreement.py [--games 6] [--rounds 5]

``play_episode`` asks ``env.expert_move()`` after every decision (the agreement columns). A random player
leaves the expert's plan at nearly every move, so the CookingWorld expert replans from TWX's object tree
each time. Three arms in one process, alternated ``--rounds`` times against load drift (each round plays
the same games with the same seeds):

- ``off``: ``agreement=False`` (``s1 run --agreement off``), the expert never asked;
- ``on``: the expert's plan kept across moves that only read the game (examine, look, inventory, read:
  s1gym.tasks.twx.expert.READ_ONLY), replanned when the player leaves it otherwise;
- ``on, replan``: replanned after every move off the plan (as before).

Wall time of the games and their CPU time (this process's and the TWX JVM's, which on a loaded machine
varies less than the wall time), median over rounds; each arm's ratio to ``off``; the moves and the expert's
moves are checked identical across arms. The machine's load average is printed with the table.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import _timing
import gymnasium as gym

import s1gym  # noqa: F401
from s1gym.policies import Random
from s1gym.runner.episode import play_episode
from s1gym.tasks.twx import expert
from s1gym.tasks.twx.engine import get_jvm

_LEAVES_STATE = expert.leaves_state


def cpu_s() -> float:
    """CPU seconds so far of this process and of the TWX JVM."""
    return _timing.cpu_s(get_jvm().process.pid)


def play(env, games: int, arm: str) -> tuple[float, float, list]:
    expert.leaves_state = (lambda move: False) if arm == "on, replan" else _LEAVES_STATE
    t, c = time.perf_counter(), cpu_s()
    eps = [play_episode(env, Random(seed=s), s, agreement=arm != "off") for s in range(games)]
    took, cpu = time.perf_counter() - t, cpu_s() - c
    expert.leaves_state = _LEAVES_STATE
    return took, cpu, [[(k["action"], k.get("expert")) for k in ep["ticks"]] for ep in eps]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    env = gym.make("s1/CookingWorld-v0", size="medium", fold="test")
    arms = ("off", "on", "on, replan")
    play(env, args.games, "on")  # warm: JVM, gold paths, room maps
    times: dict[str, list[float]] = {a: [] for a in arms}
    cpus: dict[str, list[float]] = {a: [] for a in arms}
    moves: dict[str, list] = {}
    for r in range(args.rounds):
        for arm in arms if r % 2 == 0 else arms[::-1]:
            took, cpu, played = play(env, args.games, arm)
            times[arm].append(took)
            cpus[arm].append(cpu)
            moves.setdefault(arm, played)
            assert played == moves[arm], f"{arm}: round {r} played other moves"
    ticks = sum(len(g) for g in moves["off"])
    assert [[a for a, _ in g] for g in moves["on"]] == [[a for a, _ in g] for g in moves["off"]]
    assert moves["on"] == moves["on, replan"], "the expert's moves differ when its plan is kept"
    env.close()
    load = os.getloadavg()
    print(f"Random on {args.games} CookingWorld medium test games ({ticks} decisions), median of {args.rounds} "
          f"rounds; {os.cpu_count()} cpus, load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}")
    off, off_cpu = statistics.median(times["off"]), statistics.median(cpus["off"])
    print(f"{'agreement':<14}  {'games':>8}  {'per decision':>12}  {'vs off':>6}  {'CPU':>8}  {'vs off':>6}")
    for arm in arms:
        t, c = statistics.median(times[arm]), statistics.median(cpus[arm])
        print(f"{arm:<14}  {t:>6.2f} s  {t / ticks * 1e3:>9.2f} ms  {t / off:>5.2f}x  {c:>6.2f} s  {c / off_cpu:>5.2f}x")


if __name__ == "__main__":
    main()
