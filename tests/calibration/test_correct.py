"""Judge-corrected scores (prediction-powered inference): a simulation shows the corrected interval
covers the true mean — the metric as people would score it — at its nominal rate, under the
sampling a session really uses (claims inside answers, rare verdicts oversampled), while the
judge's own figure is biased."""

from __future__ import annotations

import random

import pytest

from evalcore.calibration.correct import correct
from evalcore.calibration.sessions import SessionSpec, sample
from evalcore.store.labels import ItemRow, LabelRow

TRUE_SUPPORTED = 0.8  # the chance that a claim is supported, by people


def population(rng: random.Random, answers: int) -> tuple[list[dict], dict[tuple[str, int], str]]:
    """Answers of 1-5 claims; a lenient judge: it calls 40% of unsupported claims SUPPORTED."""
    cands, truth = [], {}
    for q in range(answers):
        for c in range(rng.randint(1, 5)):
            supported = rng.random() < TRUE_SUPPORTED
            judge = "SUPPORTED" if (supported and rng.random() < 0.97) or (not supported and rng.random() < 0.4) else "NOT_SUPPORTED"  # fmt: skip
            cands.append(
                {
                    "qid": f"q{q}",
                    "claim_idx": c,
                    "payload": {},
                    "judge_label": judge,
                    "low": judge != "SUPPORTED",
                }
            )
            truth[(f"q{q}", c)] = "SUPPORTED" if supported else "NOT_SUPPORTED"
    return cands, truth


@pytest.mark.parametrize("sampling", ["uniform", "low-scores"])
def test_the_corrected_interval_covers_the_true_mean_at_its_nominal_rate(sampling: str) -> None:
    rng = random.Random(7)
    reps, covered = 400, 0
    widths, judged, values = [], [], []
    for rep in range(reps):
        cands, truth = population(rng, 300)
        drawn = sample(cands, SessionSpec(name="sim", n=150, sampling=sampling, seed=rep))
        items = [
            ItemRow(k, 1, d["qid"], d["claim_idx"], d["stratum"], d["weight"], {}, d["judge_label"])
            for k, d in enumerate(drawn)
        ]
        labels = [LabelRow(it.id, "ann", 1, truth[(it.qid, it.claim_idx)], None, "", "page") for it in items]
        c = correct("claims", cands, items, labels)
        assert c is not None and c.labels == 150 and c.answers == 300
        covered += c.low <= TRUE_SUPPORTED <= c.high
        widths.append(c.high - c.low)
        judged.append(c.judge)
        values.append(c.value)
    rate = covered / reps
    # Nominal 95% (binomial sd at 400 reps: 1.1 points). Measured here: uniform 93-95%, low-scores
    # 91-93% — a little under when few judge errors fall in the heavily weighted stratum (docs).
    assert 0.90 <= rate <= 0.98, rate
    # the lenient judge's own figure is ~5 points high; the corrected one is unbiased
    assert sum(judged) / reps - TRUE_SUPPORTED > 0.04
    assert abs(sum(values) / reps - TRUE_SUPPORTED) < 0.01
    assert sum(widths) / reps < 0.2


def test_where_the_judge_is_always_right_the_correction_changes_nothing() -> None:
    rng = random.Random(1)
    cands, _ = population(rng, 100)
    drawn = sample(cands, SessionSpec(name="x", n=50, sampling="low-scores"))
    items = [ItemRow(k, 1, d["qid"], d["claim_idx"], d["stratum"], d["weight"], {}, d["judge_label"]) for k, d in enumerate(drawn)]  # fmt: skip
    agree = [LabelRow(it.id, "ann", 1, str(it.judge_label), None, "", "page") for it in items]
    c = correct("claims", cands, items, agree)
    assert c is not None and c.value == pytest.approx(c.judge)
    # unsure labels carry nothing; the rest of their stratum carries its weight
    unsure = [LabelRow(it.id, "ann", 1, "unsure", None, "", "page") for it in items]
    assert correct("claims", cands, items, unsure) is None
