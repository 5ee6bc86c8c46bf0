"""No-answer alerts on synthetic series: a rise, a drop to zero, and normal noise that must not alert."""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
import pytest

from evalcore.signals.alerts import (
    daily_counts,
    detect,
    keyword_found_nothing,
    low_top_scores,
    no_answer_series,
)
from evalcore.signals.logs import read_log
from helpers import SAMPLE


def series(n: list[int], k: list[int]) -> pl.DataFrame:
    start = [dt.datetime(2026, 1, 1, tzinfo=dt.UTC) + dt.timedelta(days=i) for i in range(len(n))]
    return pl.DataFrame({"start": start, "questions": n, "no_answer": k}).with_columns(
        (pl.col("no_answer") / pl.col("questions")).alias("rate")
    )


def test_a_rise_alerts_on_its_day() -> None:
    rng = np.random.default_rng(3)
    n = [120] * 20
    k = list(rng.binomial(120, 0.1, size=20))
    k[14] = 40  # an index problem: a third declined
    alerts = detect(series(n, k))
    assert [(a.kind, a.start) for a in alerts] == [("rise", "2026-01-15")]
    assert "rose to 33%" in alerts[0].message() and "index" in alerts[0].message()


def test_a_fall_to_zero_alerts() -> None:
    rng = np.random.default_rng(4)
    k = list(rng.binomial(120, 0.12, size=15))
    k[12:] = [0, 0, 0]  # the system started guessing
    alerts = detect(series([120] * 15, k))
    assert [a.kind for a in alerts] == ["zero", "zero", "zero"]
    assert "guessing" in alerts[0].message()


def test_a_fall_to_near_zero_alerts() -> None:
    rng = np.random.default_rng(6)
    k = list(rng.binomial(130, 0.17, size=15))
    k[12:] = [1, 1, 2]  # one or two declines a day where about 22 were usual
    alerts = detect(series([130] * 15, k))
    assert [a.kind for a in alerts] == ["fall", "fall", "fall"]
    assert alerts[0].message().startswith("2026-01-13: the no-answer rate fell to 1% of 130 questions")


def test_too_little_history_says_so() -> None:
    from evalcore.signals.alerts import history_note

    short = series([40, 40], [5, 6])
    assert detect(short) == []
    assert "too little history to judge: 2 periods" in (history_note(short) or "")
    assert history_note(series([120] * 10, [12] * 10)) is None


def test_normal_noise_does_not_alert() -> None:
    rng = np.random.default_rng(5)
    alarms = periods = 0
    for p in (0.05, 0.2, 0.4):
        for _ in range(200):
            n = rng.integers(60, 150, size=60)
            alarms += len(detect(series(list(n), list(rng.binomial(n, p)))))
            periods += 60
    assert alarms / periods < 1 / 2000, (alarms, periods)


def test_the_planted_incident_in_the_sample_log() -> None:
    log = read_log(SAMPLE / "logs" / "production.jsonl")
    alerts = detect(no_answer_series(log.interactions))
    assert [(a.kind, a.start) for a in alerts] == [("rise", "2026-11-19")]
    low, threshold = low_top_scores(log.interactions)
    assert threshold is not None
    per_day = low.group_by(pl.col("time").dt.date().alias("d")).len().sort("len", descending=True)
    assert {str(d) for d in per_day["d"][:2]} == {"2026-11-19", "2026-11-20"}  # the missing documents
    assert keyword_found_nothing(log.interactions).height > 0
    counts = daily_counts(log.interactions)
    down = counts.filter(pl.col("signal") == "thumbs down").sort("count", descending=True)
    assert str(down["start"][0].date()) in {"2026-11-19", "2026-11-20"}


def test_a_recovery_after_an_incident_raises_no_fall() -> None:
    """Alerting periods stay out of the next periods' baseline: after five days at 45 % (an index
    problem, each an alert), the day back at the usual 10 % is compared with the quiet days before
    the incident, not with the incident, so it is no "fall"."""
    rng = np.random.default_rng(11)
    n = [150] * 16
    k = list(rng.binomial(150, 0.10, size=16))
    k[8:13] = [68, 66, 70, 67, 69]  # five alert days
    k[13] = 15  # recovered: the usual rate
    alerts = detect(series(n, k))
    assert [(a.kind, a.start) for a in alerts] == [("rise", f"2026-01-{d:02d}") for d in range(9, 14)]


def test_signal_counts_per_day_and_the_reasons_given_for_thumbs_down() -> None:
    """Hand-counted: day one has 3 questions (a thumbs up, a thumbs down with a reason, a rephrase and
    an empty keyword search), day two 1 question (a thumbs down with no reason)."""
    from evalcore.signals.alerts import feedback_reasons

    t = [dt.datetime(2026, 1, 1, h, tzinfo=dt.UTC) for h in (9, 10, 11)] + [
        dt.datetime(2026, 1, 2, 9, tzinfo=dt.UTC)
    ]
    frame = pl.DataFrame(
        {
            "time": t,
            "thumb": ["up", "down", None, "down"],
            "reason": [None, "wrong plan", None, None],
            "rephrased": [False, True, None, False],
            "opened_source": [False, False, False, True],
            "copied": [None, None, None, None],
            "asked_for_person": [False, False, False, False],
            "top_score": [0.9, 0.8, 0.7, 0.95],
            "keyword_hits": [3, 0, None, 2],
        },
        schema_overrides={"copied": pl.Boolean},
    )
    counts = daily_counts(frame)
    got = {
        (str(r["start"])[:10], r["signal"]): (r["count"], r["questions"])
        for r in counts.iter_rows(named=True)
    }
    assert got[("2026-01-01", "thumbs up")] == (1, 3) and got[("2026-01-01", "thumbs down")] == (1, 3)
    assert got[("2026-01-02", "thumbs down")] == (1, 1) and got[("2026-01-02", "opened source")] == (1, 1)
    assert got[("2026-01-01", "rephrased")] == (1, 3) and got[("2026-01-01", "keyword found nothing")] == (
        1,
        3,
    )
    assert got[("2026-01-01", "copied")] == (0, 3), "not logged counts 0, not null"
    share = counts.filter((pl.col("signal") == "thumbs up") & (pl.col("questions") == 3))["share"][0]
    assert share == pytest.approx(1 / 3)
    assert feedback_reasons(frame).rows() == [("(none given)", 1), ("wrong plan", 1)]


def test_the_baseline_is_the_week_before_not_all_history() -> None:
    """Mutation-run gap: three weeks at 40 % then a week at 10 %: a day at 30 % is a rise against the
    week before it (10 %), though it is below the whole history's mean."""
    n = [200] * 29
    k = [80] * 14 + [20] * 14 + [60]
    alerts = detect(series(n, k))
    assert [(a.kind, a.start) for a in alerts][-1] == ("rise", "2026-01-29")


def test_too_little_history_means_no_judgement_and_exactly_enough_is_judged() -> None:
    """Three earlier periods holding fewer than 50 questions judge nothing, however large the change;
    exactly 50 is enough."""
    assert detect(series([10, 10, 10, 10], [1, 1, 1, 10])) == []
    n = [20, 15, 15, 200]  # 50 questions before the fourth period
    k = [1, 1, 1, 120]
    assert [a.kind for a in detect(series(n, k))] == ["rise"]


def test_an_hourly_alert_names_its_hour() -> None:
    start = [dt.datetime(2026, 1, 1, tzinfo=dt.UTC) + dt.timedelta(hours=6 * i) for i in range(8)]
    frame = pl.DataFrame(
        {"start": start, "questions": [200] * 8, "no_answer": [20] * 7 + [120]}
    ).with_columns((pl.col("no_answer") / pl.col("questions")).alias("rate"))
    [alert] = detect(frame)
    assert alert.start == "2026-01-02T18:00:00"
