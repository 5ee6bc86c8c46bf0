"""Statistical power per slice: the smallest change a slice of the test set can detect, and how many
questions it needs to detect a change the user names.

Two runs are compared question by question (a paired test), so what matters is the spread of the
per-question *differences*. With two runs of the same test set that spread is measured. With one
run it is estimated from the run's own spread ``sd``: two systems' scores on the same questions
correlate (the same questions are hard for both); at a correlation of 0.5 the differences spread
as much as the scores, ``sd_d = sd * sqrt(2 * (1 - 0.5)) = sd`` — the assumption, said wherever a
figure comes from it.

The figures use the paired t-test at two-sided level ``alpha`` (default 0.05) and power (default
0.8): ``mde = (t[1 - alpha/2] + t[power]) * sd_d / sqrt(n)`` with ``n - 1`` degrees of freedom, and the
questions needed for a change ``delta`` solve the same equation for ``n``. Compare's randomization
test has about the t-test's power at these sizes; tests/testset/test_power.py checks the stated
power by simulation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import polars as pl
from scipy import stats as sps

from evalcore.runs.testset import TestSet

ALPHA = 0.05
POWER = 0.8
ASSUMED_CORRELATION = 0.5  # between two systems' per-question scores, when only one run is given
DEFAULT_METRICS = ("R@5", "faithfulness", "correctness")


@dataclass(frozen=True)
class SliceTarget:
    """How many questions a slice needs to detect a change of ``delta`` in ``metric``."""

    slice: str
    metric: str
    delta: float
    have: int
    need: int | None  # None: no spread to go by (fewer than 2 scored questions, or all alike)

    def sentence(self) -> str:
        where = "the whole test set" if self.slice == "all" else self.slice
        size = f"{abs(self.delta) * 100:g}-point {'drop' if self.delta < 0 else 'rise'}"
        if self.need is None:
            return (
                f"{where}: no spread of {self.metric} to go by (fewer than 2 scored questions, or every "
                "difference is zero: compare two runs that differ, or use one run's spread)"
            )
        verdict = "enough" if self.have >= self.need else f"you have {self.have}"
        return (
            f"to see a {size} in {self.metric} on {where} you need about {self.need} questions; {verdict}"
            + (f" ({self.have})" if self.have >= self.need else "")
        )


def _t_sum(n: int, alpha: float, power: float) -> float:
    df = max(n - 1, 1)
    return float(sps.t.ppf(1 - alpha / 2, df) + sps.t.ppf(power, df))


def mde(sd_d: float, n: int, *, alpha: float = ALPHA, power: float = POWER) -> float | None:
    """The smallest mean difference a paired t-test on ``n`` questions detects at ``power``.

    >>> round(mde(0.3, 100), 3)
    0.085
    """
    if n < 2 or not math.isfinite(sd_d):
        return None
    return _t_sum(n, alpha, power) * sd_d / math.sqrt(n)


def questions_needed(sd_d: float, delta: float, *, alpha: float = ALPHA, power: float = POWER) -> int | None:
    """Questions a paired t-test needs to detect a mean difference ``delta`` at ``power``.

    >>> questions_needed(0.3, 0.085)
    100
    """
    if delta == 0 or not math.isfinite(sd_d) or sd_d <= 0:
        return None  # no spread measured: no basis for a size
    z = sps.norm.ppf(1 - alpha / 2) + sps.norm.ppf(power)
    n = max(2, math.ceil((z * sd_d / abs(delta)) ** 2))
    for _ in range(20):  # the t quantiles depend on n: iterate to the fixed point
        nxt = max(2, math.ceil((_t_sum(n, alpha, power) * sd_d / abs(delta)) ** 2))
        if nxt == n:
            break
        n = nxt
    return n


def _within_range(value: float | None) -> float | None:
    """Metrics lie in [0, 1]: a detectable change above 1 means no change is detectable (null)."""
    return None if value is None or value > 1 else value


def _differences(
    scores: pl.DataFrame, other: pl.DataFrame | None, metrics: list[str]
) -> tuple[pl.DataFrame, str]:
    """Per-question differences (measured with two runs) or scores scaled to estimated differences."""
    if other is None:
        scale = math.sqrt(2 * (1 - ASSUMED_CORRELATION))
        return (
            scores.select("qid", *[(pl.col(m) * scale).alias(m) for m in metrics]),
            f"estimated from one run's spread (correlation {ASSUMED_CORRELATION} assumed between two systems)",
        )
    joined = scores.select("qid", *metrics).join(other.select("qid", *metrics), on="qid", suffix="__o")
    return (
        joined.select("qid", *[(pl.col(m) - pl.col(f"{m}__o")).alias(m) for m in metrics]),
        "measured from two runs' per-question differences",
    )


def power_table(
    ts: TestSet,
    scores: pl.DataFrame,
    *,
    by: str = "topic",
    other: pl.DataFrame | None = None,
    metrics: tuple[str, ...] = DEFAULT_METRICS,
    alpha: float = ALPHA,
    power: float = POWER,
) -> tuple[pl.DataFrame, str]:
    """Per slice value of ``by`` (and ``all``) and metric: scored questions ``n``, the spread of the
    differences ``sd_d`` and the minimum detectable change ``mde``. Returns the table and where
    ``sd_d`` came from. ``mde`` is null where fewer than 2 questions are scored or no change within
    the metric's 0-1 range is detectable. A slice whose questions all score alike borrows the whole set's spread
    (``sd_from = "all"``): zero spread in a sample is not zero spread in the population."""
    present = [m for m in metrics if m in scores.columns]
    diffs, how = _differences(scores, other, present)
    members = ts.tags.filter(pl.col("tag") == by).select("qid", pl.col("value").alias("slice"))
    everything = diffs.with_columns(pl.lit("all").alias("slice"))
    sliced = diffs.join(members, on="qid", how="inner")
    long = pl.concat([everything, sliced.select(everything.columns)]).unpivot(
        index=["qid", "slice"], on=present, variable_name="metric", value_name="d"
    )
    stats_ = (
        long.drop_nulls("d")
        .group_by("slice", "metric")
        .agg(pl.len().alias("n"), pl.col("d").std().alias("sd"))
    )
    pooled = dict(stats_.filter(pl.col("slice") == "all").select("metric", "sd").iter_rows())
    rows = []
    for row in stats_.iter_rows(named=True):
        sd = row["sd"]
        borrowed = sd is None or sd == 0
        sd_d = pooled.get(row["metric"]) if borrowed else sd
        rows.append(
            {
                "slice": row["slice"],
                "metric": row["metric"],
                "n": row["n"],
                "sd_d": sd_d,
                "sd_from": "all" if borrowed and row["slice"] != "all" else "slice",
                "mde": _within_range(mde(sd_d, row["n"], alpha=alpha, power=power) if sd_d else None),
            }
        )
    order = {m: i for i, m in enumerate(present)}
    table = pl.DataFrame(
        rows,
        schema={
            "slice": pl.String,
            "metric": pl.String,
            "n": pl.Int64,
            "sd_d": pl.Float64,
            "sd_from": pl.String,
            "mde": pl.Float64,
        },
    )
    table = (
        table.with_columns(
            (pl.col("slice") != "all").alias("_s"),
            pl.col("metric").replace_strict(order, default=99).alias("_m"),
        )
        .sort("_s", "slice", "_m")
        .drop("_s", "_m")
    )
    return table, how


def needed(
    table: pl.DataFrame,
    metric: str,
    delta: float,
    slice_: str = "all",
    *,
    alpha: float = ALPHA,
    power: float = POWER,
) -> SliceTarget:
    """How many questions ``slice_`` needs to detect a change of ``delta`` in ``metric`` (from a
    :func:`power_table`)."""
    row = table.filter((pl.col("slice") == slice_) & (pl.col("metric") == metric))
    if row.is_empty():
        return SliceTarget(slice_, metric, delta, 0, None)
    r = row.row(0, named=True)
    need = questions_needed(r["sd_d"], delta, alpha=alpha, power=power) if r["sd_d"] is not None else None
    return SliceTarget(slice_, metric, delta, r["n"], need)
