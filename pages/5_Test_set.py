"""Test set: is it good enough to trust a change? Coverage and its gaps, the smallest change each
slice can detect, how much synthetic questions borrow from their chunk, and versions
(docs/testset.md)."""

from __future__ import annotations

import plotly.express as px
import streamlit as st

from dashboard import health
from dashboard.frame import complain, need_runs, setup
from dashboard.render import md_code, md_escape
from dashboard.views import TESTSET_MODES, TestSetView

frame = setup("Test set", ":material/checklist:")
need_runs(frame)
ids = frame.run_ids
newest = ids[-1]
ts = health.testset(frame.fkey, newest, frame.key)
tags = ts.tag_names()
files = health.versions_on_disk(frame.fkey, newest, frame.key)
complain(
    TestSetView.seed(
        {
            "mode": lambda v: v in TESTSET_MODES,
            "run": frame.run_ok,
            "against": frame.run_ok,
            "by": lambda v: v in tags,
            "metric": lambda v: v in health.DEFAULT_METRICS,
            "old": lambda v: v in files or "is not a test-set file beside this test set",
            "new": lambda v: v in files or "is not a test-set file beside this test set",
        },
        run=newest,
    ),
    frame,
)
frame.keep("ts_run", newest)

st.caption(f"{md_code(str(ts.path.name))} · version {md_code(ts.version)} · {ts.cases.height} questions")
mode = st.segmented_control("View", list(TESTSET_MODES), key="ts_mode") or "Coverage"

if mode == "Coverage":
    cov = health.coverage_of(frame.fkey, newest, 10, frame.key)
    cols = st.columns(6)
    cols[0].metric("Questions", cov.questions)
    cols[1].metric(
        "Unanswerable", cov.unanswerable, help="the corpus cannot answer them: abstention is scored"
    )
    cols[2].metric("Must-pass", cov.must_pass)
    cols[3].metric("Held-out", cov.heldout)
    cols[4].metric("Reference answers", cov.with_reference)
    cols[5].metric("Evidence spans", cov.with_evidence, help="labels that survive rechunking")
    if cov.labeled_chunks:
        lc = cov.labeled_chunks
        st.caption(
            f"Labeled chunks per labeled question: median {lc['median']:g}, mean {lc['mean']:g}, "
            f"max {lc['max']:g}. Answerable with no labeled chunk yet: {cov.unlabeled}."
        )
    if cov.warnings:
        st.warning(
            f"**{len(cov.warnings)} coverage gap(s)**\n\n"
            + "\n".join(f"- {md_escape(w)}" for w in cov.warnings),
            icon=":material/warning:",
        )
    else:
        st.success("No coverage gap found.", icon=":material/check_circle:")
    for name, table in cov.slices.items():
        st.subheader(f"By {name}")
        st.dataframe(
            table,
            hide_index=True,
            column_config={"share": st.column_config.ProgressColumn(format="%.2f", min_value=0, max_value=1)},
        )

elif mode == "Power":
    st.caption(
        "The smallest change in each metric a slice can detect (paired t-test, α 0.05, power 0.8). "
        "Blank: fewer than 2 scored questions, or no change within the 0–1 range is detectable."
    )
    c1, c2, c3 = st.columns(3)
    run = c1.selectbox("Spread of run", list(reversed(ids)), format_func=frame.label, key="ts_run")
    others = [r for r in reversed(ids) if r != run]
    against = c2.selectbox(
        "Against (optional)",
        others,
        index=None,
        format_func=frame.label,
        key="ts_against",
        placeholder="one run: the spread is estimated",
        help="With a second run the spread of the two runs' per-question differences is measured, "
        "not estimated.",
    )
    by = c3.selectbox("Per", tags, key="ts_by")
    table, how = health.power_of(frame.fkey, run, against, by, frame.key)
    st.caption(f"Spread {md_escape(how)}.")
    st.dataframe(
        health.mde_wide(table),
        hide_index=True,
        column_config={m: st.column_config.NumberColumn(format="%.3f") for m in health.DEFAULT_METRICS},
    )
    st.subheader("How many questions do I need?")
    d1, d2, d3 = st.columns(3)
    metric = d1.selectbox("Metric", list(health.DEFAULT_METRICS), key="ts_metric")
    change = d2.number_input("Change to detect", -1.0, 1.0, step=0.01, format="%.3f", key="ts_change")
    slices = ["all", *sorted(set(table["slice"].to_list()) - {"all"})]
    if st.session_state.get("ts_slice") not in slices:
        st.session_state["ts_slice"] = "all"
    slice_ = d3.selectbox("Slice", slices, key="ts_slice")
    if change:
        st.info(
            md_escape(health.target(table, metric, change, slice_).sentence()), icon=":material/calculate:"
        )

elif mode == "Overlap":
    st.caption(
        "The share of a question's content words found in its labeled chunk. Questions written while "
        "looking at a chunk reuse its words, which flatters keyword retrieval; real questions are the "
        f"yardstick. Chunk texts come from what the runs retrieved. High: {health.HIGH:g} or more."
    )
    table = health.overlap_of(frame.fkey, tuple(ids), frame.key)
    summary, top = health.overlap_parts(table)
    if summary.is_empty():
        st.info("No labeled question has a chunk text or evidence quote to compare with.")
    else:
        st.dataframe(summary, hide_index=True)
        fig = px.histogram(
            table.drop_nulls("overlap").to_pandas(),
            x="overlap",
            color="source",
            barmode="overlay",
            histnorm="percent",
            nbins=10,
            range_x=[0, 1],
        )
        fig.update_layout(height=300, margin={"t": 10, "b": 10}, yaxis_title="% of questions")
        st.plotly_chart(fig, key="ts_overlap_hist")
        st.subheader("Most overlapping synthetic questions")
        st.caption("Review these first: keep the ones a user would really ask, reword or discard the rest.")
        st.dataframe(top.select("qid", "overlap", "question", "chunks", "topic"), hide_index=True)

else:
    st.subheader("The version each run answered")
    st.dataframe(health.versions_of(frame.fkey, tuple(ids), frame.key), hide_index=True)
    st.subheader("What changed between two versions")
    if len(files) < 2:
        st.info(
            "Only one test-set file lies beside this test set. New versions (`evalcore testset remap`, "
            "accepted synthetic questions, promoted production questions) are written there, and can be "
            "compared here.",
            icon=":material/difference:",
        )
    else:
        names = list(files)
        v1, v2 = st.columns(2)
        if st.session_state.get("ts_old") not in files:
            st.session_state["ts_old"] = names[1]
        if st.session_state.get("ts_new") not in files:
            st.session_state["ts_new"] = names[0]
        old = files[v1.selectbox("Old", names, key="ts_old")]
        new = files[v2.selectbox("New", names, key="ts_new")]
        got = health.diff_of(old, new, health.stamp(old, new))
        if isinstance(got, str):
            st.error(md_escape(got))
        else:
            changes, counts = got
            st.markdown(md_escape(", ".join(f"{n} {c}" for c, n in counts.items())))
            st.dataframe(changes, hide_index=True)

TestSetView.from_state().publish()
