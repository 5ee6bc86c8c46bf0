"""Power: the reported smallest detectable change is detected at about the stated power, and the
questions needed for a named change agree with it — checked by simulation."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy import stats

from evalcore import load_runs, score_run
from evalcore.testset.power import POWER, mde, needed, power_table, questions_needed
from helpers import SAMPLE


@pytest.mark.parametrize(("n", "sd"), [(30, 0.3), (80, 0.15), (200, 0.4)])
def test_a_change_of_the_reported_size_is_detected_at_the_stated_power(n: int, sd: float) -> None:
    rng = np.random.default_rng(n)
    delta = mde(sd, n)
    assert delta is not None
    sims = 4000
    d = rng.normal(delta, sd, size=(sims, n))  # paired differences with the reported mean shift
    p = stats.ttest_1samp(d, 0.0, axis=1).pvalue
    rate = float((p < 0.05).mean())
    assert abs(rate - POWER) < 0.03, rate
    # and with no change, the test rejects at about alpha (the figure is not bought with false alarms)
    p0 = stats.ttest_1samp(rng.normal(0.0, sd, size=(sims, n)), 0.0, axis=1).pvalue
    assert abs(float((p0 < 0.05).mean()) - 0.05) < 0.015


def test_questions_needed_inverts_the_detectable_change() -> None:
    for sd, n in [(0.2, 40), (0.35, 150), (0.1, 500)]:
        delta = mde(sd, n)
        assert delta is not None
        assert abs(questions_needed(sd, delta) - n) <= 1  # type: ignore[operator]
    assert questions_needed(0.0, 0.02) is None  # no spread measured: no basis for a size


def test_power_table_on_the_sample_runs() -> None:
    lr = load_runs(SAMPLE)
    run, prev = lr.runs["2026-11-16-rerank-prompt-v2"], lr.runs["2026-10-19-hybrid"]
    table, how = power_table(run.testset, score_run(run), by="topic")
    assert "one run" in how
    billing = table.filter((pl.col("slice") == "billing") & (pl.col("metric") == "R@5")).row(0, named=True)
    everything = table.filter((pl.col("slice") == "all") & (pl.col("metric") == "R@5")).row(0, named=True)
    assert billing["n"] == 25 and everything["n"] == 124
    assert billing["mde"] > everything["mde"]  # a slice detects less than the whole set
    # a slice with one scored question has no spread: no figure rather than a wrong one
    assert (
        table.filter(pl.col("slice") == "auth")["mde"].null_count()
        == table.filter(pl.col("slice") == "auth").height
    )
    target = needed(table, "R@5", -0.02, "billing")
    assert target.have == 25 and target.need is not None and target.need > 25
    assert target.sentence().startswith("to see a 2-point drop in R@5 on billing you need about ")
    assert target.sentence().endswith("you have 25")
    measured, how2 = power_table(run.testset, score_run(run), by="topic", other=score_run(prev))
    assert "two runs" in how2
    assert measured.filter(pl.col("slice") == "all").height == 3


def test_no_size_without_a_spread_or_a_change_and_no_detectable_change_from_one_question() -> None:
    """Mutation-run gaps: a zero change, an unmeasured spread or a single question give no number
    (None), never a division by zero or a figure from one degree of freedom."""
    from evalcore.testset.power import mde, questions_needed

    assert questions_needed(0.3, 0.0) is None
    assert questions_needed(float("nan"), 0.1) is None and questions_needed(0.0, 0.1) is None
    assert mde(0.3, 1) is None and mde(float("inf"), 50) is None
    assert questions_needed(0.3, -0.085) == questions_needed(0.3, 0.085) == 100, (
        "a fall needs as many as a rise"
    )
