"""Statistics for per-question metric vectors: bootstrap CIs, paired randomization tests, Holm.

Every function is seeded, so the same inputs give the same interval and p-value on every machine.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

SMALL_SLICE = 30  # below this many questions a slice's mean is marked as unreliable

_CHUNK = 2_000_000  # resampled values held in memory at once


def bootstrap_ci(
    values: ArrayLike, *, resamples: int = 2000, alpha: float = 0.05, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of the mean. ``(nan, nan)`` for no values.

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
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    step = max(1, _CHUNK // n)
    for start in range(0, resamples, step):
        b = min(step, resamples - start)
        idx = rng.integers(0, n, size=(b, n))
        means[start : start + b] = x[idx].mean(axis=1)
    lo, hi = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return (float(lo), float(hi))


def paired_randomization_test(deltas: ArrayLike, *, permutations: int = 10_000, seed: int = 0) -> float:
    """Two-sided p-value that the mean paired difference is 0 (sign-flip randomization test).

    Under the null hypothesis each question's two scores are exchangeable, so each delta's sign is a
    coin flip. p = (1 + #{|mean of flipped| >= |observed mean|}) / (1 + permutations).
    Smucker, Allan & Carterette (2007) recommend it for IR evaluation.
    """
    d = np.asarray(deltas, dtype=float)
    d = d[~np.isnan(d)]
    n = d.size
    if n == 0 or np.all(d == 0):
        return 1.0
    rng = np.random.default_rng(seed)
    observed = abs(d.mean())
    hits = 0
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
