"""Agreement: between people first, then between the judge and people.

* percent agreement, Cohen's κ (chance from each rater's own label rates) and Gwet's AC1 (chance from
  the pooled rates; stable when one label dominates, as SUPPORTED does) for two raters;
* Krippendorff's α (nominal) for any number of labelers with missing labels;
* the confusion matrix, and the judge's precision and recall on *unsupported* claims
  (NOT_SUPPORTED or CONTRADICTED — both count against faithfulness);
* 95% CIs by a bootstrap that resamples whole answers (a question's claims stay together: they
  share the answer, the chunks and the labeler's reading of them), never single claims.

``unsure`` labels take no part: an item a person was unsure about has no reference label.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

UNSURE = "unsure"
UNSUPPORTED = frozenset({"NOT_SUPPORTED", "CONTRADICTED"})


def _w(n: int, w: Sequence[float] | None) -> np.ndarray:
    return np.ones(n) if w is None else np.asarray(w, dtype=float)


def percent_agreement(a: Sequence[str], b: Sequence[str], w: Sequence[float] | None = None) -> float:
    """The share of items with the same label.

    >>> percent_agreement(["S", "N", "S", "S"], ["S", "S", "S", "S"])
    0.75
    """
    if not a:
        return float("nan")
    same = np.array([x == y for x, y in zip(a, b, strict=True)], dtype=bool)
    ww = _w(len(a), w)
    return float(min(1.0, ww[same].sum() / ww.sum()))  # the same sum, in another order, may round past 1


def _rates(
    a: Sequence[str], b: Sequence[str], cats: list[str], w: Sequence[float] | None = None
) -> tuple[float, np.ndarray, np.ndarray]:
    ww = _w(len(a), w)
    total = ww.sum()
    po = percent_agreement(a, b, w)
    pa = np.array([sum(x for lab, x in zip(a, ww, strict=True) if lab == c) / total for c in cats])
    pb = np.array([sum(x for lab, x in zip(b, ww, strict=True) if lab == c) / total for c in cats])
    return po, pa, pb


def cohen_kappa(a: Sequence[str], b: Sequence[str], w: Sequence[float] | None = None) -> float:
    """Cohen's κ: (po − pe) / (1 − pe), pe = Σ_k pa_k · pb_k. 1.0 when both agree perfectly on a
    single label (nothing to tell apart; reported as agreement, not as undefined).

    >>> round(cohen_kappa(["S", "S", "N", "N"], ["S", "N", "N", "N"]), 3)
    0.5"""
    if not a:
        return float("nan")
    cats = sorted(set(a) | set(b))
    po, pa, pb = _rates(a, b, cats, w)
    pe = float(pa @ pb)
    return 1.0 if pe >= 1.0 else (po - pe) / (1.0 - pe)


def gwet_ac1(
    a: Sequence[str],
    b: Sequence[str],
    categories: Sequence[str] | None = None,
    w: Sequence[float] | None = None,
) -> float:
    """Gwet's AC1: (po − pe) / (1 − pe), pe = Σ_k π_k (1 − π_k) / (K − 1), π_k the pooled rate of
    label k and K the number of labels of the scale (``categories``; else those seen, at least 2).

    >>> round(gwet_ac1(["S", "S", "N", "N"], ["S", "N", "N", "N"]), 3)
    0.529"""
    if not a:
        return float("nan")
    cats = sorted(set(categories) if categories else set(a) | set(b))
    k = max(2, len(cats))
    po, pa, pb = _rates(a, b, cats, w)
    pi = (pa + pb) / 2
    pe = float(np.sum(pi * (1 - pi)) / (k - 1))
    return (po - pe) / (1.0 - pe)


def krippendorff_alpha(units: Sequence[Sequence[str | None]]) -> float:
    """Krippendorff's α for nominal labels: one row per item, one value per labeler (None where
    that labeler gave none). Items with fewer than two labels take no part. 1 − D_o / D_e from the
    coincidence matrix.

    >>> round(krippendorff_alpha([["S", "S"], ["N", "N"], ["S", "N"], ["S", None]]), 3)
    0.444"""
    coinc: defaultdict[tuple[str, str], float] = defaultdict(float)
    for row in units:
        vals = [v for v in row if v is not None]
        m = len(vals)
        if m < 2:
            continue
        for i, x in enumerate(vals):
            for j, y in enumerate(vals):
                if i != j:
                    coinc[(x, y)] += 1.0 / (m - 1)
    n = sum(coinc.values())
    if n == 0:
        return float("nan")
    totals: defaultdict[str, float] = defaultdict(float)
    for (x, _), w in coinc.items():
        totals[x] += w
    d_o = sum(w for (x, y), w in coinc.items() if x != y) / n
    d_e = sum(totals[x] * totals[y] for x in totals for y in totals if x != y) / (n * (n - 1))
    return 1.0 if d_e == 0 else 1.0 - d_o / d_e


def confusion(judge: Sequence[str], human: Sequence[str], categories: Sequence[str]) -> list[list[int]]:
    """Rows: the people's label; columns: the judge's (in ``categories`` order)."""
    idx = {c: i for i, c in enumerate(categories)}
    m = [[0] * len(categories) for _ in categories]
    for j, h in zip(judge, human, strict=True):
        if j in idx and h in idx:
            m[idx[h]][idx[j]] += 1
    return m


def unsupported_precision_recall(
    judge: Sequence[str], human: Sequence[str], w: Sequence[float] | None = None
) -> tuple[float, float]:
    """The judge's precision and recall on unsupported claims (NOT_SUPPORTED or CONTRADICTED),
    people's labels as the truth; NaN where undefined (no such verdict / label)."""
    ww = _w(len(judge), w)
    jp = np.array([j in UNSUPPORTED for j in judge], dtype=float)
    hp = np.array([h in UNSUPPORTED for h in human], dtype=float)
    tp = float((jp * hp) @ ww)
    precision = tp / float(jp @ ww) if jp.any() else float("nan")
    recall = tp / float(hp @ ww) if hp.any() else float("nan")
    return precision, recall


@dataclass(frozen=True)
class Estimate:
    value: float
    low: float
    high: float
    n: int  # items it was computed on
    answers: int  # answers (the resampled clusters) they belong to

    def __str__(self) -> str:
        if np.isnan(self.value):
            return "–"
        return f"{self.value:.2f} [{self.low:.2f}, {self.high:.2f}]"


def bootstrap(
    stat: Callable[[list[int]], float],
    clusters: Sequence[str],
    *,
    resamples: int = 2000,
    seed: int = 0,
) -> Estimate:
    """``stat`` over item indices, with a 95% percentile CI from resampling whole clusters
    (answers) with replacement. ``clusters[i]`` is item i's answer (its qid)."""
    groups: dict[str, list[int]] = {}
    for i, c in enumerate(clusters):
        groups.setdefault(c, []).append(i)
    keys = list(groups)
    value = stat(list(range(len(clusters)))) if clusters else float("nan")
    if len(keys) < 2 or np.isnan(value):
        return Estimate(value, float("nan"), float("nan"), len(clusters), len(keys))
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(resamples):
        pick = rng.integers(0, len(keys), len(keys))
        idx = [i for g in pick for i in groups[keys[g]]]
        v = stat(idx)
        if not np.isnan(v):
            draws.append(v)
    if not draws:
        return Estimate(value, float("nan"), float("nan"), len(clusters), len(keys))
    low, high = np.percentile(draws, [2.5, 97.5])
    return Estimate(value, float(low), float(high), len(clusters), len(keys))


@dataclass
class Agreement:
    """Judge vs people (and people among themselves) on one session's items."""

    categories: list[str]
    items: int  # items with a reference label (and a judge verdict)
    percent: Estimate
    kappa: Estimate
    ac1: Estimate
    precision_unsupported: Estimate
    recall_unsupported: Estimate
    confusion: list[list[int]]
    human_alpha: Estimate | None  # None with fewer than two labelers on any item
    pair_kappa: dict[tuple[str, str], Estimate] = field(default_factory=dict)
    unsupported_labels: int = 0  # reference labels that are NOT_SUPPORTED or CONTRADICTED
    no_reference: int = 0  # items left out: unsure, a tie, or no label yet


def _pair_kappa(la: list[str], lb: list[str]) -> Callable[[list[int]], float]:
    return lambda idx: cohen_kappa([la[i] for i in idx], [lb[i] for i in idx]) if idx else float("nan")


def reference_label(labels: Sequence[str]) -> str | None:
    """People's label of an item: the majority of their sure labels; None on a tie or none.

    >>> reference_label(["SUPPORTED", "SUPPORTED", "NOT_SUPPORTED"]), reference_label(["SUPPORTED", "unsure"])
    ('SUPPORTED', 'SUPPORTED')
    >>> reference_label(["SUPPORTED", "NOT_SUPPORTED"]) is None
    True"""
    sure = Counter(x for x in labels if x != UNSURE)
    if not sure:
        return None
    (top, n), *rest = sure.most_common()
    return None if rest and rest[0][1] == n else top


def agreement(
    qids: Sequence[str],
    judge: Sequence[str | None],
    labels: Sequence[dict[str, str]],
    categories: Sequence[str],
    *,
    weights: Sequence[float] | None = None,
    resamples: int = 2000,
    seed: int = 0,
) -> Agreement:
    """Item i: its answer ``qids[i]``, the judge's verdict ``judge[i]`` (None: none to compare),
    people's labels ``labels[i]`` (labeler -> label) and its sampling weight ``weights[i]`` (the
    inverse of its chance of being drawn: an oversampled session's judge-vs-people figures are
    weighted back to the whole run)."""
    cats = list(categories)
    ref = [reference_label(list(lb.values())) for lb in labels]
    keep = [i for i, (r, j) in enumerate(zip(ref, judge, strict=True)) if r is not None and j is not None]
    q = [qids[i] for i in keep]
    jv = [str(judge[i]) for i in keep]
    hv = [str(ref[i]) for i in keep]
    wv = [1.0 if weights is None else float(weights[i]) for i in keep]

    def on(fn: Callable[[list[str], list[str], list[float]], float]) -> Callable[[list[int]], float]:
        return lambda idx: (
            fn([jv[i] for i in idx], [hv[i] for i in idx], [wv[i] for i in idx]) if idx else float("nan")
        )

    def est(fn: Callable[[list[str], list[str], list[float]], float]) -> Estimate:
        return bootstrap(on(fn), q, resamples=resamples, seed=seed)

    labelers = sorted({who for lb in labels for who in lb})
    alpha = None
    pairs: dict[tuple[str, str], Estimate] = {}
    multi = [i for i, lb in enumerate(labels) if len([v for v in lb.values() if v != UNSURE]) >= 2]
    if multi:
        rows = [[labels[i].get(w) if labels[i].get(w) != UNSURE else None for w in labelers] for i in multi]
        alpha = bootstrap(
            lambda idx: krippendorff_alpha([rows[i] for i in idx]),
            [qids[i] for i in multi],
            resamples=resamples,
            seed=seed,
        )
        for a, b in combinations(labelers, 2):
            both = [
                i
                for i in range(len(labels))
                if labels[i].get(a, UNSURE) != UNSURE and labels[i].get(b, UNSURE) != UNSURE
            ]
            if both:
                pairs[(a, b)] = bootstrap(
                    _pair_kappa([labels[i][a] for i in both], [labels[i][b] for i in both]),
                    [qids[i] for i in both],
                    resamples=resamples,
                    seed=seed,
                )
    return Agreement(
        categories=cats,
        items=len(keep),
        percent=est(percent_agreement),
        kappa=est(cohen_kappa),
        ac1=est(lambda a, b, w: gwet_ac1(a, b, cats, w)),
        precision_unsupported=est(lambda a, b, w: unsupported_precision_recall(a, b, w)[0]),
        recall_unsupported=est(lambda a, b, w: unsupported_precision_recall(a, b, w)[1]),
        confusion=confusion(jv, hv, cats),
        human_alpha=alpha,
        pair_kappa=pairs,
        unsupported_labels=sum(1 for h in hv if h in UNSUPPORTED),
        no_reference=len(labels) - len(keep),
    )
