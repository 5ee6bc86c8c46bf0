"""Logs at volume: a day-partitioned log (hive layout, Parquet and JSON Lines days mixed) gives the
same no-answer series and alerts as the whole log read at once; a day already summarised is not read
again, and a changed day is."""

from __future__ import annotations

import io
import json
import os
from collections import defaultdict
from pathlib import Path

import polars as pl
import pytest

from evalcore.cli import main
from evalcore.signals.alerts import detect, no_answer_series
from evalcore.signals.logs import RAW_SCHEMA, read_log
from evalcore.signals.volume import hourly, no_answer_series_from
from evalcore.store import Store
from helpers import SAMPLE

LOG = SAMPLE / "logs" / "production.jsonl"


def _partitioned(root: Path, lines: list[str]) -> Path:
    """The log split by UTC day into day=YYYY-MM-DD/ folders, odd days as Parquet, even as JSON Lines."""
    by_day: dict[str, list[str]] = defaultdict(list)
    for line in lines:
        by_day[json.loads(line)["time"][:10]].append(line)
    for n, (day, day_lines) in enumerate(sorted(by_day.items())):
        folder = root / f"day={day}"
        folder.mkdir(parents=True)
        if n % 2:
            frame = pl.read_ndjson(io.BytesIO("\n".join(day_lines).encode()), schema=RAW_SCHEMA)
            frame.write_parquet(folder / "part-0.parquet")
        else:
            (folder / "part-0.jsonl").write_text("\n".join(day_lines) + "\n")
    return root


def _incident(lines: list[str]) -> list[str]:
    """The sample log with its last day's answers turned into refusals: a rise the alerts catch."""
    last = max(json.loads(line)["time"][:10] for line in lines)
    out = []
    for line in lines:
        rec = json.loads(line)
        if rec["time"][:10] == last:
            rec["answer"] = "I don't know."
            rec.pop("abstained", None)
        out.append(json.dumps(rec))
    return out


@pytest.mark.parametrize("every", ["1h", "6h", "1d", "1w"])
def test_the_figures_are_the_same_read_whole_or_day_by_day(tmp_path: Path, every: str) -> None:
    lines = _incident(LOG.read_text().splitlines())
    whole = tmp_path / "whole.jsonl"
    whole.write_text("\n".join(lines) + "\n")
    root = _partitioned(tmp_path / "logs", lines)
    series_whole = no_answer_series(read_log(whole).interactions, every)
    series_days = no_answer_series_from(hourly(root).hourly, every)
    assert series_days.select("start", "questions", "no_answer").equals(
        series_whole.select("start", "questions", "no_answer")
    )
    assert detect(series_days) == detect(series_whole)
    if every == "1d":
        last_day = max(json.loads(line)["time"][:10] for line in lines)
        last = detect(series_days)[-1]
        assert (last.kind, last.start) == ("rise", last_day), "the incident day is caught either way"


def test_a_day_summarised_before_is_not_read_again_and_a_changed_day_is(tmp_path: Path) -> None:
    lines = LOG.read_text().splitlines()
    root = _partitioned(tmp_path / "logs", lines)
    with Store(tmp_path / "store.sqlite") as store:
        first = hourly(root, store)
        assert len(first.read) == 28 and first.kept == []
        again = hourly(root, store)
        assert again.read == [] and len(again.kept) == 28
        assert again.hourly.equals(first.hourly), "the store's summaries are the figures read"
        # A late file lands in one day: only that day is read again, and its questions count.
        day = sorted(p.name for p in root.iterdir())[3]
        late = json.loads(lines[0]) | {
            "time": day.removeprefix("day=") + "T23:59:00Z",
            "conversation_id": "late",
        }
        (root / day / "part-1.jsonl").write_text(json.dumps(late) + "\n")
        third = hourly(root, store)
        assert third.read == [day.removeprefix("day=")] and len(third.kept) == 27
        assert int(third.hourly["questions"].sum()) == int(first.hourly["questions"].sum()) + 1


def test_evalcore_signals_reads_a_partitioned_log_and_remembers_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _partitioned(tmp_path / "logs", LOG.read_text().splitlines())
    store = str(tmp_path / "store.sqlite")
    assert main(["signals", str(root), "--store", store, "--format", "json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["questions"] == 3285 and len(first["days_read"]) == 28
    whole = read_log(LOG).interactions
    assert first["thumbs"] == {
        "up": int((whole["thumb"] == "up").sum()),
        "down": int((whole["thumb"] == "down").sum()),
    }
    assert main(["signals", str(root), "--store", store]) == 0
    out = capsys.readouterr().out
    assert "3,285 questions in 28 days (0 days read now, 28 summarised before)" in out
    assert os.path.exists(store)


def test_days_a_warehouse_summarised_count_alongside_the_days_read_here(tmp_path: Path) -> None:
    """docs/scale.md: a day summarised elsewhere and put into the store is used as it is."""
    lines = LOG.read_text().splitlines()
    root = _partitioned(tmp_path / "logs", lines)
    with Store(tmp_path / "store.sqlite") as store:
        here = hourly(root, store)
        rows = [("2026-10-31T09:00:00+00:00", 40, 4, 1, 2, 0), ("2026-10-31T10:00:00+00:00", 60, 30, 0, 5, 1)]
        store.put_log_summary(str(root.resolve()), "day=2026-10-31", "warehouse", rows)
        both = hourly(root, store)
        assert both.read == [] and "2026-10-31" in both.kept
        assert int(both.hourly["questions"].sum()) == int(here.hourly["questions"].sum()) + 100
        day = no_answer_series_from(both.hourly, "1d").row(0, named=True)
        assert (str(day["start"])[:10], day["questions"], day["no_answer"]) == ("2026-10-31", 100, 34)
