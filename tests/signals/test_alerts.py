"""No-answer alerts on synthetic series: a rise, a drop to zero, and normal noise that must not alert."""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl

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
