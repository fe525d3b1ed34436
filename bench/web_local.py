"""Local on the web pages (MiniWoB++): collect rule-labelled states, fit, select on dev, report on test.

    python bench/web_local.py collect --kinds rule --seeds 40000 --lookahead   # rule games, Lookahead shown (<= 20 moves)
    python bench/web_local.py collect --kinds dart --seeds 40000-40002         # noisy roll-ins, plain states
    python bench/web_local.py collect --kinds dagger --seeds 40002 --model FILE # learner roll-ins
    python bench/web_local.py fit --out s1gym/data/local_web.json               # fit on what was collected
    python bench/web_local.py play --seeds 41000-41001 --arms local --json /tmp/dev.jsonl --model FILE  # dev
    python bench/web_local.py play --seeds 42000-42004 --arms random,local,rule --json docs/data/web_local_heldout.jsonl
    python bench/web_local.py report --json docs/data/web_local_heldout.jsonl
    python bench/web_local.py play --tasks search-sample --seeds 44000-44004 --arms search-local-20,search-uniform-20 --json FILE
                                  # amendment 2: Search(policy, budget=20) as the issue names it

The protocol (tasks, train/dev/test seeds, arms, targets) is bench/web_protocol.md, committed before any fit.

Data: the 108 tasks with a rule, on train seeds. Every state of a ``rule`` game (the rule plays) or a ``dart``
game (each of the first :data:`NOISY_MOVES` moves is, with probability :data:`NOISE`, a uniform random
candidate, then the rule; a ``dagger`` game: each of the first :data:`DAGGER_MOVES` moves is, with
probability :data:`DAGGER_LEARNER`, a fitted Local's (``--model``), then the rule) is stored with the rule's move there as its label; with ``--lookahead`` also each
candidate's Lookahead annotation (outcome, reward, new moves, revisits; losing and no-change moves left out,
as Lookahead shows them). States go to ``$S1GYM_WEB_STATES`` (default ``~/.cache/s1gym/web_states``), one
gzipped JSON-lines file per task, seed and kind; nothing collected is part of the repository.

Fit: the one recipe of Local's fitted models (s1gym.policies.fitting's ``Design``, the conditional-logit
fit the TWX and ALFWorld models share): the plain names on all candidates, then the ``out:*`` names alone
(the rest fixed) on the candidates Lookahead keeps. L2 1.0, fixed in advance by the protocol.
"""

from __future__ import annotations

import argparse
import gzip
import json
import multiprocessing as mp
import os
import random
import time
from collections.abc import Iterable
from pathlib import Path

import numpy as np

STATES = Path(os.environ.get("S1GYM_WEB_STATES", "~/.cache/s1gym/web_states")).expanduser()
L2 = 1.0
NOISE = 0.3
NOISY_MOVES = 5
DAGGER_LEARNER = 0.7
DAGGER_MOVES = 10
HELD_OUT_FILE = Path(__file__).resolve().parents[1] / "docs" / "data" / "web_local_heldout.jsonl"
ARMS = ("random", "local", "rule", "lookahead", "search-uniform", "search-local", "search-uniform-20",
        "search-local-20")
#: Amendment 2's guard: a game still going after this many seconds of wall time gives up at its next decision.
WALL_GUARD_S = 30 * 60
#: The protocol's search sample: the issue's five tasks and every 10th task of the sorted rule list.
ISSUE_TASKS = ("click-button", "enter-text", "choose-list", "use-autocomplete", "social-media")


def rule_tasks() -> list[str]:
    from s1gym.tasks.web.expert import SOLVERS

    return sorted(SOLVERS)


def no_rule_tasks() -> list[str]:
    from s1gym.tasks.web.env import WEB_TASKS
    from s1gym.tasks.web.expert import SOLVERS

    return sorted(t for t in WEB_TASKS if t not in SOLVERS)


def search_sample() -> list[str]:
    tasks = rule_tasks()
    return sorted(set(ISSUE_TASKS) | set(tasks[::10]))


def seeds_of(spec: str) -> list[int]:
    out: list[int] = []
    for part in spec.split(","):
        a, _, b = part.partition("-")
        out.extend(range(int(a), int(b or a) + 1))
    return out


_KEEPER = []


def make_env(task: str):
    """The task's env; the worker keeps one env open so its browser outlives each game's env."""
    import gymnasium as gym

    import s1gym  # noqa: F401

    if not _KEEPER:
        _KEEPER.append(gym.make("s1/MiniWoB-v0", task="click-test"))
    return gym.make("s1/MiniWoB-v0", task=task).unwrapped


# --------------------------------------------------------------------------
# collect
# --------------------------------------------------------------------------


def _record(env, label: str, lookahead, meta: dict) -> dict:
    situation = env.situation()
    rec = {**meta, "step": env.steps, "state_text": situation.state_text, "score": situation.score,
           "history": [list(h) for h in situation.history], "candidates": list(situation.texts),
           "label": label}
    if lookahead is not None:
        annotated, _kept, _ = lookahead.annotate(situation)
        shown = {c.text: c for c in annotated.candidates}
        texts = situation.texts
        rec.update({"outcomes": [shown[t].outcome if t in shown else None for t in texts],
                    "new_actions": [list(shown[t].new_actions) if t in shown else [] for t in texts],
                    "rewards": [shown[t].reward if t in shown else None for t in texts],
                    "revisits": [shown[t].revisits if t in shown else None for t in texts]})
    return rec


def collect_game(job: tuple[str, int, str, bool, int, str | None]) -> tuple[str, int, float]:
    """Play one game of one kind and write its labelled states (with Lookahead's annotation on the states
    with at most ``cap`` candidates, when asked: a fork steps each candidate, so large states cost most)."""
    task, seed, kind, with_lookahead, cap, model_path = (*job, None)[:6]
    from s1gym.policies import Uniform
    from s1gym.wrappers import Lookahead

    out = STATES / task / f"{seed}-{kind}{'-la' if with_lookahead else ''}.jsonl.gz"
    if out.exists():
        return str(out), -1, 0.0
    out.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    env = make_env(task)
    env.reset(seed=seed)
    rng = random.Random(f"{task}-{seed}-{kind}")
    annotate = Lookahead(Uniform()) if with_lookahead else None
    learner = None
    if kind == "dagger":
        from s1gym.policies import Local

        learner = Local(pairs=model_path, preload=False)
    records = []
    error = None
    info: dict = {}
    while env.candidates and not env.done:
        try:
            label = env.rule_action()
        except (LookupError, RuntimeError, ValueError, KeyError, IndexError, AttributeError, TypeError) as exc:  # a state the rule cannot read
            error = f"{type(exc).__name__}: {exc}"
            break
        shown = annotate if annotate is not None and len(env.candidates) <= cap else None
        records.append(_record(env, label, shown, {"task": task, "seed": seed, "kind": kind}))
        move = label
        if kind == "dart" and env.steps < NOISY_MOVES and rng.random() < NOISE:
            move = rng.choice(env.candidates)
        elif kind == "dagger" and env.steps < DAGGER_MOVES and rng.random() < DAGGER_LEARNER:
            situation = env.situation()
            move = situation.texts[learner.decide(situation).action]
        *_, info = env.step_move(move)
        if env.steps >= env.max_steps:
            break
    won = bool(info.get("won"))
    for r in records:
        r["won"] = won
        r["rule_error"] = error
    env.close()
    tmp = out.with_suffix(".tmp")
    with gzip.open(tmp, "wt") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")
    tmp.rename(out)
    return str(out), len(records), time.perf_counter() - t0


def pool_map(fn, items: list, workers: int) -> Iterable:
    if workers <= 1:
        yield from map(fn, items)
        return
    with mp.get_context("spawn").Pool(workers, maxtasksperchild=60) as pool:
        yield from pool.imap_unordered(fn, items)


def cmd_collect(args) -> None:
    tasks = args.tasks.split(",") if args.tasks else rule_tasks()
    jobs = [(t, s, k, args.lookahead, args.cap, args.model) for s in seeds_of(args.seeds) for k in args.kinds.split(",") for t in tasks]
    t = time.time()
    n = 0
    for i, (path, count, secs) in enumerate(pool_map(collect_game, jobs, args.workers)):
        n += max(0, count)
        if i % 20 == 0 or i == len(jobs) - 1:
            print(f"{i + 1}/{len(jobs)} games, {n} states, {time.time() - t:.0f} s (last {secs:.1f} s)", flush=True)


def load_records(kinds: Iterable[str] | None = None, seeds: set[int] | None = None) -> list[dict]:
    out = []
    kinds = set(kinds) if kinds else None
    for path in sorted(STATES.glob("*/*.jsonl.gz")):
        seed, kind = path.name.removesuffix(".jsonl.gz").split("-")[:2]
        if (kinds and kind not in kinds) or (seeds and int(seed) not in seeds):
            continue
        with gzip.open(path, "rt") as f:
            out.extend(json.loads(line) for line in f)
    return out


# --------------------------------------------------------------------------
# fit
# --------------------------------------------------------------------------


def situations(record: dict):
    """The record's decision as Local sees it plainly and (when recorded) with Lookahead (kept moves only)."""
    from s1gym.core import Candidate, Situation

    texts = record["candidates"]
    plain = Situation(task=f"MiniWoB {record['task']}", observation=record["state_text"],
                      state_text=record["state_text"], candidates=tuple(Candidate(t) for t in texts),
                      score=record["score"], history=tuple(tuple(h) for h in record["history"]))
    if "outcomes" not in record:
        return plain, None
    kept = [Candidate(t, outcome=o, new_actions=tuple(n), reward=r, revisits=v)
            for t, o, n, r, v in zip(texts, record["outcomes"], record["new_actions"], record["rewards"],
                                     record["revisits"], strict=True) if o is not None]
    return plain, plain.with_candidates(kept) if kept else None


def build(records: list[dict], drop_task: bool = False):
    from s1gym.tasks.web.tokens import candidate_tokens

    def tokens(s):
        rows = candidate_tokens(s)
        return [[t for t in r if not t.startswith("t:")] for r in rows] if drop_task else rows

    plain_rows, plain_good, ahead_rows, ahead_good = [], [], [], []
    for r in records:
        plain, annotated = situations(r)
        if r["label"] not in plain.texts:
            continue
        plain_rows.append(tokens(plain))
        plain_good.append([plain.texts.index(r["label"])])
        if annotated is not None and r["label"] in annotated.texts and len(annotated.candidates) > 1:
            ahead_rows.append(tokens(annotated))
            ahead_good.append([annotated.texts.index(r["label"])])
    return plain_rows, plain_good, ahead_rows, ahead_good


def fit_model(records: list[dict], name: str, drop_task: bool = False):
    from s1gym.policies.fitting import Design
    from s1gym.policies.web_model import WebModel

    t = time.time()
    plain_rows, plain_good, ahead_rows, ahead_good = build(records, drop_task)
    plain = Design(zip(plain_rows, plain_good, strict=True))
    w_plain = plain.fit(L2)
    weights = plain.weights(w_plain)
    stats = {"decisions": plain.n, "nll_plain": round(plain.loss_grad(w_plain)[0] / plain.n, 4),
             "top1_plain": round(plain.top1(w_plain), 4)}
    if ahead_rows:
        ahead = Design(zip(ahead_rows, ahead_good, strict=True), vocab=plain.vocab)
        free = np.zeros(len(ahead.vocab), dtype=bool)
        free[[j for n, j in ahead.vocab.items() if n.startswith("out:") or "|out:" in n]] = True
        w_both = ahead.fit(L2, start=w_plain, free=free)
        weights = ahead.weights(w_both)
        stats.update({"lookahead_decisions": ahead.n, "nll_lookahead": round(ahead.loss_grad(w_both)[0] / ahead.n, 4),
                      "top1_lookahead": round(ahead.top1(w_both), 4)})
    stats.update({"features": len(weights), "fit_seconds": round(time.time() - t)})
    return WebModel(weights, {"name": name, **stats}), stats


def cmd_fit(args) -> None:
    kinds = args.kinds.split(",") if args.kinds else None
    records = load_records(kinds, set(seeds_of(args.seeds)) if args.seeds else None)
    model, stats = fit_model(records, args.name or Path(args.out).stem, args.drop_task)
    model.provenance.update({
        "tasks": len({r["task"] for r in records}), "kinds": sorted({r["kind"] for r in records}),
        "train_seeds": sorted({r["seed"] for r in records}), "l2": L2,
        "games": len({(r["task"], r["seed"], r["kind"]) for r in records}),
        "lookahead_games": len({(r["task"], r["seed"], r["kind"]) for r in records if "outcomes" in r}),
        "labels": "the task's rule (s1gym.tasks.web.expert) on every state visited",
        "protocol": "bench/web_protocol.md",
        "script": f"python bench/web_local.py fit{' --kinds ' + args.kinds if args.kinds else ''}"
                  f"{' --seeds ' + args.seeds if args.seeds else ''}{' --drop-task' if args.drop_task else ''}"
                  " --out FILE"})
    if args.note:
        model.provenance["dev"] = args.note
    for item in args.set or []:  # weights chosen on dev, not fitted
        key, _, value = item.partition("=")
        model.weights[key] = float(value)
        model.provenance.setdefault("chosen_on_dev", {})[key] = float(value)
    print(json.dumps(stats))
    model.save(args.out)


# --------------------------------------------------------------------------
# play
# --------------------------------------------------------------------------


def build_policy(arm: str, model_path: str | None):
    from s1gym.policies import Local, Random, Rule, Uniform
    from s1gym.wrappers import Lookahead, Search

    def local():
        return Local(pairs=model_path, preload=False) if model_path else Local(preload=False)

    return {"random": Random, "rule": Rule, "local": local, "lookahead": lambda: Lookahead(local()),
            "search-uniform": lambda: Search(Uniform(), budget=20, episode_budget=20),
            "search-local": lambda: Search(local(), budget=20, episode_budget=20),
            # amendment 2: the issue's literal arm, 20 calls a search and every other option at its default
            "search-uniform-20": lambda: Search(Uniform(), budget=20),
            "search-local-20": lambda: Search(local(), budget=20)}[arm]()


class WallGuard:
    """Hand a policy's decisions through until a game's wall time passes ``seconds``, then give up (the
    runner ends the episode unsolved). A guard on a run's time, not part of an arm: ``capped`` says it hit."""

    def __init__(self, policy, seconds: float) -> None:
        self.policy, self.seconds = policy, seconds
        self.name = policy.name
        self.capped = False
        self._start = time.perf_counter()

    def reset(self) -> None:
        self.policy.reset()
        self._start = time.perf_counter()

    def decide(self, situation):
        from s1gym.core import Decision, Usage

        if time.perf_counter() - self._start <= self.seconds:
            return self.policy.decide(situation)
        self.capped = True
        n = len(situation.candidates)
        return Decision(np.full(n, 1.0 / n), 0, Usage(), {"note": f"wall guard: {self.seconds:.0f} s"}, give_up=True)


def play_game(job: tuple[str, int, str, str | None]) -> dict:
    task, seed, arm, model_path = job
    from s1gym.runner.episode import play_episode

    wall = time.perf_counter()
    env = make_env(task)
    env.expert_move = lambda: None  # no expert agreement here (the rule arm is the rule itself)
    policy = WallGuard(build_policy(arm, model_path), WALL_GUARD_S)
    policy.reset()
    try:
        out = play_episode(env, policy, seed)
    except Exception as exc:  # noqa: BLE001 - a game that errors is recorded as such, not a lost run
        env.close()
        return {"task": task, "seed": seed, "arm": arm, "won": False, "score": 0.0, "steps": None, "calls": None,
                "error": f"{type(exc).__name__}: {exc}"[:300], "wall_s": round(time.perf_counter() - wall, 2)}
    env.close()
    return {"task": task, "seed": seed, "arm": arm, "won": bool(out.get("won")), "score": float(out.get("score", 0.0)),
            "steps": out.get("steps"), "calls": out["usage"].calls, "wall_s": round(time.perf_counter() - wall, 2),
            "moves": [t["move"] for t in out["ticks"] if "move" in t and not t.get("gave_up")],
            "capped": policy.capped}


def cmd_play(args) -> None:
    if args.tasks == "rule":
        tasks = rule_tasks()
    elif args.tasks == "norule":
        tasks = no_rule_tasks()
    elif args.tasks == "search-sample":
        tasks = search_sample()
    else:
        tasks = args.tasks.split(",")
    path = Path(args.json)
    done = set()
    if path.exists():
        for line in path.read_text().splitlines():
            r = json.loads(line)
            done.add((r["task"], r["seed"], r["arm"]))
    jobs = [(t, s, arm, args.model) for arm in args.arms.split(",") for s in seeds_of(args.seeds) for t in tasks
            if (t, s, arm) not in done]
    print(f"{len(jobs)} games to play ({len(done)} in {path} already)", flush=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    t = time.time()
    with path.open("a") as out:
        for i, r in enumerate(pool_map(play_game, jobs, args.workers)):
            r = {**r, "model": args.model or "shipped"}
            out.write(json.dumps(r) + "\n")
            out.flush()
            if i % 25 == 0 or i == len(jobs) - 1:
                print(f"{i + 1}/{len(jobs)} played, {time.time() - t:.0f} s", flush=True)


def _median(values: list[float]) -> float | None:
    return float(np.median(values)) if values else None


def compare_search(rows: list[dict], uniform_arm: str, local_arm: str) -> None:
    """The two search arms on the games both played: wins, median calls (the issue's measure), and the
    measures amendment 2 declared beside it: the median on the games where search(uniform) called its policy
    more than once, each arm's total calls, and the games the wall guard stopped."""
    su = {(r["task"], r["seed"]): r for r in rows if r["arm"] == uniform_arm}
    sl = {(r["task"], r["seed"]): r for r in rows if r["arm"] == local_arm}
    both = sorted(set(su) & set(sl))
    if not both:
        return

    def calls(arm: dict, keys) -> list[int]:
        return [arm[k]["calls"] for k in keys if arm[k]["calls"] is not None]

    print(f"\n{uniform_arm} vs {local_arm} on the same {len(both)} games: "
          f"{sum(su[k]['won'] for k in both)}/{len(both)} vs {sum(sl[k]['won'] for k in both)}/{len(both)} won, "
          f"median calls {_median(calls(su, both))} vs {_median(calls(sl, both))}, "
          f"total calls {sum(calls(su, both))} vs {sum(calls(sl, both))}")
    busy = [k for k in both if (su[k]["calls"] or 0) > 1]
    if busy:
        print(f"  on the {len(busy)} games where {uniform_arm} called its policy more than once: median calls "
              f"{_median(calls(su, busy))} vs {_median(calls(sl, busy))}")
    capped = [(k, a) for k in both for a, arm in ((uniform_arm, su), (local_arm, sl)) if arm[k].get("capped")]
    print(f"  stopped by the wall guard: {len(capped)} {capped if capped else ''}")


def cmd_report(args) -> None:
    """Per arm: games won over the games it played (rule tasks and the tasks without a rule apart), median
    calls; the two search arms' calls on the games both played; with ``--per-task`` a row per task."""
    rows = [json.loads(line) for line in Path(args.json).read_text().splitlines()]
    if args.model:
        rows = [r for r in rows if r.get("model") == args.model]
    if args.seeds:
        keep = set(seeds_of(args.seeds))
        rows = [r for r in rows if r["seed"] in keep]
    with_rule = set(rule_tasks())
    print("| arm | tasks | games (seeds) | won | median calls (all games) | errored |\n|---|---|---|---|---|---|")
    for group, keep in (("108 tasks with a rule", lambda t: t in with_rule),
                        ("9 tasks without a rule", lambda t: t not in with_rule)):
        for arm in ARMS:
            games = [r for r in rows if r["arm"] == arm and keep(r["task"])]
            if not games:
                continue
            won = sum(r["won"] for r in games)
            seeds = sorted({r["seed"] for r in games})
            calls = _median([r["calls"] for r in games if r["calls"] is not None])
            errors = sum(1 for r in games if r.get("error"))
            print(f"| {arm} | {group}: {len({r['task'] for r in games})} | {len(games)} ({seeds[0]}-{seeds[-1]}) | "
                  f"**{won}/{len(games)}** ({won / len(games):.0%}) | {calls if calls is not None else '–'} | "
                  f"{errors} |")
    for uniform_arm, local_arm in (("search-uniform", "search-local"), ("search-uniform-20", "search-local-20")):
        compare_search(rows, uniform_arm, local_arm)
    fl = [r for r in rows if r["arm"] == "lookahead" and r["task"] == "book-flight"]
    if fl:
        print(f"\nbook-flight lookahead(local): {sum(r['won'] for r in fl)}/{len(fl)} "
              f"(seeds {sorted(r['seed'] for r in fl)})")
    if args.per_task:
        arms = [a for a in ARMS if any(r["arm"] == a for r in rows)]
        tasks = sorted({r["task"] for r in rows})
        print("\n| task | " + " | ".join(arms) + " |\n|---|" + "---|" * len(arms))
        for t in tasks:
            cells = []
            for a in arms:
                rs = [r for r in rows if r["arm"] == a and r["task"] == t]
                cells.append(f"{sum(r['won'] for r in rs)}/{len(rs)}" if rs else "–")
            print(f"| {t} | " + " | ".join(cells) + " |")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--tasks")
    c.add_argument("--kinds", default="rule")
    c.add_argument("--seeds", default="40000")
    c.add_argument("--lookahead", action="store_true")
    c.add_argument("--cap", type=int, default=20, help="with --lookahead: annotate states with at most this many "
                   "candidates")
    c.add_argument("--model", help="dagger: the learner's model file")
    c.add_argument("--workers", type=int, default=2)
    f = sub.add_parser("fit")
    f.add_argument("--kinds")
    f.add_argument("--seeds")
    f.add_argument("--out", required=True)
    f.add_argument("--name")
    f.add_argument("--drop-task", action="store_true", help="only the generic names (no t:<task>|... names)")
    f.add_argument("--set", action="append", metavar="NAME=WEIGHT", help="a weight chosen on dev, not fitted")
    f.add_argument("--note", help="what the dev seeds chose, kept in the provenance")
    p = sub.add_parser("play")
    p.add_argument("--tasks", default="rule", help="rule (the 108), norule (the 9), search-sample, or a list")
    p.add_argument("--seeds", required=True)
    p.add_argument("--arms", default="local")
    p.add_argument("--model")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--json", default=str(HELD_OUT_FILE))
    r = sub.add_parser("report")
    r.add_argument("--json", default=str(HELD_OUT_FILE))
    r.add_argument("--model")
    r.add_argument("--seeds", help="only these seeds (e.g. the new test seeds apart from the old ones)")
    r.add_argument("--per-task", action="store_true")
    args = ap.parse_args(argv)
    {"collect": cmd_collect, "fit": cmd_fit, "play": cmd_play, "report": cmd_report}[args.cmd](args)


if __name__ == "__main__":
    main()
