"""A/B against the records: replay recorded benchmark lines with today's code, same seeds and options.

    python bench/ab_recorded.py twx --arms local,lookahead          # every TWX held-out game of those arms
    python bench/ab_recorded.py twx --arms search-uniform --per-game 5   # a declared sample: the first 5 seeds
    python bench/ab_recorded.py alfworld --models DIR --policies lookahead   # CV lines, DIR holds fold<k>.json
    python bench/ab_recorded.py report                               # counts per record and arm, every mismatch

Each replayed line is compared field by field with the line it replays (TWX: won, score, steps, calls;
ALFWorld: won, steps, calls and, for Search, searches, the most calls one search took and the greedy moves)
and written to ``docs/data/ab_house.jsonl`` with both values, the machine's load average and the commit of
the code that replayed it. Resumable: a line already in the output is not played again.

The newest record is the reference. Where a model or an option was changed on purpose after a record was
written, :data:`SUPERSEDED` says which commit and which docs/benchmarks.md section changed it, and the line
is compared with the newer record that replaced it (e.g. TWC's ``local`` and ``lookahead(local)`` lines of
``twx_heldout.jsonl`` with ``twc_commonsense_heldout.jsonl``); a line with no newer record is replayed,
reported, and counted apart from the lines that must reproduce.

TWX lines are played as ``bench/twx_heldout.py heldout`` plays them (``make_env`` of
:mod:`s1gym.tasks.twx.fit`, ``build_policy`` of :mod:`s1gym.tasks.twx.fit_play`, the shipped models, the expert
never asked); ALFWorld lines as ``python -m s1gym.tasks.alfworld.fit cv`` did (its
``play_game``, the fold models in ``--models``, the record's ``revisits_weight``).

Declared before the first replay of issue 38's A/B (which lines are replayed, chosen on cost alone):
TWX ``local``, ``lookahead`` and ``search-local`` on every recorded seed of every game and setting, and the
TWC lines of the newer record (seeds 700-729 and 800-829); ``search-uniform`` on the first 10 recorded seeds
of each game and setting (``--per-game 10``: test seeds 700-709, 110 lines); ``rule`` on every recorded seed
if the machine allows. ALFWorld: ``local`` and ``lookahead`` on all 140 CV games, ``search-greedy-cap`` on
the protocol's positions 0, 5, ..., 25 of each fold (30 games), then on the others as the machine allows.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
DATA = ROOT / "docs" / "data"


def bench_last() -> None:
    """bench/ last on the path: its alfworld.py must not shadow the alfworld package (a script run from bench/
    has it first, ALFWorld's fitting module takes it off, and spawned workers start from this process's path)."""
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != BENCH] + [str(BENCH)]


bench_last()

OUT = DATA / "ab_house.jsonl"
TWX_RECORD = "twx_heldout.jsonl"
TWC_RECORD = "twc_commonsense_heldout.jsonl"
ALFWORLD_RECORD = "alfworld_cv_revisits.jsonl"
#: ALFWorld's ``Local`` alone is the issue-25 line (the ninth amendment's weight is 0 without lookahead).
ALFWORLD_LOCAL_RECORD = "alfworld_cv_issue25.jsonl"
TWX_FIELDS = ("won", "score", "steps", "calls")
ALFWORLD_FIELDS = ("won", "steps", "calls", "searches", "max_search_calls", "fallback_moves")

#: Records changed on purpose after they were written: (record, task, arms) -> (commit, why, newer record or
#: None). A line matched here is compared with the newer record's line for the same game and arm; with no
#: newer record it is replayed and counted as superseded, not as a line that must reproduce.
SUPERSEDED = {
    (TWX_RECORD, "TWC", ("local", "lookahead")): (
        "8228a6f", "TWC's model refitted with the commonsense names and out:revisit=-4 (docs/benchmarks.md, "
        "'TWC commonsense (issue 39)')", TWC_RECORD),
    (TWX_RECORD, "TWC", ("search-local", "search-uniform")): (
        "8228a6f", "TWC's model and its progress estimate (Search's h by default) refitted (docs/benchmarks.md, "
        "'TWC commonsense (issue 39)'); no Search line was recorded with the new model", None),
}
#: Lines that cannot reproduce for a reason outside s1gym: (record, task, arm) -> why. Replayed and counted apart.
UNSTABLE = {
    (TWX_RECORD, task, "rule"): "TextWorldExpress's own gold path for CoinCollector and TWC differs from JVM to "
    "JVM for the same seed (raw textworld_express, no s1gym code: getGoldActionSequence() lengths differ between "
    "three processes), and the rule plays the gold path; no decision model reads it"
    for task in ("CoinCollector", "TWC")
}


def load_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def head_commit() -> str:
    return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, check=False).stdout.strip()


def superseded(record: str, task: str, arm: str) -> tuple[str, str, str | None] | None:
    for (rec, t, arms), why in SUPERSEDED.items():
        if rec == record and t == task and arm in arms:
            return why
    return None


# --------------------------------------------------------------------------
# TextWorldExpress
# --------------------------------------------------------------------------


def twx_key(r: dict) -> tuple:
    return (r["task"], r["setting"], r["seed"], r["arm"])


def twx_references() -> list[tuple[dict, str, dict | None]]:
    """Every TWX line to replay: (recorded line, its record file, the superseded line it replaced or None).
    The held-out record's lines, with superseded ones swapped for the newer record's; then the newer
    record's own lines (TWC seeds 800-829)."""
    newer = {TWC_RECORD: {twx_key(r): r for r in load_jsonl(DATA / TWC_RECORD)}}
    out, used = [], set()
    for r in load_jsonl(DATA / TWX_RECORD):
        why = superseded(TWX_RECORD, r["task"], r["arm"])
        if why and why[2]:
            out.append((newer[why[2]][twx_key(r)], why[2], r))
            used.add((why[2], twx_key(r)))
        else:
            out.append((r, TWX_RECORD, None))
    out += [(r, name, None) for name, lines in newer.items() for k, r in lines.items() if (name, k) not in used]
    return out


def play_twx(job: tuple[str, str, int, str, str]) -> dict:
    """One TWX game as ``bench/twx_heldout.py heldout`` plays it; also a digest of the moves played."""
    from s1gym.runner.episode import play_episode
    from s1gym.tasks.twx.fit import make_env
    from s1gym.tasks.twx.fit_play import build_policy

    task, setting, seed, fold, arm = job
    cpu = time.process_time()
    env = make_env(task, setting, seed, fold)
    policy = build_policy(arm, None)
    policy.reset()
    out = play_episode(env, policy, seed, agreement=False)
    env.close()
    moves = [t["move"] for t in out["ticks"]]
    return {"won": bool(out.get("won")), "score": float(out.get("score", 0.0)), "steps": out.get("steps"),
            "calls": out["usage"].calls, "moves_sha1": hashlib.sha1("\n".join(moves).encode()).hexdigest()[:12],
            "cpu_s": round(time.process_time() - cpu, 2)}


def cmd_twx(args) -> None:
    arms = args.arms.split(",")
    tasks = set(args.tasks.split(",")) if args.tasks else None
    done = {tuple(r["key"]) for r in load_jsonl(Path(args.out)) if r["family"] == "twx"}
    chosen, per_game = [], Counter()
    for ref, record, old in twx_references():
        if ref["arm"] not in arms or (tasks and ref["task"] not in tasks):
            continue
        game = (record, ref["task"], ref["setting"], ref["arm"])
        per_game[game] += 1
        if args.per_game and per_game[game] > args.per_game:  # the sample: the first seeds of each game
            continue
        if (record, *twx_key(ref)) not in done:
            chosen.append((ref, record, old))
    print(f"{len(chosen)} TWX lines to replay; load {os.getloadavg()}", flush=True)
    jobs = [(r["task"], r["setting"], r["seed"], r["fold"], r["arm"]) for r, _, _ in chosen]
    write(args.out, chosen, jobs, play_twx, args.workers, TWX_FIELDS, "twx", twx_key)


# --------------------------------------------------------------------------
# ALFWorld
# --------------------------------------------------------------------------


def alfworld_references(policies: list[str]) -> list[tuple[dict, str, None]]:
    """The CV lines of today's shipped configuration: ``lookahead``, ``rethink-lookahead`` and
    ``search-greedy-cap`` at the shipped revisits weight (the ninth amendment's record); ``local`` from
    issue 25's record (revisits are 0 without lookahead)."""
    out = []
    for name in (ALFWORLD_RECORD, ALFWORLD_LOCAL_RECORD):
        for r in load_jsonl(DATA / name):
            if r["policy"] in policies and (name == ALFWORLD_RECORD) == (r["policy"] != "local"):
                out.append((r, name, None))
    return out


def alfworld_key(r: dict) -> tuple:
    return (r["game"], r["policy"])


def play_alfworld(job: tuple[int, str, str, float | None]) -> dict:
    from s1gym.tasks.alfworld.fit import play_game

    out = play_game(job)
    return {k: v for k, v in out.items() if k in ALFWORLD_FIELDS} | {"cpu_s": round(out["cpu_s"], 2)}


def cmd_alfworld(args) -> None:
    from s1gym.tasks.alfworld.env import find_games

    import s1gym.tasks.alfworld.fit as alfworld_local

    fold_of = {g: k for k, f in enumerate(alfworld_local.folds(find_games(str(alfworld_local.SHARED), "valid_seen")))
               for g in f}
    done = {tuple(r["key"]) for r in load_jsonl(Path(args.out)) if r["family"] == "alfworld"}
    games = {int(g) for g in args.games.split(",")} if args.games else None
    chosen = [(r, name, old) for r, name, old in alfworld_references(args.policies.split(","))
              if (games is None or r["game"] in games) and (name, *alfworld_key(r)) not in done]
    print(f"{len(chosen)} ALFWorld lines to replay; load {os.getloadavg()}", flush=True)
    jobs = [(r["game"], r["policy"], str(Path(args.models) / f"fold{fold_of[r['game']]}.json"),
             r.get("revisits_weight")) for r, _, _ in chosen]
    write(args.out, chosen, jobs, play_alfworld, args.workers, ALFWORLD_FIELDS, "alfworld", alfworld_key)


# --------------------------------------------------------------------------
# both
# --------------------------------------------------------------------------


def write(out: str, chosen: list, jobs: list, play, workers: int, fields: tuple[str, ...], family: str, key) -> None:
    """Play ``jobs`` (one per chosen line), compare each with its line, append the result to ``out``."""
    from s1gym.models.collect import pool_map

    commit = head_commit()
    # pool_map answers in completion order: tag each job with its index so the answer finds its line
    results = pool_map(_indexed, [(i, play, job) for i, job in enumerate(jobs)], workers)
    with open(out, "a") as f:
        for n, (i, replayed) in enumerate(results, 1):
            ref, record, old = chosen[i]
            recorded = {k: ref[k] for k in fields if k in ref}
            diff = {k: [v, replayed.get(k)] for k, v in recorded.items() if replayed.get(k) != v}
            why = superseded(TWX_RECORD, ref.get("task", ""), ref.get("arm", "")) if old else None
            line = {"family": family, "record": record, "key": [record, *key(ref)], "recorded": recorded,
                    "replayed": replayed, "same": not diff, "diff": diff, "load1": round(os.getloadavg()[0], 1),
                    "commit": commit}
            if old is not None:
                line["replaces"] = {"record": TWX_RECORD, "commit": why[0], "why": why[1],
                                    **{k: old[k] for k in fields if k in old}}
            f.write(json.dumps(line) + "\n")
            f.flush()
            if diff or n % 25 == 0:
                print(f"{n}/{len(jobs)} {line['key']} {'same' if not diff else diff} load {line['load1']}", flush=True)


def _indexed(item):
    i, play, job = item
    return i, play(job)


def cmd_report(args) -> None:
    """Per record, family and arm: lines replayed, the same, differing; lines whose record was superseded
    without a newer one apart; then every differing line with both values."""
    lines = load_jsonl(Path(args.out))
    counts: dict[tuple, Counter] = defaultdict(Counter)
    for r in lines:
        arm = r["key"][4] if r["family"] == "twx" else r["key"][2]
        task = r["key"][1] if r["family"] == "twx" else "ALFWorld"
        why = superseded(r["record"], task, arm) if r["family"] == "twx" else None
        group = ("superseded, no newer record" if why and not why[2] else
                 "engine not reproducible" if (r["record"], task, arm) in UNSTABLE else "must reproduce")
        c = counts[(group, r["record"], task if args.by_task else "", arm)]
        c["replayed"] += 1
        c["same"] += r["same"]
    print("| lines | record | game | arm | replayed | same | differ |")
    print("|---|---|---|---|---|---|---|")
    for (group, record, task, arm), c in sorted(counts.items()):
        print(f"| {group} | {record} | {task or 'all'} | {arm} | {c['replayed']} | {c['same']} | "
              f"{c['replayed'] - c['same']} |")
    differ = [r for r in lines if not r["same"]]
    print(f"\n{len(differ)} lines differ" + (":" if differ else ""))
    for r in differ:
        print(f"- {r['key']}: " + ", ".join(f"{k} {a} -> {b}" for k, (a, b) in r["diff"].items()))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("twx")
    t.add_argument("--arms", default="local,lookahead")
    t.add_argument("--tasks", default="", help="comma list of TWX games (default: all)")
    t.add_argument("--per-game", type=int, default=0, help="a sample: the first N recorded seeds of each game "
                                                           "and setting (default: all)")
    a = sub.add_parser("alfworld")
    a.add_argument("--models", required=True, help="folder of the CV fold models fold0.json .. fold4.json")
    a.add_argument("--policies", default="lookahead")
    a.add_argument("--games", default="", help="comma list of game indices (default: every recorded game)")
    for p in (t, a):
        p.add_argument("--workers", type=int, default=2)
    r = sub.add_parser("report")
    r.add_argument("--by-task", action="store_true", help="one row per game too")
    for p in (t, a, r):
        p.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)
    {"twx": cmd_twx, "alfworld": cmd_alfworld, "report": cmd_report}[args.cmd](args)


if __name__ == "__main__":
    main()
