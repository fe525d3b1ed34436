"""The fitting protocol of the token models (:class:`s1gym.models.token_model.TokenModel`): fit on a train
fold, check on dev that the fit pays, play the held-out arms; one harness that each family's ``fit.py``
fills with what it knows (bench/others_protocol.md says which seeds, rows and arms, and why).

A family describes each task as a :class:`Protocol`: its gym id and model class, the protocol's numbers
(``spec``: train/dev/test seeds, roll-in noise, arms, episode limits), how to make the env of a fold, which
seeds a fold plays, the dev/test metric and the info keys an episode's line keeps. :func:`main` gives the
three subcommands every family's module runs with::

    python -m s1gym.tasks.games.fit fit blackjack      # train -> L2 on dev -> does it pay? -> the family's data/
    python -m s1gym.tasks.games.fit heldout blackjack  # the protocol's test arms -> docs/data/others_heldout.jsonl
    python -m s1gym.tasks.games.fit report             # the tables (bench/others_report.py)

Labels: the task's expert on the states that roll-ins visit (each move random with probability ``noise``
on the train fold, for the first ``noisy_moves``, else the expert's), unless the family collects its own
(:attr:`Protocol.collect`). Every fit goes through :func:`s1gym.models.fitting.fit_groups`. Fold files and
the MiniLM arm's dev episodes are cached in ``~/.cache/s1gym/others`` (never in the repository). Needs a
checkout for ``heldout`` and ``report`` (they write and read docs/data).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import runpy
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from s1gym.errors import EngineCrashed

__all__ = ["Protocol", "collect", "main", "play", "play_arm", "walk"]

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path("~/.cache/s1gym/others").expanduser()
OUT = ROOT / "docs" / "data" / "others_heldout.jsonl"
L2_GRID = (0.01, 0.1, 1.0, 10.0)
MIN_COUNT = 2  # a feature name gets a weight only when met in at least this many training decisions

#: One episode's line: the keys every task has.
Line = dict[str, Any]


@dataclass
class Protocol:
    """One task's protocol, as its family fills it in (see the module docstring)."""

    #: the name on the command line and in the files (``blackjack``); the model is ``local_<task>.json``
    task: str
    #: the gym id
    id: str
    #: the model class (a :class:`~s1gym.models.token_model.TokenModel` subclass: its kind and its reader)
    model: type
    #: the family's data folder, where a fit that pays is written
    data: Path
    #: the protocol's numbers: ``train``/``dev``/``test`` seeds, ``noise``, ``noisy_moves``, ``arms``,
    #: ``dev_minilm``/``test_minilm``/``test_search``/``test_search_uniform`` limits, ``search`` options
    spec: Mapping[str, Any]
    #: the dev/test headline of a fold's lines (higher is better)
    metric: Callable[[list[Line]], float]
    #: the unwrapped env playing ``fold`` (default: ``gym.make(id)``)
    make_env: Callable[[str], Any] | None = None
    #: the seeds of ``fold`` for ``env`` (default: ``spec[fold]``)
    seeds: Callable[[str, Any], Sequence[int]] | None = None
    #: ``(protocol, fold) -> groups`` (default: :func:`collect`)
    collect: Callable[[Protocol, str], list] | None = None
    #: info keys an episode's line keeps as they are (``payoff``)
    keep: tuple[str, ...] = ()
    #: info keys holding ``[[predicted, true]]``: the line gets ``predicted`` and ``true``
    pairs: tuple[str, ...] = ()
    #: what the model's provenance says of the data and labels, beside the fit's numbers
    provenance: Callable[[argparse.Namespace], dict[str, Any]] = lambda args: {}
    #: the lines written for an arm's episodes and its run's meta (default: each episode, then a summary)
    heldout_lines: Callable[[list[Line], dict[str, Any]], list[Line]] | None = None
    #: called with the parsed arguments before a fit (a family's own options, e.g. 2048's ``--labels``)
    configure: Callable[[argparse.Namespace], None] = lambda args: None
    #: the command that fits it, for the provenance (``python -m s1gym.tasks.games.fit fit blackjack``)
    command: str = ""

    def env(self, fold: str = "test") -> Any:
        if self.make_env is not None:
            return self.make_env(fold)
        import gymnasium as gym

        import s1gym  # noqa: F401  (registers the ids)

        return gym.make(self.id).unwrapped

    def fold_seeds(self, fold: str, env: Any) -> Sequence[int]:
        return self.seeds(fold, env) if self.seeds is not None else self.spec[fold]


# ------------------------------------------------------------------ labelled states
def walk(protocol: Protocol, fold: str, keep: Callable[[Any, Any, int], Any], rng: random.Random) -> list[Any]:
    """Play ``fold``'s seeds along the expert (with the train fold's noise) and collect ``keep(situation, env,
    moves so far)`` at each state (``None``: nothing kept)."""
    spec = protocol.spec
    env = protocol.env(fold)
    kept = []
    for seed in protocol.fold_seeds(fold, env):
        env.reset(seed=seed)
        moves = 0
        while not env.done and env.candidates:
            situation = env.situation()
            texts = [c.text for c in situation.candidates]
            item = keep(situation, env, moves)
            if item is not None:
                kept.append(item)
            noisy = fold == "train" and moves < spec.get("noisy_moves", 10**9) and rng.random() < spec.get("noise", 0)
            env.step_move(rng.choice(texts) if noisy else env.expert_action())
            moves += 1
    env.close()
    return kept


def collect(protocol: Protocol, fold: str) -> list[tuple[list[list[str]], list[int]]]:
    """(feature names per candidate, good indices) for every state of ``fold``: the expert's move is good."""
    rng = random.Random(f"{protocol.task}-{fold}")

    def keep(situation: Any, env: Any, moves: int) -> tuple[Any, list[int]]:
        return situation, [[c.text for c in situation.candidates].index(env.expert_action())]

    read = protocol.model.read
    return [(read(s), good) for s, good in walk(protocol, fold, keep, rng)]


# ------------------------------------------------------------------ policies and play
def make_policy(protocol: Protocol, arm: str, model: Any = None) -> Any:
    from s1gym.policies import Local, Random, Rule, Uniform
    from s1gym.wrappers import Lookahead, Search

    def local() -> Any:
        return Local(pairs=model, preload=False)

    if arm == "rule":
        return Rule()
    if arm == "random":
        return Random(seed=0)
    if arm == "uniform":
        return Uniform()
    if arm == "local":
        return local()
    if arm == "local-minilm":
        return Local(pairs=False)
    if arm == "lookahead-local":
        return Lookahead(local())
    if arm in ("search-uniform", "search-local"):
        return Search(Uniform() if arm == "search-uniform" else local(), **protocol.spec["search"])
    raise SystemExit(f"unknown arm {arm!r}")


def play(protocol: Protocol, env: Any, policy: Any, seed: int) -> Line:
    """One episode: what the report needs of it."""
    started, cpu = time.perf_counter(), time.process_time()
    _, info = env.reset(seed=seed)
    policy.reset()
    calls, gave_up = 0, False
    while not env.done and env.candidates:
        situation = env.situation()
        decision = policy.decide(situation)
        calls += decision.usage.calls
        if decision.give_up:
            gave_up = True
            break
        # by the move's text: an index is a candidate's, and the env's action slots are fixed (2048's four)
        _, _, _, _, info = env.step_move(situation.candidates[decision.action].text)
    line = {"seed": seed, "won": bool(info["won"]), "score": round(float(info["score"]), 4), "steps": env.steps,
            "calls": calls, "gave_up": gave_up, "wall_s": round(time.perf_counter() - started, 3),
            "cpu_s": round(time.process_time() - cpu, 3)}
    for key in protocol.keep:
        if key in info:
            line[key] = info[key]
    for key in protocol.pairs:
        if info.get(key):
            line["predicted"], line["true"] = info[key][0]
    return line


def play_arm(protocol: Protocol, arm: str, fold: str, limit: int | None = None, model: Any = None,
             on_line: Callable[[list[Line]], None] | None = None) -> list[Line]:
    """The arm's episodes on the fold's seeds (the first ``limit``); ``on_line(lines so far)`` after each."""
    env = protocol.env(fold)
    seeds = list(protocol.fold_seeds(fold, env))[:limit]
    policy = make_policy(protocol, arm, model)
    lines: list[Line] = []
    for s in seeds:
        for attempt in (1, 2):  # an app that dies under a game: the same game again, on a fresh engine
            try:
                lines.append({**play(protocol, env, policy, s), **({"replayed": True} if attempt == 2 else {})})
                break
            except EngineCrashed as exc:
                print(f"seed {s}, attempt {attempt}: {exc}", flush=True)
                if attempt == 2:  # it dies again at the same press: the game counts as not won
                    lines.append({"seed": s, "won": False, "score": 0.0, "steps": env.steps, "calls": 0,
                                  "error": str(exc)[:300], "wall_s": 0.0, "cpu_s": 0.0})
        if on_line is not None:
            on_line(lines)
    env.close()
    return lines


# ------------------------------------------------------------------ commands
def cmd_fit(protocol: Protocol, args: argparse.Namespace) -> None:
    from s1gym.models.fitting import fit_groups

    task, spec, metric = protocol.task, protocol.spec, protocol.metric
    protocol.configure(args)
    t = time.time()
    gather = protocol.collect or collect
    fit = fit_groups(gather(protocol, "train"), gather(protocol, "dev"), L2_GRID, min_count=MIN_COUNT)
    train, dev, sel, weights = fit.train, fit.dev, fit.selection, fit.weights
    print(f"{task}: {train.n} train and {dev.n} dev decisions, {len(train.vocab)} names, collected and fitted in "
          f"{time.time() - t:.0f} s (load {os.getloadavg()[0]:.1f})", flush=True)
    print(f"L2 {sel.l2}; dev NLL/decision " + ", ".join(f"{k}: {v:.4f}" for k, v in sel.dev_nll.items())
          + f"; dev top-1 {dev.top1(sel.w):.4f}, train top-1 {train.top1(sel.w):.4f}", flush=True)
    provenance: dict[str, Any] = {
        "name": f"local_{task}", "fitted_by": protocol.command or f"fit {task}",
        "protocol": "bench/others_protocol.md", "l2": sel.l2,
        "dev_nll": {str(k): round(v, 5) for k, v in sel.dev_nll.items()}, "train_decisions": train.n,
        "dev_decisions": dev.n, "dev_top1": round(dev.top1(sel.w), 4), **protocol.provenance(args)}
    model = protocol.model(weights, provenance=provenance)
    fitted = play_arm(protocol, "local", "dev", model=model)
    provenance["dev_metric_fitted"] = round(metric(fitted), 4)
    CACHE.mkdir(parents=True, exist_ok=True)
    cached = CACHE / f"{task}_dev_minilm.json"  # the same arm on the same seeds: played once per task
    if cached.exists():
        minilm = json.loads(cached.read_text())
    else:
        minilm = play_arm(protocol, "local-minilm", "dev", limit=spec.get("dev_minilm"))
        cached.write_text(json.dumps(minilm))
    n = len(minilm)
    provenance["dev_metric_fitted_same_episodes"] = round(metric(fitted[:n]), 4)
    provenance["dev_metric_minilm"] = round(metric(minilm), 4)
    pays = metric(fitted[:n]) > metric(minilm)
    print(f"dev: fitted {metric(fitted):.4f} over {len(fitted)}; on the first {n}: fitted "
          f"{metric(fitted[:n]):.4f}, MiniLM Local {metric(minilm):.4f} -> "
          f"{'pays' if pays else 'does not pay'} ({time.time() - t:.0f} s, load {os.getloadavg()[0]:.1f})", flush=True)
    path = Path(args.out or protocol.data / f"local_{task}.json")
    if pays or args.out:
        protocol.model(weights, provenance=provenance).save(path)
        print(f"wrote {path}")


def write_lines(task: str, arm: str, lines: list[Line]) -> None:
    """Replace the (task, arm) lines of the file; a lock beside it keeps parallel runs of tasks apart."""
    import fcntl

    OUT.parent.mkdir(parents=True, exist_ok=True)
    CACHE.mkdir(parents=True, exist_ok=True)
    with (CACHE / "heldout.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        old = [json.loads(x) for x in OUT.read_text().splitlines()] if OUT.exists() else []
        keep = [x for x in old if (x["task"], x["arm"]) != (task, arm)]
        with OUT.open("w") as f:
            for x in keep + [{"task": task, "arm": arm, **x} for x in lines]:
                f.write(json.dumps(x) + "\n")


def cmd_heldout(protocol: Protocol, args: argparse.Namespace) -> None:
    task, spec = protocol.task, protocol.spec
    for arm in args.arms.split(",") if args.arms else spec["arms"]:
        limit = {"local-minilm": spec.get("test_minilm"), "search-local": spec.get("test_search"),
                 "search-uniform": spec.get("test_search_uniform", spec.get("test_search"))}.get(arm)
        load0, t, cpu = os.getloadavg()[0], time.time(), time.process_time()
        # episodes are written as they end (an arm cut short keeps what it played), unless the family writes
        # its own lines (Blackjack's blocks of hands) at the end
        partial = None if protocol.heldout_lines else (lambda done, arm=arm: write_lines(task, arm, done))
        lines = play_arm(protocol, arm, "test", limit=limit, on_line=partial)
        meta = {"load_start": round(load0, 1), "load_end": round(os.getloadavg()[0], 1),
                "wall_s": round(time.time() - t, 1), "cpu_s": round(time.process_time() - cpu, 1)}
        if protocol.heldout_lines:
            write_lines(task, arm, protocol.heldout_lines(lines, meta))
        else:
            write_lines(task, arm, lines + [{"summary": True, "episodes": len(lines), **meta}])
        print(f"{task} {arm}: {len(lines)} episodes, metric {protocol.metric(lines):.4f}; {meta}", flush=True)


def report() -> None:
    """The tables of docs/benchmarks.md (bench/others_report.py, in a checkout)."""
    script = ROOT / "bench" / "others_report.py"
    if not script.is_file():
        raise SystemExit(f"report: {script} is not here (it is in a checkout of the repository)")
    runpy.run_path(str(script), run_name="__main__")


def main(protocols: Mapping[str, Protocol], argv: Sequence[str] | None = None, prog: str | None = None,
         description: str = "", options: Sequence[tuple[Sequence[str], Mapping[str, Any]]] = ()) -> None:
    """The ``fit``, ``heldout`` and ``report`` subcommands over a family's ``protocols`` (by task);
    ``options``: the family's own ``fit`` options, as ``(flags, argparse keywords)``."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("fit")
    p.add_argument("task", choices=list(protocols))
    for flags, kwargs in options:
        p.add_argument(*flags, **kwargs)
    p.add_argument("--out", help="write the model here even when it does not pay (e.g. a dev comparison)")
    p = sub.add_parser("heldout")
    p.add_argument("task", choices=list(protocols))
    p.add_argument("--arms", help="comma list (default: the protocol's arms)")
    sub.add_parser("report")
    args = parser.parse_args(argv)
    os.environ.setdefault("S1GYM_LOCAL_THREADS", "1")
    if args.cmd == "report":
        report()
    elif args.cmd == "fit":
        cmd_fit(protocols[args.task], args)
    else:
        cmd_heldout(protocols[args.task], args)

