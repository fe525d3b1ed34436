"""Real decision states for Local's benchmarks and its regression file, chosen before any timing.

    python bench/local_states.py --golden    # rewrite tests/data/local_decisions.json (see below)

The states (fixed here, before anything was measured):

- CookingWorld: test fold, seeds 0-3 of medium and large; every state along
  TextWorldExpress's gold path (the recipe is read on the way, so later states
  carry it), in order.
- ALFWorld: seeds 0-5 of the shared valid_seen games at stride 11 (as
  bench/alfworld.py; ``../shared/data/alfworld``), else of the shipped scenes;
  all moves (no hygiene); every state along the handcoded expert's first 15 moves.
- Tickets: TicketRouter on the shared Bitext set with its 27 intents as the
  queues (``../shared/data/tickets``), seeds 0-39; the 30 shipped tickets over
  5 queues when the shared data is absent.

:func:`with_candidates` widens or narrows a state to exactly N candidates:
its own moves first, then moves of the same task's other states (real move
texts, in collection order), so "30 candidates" means 30 real moves of that
task. Ticket tasks have only their queues (27 intents), so N is capped there.

``--golden`` writes the regression file of ``tests/test_local.py``: 40
states (14 CookingWorld, 6 of them with Lookahead's outcomes; 14 ALFWorld, 4
with outcomes; 12 tickets; outcomes kept to their first paragraph, all that
Local reads of them) and the probabilities the embedding path *before*
the length-bucketed one gave them, computed with ``policies/local.py`` loaded
from git history (:data:`BEFORE_COMMIT`), torch, one thread.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

# bench/alfworld.py would shadow the alfworld package: keep this folder off sys.path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import gymnasium as gym  # noqa: E402

import s1gym  # noqa: E402,F401  (registers the envs)
from s1gym.core import Candidate, Situation  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("S1GYM_SHARED_DATA", ROOT.parent / "shared" / "data"))
BITEXT = SHARED / "tickets" / "bitext_customer_support.csv"
GOLDEN = ROOT / "tests" / "data" / "local_decisions.json"
#: The last commit with the old embedding path (one ``SentenceTransformer.encode`` call, batch size 64,
#: a cache bounded by entries): Local as it was before issue 17.
BEFORE_COMMIT = "3973019"


def cooking_states(sizes=("medium", "large"), seeds=range(4)) -> Iterator[tuple[Situation, object]]:
    for size in sizes:
        for seed in seeds:
            env = gym.make("s1/CookingWorld-v0", size=size, fold="test")
            env.reset(seed=seed)
            for move in env.unwrapped.gold_path():
                if env.unwrapped.done:
                    break
                yield env.unwrapped.situation(), env
                if move in env.unwrapped.candidates:
                    env.step(env.unwrapped.index_of(move))
            env.close()


def alfworld_states(seeds=range(6), moves: int = 15) -> Iterator[tuple[Situation, object]]:
    shared = SHARED / "alfworld"
    if (shared / "json_2.1.1" / "valid_seen").is_dir():
        env = gym.make("s1/ALFWorld-v0", data_dir=str(shared), split="valid_seen", stride=11, hygiene=False)
    else:
        env = gym.make("s1/ALFWorld-v0", split="scenes", hygiene=False)
    for seed in seeds:
        env.reset(seed=seed)
        for _ in range(moves):
            if env.unwrapped.done:
                break
            yield env.unwrapped.situation(), env
            env.step(env.unwrapped.index_of(env.unwrapped.expert_action()))
    env.close()


def ticket_states(seeds=range(40)) -> Iterator[tuple[Situation, object]]:
    options = {"tickets": str(BITEXT), "text_column": "instruction", "label_column": "intent"} if BITEXT.is_file() else {}
    env = gym.make("s1/TicketRouter-v0", **options)
    for seed in seeds:
        env.reset(seed=seed)
        yield env.unwrapped.situation(), env
    env.close()


COLLECTORS = {"CookingWorld": cooking_states, "ALFWorld": alfworld_states, "Tickets": ticket_states}


def collect(task: str) -> list[Situation]:
    """Every state of ``task``'s fixed set (without forks: plain, picklable situations)."""
    return [strip_fork(s) for s, _env in COLLECTORS[task]()]


def strip_fork(situation: Situation) -> Situation:
    """The situation without its live env (fork, privileged access): what a policy may see, picklable."""
    return replace(situation, fork=None, privileged=None)


def with_candidates(states: list[Situation], n: int, pool_states: list[Situation] | None = None) -> list[Situation]:
    """Each state with exactly ``n`` candidates (its own first, then the moves of ``pool_states``, default
    ``states``: the task's other moves), when the task has n."""
    pool = list(dict.fromkeys(c.text for s in (pool_states or states) for c in s.candidates))
    out = []
    for s in states:
        texts = list(dict.fromkeys([*s.texts, *pool]))[:n]
        out.append(s.with_candidates([Candidate(t) for t in texts]))
    return out


# --------------------------------------------------------------- serialising
def to_json(situation: Situation) -> dict:
    return {
        "task": situation.task,
        "observation": situation.observation,
        "candidates": [{"text": c.text, "outcome": c.outcome, "new_actions": list(c.new_actions)}
                       for c in situation.candidates],
        "history": [list(h) for h in situation.history],
        "notes": list(situation.notes),
        "score": situation.score,
        "state_text": situation.state_text,
    }


def load_before(commit: str = BEFORE_COMMIT):
    """``policies/local.py`` as of ``commit``, imported as its own module (its own model and cache).

    Its helper module ``policies/common.py`` is taken from the same commit (``strip_moves`` has
    since left it), so the old code runs unchanged.
    """
    folder = Path(tempfile.mkdtemp(prefix="s1gym-local-before-"))
    modules = {}
    for name in ("common", "local"):
        source = subprocess.run(["git", "-C", str(ROOT), "show", f"{commit}:policies/{name}.py"],
                                check=True, capture_output=True, text=True).stdout
        source = source.replace("from s1gym.policies.common import", "from s1gym_before_common import")
        path = folder / f"{name}.py"
        path.write_text(source)
        spec = importlib.util.spec_from_file_location(f"s1gym_before_{name}", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        modules[name] = module
    return modules["local"]


def golden_states() -> list[Situation]:
    from s1gym.policies import Local, Uniform
    from s1gym.wrappers import Lookahead

    lookahead = Lookahead(Uniform())
    chosen: list[Situation] = []
    # Every 5th (CookingWorld) or 3rd (ALFWorld) state along the gold paths / expert runs; Lookahead's
    # outcomes on every other one of the first few, cut to the first paragraph (all that Local reads of them).
    for task, stride, total, looked in (("CookingWorld", 5, 14, 6), ("ALFWorld", 3, 14, 4)):
        picked = 0
        for k, (s, _env) in enumerate(COLLECTORS[task]()):
            if k % stride:
                continue
            if picked < 2 * looked and picked % 2 == 0:
                s = lookahead.annotate(s)[0]
                s = s.with_candidates([replace(c, outcome=Local.outcome_text(c) or None) for c in s.candidates])
            chosen.append(strip_fork(s))
            picked += 1
            if picked == total:
                break
    chosen += [strip_fork(s) for s, _env in ticket_states(range(12))]
    return chosen


def write_golden() -> None:
    os.environ["S1GYM_TORCH_THREADS"] = "1"
    before = load_before()
    policy = before.Local()
    rows = []
    for s in golden_states():
        p = policy.decide(s).probabilities
        rows.append({"situation": to_json(s), "probabilities": [float(x) for x in p]})
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    payload = {"made_by": f"bench/local_states.py --golden (policies/local.py at {BEFORE_COMMIT}, torch, 1 thread)",
               "decisions": rows}
    GOLDEN.write_text(json.dumps(payload, ensure_ascii=False) + "\n")
    print(f"wrote {len(rows)} decisions to {GOLDEN.relative_to(ROOT)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--golden", action="store_true", help="rewrite tests/data/local_decisions.json")
    args = parser.parse_args()
    if args.golden:
        write_golden()
    else:
        for task in COLLECTORS:
            states = collect(task)
            sizes = sorted(len(s.candidates) for s in states)
            print(f"{task}: {len(states)} states, candidates {sizes[0]}-{sizes[-1]} (median {sizes[len(sizes) // 2]})")


if __name__ == "__main__":
    main()
