"""Two runs of the same jobs compared move by move: did a change alter any decision?

    python bench/ab_jobs.py BEFORE_DIR AFTER_DIR

Each directory holds job folders (``s1 run ... --out DIR``). Jobs are matched by their agent (the setup's
description) and task options, trials by seed. For every trial the episode files are compared tick by tick:
the move, the probabilities (exactly), the feedback, the score and what a search counted (calls, expansions,
children generated, duplicates, why it stopped), then the end (won, score, steps, calls). Prints one line per job (trials compared, identical, different) and every
difference found (the first differing tick of a trial, both values); exits 1 when any trial differs or is
missing on one side.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import json  # noqa: E402
from typing import Any  # noqa: E402

from s1gym.jobs import read_episode  # noqa: E402


#: what a search decision counted (its info), compared too
SEARCH_COUNTS = ("policy_calls", "expansions", "generated", "duplicates", "stop_reason")


def jobs(root: Path) -> dict[str, Path]:
    """Job folders under ``root`` by (agent, task options)."""
    out = {}
    for config in sorted(root.glob("*/config.json")):
        c = json.loads(config.read_text())
        key = json.dumps([c["agents"][0].get("s1gym", c["agents"][0]), c["tasks"][0]["options"]], sort_keys=True)
        out[key] = config.parent
    return out


def ticks(trial: Path) -> tuple[list[tuple[Any, ...]], tuple[Any, ...]]:
    ep = read_episode(trial)
    rows = [(t["move"], list(t["probabilities"]), t.get("feedback"), t.get("score"),
             *(t.get("info", {}).get(k) for k in SEARCH_COUNTS)) for t in ep["ticks"]]
    final = ep["final"]
    return rows, (final.get("won"), final.get("score"), final.get("steps"), ep["usage"].get("calls"))


def compare(before: Path, after: Path) -> tuple[int, int, list[str]]:
    """(trials compared, identical, differences) of one job."""
    a = {p.name: p for p in before.iterdir() if (p / "agent" / "episode.json").is_file()}
    b = {p.name: p for p in after.iterdir() if (p / "agent" / "episode.json").is_file()}
    notes = [f"{name}: only in {'before' if name in a else 'after'}" for name in sorted(set(a) ^ set(b))]
    same = 0
    for name in sorted(set(a) & set(b)):
        (ra, fa), (rb, fb) = ticks(a[name]), ticks(b[name])
        diff = next((i for i, (x, y) in enumerate(zip(ra, rb)) if x != y), None)
        if diff is None and len(ra) == len(rb) and fa == fb:
            same += 1
            continue
        if diff is not None:
            notes.append(f"{name}: tick {diff} differs: before {ra[diff]} / after {rb[diff]}")
        else:
            notes.append(f"{name}: {len(ra)} vs {len(rb)} ticks, end {fa} vs {fb}")
    return len(set(a) & set(b)), same, notes


def main() -> None:
    before, after = (Path(p) for p in sys.argv[1:3])
    ja, jb = jobs(before), jobs(after)
    bad = False
    for key in sorted(set(ja) | set(jb)):
        label = json.loads(key)[0].get("label", key)
        if key not in ja or key not in jb:
            print(f"{label}: only in {'before' if key in ja else 'after'}")
            bad = True
            continue
        n, same, notes = compare(ja[key], jb[key])
        print(f"{label}: {n} trials compared, {same} identical, {n - same} different")
        for note in notes:
            print("  " + note)
        bad |= bool(notes)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
