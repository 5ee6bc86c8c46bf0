"""Breakdown: every metric per slice (question type, topic, source, split or any tag) for one run, or
the deltas between two runs with significance marks."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from dashboard import data, tables
from dashboard.frame import complain, judge_flag, need_runs, setup
from dashboard.render import count, heatmap, md_escape, plot_text, plot_texts
from dashboard.views import BreakdownView

# One chart at a time: each plotly chart costs the browser about half a second to draw, and the
# heatmap alone already carries mean, CI and n per cell.
CHARTS = {"heatmap": "Heatmap", "bars": "Bars with CIs"}

frame = setup("Breakdown", ":material/grid_view:")
need_runs(frame)
runs = frame.runs  # each read when first asked for: this page reads one run, or two
tags = frame.entries[frame.run_ids[-1]].testset.tag_names()
frame.keep("bd_run", frame.run_ids[-1])
frame.keep("bd_vs", None)

complain(
    BreakdownView.seed(
        {
            "run": frame.run_ok,
            "vs": frame.run_ok,
            "by": lambda v: v in tags,
            "chart": lambda v: v in CHARTS,
        },
        run=frame.run_ids[-1],
    ),
    frame,
)

c1, c2, c3 = st.columns(3)
run_id = c1.selectbox("Run", frame.run_ids, key="bd_run", format_func=frame.label)
vs = c2.selectbox(
    "Compare against (baseline)",
    [None, *[r for r in frame.run_ids if r != run_id]],
    key="bd_vs",
    format_func=lambda r: "— one run only —" if r is None else frame.label(r),
)
by = c3.selectbox("Slice by", tags, key="bd_by")
runs.load([run_id, vs] if vs else [run_id])  # together: two files parse side by side
run = runs[run_id]

if vs is None:
    table = data.summary(frame.fkey, run_id, by, frame.key)
else:
    problem = data.incomparable(runs[vs], run)
    if problem:
        st.error(problem[0].upper() + problem[1:] + ".")
        st.stop()
    table = data.comparison_by_slice(frame.fkey, vs, run_id, 5, by, frame.key)
# Metrics that apply to no question of the run (label metrics on an unlabeled import) are left out.
table, not_applicable = tables.present(table)
all_metrics = list(dict.fromkeys(table["metric"].to_list()))
if "bd_metrics" in st.session_state:
    # A link naming a metric this run does not have (renamed since, or another run's) says so.
    complain(
        [
            f"'metric={m}' in the link is not a metric of this run; it was ignored."
            for m in st.session_state["bd_metrics"]
            if m not in all_metrics and m in st.query_params.get_all("metric")
        ]
    )
    kept = [m for m in st.session_state["bd_metrics"] if m in all_metrics]
    # A link whose every metric is unknown opens on all of them, not on an empty picker.
    st.session_state["bd_metrics"] = kept or all_metrics
st.session_state.setdefault("bd_metrics", all_metrics)
metrics = st.multiselect("Metrics", all_metrics, key="bd_metrics")
if not_applicable:
    st.caption(
        "Not applicable to this run (no question of it has what they need), so not offered: "
        + md_escape(tables.why_not_applicable(not_applicable))
        + "."
    )
bars_shown = st.session_state.get("bd_chart") == "bars"
BreakdownView.from_state(
    metric=metrics if metrics != all_metrics else [],
    bar=st.session_state.get("bd_focus") if bars_shown else None,
).publish()
table = tables.only_metrics(table, metrics)
if table.height == 0:
    st.info("Pick at least one metric.")
    st.stop()
held = run.testset.n_heldout
if held:
    st.caption(f"Aggregates include {count(held, 'held-out question')}. Slice by `split` to see them apart.")

if vs is None:
    st.caption(
        f"**{md_escape(frame.label(run_id))}** — each slice's mean, darker is better; "
        f"† fewer than {tables.SMALL} questions.",
        help="Mean per question with a bootstrap 95% CI and n in each cell. Darker is better, by each "
        "metric's direction and against the best mean the slice allows ('max': P@k or judged@k where "
        "questions have fewer than k labeled chunks, R@k where they have more); grey: no better "
        "direction (no_answer); blank: the metric applies to no question of the slice. † marks a slice "
        f"of fewer than {tables.SMALL} questions: its mean is unreliable.",
    )

    def _keep_a_chart() -> None:  # clicking the selected segment would otherwise select nothing
        if st.session_state.get("bd_chart") is None:
            st.session_state["bd_chart"] = st.session_state.get("_bd_chart_last", "heatmap")

    chart = (
        st.segmented_control(
            "Chart", list(CHARTS), key="bd_chart", format_func=lambda c: CHARTS[c], on_change=_keep_a_chart
        )
        or "heatmap"
    )
    st.session_state["_bd_chart_last"] = chart
    judge_flag(frame, run_id)
    if chart == "heatmap":
        fig = heatmap(
            tables.mean_grid(
                table, metrics, data.ceilings(frame.fkey, run_id, by, tuple(metrics), frame.key)
            ),
            # White to a mid blue: dark cells would hide their black text.
            colorscale=[[0.0, "#fbfdff"], [1.0, "#6aa5e0"]],
            row_height=66,
            hover="%{y} · %{x}: %{text}<extra></extra>",
            colorbar={"title": "better →", "tickvals": [0, 1], "ticktext": ["worst", "best possible"]},
        )
        st.plotly_chart(fig, key="bd_heat")
    else:
        if st.session_state.get("bd_focus") not in metrics:
            st.session_state.pop("bd_focus", None)
        focus = st.selectbox("Metric", metrics, key="bd_focus")
        b = tables.bar_chart(table, focus)
        # graph_objects, not plotly.express: express pulls in pandas and its own import (~2 s on a cold start).
        bar = go.Figure(
            go.Bar(
                x=plot_texts(b.slices),
                y=b.heights,
                # Each bar's value above it: 0.000 is a bar of height 0 with its value, a slice
                # with no data says so, never a 0.
                text=b.labels,
                textposition="outside",
                cliponaxis=False,
                error_y={"type": "data", "symmetric": False, "array": b.err_plus, "arrayminus": b.err_minus},
                marker_color=b.colours,
                marker_pattern_shape=b.patterns,
                hovertemplate="%{x}: %{text}<extra></extra>",
            )
        )
        bar.update_layout(
            yaxis_title=plot_text(f"{focus} (95% CI)"),
            xaxis_title=plot_text(by),
            height=380,
            margin={"t": 30, "b": 10},
            yaxis_rangemode="tozero",
        )
        st.plotly_chart(bar, key="bd_bar")
        st.caption(
            f"Hatched: a slice of fewer than {tables.SMALL} questions (its mean is unreliable); grey: no data."
        )
    # A metric that does not apply to a slice (retrieval on unanswerable questions) has n = 0: it
    # shows as "–" in the chart and is left out of the table, where it would be a row of blanks.
    st.dataframe(
        tables.applicable(table),
        hide_index=True,
        column_config={
            c: st.column_config.NumberColumn(format="%.3f") for c in ("mean", "ci_low", "ci_high")
        },
    )
else:
    pair = data.comparison(frame.fkey, vs, run_id, 5, frame.key)
    judge_flag(frame, run_id)
    if pair.judge_change:
        st.warning(md_escape(pair.judge_change[0].upper() + pair.judge_change[1:]), icon=":material/gavel:")
    st.caption(
        f"**{md_escape(frame.label(run_id))}** vs **{md_escape(frame.label(vs))}** — each slice's change: "
        "blue better, red worse, ★ significant.",
        help=f"The mean paired change per slice on the {md_escape(pair.note)}; blue = better, red = worse "
        "by each metric's direction; ★ = significant after Holm correction across every cell "
        f"(p < {tables.SIGNIFICANT:g}); † = fewer than {tables.SMALL} questions; blank: the metric "
        "applies to no question of the slice.",
    )
    fig = heatmap(
        tables.delta_grid(table, metrics),
        colorscale=[[0.0, "#e8837c"], [0.5, "#f7f7f7"], [1.0, "#6aa5e0"]],
        row_height=48,
        hover="%{y} · %{x}<extra></extra>",
    )
    st.plotly_chart(fig, key="bd_delta_heat")
    st.dataframe(
        tables.delta_table(table),
        hide_index=True,
        column_config={
            **{
                c: st.column_config.NumberColumn(format="%.3f")
                for c in ("baseline", "candidate", "delta", "ci_low", "ci_high")
            },
            "p_holm": st.column_config.NumberColumn("p (Holm)", format="%.4f"),
            "sig": st.column_config.TextColumn("significant"),
        },
    )
