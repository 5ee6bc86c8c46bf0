"""Reading a production log (JSON Lines, :class:`evalcore.schema.LogRecord`) into polars.

Bad lines are reported with their line number and field and left out — never fatal: a log is
written by a running product, and one truncated line must not hide a day of traffic. A plainly
valid log is read whole by pyarrow's multi-threaded JSON reader with the log's schema, into polars
(a million lines in seconds: benchmarks/bench_signals.py); when it refuses the file, the lines are
checked one by one (JSON syntax with orjson, then — only if types are still wrong — the schema
with pydantic) and the good ones read whole after all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl
from pyarrow import ArrowException as ArrowError
from pydantic import ValidationError

from evalcore.cache import file_sha256
from evalcore.errors import Problem, Problems
from evalcore.metrics.refusal import REFUSAL_PATTERN
from evalcore.runs.jsonl import field_path
from evalcore.schema import LogRecord
from evalcore.words import count

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


def _arrow_schema() -> Any:
    import pyarrow as pa

    chunk = pa.struct([(k, pa.float64() if k == "score" else pa.string()) for k in CHUNK.to_schema()])
    fields = {
        "retrieved": pa.list_(chunk),
        "abstained": pa.bool_(),
        "keyword_hits": pa.int64(),
        "feedback": pa.struct([("thumb", pa.string()), ("reason", pa.string())]),
        "behaviour": pa.struct([(b, pa.bool_()) for b in BEHAVIOURS]),
    }
    return pa.schema([(k, fields.get(k, pa.string())) for k in RAW_SCHEMA])


def _frame(source: Path | bytes, lines: list[int] | None) -> pl.DataFrame:
    """Read JSON Lines with pyarrow's multi-threaded reader and the log's schema (types checked
    strictly: a string where a number belongs is an error, not a silent null). ``lines``: each
    row's line number (None: row n is line n)."""
    import pyarrow as pa
    import pyarrow.json as pj

    opts = pj.ParseOptions(explicit_schema=_arrow_schema(), unexpected_field_behavior="ignore")
    src = pa.BufferReader(source) if isinstance(source, bytes) else str(source)
    df = pl.from_arrow(pj.read_json(src, parse_options=opts))
    assert isinstance(df, pl.DataFrame)
    numbers = (
        pl.Series("line", lines, dtype=pl.Int64)
        if lines is not None
        else pl.int_range(1, df.height + 1, eager=True)
    )
    return df.with_columns(numbers.alias("line"))


def _plain_lines(path: Path) -> int | None:
    """The number of lines if every line has content (then row n of a whole-file read is line n),
    else None. Read in blocks: a large log is never held twice in memory."""
    n, last, first = 0, b"\n", True
    with path.open("rb") as fh:
        while block := fh.read(1 << 24):
            if first and block[:1] in (b"\n", b"\r"):
                return None
            first = False
            if b"\n\n" in block or (last == b"\n" and block[:1] == b"\n") or b"\n\r\n" in block:
                return None
            n += block.count(b"\n")
            last = block[-1:]
    if n == 0 and last == b"\n":
        return None  # an empty file
    return n + (0 if last == b"\n" else 1)


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


def _line_by_line(path: Path, problems: Problems) -> tuple[bytes, list[int]]:
    """The lines that are JSON objects (re-joined) and their line numbers; the others reported."""
    import orjson

    keep: list[bytes] = []
    lines: list[int] = []
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                obj = orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                problems.error(path, f"not valid JSON: {str(exc).split(':')[0]}", line=lineno,
                               hint="each line must be one complete JSON object")  # fmt: skip
                continue
            if not isinstance(obj, dict):
                problems.error(path, "not a JSON object", line=lineno, found=type(obj).__name__)
                continue
            keep.append(raw.rstrip(b"\r\n"))
            lines.append(lineno)
    return b"\n".join(keep), lines


def _schema_checked(data: bytes, lines: list[int], path: Path, problems: Problems) -> tuple[bytes, list[int]]:
    """Lines that break the schema's types (a string where a number belongs...), named by pydantic;
    only when the whole read refused them."""
    keep: list[bytes] = []
    kept: list[int] = []
    for lineno, raw in zip(lines, data.split(b"\n"), strict=True):
        try:
            LogRecord.model_validate_json(raw)
        except ValidationError as exc:
            for err in exc.errors()[:3]:
                problems.error(path, err["msg"], line=lineno, field=field_path(err["loc"]))
            continue
        keep.append(raw)
        kept.append(lineno)
    return b"\n".join(keep), kept


def _one_by_one(data: bytes, lines: list[int], path: Path, problems: Problems) -> pl.DataFrame | None:
    frames = []
    for lineno, raw in zip(lines, data.split(b"\n"), strict=True):
        try:
            frames.append(_frame(raw, [lineno]))
        except ArrowError as exc:
            problems.error(path, f"a value of the wrong type: {str(exc).splitlines()[0][:120]}", line=lineno)
    return pl.concat(frames) if frames else None


def read_log(path: str | Path) -> Log:
    """Read a production log; never raises on bad lines (they are in ``Log.problems``). Raises
    :class:`OSError` only when the file cannot be read at all."""
    path = Path(path)
    problems = Problems()
    frame = None
    n = _plain_lines(path)
    if n:
        try:  # fast path: one multi-threaded read of the whole file, line numbers are row numbers
            frame = _frame(path, None)
            if frame.height != n:
                frame = None
        except ArrowError:
            frame = None
    if frame is None:
        good, lines = _line_by_line(path, problems)
        try:
            frame = _frame(good, lines) if lines else None
        except ArrowError:
            good, lines = _schema_checked(good, lines, path, problems)
            try:
                frame = _frame(good, lines) if lines else None
            except ArrowError:  # a type pydantic accepts and the reader does not (a number as a time)
                frame = _one_by_one(good, lines, path, problems)
    if frame is None:
        frame = pl.DataFrame(schema={**RAW_SCHEMA, "line": pl.Int64})
    interactions = _checked(frame, path, problems)
    if frame.is_empty() and not problems.errors:
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
        listed.append(Problem(str(path), f"... and {count(len(errors) - MAX_REPORTED, 'more problem')}"))
    return Log(
        path=path,
        sha256=file_sha256(path),
        interactions=interactions.drop("retrieved"),
        retrieved=retrieved,
        problems=listed,
        bad_lines=bad_lines,
    )
