"""ragtriage dashboard — home page: the runs found, their problems, and each run's headline metrics.

    streamlit run app.py                    # the embedded sample_runs/
    streamlit run app.py -- --runs DIR      # your own runs (or RAGTRIAGE_RUNS=DIR)
"""

from __future__ import annotations

import streamlit as st

from dashboard.data import fingerprint, headline, load, overview_table, runs_folder

st.set_page_config(page_title="ragtriage", page_icon=":material/troubleshoot:", layout="wide")
st.title("ragtriage")
folder = runs_folder()
st.caption(f"Runs folder: `{folder}`")

result = load(folder)
if result.problems:
    with st.expander(f"{len(result.problems)} problem(s) in the runs folder — the other runs still load", expanded=bool(result.errors)):
        for p in result.problems:
            (st.error if p.severity == "error" else st.warning)(str(p), icon=":material/error:")

if not result.runs:
    st.info("No run loaded. Point the dashboard at a folder of runs: `streamlit run app.py -- --runs DIR`.")
    st.stop()

st.subheader("Runs")
st.dataframe(overview_table(result), hide_index=True)

run_id = st.selectbox("Run", list(result.runs), index=len(result.runs) - 1,
                      format_func=lambda r: result.runs[r].label, key="run")
table = headline(str(folder), run_id, fingerprint(folder))
st.subheader("Headline metrics")
st.dataframe(table.drop("slice"), hide_index=True, column_config={
    "mean": st.column_config.NumberColumn(format="%.3f"),
    "ci_low": st.column_config.NumberColumn("95% CI low", format="%.3f"),
    "ci_high": st.column_config.NumberColumn("95% CI high", format="%.3f"),
    "small": st.column_config.CheckboxColumn("small slice"),
})
