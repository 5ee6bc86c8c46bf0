"""Question/chunk word overlap on hand-made cases and on the sample set's synthetic questions."""

from __future__ import annotations

from evalcore import load_runs
from evalcore.testset.overlap import (
    chunk_texts,
    content_words,
    most_overlapping,
    overlap,
    overlap_summary,
    overlap_table,
)
from helpers import SAMPLE


def test_hand_made_cases() -> None:
    chunk = "The Team plan keeps snapshots for 90 days (its retention period)."
    assert overlap("How long does the Team plan keep snapshots?", chunk) == 0.8  # all but "long" copied
    assert overlap("If we pay for the mid tier, when do old backups vanish?", chunk) == 0.0  # own words
    assert overlap("retention of Team backups?", chunk) == 0.667  # 2 of 3
    assert overlap("What is it?", chunk) is None  # no content word at all
    assert content_words("Set key_rotation_days and HV-3021!") == ["set", "key_rotation_days", "hv-3021"]


def test_synthetic_questions_overlap_more_than_real_ones_in_the_sample() -> None:
    lr = load_runs(SAMPLE)
    ts = next(iter(lr.runs.values())).testset
    table = overlap_table(ts, chunk_texts(r.retrieved for r in lr.runs.values()))
    summary = {r["source"]: r for r in overlap_summary(table).iter_rows(named=True)}
    assert summary["synthetic"]["median"] > summary["real"]["median"]
    top = most_overlapping(table, 5)
    assert top.height == 5 and set(top["source"]) == {"synthetic"}
    assert top["overlap"].to_list() == sorted(top["overlap"].to_list(), reverse=True)


def test_without_chunk_texts_the_evidence_quotes_are_used() -> None:
    ts = next(iter(load_runs(SAMPLE).runs.values())).testset
    table = overlap_table(ts, {})
    assert set(table["basis"].drop_nulls()) == {"evidence"}
