"""Charts shared by the dashboard and the reports it writes (plotly figures; no streamlit here).

Every text a chart shows that can come from a run file (a metric name of an imported score, a run
label) goes through :func:`plot_text`: plotly reads a subset of HTML in labels and hover text.
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go
import polars as pl

from evalcore.escape import plot_text, plot_texts

# One colour per verdict of a comparison (evalcore.comparison.VERDICTS), colour-blind safe (Okabe-Ito).
VERDICT_COLOURS = {
    "worse": "#D55E00",
    "better": "#009E73",
    "moved": "#0072B2",
    "no change": "#7F7F7F",
    "not comparable": "#BBBBBB",
}
LEGEND = {
    "worse": "worse (significant)",
    "better": "better (significant)",
    "moved": "moved (significant, no better direction)",
    "no change": "no significant change",
    "not comparable": "not comparable (judge changed)",
}
# One distinct colour per series of a chart of several metrics (the trend across runs): Okabe-Ito's
# eight, then Tol's muted set. The default palette gave R@5 and nDCG@10 two blues and faithfulness
# and correctness two reds, which a reader took for pairs.
SERIES_COLOURS = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#CC79A7",
    "#D55E00",
    "#56B4E9",
    "#000000",
    "#F0E442",
    "#332288",
    "#88CCEE",
    "#44AA99",
    "#117733",
    "#999933",
    "#882255",
)


def series_colour(i: int) -> str:
    """The colour of a chart's i-th series (repeating after the fourteenth)."""
    return SERIES_COLOURS[i % len(SERIES_COLOURS)]


_ORDER = {"worse": 0, "better": 1, "moved": 2, "no change": 3, "not comparable": 4}


def forest(summary: pl.DataFrame, *, height_per_metric: int = 34) -> go.Figure:
    """A forest plot of a comparison's summary (:attr:`evalcore.comparison.Comparison.summary`):
    one row per metric with its mean paired delta and 95% CI, coloured by the verdict (worse, better,
    moved, no change, not comparable), a filled marker where the change is significant after Holm,
    an open one where it is not; labelled with the metric and its n. Worse first, then better, moved,
    no change. Metrics with no data in both runs are left out."""
    rows = summary.filter(pl.col("delta").is_not_null() & (pl.col("verdict") != "no data"))
    rows = rows.with_columns(
        _rank=pl.col("verdict").replace_strict(_ORDER, default=9, return_dtype=pl.Int64)
    ).sort("_rank", "metric", descending=[False, False])
    labels = [f"{plot_text(m)} (n={n:,})" for m, n in zip(rows["metric"], rows["n"], strict=True)]
    fig = go.Figure()
    indexed = rows.with_row_index("_i")
    for verdict, colour in VERDICT_COLOURS.items():
        # 'worse', 'better' and 'moved' are significant after Holm by definition (decide()): filled;
        # 'no change' and 'not comparable' are not: open.
        part = indexed.filter(pl.col("verdict") == verdict)
        if not part.height:
            continue
        significant = verdict in ("worse", "better", "moved")
        fig.add_trace(
            go.Scatter(
                x=part["delta"].to_list(),
                y=[labels[i] for i in part["_i"]],
                mode="markers",
                name=LEGEND[verdict],
                marker={
                    "color": colour,
                    "size": 11,
                    "symbol": "circle" if significant else "circle-open",
                    "line": {"width": 2, "color": colour},
                },
                error_x={
                    "type": "data",
                    "symmetric": False,
                    "array": (part["ci_high"] - part["delta"]).to_list(),
                    "arrayminus": (part["delta"] - part["ci_low"]).to_list(),
                    "color": colour,
                    "thickness": 2,
                },
                customdata=list(
                    zip(
                        part["ci_low"].to_list(),
                        part["ci_high"].to_list(),
                        [_p(p) for p in part["p_holm"].to_list()],
                        strict=True,
                    )
                ),
                hovertemplate=(
                    "%{y}<br>Δ %{x:+.3f} [%{customdata[0]:+.3f}, %{customdata[1]:+.3f}]"
                    "<br>Holm p %{customdata[2]}<extra>" + verdict + "</extra>"
                ),
            )
        )
    fig.add_vline(x=0, line_width=1, line_color="#444")
    fig.update_layout(
        height=80 + height_per_metric * max(1, rows.height),
        margin={"t": 10, "b": 40, "l": 10, "r": 10},
        xaxis_title="paired change, candidate − baseline (95% CI)",
        yaxis={"autorange": "reversed", "categoryorder": "array", "categoryarray": labels},
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.0, "x": 0},
        showlegend=True,
    )
    return fig


def _p(p: float | None) -> str:
    return "–" if p is None else f"{p:.3g}"


# Above this many runs the trend draws each metric as a line in a 95% CI band: 200 runs of five
# metrics as markers with error bars are 2,000 SVG elements, and Chromium took 0.8 s of every view
# to draw them (benchmarks/bench_runs.py); a band is one path. Below it, points with bars read best.
BAND_FROM = 40


def trend_chart(
    series: list[tuple[str, pl.DataFrame]], run_ids: list[str], *, height: int = 380
) -> go.Figure:
    """Each metric's mean across runs (``series``: (metric, its rows with ``run_id``, ``label``,
    ``mean``, ``ci_low``, ``ci_high``) as :func:`dashboard.tables.trend_series` gives them), one point
    per run on a categorical axis in ``run_ids`` order: a line between dates would suggest a gradual
    change between runs that never happened."""
    fig = go.Figure()
    band = len(run_ids) > BAND_FROM
    if band:  # a run charted for some metric but not this one is a gap in its line and band
        present = {r for _, part in series for r in part["run_id"].to_list()}
        shown = pl.DataFrame({"run_id": [r for r in run_ids if r in present]}, schema={"run_id": pl.String})
        series = [(m, shown.join(part, on="run_id", how="left", maintain_order="left")) for m, part in series]
    for i, (m, part) in enumerate(series):
        colour, name = series_colour(i), plot_text(m)
        x = plot_texts(part["run_id"])
        if band:
            bx, by = _band(x, part["ci_low"].to_list(), part["ci_high"].to_list())
            fig.add_trace(  # the band: each stretch's upper edge, then its lower edge back
                go.Scatter(
                    x=bx,
                    y=by,
                    fill="toself",
                    mode="lines",  # (plotly's default draws a marker at each corner of a short band)
                    fillcolor=colour,
                    opacity=0.18,
                    line={"width": 0},
                    hoverinfo="skip",
                    showlegend=False,
                    legendgroup=name,
                    name=f"{name} 95% CI",
                )
            )
        fig.add_trace(
            go.Scatter(
                line={"color": colour},
                x=x,
                y=part["mean"].to_list(),
                name=name,
                legendgroup=name,
                mode="lines" if band else "lines+markers",
                text=[plot_text(t) if t is not None else "" for t in part["label"].to_list()],
                customdata=list(zip(part["ci_low"].to_list(), part["ci_high"].to_list(), strict=True)),
                hovertemplate="%{text}<br>%{y:.3f} (95% CI %{customdata[0]:.3f}–%{customdata[1]:.3f})<extra>"
                + name
                + "</extra>",
                error_y=None
                if band
                else {
                    "type": "data",
                    "symmetric": False,
                    "array": (part["ci_high"] - part["mean"]).to_list(),
                    "arrayminus": (part["mean"] - part["ci_low"]).to_list(),
                },
            )
        )
    fig.update_layout(
        height=height,
        margin={"t": 20, "b": 20},
        yaxis_title="mean (95% CI)",
        yaxis_rangemode="tozero",
        hovermode="closest",
        xaxis={
            "type": "category",
            "title": "run (oldest first)",
            "categoryorder": "array",
            "categoryarray": plot_texts(run_ids),
        },
    )
    return fig


def _band(x: list[str], low: list[float | None], high: list[float | None]) -> tuple[list[Any], list[Any]]:
    """The outline of a CI band as one polygon per stretch of runs with a value, separated by None
    (plotly closes each segment of a ``fill="toself"`` trace on its own)."""
    bx: list[Any] = []
    by: list[Any] = []
    stretch: list[int] = []
    for j in [*range(len(x)), None]:
        if j is not None and low[j] is not None and high[j] is not None:
            stretch.append(j)
            continue
        if stretch:
            if bx:
                bx.append(None)
                by.append(None)
            bx += [x[k] for k in stretch] + [x[k] for k in reversed(stretch)]
            by += [high[k] for k in stretch] + [low[k] for k in reversed(stretch)]
            stretch = []
    return bx, by
