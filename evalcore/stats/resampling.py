"""Statistics for per-question metric vectors: bootstrap CIs, paired randomization tests, Holm.

Every function is seeded, so the same inputs give the same interval and p-value on every machine.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

SMALL_SLICE = 30  # below this many questions a slice's mean is marked as unreliable
# The significance level: a Holm-corrected p below it is significant — on the pages (★, "what
# changed"), in `evalcore compare` and in the gate (whose policy file may set its own `alpha`).
ALPHA = 0.05

# Above these sizes the resampling distributions are normal to well within their own Monte Carlo
# error, and the closed forms are used (tests/test_stats.py checks the agreement at the switch):
BOOTSTRAP_EXACT_MAX = 5_000  # questions: beyond, mean ± z·sd/√n
RANDOMIZATION_EXACT_MAX = 2_000  # non-zero deltas: beyond, the normal approximation of the sign-flip test
Method = Literal["auto", "resample", "normal"]

_CHUNK = 2_000_000  # resampled values held in memory at once
_GROUPED_MAX = 256  # distinct values up to which resampling works on value counts (exact, O(k))


def bootstrap_ci(
    values: ArrayLike, *, resamples: int = 2000, alpha: float = 0.05, seed: int = 0, method: Method = "auto"
) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of the mean. ``(nan, nan)`` for no values.

    With more than ``BOOTSTRAP_EXACT_MAX`` values (``method="auto"``) the normal interval
    mean ± z·sd/√n is returned: the bootstrap distribution of a mean converges to it.

    >>> lo, hi = bootstrap_ci([0.0, 1.0] * 50)
    >>> 0.39 < lo < 0.5 < hi < 0.61
    True
    """
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    n = x.size
    if n == 0:
        return (float("nan"), float("nan"))
    if n == 1 or np.all(x == x[0]):
        return (float(x[0]), float(x[0]))
    if method == "normal" or (method == "auto" and n > BOOTSTRAP_EXACT_MAX):
        z = _z(1 - alpha / 2)
        half = z * float(x.std(ddof=1)) / math.sqrt(n)
        return (float(x.mean()) - half, float(x.mean()) + half)
    rng = np.random.default_rng(seed)
    values, counts = np.unique(x, return_counts=True)
    if values.size <= _GROUPED_MAX:
        # Resampling n values with replacement draws each distinct value a multinomial number of
        # times: the same distribution as resampling indices, at a cost that does not grow with n.
        draws = rng.multinomial(n, counts / n, size=resamples)
        means = draws @ values / n
        lo, hi = np.quantile(means, [alpha / 2, 1 - alpha / 2])
        return (float(lo), float(hi))
    means = np.empty(resamples)
    step = max(1, _CHUNK // n)
    for start in range(0, resamples, step):
        b = min(step, resamples - start)
        idx = rng.integers(0, n, size=(b, n))
        means[start : start + b] = x[idx].mean(axis=1)
    lo, hi = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return (float(lo), float(hi))


def paired_randomization_test(
    deltas: ArrayLike, *, permutations: int = 10_000, seed: int = 0, method: Method = "auto"
) -> float:
    """Two-sided p-value that the mean paired difference is 0 (sign-flip randomization test).

    Under the null hypothesis each question's two scores are exchangeable, so each delta's sign is a
    coin flip. p = (1 + #{|mean of flipped| >= |observed mean|}) / (1 + permutations).
    Smucker, Allan & Carterette (2007) recommend it for IR evaluation.

    With more than ``RANDOMIZATION_EXACT_MAX`` non-zero deltas (``method="auto"``), the flipped mean
    is a sum of many independent ±d_i/n terms, normal with variance Σd²/n² (Lindeberg's CLT), so
    p = erfc(|mean| / (√(Σd²)/n) / √2) — the value the Monte Carlo estimate converges to.
    """
    d = np.asarray(deltas, dtype=float)
    d = d[~np.isnan(d)]
    n = d.size
    if n == 0 or np.all(d == 0):
        return 1.0
    if method == "normal" or (method == "auto" and np.count_nonzero(d) > RANDOMIZATION_EXACT_MAX):
        z = abs(d.mean()) / (math.sqrt(float((d * d).sum())) / n)
        return float(math.erfc(z / math.sqrt(2)))
    # A zero delta flips to zero: only the non-zero ones move the statistic, and |mean| >= observed
    # is the same event as |sum| >= observed sum. Dropping zeros is exact and, on IR data where most
    # questions tie, much faster.
    d = d[d != 0]
    n = d.size
    rng = np.random.default_rng(seed)
    observed = abs(d.mean())
    hits = 0
    magnitudes, mult = np.unique(np.abs(d), return_counts=True)
    if magnitudes.size <= _GROUPED_MAX:
        # m deltas of size v flipped at random add v * (2 * Binomial(m, 1/2) - m): the same
        # distribution as flipping each one, at a cost that does not grow with n.
        pos = rng.binomial(mult, 0.5, size=(permutations, magnitudes.size))
        sums = np.abs((2 * pos - mult) @ magnitudes)
        tol_sum = 1e-12 * max(1.0, observed) * n
        hits = int(np.count_nonzero(sums >= observed * n - tol_sum))
        return (1 + hits) / (1 + permutations)
    step = max(1, _CHUNK // n)
    tol = 1e-12 * max(1.0, observed)
    for start in range(0, permutations, step):
        b = min(step, permutations - start)
        signs = rng.integers(0, 2, size=(b, n), dtype=np.int8) * 2 - 1
        perm = np.abs((signs * d).mean(axis=1))
        hits += int(np.count_nonzero(perm >= observed - tol))
    return (1 + hits) / (1 + permutations)


def holm(pvalues: ArrayLike) -> np.ndarray:
    """Holm–Bonferroni adjusted p-values (family-wise error control), in the input order.

    >>> holm([0.01, 0.04, 0.03]).round(3).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(pvalues, dtype=float)
    m = p.size
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    adj = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, (m - rank) * p[i])
        adj[i] = min(1.0, running)
    return adj


def _z(q: float) -> float:
    """The standard normal quantile (the standard library's; importing scipy.stats costs ~0.5 s)."""
    return NormalDist().inv_cdf(q)
