"""Compare: baseline vs candidate — deltas per metric, the questions that moved, and why."""

from __future__ import annotations

import streamlit as st

from dashboard import auth, data, tables
from dashboard.frame import (
    complain,
    judge_flag,
    link_to_question,
    need_runs,
    rejudge_panel,
    setup,
)
from dashboard.render import (
    agree,
    chunks_side_by_side,
    claim_list,
    count,
    forest,
    md_code,
    md_escape,
    paged,
    reference_md,
    scroll_into_view,
)
from dashboard.views import CompareView

frame = setup("Compare", ":material/compare_arrows:")
need_runs(frame, 2)
runs = frame.runs  # each read when first asked for: this page reads two runs
ids = frame.run_ids
tags = frame.entries[ids[-1]].testset.tag_names()
frame.keep("cmp_base", ids[-2])
frame.keep("cmp_cand", ids[-1])


def _tag_ok(v: str) -> bool:
    return ":" in v and v.split(":", 1)[0] in tags


complain(
    CompareView.seed(
        {
            "base": frame.run_ok,
            "cand": frame.run_ok,
            "k": lambda v: 1 <= v <= 100,
            "status": lambda v: v in tables.STATUSES,
            "tag": _tag_ok,
            "answerable": lambda v: v in ("yes", "no"),
            "judge": lambda v: v in (data.RECORDED, data.LATEST),
        },
        base=ids[-2],
        cand=ids[-1],
    ),
    frame,
)

c1, c2, c3 = st.columns([5, 5, 1])
base = c1.selectbox("Baseline", ids, key="cmp_base", format_func=frame.label)
cand = c2.selectbox("Candidate", ids, key="cmp_cand", format_func=frame.label)
k = int(c3.number_input("Top k", 1, 100, key="cmp_k"))
if base == cand:
    st.info("Pick two different runs.")
    st.stop()
runs.load([base, cand])  # together: the two files parse side by side
problem = data.incomparable(runs[base], runs[cand])
if problem:
    st.error(md_escape(problem[0].upper() + problem[1:] + "."))
    st.stop()
# Whose verdicts: the run files' own, or each run's newest judge revision (after a re-judge).
judged = data.judged_runs(frame.fkey, [base, cand], frame.key)
if "cmp_judge_pending" in st.session_state:  # a re-judge just ran: show its revisions (set before the widget)
    st.session_state["cmp_judge"] = st.session_state.pop("cmp_judge_pending")
if judged:
    st.selectbox(
        "Judge verdicts",
        [data.RECORDED, data.LATEST],
        key="cmp_judge",
        format_func=lambda j: f"{j} (the run files')" if j == data.RECORDED else "each run's latest verdicts",
        help="Revisions come from `evalcore judge` or Re-judge below; both runs must have one for 'latest'.",
    )
judge = st.session_state.get("cmp_judge", data.RECORDED)
if judge == data.LATEST and len(judged) < 2:
    missing = [frame.label(r) for r in (base, cand) if r not in judged]
    st.caption(
        md_escape(f"No judge revision yet for {', '.join(missing)}: its run file's verdicts are used.")
    )
cmp = data.comparison(frame.fkey, base, cand, k, frame.key, judge, max(judged.values(), default=0))

st.subheader(
    "Summary",
    help="Mean paired delta (candidate − baseline) with a bootstrap 95% CI, on the questions both runs "
    "answered (Overview's means cover every question each run answered, so they can differ); "
    "significant when a two-sided randomization test, Holm-corrected across metrics, gives p < 0.05. "
    "Significant regressions first.",
)
cand_judge = data.LATEST if judge == data.LATEST and cand in judged else data.RECORDED
judge_flag(frame, cand, cand_judge)
if cmp.judge_change:
    st.warning(md_escape(cmp.judge_change[0].upper() + cmp.judge_change[1:]), icon=":material/gavel:")
    # The way out, one click away: the baseline judged by the candidate's judge (or, when that
    # judge cannot be reproduced, both runs by this evalcore's).
    cant = data.judge_like(frame.fkey, cand, frame.key)
    shared = cmp.per_question["qid"].to_list()
    with st.expander(
        "Re-judge the baseline with the candidate's judge"
        if cant is None
        else "Re-judge both runs with one judge",
        icon=":material/gavel:",
    ):
        if cant is not None:
            st.caption(md_escape(f"Not the candidate's judge: {cant}."))
        if rejudge_panel(
            frame,
            [base] if cant is None else [base, cand],
            shared,
            "cmp_like",
            like=cand if cant is None else None,
            label="Re-judge the baseline" if cant is None else "Re-judge both runs",
        ):
            st.session_state["cmp_judge_pending"] = data.LATEST
            st.rerun()
moves = tables.moves_by_change(tables.significant_moves(cmp))
if "worse" in moves:
    st.error(
        "**Significantly worse:** " + md_escape(tables.describe_moves(moves["worse"])),
        icon=":material/trending_down:",
    )
if "better" in moves:
    st.success(
        "**Significantly better:** " + md_escape(tables.describe_moves(moves["better"])),
        icon=":material/trending_up:",
    )
if "moved" in moves:  # as Overview and the report say it
    st.info("**Moved (no better direction):** " + md_escape(tables.describe_moves(moves["moved"])))
st.plotly_chart(forest(cmp.summary), key="cmp_forest", config={"displayModeBar": False})
st.download_button(
    "Download report (HTML)",
    lambda: data.report_html(cmp),  # written when clicked: the same file `evalcore report` writes
    file_name=f"report-{base}-vs-{cand}.html",
    mime="text/html",
    icon=":material/description:",
    on_click="ignore",
    help="One page that opens in any browser without a server: this comparison's chart, tables, "
    "and the most regressed questions side by side. `evalcore report` writes the same file.",
)
st.caption(f"On the {md_escape(cmp.note)}.")
summary = tables.compare_summary(cmp)
not_applicable = tables.present(cmp.summary)[1]
if not_applicable:
    st.caption(
        "Not applicable to these runs (no question both answered has what they need), so not shown: "
        + md_escape(tables.why_not_applicable(not_applicable))
        + "."
    )
st.dataframe(
    summary,
    hide_index=True,
    height=min(38 + 35 * summary.height, 800),  # every metric visible, no scroll inside the table
    column_config={
        **{
            c: st.column_config.NumberColumn(format="%.3f")
            for c in ("baseline", "candidate", "delta", "ci_low", "ci_high")
        },
        "p_holm": st.column_config.NumberColumn("p (Holm)", format="%.4f"),
        "sig": st.column_config.TextColumn(
            "significant",
            help="★ significant at 0.05 after Holm correction: worse, better, or moved (no direction)",
        ),
        "direction": st.column_config.TextColumn("better is"),
    },
)

st.subheader("Questions")
f1, f2, f3, f4, f5 = st.columns([3, 3, 2, 2, 2])
status = f1.multiselect("Status", list(tables.STATUSES), key="cmp_status")
tag_values = tables.tag_choices(runs[base].testset.tags)
tag = f2.selectbox("Tag", [None, *tag_values], key="cmp_tag", format_func=lambda v: "any" if v is None else v)
answerable = f3.selectbox(
    "Answerable", [None, "yes", "no"], key="cmp_ans", format_func=lambda v: "all" if v is None else v
)
must = f4.toggle("Must-pass only", key="cmp_must")
may_held = auth.may("see_heldout")  # held-out questions are for admins only on per-question views
held = may_held and f5.toggle(
    "Show held-out",
    key="cmp_held",
    help="Held-out questions are hidden by default: looking at them while tuning overfits the "
    "system to the test set. Aggregates above include them.",
)
table = tables.filter_questions(
    cmp,
    status=status or None,
    tag=tables.tag_pair(tag),
    must_pass_only=must,
    answerable=None if answerable is None else answerable == "yes",
    include_heldout=held,
)
hidden = cmp.n_heldout
if not held and hidden:
    st.caption(
        f"{count(hidden, 'held-out question')} hidden ({'switch above' if may_held else 'admins can show them'}); "
        "the summary above and `evalcore compare` count them."
    )

view = tables.compare_questions(cmp, table)
st.caption(f"{count(view.height, 'question')}, worst regression first. Select a row to open it side by side.")
# A question named by the link (or opened before) is selected in the table when the filters show it.
open_qid = st.session_state.get("cmp_qid")
all_qids = view["qid"]
at = all_qids.index_of(open_qid) if open_qid is not None else None
# A million questions stay on the server, a page at a time, written out as shown.
page = tables.compare_page(paged(view, "cmp_page", show=at))
shown_qids = page["qid"].to_list()
if open_qid in shown_qids:
    want = [shown_qids.index(open_qid)]
    current = st.session_state.get("cmp_table")
    if not current or list(current.get("selection", {}).get("rows", [])) != want:
        st.session_state["cmp_table"] = {"selection": {"rows": want}}
event = st.dataframe(
    page,
    hide_index=True,
    on_select="rerun",
    selection_mode="single-row",
    key="cmp_table",
    column_config={"worst_delta": st.column_config.NumberColumn(format="%+.3f")},
)
st.download_button(
    "Download this table (CSV)",
    view.write_csv,  # written when clicked, not on every rerun (a million rows is ~100 MB)
    file_name=f"compare-{base}-vs-{cand}.csv",
    mime="text/csv",
    icon=":material/download:",
)
listed = view["qid"].to_list()
answered = [r for r in (base, cand) if runs[r].has_answers]  # a TREC run has nothing to judge
if auth.may("rejudge") and answered:  # only for a role that may spend on the judge
    with st.expander(f"Re-judge the {count(len(listed), 'question')} listed above", icon=":material/gavel:"):
        if len(answered) == 2:
            which = st.radio(
                "Runs", ["both", "baseline", "candidate"], horizontal=True, key="cmp_rejudge_runs",
                help="Both, so that the two sides are judged by the same judge and stay comparable.",
            )  # fmt: skip
            targets = [base, cand] if which == "both" else [base] if which == "baseline" else [cand]
        else:
            targets = answered
            st.caption(md_escape(f"Only {frame.label(answered[0])} has answers to judge."))
        if rejudge_panel(frame, targets, listed, "cmp_rejudge"):
            st.session_state["cmp_judge_pending"] = data.LATEST
            st.rerun()

rows = event.selection.rows if event is not None else []
sel_marker = (tuple(rows), view.height, tuple(page["qid"].head(50).to_list()))
if rows and st.session_state.get("_cmp_last_sel") != sel_marker and rows[0] < page.height:
    st.session_state["cmp_qid"] = page["qid"][rows[0]]
st.session_state["_cmp_last_sel"] = sel_marker
qid = st.session_state.get("cmp_qid")
CompareView.from_state(qid=qid).publish()

if qid is None:
    st.stop()
row = cmp.question(qid)
if row is not None and row["split"] == tables.HELDOUT and not may_held:
    st.warning(
        f"{md_escape(qid)} is a held-out question: only admins see held-out questions.",
        icon=":material/lock:",
    )
    st.stop()
if row is None:
    st.warning(f"Question '{md_escape(qid)}' is not answered by both runs.", icon=":material/link_off:")
    st.stop()
if qid not in shown_qids:
    hidden_by = f"status {row['status']}" + (", held out" if row["split"] == tables.HELDOUT else "")
    st.caption(
        f"{md_escape(qid)} is open below, but the filters above hide its row ({md_escape(hidden_by)})."
    )

st.divider()
bd = data.detail(frame.fkey, base, qid, k, frame.key)
cd = data.detail(frame.fkey, cand, qid, k, frame.key)
assert bd is not None and cd is not None
case = bd.case
st.subheader(f"{md_escape(qid)}: {md_escape(case['question'])}", anchor="side-by-side")
opened = (base, cand, qid)
if st.session_state.get("_cmp_scrolled") != opened:  # a question just opened (row or link): show it
    st.session_state["_cmp_scrolled"] = opened
    scroll_into_view("side-by-side")
st.markdown(
    f":blue-badge[{md_escape(row['status'])}] "
    + (f":orange-badge[{md_escape(row['diagnosis'])}] " if row["diagnosis"] else "")
    + " ".join(f":gray-badge[{md_escape(t)}: {md_escape(', '.join(v))}]" for t, v in case["tags"].items())
)
if case["split"] == tables.HELDOUT:
    st.caption("This is a held-out question: look, but don't tune on it.")
st.markdown(reference_md(case))
if row["left_top_k"]:
    st.error(
        f"{agree(len(row['left_top_k']), 'A labeled chunk', 'Labeled chunks')} that left the top {k}: "
        + ", ".join(md_code(c) for c in row["left_top_k"]),
        icon=":material/trending_down:",
    )
if row["entered_top_k"]:
    st.success(
        f"{agree(len(row['entered_top_k']), 'A labeled chunk', 'Labeled chunks')} that entered the top {k}: "
        + ", ".join(md_code(c) for c in row["entered_top_k"]),
        icon=":material/trending_up:",
    )
for name_, d_ in (("Baseline", bd), ("Candidate", cd)):
    if d_.tie_at_cutoff:  # tied scores, not the system, decide what is in the top k
        st.caption(f":material/drag_handle: {name_}: " + md_escape(d_.tie_at_cutoff) + ".")
link_to_question(qid)

with st.expander("Metrics for this question"):
    st.dataframe(tables.question_metrics(cmp, row), hide_index=True)

left, right = st.columns(2)
for col, d, name in ((left, bd, "Baseline"), (right, cd, "Candidate")):
    with col:
        st.markdown(f"#### {name}: {md_escape(frame.label(d.run_id))}")
        st.markdown("**Answer**" + (" :violet-badge[abstained]" if d.abstained else ""))
        with st.container(border=True):
            st.markdown(md_escape(d.answer) or ":gray[(no answer)]")
        st.markdown("**Judge claims**")
        claim_list(d)
st.markdown(f"**Retrieved chunks, rank by rank** (top {k}; the baseline's on the left)")
chunks_side_by_side(bd, cd, k=k, key="cmp_more")
