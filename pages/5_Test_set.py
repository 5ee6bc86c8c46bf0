"""Test set: is it good enough to trust a change? Coverage and its gaps, the smallest change each
slice can detect, how much synthetic questions borrow from their chunk, and versions
(docs/testset.md)."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from dashboard import auth, data, health
from dashboard.frame import complain, need_runs, rejudge_key_field, setup
from dashboard.render import count, md_code, md_escape, plot_text
from dashboard.views import TESTSET_MODES, TestSetView

frame = setup("Test set", ":material/checklist:")
need_runs(frame)
frame.runs.load(frame.run_ids)
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
            f"**{count(len(cov.warnings), 'coverage gap')}**\n\n"
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
        "The smallest change in each metric a slice of this size can detect.",
        help="A paired t-test at α 0.05 with power 0.8. None: fewer than 2 scored questions, or no "
        "change within the 0–1 range is detectable. `questions`: the slice's size (a metric scores "
        "fewer where it does not apply).",
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
    if table.is_empty():
        st.info(
            f"{md_code(run)} has none of {', '.join(health.DEFAULT_METRICS)} scored (an import with only "
            "external scores, or no labels and no judge output): pick a run that has them.",
            icon=":material/info:",
        )
        TestSetView.from_state().publish()
        st.stop()
    st.caption(f"Spread {md_escape(how)}.")
    st.dataframe(
        health.mde_wide(table, ts, by),
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
        f"How many of a question's words its labeled chunk shares (high: {health.HIGH:g} or more).",
        help="The share of a question's content words found in its labeled chunk. Questions written "
        "while looking at a chunk reuse its words, which flatters keyword retrieval; real questions "
        "are the yardstick. Chunk texts come from what the runs retrieved.",
    )
    table = health.overlap_of(frame.fkey, tuple(ids), frame.key)
    summary, top = health.overlap_parts(table)
    if summary.is_empty():
        st.info("No labeled question has a chunk text or evidence quote to compare with.")
    else:
        st.dataframe(summary, hide_index=True)
        bins = health.overlap_bins(table)
        fig = go.Figure(
            [
                go.Bar(
                    x=(part["bin"] + 0.05).to_list(),
                    y=(part["share"] * 100).to_list(),
                    width=0.1,
                    name=plot_text(str(source)),
                    opacity=0.6,
                )
                for (source,), part in bins.group_by("source", maintain_order=True)
            ]
        )
        fig.update_layout(barmode="overlay", xaxis={"range": [0, 1], "title": "overlap"})
        fig.update_layout(height=300, margin={"t": 10, "b": 10}, yaxis_title="% of questions")
        st.plotly_chart(fig, key="ts_overlap_hist")
        st.subheader("Most overlapping synthetic questions")
        st.caption("Review these first: keep the ones a user would really ask, reword or discard the rest.")
        st.dataframe(top.select("qid", "overlap", "question", "chunks", "topic"), hide_index=True)

elif mode == "Review":
    st.caption(
        "Synthetic questions wait here until a person accepts (edited if need be) or discards each; "
        "production questions promoted on the Signals page arrive accepted. Accepted ones are written "
        "into a new version of the test set, beside the old file."
    )
    corpus = health.corpus_of(frame.fkey)
    with st.expander("Write synthetic questions", icon=":material/auto_awesome:", expanded=False):
        if not auth.may("synthesize"):
            auth.locked("synthesize", "Writing synthetic questions asks a model (it spends money): it")
        elif corpus is None:
            st.info("No corpus/documents.jsonl in the runs folder: use `evalcore synth --chunks CHUNKS`.")
        else:
            g1, g2, g3 = st.columns(3)
            n_new = int(g1.number_input("Questions", 1, 500, 10, key="ts_syn_n"))
            multi = g2.slider("Needing two chunks", 0.0, 1.0, 0.2, 0.05, key="ts_syn_multi")
            unans = g3.slider("Unanswerable", 0.0, 1.0, 0.1, 0.05, key="ts_syn_unans")
            st.caption(md_escape(health.synth_estimate(corpus, n_new, multi, unans)))
            key = rejudge_key_field("ts_syn_key")
            if st.button("Write them", key="ts_syn_go", disabled=not (data.judge_key_in_env() or key)):
                bar = st.progress(0.0, text="Writing questions…")
                done = [0]

                def tick(_: str) -> None:
                    done[0] += 1
                    bar.progress(min(1.0, done[0] / n_new), text=f"{done[0]} of {n_new}")

                try:
                    made = health.generate(corpus, ts.sha256, n_new, multi, unans, key, tick)
                except (data.SetupError, data.OverBudget, PermissionError) as exc:
                    st.error(md_escape(str(exc)))
                else:
                    st.success(f"{count(made.queued, 'question')} queued ({made.cached} from the cache).")
                    for f in made.failed:
                        st.warning(md_escape(f))
    cands = health.queue(ts.sha256)
    pending = [c for c in cands if c.status == "pending"]
    accepted = [c for c in cands if c.status == "accepted"]
    st.markdown(
        f"**{len(pending)}** waiting for review · **{len(accepted)}** accepted, not yet written · "
        f"{sum(c.status == 'discarded' for c in cands)} discarded · {sum(c.status == 'written' for c in cands)} written"
    )
    if not cands:
        st.info(
            "Nothing to review yet: write synthetic questions above (or `evalcore synth`), or promote a logged "
            "question on the Signals page.",
            icon=":material/inbox:",
        )
    who = auth.name_field("ts_rev_who") if auth.may("review") else ""
    if pending and not auth.may("review"):
        auth.locked("review", "Accepting or discarding candidates")
    elif pending:
        cand = pending[0]
        with st.container(border=True):
            st.caption(
                f"Candidate {cand.id} · {cand.origin} · {md_escape(cand.detail.get('kind', ''))} · "
                f"overlap with its chunk {cand.overlap if cand.overlap is not None else '–'}"
            )
            if health.high_overlap(cand):
                st.warning(
                    "It borrows most of its words from its chunk, which flatters keyword retrieval: reword it "
                    "as a user would ask, or discard it.",
                    icon=":material/content_copy:",
                )
            for note in cand.detail.get("notes", []):
                st.warning(md_escape(note), icon=":material/format_quote:")
            q = st.text_area("Question", cand.case["question"], key=f"ts_rev_q_{cand.id}")
            ref = st.text_area(
                "Reference answer", cand.case.get("reference_answer") or "", key=f"ts_rev_a_{cand.id}"
            )
            for chunk in cand.detail.get("chunks", []):
                st.caption(md_code(chunk["chunk_id"]))
                st.markdown(md_escape(chunk["text"]))
            b1, b2, _ = st.columns([1, 1, 4])
            edited = {**cand.case, "question": q.strip(), "reference_answer": ref.strip() or None}
            accept = b1.button(
                "Accept", type="primary", key="ts_rev_accept", disabled=not who.strip() or not q.strip()
            )
            discard = b2.button("Discard", key="ts_rev_discard", disabled=not who.strip())
            if accept or discard:
                try:
                    health.decide(
                        cand.id, "accepted" if accept else "discarded", edited if accept else None, who
                    )
                except PermissionError as exc:  # (the role was lowered while the page was open)
                    st.error(md_escape(str(exc)))
                else:
                    st.rerun()
    if accepted and not auth.may("write_testset"):
        auth.locked("write_testset", "Writing a new test-set version")
    elif accepted and st.button(
        f"Write a new version with the {len(accepted)} accepted", key="ts_rev_write", disabled=not who.strip()
    ):
        try:
            out, sha, added = health.write_reviewed(ts.path, who)
        except PermissionError as exc:
            st.error(md_escape(str(exc)))
            st.stop()
        st.success(
            f"Wrote {md_code(out.name)} (version {md_code(sha[:12])}): {md_code(ts.path.name)} plus {count(added, 'case')}; "
            "the old file is untouched."
        )

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
