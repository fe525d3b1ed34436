"""The tables of docs/benchmarks.md's "Fitted Local beside the rule" from docs/data/others_heldout.jsonl.

    python bench/others_report.py            # (or: python -m s1gym.tasks.games.fit report)

Intervals: 95 %; Blackjack's mean payoff a normal interval, the rest percentile bootstraps (s1gym.stats, fixed
seed) or Wilson's for win counts; ``− rule`` columns are paired differences over the same seeds or rows.
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from s1gym.stats import bootstrap_ci
from s1gym.tasks.text.injection import InjectionGuardEnv
from s1gym.tasks.text.tickets import TicketRouterEnv

DATA = Path(__file__).resolve().parents[1] / "docs" / "data" / "others_heldout.jsonl"
ARMS = ("rule", "random", "uniform", "local", "local-minilm", "lookahead-local", "search-uniform", "search-local")


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    p = k / n
    centre, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, (centre - half) / (1 + z * z / n)), min(1.0, (centre + half) / (1 + z * z / n))


def paired(a: dict, b: dict) -> str:
    """Mean of a - b over the seeds both have, with its bootstrap interval."""
    common = sorted(set(a) & set(b))
    d = [a[s] - b[s] for s in common]
    lo, hi = bootstrap_ci(d)
    return f"{np.mean(d):+.3f} [{lo:+.3f}, {hi:+.3f}] (n={len(common)})"


def load() -> dict:
    by = defaultdict(lambda: defaultdict(list))
    for line in DATA.read_text().splitlines():
        x = json.loads(line)
        by[x["task"]][x["arm"]].append(x)
    return by


def meta(lines: list[dict]) -> str:
    m = next((x for x in lines if x.get("summary")), None)
    if m is None:
        return "unfinished (the episodes that ended)"
    return f"{m['cpu_s']:.0f} / {m['wall_s']:.0f}, load {m['load_start']}–{m['load_end']}"


def blackjack(arms: dict) -> None:
    print("| arm | hands | mean payoff (95 %) | win / push / loss | − rule, same hands | CPU / wall s |")
    print("|---|---|---|---|---|---|")
    per = {}
    for arm in ARMS:
        if arm not in arms:
            continue
        s = "".join(x["payoffs"] for x in arms[arm] if not x.get("summary"))
        first = next(x for x in arms[arm] if not x.get("summary"))["seeds"][0]
        pay = np.array([{"W": 1, "P": 0, "L": -1}[c] for c in s], dtype=float)
        per[arm] = {first + i: v for i, v in enumerate(pay)}
        half = 1.96 * pay.std(ddof=1) / math.sqrt(len(pay))
        c = Counter(s)
        diff = paired(per[arm], per["rule"]) if arm != "rule" else "—"
        print(f"| {arm} | {len(pay):,} | {pay.mean():+.4f} ± {half:.4f} | {c['W']:,} / {c['P']:,} / {c['L']:,} | "
              f"{diff} | {meta(arms[arm])} |")


def episodes(arms: dict, arm: str) -> list[dict]:
    return [x for x in arms.get(arm, []) if not x.get("summary")]


def game2048(arms: dict) -> None:
    print("| arm | games | mean largest tile (95 %) | mean log2 | − rule (log2, same games) | largest tiles | "
          "calls a move | CPU / wall s |")
    print("|---|---|---|---|---|---|---|---|")
    rule = {x["seed"]: math.log2(x["max_tile"]) for x in episodes(arms, "rule")}
    for arm in ARMS:
        lines = episodes(arms, arm)
        if not lines:
            continue
        tiles = [x["max_tile"] for x in lines]
        lo, hi = bootstrap_ci(tiles)
        logs = {x["seed"]: math.log2(x["max_tile"]) for x in lines}
        dist = ", ".join(f"{k}: {v}" for k, v in sorted(Counter(tiles).items()))
        calls = sum(x["calls"] for x in lines) / max(1, sum(x["steps"] for x in lines))
        diff = paired(logs, rule) if arm != "rule" else "—"
        print(f"| {arm} | {len(lines)} | {np.mean(tiles):.0f} [{lo:.0f}, {hi:.0f}] | {np.mean(list(logs.values())):.2f}"
              f" | {diff} | {dist} | {calls:.1f} | {meta(arms[arm])} |")


def calculator(arms: dict) -> None:
    print("| arm | goals | computed (95 % Wilson) | mean presses | calls a goal | CPU / wall s |")
    print("|---|---|---|---|---|---|")
    for arm in ARMS:
        lines = episodes(arms, arm)
        if not lines:
            continue
        k, n = sum(x["won"] for x in lines), len(lines)
        lo, hi = wilson(k, n)
        print(f"| {arm} | {n} | **{k}/{n}** [{lo:.2f}, {hi:.2f}] | {np.mean([x['steps'] for x in lines]):.1f} | "
              f"{np.mean([x['calls'] for x in lines]):.0f} | {meta(arms[arm])} |")


def labelled(arms: dict, env_class, key: str) -> None:
    inj = env_class is InjectionGuardEnv
    head = "precision / recall / F1 of block (95 %) | accuracy (95 %)" if inj else "accuracy (95 %)"
    print(f"| arm | rows | {head} | − rule accuracy, same rows | CPU / wall s |")
    print("|---" * (6 if inj else 5) + "|")
    rule = {x["seed"]: float(x["predicted"] == x["true"]) for x in episodes(arms, "rule")}
    for arm in ARMS:
        lines = episodes(arms, arm)
        if not lines:
            continue
        s = env_class.summarize_episodes([{key: [[x["predicted"], x["true"]]]} for x in lines])

        def f(name: str) -> str:
            lo, hi = s[f"{name}_ci95"]
            return f"{s[name]:.3f} [{lo:.3f}, {hi:.3f}]"

        cells = f"{f('precision')} / {f('recall')} / **{f('f1')}** | {f('accuracy')}" if inj else f"**{f('accuracy')}**"
        acc = {x["seed"]: float(x["predicted"] == x["true"]) for x in lines}
        diff = paired(acc, rule) if arm != "rule" else "—"
        print(f"| {arm} | {len(lines)} | {cells} | {diff} | {meta(arms[arm])} |")


def main() -> None:
    by = load()
    for task, fn in (("blackjack", blackjack), ("2048", game2048), ("calculator", calculator),
                     ("tickets", lambda a: labelled(a, TicketRouterEnv, "routed")),
                     ("injection", lambda a: labelled(a, InjectionGuardEnv, "judged"))):
        if task in by:
            print(f"\n{task}\n")
            fn(by[task])


if __name__ == "__main__":
    main()
