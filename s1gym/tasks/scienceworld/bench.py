"""Measurements of the ScienceWorld family (docs/benchmarks.md): gold survival, step and fork cost.

``python -m s1gym.tasks.scienceworld.bench survival --variations 2`` plays the expert (the gold path mapped
to candidates) on the first ``--variations`` train variations of each of the 30 task types and counts the
gold-path states whose gold move names a candidate, the episodes won and the candidate counts.
``python -m s1gym.tasks.scienceworld.bench speed`` times, in one run and one JVM, a raw simulator step
(``PythonInterface.step`` alone), the env's step (the step plus look, inventory, the valid list and the
narrowing) and at depth 40 a fork with its first step (:func:`speed`); ``S1GYM_SW_HELPER=0`` runs it without
the family's JVM helper (reads one py4j call each, forks replay). ``python -m s1gym.tasks.scienceworld.bench
forks`` checks snapshots and exact replays against the game played straight on every task (:func:`fork_exactness`).
``python -m s1gym.tasks.scienceworld.bench table`` plays issue 52's first policy table on test variations
(:func:`policy_table`; its games, step limit, Search budget and time caps are fixed in :data:`TABLE_TASKS` and
:data:`TABLE_POLICIES` as docs/benchmarks.md's protocol states them), ``table2`` the second: every task type
with the fitted Local (:func:`full_table`, :data:`FULL_TABLE_POLICIES`), ``gate`` its rows on the 60-game dev gate
(dev seeds :data:`GATE_SEEDS` of every type); with ``--game-calls N`` their games are capped at N policy calls
instead of 120 s, the same moves on any machine; ``loops`` and ``refill`` are the dev checks behind two of its rows
(:func:`loop_dev_table`, :func:`refill_dev_table`).
``python -m s1gym.tasks.scienceworld.bench children`` times Lookahead's annotate with a state's children
stepped in one JVM round trip against one fork and step each (:func:`children_speed`); ``rss`` reads the
JVM's and Python's resident memory over 500 short episodes (:func:`rss_after_episodes`).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from typing import Any

import gymnasium as gym
import numpy as np

import s1gym  # noqa: F401 - registers the ids
from s1gym.core import BasePolicy, Decision, Situation, Usage
from s1gym.tasks.scienceworld.env import TASKS, ScienceWorldEnv

__all__ = ["FULL_TABLE_POLICIES", "TABLE_POLICIES", "TABLE_TASKS", "children_speed", "deviation_recovery",
           "fork_exactness", "full_table", "gold_survival", "policy_table", "rss_after_episodes", "speed"]

#: the table's five task types (docs/benchmarks.md, protocol of 2026-12-06): per ScienceWorld task group
#: (the number before the dash of its id) the type with the shortest gold paths on train variations 0 and 1
#: (the train survival run of 2026-12-05 23:48), then the five groups whose shortest is shortest
TABLE_TASKS = ("find-non-living-thing", "lifespan-longest-lived", "power-component",
               "chemistry-mix-paint-secondary-color", "identify-life-stages-2")
#: the table's policies, in the order they run: (base policy, wrappers outermost first)
TABLE_POLICIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "rule": ("rule", ()),
    "uniform": ("uniform", ()),
    "random": ("random", ()),
    "local": ("local", ()),
    "search(uniform)": ("uniform", ("search",)),
    "search(local)": ("local", ("search",)),
    "lookahead(local)": ("local", ("lookahead",)),
}
#: Search's options in the table: inner-policy calls and seconds per search
TABLE_SEARCH: dict[str, Any] = {"budget": 8, "max_seconds": 20.0}

#: Search's options in the second table's search rows: the first table's, stepping each node's 16 favourites
TABLE2_SEARCH: dict[str, Any] = {"width": 16, **TABLE_SEARCH}

#: the second table (docs/benchmarks.md, protocol of 2026-12-06 02:46): every task type's test variation 2,
#: with the fitted Local; per policy its wrappers' options and its time cap (seconds over all its games)
FULL_TABLE_POLICIES: dict[str, tuple[str, tuple[str, ...], dict[str, Any], float]] = {
    "rule": ("rule", (), {}, 600.0),
    "local": ("local", (), {}, 600.0),
    "lookahead(local)": ("local", ("lookahead",), {"width": 16}, 1500.0),
    # Search's defaults since 2026-12-06 include policy_answers (an answer only where Local itself picks one; its
    # test rounds in docs/benchmarks.md, "A larger gate"); the rows before that date ran "frontier-answers" below.
    # Since 2026-12-07 a stalled search plays a plan whose first move Local gives at least half its favourite's
    # odds (stall_share, arm R in "A larger gate"); the rows before that date ran "lowest-h" below
    "search(local)": ("local", ("search",), {**TABLE2_SEARCH, "stall_share": 0.5}, 2400.0),
    # the flat-odds search beside it: the same search with every move equally likely (its width
    # favourites are the first moves of ScienceWorld's list, ties going to the earlier move)
    "search(uniform)": ("uniform", ("search",), TABLE2_SEARCH, 2400.0),
    # the same search ending a partial plan where the episode has been least (docs/benchmarks.md, "A search
    # that never runs out of favourites": its cycles)
    "search(local) avoid-revisits": ("local", ("search",), {**TABLE2_SEARCH, "avoid_revisits": True}, 2400.0),
    # the search's rule for answers before 2026-12-06 (policy_answers=False): an answer is a leaf of the frontier
    # and the first one popped is played (docs/benchmarks.md, "A larger gate"; the rows above, before that date)
    "search(local) frontier-answers": ("local", ("search",), {**TABLE2_SEARCH, "policy_answers": False}, 2400.0),
    # the default search committing only to an answer Local gives at least 0.3 (docs/benchmarks.md, "A floor under
    # the policy's answers": the floor fitted on dev seeds 6 and 7)
    "search(local) answer-confidence": ("local", ("search",), {**TABLE2_SEARCH, "answer_confidence": 0.3}, 2400.0),
    # the search(local) row before 2026-12-07: a stalled search plays the plan ending at the lowest h, whatever
    # Local thinks of its first move
    "search(local) lowest-h": ("local", ("search",), TABLE2_SEARCH, 2400.0),
    # issue 52's loops (docs/benchmarks.md, "Lookahead's loops"): Rethink's fork planner on lookahead(local)'s stalls
    "rethink(lookahead(local))": ("local", ("rethink", "lookahead"), {"width": 16, "planner": "search",
                                                                      "plan_width": 16}, 1500.0),
}
# the rows above before planning forks stopped playing `focus on` (docs/benchmarks.md, "Forks that do not judge
# an answer"): every table before it ran these, the fork telling a wrong focus (lost) from the right one
FULL_TABLE_POLICIES.update({f"{name} oracle": (base, wrappers, {**options, "allow_oracle": True}, cap)
                            for name, (base, wrappers, options, cap) in list(FULL_TABLE_POLICIES.items()) if wrappers})
FULL_TABLE_SEEDS = (2,)
#: the 60-game dev gate (docs/benchmarks.md, "A larger gate"): dev seeds 4 and 5 of every type, used by no fit
#: or other check; a row there plays all its games (no cap over them)
GATE_SEEDS = (4, 5)


def gold_survival(variations: int = 2, tasks: tuple[str, ...] = TASKS, fold: str = "train") -> dict:
    """The gold path of each game, walked by the expert: per task, the gold states reached before the game
    ends, those whose gold move names a candidate (the expert plays it; where none does, the gold string
    itself is played so the walk stays on the gold path), the gold moves missed, wins and candidate counts.
    ``fold``: ScienceWorld's split the variations come from (its first ``variations`` of each task)."""
    rows = {}
    for task in tasks:
        env: ScienceWorldEnv = gym.make("s1/ScienceWorld-v0", task=task, fold=fold)
        row = {"states": 0, "kept": 0, "won": 0, "episodes": 0, "max_candidates": 0, "candidates": [], "missed": []}
        for index in range(variations):
            env.reset(seed=index)
            gold = env.gold_path()
            row["episodes"] += 1
            misses = len(row["missed"])
            while not env.done and env.steps < len(gold):
                row["candidates"].append(len(env.candidates))
                row["states"] += 1
                try:
                    move = env.expert_action()
                except RuntimeError:
                    row["missed"].append(gold[env.steps])
                    _play_raw(env, gold[env.steps])  # stay on the gold path to measure the states after it
                    continue
                row["kept"] += 1
                env.step_move(move)
            row["won"] += int(env.won and len(row["missed"]) == misses)  # won on candidates alone
        cands = row.pop("candidates")
        row["max_candidates"] = max(cands, default=0)
        row["median_candidates"] = statistics.median(cands) if cands else 0
        rows[task] = row
        print(task, row, flush=True)
        env.close()
    states = sum(r["states"] for r in rows.values())
    kept = sum(r["kept"] for r in rows.values())
    return {"tasks": rows, "states": states, "kept": kept, "survival": kept / max(states, 1),
            "won": sum(r["won"] for r in rows.values()), "episodes": sum(r["episodes"] for r in rows.values())}


def _play_raw(env: ScienceWorldEnv, move: str) -> None:
    """Play ScienceWorld's own string ``move`` (not a candidate): the bench's way to stay on the gold path."""
    env._feedback = env._play(move)
    env._steps += 1
    env._history = (*env._history, (move, env._feedback))
    env._expert_path = env.game_state.moves
    env._refresh()


def speed(task: str = "inclined-plane-determine-angle", seed: int = 0, depth: int = 40, repeats: int = 10) -> dict:
    """Median seconds (warm: the walk is played once untimed first) of a raw simulator step, the env's step
    along the expert's walk to ``depth`` (with snapshots, each paired with a raw step from the same state
    just before it: ``paired_raw_step`` and the median of the pairs' ratios, ``paired_env_over_raw``),
    a step at ``depth`` on an engine holding the
    state, and at ``depth`` a fork and its first step (with the JVM helper: the snapshot taken at the fork and
    the step; without it: a replay, ``load`` and the moves with the reads between them, and the step), and
    that plus the original taking its engine back (a restore, or a replay)."""
    env: ScienceWorldEnv = gym.make("s1/ScienceWorld-v0", task=task)
    env.reset(seed=seed)
    gold = env.gold_path()
    if len(gold) <= depth + 1:
        raise ValueError(f"{task} seed {seed}: its gold path has {len(gold)} moves, not more than {depth + 1}")
    while env.steps < depth:  # warm-up, untimed: the JVM compiles the simulator's hot code on this walk
        env.step_move(env.expert_action())
    env.reset(seed=seed)
    steps, paired = [], []
    while env.steps < depth:
        move = env.expert_action()
        engine = env.engine()
        if engine.can_snapshot:  # paired: a raw step from this very state just before the env's step
            snap = engine.snapshot()
            # both timed steps start on a restored copy (a raw step right after a snapshot ran about 40 %
            # slower than one after a restore or one in a plain walk: docs/benchmarks.md)
            engine.restore(engine.loaded, snap)
            t = time.perf_counter()
            engine.server.step(move)
            paired.append(time.perf_counter() - t)
            engine.restore(engine.loaded, snap)  # the state again, the global random generator included
        t = time.perf_counter()
        env.step_move(move)
        steps.append(time.perf_counter() - t)
    nxt = env.expert_action()
    forks, rounds, at_depth = [], [], []
    for _ in range(repeats):
        env.engine()  # untimed: the engine holds env's state again
        env.game_state.snapshot = None  # as at a state a step just reached: the fork takes the snapshot
        t = time.perf_counter()
        fork = env.fork()
        fork.step_move(nxt)  # the fork takes the engine (snapshots) or replays on it
        forks.append(time.perf_counter() - t)
        env.engine()  # the original takes its engine back: a restore (snapshots) or a replay
        rounds.append(time.perf_counter() - t)
        held = env.fork()
        held.engine()  # untimed: the engine brought to depth 40 for this fork
        t = time.perf_counter()
        held.step_move(nxt)  # a step at depth 40 on an engine that holds the state
        at_depth.append(time.perf_counter() - t)
    engine = env.engine()
    raw = []
    with engine.jvm.lock:
        engine.replay(env.game_state.game, ())
        for move in env.game_state.moves:
            t = time.perf_counter()
            engine.server.step(move)
            raw.append(time.perf_counter() - t)
    engine.replay(env.game_state.game, env.game_state.moves)
    out = {"task": task, "seed": seed, "depth": depth, "helper": engine.helper is not None,
           "raw_step": statistics.median(raw), "env_step": statistics.median(steps),
           "step_at_depth": statistics.median(at_depth), "fork_first_step": statistics.median(forks),
           "fork_first_step_and_back": statistics.median(rounds)}
    out["env_over_raw"] = out["env_step"] / out["raw_step"]
    if paired:
        out["paired_raw_step"] = statistics.median(paired)
        out["paired_env_over_raw"] = statistics.median(e / r for e, r in zip(steps, paired, strict=True))
    out["fork_over_step"] = out["fork_first_step"] / out["step_at_depth"]
    out["fork_and_back_over_step"] = out["fork_first_step_and_back"] / out["step_at_depth"]
    env.close()
    return out


def fork_exactness(tasks: tuple[str, ...] = TASKS, steps: int = 5) -> dict:
    """Per task (train variation index 0): the engine plays the gold path's first half with every read, then
    ``steps`` more gold moves; a snapshot taken at the half, restored, and an exact replay (``load`` and the
    moves with the reads) each play the same ``steps`` moves. Counts the tasks where all three answers (step
    text, look, inventory, valid list, score, completion) and the global random generator's seed agree."""
    rows = {}
    for task in tasks:
        env: ScienceWorldEnv = gym.make("s1/ScienceWorld-v0", task=task)
        env.reset(seed=0)
        gold = env.gold_path()
        engine = env.engine()
        seed_of = engine.jvm.gateway.jvm.s1gym.scienceworld.S1ScienceWorld.globalSeed
        half = len(gold) // 2
        for move in gold[:half]:
            engine.step(move)
        snap = engine.snapshot()
        game, moves = engine.loaded, engine.moves
        runs = []
        for way in ("played", "restored", "replayed"):
            if way == "restored":
                engine.restore(game, snap)
            elif way == "replayed":
                engine.replay(game, moves)
            answers = [engine.step(move) for move in gold[half:half + steps]]
            runs.append((answers, int(seed_of())))
        rows[task] = {"depth": half, "agree": runs[0] == runs[1] == runs[2]}
        print(task, rows[task], flush=True)
        env.close()
    return {"tasks": rows, "agree": sum(r["agree"] for r in rows.values()), "of": len(rows)}


#: deviation: the fraction of the gold path after which the player deviates (one state per fraction, per game)
DEVIATION_AT = (1 / 3, 2 / 3)
#: deviation: the folds whose first variation (seed 0) of each task is played, in this order
DEVIATION_FOLDS = ("train", "dev")


def deviation_recovery(tasks: tuple[str, ...] = TASKS, folds: tuple[str, ...] = DEVIATION_FOLDS,
                       at: tuple[float, ...] = DEVIATION_AT, seed: int = 0, max_seconds: float = 1500.0,
                       undo: bool = True, log: Any = print) -> dict:
    """The expert after the player leaves the gold path (docs/benchmarks.md, "The expert after a deviation").

    Games: variation ``seed`` of ``folds`` (ScienceWorld's split; never test) of each task, played fold by
    fold (all tasks of the first, then the next). Per game the expert walks the gold path (its on-path
    moves); at gold index ``floor(f * len(gold))`` for each ``f`` of ``at`` (a state the walk reaches with
    the game on and the expert having a move) a fork of the walk plays one deviating move: the candidates in
    the order of a generator seeded with (task's index, fold's index, the gold index), the first that is not
    the expert's move there and neither ends the game nor loses it on a fork (at most 50 tried). From there
    the expert plays to the end: ``won`` (its replan found a rest of the gold path that wins, and playing it
    won), ``fell_back`` (``RuntimeError``: no rest wins; Rule would play ``wait1``), the old expert's answer
    (it raised on every state off the gold path: ``old_no_move``), the try the replan took (``offset``:
    ``back`` or the gold offset), its fork steps and the seconds; ``checked_not_won`` counts plans checked
    on forks that did not win when played (exactness: 0), ``by_verb`` the states and wins per deviating verb. Games are no longer started once ``max_seconds`` have passed (``not run``)."""
    bad = [f for f in folds if f not in ("train", "dev")]
    if bad or not folds:
        raise ValueError(f"deviation: folds must be some of train, dev (never test), got {list(folds)}")
    rows: list[dict[str, Any]] = []
    start = time.perf_counter()
    skipped: list[tuple[str, str]] = []
    for fold in folds:
        for task in tasks:
            if time.perf_counter() - start > max_seconds:
                skipped.append((task, fold))
                continue
            env: ScienceWorldEnv = gym.make("s1/ScienceWorld-v0", task=task, fold=fold).unwrapped
            env.replan_undo = undo  # the A/B of the undo tries (its forks inherit it)
            env.reset(seed=seed)
            gold = env.gold_path()
            points = sorted({int(f * len(gold)) for f in at})
            for k in points:
                row: dict[str, Any] = {"task": task, "fold": fold, "variation": env.variation, "gold": len(gold),
                                       "at": k}
                try:
                    while env.steps < k and not env.done:
                        env.step_move(env.expert_action())
                    expert_move = env.expert_action() if not env.done else None
                except RuntimeError as exc:
                    rows.append({**row, "reached": False, "why": str(exc)})
                    log(rows[-1], flush=True)
                    break
                if env.done:
                    rows.append({**row, "reached": False, "why": "the game ended on the gold path"})
                    log(rows[-1], flush=True)
                    break
                rng = np.random.default_rng([TASKS.index(task), ("train", "dev", "test").index(fold), k])
                deviation = None
                for i in rng.permutation(len(env.candidates))[:50]:
                    move = env.candidates[int(i)]
                    if move == expert_move:
                        continue
                    probe = env.fork()
                    probe.step_move(move)
                    harmless = not probe.done
                    probe.close()
                    if harmless:
                        deviation = move
                        break
                if deviation is None:
                    rows.append({**row, "reached": True, "why": "no deviating move that keeps the game on"})
                    log(rows[-1], flush=True)
                    continue
                player = env.fork()
                player.step_move(deviation)
                row.update(reached=True, deviation=deviation, old_no_move=not player._on_expert_path())
                t = time.perf_counter()
                fell_back = False
                first = True
                while not player.done:
                    try:
                        move = player.expert_action()
                    except RuntimeError:
                        fell_back = True
                        break
                    if first:
                        row["replan_seconds"] = round(time.perf_counter() - t, 2)
                        row["offset"] = player.replan_offset
                        first = False
                    player.step_move(move)
                row.update(won=player.won, lost=player.lost, fell_back=fell_back, steps=player.steps,
                           replans=player.replans, replan_steps=player.replan_steps,
                           seconds=round(time.perf_counter() - t, 2))
                player.close()
                rows.append(row)
                log(row, flush=True)
            env.close()
    played = [r for r in rows if "won" in r]
    tasks_out: dict[str, dict[str, int]] = {}
    for r in played:
        agg = tasks_out.setdefault(r["task"], {"states": 0, "won": 0, "fell_back": 0, "old_no_move": 0})
        agg["states"] += 1
        agg["won"] += int(r["won"])
        agg["fell_back"] += int(r["fell_back"])
        agg["old_no_move"] += int(r["old_no_move"])
    from s1gym.tasks.scienceworld.candidates import verb_of

    offsets: dict[str, int] = {}
    verbs: dict[str, list[int]] = {}
    for r in played:
        if r.get("offset") is not None:
            offsets[str(r["offset"])] = offsets.get(str(r["offset"]), 0) + 1
        verb = verbs.setdefault(verb_of(r["deviation"]) or r["deviation"], [0, 0])
        verb[0] += 1
        verb[1] += int(r["won"])
    return {"rows": rows, "tasks": tasks_out, "states": len(played), "won": sum(r["won"] for r in played),
            "checked_not_won": sum(1 for r in played if r.get("offset") is not None and not r["won"]),
            "by_verb": verbs,
            "fell_back": sum(r["fell_back"] for r in played), "old_no_move": sum(r["old_no_move"] for r in played),
            "offsets": offsets, "not_reached": sum(1 for r in rows if "won" not in r),
            "not_run": skipped, "seconds": round(time.perf_counter() - start, 1),
            "replan_seconds_median": statistics.median([r["replan_seconds"] for r in played
                                                        if "replan_seconds" in r] or [0.0])}


class _GameCap(BasePolicy):
    """The table's per-game cap: ``policy``'s decisions until ``seconds`` of the episode have passed or, with
    ``calls``, until its decisions have made that many policy calls (Search: inner calls; checked before each
    decision), then a decision that gives up (the runner ends the game unsolved with the score it reached). A
    cap in calls ends a game at the same move on any machine; one in seconds ends it sooner on a slower one."""

    def __init__(self, policy: Any, seconds: float, calls: int | None = None) -> None:
        self.policy, self.seconds, self.calls = policy, seconds, calls
        self.name = getattr(policy, "name", "policy")
        self.start: float | None = None
        self.spent = 0
        self.capped = False

    def reset(self) -> None:
        self.policy.reset()
        self.start, self.spent, self.capped = time.perf_counter(), 0, False

    def decide(self, situation: Situation) -> Decision:
        out_of_time = self.start is not None and time.perf_counter() - self.start > self.seconds
        if out_of_time or (self.calls is not None and self.spent >= self.calls):
            self.capped = True
            n = len(situation.candidates)
            return Decision(np.full(n, 1.0 / n), 0, Usage(), {"capped": True}, give_up=True)
        decision = self.policy.decide(situation)
        self.spent += decision.usage.calls
        return decision


def _play(env: Any, policy: Any, seed: int, agreement: bool = False) -> tuple[dict[str, Any], dict[str, Any], float]:
    """One game of ``policy`` (a :class:`_GameCap`) on ``env`` from ``seed``, a failure kept as the game's
    ``error`` (a failed game is a row of a table, not the end of it): its row's fields (game, won, final and
    best score, steps, decisions, seconds, seconds a decision, capped, error), the episode's record, and the
    seconds it took."""
    from s1gym.runner.episode import play_episode

    t = time.perf_counter()
    try:
        rec = play_episode(env, policy, seed, agreement=agreement)
    except Exception as exc:  # noqa: BLE001 - a failed game is a row of the table, not the end of it
        rec = {**getattr(exc, "partial_episode", {}), "error": f"{type(exc).__name__}: {exc}"}
    seconds = time.perf_counter() - t
    ticks = rec.get("ticks", [])
    scores = [tick["score"] for tick in ticks if tick.get("score") is not None]
    row = {"game": rec.get("game"), "won": bool(rec.get("won", False)),
           "score": float(rec.get("score", scores[-1] if scores else 0.0)), "best": max([0.0, *scores]),
           "steps": int(rec.get("steps", len(ticks))), "decisions": len(ticks), "seconds": round(seconds, 2),
           "s_per_decision": round(seconds / max(len(ticks), 1), 3), "capped": policy.capped}
    if "error" in rec:
        row["error"] = rec["error"]
    return row, rec, seconds


def full_table(names: tuple[str, ...] = tuple(FULL_TABLE_POLICIES), tasks: tuple[str, ...] = TASKS,
               log: Any = print, seeds: tuple[int, ...] = FULL_TABLE_SEEDS, fold: str = "test",
               capped: bool = True, game_calls: int | None = None) -> dict:
    """The second table (:data:`FULL_TABLE_POLICIES`): ``names`` on test variation 2 of each task type (its
    first round; ``seeds=(3,)`` and ``(4,)`` are rounds two and three), step limit 250 (the family's), 120 s a
    game, each policy's own cap. The dev gate: ``seeds=GATE_SEEDS, fold="dev", capped=False`` (every game
    played, no cap over a row's games). ``game_calls``: a game is capped at that many policy calls instead of
    120 s and a search has no time limit (its ``max_seconds`` dropped), so every game plays the same moves on
    any machine."""
    policies = {name: FULL_TABLE_POLICIES[name] for name in names}
    options = {n: o for n, (_, _, o, _) in policies.items()}
    if game_calls is not None:
        options = {n: {k: v for k, v in o.items() if k != "max_seconds"} for n, o in options.items()}
    return policy_table(tuple(policies), tasks, seeds=seeds, max_steps=250,
                        game_cap_s=120.0 if game_calls is None else math.inf, game_cap_calls=game_calls, fold=fold,
                        policies={n: (b, w) for n, (b, w, _, _) in policies.items()}, options=options,
                        policy_caps={n: c if capped else math.inf for n, (_, _, _, c) in policies.items()}, log=log)


def policy_table(names: tuple[str, ...] = tuple(TABLE_POLICIES), tasks: tuple[str, ...] = TABLE_TASKS,
                 variations: int = 2, max_steps: int = 30, game_cap_s: float = 120.0,
                 policy_cap_s: float = 720.0, agreement: bool = False, log: Any = print,
                 seeds: tuple[int, ...] | None = None, fold: str = "test",
                 policies: dict[str, tuple[str, tuple[str, ...]]] | None = None,
                 options: dict[str, dict[str, Any]] | None = None,
                 policy_caps: dict[str, float] | None = None, game_cap_calls: int | None = None) -> dict:
    """Each named policy (:data:`TABLE_POLICIES`) on the test variations ``0..variations-1`` of each task,
    played in the order variation 0 of every task, then variation 1, ... (so a policy cut by its time cap
    loses whole rounds, not whole tasks), preset ``easy``, ``max_steps`` moves. Per game: won, final score,
    best score during play (TALES's measure), steps, policy calls (Search: inner calls), seconds and
    seconds per decision, Search's refills; a game stops unsolved at ``game_cap_s`` seconds or ``game_cap_calls``
    policy calls (``capped``) and a policy plays no more games once its games took ``policy_cap_s`` seconds (the
    rest: ``not run``).
    ``fold``: ScienceWorld's split the variations come from (the tables: test; dev checks: dev)."""
    from s1gym.policies import make_policy
    from s1gym.runner.spec import make_env
    from s1gym.wrappers import wrap

    games = [(task, v) for v in (range(variations) if seeds is None else seeds) for task in tasks]
    table = TABLE_POLICIES if policies is None else policies
    out: dict[str, Any] = {"max_steps": max_steps, "game_cap_s": game_cap_s, "game_cap_calls": game_cap_calls,
                           "policy_cap_s": policy_cap_s,
                           "search": TABLE_SEARCH if options is None else options,
                           "policy_caps": policy_caps, "policies": {}}
    envs: dict[str, Any] = {}
    try:
        for name in names:
            if name not in table:
                raise ValueError(f"unknown table policy {name!r}; use some of {list(table)}")
            base, wrappers = table[name]
            inner = make_policy(base)
            if wrappers:
                extra = (TABLE_SEARCH if "search" in wrappers else {}) if options is None else options.get(name, {})
                inner = wrap(inner, list(wrappers), **extra)
            policy = _GameCap(inner, game_cap_s, game_cap_calls)
            cap = policy_cap_s if policy_caps is None else policy_caps.get(name, policy_cap_s)
            rows, spent = [], 0.0
            for task, seed in games:
                row: dict[str, Any] = {"task": task, "seed": seed}
                if spent > cap:
                    rows.append({**row, "run": False})
                    continue
                if task not in envs:
                    envs[task] = make_env("s1/ScienceWorld-v0", {"task": task, "fold": fold, "max_steps": max_steps})
                played, rec, seconds = _play(envs[task], policy, seed, agreement)
                spent += seconds
                row.update(run=True, **played, calls=int((rec.get("usage") or Usage()).calls))
                if "search" in wrappers:
                    infos = [tick.get("info", {}) for tick in rec.get("ticks", [])]
                    row["refills"] = sum(info.get("refills", 0) for info in infos)
                    # searches that ended committing to an answer the planning fork did not judge (``focus on``)
                    row["commits"] = sum(info.get("stop_reason") == "commit" for info in infos)
                rows.append(row)
                log(name, json.dumps(row), flush=True)
            played = [r for r in rows if r["run"]]
            decisions = sum(r["decisions"] for r in played)
            summary = {"games": len(played), "of": len(rows), "won": sum(r["won"] for r in played),
                       "mean_score": statistics.mean(r["score"] for r in played) if played else None,
                       "mean_best": statistics.mean(r["best"] for r in played) if played else None,
                       "calls": sum(r["calls"] for r in played), "decisions": decisions,
                       "seconds": round(spent, 1), "s_per_decision": round(spent / max(decisions, 1), 3),
                       "capped": sum(r.get("capped", False) for r in played),
                       "errors": sum("error" in r for r in played)}
            if "search" in wrappers:
                summary["refills"] = sum(r["refills"] for r in played)
                summary["commits"] = sum(r["commits"] for r in played)
            out["policies"][name] = {"summary": summary, "games": rows}
            log(name, "SUMMARY", json.dumps(summary), flush=True)
    finally:
        for env in envs.values():
            env.close()
    return out


#: the refill check's games (docs/benchmarks.md, "A search that never runs out of favourites"): dev seed 3
#: of every third type from the third, fixed before the run
REFILL_DEV_TASKS = TASKS[2::3]
REFILL_DEV_SEED = 3


#: the refill check's arms: the table row each plays (A: B's with Search cut back, see refill_dev_table)
REFILL_DEV_ARMS = {"A": "search(local) lowest-h", "B": "search(local) lowest-h", "C": "search(local) avoid-revisits"}


def refill_dev_table(arm: str = "B", tasks: tuple[str, ...] = REFILL_DEV_TASKS, log: Any = print) -> dict:
    """The second table's ``search(local) lowest-h`` (its options, 120 s a game, step limit 250) on dev seed
    :data:`REFILL_DEV_SEED` of ``tasks``. Arm ``B``: the code as it is (a node whose ``width`` favourites are
    all pruned steps the next ones); arm ``A``: the same with a node's favourites cut to their first group,
    what Search stepped before (the A/B's baseline; put back on return); arm ``C``: B with
    ``avoid_revisits=True`` (the row ``search(local) avoid-revisits``)."""
    from s1gym.wrappers._search_run import SearchRun

    if arm not in REFILL_DEV_ARMS:
        raise ValueError(f"refill: the arm is A (favourites cut to their first group), B (the code) or C (B "
                         f"avoiding revisits); got {arm!r}")
    name = REFILL_DEV_ARMS[arm]
    base, wrappers, options, _ = FULL_TABLE_POLICIES[name]
    favourites = SearchRun._favourites
    if arm == "A":
        SearchRun._favourites = lambda run, node, texts: favourites(run, node, texts)[:1]  # type: ignore[method-assign]
    try:
        return policy_table((name,), tasks, seeds=(REFILL_DEV_SEED,), fold="dev", max_steps=250, game_cap_s=120.0,
                            policies={name: (base, wrappers)}, options={name: options},
                            policy_caps={name: math.inf}, log=log)
    finally:
        SearchRun._favourites = favourites  # type: ignore[method-assign]


#: children: the states (task, train seed, depth along the expert's gold path), fixed before the run
CHILDREN_STATES = (("boil", 0, 0), ("boil", 0, 15), ("inclined-plane-determine-angle", 0, 0),
                   ("inclined-plane-determine-angle", 0, 40))


def children_speed(states: tuple[tuple[str, int, int], ...] = CHILDREN_STATES, rounds: int = 3) -> dict:
    """Lookahead's annotate (every child of a state, through ``fork_steps``) with the children stepped in one
    JVM round trip (``B``) against one fork and step per child (``O``: the engine's ``can_step_children``
    off), and a plain step of each of the same moves on a fork holding the state (``P``), ``rounds`` times per
    state (B first in even rounds, O first in odd ones; P last). Seconds; ratios paired within a round
    (docs/benchmarks.md, "Children in one JVM round trip"). Warm: one untimed batched annotate first."""
    from s1gym.policies import make_policy
    from s1gym.wrappers import Lookahead

    look = Lookahead(make_policy("uniform"))
    envs: dict[str, ScienceWorldEnv] = {}

    def at(task: str, seed: int, depth: int) -> ScienceWorldEnv:
        env = envs.get(task) or envs.setdefault(task, gym.make("s1/ScienceWorld-v0", task=task).unwrapped)
        env.reset(seed=seed)
        while env.steps < depth:
            env.step_move(env.expert_action())
        env.snapshot()  # untimed: every mode starts from the parent's snapshot
        return env

    def annotate(env: ScienceWorldEnv, batch: bool) -> float:
        env.engine().can_step_children = batch  # the family's one engine; engine() leaves it holding the state
        t = time.perf_counter()
        look.annotate(env.situation())
        return time.perf_counter() - t

    def plain(env: ScienceWorldEnv, moves: list[str]) -> float:
        total = 0.0
        for move in moves:
            fork = env.fork()
            fork.engine()  # untimed: the engine restored to the state for this fork
            t = time.perf_counter()
            fork.step_move(move)
            total += time.perf_counter() - t
            fork.close()
        return total

    first = at(*states[0])
    default = first.engine().can_step_children  # put back at the end (on unless S1GYM_SW_CHILDREN=0)
    annotate(first, True)  # warm-up, untimed
    rows, all_bo, all_bp = [], [], []
    for task, seed, depth in states:
        env = at(task, seed, depth)
        moves = list(env.candidates)
        n = len(moves)
        b, o, p = [], [], []
        for r in range(rounds):
            for batch in ((True, False) if r % 2 == 0 else (False, True)):
                (b if batch else o).append(annotate(env, batch))
            p.append(plain(env, moves))
        env.engine().can_step_children = default
        bo = [x / y for x, y in zip(b, o, strict=True)]
        bp = [x / y for x, y in zip(b, p, strict=True)]  # (B / n) / (P / n)
        all_bo += bo
        all_bp += bp
        row = {"task": task, "seed": seed, "depth": depth, "children": n,
               "batch_s": statistics.median(b), "one_by_one_s": statistics.median(o),
               "batch_ms_per_child": 1000 * statistics.median(b) / n,
               "one_by_one_ms_per_child": 1000 * statistics.median(o) / n,
               "plain_step_ms": 1000 * statistics.median(p) / n,
               "batch_over_one_by_one": statistics.median(bo), "child_over_plain_step": statistics.median(bp),
               "rounds": {"batch_s": b, "one_by_one_s": o, "plain_s": p}}
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "rounds"}), flush=True)
    for env in envs.values():
        env.close()
    return {"states": rows, "batch_over_one_by_one": statistics.median(all_bo),
            "child_over_plain_step": statistics.median(all_bp), "rounds": rounds}


def rss_after_episodes(episodes: int = 500, moves: int = 5, children: int = 20, every: int = 50) -> dict:
    """The JVM's and this process's resident memory over ``episodes`` short ScienceWorld episodes (episode i:
    task ``TASKS[i % 30]``, train seed ``i // 30``; reset, ``moves`` moves drawn with a generator seeded i
    among the candidates that are not ``focus on``, and after the 2nd move the children of the first
    ``children`` candidates in one call, dropped at once). Every ``every`` episodes: RSS and peak RSS (kB)
    of both processes, the snapshots the JVM holds, the seconds (docs/benchmarks.md)."""
    from s1gym.tasks.scienceworld.engine import HEAP, get_jvm

    def status(pid: int | str) -> dict[str, int]:
        with open(f"/proc/{pid}/status", encoding="utf-8") as f:
            rows = dict(line.split(":", 1) for line in f if ":" in line)
        return {k: int(rows[k].split()[0]) for k in ("VmRSS", "VmHWM")}

    env: ScienceWorldEnv = gym.make("s1/ScienceWorld-v0").unwrapped
    start = time.perf_counter()
    samples = []
    for i in range(episodes):
        rng = np.random.default_rng(i)
        env.reset(seed=(i // 30) * 30 + i % 30)  # without task=: TASKS[seed % 30], variation index seed // 30
        for k in range(moves):
            if env.done:
                break
            if k == 2 and children:
                engine = env.engine()  # the env's own engine (no restore): batched whatever the default
                engine.can_step_children = engine.helper is not None
                for child, _ in env.fork_steps(env.candidates[:children]):
                    child.close()
            safe = [c for c in env.candidates if not c.startswith("focus on")] or env.candidates
            env.step_move(safe[int(rng.integers(len(safe)))])
        if (i + 1) % every == 0 or i + 1 == episodes:
            jvm = get_jvm()
            java, python = status(jvm.process.pid), status("self")
            held = jvm.helper.held() if jvm.helper is not None else None
            sample = {"episodes": i + 1, "jvm_rss_mb": java["VmRSS"] / 1024, "jvm_peak_mb": java["VmHWM"] / 1024,
                      "python_rss_mb": python["VmRSS"] / 1024, "python_peak_mb": python["VmHWM"] / 1024,
                      "snapshots_held": held, "seconds": round(time.perf_counter() - start, 1)}
            samples.append(sample)
            print(json.dumps(sample), flush=True)
    env.close()
    return {"heap": HEAP, "episodes": episodes, "samples": samples, **samples[-1]}


#: issue 52's lookahead-model check (docs/benchmarks.md, "Lookahead's outcomes in Local's model"): dev seed 2 (a
#: dev variation no fit read) of every third task type, ScienceWorld's order, fixed before the run
LOOKAHEAD_DEV_TASKS = TASKS[0::3]
LOOKAHEAD_DEV_SEED = 2


def lookahead_dev_table(models: dict[str, str], tasks: tuple[str, ...] = LOOKAHEAD_DEV_TASKS,
                        seed: int = LOOKAHEAD_DEV_SEED, width: int = 16, max_steps: int = 250,
                        game_cap_s: float = 120.0, fold: str = "dev", log: Any = print) -> dict:
    """``Lookahead(Local, width=width)`` with each fitted model (name -> model file) on ``fold`` variation ``seed``
    of each task type (never the test fold), preset ``easy``, ``max_steps`` moves, a game stopped unsolved
    after ``game_cap_s`` seconds (the second table's ``_GameCap``). Per game: won, final and best score,
    steps, decisions, seconds a decision, capped, and the moves that repeat an earlier move of the game."""
    from s1gym.policies import Local
    from s1gym.runner.spec import make_env
    from s1gym.wrappers import wrap

    if fold == "test":
        raise ValueError("lookahead_dev_table plays train or dev variations, never test: use full_table for test")
    out: dict[str, Any] = {"fold": fold, "seed": seed, "width": width, "max_steps": max_steps,
                           "game_cap_s": game_cap_s, "models": dict(models), "policies": {}}
    envs: dict[str, Any] = {}
    try:
        for name, path in models.items():
            policy = _GameCap(wrap(Local(pairs=path, preload=False), ["lookahead"], width=width), game_cap_s)
            rows = []
            for task in tasks:
                if task not in envs:
                    envs[task] = make_env("s1/ScienceWorld-v0", {"task": task, "fold": fold, "max_steps": max_steps})
                played, rec, _seconds = _play(envs[task], policy, seed)
                moves = [tick["move"] for tick in rec.get("ticks", [])]
                row = {"task": task, "seed": seed, **played,
                       "repeats": sum(1 for i, m in enumerate(moves) if m in moves[:i])}
                rows.append(row)
                log(name, json.dumps(row), flush=True)
            summary = _dev_summary(rows)
            out["policies"][name] = {"summary": summary, "games": rows}
            log(name, "SUMMARY", json.dumps(summary), flush=True)
    finally:
        for env in envs.values():
            env.close()
    return out


def _dev_summary(played: list[dict[str, Any]], **more: int) -> dict[str, Any]:
    """A dev check's summary of the games ``played``: wins, mean final and best score (4 places; ``None``
    without games), decisions, seconds, seconds a decision, capped games, moves repeating an earlier one of
    their game, then the counts ``more``, then errors."""
    decisions = sum(r["decisions"] for r in played)
    spent = sum(r["seconds"] for r in played)
    return {"games": len(played), "won": sum(r["won"] for r in played),
            "mean_score": round(statistics.mean(r["score"] for r in played), 4) if played else None,
            "mean_best": round(statistics.mean(r["best"] for r in played), 4) if played else None,
            "decisions": decisions, "seconds": round(spent, 1), "s_per_decision": round(spent / max(decisions, 1), 3),
            "capped": sum(r["capped"] for r in played), "repeats": sum(r["repeats"] for r in played), **more,
            "errors": sum("error" in r for r in played)}


#: issue 52's loop check (docs/benchmarks.md, "Lookahead's loops"): dev seed 2 of the task types the lookahead
#: check did not play, ``TASKS[1::3]``, fixed before any run of it
LOOP_DEV_TASKS = TASKS[1::3]
LOOP_DEV_SEED = 2
#: the loop check's arms: name -> (Local's weight overrides, wrappers outermost first, the wrappers' options)
LOOP_DEV_ARMS: dict[str, tuple[dict[str, float], tuple[str, ...], dict[str, Any]]] = {
    "lookahead(local)": ({}, ("lookahead",), {"width": 16}),
    "lookahead(local), revisits -0.5": ({"revisits": -0.5}, ("lookahead",), {"width": 16}),
    "rethink(lookahead(local))": ({}, ("rethink", "lookahead"), {"width": 16}),
    "rethink(lookahead(local)), fork planner": ({}, ("rethink", "lookahead"),
                                                {"width": 16, "planner": "search", "plan_width": 16}),
}


def loop_dev_table(arms: tuple[str, ...] = tuple(LOOP_DEV_ARMS), tasks: tuple[str, ...] = LOOP_DEV_TASKS,
                   seed: int = LOOP_DEV_SEED, max_steps: int = 250, game_cap_s: float = 120.0, fold: str = "dev",
                   stop_at: float | None = None, log: Any = print) -> dict:
    """Each arm of :data:`LOOP_DEV_ARMS` (Local with the shipped model and its weight overrides, in its
    wrappers) on ``fold`` variation ``seed`` of each task type (never test), preset ``easy``, ``max_steps``
    moves, a game stopped unsolved after ``game_cap_s`` seconds (the second table's ``_GameCap``); no game
    is started after the wall-clock time ``stop_at`` (``time.time()``; the rest: ``run: false``). Per game: won,
    final and best score, steps, decisions, seconds a decision, capped, the moves repeating an earlier move
    of the game, and Rethink's stalls, plans (found) and give-up where it is an arm's."""
    from s1gym.policies import Local
    from s1gym.runner.spec import make_env
    from s1gym.wrappers import wrap

    if fold == "test":
        raise ValueError("loop_dev_table plays train or dev variations, never test: use full_table for test")
    unknown = [a for a in arms if a not in LOOP_DEV_ARMS]
    if unknown:
        raise ValueError(f"unknown loop arm(s) {unknown}; use some of {list(LOOP_DEV_ARMS)}")
    out: dict[str, Any] = {"fold": fold, "seed": seed, "max_steps": max_steps, "game_cap_s": game_cap_s,
                           "arms": {a: {"weights": LOOP_DEV_ARMS[a][0], "wrappers": LOOP_DEV_ARMS[a][1],
                                        "options": LOOP_DEV_ARMS[a][2]} for a in arms}, "policies": {}}
    envs: dict[str, Any] = {}
    try:
        for name in arms:
            weights, wrappers, options = LOOP_DEV_ARMS[name]
            policy = _GameCap(wrap(Local(weights=weights, preload=False), list(wrappers), **options), game_cap_s)
            rows = []
            for task in tasks:
                if stop_at is not None and time.time() > stop_at:
                    rows.append({"task": task, "seed": seed, "run": False})
                    continue
                if task not in envs:
                    envs[task] = make_env("s1/ScienceWorld-v0", {"task": task, "fold": fold, "max_steps": max_steps})
                played, rec, _seconds = _play(envs[task], policy, seed)
                ticks = rec.get("ticks", [])
                moves = [tick["move"] for tick in ticks]
                events = [(tick.get("info") or {}).get("rethink", {}) for tick in ticks]
                row = {"task": task, "seed": seed, "run": True, **played,
                       "calls": int((rec.get("usage") or Usage()).calls),
                       "repeats": sum(1 for i, m in enumerate(moves) if m in moves[:i]),
                       "stalls": sum(1 for e in events if e.get("stall")),
                       "plans": sum(1 for e in events if "planner" in e),
                       "plans_found": sum(1 for e in events if (e.get("planner") or {}).get("found")),
                       "gave_up": any(e.get("give_up") for e in events)}
                rows.append(row)
                log(name, json.dumps(row), flush=True)
            done = [r for r in rows if r["run"]]
            summary = {"of": len(rows), **_dev_summary(
                done, calls=sum(r["calls"] for r in done), at_step_limit=sum(r["steps"] >= max_steps for r in done),
                gave_up=sum(r["gave_up"] for r in done), plans=sum(r["plans"] for r in done),
                plans_found=sum(r["plans_found"] for r in done))}
            out["policies"][name] = {"summary": summary, "games": rows}
            log(name, "SUMMARY", json.dumps(summary), flush=True)
    finally:
        for env in envs.values():
            env.close()
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m s1gym.tasks.scienceworld.bench", description=__doc__)
    parser.add_argument("what", choices=("survival", "speed", "forks", "table", "table2", "gate", "loops",
                                         "refill", "deviation", "children", "rss"))
    parser.add_argument("--variations", type=int, default=2)
    parser.add_argument("--fold", default="train", choices=("train", "dev", "test"),
                        help="survival: the split whose first --variations variations are walked (default train)")
    parser.add_argument("--tasks", default="", help="comma-separated task names (default: all 30)")
    parser.add_argument("--policies", default="",
                        help="table, table2: comma-separated names of TABLE_POLICIES or FULL_TABLE_POLICIES; loops: "
                        "LOOP_DEV_ARMS as A0-A3 (default: all, in their order)")
    parser.add_argument("--deviation-folds", default=",".join(DEVIATION_FOLDS),
                        help="deviation: comma-separated folds (train, dev; never test), default train,dev")
    parser.add_argument("--deviation-seed", type=int, default=0,
                        help="deviation: the seed (variation index in the fold) of every game, default 0")
    parser.add_argument("--no-undo", action="store_true",
                        help="deviation: the expert's replan without its undo tries (the A/B baseline)")
    parser.add_argument("--seeds", default=",".join(map(str, FULL_TABLE_SEEDS)),
                        help="table2: comma-separated test variation indices a type (default: the first round's)")
    parser.add_argument("--arm", default="B", choices=tuple(REFILL_DEV_ARMS),
                        help="refill: B the code, A a node's width favourites only (the code before), C B avoiding "
                        "revisits")
    parser.add_argument("--game-calls", type=int, default=None,
                        help="table2/gate: cap a game at N policy calls instead of 120 s, searches without their "
                             "time limit (the same moves on any machine)")
    parser.add_argument("--out", default="")
    args = parser.parse_args(argv)
    named = tuple(t for t in args.tasks.split(",") if t)  # --tasks; each command has its own default
    tasks = named or TASKS
    if args.what == "survival":
        result = gold_survival(args.variations, tasks, args.fold)
    elif args.what == "forks":
        result = fork_exactness(tasks)
    elif args.what == "deviation":
        result = deviation_recovery(tasks, tuple(f for f in args.deviation_folds.split(",") if f),
                                    seed=args.deviation_seed, undo=not args.no_undo)
    elif args.what == "children":
        result = children_speed()
    elif args.what == "rss":
        result = rss_after_episodes()
    elif args.what == "table":
        names = tuple(p for p in args.policies.split(",") if p) or tuple(TABLE_POLICIES)
        result = policy_table(names, named or TABLE_TASKS)
    elif args.what in ("table2", "gate"):
        if args.game_calls is not None and args.game_calls < 1:
            parser.error(f"--game-calls takes a positive number of policy calls a game, got {args.game_calls}")
        names = tuple(p for p in args.policies.split(",") if p) or tuple(FULL_TABLE_POLICIES)
        if args.what == "gate":  # the gate's games are fixed: --seeds is not read
            result = full_table(names, tasks, seeds=GATE_SEEDS, fold="dev", capped=False, game_calls=args.game_calls)
        else:
            seeds = tuple(x.strip() for x in args.seeds.split(",") if x.strip())
            if not seeds or not all(x.isdigit() for x in seeds):
                parser.error(f"table2: --seeds takes test variation indices a type, e.g. 3 or 3,4; got {args.seeds!r}")
            result = full_table(names, tasks, seeds=tuple(map(int, seeds)), game_calls=args.game_calls)
    elif args.what == "loops":  # the dev check behind the table's rethink(lookahead(local)) row
        arms = list(LOOP_DEV_ARMS)  # named A0-A3 here, as in the docs (their names hold commas)
        chosen = [p.strip() for p in args.policies.split(",") if p.strip()]
        bad = [p for p in chosen if p not in {f"A{i}" for i in range(len(arms))}]
        if bad:
            parser.error(f"loops: --policies takes arms A0-A{len(arms) - 1} ({', '.join(map(repr, arms))}), got {bad}")
        result = loop_dev_table(tuple(arms[int(p[1:])] for p in chosen) or tuple(arms),
                                named or LOOP_DEV_TASKS)
    elif args.what == "refill":
        result = refill_dev_table(args.arm, named or REFILL_DEV_TASKS)
    else:
        result = speed()
    text = json.dumps(result, indent=1)
    if args.what in ("table", "table2", "gate", "loops", "refill"):
        print(json.dumps({name: r["summary"] for name, r in result["policies"].items()}, indent=1))
    else:
        print(text if args.what in ("speed", "children", "rss")
              else json.dumps({k: v for k, v in result.items() if k != "tasks"}))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
