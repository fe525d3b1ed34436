"""python -m s1gym.tasks.scienceworld.fit: fit Local's ScienceWorld model and progress estimate, write
``data/local_scienceworld.json``.

Labels: ScienceWorld's gold path mapped to candidates (:meth:`.env.ScienceWorldEnv.expert_action`), played from
``load`` on train-fold variations of all 30 task types (preset ``easy``; seeds ``0..--train-1``, of the two
mendelian-genetics types, the slowest to play, ``0..--slow-1``, of the knowledge types of :data:`MANY`
``0..--many-1``; with ``--spread`` as many seeds spread evenly over each type's train variations, whose list groups
them by object: :func:`spread_seeds`), a gold no-op taught as the move after it (:func:`skip_no_ops`), the gold path
itself, and learner roll-ins (``--learner-seeds``, ``--learner-slow-seeds``, ``--learner-dev-seeds``:
:data:`LEARNER_ROLL_INS`, DAgger with ``--learner``, by default the shipped model, as the learner; the expert's
replan labels the states off its path, so Local learns there too, e.g. that a ``focus on`` what is in view loses to
exploring). Every state of a roll-in with a choice is one decision group of s1gym's shared recipe
(:mod:`s1gym.models.fitting`), the plain candidates labelled with the expert's move. Candidates whose feature names
are the same are one row weighing ``log(count)`` (a column held at weight 1), which is the same likelihood as the
rows one by one and a fraction of the memory. The L2 is the one with the lowest NLL on dev-fold variations; the test
fold is never used here. The progress estimate is a ridge fit of the moves left to the end of the gold path (gold
roll-ins the gold path wins) on :func:`.tokens.progress_tokens`. Needs scipy (``pip install scipy``).

``--cache FILE`` keeps the roll-ins (the situations as a player sees them and the gold move's index), so
the features can be refitted without the JVM.

``python -m s1gym.tasks.scienceworld.fit lookahead``: the second stage, the weights of the ``la:`` names (what
``Lookahead`` shows of a move: :func:`.tokens.outcome_tokens`) on top of a fitted model whose weights stay as
they are (``--base``, default the shipped file), so plain decisions score exactly as before. Roll-ins
(:func:`collect_lookahead`): the expert's moves on train variations, each game leaving the expert's plan once
(``--deviate``: at a third of the gold path, the move ``Lookahead(Local)`` with the base model picks there,
where it is not the expert's), after which the expert replans (:meth:`.env.ScienceWorldEnv.expert_action`);
at chosen states (``--states`` spread evenly over the gold path's length, plus the states right after the
deviation) the state is annotated as ``Lookahead(Local, width=16)`` with the base model would show it (the
base model's 16 favourites stepped on forks, losing moves dropped; on planning forks, which since
2026-12-06 do not play `focus on`: the shipped `la:` weights were fitted before that, on forks that did): one
decision group, labelled by the expert's move when it is among them. Fit: a column ``~base`` (the base
model's score of the move) held at weight 1 and one free column per ``la:`` name met in at least
``--min-count`` train groups, by L-BFGS with the L2 of :data:`LA_GRID` that gives the dev groups (dev
variations, the expert's own path) the lowest NLL.

``python -m s1gym.tasks.scienceworld.fit order --cache FILE``: the task types whose stated order of focuses binds
(:attr:`.model.ScienceWorldModel.ordered`, :func:`ordered_types`), read off the gold paths of the train roll-ins
in ``FILE`` (the first stage's cache) and written into a fitted model (``--base``) whose weights stay as they are.
The first stage writes them too.
"""

from __future__ import annotations

import argparse
import gzip
import json
import pickle
import random
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

from s1gym.core import Situation
from s1gym.models.collect import RollIns

__all__ = ["collapse", "collect", "collect_lookahead", "fit_lookahead", "main"]

OUT = Path(__file__).parent / "data" / "local_scienceworld.json"
#: the task types whose gold paths are slowest to play (80-130 moves, thousands of valid moves a state): fewer
#: train seeds (``--slow``)
SLOW = ("mendelian-genetics-known-plant", "mendelian-genetics-unknown-plant")
#: the task types whose answer is what an object is (an animal, a plant, living or not) or how long it lives:
#: gold paths of 2-12 moves, and what Local must learn is the many objects a variation may show, so they play
#: more train seeds (``--many``)
MANY = ("find-animal", "find-living-thing", "find-plant", "find-non-living-thing", "lifespan-longest-lived",
        "lifespan-shortest-lived", "lifespan-longest-lived-then-shortest-lived")
#: the column of a collapsed row's ``log(count)``, held at weight 1 (never in a model file)
COUNT = "~log_count"
#: the gold moves that change nothing a player sees: ``look around`` repeats the view every observation shows, and
#: ``wait1`` stands in for gold steps that are no-ops under the easy preset (``open door to kitchen``: doors
#: start open; :func:`.candidates.gold_candidate`)
NO_OPS = ("look around", "wait1")


def _bare(situation: Situation) -> Situation:
    """The situation without what does not pickle or is not read (the env's fork, the privileged door)."""
    return replace(situation, fork=None, privileged=None, visited=(), state_key="")


#: the learner roll-ins (``--learner-seeds``): each move, with probability ``learner_share``, the learner's
#: (Local with the model it is given) instead of the expert's, over the whole game (a ScienceWorld answer comes
#: late); a learner's wrong ``focus on`` is not played (:class:`s1gym.models.collect.RollIns`)
LEARNER_ROLL_INS = RollIns(noise=0.0, noisy_moves=0, learner_share=0.7, learner_moves=10_000)


def collect(fold: str, seeds: range | tuple[int, ...], tasks: tuple[str, ...] | None = None, log: bool = True,
            learner: Any = None) -> list[dict[str, Any]]:
    """Per game (task type, seed of ``fold``), the states of a roll-in, each labelled with the expert's
    move there: ``{"task", "seed", "variation", "won", "states": [(situation, gold index), ...], "note",
    "rollin", "departures", "replans"}``. Without a ``learner`` (a fitted model or its file) the roll-in is
    the gold path (``rollin="gold"``); with one, a learner roll-in (``"dagger"``, :data:`LEARNER_ROLL_INS`,
    seeded by the task, fold and seed): after a departure the expert replans
    (:meth:`.env.ScienceWorldEnv.expert_action`), and the game ends where it is lost."""
    from s1gym.policies import Local
    from s1gym.tasks.scienceworld.env import TASKS, ScienceWorldEnv

    player = None if learner is None else Local(pairs=learner, preload=False)
    kind = "gold" if player is None else "dagger"
    games = []
    for task in TASKS if tasks is None else tasks:
        env = ScienceWorldEnv(task=task, fold=fold)
        for seed in seeds:
            started = time.time()
            rng = random.Random(f"{task}:{fold}:{seed}")
            _obs, info = env.reset(seed=seed)
            states = []
            note = ""
            departures = 0
            while not info["game_over"] and info["steps"] < env.max_steps:
                try:
                    move = env.expert_action()
                except RuntimeError as e:
                    note = str(e)
                    break
                situation = env.situation()
                states.append((_bare(situation), situation.texts.index(move)))
                played = move if player is None else LEARNER_ROLL_INS.move(kind, env, move, rng, player)
                departures += played != move
                _obs, _r, _te, _tr, info = env.step_move(played)
            games.append({"task": task, "seed": seed, "variation": int(info["variation"]), "won": bool(info["won"]),
                          "states": states, "note": note, "rollin": kind, "departures": departures,
                          "replans": env.replans})
            if log:
                print(f"{fold} {task} seed {seed} var {info['variation']} ({kind}): {len(states)} states, "
                      f"{departures} departures, won {info['won']} {note} ({time.time() - started:.1f} s)", flush=True)
        env.close()
    return games


def spread_seeds(task: str, fold: str, count: int) -> tuple[int, ...]:
    """``count`` seeds of ``task`` spread evenly over its ``fold`` (a seed is the index of a variation in
    ScienceWorld's list of the fold, :meth:`.env.ScienceWorldEnv.game_of`): its first ``count`` seeds hold one
    object for many types (test-conductivity's first 8 of 450 train variations are all aluminum foil, the
    secondary paint's first 8 of 18 all green), its spread seeds several."""
    from s1gym.tasks.scienceworld.env import ScienceWorldEnv

    env = ScienceWorldEnv(task=task, fold=fold)
    try:
        env.reset(seed=0)
        size = len(env.engine().folds(task, env.simplifications)[fold])
    finally:
        env.close()
    return tuple(sorted(_spread(size, count)))


def skip_no_ops(states: list[tuple[Situation, int]]) -> list[tuple[Situation, int]]:
    """A roll-in's states (in order, each with its gold move's index) where a gold move of :data:`NO_OPS` after
    which the state shows what it showed before (the task, room and inventory: the observation after its feedback,
    :func:`.tokens.split_feedback`) is labelled with the next state's gold move
    instead, when that move is a candidate here: the move the path makes once the no-op is past (at the animal
    in view, ``focus on`` it, not the ``look around`` the gold path plays first; a state taught ``look around``
    there lets Search walk away from the answer). A wait that the next state shows the end of (a life stage
    come, water boiled) stays: the view changed. Runs of no-ops take the label of the move after the run."""
    from s1gym.tasks.scienceworld.tokens import split_feedback

    views = [split_feedback(situation.state_text or "")[1] for situation, _good in states]
    out = list(states)
    for t in range(len(out) - 2, -1, -1):
        situation, good = out[t]
        after, after_good = out[t + 1]
        if situation.texts[good] in NO_OPS and views[t] and views[t] == views[t + 1]:
            target = after.texts[after_good]
            if target in situation.texts:
                out[t] = (situation, situation.texts.index(target))
    return out


def collapse(cands: list[list[str]], good: int) -> tuple[list[list[str | tuple[str, float]]], int]:
    """The candidates with the same feature names as one row (with :data:`COUNT` = log of how many), the
    good candidate alone in its own row (first): the same likelihood under a weight of 1 on :data:`COUNT`."""
    import math

    counts = Counter(tuple(sorted(fs)) for i, fs in enumerate(cands) if i != good)
    rows: list[list[str | tuple[str, float]]] = [list(cands[good])]
    for key, k in counts.items():
        rows.append([*key, (COUNT, math.log(k))] if k > 1 else list(key))
    return rows, 0


def _seed_list(text: str) -> tuple[int, ...]:
    """Seeds given as a comma list (``"8,9"``; empty: none)."""
    return tuple(int(x) for x in text.split(",") if x)


def _seed_span(seeds: list[int]) -> str:
    """Sorted seeds as ``first-last`` (``none`` when there are none)."""
    return f"{seeds[0]}-{seeds[-1]}" if seeds else "none"


def _is_gold(game: dict[str, Any]) -> bool:
    """A gold roll-in (caches from before learner roll-ins name no ``rollin``: gold)."""
    return game.get("rollin", "gold") == "gold"


def load_cache(path: Path) -> dict[str, list[dict[str, Any]]]:
    with gzip.open(path, "rb") as f:
        return pickle.load(f)


def load_caches(paths: list[Path]) -> dict[str, list[dict[str, Any]]]:
    """The roll-ins of several cache files, fold by fold, in the files' order."""
    data: dict[str, list[dict[str, Any]]] = {"train": [], "dev": []}
    for path in paths:
        for fold, games in load_cache(path).items():
            data[fold] += games
    return data


def _spread(n: int, k: int) -> set[int]:
    """``k`` indices spread evenly over ``0..n-1`` (all of them when ``n <= k``)."""
    if n <= k:
        return set(range(n))
    return {round(i * (n - 1) / (k - 1)) for i in range(k)} if k > 1 else {0}


def collect_lookahead(fold: str, seeds: range | tuple[int, ...], tasks: tuple[str, ...], base: Any,
                      width: int = 16, states: int = 10, deviate: bool = True, after: int = 3,
                      log: bool = True, until: float | None = None) -> list[dict[str, Any]]:
    """Per game (task type, seed of ``fold``), the lookahead groups along the expert's roll-in (see the module
    docstring): ``{"task", "seed", "variation", "won", "deviation", "groups": [(annotated situation, gold
    index among its candidates or -1, candidates of the state, moves stepped), ...], "note", "seconds"}``.
    ``base``: the model whose favourites are shown (a fitted model or the path of its file); ``until``: no
    game starts after this ``time.time()`` (the games not played are left out)."""
    from s1gym.policies import Local
    from s1gym.tasks.scienceworld.env import ScienceWorldEnv
    from s1gym.wrappers import Lookahead

    lookahead = Lookahead(Local(pairs=base, preload=False), width=width)
    games = []
    for task in tasks:
        env = ScienceWorldEnv(task=task, fold=fold)
        for seed in seeds:
            started = time.time()
            if until is not None and started > until:
                if log:
                    print(f"{fold} {task} seed {seed}: not played (time budget)", flush=True)
                continue
            _obs, info = env.reset(seed=seed)
            n = len(env.gold_path())
            chosen = _spread(n, states)
            deviate_at = n // 3 if deviate else -1
            deviation: dict[str, Any] | None = None
            groups = []
            note = ""
            t = 0
            while not info["game_over"] and info["steps"] < env.max_steps:
                try:
                    move = env.expert_action()
                except RuntimeError as e:
                    note = str(e)
                    break
                situation = env.situation()
                near = deviation is not None and 0 < t - deviation["step"] <= after
                several = len(situation.candidates) > 1
                shortlist: tuple[list[list[int]] | None, Any] | None = None
                if t == deviate_at and several:
                    # the plain favourite first: where it is the expert's move, so is Lookahead's pick (unless it
                    # loses), and the state is not stepped for it
                    shortlist = lookahead._shortlists([situation])[0]
                    first = shortlist[1] or lookahead.policy.decide(situation)
                    if situation.texts[int(first.action)] == move:
                        shortlist = None
                if (t in chosen or near or shortlist is not None) and several:
                    shown, _first = shortlist or lookahead._shortlists([situation])[0]
                    annotated, kept, losing = lookahead.annotate(situation, shown)
                    good = situation.texts.index(move)
                    gold = kept.index(good) if good in kept else -1
                    groups.append((_bare(annotated), gold, len(situation.candidates), len(kept) + len(losing)))
                    if shortlist is not None:
                        pick = situation.texts[kept[int(lookahead.policy.decide(annotated).action)]]
                        if pick != move:
                            deviation = {"step": t, "move": pick, "expert": move}
                            move = pick
                if t == deviate_at and deviation is None:
                    # the pick is the expert's here: the next state (up to 20 past a third of the path)
                    deviate_at = deviate_at + 1 if deviate_at < n // 3 + 20 else -1
                _obs, _r, _te, _tr, info = env.step_move(move)
                t += 1
            seconds = time.time() - started
            games.append({"task": task, "seed": seed, "variation": int(info["variation"]), "won": bool(info["won"]),
                          "deviation": deviation, "groups": groups, "note": note, "seconds": round(seconds, 1),
                          "replans": env.replans})
            if log:
                shown_gold = sum(g[1] >= 0 for g in groups)
                print(f"{fold} {task} seed {seed} var {info['variation']}: {t} moves, {len(groups)} groups "
                      f"({shown_gold} with the expert's move shown), won {info['won']}, deviation "
                      f"{deviation and deviation['move']!r}, replans {env.replans} {note} ({seconds:.1f} s)",
                      flush=True)
        env.close()
    return games


#: the L2 values of the lookahead stage (the one with the lowest dev NLL is kept)
LA_GRID = (0.03, 0.1, 0.3, 1.0, 3.0, 10.0)
#: the base model's score: a column held at weight 1 in the lookahead stage
BASE = "~base"


def _la_groups(games: list[dict[str, Any]], base: Any) -> tuple[list[list[list[str | tuple[str, float]]]], list[int]]:
    """Per group whose expert move is shown among two or more: the candidates' ``~base`` score (the base
    model's logit) and ``la:`` names, and the expert move's index."""
    from s1gym.tasks.scienceworld.tokens import candidate_tokens

    rows, goods = [], []
    w = base.weights
    for game in games:
        for situation, gold, _n, _shown in game["groups"]:
            if gold < 0 or len(situation.candidates) < 2:
                continue
            cands = []
            for fs in candidate_tokens(situation):
                score = sum(w.get(f, 0.0) for f in fs if not f.startswith("la:"))
                cands.append([(BASE, score), *(f for f in fs if f.startswith("la:"))])
            rows.append(cands)
            goods.append(gold)
    return rows, goods


def _la_metrics(design: Any, w: Any) -> dict[str, float]:
    return {"groups": design.n, "nll": round(design.nll(w) / max(1, design.n), 4),
            "top1": round(design.top1(w), 4) if design.n else None}


def fit_lookahead(data: dict[str, list[dict[str, Any]]], base: Any, min_count: int = 3,
                  grid: tuple[float, ...] = LA_GRID) -> tuple[Any, dict[str, Any]]:
    """The base model with ``la:`` weights fitted on ``data["train"]``'s lookahead groups (L2 chosen on
    ``data["dev"]``'s), and the figures: dev NLL and top-1 of the expert's move in the groups, base against new."""
    import numpy as np

    from s1gym.models.fitting import Design, select_l2
    from s1gym.tasks.scienceworld.model import ScienceWorldModel

    train_rows, train_good = _la_groups(data["train"], base)
    dev_rows, dev_good = _la_groups(data["dev"], base)
    counts: Counter[str] = Counter()
    for cands in train_rows:
        counts.update({f for fs in cands for f in fs if isinstance(f, str)})
    names = sorted(n for n, k in counts.items() if k >= min_count)
    vocab = {BASE: 0, **{n: j + 1 for j, n in enumerate(names)}}
    train = Design(list(zip(train_rows, train_good, strict=True)), vocab=vocab, growing=False)
    dev = Design(list(zip(dev_rows, dev_good, strict=True)), vocab=vocab, growing=False)
    w0 = np.zeros(len(vocab))
    w0[0] = 1.0
    free = np.ones(len(vocab), dtype=bool)
    free[0] = False
    best = select_l2(train, dev, grid, start=w0, free=free)
    la = {k: v for k, v in train.weights(best.w).items() if k != BASE}
    model = ScienceWorldModel({**base.weights, **la}, dense=base.dense, progress=base.progress,
                              provenance=dict(base.provenance), ordered=base.ordered)

    def recall(games: list[dict[str, Any]]) -> dict[str, Any]:
        groups = [g for game in games for g in game["groups"]]
        return {"states": len(groups), "expert_move_shown": sum(g[1] >= 0 for g in groups),
                "mean_candidates": round(float(np.mean([g[2] for g in groups])), 1) if groups else None,
                "mean_shown_after_losing_dropped": round(float(np.mean([len(g[0].candidates) for g in groups])), 1)
                if groups else None}

    stats = {"l2": best.l2, "columns": len(names), "min_count": min_count,
             "dev_nll_per_group": {str(k): round(v, 4) for k, v in best.dev_nll.items()},
             "train_base": _la_metrics(train, w0), "train_new": _la_metrics(train, best.w),
             "dev_base": _la_metrics(dev, w0), "dev_new": _la_metrics(dev, best.w),
             "train_states": recall(data["train"]), "dev_states": recall(data["dev"])}
    return model, stats


def main_lookahead(argv: list[str]) -> None:
    """``python -m s1gym.tasks.scienceworld.fit lookahead ...`` (the module docstring)."""
    from s1gym.tasks.scienceworld.env import TASKS
    from s1gym.tasks.scienceworld.model import ScienceWorldModel

    parser = argparse.ArgumentParser(prog="python -m s1gym.tasks.scienceworld.fit lookahead",
                                     description="the lookahead stage (the module docstring)")
    parser.add_argument("--base", type=Path, default=OUT, help="the model whose weights stay (default: the shipped)")
    parser.add_argument("--train-seeds", default="8,9", help="train-fold seeds of each task type")
    parser.add_argument("--slow-seeds", default="3", help="train-fold seeds of the two mendelian-genetics types")
    parser.add_argument("--dev-seeds", default="0", help="dev-fold seeds of each task type (the L2 only)")
    parser.add_argument("--tasks", default="", help="comma list (default: all 30)")
    parser.add_argument("--states", type=int, default=10, help="states annotated a game, spread over the gold path")
    parser.add_argument("--dev-states", type=int, default=6)
    parser.add_argument("--after", type=int, default=3, help="states annotated after the deviation")
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument("--min-count", type=int, default=3)
    parser.add_argument("--cache", type=Path, default=None, help="the groups kept here (read when present)")
    parser.add_argument("--collect", choices=("train", "dev", "both"), default="both",
                        help="with --cache absent: which fold to collect (a cache per fold: run them in parallel)")
    parser.add_argument("--dev-deviate", action="store_true", help="dev games leave the expert's plan once too")
    parser.add_argument("--reverse", action="store_true", help="collect the task types in reverse order")
    parser.add_argument("--budget", type=float, default=None, help="seconds: no game starts after them")
    parser.add_argument("--collect-only", action="store_true")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    base = ScienceWorldModel.load(args.base)
    start = time.time()
    tasks = tuple(t for t in args.tasks.split(",") if t) or TASKS
    tasks = tasks[::-1] if args.reverse else tasks
    until = None if args.budget is None else start + args.budget
    seeds = _seed_list(args.train_seeds)
    slow = _seed_list(args.slow_seeds)
    dev_seeds = _seed_list(args.dev_seeds)
    caches = [args.cache] if args.cache is not None and args.cache.exists() else []
    if not caches and args.cache is not None and "," in str(args.cache):
        caches = [Path(p) for p in str(args.cache).split(",")]
    if caches:
        data = load_caches(caches)
    else:
        data = {"train": [], "dev": []}
        if args.collect in ("train", "both"):
            data["train"] = [g for task in tasks for g in collect_lookahead(
                "train", slow if task in SLOW else seeds, (task,), base, args.width, args.states, after=args.after,
                until=until)]
        if args.collect in ("dev", "both"):
            data["dev"] = collect_lookahead("dev", dev_seeds, tasks, base, args.width, args.dev_states,
                                            deviate=args.dev_deviate, after=args.after, until=until)
        if args.cache is not None:
            with gzip.open(args.cache, "wb") as f:
                pickle.dump(data, f)
    collect_seconds = time.time() - start
    if args.collect_only:
        print(f"collected in {collect_seconds:.0f} s")
        return
    model, stats = fit_lookahead(data, base, args.min_count)

    def span(games: list[dict[str, Any]]) -> str:
        by = sorted({(g["task"] in SLOW, g["seed"]) for g in games})
        return (f"{len(games)} games (seeds {sorted({s for slow_, s in by if not slow_})}, the mendelian-genetics "
                f"types {sorted({s for slow_, s in by if slow_})}), {sum(g['deviation'] is not None for g in games)} "
                f"left the expert's plan once, {sum(g['won'] for g in games)} won by the roll-in, "
                f"{sum(len(g['groups']) for g in games)} states annotated")

    model.provenance["lookahead"] = {
        "fitted_by": "python -m s1gym.tasks.scienceworld.fit lookahead " + " ".join(argv),
        "what": "weights of the la: names (tokens.outcome_tokens: what Lookahead shows of a move) on top of the "
                "model above, whose weights stay: plain decisions score as before",
        "roll_ins": f"the expert's moves, each train game leaving its plan once at a third of the gold path with the "
                    f"move Lookahead(Local, width={args.width}) with the base model picks there (the expert then "
                    f"replans); states annotated as that Lookahead shows them (the base model's {args.width} "
                    f"favourites stepped on forks, losing moves dropped): {args.states} a game spread over the gold "
                    f"path and {args.after} after the deviation",
        "train": "fold train: " + span(data["train"]),
        "dev": f"fold dev: {span(data['dev'])}, {args.dev_states} states a game; the L2 and the figures only",
        "test": "fold test never used",
        **stats,
        "seconds": {"cache_load" if caches else "roll_ins": round(collect_seconds, 1),
                    "fit": round(time.time() - start - collect_seconds, 1)},
    }
    args.out.write_text(json.dumps(model.to_json(), indent=1) + "\n")
    print(json.dumps(model.provenance["lookahead"], indent=1))


#: a task type's stated order of focuses binds when its train gold paths make at least this many focuses and
#: each is the one the task's instructions put next
ORDER_MIN_FOCI = 5


def ordered_types(games: list[dict[str, Any]]) -> tuple[frozenset[str], dict[str, tuple[int, int]]]:
    """The task types whose stated order of focuses binds (:data:`ORDER_MIN_FOCI`), read off ``games``' gold
    moves, and per type met its gold focuses as (in the stated order, all)."""
    from s1gym.tasks.scienceworld.tokens import focus_places, read_state

    counts: dict[str, tuple[int, int]] = {}
    for game in games:
        for situation, gold in game["states"]:
            if situation.candidates[gold].text.startswith("focus on "):
                state = read_state(situation.state_text or "")
                in_order, n = counts.get(state.kind, (0, 0))
                counts[state.kind] = (in_order + (not focus_places(situation, state).out_of_order[gold]), n + 1)
    ordered = frozenset(t for t, (k, n) in counts.items() if n >= ORDER_MIN_FOCI and k == n)
    return ordered, dict(sorted(counts.items()))


def _order_provenance(counts: dict[str, tuple[int, int]]) -> dict[str, Any]:
    return {"rule": f"a type binds when its train gold paths make >= {ORDER_MIN_FOCI} focuses, each the one the "
                    "task's instructions put next (tokens.FocusPlaces.out_of_order); the train gold focuses in "
                    "that order / all",
            "train": {t: f"{k}/{n}" for t, (k, n) in counts.items()}}


def main_order(argv: list[str]) -> None:
    """``python -m s1gym.tasks.scienceworld.fit order ...`` (the module docstring)."""
    from s1gym.tasks.scienceworld.model import ScienceWorldModel

    parser = argparse.ArgumentParser(prog="python -m s1gym.tasks.scienceworld.fit order",
                                     description="the task types whose stated order of focuses binds")
    parser.add_argument("--cache", type=Path, required=True, help="the first stage's roll-ins (--cache)")
    parser.add_argument("--base", type=Path, default=OUT, help="the model whose weights stay (default: the shipped)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    base = ScienceWorldModel.load(args.base)
    ordered, counts = ordered_types([g for g in load_cache(args.cache)["train"] if _is_gold(g)])
    provenance = {**base.provenance, "ordered": {"fitted_by": "python -m s1gym.tasks.scienceworld.fit order "
                                                 + " ".join(argv), **_order_provenance(counts)}}
    model = replace(base, provenance=provenance, ordered=ordered)
    args.out.write_text(json.dumps(model.to_json(), indent=1) + "\n")
    print(json.dumps(provenance["ordered"], indent=1), "\nordered:", sorted(ordered))


def main(argv: list[str] | None = None) -> None:
    import sys

    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["lookahead"]:
        main_lookahead(argv[1:])
        return
    if argv[:1] == ["order"]:
        main_order(argv[1:])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", type=int, default=8, help="train-fold seeds 0..N-1 of each task type")
    parser.add_argument("--slow", type=int, default=3, help="train-fold seeds 0..N-1 of the two mendelian types")
    parser.add_argument("--many", type=int, default=40, help="train-fold seeds 0..N-1 of the types of fit.MANY")
    parser.add_argument("--dev", type=int, default=1, help="dev-fold seeds 0..N-1 of each task type")
    parser.add_argument("--spread", action="store_true", help="train seeds spread evenly over each type's train "
                        "variations (fit.spread_seeds; --train, --slow and --many are their counts) instead of its first ones")
    parser.add_argument("--cache", type=Path, default=None, help="roll-ins kept here (read when present; a comma "
                        "list of files is read and merged)")
    parser.add_argument("--collect-only", action="store_true", help="only collect the roll-ins into --cache")
    parser.add_argument("--min-games", type=int, default=3, help="an object word's column needs gold moves in N train games")
    parser.add_argument("--common-games", type=int, default=60, help="an object word's column also when in any candidate of N train games")
    parser.add_argument("--generic-every", type=int, default=10, help="generic Local on every N-th dev decision (0: skip)")
    parser.add_argument("--learner-seeds", default="", help="train-fold seeds of each task type played as learner "
                        "roll-ins (comma list; default none: the gold paths only)")
    parser.add_argument("--learner-slow-seeds", default="", help="the same for the two mendelian-genetics types")
    parser.add_argument("--learner-dev-seeds", default="", help="dev-fold seeds played as learner roll-ins (the L2)")
    parser.add_argument("--learner", type=Path, default=OUT, help="the learner's model (default: the shipped)")
    parser.add_argument("--learner-cache", default="", help="learner roll-ins kept here (comma list of files, read "
                        "when present: collect them in parallel with --tasks and --collect-only)")
    parser.add_argument("--tasks", default="", help="comma list of the task types a learner collect plays (default all)")
    parser.add_argument("--grid", default=",".join(map(str, GRID)), help="the L2 values tried (comma list)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    start = time.time()
    caches = [Path(p) for p in str(args.cache).split(",")] if args.cache is not None else []
    args.from_cache = bool(caches) and all(p.exists() for p in caches)
    from s1gym.tasks.scienceworld.env import TASKS

    def split(tasks: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return tuple(t for t in tasks if t not in SLOW), tuple(t for t in tasks if t in SLOW)

    if args.from_cache:
        data = load_caches(caches)
    else:
        rest, slow = split(TASKS)
        if args.spread:
            train = [g for task in TASKS for g in collect("train", spread_seeds(
                task, "train", args.slow if task in SLOW else args.many if task in MANY else args.train), (task,))]
        else:
            train = (collect("train", range(args.train), rest) + collect("train", range(min(args.train, args.slow)), slow)
                     + collect("train", range(args.train, args.many), MANY))
        data = {"train": train, "dev": collect("dev", range(args.dev))}
        if args.cache is not None:
            with gzip.open(args.cache, "wb") as f:
                pickle.dump(data, f)
    learner_caches = [Path(p) for p in args.learner_cache.split(",") if p]
    if learner_caches and all(p.exists() for p in learner_caches):
        for fold, games in load_caches(learner_caches).items():
            data[fold] += games
    elif args.learner_seeds or args.learner_dev_seeds:
        from s1gym.tasks.scienceworld.model import ScienceWorldModel

        learner = ScienceWorldModel.load(args.learner)
        rest, slow = split(tuple(t for t in args.tasks.split(",") if t) or TASKS)
        rolled = {"train": collect("train", _seed_list(args.learner_seeds), rest, learner=learner)
                  + collect("train", _seed_list(args.learner_slow_seeds), slow, learner=learner),
                  "dev": collect("dev", _seed_list(args.learner_dev_seeds), rest + slow, learner=learner)}
        if learner_caches:
            with gzip.open(learner_caches[0], "wb") as f:
                pickle.dump(rolled, f)
        for fold, games in rolled.items():
            data[fold] += games
    collect_seconds = time.time() - start
    if args.collect_only:
        print(f"collected in {collect_seconds:.0f} s")
        return
    args.argv = argv
    fit(data, args, start, collect_seconds)


def _sha(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()[:8]


def _is_word(name: str) -> bool:
    return "|w:" in name or "|w2:" in name


def _is_kind_focus_word(name: str) -> bool:
    """A ``focus on`` object word crossed with the task type (``lifespan-longest-lived|v:focus on|w:mouse``)."""
    return "|v:focus on|w:" in name  # the verb's own word (``v:focus on|w:mouse``) has no ``|`` before it


def vocabulary(games: list[dict[str, Any]], tokens: list[list[list[list[str]]]], min_games: int,
               common_games: int) -> set[str]:
    """The columns: the word names (an object's word with the verb) of gold moves in at least ``min_games``
    train games (the frequent tool words) or of any candidate in at least ``common_games`` (what every
    house holds: doors, the agent, the air); a ``focus on`` word with the task type also when any candidate
    of ``min_games`` names it (the mouse a longest-lived task offers and its gold path never focuses: what
    the task type says of an object is learnt from the wrong answers too); every other name met in at least
    two decisions."""
    gold_games: Counter[str] = Counter()
    any_games: Counter[str] = Counter()
    decisions: Counter[str] = Counter()
    for game, states in zip(games, tokens, strict=True):
        seen: set[str] = set()
        met: set[str] = set()
        for (_s, good), cands in zip(game["states"], states, strict=True):
            seen.update(n for n in cands[good] if _is_word(n))
            names = {n for fs in cands for n in fs}
            met.update(n for n in names if _is_word(n))
            decisions.update(n for n in names if not _is_word(n))
        gold_games.update(seen)
        any_games.update(met)
    return ({n for n, k in gold_games.items() if k >= min_games} | {n for n, k in any_games.items() if k >= common_games}
            | {n for n, k in any_games.items() if k >= min_games and _is_kind_focus_word(n)}
            | {n for n, k in decisions.items() if k >= 2})


def _featurise(games: list[dict[str, Any]]) -> list[list[list[list[str]]]]:
    from s1gym.tasks.scienceworld.tokens import candidate_tokens

    return [[candidate_tokens(s) for s, _good in game["states"]] for game in games]


def _groups(games: list[dict[str, Any]], tokens: list[list[list[list[str]]]], vocab: set[str]
            ) -> list[tuple[list[list[str | tuple[str, float]]], int]]:
    out = []
    for game, states in zip(games, tokens, strict=True):
        for (s, good), cands in zip(game["states"], states, strict=True):
            if len(s.candidates) > 1:
                out.append(collapse([[n for n in fs if n in vocab] for fs in cands], good))
    return out


def _plain_metrics(games: list[dict[str, Any]], tokens: list[list[list[list[str]]]], weights: dict[str, float]
                   ) -> dict[str, float]:
    """Dev NLL per decision and top-1 (the highest-scored candidate is the gold move; ties go to the first)
    of the model, and of flat odds over the candidates."""
    import numpy as np

    nll, top, flat_nll, flat_top, n = 0.0, 0, 0.0, 0.0, 0
    for game, states in zip(games, tokens, strict=True):
        for (s, good), cands in zip(game["states"], states, strict=True):
            k = len(s.candidates)
            if k < 2:
                continue
            z = np.array([sum(weights.get(t, 0.0) for t in fs) for fs in cands])
            m = z.max()
            nll += float(m + np.log(np.exp(z - m).sum()) - z[good])
            top += int(np.argmax(z) == good)
            flat_nll += float(np.log(k))
            flat_top += 1.0 / k
            n += 1
    return {"decisions": n, "nll": nll / n, "top1": top / n, "flat_nll": flat_nll / n, "flat_top1": flat_top / n}


def _generic_local(games: list[dict[str, Any]], every: int) -> dict[str, float]:
    """Dev NLL and top-1 of Local without a fitted model (its general weights and MiniLM cosines) on every
    ``every``-th decision."""
    import numpy as np

    from s1gym.policies import Local

    local = Local(pairs=False)
    nll, top, n, i = 0.0, 0, 0, 0
    for game in games:
        for s, good in game["states"]:
            if len(s.candidates) < 2:
                continue
            i += 1
            if i % every:
                continue
            z = local.logits(s)
            m = z.max()
            nll += float(m + np.log(np.exp(z - m).sum()) - z[good])
            top += int(np.argmax(z) == good)
            n += 1
    return {"decisions": n, "nll": nll / n, "top1": top / n}


def _progress_rows(games: list[dict[str, Any]]) -> tuple[list[list[str]], list[float]]:
    """Progress tokens and moves left to the gold path's end, on the games the gold path wins (the gold
    roll-ins only: a learner roll-in's moves left are not the gold path's)."""
    from s1gym.tasks.scienceworld.tokens import progress_tokens

    rows: list[list[str]] = []
    left: list[float] = []
    for game in games:
        if game["won"] and _is_gold(game):
            n = len(game["states"])
            for k, (s, _good) in enumerate(game["states"]):
                rows.append(progress_tokens(s))
                left.append(float(n - k))
    return rows, left


#: the L2 values tried (the one with the lowest dev NLL is kept)
GRID = (0.03, 0.1, 0.3, 1.0, 3.0)


def fit(data: dict[str, list[dict[str, Any]]], args: argparse.Namespace, start: float,
        collect_seconds: float) -> None:
    import numpy as np

    from s1gym.models.fitting import Design, fit_ridge, select_l2
    from s1gym.tasks.scienceworld.model import ScienceWorldModel

    train_games, dev_games = data["train"], data["dev"]
    # the labels the weights learn: the roll-ins with no-ops skipped (the progress estimate and the ordered types
    # read the roll-ins as they were played)
    taught = {fold: [{**g, "states": skip_no_ops(g["states"])} for g in games] for fold, games in data.items()}
    skipped = {fold: sum(a[1] != b[1] for g, h in zip(data[fold], games, strict=True)
                         for a, b in zip(g["states"], h["states"], strict=True))
               for fold, games in taught.items()}
    train_tokens, dev_tokens = _featurise(taught["train"]), _featurise(taught["dev"])
    vocab = vocabulary(taught["train"], train_tokens, args.min_games, args.common_games)
    columns = {n: j for j, n in enumerate(sorted(vocab | {COUNT}))}
    train = Design(_groups(taught["train"], train_tokens, vocab), vocab=columns, growing=False)
    dev = Design(_groups(taught["dev"], dev_tokens, vocab), vocab=columns, growing=False)
    w0 = np.zeros(len(columns))
    w0[columns[COUNT]] = 1.0
    free = np.ones(len(columns), dtype=bool)
    free[columns[COUNT]] = False
    best = select_l2(train, dev, tuple(float(x) for x in args.grid.split(",")), start=w0, free=free)
    weights = {k: v for k, v in train.weights(best.w).items() if k != COUNT}
    fit_seconds = time.time() - start
    plain = _plain_metrics(taught["dev"], dev_tokens, weights)
    generic = _generic_local(taught["dev"], args.generic_every) if args.generic_every else {}
    rows, left = _progress_rows(train_games)
    progress = {k: v for k, v in fit_ridge(rows, left, l2=1.0).items() if abs(v) >= 1e-4}
    dev_rows, dev_left = _progress_rows(dev_games)
    predicted = [max(0.0, progress.get("*", 0.0) + sum(progress.get(t, 0.0) for t in r if t != "*")) for r in dev_rows]
    mean_left = float(np.mean(left))

    def gold(games: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [g for g in games if _is_gold(g)]

    def span(games: list[dict[str, Any]], fold: str, seeds: str) -> str:
        decisions = sum(len(g["states"]) for g in games)
        won = sum(g["won"] for g in games)
        return (f"fold {fold}, seeds {seeds} of each of the 30 task types ({len(games)} games, {won} won by the "
                f"gold path, {decisions} states)")

    def learner_span(games: list[dict[str, Any]], fold: str) -> str:
        games = [g for g in games if not _is_gold(g)]
        seeds = sorted({(g["task"] in SLOW, g["seed"]) for g in games})
        return (f"fold {fold}, seeds {[s for slow, s in seeds if not slow]} (the two mendelian-genetics types: "
                f"{[s for slow, s in seeds if slow]}): {len(games)} games, {sum(len(g['states']) for g in games)} "
                f"states, {sum(g['departures'] for g in games)} departures, {sum(g['won'] for g in games)} won, "
                f"{sum(bool(g['note']) for g in games)} ended where the expert was lost")

    train_seeds = sorted({g["seed"] for g in gold(train_games) if g["task"] not in SLOW + MANY})
    many_seeds = sorted({g["seed"] for g in gold(train_games) if g["task"] in MANY})
    slow_seeds = sorted({g["seed"] for g in gold(train_games) if g["task"] in SLOW})
    dev_seeds = sorted({g["seed"] for g in gold(dev_games)})
    learner = not all(_is_gold(g) for g in train_games + dev_games)
    provenance = {
        "fitted_by": " ".join(["python -m s1gym.tasks.scienceworld.fit", *args.argv]),
        "labels": "ScienceWorld's gold paths mapped to candidates (ScienceWorldEnv.expert_action), preset easy, "
                  "scienceworld 1.2.3; roll-ins: the gold path itself"
                  + (f", and learner roll-ins (fit.LEARNER_ROLL_INS: each move with probability "
                     f"{LEARNER_ROLL_INS.learner_share} the learner's, "
                     "a wrong focus never played; the expert's replan labels the states off its path)" if learner
                     else " (the expert is lost off it)"),
        "train": span(gold(train_games), "train", f"{_seed_span(train_seeds)} (the two mendelian-genetics types: "
                                                  f"{_seed_span(slow_seeds)}; the {len(MANY)} types of fit.MANY: "
                                                  f"{_seed_span(many_seeds)})"),
        **({"spread": "train seeds spread evenly over each type's train variations (fit.spread_seeds), as many "
                      f"as --train {args.train}, --many {args.many} and --slow {args.slow} say"}
           if args.spread else {}),
        "no_ops": (f"a gold {' or '.join(NO_OPS)} after which the state shows what it showed is labelled with the next "
                   f"state's gold move (fit.skip_no_ops): {skipped['train']} train and {skipped['dev']} dev states"),
        "dev": span(gold(dev_games), "dev", _seed_span(dev_seeds)),
        **({"learner": f"{args.learner.name} (sha256 {_sha(args.learner)})",
            "train_learner": learner_span(train_games, "train"),
            "dev_learner": learner_span(dev_games, "dev")} if learner else {}),
        "test": "fold test never used",
        "columns": f"{len(columns) - 1} names: object words of gold moves in >= {args.min_games} train games or of "
                   f"any candidate in >= {args.common_games} (a type's focus on words: >= {args.min_games}), other "
                   "names in >= 2 decisions",
        "l2": best.l2,
        "dev_nll_per_decision": {str(k): round(v, 4) for k, v in best.dev_nll.items()},
        "dev_plain": {k: round(v, 4) for k, v in plain.items()},
        "dev_generic_local": {k: round(v, 4) for k, v in generic.items()},
        "progress": f"ridge (L2 1) of moves left to the gold path's end on {len(rows)} states of won train games; "
                    f"dev MAE {np.mean(np.abs(np.subtract(predicted, dev_left))):.2f} moves against "
                    f"{np.mean(np.abs(np.subtract(mean_left, dev_left))):.2f} for the train mean ({mean_left:.1f})",
        "seconds": {"cache_load" if args.from_cache else "roll_ins": round(collect_seconds, 1),
                    "fit": round(fit_seconds - collect_seconds, 1), "dev_figures": round(time.time() - fit_seconds - start, 1)},
    }
    ordered, counts = ordered_types(gold(train_games))
    provenance["ordered"] = _order_provenance(counts)
    model = ScienceWorldModel(weights, progress=progress, provenance=provenance, ordered=ordered)
    args.out.write_text(json.dumps(model.to_json(), indent=1) + "\n")
    print(json.dumps(provenance, indent=1))


if __name__ == "__main__":
    main()
