"""Question: one question across every run of its test set — its metrics run by run, each run's
chunks and answer. With no question picked, it starts on the questions that regressed most in the
latest run."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from dashboard import auth, data, tables
from dashboard.frame import complain, judge_flag, need_runs, rejudge_key_field, setup
from dashboard.render import (
    chunk_list,
    claim_list,
    count,
    md_escape,
    plot_text,
    plot_texts,
    quotes_by_chunk,
    reference_md,
    series_colour,
)
from dashboard.views import QuestionView

frame = setup("Question", ":material/help:")
need_runs(frame)
# The question across every run of the test set: each run's line for it, not the whole file (the
# start table below, without a question, reads the latest two runs whole).
runs = frame.runs
ids = frame.run_ids
# A qid means something only inside its test set: the picker lists the chosen test set's questions
# (its newest version), and each run's own test set gives the question shown above its answer.
cases = frame.entries[ids[-1]].testset.cases
known = set(cases["qid"].to_list())
# Held-out questions are for admins only on per-question views (evalcore.access: see_heldout).
may_held = auth.may("see_heldout")
hidden_held = set() if may_held else tables.heldout_qids(cases)
known -= hidden_held
frame.keep("q_run", None)

complain(
    QuestionView.seed(
        {
            "qid": lambda v: (
                "is a held-out question: only admins see held-out questions"
                if v in hidden_held
                else frame.qid_ok(v, known)
            ),
            "k": lambda v: 1 <= v <= 100,
            "run": frame.run_ok,
            "judge": lambda v: v in (data.RECORDED, data.LATEST) or v.isdigit(),
        },
    ),
    frame,
)

if "q_pending" in st.session_state:  # a row picked in the start table, applied before the picker exists
    st.session_state["q_qid"] = st.session_state.pop("q_pending")

c0, c1, c2, c3 = st.columns([3, 6, 1, 2])
held = may_held and c3.toggle(
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
    placeholder="Pick a question, search, or open one below",
)
if matched > MAX_OPTIONS:
    c1.caption(f"{MAX_OPTIONS} of {matched:,} questions listed — search to narrow them.")
elif find.strip() and matched == 0:
    c1.caption("No question matches the search.")
k = int(c2.number_input("Top k", 1, 100, key="q_k"))


if qid is None:
    QuestionView.from_state(run=None).publish()
    # Start somewhere useful: the questions that regressed most in the latest run.
    if len(ids) > 1 and not data.incomparable(runs[ids[-2]], runs[ids[-1]]):
        cmp = data.comparison(frame.fkey, ids[-2], ids[-1], k, frame.key)
        worst = tables.most_regressed(cmp)
        st.subheader("Regressed most in the latest run", anchor=False)
        st.caption(
            f"{md_escape(frame.label(ids[-1]))} against {md_escape(frame.label(ids[-2]))}, worst first "
            "(held-out questions left out). Select a row to open it."
        )
        if worst.height == 0:
            st.info("No question regressed in the latest run.")
        else:
            event = st.dataframe(
                worst,
                hide_index=True,
                on_select="rerun",
                selection_mode="single-row",
                key="q_start",
                column_config={"worst_delta": st.column_config.NumberColumn(format="%+.3f")},
            )
            rows = event.selection.rows if event is not None else []
            if rows:
                st.session_state["q_pending"] = worst["qid"][rows[0]]
                st.rerun()
    else:
        st.info("Pick a question above, or search by qid or words.")
    st.stop()

history = data.across_runs(frame.fkey, qid, tuple(ids), frame.key)
frame.rerun_if_a_run_failed()  # a run whose line for the question was not clean was read whole, and broke
history, metrics = tables.question_history(history)
run_ids = history["run_id"].to_list()
if not run_ids:
    st.warning(f"No run of this test set answered {md_escape(qid)}.")
    st.stop()
if st.session_state.get("q_run") not in run_ids:
    st.session_state["q_run"] = run_ids[-1]
run_id = st.session_state["q_run"]
runs.load([run_id])  # the run shown is read whole (its judge's standing needs it): a broken one leaves
# Whose verdicts: the run file's own ("recorded"), or a judge revision from the store.
revs = data.revisions(frame.fkey, run_id, frame.key)
judge_labels = {data.RECORDED: f"{data.RECORDED} (the run file's)"} | {
    str(
        r.id
    ): f"revision {r.id} · {r.model} · {r.created[:16].replace('T', ' ')} · {count(r.verdicts, 'verdict')}"
    + (f", {r.failed} failed" if r.failed else "")
    for r in revs
}
if "q_judge_pending" in st.session_state:  # a re-judge just made this revision
    st.session_state["q_judge"] = st.session_state.pop("q_judge_pending")
wanted = st.session_state.get("q_judge")
if wanted == "latest":  # a link's "the newest revision", whichever it is now
    st.session_state["q_judge"] = str(revs[-1].id) if revs else data.RECORDED
elif wanted not in judge_labels:
    if wanted is not None:
        st.caption(
            md_escape(
                f"Judge revision {wanted} is not one of {frame.label(run_id)}'s: showing its recorded verdicts."
            )
        )
    st.session_state["q_judge"] = data.RECORDED
judge = st.session_state["q_judge"]
d = data.detail(frame.fkey, run_id, qid, k, frame.key, judge=judge)
if d is None:  # (only if the run broke since the history above was made)
    frame.rerun_if_a_run_failed()
    st.stop()
case = d.case  # this run's own test set: a relabeled question shows the labels this run was scored on

st.subheader(md_escape(case["question"]), anchor=False)
st.markdown(
    " ".join(f":gray-badge[{t}: {md_escape(str(case[t]))}]" for t in ("type", "topic", "source", "split"))
    + (" :red-badge[must-pass]" if case["must_pass"] else "")
    + ("" if case["answerable"] else " :violet-badge[unanswerable]")
)
if case["split"] == tables.HELDOUT:
    st.caption("This is a held-out question: look, but don't tune on it.")
st.markdown(reference_md(case))

if metrics:
    fig = go.Figure()
    for i, m in enumerate(metrics):
        fig.add_trace(
            go.Scatter(
                line={"color": series_colour(i)},
                # One point per run on a categorical axis: a line between dates would suggest a
                # gradual change that never happened; markers keep a one-run series visible.
                x=plot_texts(history["run_id"]),
                y=history[m].to_list(),
                name=plot_text(m),
                mode="lines+markers",
                marker={"size": 9},
                hovertemplate="%{x}: %{y:.3f}<extra>" + plot_text(m) + "</extra>",
            )
        )
    fig.update_layout(
        height=280,
        margin={"t": 10, "b": 10},
        yaxis_title="value",
        yaxis_rangemode="tozero",
        xaxis={"type": "category", "title": "run (oldest first)"},
    )
    st.plotly_chart(fig, key="q_chart")
else:
    st.caption("No metric applies to this question in these runs, so there is nothing to chart.")
st.dataframe(tables.history_table(history), hide_index=True)

# One run at a time: with many runs, rendering every run's chunks at once would be slow to read and load.
# Option labels of a segmented control are markdown: a run label must not become a link or an image.
st.segmented_control("Run", run_ids, key="q_run", format_func=lambda r: md_escape(frame.entries[r].label))
c_judge, c_rejudge = st.columns(2)
answers = runs[run_id].has_answers  # a run without answers (a TREC import) has no verdicts to pick
with c_judge:
    if answers:
        st.selectbox(
            "Judge verdicts",
            list(judge_labels),
            key="q_judge",
            format_func=lambda j: judge_labels[j],
            help="The run file's own judge output, or a revision made with `evalcore judge` or Re-judge.",
        )
        if len(judge_labels) > 1:
            other = st.selectbox(
                "Diff against",
                [j for j in judge_labels if j != judge],
                index=None,
                key="q_judge_vs",
                format_func=lambda j: judge_labels[j],
                placeholder="another judging of this answer",
            )
            if other is not None:
                change = data.revision_diff(frame.fkey, run_id, other, judge, qid, frame.key)
                if change is None:
                    st.caption("The two judgings of this answer agree.")
                else:
                    st.markdown(md_escape(tables.diff_text(change, judge_labels[other], judge_labels[judge])))
if auth.may("rejudge") and answers:  # only for a role that may spend, on a run with answers
    with c_rejudge, st.expander("Re-judge this question", icon=":material/gavel:"):
        estimate = data.judge_estimate(frame.fkey, run_id, [qid], frame.key)
        st.caption(
            md_escape(str(estimate))
            if estimate.questions
            else "This run recorded no answer here: nothing to judge."
        )
        api_key = rejudge_key_field("judge_key")
        if st.button(
            "Re-judge",
            key="q_rejudge",
            disabled=not estimate.questions or not (data.judge_key_in_env() or api_key),
        ):
            try:
                with st.spinner("Judging…"):
                    report = data.rejudge(frame.fkey, run_id, [qid], frame.key, api_key)
            except (data.SetupError, data.OverBudget, PermissionError) as exc:
                st.error(md_escape(str(exc)), icon=":material/block:")
            else:
                # Show the new revision at once; a failure shows there with its reason.
                st.session_state["q_judge_pending"] = str(report.revision_id)
                st.rerun()
QuestionView.from_state().publish()
left, right = st.columns(2)
with left:
    st.markdown("**Answer**" + (" :violet-badge[abstained]" if d.abstained else ""))
    with st.container(border=True):
        st.markdown(md_escape(d.answer) or ":gray[(no answer)]")
    st.markdown("**Judge claims**")
    failed = data.failed_verdict(judge, qid)
    if failed is not None:  # a failed judgment has no claims: say why, not "not judged"
        st.warning(md_escape(f"The judge failed on this answer in revision {judge}: {failed.reason}"))
    else:
        claim_list(d)
        judge_flag(frame, run_id, judge)
with right:
    context_k = frame.entries[run_id].manifest.context_k
    st.markdown(
        f"**Retrieved chunks** (top {k}"
        + (f"; the generator was given the top {context_k}" if context_k else "")
        + ")"
    )
    if d.tie_at_cutoff:  # tied scores, not the system, decide what is in the top k
        st.caption(":material/drag_handle: " + md_escape(d.tie_at_cutoff) + ".")
    chunk_list(d, quotes=quotes_by_chunk(d), k=k, key="q_more")
