"""The forest plot the dashboard and reports lead with: verdicts, order, and no HTML from run files."""

from __future__ import annotations

import polars as pl

from evalcore.charts import forest


def _summary() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "metric": ["R@5", "ext:<a href='https://x'>click</a>", "faithfulness", "no_answer", "latency"],
            "n": [100, 100, 90, 100, 0],
            "delta": [0.01, -0.2, 0.1, 0.05, None],
            "ci_low": [-0.02, -0.3, 0.05, 0.01, None],
            "ci_high": [0.04, -0.1, 0.15, 0.09, None],
            "p_holm": [0.5, 0.001, 0.01, 0.02, None],
            "significant": [False, True, False, True, False],
            "verdict": ["no change", "worse", "not comparable", "moved", "no data"],
        }
    )


def test_one_trace_per_verdict_worst_first_and_no_data_left_out() -> None:
    fig = forest(_summary())
    names = [t.name for t in fig.data]
    assert names == [
        "worse (significant)",
        "moved (significant, no better direction)",
        "no significant change",
        "not comparable (judge changed)",
    ]
    order = list(fig.layout.yaxis.categoryarray)
    assert [label.split(" (n=")[0] for label in order][1:] == ["no_answer", "R@5", "faithfulness"]
    assert not any("latency" in label for label in order), "a metric with no data has no row"
    moved = fig.data[1]
    assert moved.error_x.array[0] == 0.09 - 0.05 and moved.error_x.arrayminus[0] == 0.05 - 0.01


def test_a_metric_name_from_a_run_file_is_shown_as_text() -> None:
    worse = forest(_summary()).data[0]
    assert worse.y[0] == "ext:&lt;a href='https://x'&gt;click&lt;/a&gt; (n=100)"
    assert "<a" not in worse.y[0]
