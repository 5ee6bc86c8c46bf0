"""Question: one question across every run — its metrics over time, each run's chunks and answer."""

from __future__ import annotations

import streamlit as st

from dashboard import data, tables
from dashboard.frame import complain, need_runs, setup
from dashboard.render import chunk_list, claim_list, md_escape, quotes_by_chunk
from dashboard.views import QuestionView

frame = setup("Question", ":material/help:")
need_runs(frame)
runs = frame.result.runs
cases = runs[frame.run_ids[-1]].testset.cases
known = set(cases["qid"].to_list())

complain(
    QuestionView.seed({"qid": lambda v: v in known, "k": lambda v: 1 <= v <= 100, "run": lambda v: v in runs})
)

c0, c1, c2, c3 = st.columns([3, 6, 1, 2])
held = c3.toggle(
    "Show held-out",
    key="q_held",
    help="Held-out questions are hidden by default: looking at them while tuning overfits.",
)
selected = st.session_state.get("q_qid")
find = c0.text_input("Search", key="q_find", placeholder="qid or words of the question")
# A selectbox holding every question of a 10,000-question test set is slow to send and to open; it
# lists the first MAX_OPTIONS matches (and the open question), and the search narrows them.
MAX_OPTIONS = 300
options, matched = tables.question_options(
    cases,
    search=find,
    include_heldout=held,
    selected=selected if selected in known else None,
    limit=MAX_OPTIONS,
)
labels = {q: f"{q} — {text[:90]}" for q, text in options}
qid = c1.selectbox(
    "Question",
    list(labels),
    key="q_qid",
    index=None,
    format_func=lambda q: labels.get(q, q),
    placeholder="Pick a question (or open one from Compare)",
)
if matched > MAX_OPTIONS:
    c1.caption(f"{MAX_OPTIONS} of {matched:,} questions listed — search to narrow them.")
elif find.strip() and matched == 0:
    c1.caption("No question matches the search.")
k = int(c2.number_input("Top k", 1, 100, key="q_k"))
if qid is None:
    QuestionView.from_state(run=None).publish()
    st.stop()

case = tables.case_row(cases, qid)
st.subheader(md_escape(case["question"]), anchor=False)
st.markdown(
    " ".join(f":gray-badge[{t}: {md_escape(str(case[t]))}]" for t in ("type", "topic", "source", "split"))
    + (" :red-badge[must-pass]" if case["must_pass"] else "")
    + ("" if case["answerable"] else " :violet-badge[unanswerable]")
)
if case["split"] == tables.HELDOUT:
    st.caption("This is a held-out question: look, but don't tune on it.")
st.markdown("**Reference answer:** " + (md_escape(case["reference_answer"]) or ":gray[(none)]"))

history = data.across_runs(frame.fkey, qid, frame.key)
history, metrics = tables.question_history(history)
# Streamlit's own line chart: the page stays light (a plotly chart here cost ~1.5 s on a cold load).
st.line_chart(
    history.select("created", *metrics).to_pandas().set_index("created"),
    height=260,
    y_label="value",
    x_label="run created",
)
st.dataframe(history, hide_index=True)

run_ids = history["run_id"].to_list()
if "q_run" in st.session_state and st.session_state["q_run"] not in run_ids:
    del st.session_state["q_run"]
st.session_state.setdefault("q_run", run_ids[-1])
# One run at a time: with many runs, rendering every run's chunks at once would be slow to read and load.
# Option labels of a segmented control are markdown: a run label must not become a link or an image.
run_id = st.segmented_control("Run", run_ids, key="q_run", format_func=lambda r: md_escape(runs[r].label))
QuestionView.from_state().publish()
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
