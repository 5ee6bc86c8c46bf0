"""The agreement statistics against independent implementations: scikit-learn's Cohen's κ, irrCAC's
Gwet's AC1 and the krippendorff package's α; and the bootstrap resampling whole answers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.calibration.agreement import (
    agreement,
    bootstrap,
    cohen_kappa,
    gwet_ac1,
    krippendorff_alpha,
    percent_agreement,
    reference_label,
    unsupported_precision_recall,
)

LABELS = ["SUPPORTED", "NOT_SUPPORTED", "CONTRADICTED"]
pairs = st.lists(st.tuples(st.sampled_from(LABELS), st.sampled_from(LABELS)), min_size=2, max_size=60)


@settings(max_examples=150, deadline=None)
@given(pairs)
def test_kappa_equals_scikit_learn(p: list[tuple[str, str]]) -> None:
    from sklearn.metrics import cohen_kappa_score

    a, b = [x for x, _ in p], [y for _, y in p]
    expected = cohen_kappa_score(a, b)
    if math.isnan(expected):  # scikit-learn: 0/0 when both raters used one label only
        assert len(set(a) | set(b)) == 1 and cohen_kappa(a, b) == 1.0
    else:
        assert cohen_kappa(a, b) == pytest.approx(expected, abs=1e-9)


S, N, C = "SUPPORTED", "NOT_SUPPORTED", "CONTRADICTED"
# Values computed by irrCAC 0.4.4 (CAC(...).gwet(), categories = the three labels) on this machine.
# irrCAC is not a test dependency: it requires coverage<7, which breaks numba's import.
IRRCAC_AC1 = [
    ([N, S, N, S, S], [S, S, N, S, S], 0.74684),
    ([N, N, S, S, S, C, N, S, C, S, S, C], [S, N, S, S, S, C, N, S, C, S, S, C], 0.88089),
    (
        [C, S, N, S, C, C, S, C, S, C, S, N, C, C, N, N, N, C, N, N, N, S, S, C, S, S, C, N, C, N],
        [C, S, S, S, C, S, N, C, C, C, N, N, C, C, S, N, N, S, N, C, N, C, S, N, S, S, C, S, N, N],
        0.40025,
    ),
]


@pytest.mark.parametrize(("a", "b", "expected"), IRRCAC_AC1)
def test_ac1_equals_irrcac(a: list[str], b: list[str], expected: float) -> None:
    assert gwet_ac1(a, b, LABELS) == pytest.approx(expected, abs=1e-5)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.lists(st.one_of(st.none(), st.sampled_from(LABELS)), min_size=3, max_size=3),
        min_size=2,
        max_size=40,
    )
)
def test_alpha_equals_the_krippendorff_package(units: list[list[str | None]]) -> None:
    import krippendorff

    codes = {lab: i for i, lab in enumerate(LABELS)}
    data = np.array([[np.nan if v is None else codes[v] for v in row] for row in units]).T
    pairable = sum(1 for row in units if sum(v is not None for v in row) >= 2)
    values = {v for row in units if sum(x is not None for x in row) >= 2 for v in row if v is not None}
    if pairable == 0 or len(values) < 2:
        return  # undefined (the package raises); ours says NaN or 1.0
    assert krippendorff_alpha(units) == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"), abs=1e-9
    )


def test_precision_recall_and_reference_labels() -> None:
    judge = ["SUPPORTED", "NOT_SUPPORTED", "NOT_SUPPORTED", "SUPPORTED", "CONTRADICTED"]
    human = ["SUPPORTED", "NOT_SUPPORTED", "SUPPORTED", "NOT_SUPPORTED", "NOT_SUPPORTED"]
    assert unsupported_precision_recall(judge, human) == (2 / 3, 2 / 3)
    assert percent_agreement(judge, human) == 0.4
    assert reference_label(["unsure", "unsure"]) is None


def test_the_bootstrap_resamples_whole_answers() -> None:
    """Claims of one answer agree or disagree together: resampling answers (10) gives a wider, honest
    interval than pretending the 100 claims were independent."""
    qids = [f"a{i // 10}" for i in range(100)]
    hit = [1.0 if i // 10 < 7 else 0.0 for i in range(100)]  # 7 answers fully agreed, 3 not at all

    def mean(idx: list[int]) -> float:
        return float(np.mean([hit[i] for i in idx]))

    by_answer = bootstrap(mean, qids, resamples=1000)
    by_claim = bootstrap(mean, [str(i) for i in range(100)], resamples=1000)
    assert by_answer.value == by_claim.value == 0.7 and by_answer.answers == 10
    assert (by_answer.high - by_answer.low) > 1.8 * (by_claim.high - by_claim.low)


def test_agreement_report() -> None:
    qids = ["q1", "q1", "q2", "q3", "q4", "q4"]
    judge = ["SUPPORTED", "SUPPORTED", "NOT_SUPPORTED", "SUPPORTED", "SUPPORTED", "NOT_SUPPORTED"]
    labels = [
        {"ann": "SUPPORTED", "bob": "SUPPORTED"},
        {"ann": "SUPPORTED", "bob": "NOT_SUPPORTED"},  # a tie: no reference label
        {"ann": "NOT_SUPPORTED", "bob": "NOT_SUPPORTED"},
        {"ann": "NOT_SUPPORTED"},
        {"ann": "SUPPORTED", "bob": "unsure"},
        {"ann": "NOT_SUPPORTED", "bob": "NOT_SUPPORTED"},
    ]
    rep = agreement(qids, judge, labels, LABELS, resamples=200)
    assert rep.items == 5 and rep.no_reference == 1
    assert rep.percent.value == pytest.approx(4 / 5)
    assert rep.recall_unsupported.value == pytest.approx(2 / 3) and rep.unsupported_labels == 3
    assert rep.confusion[1][0] == 1, "one claim people found NOT_SUPPORTED, the judge SUPPORTED"
    assert rep.human_alpha is not None and ("ann", "bob") in rep.pair_kappa


def test_sampling_weights_carry_an_oversampled_session_back_to_the_run() -> None:
    """Half the sample came from the 10% of claims the judge found unsupported (weight 1 each, say),
    half from the 90% it found supported (weight 9): the weighted agreement is the run's, not the
    sample's."""
    qids = [f"q{i}" for i in range(20)]
    judge = ["NOT_SUPPORTED"] * 10 + ["SUPPORTED"] * 10
    human = ["SUPPORTED"] * 5 + ["NOT_SUPPORTED"] * 5 + ["SUPPORTED"] * 10  # the judge errs on low ones
    labels = [{"ann": h} for h in human]
    weights = [1.0] * 10 + [9.0] * 10
    plain = agreement(qids, judge, labels, LABELS, resamples=50)
    weighted = agreement(qids, judge, labels, LABELS, weights=weights, resamples=50)
    assert plain.percent.value == pytest.approx(15 / 20)
    assert weighted.percent.value == pytest.approx((5 + 90) / 100)
    assert weighted.precision_unsupported.value == pytest.approx(0.5)


def test_skewed_labels_collapse_kappa_but_not_ac1() -> None:
    """The kappa paradox: judge and people agree on 90% of claims, nearly all SUPPORTED; kappa
    (scikit-learn's too) falls below zero while AC1 stays near the agreement people see."""
    from sklearn.metrics import cohen_kappa_score

    judge = ["SUPPORTED"] * 95 + ["NOT_SUPPORTED"] * 5
    human = ["SUPPORTED"] * 90 + ["NOT_SUPPORTED"] * 5 + ["SUPPORTED"] * 5
    assert percent_agreement(judge, human) == pytest.approx(0.90)
    kappa = cohen_kappa(judge, human)
    assert kappa == pytest.approx(cohen_kappa_score(judge, human)) and kappa < 0
    # AC1 by hand: chance agreement (1/(q-1)) * sum pi_k (1 - pi_k) over the 3 categories
    pe = (0.95 * 0.05 + 0.05 * 0.95 + 0.0) / 2
    assert (
        gwet_ac1(judge, human, LABELS) == pytest.approx((0.90 - pe) / (1 - pe))
        and gwet_ac1(judge, human, LABELS) > 0.85
    )


def test_alpha_at_its_edges_and_precision_recall_with_weights() -> None:
    """Mutation-run gaps: α is NaN with nothing to pair and 1 when every label is the same (no expected
    disagreement); unsupported precision and recall weigh each claim, and are NaN where undefined."""
    import math

    from evalcore.calibration.agreement import unsupported_precision_recall

    assert math.isnan(krippendorff_alpha([["S", None], [None, "N"]]))
    assert krippendorff_alpha([["S", "S"], ["S", "S", "S"]]) == 1.0
    judge = ["NOT_SUPPORTED", "NOT_SUPPORTED", "SUPPORTED", "CONTRADICTED"]
    human = ["NOT_SUPPORTED", "SUPPORTED", "NOT_SUPPORTED", "CONTRADICTED"]
    assert unsupported_precision_recall(judge, human) == (pytest.approx(2 / 3), pytest.approx(2 / 3))
    p, r = unsupported_precision_recall(judge, human, [1.0, 3.0, 1.0, 1.0])
    assert (p, r) == (pytest.approx(2 / 5), pytest.approx(2 / 3)), "the weight-3 claim is a false positive"
    p, r = unsupported_precision_recall(["SUPPORTED"], ["SUPPORTED"])
    assert math.isnan(p) and math.isnan(r)
