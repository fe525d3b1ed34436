"""Two runs of the same jobs compared move by move: did a change alter any decision?

    python bench/ab_jobs.py BEFORE_DIR AFTER_DIR

Each directory holds job folders (``s1 run ... --out DIR``). Jobs are matched by their agent (the setup's
description) and task options, trials by seed, and compared by :mod:`s1gym.jobs.compare` (the same
comparison ``s1 rerun`` makes): tick by tick the move, the probabilities (exactly), the feedback, the score
and what a search counted (calls, expansions, children generated, duplicates, why it stopped), then the end
(won, score, steps, calls). Prints one line per job (trials compared, identical, different) and every
difference found (the first differing tick of a trial, both values); exits 1 when any trial differs or is
missing on one side.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import json  # noqa: E402

from s1gym.jobs.compare import compare_jobs, jobs_by_setup  # noqa: E402


def compare(before: Path, after: Path) -> tuple[int, int, list[str]]:
    """(trials compared, identical, differences) of one job."""
    results = compare_jobs(before, after)
    both = [c for c in results if c.only_in is None]
    notes = [f"{c.name}: {c.difference}" for c in results if c.only_in is not None]
    notes += [f"{c.name}: {c.difference}" for c in both if not c.decisions_identical]
    return len(both), sum(1 for c in both if c.decisions_identical), notes


def main() -> None:
    before, after = (Path(p) for p in sys.argv[1:3])
    ja, jb = jobs_by_setup(before), jobs_by_setup(after)
    bad = False
    for key in sorted(set(ja) | set(jb)):
        task, agent, _options = json.loads(key)
        label = f"{str(task).removeprefix('s1/')} {agent.get('label', agent) if isinstance(agent, dict) else agent}"
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
