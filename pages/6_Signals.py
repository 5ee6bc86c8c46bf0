"""Signals: what production says — the no-answer rate and its alerts, weak retrievals, keyword misses,
feedback and behaviour over time; a sample of answers reviewed with the judge's rubric; and a logged
conversation promoted to a test case, personal data redacted first (docs/signals.md)."""

from __future__ import annotations

import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

from dashboard import auth, data, signals
from dashboard.frame import complain, rejudge_key_field, setup
from dashboard.render import agree, count, md_code, md_escape
from dashboard.views import SIGNALS_MODES, SignalsView

frame = setup("Signals", ":material/monitoring:")
logs = signals.log_files(frame.folder)
if not logs:
    st.info(
        "No production log found. Put JSON Lines logs in "
        + md_code(signals.where_logs_go(frame.folder))
        + " (or set `RAGTRIAGE_LOGS` to a file or folder); docs/signals.md gives the format.",
        icon=":material/monitoring:",
    )
    st.stop()

complain(
    SignalsView.seed(
        {
            "log": lambda v: v in logs or "is not a log in the logs folder",
            "mode": lambda v: v in SIGNALS_MODES,
            "every": lambda v: v in ("1h", "6h", "1d", "1w"),
        },
        log=next(iter(logs)),
    ),
    frame,
)
c1, c2, c3 = st.columns([3, 4, 1])
name = c1.selectbox("Log", list(logs), key="sig_log")
mode = c2.segmented_control("View", list(SIGNALS_MODES), key="sig_mode") or "Monitor"
every = c3.selectbox("Per", ["1h", "6h", "1d", "1w"], key="sig_every")
path = logs[name]
lg = signals.load_log(path)
n = lg.interactions.height
span = signals.span(lg)
st.caption(f"{md_code(name)} · {n:,} questions · {span}")
if lg.problems:
    with st.expander(
        f"{count(lg.bad_lines, 'bad line')} left out — the rest is shown", icon=":material/warning:"
    ):
        for p in lg.problems:
            st.text(str(p))
if not n:
    st.stop()

if mode == "Monitor":
    got = signals.analyse(path, every)
    for alert in got["alerts"]:
        st.error(md_escape(alert.message()), icon=":material/notification_important:")
    if not got["alerts"] and got["history"]:
        st.info(
            f"No alert can be judged yet: {md_escape(got['history'])}.", icon=":material/hourglass_empty:"
        )
    elif not got["alerts"]:
        st.success(
            "No alert: the no-answer rate moved within its usual noise.", icon=":material/check_circle:"
        )
    series = got["series"].to_pandas()
    fig = go.Figure(
        go.Scatter(
            x=series["start"],
            y=series["rate"],
            mode="lines+markers",
            name="no-answer rate",
            customdata=series[["questions", "no_answer"]],
            hovertemplate="%{x}<br>%{y:.0%} (%{customdata[1]} of %{customdata[0]})<extra></extra>",
        )
    )
    marks = signals.alert_marks(got["series"], got["alerts"]).to_pandas()
    if len(marks):
        fig.add_trace(go.Scatter(x=marks["start"], y=marks["rate"], mode="markers", name="alert",
                                 marker={"size": 14, "symbol": "circle-open", "color": "red"}))  # fmt: skip
    fig.update_layout(
        height=300,
        margin={"t": 30, "b": 10},
        yaxis_tickformat=".0%",
        yaxis_rangemode="tozero",
        title="No-answer rate",
    )
    st.plotly_chart(fig, key="sig_rate")
    counts = got["counts"].to_pandas()
    fig2 = px.line(counts, x="start", y="share", color="signal", markers=True, title="Feedback and behaviour",
                   hover_data=["count", "questions"])  # fmt: skip
    fig2.update_layout(
        height=320, margin={"t": 30, "b": 10}, yaxis_tickformat=".0%", yaxis_title="% of questions"
    )
    st.plotly_chart(fig2, key="sig_counts")
    if got["reasons"].height:
        st.subheader("Why users gave a thumbs down")
        st.dataframe(got["reasons"], hide_index=True)
    left, right = st.columns(2)
    with left:
        st.subheader("Weakest retrievals")
        thr = got["threshold"]
        st.caption(
            "Top retrieval score in the lowest 5% of this log"
            + (f" (at most {thr:.3g})." if thr is not None else ".")
        )
        st.dataframe(signals.listing(got["low"]), hide_index=True, height=300)
    with right:
        st.subheader("Keyword search found nothing")
        st.caption("keyword_hits = 0: often a product name, an error code or a typo the index does not know.")
        st.dataframe(signals.listing(got["keyword"]), hide_index=True, height=300)

elif mode == "Review":
    st.caption(
        "A random sample of answered questions becomes a labeling session on the Calibration page, "
        "labeled blind with the judge's faithfulness rubric; the labels go to the same store as "
        "calibration labels."
    )
    r1, r2, r3 = st.columns([3, 1, 1])
    review_name = r1.text_input("Session name", placeholder="e.g. production-week-48", key="sig_rev_name")
    size = int(r2.number_input("Answers", 5, 500, 50, step=5, key="sig_rev_n"))
    per_item = int(r3.number_input("Labels per answer", 1, 5, 1, key="sig_rev_k"))
    judged = st.checkbox(
        "Judge the sample first, so people's labels measure the judge (Anthropic API)",
        key="sig_rev_judge",
        help="The judge's faithfulness verdicts on these answers are kept hidden from labelers until they "
        "submit, as in any calibration session; agreement is then measured on production answers too.",
    )
    api_key = rejudge_key_field("sig_rev_key") if judged and auth.may("rejudge") else None
    can_judge = not judged or (auth.may("rejudge") and (data.judge_key_in_env() or bool(api_key)))
    if judged and not auth.may("rejudge"):
        auth.locked("rejudge", "Judging the sample spends money on the judge: it")
    if not auth.may("create_session"):
        auth.locked("create_session", "Creating a review session")
    elif st.button(
        "Create review session",
        type="primary",
        disabled=not review_name.strip() or not can_judge,
        key="sig_rev_go",
    ):
        try:
            with st.spinner("Judging the sample…" if judged else "Sampling…"):
                signals.start_review(
                    lg,
                    review_name.strip(),
                    size,
                    per_item,
                    signals.texts_from_runs(frame.fkey, tuple(frame.run_ids), frame.key),
                    judged=judged,
                    api_key=api_key,
                )
        except (ValueError, data.SetupError, data.OverBudget, PermissionError) as exc:
            st.error(md_escape(str(exc)))
        else:
            st.success(
                f"Session {md_code(review_name.strip())} created with {size} answers.",
                icon=":material/check:",
            )
            st.page_link(
                "pages/4_Calibration.py",
                label="Label it on the Calibration page",
                icon=":material/balance:",
                query_params={"session": review_name.strip()},
            )

else:  # Promote
    if not frame.run_ids:
        st.info("Promotion adds to a test set: load runs of one first.")
        st.stop()
    ts = signals.testset_of(frame)
    st.caption(
        "Pick a logged question, label it, and queue it as a real test case of "
        + md_code(ts.path.name)
        + ". Personal data is flagged and must be gone before it can be queued. "
        + f"Names found: {md_escape(signals.NAME_DETECTOR)}."
    )
    asked = st.session_state.get("sig_line")
    if asked is not None and not signals.has_line(lg, asked):
        st.warning(
            f"Line {asked} of the link is not a usable line of {md_code(name)}: pick a conversation below."
        )
        st.session_state["sig_line"] = None
    pick = signals.promotion_choices(lg, keep=st.session_state.get("sig_line"))
    line = st.selectbox(
        "Conversation",
        list(pick),
        format_func=lambda ln: pick[ln],
        index=None,
        placeholder="thumbs-down, declined and weakly retrieved questions first",
        key="sig_line",
    )
    if line is None:
        st.stop()
    row, chunks = signals.conversation(lg, line)
    st.markdown("**Asked:** " + md_escape(row["question"]))
    st.markdown("**Answered:** " + md_escape(row["answer"]))
    red = signals.redaction(row["question"])
    if red.findings:
        st.warning(
            "Personal data found: "
            + md_escape(", ".join(f"{f.kind} ({f.text})" for f in red.findings))
            + ". The question below is redacted — check it before queuing.",
            icon=":material/privacy_tip:",
        )
    question = st.text_area("Question as it enters the test set", red.text, key=f"sig_q_{line}")
    unanswerable = st.checkbox("The documentation cannot answer it (unanswerable)", key=f"sig_unans_{line}")
    ids = signals.chunk_choices(chunks, frame)
    with st.expander(f"The {count(chunks.height, 'chunk')} it retrieved", icon=":material/description:"):
        for r in chunks.iter_rows(named=True):
            st.caption(f"{r['rank']}. {md_code(r['chunk_id'])} · score {r['score']}")
            if r.get("text"):
                st.markdown(md_escape(r["text"]))
    relevant = st.multiselect(
        "Relevant chunks (retrieved ones first, then every chunk the runs know)",
        ids,
        disabled=unanswerable,
        key=f"sig_rel_{line}",
    )
    reference = st.text_area(
        "Reference answer (from the documentation)", disabled=unanswerable, key=f"sig_ref_{line}"
    )
    t1, t2, t3 = st.columns(3)
    qtype = t1.selectbox("Type", signals.values_of(ts, "type"), index=None, key=f"sig_type_{line}",
                         accept_new_options=True, placeholder="pick or type one")  # fmt: skip
    topic = t2.selectbox("Topic", signals.values_of(ts, "topic"), index=None, key=f"sig_topic_{line}",
                         accept_new_options=True, placeholder="pick or type one")  # fmt: skip
    who = auth.name_field("sig_who", t3)
    case = signals.case_for(
        row["conversation_id"],
        question=question,
        relevant=None if unanswerable else {c: 1 for c in relevant},
        reference_answer=None if unanswerable else reference,
        type_=qtype or "",
        topic=topic or "",
    )
    ready = bool(who.strip()) and bool(qtype) and bool(topic) and (unanswerable or bool(relevant))
    if not auth.may("promote"):
        auth.locked("promote", "Queuing a logged question as a test case")
    elif st.button("Queue as test case", type="primary", disabled=not ready, key="sig_promote"):
        try:
            signals.queue(ts.sha256, case, who, row["question"])
        except (ValueError, PermissionError) as exc:
            st.error(md_escape(str(exc)))
        else:
            st.success(f"Queued {md_code(case['qid'])}.", icon=":material/check:")
    waiting = signals.pending(ts.path)
    st.divider()
    st.markdown(
        f"**{count(waiting, 'accepted case')}** {agree(waiting, 'waits', 'wait')} to be written into a new version "
        f"of {md_code(ts.path.name)}."
    )
    if waiting and not auth.may("write_testset"):
        auth.locked("write_testset", "Writing a new test-set version")
    elif st.button("Write new test-set version", disabled=not waiting or not who.strip(), key="sig_write"):
        try:
            out, sha, added = signals.write_version(ts.path, who)
        except PermissionError as exc:
            st.error(md_escape(str(exc)))
            st.stop()
        st.success(
            f"Wrote {md_code(out.name)} (version {md_code(sha[:12])}) with {count(added, 'new case')}; "
            f"{md_code(ts.path.name)} is untouched.",
            icon=":material/check:",
        )

SignalsView.from_state().publish()
