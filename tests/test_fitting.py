"""The shared fitting recipe (s1gym.models.fitting) on decisions whose best weights are known in closed
form."""

from __future__ import annotations

import math

import numpy as np
import pytest

from s1gym.models.fitting import Design, fit_ridge, select_l2


def coin(good_first: int, total: int) -> list:
    """``total`` decisions between a move with feature ``f`` and one without; the first is good ``good_first``
    times: the likelihood is best at w_f = log(good_first / (total - good_first))."""
    return [([["f"], []], 0 if d < good_first else 1) for d in range(total)]


def test_the_fit_finds_the_closed_form_logit_and_l2_shrinks_it():
    design = Design(coin(3, 4))
    assert design.names == ["f"] and design.n == 4 and design.X.shape == (8, 1)
    assert design.fit(0.0)[0] == pytest.approx(math.log(3), abs=1e-5)
    assert 0 < design.fit(1.0)[0] < math.log(3)
    assert design.top1(np.array([1.0])) == 0.75


def test_a_set_of_good_moves_counts_as_one_event_and_dense_values_scale_columns():
    # both moves good in the extra decisions: they say nothing, the optimum stays at log 3
    design = Design([*coin(3, 4), ([["f"], []], [0, 1]), ([["f"], []], [0, 1])])
    assert design.fit(0.0)[0] == pytest.approx(math.log(3), abs=1e-5)
    halved = Design([([[("f", 2.0)], []], g) for (_, g) in coin(3, 4)])
    assert halved.fit(0.0)[0] == pytest.approx(math.log(3) / 2, abs=1e-5)


def test_stages_keep_fixed_columns_and_columns_follow_another_design():
    first = Design(coin(3, 4))
    w = first.fit(0.0)
    second = Design([([["f", "g"], ["f"]], 0), ([["f"], ["f", "g"]], 0)], vocab=first.vocab)
    assert second.names == ["f", "g"]
    both = second.fit(0.0, start=w, free=np.array([False, True]))
    assert both[0] == w[0] and both[1] == pytest.approx(0.0, abs=1e-5)  # g is good once, bad once
    fixed = Design([([["f", "new"], []], 0)], vocab=first.vocab, growing=False)
    assert fixed.names == ["f"] and fixed.X.nnz == 1
    assert first.weights(np.array([5e-5])) == {} and first.weights(w) == {"f": pytest.approx(math.log(3), abs=1e-5)}


def test_subset_keeps_the_chosen_decisions_and_their_tags():
    design = Design([*coin(2, 2), *coin(0, 2)], tags=["a", "a", "b", "b"])
    part = design.subset(np.array([True, False, True, False]))
    assert part.n == 2 and part.tags.tolist() == ["a", "b"]
    assert part.good_rows.tolist() == [0, 3] and part.starts.tolist() == [0, 2, 4]


def test_select_l2_keeps_the_l2_with_the_lowest_dev_nll():
    train = Design(coin(1, 2) + coin(2, 2))  # 3 of 4: log 3 at no L2
    dev = Design(coin(1, 2), vocab=train.vocab, growing=False)  # an even coin: the more L2 the better
    chosen = select_l2(train, dev, (0.0, 0.5, 50.0))
    assert chosen.l2 == 50.0 and list(chosen.dev_nll) == [0.0, 0.5, 50.0]
    assert chosen.dev_nll[50.0] < chosen.dev_nll[0.5] < chosen.dev_nll[0.0]
    with pytest.raises(ValueError, match="dev must use train's columns"):
        select_l2(train, Design(coin(1, 2) + [([["other"], []], 0)]), (1.0,))


def test_fit_ridge_leaves_the_intercept_unpenalised():
    rows = [["*"], ["*"], ["*", "near"], ["*", "near"]]
    w = fit_ridge(rows, [10.0, 10.0, 4.0, 4.0], l2=0.0)
    assert w == pytest.approx({"*": 10.0, "near": -6.0})
    shrunk = fit_ridge(rows, [10.0, 10.0, 4.0, 4.0], l2=2.0)
    # (X'X + diag(0, 2)) w = X'y: [[4, 2], [2, 4]] w = [28, 8] -> w = (8, -2)
    assert shrunk == pytest.approx({"*": 8.0, "near": -2.0})


def test_a_roll_in_never_plays_a_wrong_answer_but_plays_other_departures():
    """``RollIns.move``: a learner's (or a random) move that is an answer move other than the expert's is
    replaced by the expert's (a wrong answer would end the game); a departure that is not an answer is played."""
    import random
    from dataclasses import dataclass

    from toy_tasks import GraphTask

    from s1gym.models.collect import RollIns

    @dataclass
    class Picks:  # a learner that always picks the candidate named ``text``
        text: str

        def decide(self, situation):
            return type("Decision", (), {"action": situation.texts.index(self.text)})()

    env = GraphTask({"start": [("focus on a", "lose"), ("focus on b", "win"), ("go x", "x")]}, answers=("focus on ",))
    env.reset(seed=0)
    always = RollIns(noise=1.0, noisy_moves=10, learner_share=1.0, learner_moves=10)
    rng = random.Random(0)
    assert always.move("dagger", env, "focus on b", rng, Picks("focus on a")) == "focus on b"
    assert always.move("dagger", env, "focus on b", rng, Picks("go x")) == "go x"
    assert {always.move("dart", env, "focus on b", rng) for _ in range(40)} == {"focus on b", "go x"}
    # even the answer that would win is not the learner's to play where the expert explores
    assert always.move("dagger", env, "go x", rng, Picks("focus on b")) == "go x"
