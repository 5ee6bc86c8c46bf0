"""The Audit page's reads: the store's audit log and today's spending, as tables (the store decides
who may read them)."""

from __future__ import annotations

import json
from typing import Any

import polars as pl
import streamlit as st

from dashboard import auth
from dashboard.data import store
from evalcore.access import ACTIONS, DOING, article

DOLLARS: dict[str, Any] = {"dollars": st.column_config.NumberColumn(format="$%.2f")}


def allowed() -> bool:
    return auth.may("audit")


def refusal() -> str:
    who = auth.current()
    return f"The audit log is for admins: {who.email} is {article(who.role)} ({ACTIONS['audit']} needed to {DOING['audit']})."


def log(actor: str | None = None, action: str | None = None) -> pl.DataFrame:
    rows = store().audit_log(actor=actor, action=action)
    return pl.DataFrame(
        [
            {
                "when (UTC)": r.created[:19].replace("T", " "),
                "who": r.actor,
                "role": r.role,
                "action": r.action,
                "target": r.target,
                "detail": json.dumps(r.detail, ensure_ascii=False, sort_keys=True),
            }
            for r in reversed(rows)
        ],
        schema={c: pl.String for c in ("when (UTC)", "who", "role", "action", "target", "detail")},
    )


def actors() -> list[str]:
    return sorted({r.actor for r in store().audit_log()})


def actions() -> list[str]:
    return sorted({r.action for r in store().audit_log()})


def spending() -> pl.DataFrame:
    spent = store().spent_today()
    return pl.DataFrame(
        {"who": list(spent), "dollars": list(spent.values())},
        schema={"who": pl.String, "dollars": pl.Float64},
    ).sort("dollars", descending=True)


def budget_text() -> str:
    b = store().budget
    person = "no limit" if b.person is None else f"${b.person:.2f}"
    deployment = "no limit" if b.deployment is None else f"${b.deployment:.2f}"
    return f"Daily budget (UTC, from the access file): {person} a person, {deployment} for the deployment."


def csv(frame: pl.DataFrame) -> str:
    return frame.write_csv()
