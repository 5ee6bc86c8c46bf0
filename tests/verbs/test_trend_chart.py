"""Overview's trend across runs: points with error bars for a few runs, a line in a CI band for
hundreds (what a reader of 200 runs can follow, and what Chromium draws in time), no HTML from run
files either way."""

from __future__ import annotations

import polars as pl

from evalcore.charts import BAND_FROM, trend_chart


def _series(runs: int) -> list[tuple[str, pl.DataFrame]]:
    ids = [f"run-{i:03d}" for i in range(runs)]
    part = pl.DataFrame(
        {
            "run_id": ids,
            "label": [f"<b>v{i}</b>" for i in range(runs)],
            "mean": [0.5 + i / 1000 for i in range(runs)],
            "ci_low": [0.4 + i / 1000 for i in range(runs)],
            "ci_high": [0.6 + i / 1000 for i in range(runs)],
        }
    )
    return [("R@5", part), ("ext:<i>x</i>", part)]


def test_a_few_runs_draw_points_with_their_error_bars() -> None:
    fig = trend_chart(_series(5), [f"run-{i:03d}" for i in range(5)])
    assert [t.name for t in fig.data] == ["R@5", "ext:&lt;i&gt;x&lt;/i&gt;"]
    line = fig.data[0]
    assert line.mode == "lines+markers"
    assert [round(a, 12) for a in line.error_y.array] == [0.1] * 5
    assert all("<b>" not in t for t in line.text)


def test_hundreds_of_runs_draw_each_metric_as_a_line_in_its_band() -> None:
    runs = BAND_FROM + 160
    ids = [f"run-{i:03d}" for i in range(runs)]
    fig = trend_chart(_series(runs), ids)
    bands = [t for t in fig.data if t.fill == "toself"]
    lines = [t for t in fig.data if t.fill != "toself"]
    assert len(bands) == len(lines) == 2
    assert all(t.mode == "lines" and t.error_y.array is None for t in lines)
    band = bands[0]
    # Around the band: the upper edge left to right, then the lower edge back.
    assert len(band.x) == 2 * runs and band.x[0] == ids[0] and band.x[-1] == ids[0]
    assert band.y[0] == 0.6 and abs(band.y[-1] - 0.4) < 1e-12 and band.hoverinfo == "skip"
    assert band.mode == "lines", "no marker at the band's corners"
    # The CI is still on each point's hover, and every run is on the axis in order.
    assert "95% CI" in lines[0].hovertemplate and len(lines[0].customdata) == runs
    assert list(fig.layout.xaxis.categoryarray) == ids


def test_a_run_without_the_metric_is_a_gap_in_its_line_and_band() -> None:
    runs = BAND_FROM + 10
    ids = [f"run-{i:03d}" for i in range(runs)]
    (name, whole), _ = _series(runs)
    missing = {"run-010", "run-011"}  # (judged metrics of two runs made without a judge)
    fig = trend_chart([(name, whole.filter(~pl.col("run_id").is_in(list(missing)))), ("P@5", whole)], ids)
    band, line = fig.data[0], fig.data[1]
    assert list(line.x) == ids, "every run charted by some metric is on the line's axis"
    assert [line.y[ids.index(r)] for r in sorted(missing)] == [None, None]
    assert list(band.y).count(None) == 1, "two stretches, two polygons"
    assert not any(r in missing for r in band.x if r is not None)
