"""Judge-corrected scores: a metric's mean corrected for the judge's error measured on a labeled
sample, with a confidence interval that stays valid — prediction-powered inference (Angelopoulos et
al., 2023; used by ARES, Saad-Falcon et al., 2024), written for a sample of claims drawn inside
answers.

The judge scores every answer; people label a sample of its items (claims, or whole answers). With
``f`` the judge's score and ``y`` people's, answer q's corrected value is

    z_q = f_q - sum over labeled items c of q: w_c * (f_c - y_c) / n_q

where ``n_q`` is the number of claims of q (1 for an answer item) and ``w_c`` the inverse of the
item's chance of being labeled (the session's sampling weight, rescaled to the items that have a
reference label). Each z_q has expectation y_q, the answer's score by people, so the mean of z is an
unbiased estimate of the metric as people would score it, and its CI is the usual one for a mean
over answers: it carries both the spread of questions and the noise of the labeled sample, and it
resamples whole answers, never claims. Where the judge is right, z_q = f_q and the interval is
the judge's own; each disagreement widens it by what it can move.

A claim's score is 1 for SUPPORTED (its quote checked, as faithfulness counts it) and 0 otherwise; an
answer's is :data:`~evalcore.schema.CORRECTNESS_SCORE` of its verdict.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from evalcore.calibration.agreement import UNSURE, reference_label
from evalcore.calibration.sessions import candidates
from evalcore.runs.load import Run
from evalcore.schema import CORRECTNESS_SCORE
from evalcore.store.labels import ItemRow, LabelRow, SessionRow
from evalcore.words import count

METRIC = {"claims": "faithfulness", "answers": "correctness"}
Z95 = 1.959963984540054


@dataclass(frozen=True)
class Corrected:
    metric: str
    judge: float  # the judge's own mean over the same answers
    value: float  # corrected for the judge's measured error
    low: float
    high: float
    labels: int  # labeled items that went into the correction
    answers: int  # answers the mean is over

    def __str__(self) -> str:
        return (
            f"{self.metric} {self.judge:.2f} by the judge; {self.value:.2f} [{self.low:.2f}, {self.high:.2f}] "
            f"corrected with {count(self.labels, 'human label')}"
        )


def _score(target: str, label: str) -> float:
    if target == "claims":
        return 1.0 if label == "SUPPORTED" else 0.0
    return float(CORRECTNESS_SCORE[label])


def corrected_mean(
    judge_scores: dict[str, list[float]],
    labeled: list[tuple[str, float, float, float]],
) -> tuple[float, float, float, float]:
    """The core: ``judge_scores`` qid -> the judge's score of each item of that answer;
    ``labeled`` (qid, judge score, people's score, weight) per labeled item. Returns the judge's
    mean over answers, the corrected mean and its 95% CI.

    >>> judge = {"a": [1.0, 1.0], "b": [1.0], "c": [0.0]}
    >>> [round(x, 3) for x in corrected_mean(judge, [("a", 1.0, 0.0, 2.0)])]
    [0.667, 0.333, -0.32, 0.987]"""
    answers = sorted(judge_scores)
    if not answers:
        nan = float("nan")
        return nan, nan, nan, nan
    f = {q: sum(v) / len(v) for q, v in judge_scores.items()}
    rect = dict.fromkeys(answers, 0.0)
    for qid, fc, yc, w in labeled:
        rect[qid] += w * (fc - yc) / len(judge_scores[qid])
    z = [f[q] - rect[q] for q in answers]
    n = len(z)
    judge_mean = sum(f.values()) / n
    mean = sum(z) / n
    if n < 2:
        return judge_mean, mean, float("nan"), float("nan")
    sd = math.sqrt(sum((x - mean) ** 2 for x in z) / (n - 1))
    half = Z95 * sd / math.sqrt(n)
    return judge_mean, mean, mean - half, mean + half


def corrected(
    seen: Run, session: SessionRow, items: list[ItemRow], labels: list[LabelRow]
) -> Corrected | None:
    """``session``'s metric on ``seen`` (the run as the session's judge saw it), corrected with the
    session's labels; None while no item has a reference label."""
    if seen.run_id != session.run_id or seen.results_sha256() != session.results_sha256:
        msg = (
            f"session {session.name} labeled run {session.run_id} as its results file was then; "
            f"{seen.run_id}'s results file is not that one, so its labels cannot correct it"
        )
        raise ValueError(msg)
    return correct(session.target, candidates(seen, session.target), items, labels)


def correct(
    target: str, cands: list[dict[str, Any]], items: list[ItemRow], labels: list[LabelRow]
) -> Corrected | None:
    """:func:`corrected` on a session's candidates (:func:`~.sessions.candidates`), its sampled
    items and their labels."""
    judge_scores: dict[str, list[float]] = {}
    for c in cands:
        judge_scores.setdefault(c["qid"], []).append(_score(target, c["judge_label"]))
    people: dict[int, list[str]] = {}
    for lb in labels:
        people.setdefault(lb.item_id, []).append(lb.label)
    ref = {i.id: reference_label(people.get(i.id, [])) for i in items}
    # The weight an item carries is its stratum's size over the items of it that have a reference
    # label (a session part-labeled, or with unsure labels, is a smaller sample of the same stratum).
    drawn: dict[str, int] = {}
    done: dict[str, int] = {}
    size: dict[str, float] = {}
    for i in items:
        drawn[i.stratum] = drawn.get(i.stratum, 0) + 1
        size[i.stratum] = i.weight  # the stratum's size / the items drawn from it
        if ref[i.id] not in (None, UNSURE):
            done[i.stratum] = done.get(i.stratum, 0) + 1
    labeled = []
    for i in items:
        r = ref[i.id]
        if r is None or r == UNSURE or i.qid not in judge_scores or i.judge_label is None:
            continue
        weight = size[i.stratum] * drawn[i.stratum] / done[i.stratum]
        labeled.append((i.qid, _score(target, i.judge_label), _score(target, r), weight))
    if not labeled:
        return None
    judge_mean, value, low, high = corrected_mean(judge_scores, labeled)
    return Corrected(
        metric=METRIC[target],
        judge=judge_mean,
        value=value,
        low=max(0.0, low),
        high=min(1.0, high),
        labels=len(labeled),
        answers=len(judge_scores),
    )
