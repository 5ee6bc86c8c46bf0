"""ragtriage — Overview: the runs found, problems with any of them, the chosen run's headline metrics
with 95% CIs, and the main metrics across runs over time.

    streamlit run app.py                    # the embedded sample_runs/
    streamlit run app.py -- --runs DIR      # your own runs (or RAGTRIAGE_RUNS=DIR)
"""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from dashboard import data, tables
from dashboard.frame import complain, need_runs, setup, show_problems
from dashboard.render import plot_text, plot_texts
from dashboard.views import OverviewView

frame = setup("Overview", ":material/dashboard:")
need_runs(frame)  # with no run it shows the problems itself, and stops
show_problems(frame)

complain(OverviewView.seed({"run": lambda v: v in frame.result.runs}, run=frame.run_ids[-1]))

st.subheader("Runs")
st.dataframe(data.overview_table(frame.result), hide_index=True)

run_id = st.selectbox("Run", frame.run_ids, key="home_run", format_func=frame.label)
run = frame.result.runs[run_id]
OverviewView.from_state().publish()

table = data.summary(frame.fkey, run_id, None, frame.key)
left, right = st.columns([3, 2])
with left:
    st.subheader("Headline metrics")
    st.caption(
        f"{run.results.height} questions · test set {run.testset.version} · mean per question with a "
        "bootstrap 95% CI; a small slice (< 30) is marked"
    )
    st.dataframe(
        table.drop("slice"),
        hide_index=True,
        column_config={
            "mean": st.column_config.NumberColumn(format="%.3f"),
            "ci_low": st.column_config.NumberColumn("95% CI low", format="%.3f"),
            "ci_high": st.column_config.NumberColumn("95% CI high", format="%.3f"),
            "small": st.column_config.CheckboxColumn("small"),
        },
    )
with right:
    st.subheader("System")
    st.json(run.manifest.system, expanded=True)
    held = run.testset.n_heldout
    if held:
        st.caption(f"Means include {held} held-out question(s); per-question views hide them by default.")
    unlabeled = run.testset.n_unlabeled
    if unlabeled:
        st.caption(
            f"{unlabeled} answerable question(s) have no labeled chunk yet: their answers are scored, their "
            "retrieval is not (see n per metric)."
        )

st.subheader("Across runs")
metric_options = [m for m in table["metric"].to_list()]
chosen = st.multiselect("Metrics", metric_options, default=tables.headline(metric_options), key="home_trend")
if chosen:
    tr = data.trend_table(frame.fkey, tuple(chosen), frame.key)
    fig = go.Figure()
    for m in chosen:
        part = tr.filter(tr["metric"] == m)
        fig.add_trace(
            go.Scatter(
                x=part["created"].to_list(),
                y=part["mean"].to_list(),
                name=plot_text(m),
                mode="lines+markers",
                text=plot_texts(part["label"]),
                hovertemplate="%{text}<br>%{y:.3f}<extra>" + plot_text(m) + "</extra>",
                error_y={
                    "type": "data",
                    "symmetric": False,
                    "array": (part["ci_high"] - part["mean"]).to_list(),
                    "arrayminus": (part["mean"] - part["ci_low"]).to_list(),
                },
            )
        )
    fig.update_layout(
        height=380, margin={"t": 20, "b": 20}, yaxis_title="mean (95% CI)", xaxis_title="run created"
    )
    st.plotly_chart(fig, key="trend_chart")
