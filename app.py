"""ragtriage — Overview: what changed in the latest run (against the one before it, or a chosen
baseline), the chosen run's headline metrics with 95% CIs, the runs of the test set, and the main
metrics across runs.

    streamlit run app.py                    # the embedded sample_runs/
    streamlit run app.py -- --runs DIR      # your own runs (or RAGTRIAGE_RUNS=DIR)
"""

from __future__ import annotations

import streamlit as st

from dashboard import data, tables
from dashboard.frame import complain, need_runs, setup, show_problems
from dashboard.render import agree, count, forest, md_escape, trend_chart
from dashboard.views import OverviewView

TREND_ALL_UP_TO = 20  # runs a first view scores whole before it draws (as it always did)
TREND_WAIT_ALL = 300.0
TREND_POLL = 2.0  # seconds between redraws of the trend while they are scored

frame = setup("Overview", ":material/dashboard:")
need_runs(frame)  # with no run it says why (and lists the problems), and stops
ids = frame.run_ids
# The trend needs every run's means: those kept from earlier sessions come at once, the rest are
# scored in the background (newest first). A folder of up to 20 runs is waited for, so the problems
# listed below are the whole folder's; with hundreds never seen, the page draws at once and the
# trend fills in.
many = len(ids) > TREND_ALL_UP_TO
if not many:
    backfill = data.trend_means(frame.fkey, tuple(ids), frame.key, wait=TREND_WAIT_ALL)
    frame.rerun_if_a_run_failed()  # a broken run found by the pass: run the page without it
show_problems(frame)
runs = frame.runs
frame.keep("home_run", ids[-1])
frame.keep("home_vs", ids[-2] if len(ids) > 1 else None)
complain(
    OverviewView.seed(
        {"run": frame.run_ok, "vs": frame.run_ok},
        run=ids[-1],
        vs=ids[-2] if len(ids) > 1 else None,
    ),
    frame,
)
if frame.other_runs:
    st.caption(
        f"Showing the {count(len(ids), 'run')} of test set **{md_escape(frame.group.name if frame.group else '')}**; "
        f"{count(frame.other_runs, 'other run')} {agree(frame.other_runs, 'answers', 'answer')} other test sets (pick one in the sidebar)."
    )

# ---- What changed: the latest run against the one before it (or a chosen baseline).
latest = ids[-1]
vs: str | None = None
if len(ids) == 1:
    st.caption("One run of this test set so far: what changed shows here once there is a second.")
if len(ids) > 1:
    st.subheader(
        "What changed in the latest run",
        help="Each metric's mean paired change (latest − the run it is compared with) on the questions "
        "both runs answered, with a bootstrap 95% CI; significant when a two-sided randomization test, "
        "Holm-corrected across metrics, gives p < 0.05. These can differ from the headline means "
        "below, which cover every question each run answered.",
    )
    c1, c2 = st.columns(2)
    c1.markdown(f"**Latest:** {md_escape(frame.label(latest))}")
    vs = c2.selectbox(
        "Against",
        [r for r in ids if r != latest],
        key="home_vs",
        format_func=frame.label,
        help="The run before it by default; pick any earlier run as the baseline.",
    )
    problem = data.incomparable(runs[vs], runs[latest])
    if problem:
        st.warning(md_escape(problem[0].upper() + problem[1:] + "."))
    else:
        cmp = data.comparison(frame.fkey, vs, latest, 5, frame.key)
        if cmp.judge_change:  # its judged metrics compare the judges: left out of what changed
            st.warning(md_escape(cmp.judge_change[0].upper() + cmp.judge_change[1:]), icon=":material/gavel:")
        moves = tables.significant_moves(cmp)
        worse = moves.filter(moves["change"] == "worse")
        better = moves.filter(moves["change"] == "better")
        moved = moves.filter(moves["change"] == "moved")
        if worse.height:
            st.error(
                "**Significantly worse:** " + md_escape(tables.describe_moves(worse)),
                icon=":material/trending_down:",
            )
        if better.height:
            st.success(
                "**Significantly better:** " + md_escape(tables.describe_moves(better)),
                icon=":material/trending_up:",
            )
        if moved.height:
            st.info("**Moved (no better direction):** " + md_escape(tables.describe_moves(moved)))
        if not moves.height:
            st.info(f"No metric moved significantly (Holm-corrected p < {tables.SIGNIFICANT:g}).")
        st.plotly_chart(forest(cmp.summary), key="home_forest", config={"displayModeBar": False})
        st.caption(
            f"Paired on the {md_escape(cmp.note)}. Each row's n is the questions of those the metric "
            "applies to, so a change here is measured on fewer questions than the run's own means below."
        )
        st.page_link(
            "pages/2_Compare.py",
            label="Open this comparison question by question",
            icon=":material/compare_arrows:",
            query_params={**st.session_state.get("_frame_query", {}), "base": vs, "cand": latest},
        )

# ---- One run: headline metrics with CIs.
st.subheader("Run")
run_id = st.selectbox("Run", ids, key="home_run", format_func=frame.label)
run = runs[run_id]
OverviewView.from_state(vs=vs).publish()

table, not_applicable = tables.present(data.summary(frame.fkey, run_id, None, frame.key))
left = st.container()  # the metrics full width: their words need the room
right = st.container()
with left:
    st.markdown(
        "**Headline metrics**",
        help="Mean per question with a bootstrap 95% CI; n = the questions a metric applies to; a slice "
        f"under {tables.SMALL} questions is marked small.",
    )
    st.caption(f"{count(run.results.height, 'question')} this run answered · test set {run.testset.version}")
    st.dataframe(
        tables.with_sources(run, table),
        hide_index=True,
        height=min(38 + 35 * table.height, 900),  # every metric visible, no scroll inside the table
        column_config={
            "plain": st.column_config.TextColumn("what it measures", width="large"),
            "mean": st.column_config.NumberColumn(format="%.3f"),
            "ci_low": st.column_config.NumberColumn("95% CI low", format="%.3f"),
            "ci_high": st.column_config.NumberColumn("95% CI high", format="%.3f"),
            "n": st.column_config.NumberColumn(
                "n", help="The questions the metric applies to (a retrieval metric needs labeled chunks)."
            ),
            "source": st.column_config.TextColumn("computed by"),
        },
    )
    if not_applicable:
        st.caption(
            "Not applicable to this run (no question of it has what they need), so not shown: "
            + md_escape(tables.why_not_applicable(not_applicable))
            + "."
        )
    standing = data.standing(frame.fkey, run_id, frame.key)
    for fix in standing.corrected:
        st.markdown(
            "**Corrected for the judge's measured error:** "
            + md_escape(str(fix[1]))
            + f" (session {md_escape(fix[0].name)})"
        )
    if standing.unmeasured:
        st.warning(
            md_escape(standing.unmeasured[0].upper() + standing.unmeasured[1:]), icon=":material/balance:"
        )
with right:
    st.markdown("**System**", help="As the run's run.json records it.")
    system = tables.system_shown(run)
    if system.height:
        st.dataframe(system, hide_index=True)
    else:
        st.caption("run.json records no system settings.")
    judge = tables.judge_text(run)
    st.markdown("**Judge:** " + (md_escape(judge) if judge else ":gray[not recorded in run.json]"))
    held = run.testset.n_heldout
    if held:
        st.caption(
            f"Means include {count(held, 'held-out question')}; per-question views hide them by default."
        )
    unlabeled = run.testset.n_unlabeled
    if unlabeled:
        st.caption(
            f"{count(unlabeled, 'answerable question')} {agree(unlabeled, 'has', 'have')} no labeled chunk yet: their answers are scored, their "
            "retrieval is not (see n per metric)."
        )

if many:  # started only now, so what changed and the run above were not kept waiting for the CPU
    backfill = data.trend_means(frame.fkey, tuple(ids), frame.key)
    frame.rerun_if_a_run_failed()
pending_at_start = backfill.pending


@st.fragment(run_every=TREND_POLL if pending_at_start else None)
def across_runs() -> None:
    """The runs table and the trend, redrawn every few seconds while runs are still being scored."""
    if pending_at_start and not backfill.pending:
        st.rerun()  # all scored: the whole page once more (the folder's problems, no more polling)
    st.subheader("Runs")
    st.dataframe(data.overview_table(frame.fkey, tuple(ids), frame.key), hide_index=True)
    if len(ids) < 2:  # a trend of one point says nothing: the section comes with the second run
        return

    st.subheader("Across runs")
    metric_options = table["metric"].to_list()
    chosen = st.multiselect(
        "Metrics", metric_options, default=tables.chart_defaults(metric_options), key="home_trend"
    )
    if frame.group is not None and len(frame.group.versions) > 1:
        st.caption(
            f"These runs answered {len(frame.group.versions)} versions of the test set: each point is a mean over "
            "the questions of its own version (Compare pairs the unchanged ones)."
        )
    mixed_judges = tables.judges_note([frame.entries[r] for r in ids])
    if mixed_judges:
        st.warning(md_escape(mixed_judges), icon=":material/gavel:")
    series = tables.trend_series(data.trend_table(frame.fkey, tuple(ids), tuple(chosen), frame.key), chosen)
    if not series:
        st.info("No metric to chart: pick one above that these runs have.")
    else:
        st.plotly_chart(trend_chart(series, ids), key="trend_chart")
    if backfill.pending:
        st.caption(
            f"Scoring {count(backfill.pending, 'more run')} of {backfill.total} for this chart in the background "
            "(runs never seen before); the chart fills in as they finish."
        )


across_runs()
