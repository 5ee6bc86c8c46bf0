"""The Signals page's data: production logs found beside the runs (or at ``$RAGTRIAGE_LOGS``), read
and analysed by evalcore.signals, cached by file; reviews and promotions go to the store."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import polars as pl
import streamlit as st

from dashboard.data import Key, entries, store
from dashboard.data import runs as runs_of
from evalcore.judge import JudgeConfig
from evalcore.signals import (
    NAME_DETECTOR,
    Alert,
    Log,
    Redaction,
    case_for,
    create_review,
    daily_counts,
    detect,
    feedback_reasons,
    history_note,
    keyword_found_nothing,
    low_top_scores,
    no_answer_series,
    promote,
    read_log,
    redact,
)
from evalcore.testset import accepted, chunk_texts, write_accepted

__all__ = ["NAME_DETECTOR", "case_for"]


def log_files(folder: Path) -> dict[str, Path]:
    """Logs by file name: ``$RAGTRIAGE_LOGS`` (a file or a folder), else ``logs/*.jsonl`` in the runs
    folder. A link names a log by file name, checked against this list."""
    env = os.environ.get("RAGTRIAGE_LOGS")
    where = Path(env) if env else folder / "logs"
    files = [where] if where.is_file() else sorted(where.glob("*.jsonl")) if where.is_dir() else []
    return {p.name: p for p in files}


def where_logs_go(folder: Path) -> str:
    env = os.environ.get("RAGTRIAGE_LOGS")
    return env or str(folder / "logs")


@st.cache_resource(show_spinner="Reading the log…", max_entries=4)
def log(path: str, stamp: tuple[int, int]) -> Log:
    return read_log(path)


def load_log(path: Path) -> Log:
    s = path.stat()
    return log(str(path), (s.st_mtime_ns, s.st_size))


@st.cache_data(show_spinner=False, max_entries=8)
def analysis(path: str, stamp: tuple[int, int], every: str) -> dict[str, Any]:
    lg = log(path, stamp)
    series = no_answer_series(lg.interactions, every)
    low, threshold = low_top_scores(lg.interactions)
    return {
        "series": series,
        "alerts": detect(series),
        "history": history_note(series),
        "low": low,
        "threshold": threshold,
        "keyword": keyword_found_nothing(lg.interactions),
        "counts": daily_counts(lg.interactions, every),
        "reasons": feedback_reasons(lg.interactions),
    }


def analyse(path: Path, every: str) -> dict[str, Any]:
    s = path.stat()
    return analysis(str(path), (s.st_mtime_ns, s.st_size), every)


def alert_marks(series: pl.DataFrame, alerts: list[Alert]) -> pl.DataFrame:
    days = {a.start for a in alerts}
    return series.filter(pl.col("start").dt.strftime("%Y-%m-%d").is_in(list(days)))


SHOWN = ["line", "time", "conversation_id", "question", "answer", "top_score", "keyword_hits", "thumb"]


def listing(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.select([c for c in SHOWN if c in frame.columns])


def has_line(lg: Log, line: int) -> bool:
    return bool(lg.interactions.filter(pl.col("line") == line).height)


def conversation(lg: Log, line: int) -> tuple[dict[str, Any], pl.DataFrame]:
    row = lg.interactions.filter(pl.col("line") == line).row(0, named=True)
    return row, lg.retrieved.filter(pl.col("line") == line).sort("rank")


@st.cache_data(show_spinner=False, max_entries=4)
def texts_from_runs(folder: str, run_ids: tuple[str, ...], key: Key) -> dict[str, str]:
    return chunk_texts(r.retrieved for r in runs_of(folder, run_ids, key).values())


def redaction(text: str) -> Redaction:
    return redact(text)


def start_review(
    lg: Log,
    name: str,
    n: int,
    per_item: int,
    texts: dict[str, str],
    *,
    judged: bool = False,
    api_key: str | None = None,
) -> None:
    judge = JudgeConfig() if judged else None
    create_review(store(), lg, name, n, texts=texts, labels_per_item=per_item, judge=judge, api_key=api_key)


def queue(testset_sha: str, case: dict[str, Any], by: str, original: str) -> int:
    return promote(store(), testset_sha, case, by=by, original=original)


def pending(testset: Path) -> int:
    return len(accepted(store(), testset))


def write_version(testset: Path, by: str) -> tuple[Path, str, int]:
    return write_accepted(store(), testset, by=by)


def testset_of(frame: Any) -> Any:
    return entries(frame.fkey, frame.key)[frame.run_ids[-1]].testset


def values_of(ts: Any, column: str) -> list[str]:
    return sorted(ts.cases[column].unique().to_list())


def promotion_choices(lg: Log, limit: int = 500, keep: int | None = None) -> dict[int, str]:
    """line -> label, the likeliest failures first: thumbs down, then declined, then weakest retrieval
    (the first ``limit``, and line ``keep`` — the one a link names — wherever it ranks)."""
    df = lg.interactions.with_columns((pl.col("thumb") == "down").fill_null(False).alias("_down")).sort(
        ["_down", "abstained", "top_score"], descending=[True, True, False], nulls_last=True
    )
    out = {}
    shown = df.head(limit)
    if keep is not None and keep not in shown["line"]:
        shown = pl.concat([df.filter(pl.col("line") == keep), shown])
    for row in shown.iter_rows(named=True):
        flag = "👎 " if row["_down"] else "declined · " if row["abstained"] else ""
        out[row["line"]] = f"{flag}{row['conversation_id']} · {row['question'][:90]}"
    return out


def span(lg: Log) -> str:
    t = lg.interactions["time"].dt.strftime("%Y-%m-%d").to_list()
    return f"{min(t)} to {max(t)}" if t else "no usable line"


def chunk_choices(retrieved: pl.DataFrame, frame: Any) -> list[str]:
    """The chunks a person may label relevant: those retrieved, then every other chunk id the runs
    of this test set know (the right chunk is often the one that was not retrieved)."""
    got = retrieved["chunk_id"].to_list()
    known = texts_from_runs(frame.fkey, tuple(frame.run_ids), frame.key) if frame.run_ids else {}
    return got + sorted(set(known) - set(got))
