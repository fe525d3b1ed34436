"""Fitting Local's ALFWorld model on collected states (:mod:`.fit_states`): the protocol's two-stage
conditional-logit fit of the pair weights and dense weights, and the progress estimate's ridge regression."""

from __future__ import annotations

import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from s1gym.models.fitting import Design, fit_ridge
from s1gym.tasks.alfworld.env import task_type_of
from s1gym.tasks.alfworld.fit_states import collected, folds, load_states, usable, valid_seen
from s1gym.tasks.alfworld.model import ALFWorldModel

#: The L2 strengths, fixed in the protocol.
L2_PAIRS = 1.0
L2_DENSE = 1e-3
L2_PROGRESS = 1.0
#: Local's dense features the ALFWorld model fits (no embedding feature: the model embeds nothing).
DENSE_PLAIN = ("goal_share", "goal_phrase", "all_in_goal", "verb_in_goal", "feedback_phrase", "played", "last",
               "verb_group", "length")
DENSE_AHEAD = ("new_goal_phrase",)


def situations(record: dict):
    """The record's decision as Local sees it plainly and with Lookahead: (plain, annotated, expert index)."""
    from s1gym.core import Candidate, Situation

    texts = record["candidates"]
    plain = Situation(task="ALFWorld", observation=record["state_text"], state_text=record["state_text"],
                      candidates=tuple(Candidate(t) for t in texts),
                      history=tuple(tuple(h) for h in record["history"]))
    annotated = plain.with_candidates([
        Candidate(t, outcome=o, new_actions=tuple(n))
        for t, o, n in zip(texts, record["outcomes"], record["new_actions"], strict=True)
    ])
    return plain, annotated, texts.index(record["expert"])


def design(records: list[dict], vocab: dict[str, int] | None = None) -> Design:
    """The records as one design (:mod:`s1gym.models.fitting`): one row per candidate, columns the dense
    features (their values), then the pairs; tagged by game. ``vocab``: another design's columns (no new
    column is added)."""
    from s1gym.policies.local import FEATURES, Local
    from s1gym.tasks.alfworld.tokens import situation_pairs

    local = Local(preload=False)
    dense_names = DENSE_PLAIN + DENSE_AHEAD
    dense_cols = [FEATURES.index(f) for f in dense_names]
    skip = set(FEATURES) - set(dense_names)
    groups = []
    for record in records:
        _, annotated, gold = situations(record)
        dense = local.features(annotated, skip=skip)[:, dense_cols]
        groups.append(([[(n, v) for n, v in zip(dense_names, row, strict=True) if v != 0.0] + ps
                        for row, ps in zip(dense, situation_pairs(annotated), strict=True)], gold))
    columns = {n: j for j, n in enumerate(dense_names)} if vocab is None else vocab
    return Design(groups, vocab=columns, growing=vocab is None, tags=[r["game"] for r in records])


def lookahead_columns(design: Design) -> np.ndarray:
    """The columns that only lookahead can make non-zero."""
    return np.array([n in DENSE_AHEAD or "|out:" in n or "|new:" in n for n in design.names])


def l2_of(design: Design) -> np.ndarray:
    """The protocol's L2 per column: :data:`L2_DENSE` per state on the dense weights, :data:`L2_PAIRS` on pairs."""
    l2 = np.full(design.X.shape[1], L2_PAIRS)
    l2[:len(DENSE_PLAIN + DENSE_AHEAD)] = L2_DENSE * design.n
    return l2


def fit_model(records: list[dict], name: str, built: Design | None = None) -> tuple[ALFWorldModel, dict]:
    """The two-stage fit of the protocol on ``records`` (``built``: their design, when built already):
    L-BFGS on the conditional-logit NLL plus the protocol's L2, first the plain columns, then the lookahead
    columns with the rest fixed."""
    built = design(records) if built is None else built
    ahead, l2 = lookahead_columns(built), l2_of(built)
    plain = built.fit(l2, free=~ahead, maxiter=500)
    both = built.fit(l2, start=plain, free=ahead, maxiter=500)
    d = len(DENSE_PLAIN + DENSE_AHEAD)
    dense = {n: round(float(v), 4) for n, v in zip(built.names[:d], both[:d], strict=True)}
    pairs = {n: float(v) for n, v in zip(built.names[d:], both[d:], strict=True) if abs(v) >= 1e-4}
    progress = fit_progress(records)
    stats = {"games": len(set(built.tags.tolist())), "states": built.n,
             "nll_plain": round(built.nll(plain) / built.n, 4),
             "nll_lookahead": round(built.nll(both) / built.n, 4),
             "top1_plain": round(built.top1(plain), 4), "top1_lookahead": round(built.top1(both), 4),
             "pairs": len(pairs)}
    return ALFWorldModel(pairs, dense, progress, {"name": name, **stats}), stats


def fit_progress(records: list[dict]) -> dict[str, float]:
    """Ridge regression of the expert's remaining moves on the situation tokens, expert states of won games."""
    from s1gym.tasks.alfworld.goals import context_tokens

    rows, ys = [], []
    for r in records:
        if r["rollin"] == 0 and r.get("remaining") is not None:
            plain, _, _ = situations(r)
            rows.append([t for t in context_tokens(plain) if not t.startswith("g:")])
            ys.append(float(r["remaining"]))
    return {t: round(v, 4) for t, v in fit_ridge(rows, ys, L2_PROGRESS).items()}


def fit_folds(parts: list[list[int]], among: set[int] | None, out_dir: Path, label: str,
              skip_tidy: bool = False) -> None:
    """Fit one model per fold of ``parts`` on the collected games of the other folds (only games in ``among``
    when given) and save it as ``out_dir/fold<k>.json``; folds whose file exists are skipped."""
    missing = [k for k in range(len(parts)) if not (out_dir / f"fold{k}.json").exists()]
    if not missing:
        return
    games = [g for g in collected() if among is None or g in among]
    records = load_states(games, learner=True, skip_tidy=skip_tidy)
    outer = folds(valid_seen())
    outside = set(range(sum(map(len, outer)))) - set(games) if among is not None else set()
    t = time.process_time()
    built = design(records)
    print(f"design: {len(games)} games, {len(records)} states, {built.X.shape[1]} columns, "
          f"{time.process_time() - t:.0f} s CPU", flush=True)
    for k in missing:
        held = set(parts[k])
        keep = np.array([usable(r, held | outside, outer) for r in records])
        t = time.process_time()
        model, stats = fit_model([r for r, k_ in zip(records, keep) if k_], f"{label} fold {k}", built.subset(keep))
        model.save(out_dir / f"fold{k}.json")
        print(f"fold {k}: {time.process_time() - t:.0f} s CPU: {stats}", flush=True)
        print(f"  held out: {held_out_top1(model, [r for r in records if r['game'] in held])}", flush=True)


def held_out_top1(model: ALFWorldModel, records: list[dict]) -> dict[str, float]:
    """Share of held-out states where Lookahead(Local) with ``model`` ranks the expert's move first, by kind of
    state (the expert's own game, the noisy roll-ins) and for pick_two_obj_and_place."""
    from s1gym.policies.local import Local

    local = Local(pairs=model, preload=False)
    games = valid_seen()
    hits: dict[str, list[bool]] = defaultdict(list)
    for r in records:
        _, annotated, gold = situations(r)
        hit = int(np.argmax(local.logits(annotated))) == gold
        hits[("expert", "rollin", "learner")[r["rollin"]]].append(hit)
        if task_type_of(games[r["game"]]) == "pick_two_obj_and_place":
            hits["pick_two"].append(hit)
    return {k: round(float(np.mean(v)), 3) for k, v in sorted(hits.items())}
