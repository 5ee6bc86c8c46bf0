"""The rates to watch in production, and when to raise an alarm (the guide: "A sudden rise can
mean an index problem; a fall to zero can mean it has started guessing").

**No-answer rate.** Per period (a day by default; 1h, 6h and 1w too), the share of questions the
system declined. Each period is compared with the pooled rate of the periods of the week before it
that raised no alert themselves (so an incident does not become the new normal, and short periods
with few questions do not make a noisy baseline); it needs 3 such periods holding 50+ questions.
It alerts when

- **rise**: the rate is at least ``min_lift`` (5 points) above that baseline *and* improbable under
  it: the exact binomial probability of as many declines or more is below ``tail`` (2e-4), against
  the baseline raised by one standard error (it is an estimate too). Simulated on quiet series of
  60-150 questions a day at rates from 5 % to 40 %: tests/signals/test_alerts.py;
- **fall towards zero** ("zero" when none at all): the rate is at most a quarter of the baseline,
  ``min_lift`` below it, and as few declines are that improbable (lower binomial tail below
  ``tail``, against the baseline lowered by one standard error).

**Low top score.** A question whose best retrieval score is in the lowest ``LOW_QUANTILE`` (5 %) of
the log's top scores retrieved nothing close to it; their daily count rises when documents go
missing from the index. (Retrieval scores have no common scale across systems, so the threshold
comes from the log itself.)

**Keyword found nothing.** ``keyword_hits == 0``: no document shares a word with the question —
often a product name, an error code or a typo the index does not know.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import timedelta

import polars as pl
from scipy.stats import binom

from evalcore.signals.logs import BEHAVIOURS
from evalcore.words import count

BASELINE = timedelta(days=7)  # the periods a period is compared with: those of the week before it
MIN_BASELINE = 3  # periods needed before one is judged
MIN_BASE_QUESTIONS = 50  # ... holding this many questions
FALL_TO = 0.25  # a fall alerts when the rate is at most this share of the baseline (towards zero)
TAIL = 2e-4  # exact binomial tail probability of a change this large under the baseline
MIN_LIFT = 0.05


@dataclass(frozen=True)
class Alert:
    kind: str  # "rise", "fall" (towards zero) or "zero"
    start: str  # the period, ISO date(-time)
    rate: float
    baseline: float
    questions: int

    def message(self) -> str:
        if self.kind == "rise":
            return (
                f"{self.start}: the no-answer rate rose to {self.rate:.0%} of {self.questions} questions "
                f"(usually {self.baseline:.0%}) — check the index and ingestion: documents may be missing"
            )
        what = (
            f"no question of {self.questions} was declined"
            if self.kind == "zero"
            else f"the no-answer rate fell to {self.rate:.0%} of {self.questions} questions"
        )
        return (
            f"{self.start}: {what} (usually {self.baseline:.0%}) — the system may have started guessing: "
            "check the prompt and the abstention rule"
        )


def no_answer_series(interactions: pl.DataFrame, every: str = "1d") -> pl.DataFrame:
    """``start, questions, no_answer, rate`` per period (polars duration string: 1d, 6h, 1w)."""
    return (
        interactions.sort("time")
        .group_by_dynamic("time", every=every, label="left")
        .agg(pl.len().alias("questions"), pl.col("abstained").sum().alias("no_answer"))
        .rename({"time": "start"})
        .with_columns((pl.col("no_answer") / pl.col("questions")).alias("rate"))
    )


def detect(
    series: pl.DataFrame,
    *,
    baseline: timedelta = BASELINE,
    tail: float = TAIL,
    min_lift: float = MIN_LIFT,
) -> list[Alert]:
    """Alerts on a :func:`no_answer_series` (see the module's text for the rules)."""
    rates = series["rate"].to_list()
    ns = series["questions"].to_list()
    ks = series["no_answer"].to_list()
    starts = series["start"].to_list()
    out: list[Alert] = []
    flagged: set[int] = set()
    for i in range(len(rates)):
        past = [j for j in range(i) if starts[j] >= starts[i] - baseline and j not in flagged]
        n_base = sum(ns[j] for j in past)
        if len(past) < MIN_BASELINE or n_base < MIN_BASE_QUESTIONS:
            continue
        p0 = sum(ks[j] for j in past) / n_base
        n, k, p = ns[i], ks[i], rates[i]
        start = starts[i].isoformat() if hasattr(starts[i], "isoformat") else str(starts[i])
        start = start.removesuffix("T00:00:00+00:00").removesuffix("+00:00")
        # The baseline is an estimate too: test against it moved by one standard error towards the rate.
        se = math.sqrt(max(p0, 0.01) * (1 - max(p0, 0.01)) / n_base)
        if p - p0 >= min_lift and float(binom.sf(k - 1, n, min(0.99, max(p0, 0.01) + se))) < tail:
            out.append(Alert("rise", start, p, p0, n))
            flagged.add(i)
        elif p0 - p >= min_lift and p <= p0 * FALL_TO and float(binom.cdf(k, n, max(0.0, p0 - se))) < tail:
            out.append(Alert("zero" if k == 0 else "fall", start, p, p0, n))
            flagged.add(i)
    return out


def history_note(series: pl.DataFrame, baseline: timedelta = BASELINE) -> str | None:
    """Why no period could be judged, when none could (too little history), else None."""
    if series.height <= MIN_BASELINE or int(series["questions"].sum()) < MIN_BASE_QUESTIONS:
        return (
            f"too little history to judge: {count(series.height, 'period')} and "
            f"{count(int(series['questions'].sum()), 'question')}; an alert needs {MIN_BASELINE} earlier periods with {MIN_BASE_QUESTIONS}+ questions "
            f"within {baseline.days} days"
        )
    return None


def low_top_scores(interactions: pl.DataFrame, quantile: float = 0.05) -> tuple[pl.DataFrame, float | None]:
    """Questions whose best retrieval score is at or below the log's ``quantile`` of top scores,
    lowest first, and that threshold (None: fewer than 20 scored questions)."""
    scores = interactions["top_score"].drop_nulls()
    if len(scores) < 20:
        return interactions.head(0), None
    fence = float(scores.quantile(quantile, interpolation="lower"))  # type: ignore[arg-type]
    return interactions.filter(pl.col("top_score") <= fence).sort("top_score"), fence


def keyword_found_nothing(interactions: pl.DataFrame) -> pl.DataFrame:
    return interactions.filter(pl.col("keyword_hits") == 0).sort("time")


def daily_counts(interactions: pl.DataFrame, every: str = "1d") -> pl.DataFrame:
    """Per period and signal (thumbs up and down, each behaviour, low-retrieval and keyword-empty
    questions): ``start, questions, signal, count, share`` (count / questions: weekends and quiet
    hours compare with busy ones) — the long form a chart draws one line per signal from."""
    _, fence = low_top_scores(interactions)
    low = (pl.col("top_score") <= fence) if fence is not None else pl.lit(False)
    wide = (
        interactions.sort("time")
        .group_by_dynamic("time", every=every, label="left")
        .agg(
            pl.len().alias("questions"),
            (pl.col("thumb") == "up").sum().alias("thumbs up"),
            (pl.col("thumb") == "down").sum().alias("thumbs down"),
            *[pl.col(b).fill_null(False).sum().alias(b.replace("_", " ")) for b in BEHAVIOURS],
            low.fill_null(False).sum().alias("low top score"),
            (pl.col("keyword_hits") == 0).fill_null(False).sum().alias("keyword found nothing"),
        )
        .rename({"time": "start"})
    )
    long = wide.unpivot(index=["start", "questions"], variable_name="signal", value_name="count")
    return long.with_columns((pl.col("count") / pl.col("questions")).alias("share"))


def review_sample(
    interactions: pl.DataFrame, n: int, seed: int = 0, *, answered_only: bool = True
) -> pl.DataFrame:
    """A uniform random sample of ``n`` logged answers for review (declined ones left out unless
    ``answered_only`` is False: there is nothing to check for faithfulness in "I don't know")."""
    pool = interactions.filter(~pl.col("abstained")) if answered_only else interactions
    return pool.sample(n=min(n, pool.height), seed=seed, shuffle=True)


def feedback_reasons(interactions: pl.DataFrame) -> pl.DataFrame:
    """Thumbs-down reasons users gave, most frequent first (``reason``, ``count``; a thumbs down
    without a reason counts as "(none given)")."""
    down = interactions.filter(pl.col("thumb") == "down")
    return (
        down.group_by(pl.col("reason").fill_null("(none given)"))
        .len(name="count")
        .sort(["count", "reason"], descending=[True, False])
    )
