"""Production logs at volume: day-partitioned Parquet or JSON Lines (the hive layout,
``LOGS/day=2026-11-19/part-0.parquet``), read lazily with polars' streaming engine, summarised per
hour, and the summaries kept in the store so a day already read is not read again — only new or
changed partitions are.

The no-answer series and its alerts are computed from the hourly summaries; they are the same
figures as from the whole log read at once (``tests/signals/test_volume.py`` holds them equal), since
every period the alerts use (1h, 6h, 1d, 1w) is a whole number of hours.

Reading a partition keeps only four columns in memory per batch (time, answer/abstained, the
feedback thumb, keyword hits), so peak memory does not grow with the log:
``benchmarks/bench_signals.py --volume`` measures 1,000,000 JSON Lines, 10,000,000 Parquet rows and
100,000,000 rows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from evalcore.metrics.refusal import REFUSAL_PATTERN
from evalcore.paths import literal
from evalcore.store.summaries import COLUMNS

DAY = re.compile(r"^day=(\d{4}-\d{2}-\d{2})$")
FORMATS = (".parquet", ".jsonl")


@dataclass(frozen=True)
class Partition:
    day: str
    path: Path  # the day's folder
    files: tuple[Path, ...]

    @property
    def fingerprint(self) -> str:
        """Every file's name, size and modification time: a rewritten or added file changes it."""
        return ";".join(f"{f.name}:{f.stat().st_size}:{f.stat().st_mtime_ns}" for f in self.files)


def is_partitioned(root: str | Path) -> bool:
    root = Path(root)
    return root.is_dir() and any(DAY.match(p.name) for p in root.iterdir() if p.is_dir())


def partitions(root: str | Path) -> list[Partition]:
    """The ``day=YYYY-MM-DD`` folders under ``root`` with their Parquet or JSON Lines files, by day."""
    out = []
    for p in sorted(Path(root).iterdir()):
        m = DAY.match(p.name)
        if p.is_dir() and m:
            files = tuple(sorted(f for f in p.iterdir() if f.suffix in FORMATS and f.is_file()))
            if files:
                out.append(Partition(m.group(1), p, files))
    return out


def _scan(files: tuple[Path, ...]) -> pl.LazyFrame:
    """The columns a summary needs, lazily (Parquet: only those columns are read)."""
    frames = []
    for f in files:
        if f.suffix == ".parquet":
            lf = pl.scan_parquet(literal(f))
        else:
            lf = pl.scan_ndjson(
                literal(f),
                schema={
                    "time": pl.String,
                    "answer": pl.String,
                    "abstained": pl.Boolean,
                    "keyword_hits": pl.Int64,
                    "feedback": pl.Struct({"thumb": pl.String}),
                },
            )
        names = lf.collect_schema().names()
        cols = [
            pl.col("time").cast(pl.String) if "time" in names else pl.lit(None, pl.String).alias("time"),
            pl.col("answer") if "answer" in names else pl.lit(None, pl.String).alias("answer"),
            pl.col("abstained") if "abstained" in names else pl.lit(None, pl.Boolean).alias("abstained"),
            pl.col("keyword_hits")
            if "keyword_hits" in names
            else pl.lit(None, pl.Int64).alias("keyword_hits"),
            pl.col("feedback").struct.field("thumb").alias("thumb")
            if "feedback" in names
            else pl.lit(None, pl.String).alias("thumb"),
        ]
        frames.append(lf.select(cols))
    return pl.concat(frames, how="vertical_relaxed")


def summarise(files: tuple[Path, ...]) -> pl.DataFrame:
    """Per hour (UTC): questions, declined (the same rule as :func:`evalcore.signals.logs.read_log`:
    ``abstained`` where logged, else a refusal opening the answer or no answer), thumbs up and down,
    and keyword searches that found nothing. Streams; rows with no readable time are left out."""
    abstained = pl.coalesce(
        pl.col("abstained"),
        pl.col("answer").fill_null("").str.contains(REFUSAL_PATTERN) | pl.col("answer").is_null(),
    )
    return (
        _scan(files)
        .with_columns(t=pl.col("time").str.to_datetime(strict=False, time_zone="UTC", time_unit="us"))
        .filter(pl.col("t").is_not_null())
        .group_by(pl.col("t").dt.truncate("1h").alias("hour"))
        .agg(
            pl.len().alias("questions"),
            abstained.sum().alias("no_answer"),
            (pl.col("thumb") == "up").sum().alias("up"),
            (pl.col("thumb") == "down").sum().alias("down"),
            (pl.col("keyword_hits") == 0).sum().alias("keyword_zero"),
        )
        .sort("hour")
        .collect(engine="streaming")
    )


@dataclass(frozen=True)
class Summaries:
    hourly: pl.DataFrame  # hour, questions, no_answer, up, down, keyword_zero
    read: list[str]  # days read now
    kept: list[str]  # days whose summary the store already had


def hourly(root: str | Path, store: Any = None) -> Summaries:
    """Every partition's hourly summary: from ``store`` where it holds one for the partition as it
    is now, else read (and kept there)."""
    root = Path(root)
    source = str(root.resolve())
    parts: list[pl.DataFrame] = []
    read, kept = [], []
    local = partitions(root) if root.is_dir() else []
    for p in local:
        key = p.path.relative_to(root).as_posix()
        fp = p.fingerprint
        have = store.log_summary(source, key) if store is not None else None
        if have is not None and have[0] == fp:
            parts.append(_frame(have[1]))
            kept.append(p.day)
        else:
            frame = summarise(p.files)
            if store is not None:
                rows = [
                    (h.isoformat(), int(q), int(n), int(u), int(d), int(k))
                    for h, q, n, u, d, k in frame.select(COLUMNS).iter_rows()
                ]
                store.put_log_summary(str(root.resolve()), key, fp, rows)
            read.append(p.day)
            parts.append(frame.select(pl.col("hour"), *[pl.col(c).cast(pl.Int64) for c in COLUMNS[1:]]))
    # Days summarised elsewhere (a warehouse's GROUP BY, docs/scale.md) whose files are not here.
    here = {p.path.relative_to(root).as_posix() for p in local}
    for key in store.log_summary_parts(source) if store is not None else []:
        have = store.log_summary(source, key)
        if key not in here and have is not None:
            parts.append(_frame(have[1]))
            kept.append(key.removeprefix("day="))
    empty = pl.DataFrame(schema={"hour": pl.Datetime("us", "UTC"), **dict.fromkeys(COLUMNS[1:], pl.Int64)})
    frame = pl.concat(parts) if parts else empty
    # Two partitions can hold the same hour (a late file): their counts add up.
    frame = frame.group_by("hour").agg(pl.col(COLUMNS[1:]).sum()).sort("hour")
    return Summaries(frame, read, kept)


def _frame(rows: list[tuple[Any, ...]]) -> pl.DataFrame:
    """A partition's hourly rows from the store (an empty partition's placeholder row left out)."""
    return pl.DataFrame(
        [r for r in rows if r[0]],
        schema={"hour": pl.String} | dict.fromkeys(COLUMNS[1:], pl.Int64),
        orient="row",
    ).with_columns(pl.col("hour").str.to_datetime(time_zone="UTC", time_unit="us"))


def no_answer_series_from(hourly_frame: pl.DataFrame, every: str = "1d") -> pl.DataFrame:
    """:func:`evalcore.signals.alerts.no_answer_series` from hourly summaries: the same periods and
    counts as from the whole log."""
    return (
        hourly_frame.sort("hour")
        .group_by_dynamic("hour", every=every, label="left")
        .agg(pl.col("questions").sum(), pl.col("no_answer").sum())
        .rename({"hour": "start"})
        .with_columns((pl.col("no_answer") / pl.col("questions")).alias("rate"))
    )
