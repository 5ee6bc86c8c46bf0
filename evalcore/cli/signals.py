"""The production signals command."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import polars as pl

from evalcore.cli.common import (
    EXIT_FAIL,
    EXIT_OK,
    STORE_HELP,
    open_store,
    print_problems,
    usage_error,
)
from evalcore.words import count


def cmd_signals(args: argparse.Namespace) -> int:
    from evalcore.signals.alerts import (
        detect,
        history_note,
        keyword_found_nothing,
        low_top_scores,
        no_answer_series,
    )
    from evalcore.signals.logs import read_log

    target = Path(args.log)
    from evalcore.signals.volume import is_partitioned

    if is_partitioned(target):
        return _partitioned(target, args)
    files = sorted(target.glob("*.jsonl")) if target.is_dir() else [target]
    if not files:
        return usage_error(f"{target} holds no .jsonl log")
    if not target.exists():
        return usage_error(f"{target} does not exist")
    status = EXIT_OK
    report = []
    for path in files:
        log = read_log(path)
        print_problems(log.problems)
        df = log.interactions
        series = no_answer_series(df, args.every)
        alerts = detect(series)
        low, threshold = low_top_scores(df)

        logged = {c for c in ("thumb", "keyword_hits") if df.height and df[c].null_count() < df.height}
        thumbs = (
            {"up": int((df["thumb"] == "up").sum()), "down": int((df["thumb"] == "down").sum())}
            if "thumb" in logged
            else None
        )
        keyword = keyword_found_nothing(df).height if "keyword_hits" in logged else None
        note = history_note(series) if df.height else None
        report.append(
            {
                "log": str(path),
                "questions": df.height,
                "bad_lines": log.bad_lines,
                "alerts": [a.__dict__ | {"message": a.message()} for a in alerts],
                "history": note,
                "no_answer": series.to_dicts(),
                "low_top_score": {"threshold": threshold, "questions": low.height},
                "keyword_found_nothing": keyword,
                "thumbs": thumbs,
            }
        )
        if alerts or not df.height:
            status = EXIT_FAIL if args.fail_on_alert else status
        if args.format == "json":
            continue
        print(f"{path}: {count(df.height, 'question')} read, {count(log.bad_lines, 'bad line')} left out")
        if not df.height:
            print("  no usable question: an empty log usually means logging broke")
            continue
        rate = float(df.select(pl.col("abstained").mean()).item() or 0.0)
        print(
            f"  no-answer rate {rate:.1%} overall; "
            + (f"thumbs up {thumbs['up']}, down {thumbs['down']}; " if thumbs else "thumbs: not logged; ")
            + (
                f"weakest retrievals (top score <= {threshold:.3g}): {low.height}; "
                if threshold is not None
                else "weakest retrievals: too few scored questions; "
            )
            + (
                f"keyword search found nothing: {keyword}"
                if keyword is not None
                else "keyword_hits: not logged"
            )
        )
        for a in alerts:
            print(f"  ALERT {a.message()}")
        if not alerts:
            print(
                f"  no alert: {note}"
                if note
                else "  no alert: the no-answer rate moved within its usual noise"
            )
    if args.format == "json":
        print(json.dumps(report[0] if len(report) == 1 else report, indent=1, default=str))
    return status


def _partitioned(root: Path, args: argparse.Namespace) -> int:
    """A day-partitioned log (``day=YYYY-MM-DD/``): hourly summaries from the store where a day was
    read before, new or changed days read (streaming); the same series and alerts as a whole log."""
    from evalcore.signals.alerts import detect, history_note
    from evalcore.signals.volume import hourly, no_answer_series_from

    with open_store(args.store) as store:
        got = hourly(root, store)
    h = got.hourly
    series = no_answer_series_from(h, args.every)
    alerts = detect(series)
    questions = int(h["questions"].sum())
    up, down = int(h["up"].sum()), int(h["down"].sum())
    report = {
        "log": str(root),
        "questions": questions,
        "days_read": got.read,
        "days_from_store": len(got.kept),
        "alerts": [a.__dict__ | {"message": a.message()} for a in alerts],
        "history": history_note(series) if questions else None,
        "no_answer": series.to_dicts(),
        "thumbs": {"up": up, "down": down},
        "keyword_found_nothing": int(h["keyword_zero"].sum()),
    }
    status = EXIT_FAIL if args.fail_on_alert and (alerts or not questions) else EXIT_OK
    if args.format == "json":
        print(json.dumps(report, indent=1, default=str))
        return status
    print(
        f"{root}: {count(questions, 'question')} in {count(len(got.read) + len(got.kept), 'day')} "
        f"({count(len(got.read), 'day')} read now, {len(got.kept)} summarised before)"
    )
    rate = int(h["no_answer"].sum()) / questions if questions else 0.0
    print(f"  no-answer rate {rate:.1%} overall; thumbs up {up}, down {down}")
    for a in alerts:
        print(f"  ALERT {a.message()}")
    if not alerts:
        note = report["history"]
        print(
            f"  no alert: {note}" if note else "  no alert: the no-answer rate moved within its usual noise"
        )
    return status


def add_parsers(sub: Any) -> None:
    """This group's subcommands."""
    s = sub.add_parser(
        "signals", help="a production log: bad lines, the no-answer rate and its alerts, weak retrievals"
    )
    s.add_argument("log", help="the log (JSON Lines; docs/signals.md), or a folder of them")
    s.add_argument(
        "--every", default="1d", choices=["1h", "6h", "1d", "1w"], help="the period of the no-answer rate"
    )
    s.add_argument(
        "--fail-on-alert",
        action="store_true",
        help="exit 1 on an alert or an empty log (for a scheduled job)",
    )
    s.add_argument("--format", choices=["table", "json"], default="table")
    s.add_argument("--store", help=STORE_HELP + "; keeps the hourly summaries of a day-partitioned log")
    s.set_defaults(func=cmd_signals)
