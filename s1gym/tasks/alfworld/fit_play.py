"""Playing the held-out games of the protocol (:mod:`.fit`) with the fold models: the policies it compares,
one game's record, a fold's games, the report."""

from __future__ import annotations

import json
import time
from pathlib import Path

from s1gym.models.collect import pool_map
from s1gym.tasks.alfworld.env import TASK_TYPES, task_type_of
from s1gym.tasks.alfworld.fit_states import interleaved, make_env, valid_seen

#: The protocol's Search games: these positions in each held-out fold's game list.
SEARCH_POSITIONS = (0, 5, 10, 15, 20, 25)
#: The amendment's second sample of Search games (see the protocol).
SECOND_SAMPLE = (2, 7, 12, 17, 22, 27)
POLICIES = ("local", "lookahead", "search", "search-rh", "search-greedy", "search-greedy-cap", "rethink-lookahead")
SEARCH_OPTIONS = {"budget": 10, "episode_budget": 150}
#: The third amendment's arms: ``search-greedy`` plays on greedily once the episode's calls are spent;
#: ``search-greedy-cap`` also stops each search at SEARCH_CAP calls (development only, inner CV).
SEARCH_CAP = 40


def build_policy(kind: str, model_path: str | None, revisits: float | None = None):
    """The policy ``kind`` on Local with the pair model at ``model_path``; ``revisits``: the weight of Local's
    ``revisits`` feature instead of the model's own (ninth amendment)."""
    from s1gym.policies.local import Local
    from s1gym.tasks.alfworld.model import ALFWorldModel
    from s1gym.wrappers import Lookahead, Rethink, Search

    model = ALFWorldModel.load(model_path) if model_path else None
    local = Local(pairs=model, preload=False, weights=None if revisits is None else {"revisits": revisits})
    if kind == "local":
        return local
    if kind == "lookahead":
        return Lookahead(local)
    if kind == "rethink-lookahead":  # seventh amendment: Lookahead(Local) with its repeat loops broken
        return Rethink(Lookahead(local))
    if kind.startswith("search"):
        progress = model.remaining if model is not None else None
        extra = {"fallback": "greedy"} if kind.startswith("search-greedy") else {}
        if kind == "search-greedy-cap":
            extra["search_cap"] = SEARCH_CAP
        return Search(Lookahead(local), heuristic=progress, doubling=kind != "search-rh", **SEARCH_OPTIONS, **extra)
    raise ValueError(f"unknown policy {kind!r}; use one of {', '.join(POLICIES)}")


def play_game(job: tuple[int, str, str | None, float | None]) -> dict:
    """One held-out game: won, steps, inner calls, wall and CPU seconds."""
    game, kind, model_path, revisits = job
    policy = build_policy(kind, model_path, revisits)
    env = make_env(game, expert=None)  # no expert tracking: the player never reads it
    t, c = time.perf_counter(), time.process_time()
    env.reset(seed=0)
    policy.reset()
    calls, info, searches, fallback = 0, {}, [], 0
    while not env.done:
        decision = policy.decide(env.situation())
        calls += decision.usage.calls
        if decision.info.get("fallback"):
            fallback += 1
        elif decision.info.get("policy_calls") and "stop_reason" in decision.info:
            searches.append(decision.info["policy_calls"])
        if decision.give_up:
            break
        *_, info = env.step(decision.action)
    out = {"game": game, "policy": kind, "won": bool(info.get("won")), "steps": env.steps, "calls": calls,
           "wall_s": time.perf_counter() - t, "cpu_s": time.process_time() - c}
    if kind.startswith("search"):
        out.update(searches=len(searches), max_search_calls=max(searches, default=0), fallback_moves=fallback)
    if revisits is not None:
        out["revisits_weight"] = revisits
    env.close()
    return out


def read_results(out_dir: Path) -> list[dict]:
    """The game lines played into ``out_dir`` so far (none when nothing was played)."""
    path = out_dir / "results.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def play_folds(parts: list[list[int]], kinds: list[str], out_dir: Path, workers: int, positions=None,
               search_games: set[int] | None = None, shard: tuple[int, int] = (0, 1),
               revisits: float | None = None, limit: int | None = None) -> None:
    """Play each fold's games with its model (search arms: the games at ``positions`` of each fold, or all;
    only those in ``search_games`` when given; of the jobs in play order, the first ``limit`` and of those
    every ``shard[1]``-th from ``shard[0]``, so that processes started apart share one out dir; ``revisits``:
    :func:`build_policy`'s)."""
    games = valid_seen()
    rank = {g: r for r, g in enumerate(interleaved(games))}
    jobs = []
    for k, held in enumerate(parts):
        for kind in kinds:
            chosen = [held[p] for p in positions if p < len(held)] if positions and kind.startswith("search") else held
            if search_games is not None and kind.startswith("search"):
                chosen = [g for g in chosen if g in search_games]
            jobs.extend((g, kind, str(out_dir / f"fold{k}.json"), revisits) for g in chosen)
    jobs.sort(key=lambda j: (POLICIES.index(j[1]), rank[j[0]]))
    jobs = jobs[:limit][shard[0]::shard[1]]
    done = {(r["game"], r["policy"]) for r in read_results(out_dir)}
    jobs = [j for j in jobs if (j[0], j[1]) not in done]
    with open(out_dir / "results.jsonl", "a") as f:
        for r in pool_map(play_game, jobs, workers):
            f.write(json.dumps(r) + "\n")
            f.flush()
            print(r, flush=True)


def report(out_dir: Path, parts: list[list[int]]) -> None:
    results = read_results(out_dir)
    fold_of = {g: k for k, f in enumerate(parts) for g in f}
    results = [r for r in results if r["game"] in fold_of]
    games = valid_seen()
    print("| policy | " + " | ".join(TASK_TYPES) + " |")
    print("|---|" + "---|" * len(TASK_TYPES))
    for kind in POLICIES:
        rs = [r for r in results if r["policy"] == kind]
        if rs:
            cells = []
            for t in TASK_TYPES:
                sel = [r for r in rs if task_type_of(games[r["game"]]) == t]
                cells.append(f"{sum(r['won'] for r in sel)}/{len(sel)}")
            print(f"| {kind} | " + " | ".join(cells) + " |")
    print("| policy | fold | games | won | mean steps | calls/game | wall s/game | CPU s/game | CPU s/step |")
    print("|---|---|---|---|---|---|---|---|---|")
    for kind in POLICIES:
        rs = [r for r in results if r["policy"] == kind]
        if not rs:
            continue
        for k in [*range(len(parts)), None]:
            sel = [r for r in rs if k is None or fold_of[r["game"]] == k]
            if not sel:
                continue
            n, won = len(sel), sum(r["won"] for r in sel)
            steps = sum(r["steps"] for r in sel)
            print(f"| {kind} | {'all' if k is None else k} | {n} | {won}/{n} ({won / n:.0%}) | {steps / n:.1f} | "
                  f"{sum(r['calls'] for r in sel) / n:.1f} | {sum(r['wall_s'] for r in sel) / n:.1f} | "
                  f"{sum(r['cpu_s'] for r in sel) / n:.1f} | {sum(r['cpu_s'] for r in sel) / max(1, steps):.2f} |")
