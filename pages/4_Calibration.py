"""Calibration: people label a sample of the judge's verdicts, blind, and see how far the judge can
be trusted — agreement with confidence intervals, the disagreements, and scores corrected for the
judge's measured error (docs/calibration.md)."""

from __future__ import annotations

import streamlit as st

from dashboard import auth, calib, data
from dashboard.frame import complain, need_runs, rejudge_key_field, setup
from dashboard.render import agree, count, highlighted, md_code, md_escape
from dashboard.views import CalibrationView

frame = setup("Calibration", ":material/balance:", charts=False)
need_runs(frame)
loaded = frame.runs.load(frame.run_ids)
ids = frame.run_ids
# Sessions and probes label a judge's verdicts on answers: runs without answers (a TREC import)
# are not offered; with none at all, the page says what it needs instead of empty pickers.
judgeable = [r for r in ids if r in loaded and loaded[r].has_answers]
sessions = calib.sessions(ids)
if not judgeable and not sessions:
    st.info(
        f"No run of this test set has answers ({count(len(ids), 'run')}, retrieval only): calibration labels a "
        "judge's verdicts on a run's answers. Add runs that record answers (and judge them with "
        "`evalcore judge`), or import an export with answers (`evalcore import ragas`, `ragchecker`, `traces`).",
        icon=":material/info:",
    )
    st.stop()
by_name = {s.name: s for s in sessions}
tags = calib.tags_of(frame.fkey, ids[-1], frame.key)

complain(
    CalibrationView.seed(
        {
            "session": lambda v: v in by_name or "no such session for this test set",
            "mode": lambda v: v in ("Label", "Agreement", "Probes"),
            "by": lambda v: v in tags,
            "judge": lambda v: v.isdigit(),
        },
        session=sessions[0].name if sessions else None,
    ),
    frame,
)

mode = st.segmented_control("View", ["Label", "Agreement", "Probes"], key="cal_mode") or "Label"

# ---- bias probes

if mode == "Probes" and not judgeable:
    st.info("No run of this test set has answers for the judge to be probed on.", icon=":material/info:")
    st.stop()
if mode == "Probes":  # no session needed: probes measure the judge alone
    st.caption(
        "Each probe changes the judge's input in one way that should not change a fair judge's verdict and "
        "counts how often the verdict flips, against the noise floor of judging the same input twice "
        "(docs/calibration.md)."
    )
    p1, p2, p3 = st.columns([2, 4, 1])
    probe_run = p1.selectbox("Run", list(reversed(judgeable)), format_func=frame.label, key="cal_probe_run")
    chosen_probes = p2.multiselect(
        "Probes", list(calib.probe_names()), default=list(calib.probe_names()), key="cal_probes"
    )
    probe_n = int(p3.number_input("Questions", 5, 500, 50, step=5, key="cal_probe_n"))
    st.caption(md_escape(calib.probe_plan(frame.fkey, probe_run, chosen_probes, probe_n, frame.key)))
    api_key = rejudge_key_field("cal_probe_key") if auth.may("probe") else None
    if not auth.may("probe"):
        auth.locked("probe", "Probes ask the judge (they spend money): running them")
    elif st.button(
        "Run probes",
        key="cal_probe_go",
        disabled=not chosen_probes or not (data.judge_key_in_env() or api_key),
    ):
        bar = st.progress(0.0, text="Probing…")
        seen = [0]

        def tick(_: object) -> None:
            seen[0] += 1
            bar.progress(min(1.0, seen[0] / max(1, probe_n * 4)), text=f"{count(seen[0], 'judgment')}")

        try:
            for result in calib.run_probes(
                frame.fkey, probe_run, chosen_probes, probe_n, frame.key, api_key, tick
            ):
                st.markdown(md_escape(str(result)))
        except (data.SetupError, data.OverBudget, PermissionError) as exc:
            st.error(md_escape(str(exc)))
    table = calib.probe_table(ids)
    if table.height:
        st.subheader("Kept results")
        st.dataframe(
            table,
            hide_index=True,
            column_config={
                c: st.column_config.NumberColumn(format="%.2f") for c in ("rate", "95% CI low", "95% CI high")
            }
            | {"p": st.column_config.NumberColumn(format="%.3f")},
        )
    else:
        st.info("No probe has been run on this test set's runs yet.", icon=":material/science:")
    CalibrationView.from_state().publish()
    st.stop()

# ---- a new session


def new_session_form() -> None:
    """An admin opens a labeling session on a run's judge verdicts."""
    if not judgeable:
        return
    with st.expander("New labeling session", expanded=not sessions, icon=":material/add:"):
        c1, c2, c3 = st.columns(3)
        run_id = c1.selectbox("Run", list(reversed(judgeable)), format_func=frame.label, key="cal_new_run")
        judge = c2.selectbox(
            "Judge verdicts",
            calib.judges_of(frame.fkey, run_id, frame.key),
            format_func=lambda j: f"the run file's ({j})" if j == data.RECORDED else f"revision {j}",
            key="cal_new_judge",
        )
        target = c3.selectbox(
            "What people label",
            ["claims", "answers"],
            format_func=lambda t: "claims (faithfulness)" if t == "claims" else "answers (correctness)",
            key="cal_new_target",
        )
        c4, c5, c6 = st.columns(3)
        n = c4.number_input("Items", 10, 2000, 150, step=10, key="cal_new_n")
        sampling = c5.selectbox(
            "Sampling",
            ["low-scores", "uniform", *[f"stratified:{t}" for t in tags]],
            help="low-scores: half the sample from what the judge scored low, where its costly errors are "
            "(weights keep the estimates unbiased); stratified: in proportion to a tag's values.",
            key="cal_new_sampling",
        )
        per_item = c6.number_input("Labels per item", 1, 5, 2, key="cal_new_k")
        name = st.text_input("Name", placeholder="e.g. faithfulness-nov", key="cal_new_name")
        spec = calib.SessionSpec(
            name=name.strip(), target=target, n=int(n), sampling=sampling, labels_per_item=int(per_item)
        )
        st.info(
            md_escape(calib.session_preview(frame.fkey, run_id, judge, spec, frame.key)),
            icon=":material/target:",
        )
        st.caption("Rubric (kept with the session): " + md_escape(calib.rubric(target)))
        if st.button("Create session", type="primary", disabled=not spec.name, key="cal_create"):
            try:
                calib.create_session(frame.fkey, run_id, judge, spec, frame.key)
            except (ValueError, PermissionError) as exc:
                st.error(md_escape(str(exc)))
            else:
                st.session_state["cal_session"] = spec.name
                st.rerun()


if auth.may("create_session"):
    new_session_form()

if not sessions:
    st.info(
        "No labeling session for this test set yet: "
        + ("create one above." if auth.may("create_session") else "an admin creates them."),
        icon=":material/balance:",
    )
    st.stop()

top1, top3 = st.columns([3, 2])
chosen = top1.selectbox(
    "Session",
    list(by_name),
    key="cal_session",
    format_func=lambda s: f"{s} — {by_name[s].run_id}, {by_name[s].target}, {by_name[s].items} items",
)
session = by_name[chosen]
me = auth.current()
if me.local:  # one machine, no sign-in: the labeler says who they are
    labeler = top3.text_input("Your name", key="cal_labeler", placeholder="who is labeling")
else:  # signed in: the labeler is the signed-in person (the store refuses any other name)
    labeler = me.email
    top3.caption(f"Labeling as **{md_escape(me.email)}**")
    if auth.may("close_session") and not session.closed:
        top3.button("Close this session", key="cal_close", on_click=calib.close, args=(session,))
CalibrationView.from_state().publish()
st.caption(
    f"Judge: {'the run file' if session.judge == 'recorded' else 'revision ' + session.judge} · "
    f"sampled {md_escape(session.sampling)} · {count(session.labels_per_item, 'label')} per item · "
    f"{session.labels} of {session.items * session.labels_per_item} labels made · rubric {md_escape(session.rubric_version)}"
    + (f" · opened by {md_escape(session.created_by)}" if session.created_by else "")
    + (f" · **closed** {md_escape(session.closed[:10])}" if session.closed else "")
)

# ---- labeling, blind


def show_item(payload: dict, target: str) -> None:
    """What a labeler sees: question, answer, the claim and where the judge located it — never a verdict."""
    st.markdown("**Question:** " + md_escape(payload.get("question")))
    if target == "production" and payload.get("time"):
        st.caption(f"Asked in production at {md_escape(payload['time'])}")
    if target == "answers":
        st.markdown("**Reference answer:** " + md_escape(payload.get("reference") or "(none)"))
    st.markdown("**Answer:** " + md_escape(payload.get("answer")))
    if target == "claims":
        with st.container(border=True):
            st.markdown("**Claim:** " + md_escape(payload.get("claim")))
            st.caption(
                "The highlighted passage is where the judge located it (in "
                + md_code(payload.get("chunk_id"))
                + "): check it."
                if payload.get("quote")
                else "No passage was located for this claim: look through the chunks."
            )


def show_chunks(payload: dict) -> None:
    st.markdown(f"**Chunks the system was given** ({len(payload.get('chunks', []))})")
    for chunk in payload.get("chunks", []):
        quotes = [payload.get("quote")] if chunk["chunk_id"] == payload.get("chunk_id") else []
        with st.container(border=True):
            st.caption(md_code(chunk["chunk_id"]))
            st.markdown(highlighted(chunk["text"], quotes) or ":gray[(no text)]")


if mode == "Label":
    st.caption("Rubric: " + md_escape(session.rubric))
    if not auth.may("label"):
        st.info(
            f"Labeling needs the labeler role (you are {auth.article(me.role)}): the Agreement view is open to you.",
            icon=":material/lock:",
        )
        st.stop()
    if session.closed:
        st.info("This session was closed by an admin: it takes no more labels.", icon=":material/lock:")
        st.stop()
    if not labeler.strip():
        st.info("Type your name above to start (or resume) labeling.", icon=":material/person:")
        st.stop()
    who = labeler.strip()
    last = st.session_state.pop("cal_last", None)
    if last and last["judge"] is None:  # a production review: no judge verdict to show yet
        st.success(f"Saved: you said **{last['label']}**.", icon=":material/check:")
    elif last:
        agreed = last["label"] == last["judge"]
        text = f"Saved: you said **{last['label']}**; the judge said **{last['judge']}**" + (
            " — you agree." if agreed else " — you disagree."
        )
        (st.success if agreed else st.warning)(
            text, icon=":material/check:" if agreed else ":material/compare_arrows:"
        )
    msg = st.session_state.pop("cal_msg", None)
    if msg:
        st.warning(md_escape(msg))
    here = calib.place(session, who)
    st.progress(
        here.done / here.total if here.total else 1.0, text=f"{who}: {here.done} of {here.total} labeled"
    )
    nav1, nav2, nav3 = st.columns([1, 1, 6])
    nav1.button(
        "← Previous", key="cal_prev", disabled=here.prev is None, on_click=calib.go, args=(here.prev,)
    )
    nav2.button("Next →", key="cal_next", disabled=here.next is None, on_click=calib.go, args=(here.next,))
    if nav3.button("Keys (?)", key="cal_keys"):
        st.session_state["cal_show_keys"] = not st.session_state.get("cal_show_keys", False)
    if st.session_state.get("cal_show_keys"):
        st.table(calib.keys_table())
    st.html(calib.SHORTCUTS_JS, unsafe_allow_javascript=True)
    if here.item is None:
        st.success(
            f"Nothing left for you in this session: {here.done} labeled. See the Agreement view.",
            icon=":material/task_alt:",
        )
        st.stop()
    item = here.item
    pane, chunks_pane = st.columns([2, 3])
    with chunks_pane:
        show_chunks(item.payload)
    with pane:
        show_item(item.payload, session.target)
        if here.mine:
            # Labeled already: the judge's verdict and the others' labels may be seen now.
            st.markdown(
                f"Your label: **{here.mine.label}** (version {here.mine.version}) · the judge: **{item.judge_label}**"
                + "".join(f" · {md_escape(o.labeler)}: **{o.label}**" for o in here.others)
            )
        picked = st.session_state.get("cal_pick")
        cols = [*st.columns(2), *st.columns(2)]
        for i, (col, label) in enumerate(zip(cols, calib.labels_for(session.target), strict=True)):
            col.button(
                f"{i + 1} · {label}",
                key=f"cal_pick_{i}",
                type="primary" if picked == label else "secondary",
                on_click=calib.pick,
                args=(label,),
                width="stretch",
            )
        st.text_area(
            "Rationale (optional, encouraged)",
            key="cal_rationale",
            height=80,
            placeholder="why, in a sentence",
        )
        st.button(
            "Submit (Enter)" if not here.mine else "Change my label (Enter)",
            key="cal_submit",
            type="primary",
            on_click=calib.submit,
            args=(item, who),
        )
    st.stop()

# ---- agreement

others = calib.revisions_for(session)
a1, a2 = st.columns(2)
versus = a1.selectbox(
    "Judge measured",
    [None, *others],
    format_func=lambda j: "the session's judge" if j is None else f"revision {j}",
    key="cal_judge",
    help="Measure another judge revision of the same run (a new model or prompt) on the same human labels.",
)
by = a2.selectbox("Per tag", [None, *tags], key="cal_by", format_func=lambda t: "—" if t is None else t)
rep = calib.report(session, versus, by, frame.fkey, frame.key)
a = rep.overall
st.info(md_escape(rep.verdict()[0].upper() + rep.verdict()[1:]), icon=":material/balance:")
st.dataframe(
    calib.statistics_table(rep, session.target),
    hide_index=True,
    column_config={
        c: st.column_config.NumberColumn(format="%.2f") for c in ("value", "95% CI low", "95% CI high")
    },
)
if versus is not None:
    st.markdown(f"**Two judges on the same {count(session.labels, 'human label')}**")
    st.dataframe(
        calib.judges_side_by_side(
            calib.report(session, None, None, frame.fkey, frame.key), rep, session.target
        ),
        hide_index=True,
    )
st.caption(
    "CIs: bootstrap resampling whole answers (claims of one answer move together); judge-vs-people "
    "figures weighted back to the whole run when the session oversampled."
    + (
        f" {count(rep.unmatched, 'item')} this judge made no verdict on {agree(rep.unmatched, 'is', 'are')} left out."
        if rep.unmatched
        else ""
    )
)
left, right = st.columns(2)
with left:
    st.markdown("**Confusion** (rows: people; columns: the judge)")
    st.dataframe(calib.confusion_table(rep), hide_index=True)
with right:
    if rep.by:
        st.markdown(f"**Per {md_escape(by)}**")
        st.dataframe(calib.slices_table(rep), hide_index=True)
    st.markdown(
        "**Labelers**: " + (", ".join(f"{md_escape(k)} ({v})" for k, v in rep.labelers.items()) or "none yet")
    )

st.subheader(f"Disagreements ({len(rep.disagreements)})")
if rep.disagreements:
    table = calib.disagreements_table(rep)
    picked = st.dataframe(
        table, hide_index=True, on_select="rerun", selection_mode="single-row", key="cal_dis"
    )
    rows_sel = picked.selection.rows if picked else []
    if rows_sel:
        d = rep.disagreements[rows_sel[0]]
        opened = calib.item(d["item"], session)
        if opened is not None:
            side = st.columns(2 + len(d["people"]))
            side[0].metric("The session's judge", opened.judge_label or "–")
            side[1].metric("Judge measured" if versus else "—", d["judge"] or "–" if versus else "")
            for col, (who_, lab) in zip(side[2:], d["people"].items(), strict=True):
                col.metric(who_, lab)
                why = d["rationale"].get(who_)
                if why:
                    col.caption(md_escape(why))
            show_item(opened.payload, session.target)
            show_chunks(opened.payload)

st.subheader("Labels in and out")
st.caption(
    "For teams that label elsewhere: every label with its history, as CSV or JSON Lines; an import adds "
    "each line as a new label version (columns: labeler, qid, claim_idx, label, rationale), and a line "
    "that cannot be taken is named with its number."
)
e1, e2, e3 = st.columns([1, 1, 3])
e1.download_button(
    "Labels as CSV",
    calib.export(session, "csv"),
    f"{session.name}-labels.csv",
    "text/csv",
    key="cal_export_csv",
)
e2.download_button(
    "Labels as JSON Lines",
    calib.export(session, "jsonl"),
    f"{session.name}-labels.jsonl",
    "application/jsonl",
    key="cal_export_jsonl",
)
upload = (
    e3.file_uploader("Import labels", type=["csv", "jsonl", "json"], key="cal_import")
    if auth.may("import_labels")
    else None
)
if upload is not None and st.button("Import these labels", key="cal_import_go"):
    stored, problems = calib.import_file(session, upload.name, upload.getvalue())
    (st.warning if problems else st.success)(
        md_escape(f"{count(stored, 'label')} imported; {count(len(problems), 'line')} refused.")
    )
    for p in problems[:50]:
        st.caption(md_escape(p))
