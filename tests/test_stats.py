"""The 95 % intervals every table prints (s1gym/stats.py), pinned to references (issue 57): SciPy's percentile
bootstrap within Monte-Carlo error, a reference written out here with the same random stream exactly, and the
cases with a closed form. Each test names the mistake it is there to catch."""

from __future__ import annotations

import numpy as np
import pytest

from s1gym import stats

scipy_stats = pytest.importorskip("scipy.stats", reason="scipy (the test extra) is not installed")

#: Fixed samples: win/lose scores piled at 0 and 1, a skewed continuous one, a small one.
SAMPLES = {
    "wins": np.array([1.0] * 18 + [0.0] * 12),
    "skewed": np.random.default_rng(7).exponential(size=60),
    "small": np.array([0.0, 0.25, 0.5, 1.0, 1.0]),
}


def reference(x: np.ndarray, confidence: float = 0.95, n: int = stats.N_RESAMPLES, seed: int = 0,
              statistic=np.mean) -> tuple[float, float]:
    """The percentile bootstrap written out plainly: ``n`` resamples of every observation from
    ``default_rng(seed)``, drawn in stats' chunks of 1,000, and the (1 - confidence) / 2 quantiles."""
    rng = np.random.default_rng(seed)
    values = []
    for start in range(0, n, 1000):
        idx = rng.integers(0, len(x), size=(min(start + 1000, n) - start, len(x)))
        values.extend(statistic(x[idx], axis=1))
    alpha = (1 - confidence) / 2
    return tuple(float(q) for q in np.quantile(values, [alpha, 1 - alpha]))


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_the_interval_is_the_percentile_bootstrap_of_the_mean_exactly(name):
    # catches: the median for the mean, alpha not halved, an observation dropped from each resample,
    # fewer resamples than the default, the seed ignored
    x = SAMPLES[name]
    assert stats.bootstrap_ci(x.tolist()) == pytest.approx(reference(x), abs=0, rel=1e-12)
    assert stats.bootstrap_ci(x.tolist(), confidence=0.9, seed=3) == pytest.approx(
        reference(x, confidence=0.9, seed=3), abs=0, rel=1e-12)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_the_interval_agrees_with_scipy_within_monte_carlo_error(name):
    x = SAMPLES[name]
    ours = stats.bootstrap_ci(x.tolist())
    theirs = scipy_stats.bootstrap((x,), np.mean, confidence_level=0.95, n_resamples=stats.N_RESAMPLES,
                                   method="percentile", random_state=np.random.default_rng(1)).confidence_interval
    # the quantile of 10,000 resamples moves by about sd(mean) * 0.02 between random streams
    tolerance = 0.06 * x.std() / np.sqrt(len(x)) * 4
    assert ours[0] == pytest.approx(theirs.low, abs=tolerance)
    assert ours[1] == pytest.approx(theirs.high, abs=tolerance)


def test_the_closed_form_cases():
    assert stats.bootstrap_ci([]) == (None, None)
    assert stats.bootstrap_ci([0.3]) == (0.3, 0.3)
    assert stats.bootstrap_ci([0.5] * 40) == (0.5, 0.5)  # a constant sample: every resample's mean is it
    # two values: the resampled mean of n draws from {0, 1} is Binomial(n, 1/2) / n; its quantiles are exact
    x = [0.0, 1.0] * 50
    lo, hi = stats.bootstrap_ci(x)
    exact = scipy_stats.binom(100, 0.5)
    assert (lo, hi) == pytest.approx((exact.ppf(0.025) / 100, exact.ppf(0.975) / 100), abs=0.011)


def test_the_interval_is_deterministic_and_follows_its_arguments():
    x = SAMPLES["skewed"].tolist()
    assert stats.bootstrap_ci(x) == stats.bootstrap_ci(x)  # catches: an unseeded RNG
    assert stats.bootstrap_ci(x, seed=1) != stats.bootstrap_ci(x)  # catches: the seed ignored
    wide, narrow = stats.bootstrap_ci(x, confidence=0.99), stats.bootstrap_ci(x, confidence=0.8)
    assert wide[0] < narrow[0] < narrow[1] < wide[1]  # catches: the confidence ignored
    assert stats.bootstrap_ci(x, n_resamples=2000) == pytest.approx(reference(np.array(x), n=2000), rel=1e-12)
    with pytest.raises(ValueError, match="confidence"):
        stats.bootstrap_ci(x, confidence=1.0)
    with pytest.raises(ValueError, match="confidence"):
        stats.bootstrap_interval(x, lambda r: r.mean(axis=1), confidence=0.0)


def test_a_general_statistic_is_bootstrapped_the_same_way():
    x = SAMPLES["skewed"]
    got = stats.bootstrap_interval(x, lambda r: np.median(r, axis=1), n_resamples=3000, seed=5)
    assert got == pytest.approx(reference(x, n=3000, seed=5, statistic=np.median), rel=1e-12)
    assert stats.mean([1.0, 2.0, 6.0]) == 3.0 and stats.median([1.0, 2.0, 6.0]) == 2.0
    assert stats.mean([]) is None and stats.median([]) is None


# Mutation testing (bench/mutation.py) found what the tests above let through; each test names the mutant it kills.


def test_scores_of_any_float_width_are_resampled_in_float64():
    # catches: np.asarray(values) without dtype=np.float64 (float32 scores would be averaged in float32)
    x = np.random.default_rng(11).random(50).astype(np.float32)
    assert stats.bootstrap_ci(x) == pytest.approx(reference(x.astype(np.float64)), abs=0, rel=1e-12)
    assert stats.bootstrap_ci(x) != reference(x)


def test_a_constant_sample_is_returned_as_is_whatever_its_float_rounding():
    # the mean of three 0.1s is 0.10000000000000002: a constant sample must skip the resampling altogether
    # catches: `and` for `or`, `x != x[0]`, np.all(None)
    assert np.mean([0.1] * 3) != 0.1
    assert stats.bootstrap_ci([0.1] * 3) == (0.1, 0.1)
    # catches: `x.size == 2` for `x.size == 1` (two different values are a real interval)
    assert stats.bootstrap_ci([0.0, 1.0]) == pytest.approx(reference(np.array([0.0, 1.0])), abs=0, rel=1e-12)
    assert stats.bootstrap_ci([0.0, 1.0]) == (0.0, 1.0)


@pytest.mark.parametrize("confidence", [0.0, 1.0, 1.5, -0.1])
def test_a_confidence_outside_0_1_is_refused_before_anything_else(confidence):
    # catches: `<=` for either `<`, `< 2` for `< 1`, in both functions, and in bootstrap_ci also on the
    # early returns (no values, one value) that never reach bootstrap_interval
    for values in ([], [0.3], [0.0, 1.0, 1.0]):
        with pytest.raises(ValueError, match=r"confidence must be in \(0, 1\)"):
            stats.bootstrap_ci(values, confidence=confidence)
    with pytest.raises(ValueError, match=r"confidence must be in \(0, 1\)"):
        stats.bootstrap_interval(np.array([0.0, 1.0]), lambda r: r.mean(axis=1), confidence=confidence)


def test_bootstrap_interval_defaults_to_seed_0_and_10k_resamples():
    # catches: another default seed (on a continuous sample: a small discrete one has the same quantiles
    # under many seeds)
    x = SAMPLES["skewed"]
    assert stats.bootstrap_interval(x, lambda r: r.mean(axis=1)) == pytest.approx(reference(x), abs=0, rel=1e-12)


def test_a_large_sample_is_resampled_in_small_chunks_with_the_same_interval(monkeypatch):
    x = np.random.default_rng(5).random(3_000)
    whole = stats.bootstrap_ci(x, n_resamples=400)
    monkeypatch.setattr(stats, "_CELLS", 3_000 * 7)  # 7 resamples a chunk, the last one short
    assert stats.bootstrap_ci(x, n_resamples=400) == whole
