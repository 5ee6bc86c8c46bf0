"""Audit: who did what in the store — labels, judge revisions and batches, sessions opened and
closed, candidates promoted and decided, money reserved and spent — and today's spending against the
budget. For admins (evalcore.access); `evalcore audit` exports the same log."""

from __future__ import annotations

import streamlit as st

from dashboard import audit
from dashboard.frame import setup
from dashboard.render import count

frame = setup("Audit", ":material/history_edu:", charts=False)
if not audit.allowed():
    st.error(audit.refusal(), icon=":material/lock:")
    st.stop()

spent = audit.spending()
st.subheader("Spent today")
if spent.height:
    st.dataframe(spent, hide_index=True, column_config=audit.DOLLARS)
else:
    st.caption("Nothing spent today (UTC).")
st.caption(audit.budget_text())

st.subheader("Who did what")
f1, f2 = st.columns(2)
actor = f1.selectbox(
    "Person", [None, *audit.actors()], format_func=lambda a: "anyone" if a is None else a, key="au_who"
)
action = f2.selectbox(
    "Action", [None, *audit.actions()], format_func=lambda a: "any" if a is None else a, key="au_action"
)
log = audit.log(actor, action)
st.caption(f"{count(log.height, 'write')}, newest first")
st.dataframe(log, hide_index=True)
st.download_button("Audit log as CSV", audit.csv(log), "ragtriage-audit.csv", "text/csv", key="au_csv")
