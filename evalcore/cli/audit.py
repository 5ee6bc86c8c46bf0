"""The audit log's export."""

from __future__ import annotations

import argparse
import json
from typing import Any

import polars as pl

from evalcore.cli.common import (
    EXIT_OK,
    FORMAT,
    STORE_HELP,
    open_store,
    render_table,
)
from evalcore.words import count


def cmd_audit(args: argparse.Namespace) -> int:
    """The store's audit log: who did what, when (an admin's read)."""
    with open_store(args.store) as store:
        rows = store.audit_log(actor=args.actor, action=args.action, since=args.since)
        where = store.path
    df = pl.DataFrame(
        [
            {
                "id": r.id,
                "when": r.created[:19],
                "who": r.actor,
                "role": r.role,
                "action": r.action,
                "target": r.target,
                "detail": json.dumps(r.detail, ensure_ascii=False, sort_keys=True),
            }
            for r in rows
        ],
        schema={
            "id": pl.Int64,
            "when": pl.String,
            "who": pl.String,
            "role": pl.String,
            "action": pl.String,
            "target": pl.String,
            "detail": pl.String,
        },
    )  # FORMAT: skip
    if args.format == "table":
        print(f"{count(df.height, 'audit row')} in {where}")
        if not df.height:
            return EXIT_OK
    print(render_table(df, args.format))
    return EXIT_OK


def add_parsers(sub: Any) -> None:
    """This group's subcommands."""
    s = sub.add_parser(
        "audit", help="who did what in the store: labels, revisions, batches, sessions, spending"
    )
    s.add_argument("--store", help=STORE_HELP)
    s.add_argument("--actor", help="only this person's writes (an e-mail address)")
    s.add_argument("--action", help="only this action (label, revision, batch, create_session, reserve, …)")
    s.add_argument("--since", help="only writes at or after this time (ISO 8601, UTC: 2026-12-01)")
    s.add_argument("--format", **FORMAT)
    s.set_defaults(func=cmd_audit)
