"""Reading a production log (JSON Lines, :class:`evalcore.schema.LogRecord`) into polars.

Bad lines are reported with their line number and field and left out — never fatal: a log is
written by a running product, and one truncated line must not hide a day of traffic. A plainly
valid log is read whole by polars (a million lines in seconds); when polars refuses it, the lines
are checked one by one (JSON syntax, then the schema) and the good ones read by polars after all.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl
from pydantic import ValidationError

from evalcore.errors import Problem, Problems
from evalcore.metrics.refusal import REFUSAL_PATTERN
from evalcore.runs.jsonl import field_path
from evalcore.runs.testset import file_sha256
from evalcore.schema import LogRecord

CHUNK = pl.Struct(
    {"chunk_id": pl.String, "score": pl.Float64, "source": pl.String, "doc_id": pl.String, "text": pl.String}
)
RAW_SCHEMA: dict[str, Any] = {
    "conversation_id": pl.String,
    "time": pl.String,
    "question": pl.String,
    "retrieved": pl.List(CHUNK),
    "answer": pl.String,
    "abstained": pl.Boolean,
    "keyword_hits": pl.Int64,
    "feedback": pl.Struct({"thumb": pl.String, "reason": pl.String}),
    "behaviour": pl.Struct(
        {
            "rephrased": pl.Boolean,
            "opened_source": pl.Boolean,
            "copied": pl.Boolean,
            "asked_for_person": pl.Boolean,
        }
    ),
}
BEHAVIOURS = ("rephrased", "opened_source", "copied", "asked_for_person")
MAX_REPORTED = 200  # problems listed one by one; the rest are counted


@dataclass(frozen=True)
class Log:
    """A read log: one row per good line (``line`` kept), their retrieved chunks, and the problems."""

    path: Path
    sha256: str
    interactions: pl.DataFrame
    retrieved: pl.DataFrame  # line, rank (1 = first), chunk_id, score, source, doc_id, text
    problems: list[Problem] = field(default_factory=list)
    bad_lines: int = 0

    @property
    def name(self) -> str:
        return self.path.name


def _frame(data: bytes, lines: list[int]) -> pl.DataFrame:
    df = pl.read_ndjson(io.BytesIO(data), schema=RAW_SCHEMA)
    return df.with_columns(pl.Series("line", lines, dtype=pl.Int64))


def _checked(df: pl.DataFrame, path: Path, problems: Problems) -> pl.DataFrame:
    """The vectorised rules polars cannot apply while reading: required text present, time parsed,
    thumb and scores sane. Rows that break one are reported and left out."""
    df = df.with_columns(
        pl.col("time").str.to_datetime(strict=False, time_zone="UTC", time_unit="us").alias("_t")
    )
    rules = [
        (
            "conversation_id",
            pl.col("conversation_id").fill_null("") == "",
            "missing or empty",
            "a conversation id",
        ),
        (
            "question",
            pl.col("question").fill_null("").str.strip_chars() == "",
            "missing or empty",
            "the question text",
        ),
        ("time", pl.col("_t").is_null(), "not an ISO 8601 time", "e.g. 2026-11-20T10:31:00Z"),
        (
            "feedback.thumb",
            pl.col("feedback").struct.field("thumb").is_not_null()
            & ~pl.col("feedback").struct.field("thumb").is_in(["up", "down"]),
            "not 'up' or 'down'",
            "'up', 'down' or left out",
        ),
    ]
    bad = pl.lit(False)
    for name, expr, what, expected in rules:
        hits = df.filter(expr)
        for line, value in hits.select("line", name.split(".")[0]).iter_rows():
            problems.error(path, f"{name} {what}", line=line, field=name, expected=expected,
                           found=None if value is None else str(value)[:60])  # fmt: skip
        bad = bad | expr
    good = df.filter(~bad)
    abstained = pl.coalesce(
        pl.col("abstained"),
        pl.col("answer").fill_null("").str.contains(REFUSAL_PATTERN) | pl.col("answer").is_null(),
    )
    return good.select(
        "line",
        "conversation_id",
        pl.col("_t").alias("time"),
        "question",
        "answer",
        abstained.alias("abstained"),
        pl.col("abstained").is_null().alias("abstained_inferred"),
        pl.col("retrieved").list.len().fill_null(0).alias("n_retrieved"),
        pl.col("retrieved").list.eval(pl.element().struct.field("score")).list.max().alias("top_score"),
        "keyword_hits",
        pl.col("feedback").struct.field("thumb").alias("thumb"),
        pl.col("feedback").struct.field("reason").alias("reason"),
        *[pl.col("behaviour").struct.field(b).alias(b) for b in BEHAVIOURS],
        "retrieved",
    )


def _line_by_line(data: bytes, path: Path, problems: Problems) -> tuple[bytes, list[int]]:
    """The lines that are valid JSON objects of the schema (re-joined) and their line numbers."""
    keep: list[bytes] = []
    lines: list[int] = []
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            problems.error(path, f"not valid JSON: {exc.msg if hasattr(exc, 'msg') else exc}", line=lineno,
                           hint="each line must be one complete JSON object")  # fmt: skip
            continue
        if not isinstance(obj, dict):
            problems.error(path, "not a JSON object", line=lineno, found=type(obj).__name__)
            continue
        try:
            LogRecord.model_validate(obj)
        except ValidationError as exc:
            for err in exc.errors()[:3]:
                problems.error(path, err["msg"], line=lineno, field=field_path(err["loc"]))
            continue
        keep.append(raw)
        lines.append(lineno)
    return b"\n".join(keep), lines


def read_log(path: str | Path) -> Log:
    """Read a production log; never raises on bad lines (they are in ``Log.problems``). Raises
    :class:`OSError` only when the file cannot be read at all."""
    path = Path(path)
    data = path.read_bytes()
    problems = Problems()
    frame = None
    if data.strip() and b"\n\n" not in data.strip() and not data.startswith(b"\n"):
        try:  # fast path: one polars read, line numbers are row numbers
            n = data.rstrip(b"\n").count(b"\n") + 1
            frame = _frame(data, list(range(1, n + 1)))
            if frame.height != n:
                frame = None
        except pl.exceptions.PolarsError:
            frame = None
    if frame is None:
        good, lines = _line_by_line(data, path, problems)
        frame = _frame(good, lines) if lines else pl.DataFrame(schema={**RAW_SCHEMA, "line": pl.Int64})
    interactions = _checked(frame, path, problems)
    if not data.strip():
        problems.error(path, "the log is empty", hint="one JSON object per line")
    retrieved = (
        interactions.select("line", "retrieved")
        .explode("retrieved")
        .drop_nulls("retrieved")
        .with_columns(pl.int_range(1, pl.len() + 1).over("line").alias("rank"))
        .unnest("retrieved")
    )
    errors = [p for p in problems if p.severity == "error"]
    bad_lines = len({p.line for p in errors if p.line is not None})
    listed = errors[:MAX_REPORTED]
    if len(errors) > MAX_REPORTED:
        listed.append(Problem(str(path), f"... and {len(errors) - MAX_REPORTED} more problem(s)"))
    return Log(
        path=path,
        sha256=file_sha256(path),
        interactions=interactions.drop("retrieved"),
        retrieved=retrieved,
        problems=listed,
        bad_lines=bad_lines,
    )
