"""Statistics: resampling and closed forms agree where the switch happens; known values."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from evalcore.stats import (
    BOOTSTRAP_EXACT_MAX,
    RANDOMIZATION_EXACT_MAX,
    bootstrap_ci,
    holm,
    paired_randomization_test,
)


@pytest.mark.parametrize("effect", [0.0, 0.01, 0.03])
def test_randomization_normal_form_agrees_with_monte_carlo_at_the_switch(effect: float) -> None:
    rng = np.random.default_rng(1)
    n = int(RANDOMIZATION_EXACT_MAX / 0.6) + 50  # about 60% of the deltas are non-zero
    d = rng.choice([-1.0, 0.0, 1.0], size=n, p=[0.3, 0.4, 0.3]) + effect
    exact = paired_randomization_test(d, permutations=20_000, method="resample")
    approx = paired_randomization_test(d, method="normal")
    # Where decisions are made (small p) they agree closely; elsewhere integer-valued deltas make the
    # sign-flip distribution a lattice, and the gap (a few hundredths at most) changes no decision.
    assert abs(exact - approx) < (0.005 if exact < 0.1 else 0.03), (exact, approx)
    assert paired_randomization_test(d) == approx, "auto uses the closed form above the threshold"


def test_bootstrap_normal_form_agrees_with_percentile_bootstrap_at_the_switch() -> None:
    rng = np.random.default_rng(2)
    x = rng.choice([0.0, 0.5, 1.0], size=BOOTSTRAP_EXACT_MAX + 1, p=[0.2, 0.3, 0.5])
    lo_b, hi_b = bootstrap_ci(x, resamples=4000, method="resample")
    lo_n, hi_n = bootstrap_ci(x, method="normal")
    assert abs(lo_b - lo_n) < 0.002 and abs(hi_b - hi_n) < 0.002
    assert bootstrap_ci(x) == (lo_n, hi_n)


def test_randomization_agrees_with_the_paired_t_test_on_ir_sized_data() -> None:
    # Smucker, Allan & Carterette (2007): randomization and t-test agree on IR data.
    rng = np.random.default_rng(3)
    d = rng.normal(0.02, 0.2, size=150)
    p_rand = paired_randomization_test(d, permutations=20_000)
    p_t = sps.ttest_1samp(d, 0.0).pvalue
    assert abs(p_rand - p_t) < 0.03


def test_known_values() -> None:
    assert holm([0.01, 0.04, 0.03]).tolist() == pytest.approx([0.03, 0.06, 0.06])
    assert paired_randomization_test([0.0] * 50) == 1.0
    assert bootstrap_ci([]) != bootstrap_ci([])  # (nan, nan)
    assert bootstrap_ci([0.7]) == (0.7, 0.7)


def _index_bootstrap(x: np.ndarray, resamples: int, seed: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, x.size, size=(resamples, x.size))].mean(axis=1)
    lo, hi = np.quantile(means, [0.025, 0.975])
    return float(lo), float(hi)


def _flip_test(d: np.ndarray, permutations: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    signs = rng.integers(0, 2, size=(permutations, d.size)) * 2 - 1
    return float(
        (1 + np.count_nonzero(np.abs((signs * d).mean(axis=1)) >= abs(d.mean()) - 1e-12)) / (1 + permutations)
    )


@pytest.mark.parametrize("seed", [0, 1])
def test_resampling_on_value_counts_matches_resampling_items(seed: int) -> None:
    """Few distinct values (the usual case: 0/1 metrics) take the count-based path; its intervals and
    p-values agree with item-by-item resampling within Monte Carlo error."""
    rng = np.random.default_rng(seed)
    x = rng.choice([0.0, 1 / 3, 0.5, 1.0], size=400, p=[0.3, 0.2, 0.1, 0.4])
    lo_a, hi_a = bootstrap_ci(x, resamples=20_000, method="resample")
    lo_b, hi_b = _index_bootstrap(x, 20_000, seed)
    assert abs(lo_a - lo_b) < 0.006 and abs(hi_a - hi_b) < 0.006
    d = rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0], size=300, p=[0.2, 0.1, 0.35, 0.15, 0.2])
    p_a = paired_randomization_test(d, permutations=20_000, method="resample")
    p_b = _flip_test(d[d != 0], 20_000, seed)
    assert abs(p_a - p_b) < 0.015, (p_a, p_b)


def test_bootstrap_of_many_distinct_values_resamples_the_items() -> None:
    """Above 256 distinct values the bootstrap resamples items (not value counts): its interval must
    still be the mean's, and move with the data."""
    import numpy as np

    from evalcore.stats.resampling import _GROUPED_MAX

    rng = np.random.default_rng(5)
    x = rng.normal(0.6, 0.2, size=1200)
    assert np.unique(x).size > _GROUPED_MAX
    lo, hi = bootstrap_ci(x, resamples=4000, seed=3)
    half = 1.96 * x.std(ddof=1) / np.sqrt(x.size)
    assert lo == pytest.approx(x.mean() - half, abs=0.15 * half)
    assert hi == pytest.approx(x.mean() + half, abs=0.15 * half)
    lo2, hi2 = bootstrap_ci(x + 1.0, resamples=4000, seed=3)
    assert lo2 == pytest.approx(lo + 1.0) and hi2 == pytest.approx(hi + 1.0)


def test_the_randomization_test_is_reproducible_by_default() -> None:
    """The same deltas give the same p in every run and on every machine: the default is 10,000
    sign flips from seed 0 (a report, a gate and a page agree to the last digit)."""
    from evalcore.stats import paired_randomization_test

    d = [0.5, -0.25, 0.25, 0.5, 0.0, 0.75, -0.5, 0.25, 0.5, 0.25, -0.25, 0.5]
    p = paired_randomization_test(d)
    assert p == paired_randomization_test(d, permutations=10_000, seed=0)
    assert p != paired_randomization_test(d, permutations=10_000, seed=1)
    assert p * 10_001 == round(p * 10_001), "a count of flips over 1 + 10,000"


def test_many_distinct_deltas_are_flipped_one_by_one() -> None:
    """Above 256 distinct magnitudes (a continuous metric: relevance, latency) each delta's sign is
    flipped on its own, in chunks of draws: the p-value is still a count over 1 + permutations, agrees
    with item-by-item flipping and the t-test, and a clear effect gets the smallest p there is."""
    from evalcore.stats.resampling import _GROUPED_MAX

    rng = np.random.default_rng(11)
    d = rng.normal(0.01, 0.3, size=1000)
    assert np.unique(np.abs(d)).size > _GROUPED_MAX
    p = paired_randomization_test(d, permutations=4_999, method="resample")  # not a multiple of a chunk
    assert p * 5_000 == pytest.approx(round(p * 5_000))
    assert abs(p - _flip_test(d, 20_000, 1)) < 0.03
    assert abs(p - sps.ttest_1samp(d, 0.0).pvalue) < 0.03
    assert paired_randomization_test(d + 0.2, permutations=4_999, method="resample") == 1 / 5_000


def test_the_closed_forms_are_the_written_formulas() -> None:
    """'normal' is the formula of the docstring (not a resampling that lands near it), and 'auto'
    switches to it above RANDOMIZATION_EXACT_MAX non-zero deltas; a mean of exactly 0 gives p = 1."""
    import math

    rng = np.random.default_rng(4)
    d = rng.normal(0.02, 0.3, size=500)
    z = abs(d.mean()) / (math.sqrt(float((d * d).sum())) / d.size)
    assert paired_randomization_test(d, method="normal") == pytest.approx(
        math.erfc(z / math.sqrt(2)), rel=1e-12
    )
    big = rng.normal(0.02, 0.3, size=RANDOMIZATION_EXACT_MAX + 1)
    zb = abs(big.mean()) / (math.sqrt(float((big * big).sum())) / big.size)
    assert paired_randomization_test(big) == pytest.approx(math.erfc(zb / math.sqrt(2)), rel=1e-12)
    x = rng.normal(0.0, 0.3, size=400)
    assert paired_randomization_test(np.concatenate([x, -x]), permutations=4_999, method="resample") == 1.0


def _reference_bootstrap(x: np.ndarray, resamples: int, alpha: float, seed: int) -> tuple[float, float]:
    """The percentile bootstrap as a textbook writes it: resample n indices with replacement, take
    the mean, read the two quantiles — one resample at a time."""
    rng = np.random.default_rng(seed)
    means = np.array([x[rng.integers(0, x.size, size=x.size)].mean() for _ in range(resamples)])
    lo, hi = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi)


@pytest.mark.parametrize("alpha", [0.05, 0.2])
def test_the_item_bootstrap_is_the_textbook_one_to_the_last_digit(alpha: float) -> None:
    """Third mutation run: the item path's start, step, index range and quantiles could all be
    changed without a test noticing (its only test allowed 15% of the width). Drawn in chunks, the
    random stream is the textbook's, so the interval is equal exactly; also at 256 distinct values,
    the largest the grouped path would take, and with the default seed."""
    from evalcore.stats.resampling import _GROUPED_MAX

    rng = np.random.default_rng(8)
    x = rng.normal(0.5, 0.3, size=400)
    assert bootstrap_ci(x, resamples=600, alpha=alpha, seed=4) == _reference_bootstrap(x, 600, alpha, 4)
    assert bootstrap_ci(x, resamples=600, alpha=alpha) == _reference_bootstrap(x, 600, alpha, 0), "seed 0"
    at_limit = np.repeat(np.arange(_GROUPED_MAX + 1) / 7.0, 2)  # 257 distinct: items resampled
    assert bootstrap_ci(at_limit, resamples=300, alpha=alpha, seed=2) == _reference_bootstrap(
        at_limit, 300, alpha, 2
    )


def test_the_grouped_bootstrap_is_used_up_to_256_distinct_values_and_defaults_to_seed_0() -> None:
    """Up to 256 distinct values the resample is drawn as value counts (multinomial): the same
    distribution, a different random stream — so at exactly 256 the interval is the multinomial one."""
    from evalcore.stats.resampling import _GROUPED_MAX

    x = np.repeat(np.arange(_GROUPED_MAX) / 10.0, 3)
    values, counts = np.unique(x, return_counts=True)
    rng = np.random.default_rng(0)
    means = rng.multinomial(x.size, counts / x.size, size=500) @ values / x.size
    lo, hi = np.quantile(means, [0.025, 0.975])
    assert bootstrap_ci(x, resamples=500) == (float(lo), float(hi))
    assert bootstrap_ci(x, resamples=500, seed=1) != (float(lo), float(hi))


def test_the_normal_interval_is_mean_plus_minus_z_sd_over_root_n() -> None:
    """The closed form above 5,000 questions, worked by hand: z of 1 - α/2, the sample sd (n - 1)."""
    rng = np.random.default_rng(9)
    x = rng.random(50)
    for alpha in (0.05, 0.1):
        half = sps.norm.ppf(1 - alpha / 2) * x.std(ddof=1) / np.sqrt(x.size)
        lo, hi = bootstrap_ci(x, alpha=alpha, method="normal")
        assert lo == pytest.approx(x.mean() - half, rel=1e-12) and hi == pytest.approx(
            x.mean() + half, rel=1e-12
        )
    at_max = rng.random(BOOTSTRAP_EXACT_MAX)
    assert bootstrap_ci(at_max, resamples=200) == bootstrap_ci(at_max, resamples=200, method="resample"), (
        "exactly 5,000 questions are still resampled"
    )


def test_two_different_values_have_an_interval_and_equal_values_have_none() -> None:
    assert bootstrap_ci([0.0, 1.0]) == (0.0, 1.0)
    lo, hi = bootstrap_ci([0.2, 0.4, 0.4])
    assert lo < hi
    assert bootstrap_ci([0.7, 0.7, 0.7]) == (0.7, 0.7) and bootstrap_ci([0.3]) == (0.3, 0.3)
    assert all(np.isnan(v) for v in bootstrap_ci([]))
