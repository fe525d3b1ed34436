"""The one fitting recipe of Local's fitted models (:mod:`s1gym.models.fitted`), which bench scripts call.

A decision is a group: each candidate move's features (feature names, or ``(name, value)`` pairs for
dense features; a name weighs 1) and the index or indices of the good moves. The model is a conditional
logit (a move's logit is the sum of its features' weights), fitted by the likelihood of the *set* of good
moves (the log of their summed probability; with one good move, its log-probability) plus an L2 penalty,
by L-BFGS::

    from s1gym.models.fitting import Design, fit_ridge, select_l2

    train = Design([(features_per_candidate, chosen_index), ...])   # one column per name seen
    dev = Design(dev_groups, vocab=train.vocab, growing=False)        # the same columns
    best = select_l2(train, dev, (0.1, 1.0, 10.0))                    # the L2 with the lowest dev NLL
    weights = train.weights(best.w)                                   # name -> weight, for the model file

:func:`fit_groups` is that recipe in one call for models whose columns are the names met in enough training
decisions (the token models of the games, the labelled texts and the calculator).

Fits in two stages (the TextWorldExpress and ALFWorld models: the features a plain decision shows, then
the lookahead features with the rest fixed) pass ``start`` and ``free``. :func:`fit_ridge` fits a
progress estimate (moves left on a situation's tokens, the intercept ``*`` unpenalised). Needs scipy
(installed with the ``alfworld`` and ``rl`` extras).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["Design", "GroupFit", "Selection", "fit_groups", "fit_ridge", "select_l2", "vocabulary"]

#: A candidate's features: names (each weighs 1) or (name, value) pairs.
Features = Iterable["str | tuple[str, float]"]


class Design:
    """Decisions as one sparse matrix, one row per candidate, one column per feature name; the good
    candidates of each decision.

    Args:
        groups: one ``(candidates, good)`` per decision: ``candidates`` the features of each candidate,
            ``good`` the index of the chosen (good) candidate or a list of them.
        vocab: the columns to start from (name -> column, copied), e.g. another design's.
        growing: add a column for every new name (``False``: names not in ``vocab`` are left out).
        tags: one label per decision (e.g. its game), kept through :meth:`subset`.
    """

    def __init__(self, groups: Iterable[tuple[Sequence[Features], int | Sequence[int]]],
                 vocab: Mapping[str, int] | None = None, growing: bool = True,
                 tags: Sequence[object] | None = None) -> None:
        from scipy import sparse

        self.vocab: dict[str, int] = {} if vocab is None else dict(vocab)
        r_idx: list[int] = []
        c_idx: list[int] = []
        vals: list[float] = []
        starts, good_rows, good_seg = [0], [], []
        for d, (cands, good) in enumerate(groups):
            base = starts[-1]
            for i, features in enumerate(cands):
                for f in features:
                    name, value = (f, 1.0) if isinstance(f, str) else f
                    j = self.vocab.get(name)
                    if j is None:
                        if not growing:
                            continue
                        j = self.vocab[name] = len(self.vocab)
                    r_idx.append(base + i)
                    c_idx.append(j)
                    vals.append(float(value))
            good = [good] if isinstance(good, int | np.integer) else list(good)
            good_rows.extend(base + int(i) for i in good)
            good_seg.extend([d] * len(good))
            starts.append(base + len(cands))
        self.X = sparse.csr_matrix((np.asarray(vals), (r_idx, c_idx)), shape=(starts[-1], len(self.vocab)))
        self.starts = np.asarray(starts)
        self.good_rows = np.asarray(good_rows, dtype=np.int64)
        self.good_seg = np.asarray(good_seg, dtype=np.int64)
        self.single = bool(len(self.good_rows) == self.n and np.all(self.good_seg == np.arange(self.n)))
        self.tags = None if tags is None else np.asarray(tags)
        self.names = [""] * len(self.vocab)
        for k, j in self.vocab.items():
            self.names[j] = k

    @property
    def n(self) -> int:
        """The number of decisions."""
        return len(self.starts) - 1

    def subset(self, keep: np.ndarray) -> Design:
        """The design of the decisions where ``keep`` is true (same columns)."""
        keep = np.asarray(keep, dtype=bool)
        out = object.__new__(Design)
        out.__dict__.update(self.__dict__)
        counts = np.diff(self.starts)
        kept = np.flatnonzero(keep)
        spans = [np.arange(self.starts[d], self.starts[d + 1]) for d in kept]
        rows = np.concatenate(spans) if spans else np.zeros(0, dtype=np.int64)
        out.X = self.X[rows]
        out.starts = np.concatenate([[0], np.cumsum(counts[keep])])
        new_index = np.cumsum(keep) - 1
        mine = keep[self.good_seg]
        out.good_seg = new_index[self.good_seg[mine]]
        out.good_rows = out.starts[out.good_seg] + (self.good_rows - self.starts[self.good_seg])[mine]
        out.single = bool(len(out.good_rows) == out.n and np.all(out.good_seg == np.arange(out.n)))
        out.tags = None if self.tags is None else self.tags[keep]
        return out

    def loss_grad(self, w: np.ndarray) -> tuple[float, np.ndarray]:
        """The negative log-likelihood of the good moves (summed over decisions) and its gradient."""
        z = self.X @ w
        seg = self.starts[:-1]
        counts = np.diff(self.starts)
        m = np.maximum.reduceat(z, seg)
        e = np.exp(z - np.repeat(m, counts))
        s = np.add.reduceat(e, seg)
        p = e / np.repeat(s, counts)
        if self.single:  # one good move a decision: its log-probability, exactly
            loss = float(np.sum(np.log(s) + m - z[self.good_rows]))
            p[self.good_rows] -= 1.0
            return loss, self.X.T @ p
        eg = e[self.good_rows]
        sg = np.bincount(self.good_seg, weights=eg, minlength=self.n)
        loss = float(np.sum(np.log(s)) - np.sum(np.log(sg)))
        p[self.good_rows] -= eg / sg[self.good_seg]
        return loss, self.X.T @ p

    def nll(self, w: np.ndarray) -> float:
        """The negative log-likelihood of the good moves, summed over decisions."""
        return self.loss_grad(w)[0]

    def fit(self, l2: float | np.ndarray, start: np.ndarray | None = None, free: np.ndarray | None = None,
            maxiter: int = 1000) -> np.ndarray:
        """The weights (one per column) minimising the NLL plus ``l2 * w**2`` (a number, or one per column)
        over the ``free`` columns (default all); the others keep ``start`` (default 0; a shorter ``start``
        is padded with 0, for a design that grew columns)."""
        from scipy.optimize import minimize

        k = self.X.shape[1]
        w0 = np.zeros(k)
        if start is not None:
            w0[:len(start)] = start[:k]
        free = np.ones(k, dtype=bool) if free is None else np.asarray(free, dtype=bool)
        scalar = np.ndim(l2) == 0
        l2_free = l2 if scalar else np.asarray(l2, dtype=np.float64)[free]

        def fg(x: np.ndarray) -> tuple[float, np.ndarray]:
            w = w0.copy()
            w[free] = x
            loss, grad = self.loss_grad(w)
            penalty = l2_free * float(x @ x) if scalar else float(l2_free @ (x * x))
            return loss + penalty, grad[free] + 2 * l2_free * x

        res = minimize(fg, w0[free], jac=True, method="L-BFGS-B", options={"maxiter": maxiter})
        w = w0.copy()
        w[free] = res.x
        return w

    def top1(self, w: np.ndarray) -> float:
        """The share of decisions whose highest-scored move is a good one."""
        z = self.X @ w
        good = set(self.good_rows.tolist())
        spans = zip(self.starts[:-1], self.starts[1:], strict=True)
        hits = [a + int(np.argmax(z[a:b])) in good for a, b in spans]
        return float(np.mean(hits))

    def weights(self, w: np.ndarray, min_abs: float = 1e-4) -> dict[str, float]:
        """Name -> weight, leaving out the weights under ``min_abs`` (they weigh as an unseen name: 0)."""
        return {n: float(v) for n, v in zip(self.names, w, strict=True) if abs(v) >= min_abs}


@dataclass(frozen=True)
class Selection:
    """What :func:`select_l2` chose: the L2, its weights (fitted on train) and every L2's dev NLL."""

    l2: float
    w: np.ndarray
    dev_nll: Mapping[float, float]


def select_l2(train: Design, dev: Design, grid: Iterable[float], **fit_options: object) -> Selection:
    """Fit ``train`` at each L2 of ``grid`` and keep the one whose weights give ``dev`` (a design over
    ``train``'s columns: ``Design(..., vocab=train.vocab, growing=False)``) the lowest NLL per decision;
    ties go to the earlier L2. ``fit_options`` go to :meth:`Design.fit`."""
    if dev.vocab != train.vocab:
        raise ValueError("select_l2: dev must use train's columns: build it as "
                         "Design(..., vocab=train.vocab, growing=False)")
    best: tuple[float, float, np.ndarray] | None = None
    scores: dict[float, float] = {}
    for l2 in grid:
        w = train.fit(l2, **fit_options)  # type: ignore[arg-type]
        scores[l2] = dev.nll(w) / max(1, dev.n)
        if best is None or scores[l2] < best[1]:
            best = (l2, scores[l2], w)
    if best is None:
        raise ValueError("select_l2: the grid of L2 values is empty")
    return Selection(best[0], best[2], scores)


def fit_ridge(rows: Sequence[Sequence[str]], targets: Sequence[float], l2: float,
              unpenalised: Iterable[str] = ("*",)) -> dict[str, float]:
    """Ridge regression of ``targets`` (e.g. the moves left) on the tokens of each row (each weighs 1):
    token -> weight; the ``unpenalised`` tokens (the intercept ``*``) carry no penalty."""
    vocab = sorted({t for row in rows for t in row})
    index = {t: j for j, t in enumerate(vocab)}
    X = np.zeros((len(rows), len(vocab)))
    for i, row in enumerate(rows):
        X[i, [index[t] for t in row]] = 1.0
    penalty = l2 * np.eye(len(vocab))
    for t in unpenalised:
        if t in index:
            penalty[index[t], index[t]] = 0.0
    w = np.linalg.solve(X.T @ X + penalty, X.T @ np.asarray(targets, dtype=np.float64))
    return {t: float(v) for t, v in zip(vocab, w, strict=True)}


def vocabulary(groups: Iterable[tuple[Sequence[Features], object]], min_count: int = 1) -> dict[str, int]:
    """Columns (name -> index, names sorted) for the feature names met in at least ``min_count`` decisions
    of ``groups``: a name seen in fewer would get a weight from too little evidence."""
    counts: Counter[str] = Counter()
    for cands, _ in groups:
        counts.update({f if isinstance(f, str) else f[0] for features in cands for f in features})
    return {n: j for j, n in enumerate(sorted(n for n, k in counts.items() if k >= min_count))}


@dataclass(frozen=True)
class GroupFit:
    """What :func:`fit_groups` fitted: the two designs, the chosen L2 and its weights by name."""

    train: Design
    dev: Design
    selection: Selection
    weights: dict[str, float]


def fit_groups(train_groups: Sequence[tuple[Sequence[Features], int | Sequence[int]]],
               dev_groups: Sequence[tuple[Sequence[Features], int | Sequence[int]]], grid: Iterable[float], *,
               min_count: int = 1, **fit_options: object) -> GroupFit:
    """The recipe in one call: train's columns from :func:`vocabulary` (``min_count``), dev on the same
    columns, the L2 of ``grid`` with the lowest dev NLL (:func:`select_l2`) and its weights by name."""
    train = Design(train_groups, vocab=vocabulary(train_groups, min_count), growing=False)
    dev = Design(dev_groups, vocab=train.vocab, growing=False)
    selection = select_l2(train, dev, grid, **fit_options)
    return GroupFit(train, dev, selection, train.weights(selection.w))
