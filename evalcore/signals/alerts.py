"""The rates to watch in production, and when to raise an alarm (the guide: "A sudden rise can
mean an index problem; a fall to zero can mean it has started guessing").

**No-answer rate.** Per period (a day by default), the share of questions the system declined.
Each period is compared with the *median* rate of the ``window`` periods before it (a median, so a
past incident does not become the new normal), and alerts when

- **rise**: the rate is at least ``min_lift`` (5 points) above that baseline *and* improbable under
  it: the exact binomial probability of as many declines or more is below ``tail`` (2e-4), against
  the baseline raised by one standard error (it is an estimate too). Simulated on quiet series of
  60-150 questions a day at rates from 5 % to 40 %: tests/signals/test_alerts.py;
- **fall to zero**: no question declined although the baseline makes that improbable
  (``(1 - p0) ** n < 0.001``).

**Low top score.** A question whose best retrieval score is in the lowest ``LOW_QUANTILE`` (5 %) of
the log's top scores retrieved nothing close to it; their daily count rises when documents go
missing from the index. (Retrieval scores have no common scale across systems, so the threshold
comes from the log itself.)

**Keyword found nothing.** ``keyword_hits == 0``: no document shares a word with the question —
often a product name, an error code or a typo the index does not know.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

import polars as pl
from scipy.stats import binom

from evalcore.signals.logs import BEHAVIOURS

WINDOW = 7
TAIL = 2e-4  # exact binomial tail probability of a rise this large under the baseline
MIN_LIFT = 0.05
ZERO_P = 0.001
MIN_BASELINE = 3  # periods needed before one is judged


@dataclass(frozen=True)
class Alert:
    kind: str  # "rise" or "zero"
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
        return (
            f"{self.start}: no question of {self.questions} was declined (usually {self.baseline:.0%}) — "
            "the system may have started guessing: check the prompt and the abstention rule"
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
    window: int = WINDOW,
    tail: float = TAIL,
    min_lift: float = MIN_LIFT,
    zero_p: float = ZERO_P,
) -> list[Alert]:
    """Alerts on a :func:`no_answer_series` (see the module's text for the rules)."""
    rates = series["rate"].to_list()
    ns = series["questions"].to_list()
    starts = series["start"].to_list()
    out: list[Alert] = []
    for i in range(len(rates)):
        past = rates[max(0, i - window) : i]
        if len(past) < MIN_BASELINE:
            continue
        p0 = statistics.median(past)
        n, p = ns[i], rates[i]
        n_base = sum(ns[max(0, i - window) : i])
        start = starts[i].isoformat() if hasattr(starts[i], "isoformat") else str(starts[i])
        start = start.removesuffix("T00:00:00+00:00").removesuffix("+00:00")
        # The baseline is an estimate too: test against it raised by one standard error.
        q = min(0.99, max(p0, 0.01) + math.sqrt(max(p0, 0.01) * (1 - max(p0, 0.01)) / n_base))
        k = round(p * n)
        if p - p0 >= min_lift and float(binom.sf(k - 1, n, q)) < tail:
            out.append(Alert("rise", start, p, p0, n))
        elif p == 0 and p0 > 0 and (1 - p0) ** n < zero_p:
            out.append(Alert("zero", start, p, p0, n))
    return out


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
