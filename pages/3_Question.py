"""Question: one question across every run — its metrics over time, each run's chunks and answer."""

from __future__ import annotations

import polars as pl
import streamlit as st

from dashboard import data, state
from dashboard.frame import complain, need_runs, setup
from dashboard.render import chunk_list, claim_list, md_escape, quotes_by_chunk

frame = setup("Question", ":material/help:")
need_runs(frame)
runs = frame.result.runs
cases = runs[frame.run_ids[-1]].testset.cases
known = set(cases["qid"].to_list())

complain(state.seed("question", [
    state.Param("qid", "q_qid", valid=lambda v: v in known),
    state.Param("k", "q_k", parse=int, valid=lambda v: 1 <= v <= 100),
    state.Param("heldout", "q_held", parse=lambda v: v == "true"),
    state.Param("run", "q_run", valid=lambda v: v in runs),
]))
state.default("q_k", 5)

c0, c1, c2, c3 = st.columns([3, 6, 1, 2])
held = c3.toggle("Show held-out", key="q_held",
                 help="Held-out questions are hidden by default: looking at them while tuning overfits.")
selected = st.session_state.get("q_qid")
find = c0.text_input("Search", key="q_find", placeholder="qid or words of the question")
choices = cases if held else cases.filter((pl.col("split") != "heldout") | (pl.col("qid") == (selected or "")))
if find.strip():
    needle = find.strip().lower()
    hit = pl.col("qid").str.to_lowercase().str.contains(needle, literal=True) | pl.col("question").str.to_lowercase().str.contains(needle, literal=True)
    choices = choices.filter(hit | (pl.col("qid") == (selected or "")))
# A selectbox holding every question of a 10,000-question test set is slow to send and to open; it
# lists the first MAX_OPTIONS matches (and the open question), and the search narrows them.
MAX_OPTIONS = 300
options = choices.sort("qid").select("qid", "question").head(MAX_OPTIONS).rows()
if selected and selected in known and selected not in {q for q, _ in options}:
    options.insert(0, cases.filter(pl.col("qid") == selected).select("qid", "question").row(0))
labels = {q: f"{q} — {text[:90]}" for q, text in options}
qid = c1.selectbox("Question", list(labels), key="q_qid", index=None, format_func=lambda q: labels.get(q, q),
                   placeholder="Pick a question (or open one from Compare)")
if choices.height > MAX_OPTIONS:
    c1.caption(f"{MAX_OPTIONS} of {choices.height:,} questions listed — search to narrow them.")
elif find.strip() and choices.filter(pl.col("qid") != (selected or "")).height == 0:
    c1.caption("No question matches the search.")
k = int(c2.number_input("Top k", 1, 100, key="q_k"))
if qid is None:
    state.publish("question", {"k": k if k != 5 else None, "heldout": held})
    st.stop()

case = cases.filter(pl.col("qid") == qid).row(0, named=True)
st.subheader(md_escape(case["question"]), anchor=False)
st.markdown(" ".join(f":gray-badge[{t}: {md_escape(str(case[t]))}]" for t in ("type", "topic", "source", "split"))
            + (" :red-badge[must-pass]" if case["must_pass"] else "")
            + ("" if case["answerable"] else " :violet-badge[unanswerable]"))
if case["split"] == "heldout":
    st.caption("This is a held-out question: look, but don't tune on it.")
st.markdown("**Reference answer:** " + (md_escape(case["reference_answer"]) or ":gray[(none)]"))

history = data.across_runs(frame.fkey, qid, frame.key)
# Metrics that apply to no run of this question (retrieval on an unanswerable one) are left out:
# they would be columns of None in front of the ones that matter.
history = history.select([c for c in history.columns if history[c].null_count() < history.height])
metrics = [m for m in ("R@5", "nDCG@10", "RR@10", "faithfulness", "correctness", "abstention") if m in history.columns]
# Streamlit's own line chart: the page stays light (a plotly chart here cost ~1.5 s on a cold load).
st.line_chart(history.select("created", *metrics).to_pandas().set_index("created"), height=260,
              y_label="value", x_label="run created")
st.dataframe(history, hide_index=True)

run_ids = history["run_id"].to_list()
if "q_run" in st.session_state and st.session_state["q_run"] not in run_ids:
    del st.session_state["q_run"]
state.default("q_run", run_ids[-1])
# One run at a time: with many runs, rendering every run's chunks at once would be slow to read and load.
# Option labels of a segmented control are markdown: a run label must not become a link or an image.
run_id = st.segmented_control("Run", run_ids, key="q_run", format_func=lambda r: md_escape(runs[r].label))
state.publish("question", {"qid": qid, "k": k if k != 5 else None, "heldout": held, "run": run_id})
d = data.detail(frame.fkey, run_id or run_ids[-1], qid, k, frame.key)
if d is not None:
    left, right = st.columns(2)
    with left:
        st.markdown("**Answer**" + (" :violet-badge[abstained]" if d.abstained else ""))
        with st.container(border=True):
            st.markdown(md_escape(d.answer) or ":gray[(no answer)]")
        st.markdown("**Judge claims**")
        claim_list(d)
    with right:
        st.markdown(f"**Retrieved chunks** (top {k} go to the model)")
        chunk_list(d, quotes=quotes_by_chunk(d), k=k)
