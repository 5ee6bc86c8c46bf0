"""The Test set page's data: coverage, power, overlap, versions and diffs, each computed by
evalcore.testset and cached here (the page only lays them out)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import streamlit as st

from dashboard.data import Key, entries, scores, store
from dashboard.data import runs as runs_of
from evalcore.errors import Problems
from evalcore.judge import JudgeConfig
from evalcore.runs import TestSet, read_testset
from evalcore.store import Candidate
from evalcore.testset import (
    DEFAULT_METRICS,
    HIGH,
    Coverage,
    SliceTarget,
    SynthResult,
    answered_versions,
    chunk_texts,
    chunks_from_corpus,
    coverage,
    diff,
    diff_counts,
    most_overlapping,
    needed,
    overlap_summary,
    overlap_table,
    power_table,
    synth_plan,
    synthesize,
    write_accepted,
)
from evalcore.testset import synth_estimate as estimate_synth

__all__ = ["DEFAULT_METRICS", "HIGH", "diff_counts"]


def testset(folder: str, run_id: str, key: Key) -> TestSet:
    return entries(folder, key)[run_id].testset


@st.cache_data(show_spinner=False, max_entries=32)
def coverage_of(folder: str, run_id: str, min_topic: int, key: Key) -> Coverage:
    return coverage(testset(folder, run_id, key), min_topic=min_topic)


@st.cache_data(show_spinner="Measuring each slice's power…", max_entries=64)
def power_of(folder: str, run_id: str, against: str | None, by: str, key: Key) -> tuple[pl.DataFrame, str]:
    other = scores(folder, against, key) if against else None
    return power_table(testset(folder, run_id, key), scores(folder, run_id, key), by=by, other=other)


def mde_wide(table: pl.DataFrame, ts: TestSet, by: str) -> pl.DataFrame:
    """One row per slice (the whole set first) with its size, one column per metric: the smallest
    detectable change."""
    sizes = (
        ts.tags.filter(pl.col("tag") == by)
        .group_by(pl.col("value").alias("slice"))
        .agg(pl.len().alias("questions"))
    )
    sizes = pl.concat(
        [pl.DataFrame({"slice": ["all"], "questions": [ts.cases.height]}, schema=sizes.schema), sizes]
    )
    wide = table.pivot(on="metric", index="slice", values="mde")
    return sizes.join(wide, on="slice", how="left").sort(pl.col("slice") != "all", "slice")


def target(table: pl.DataFrame, metric: str, delta: float, slice_: str) -> SliceTarget:
    return needed(table, metric, delta, slice_)


@st.cache_data(show_spinner="Measuring question/chunk overlap…", max_entries=16)
def overlap_of(folder: str, run_ids: tuple[str, ...], key: Key) -> pl.DataFrame:
    runs = runs_of(folder, run_ids, key)  # those that loaded
    return overlap_table(
        entries(folder, key)[run_ids[-1]].testset, chunk_texts(r.retrieved for r in runs.values())
    )


def overlap_parts(table: pl.DataFrame, n: int = 15) -> tuple[pl.DataFrame, pl.DataFrame]:
    return overlap_summary(table), most_overlapping(table, n)


def overlap_bins(table: pl.DataFrame, bins: int = 10) -> pl.DataFrame:
    """The overlap histogram, binned here (``source, bin, share``: the share of the source's
    questions whose overlap falls in ``[bin, bin + 1/bins)``, 1.0 in the last): the chart gets
    ``bins`` bars per source, not one value per question of a million-question test set."""
    known = table.drop_nulls("overlap")
    return (
        known.with_columns(bin=(pl.col("overlap") * bins).floor().clip(0, bins - 1) / bins)
        .group_by("source", "bin")
        .agg(n=pl.len())
        .with_columns(share=pl.col("n") / pl.col("n").sum().over("source"))
        .sort("source", "bin")
    )


def versions_of(folder: str, run_ids: tuple[str, ...], key: Key) -> pl.DataFrame:
    table = answered_versions(runs_of(folder, run_ids, key).values())
    root = Path(folder)
    return table.with_columns(
        pl.col("file").map_elements(lambda f: _relative(f, root), return_dtype=pl.String)
    )


def _relative(path: str, root: Path) -> str:
    p = Path(path)
    return str(p.relative_to(root)) if p.is_relative_to(root) else str(p)


def versions_on_disk(folder: str, run_id: str, key: Key) -> dict[str, str]:
    """The test-set files beside this run's test set (new versions are written there), file name ->
    path, newest first: every ``*.jsonl`` in that folder that reads as a test set. A link names a
    version by its file name, checked against this list: it cannot make the app read another file.
    Read again only when a file there is added or changed (the folder may lie outside the runs')."""
    here = testset(folder, run_id, key).path.parent
    stamp = tuple(sorted((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in here.glob("*.jsonl")))
    return _versions_in(str(here), stamp)


@st.cache_data(show_spinner=False, max_entries=16)
def _versions_in(where: str, stamp: tuple[tuple[str, int, int], ...]) -> dict[str, str]:
    out = {}
    for name, _, _ in sorted(stamp, key=lambda t: t[1], reverse=True):
        path = Path(where) / name
        if read_testset(path, Problems()) is not None:
            out[name] = str(path)
    return out


@st.cache_data(show_spinner=False, max_entries=16)
def diff_of(old: str, new: str, stamp: tuple[float, ...]) -> tuple[pl.DataFrame, dict[str, int]] | str:
    """What changed from ``old`` to ``new`` (``stamp``: their mtimes, so an edit is seen), or why not."""
    a, b = read_testset(old, Problems()), read_testset(new, Problems())
    if a is None or b is None:
        return f"{Path(old if a is None else new).name} does not read as a test set: `evalcore validate` says why"
    table = diff(a, b)
    return table, diff_counts(table)


def stamp(*paths: str) -> tuple[float, ...]:
    return tuple(Path(p).stat().st_mtime for p in paths)


# ---- the review queue (synthetic questions; promoted production questions arrive accepted)


def queue(testset_sha: str) -> list[Candidate]:
    return store().candidates(testset=testset_sha)


def decide(candidate_id: int, decision: str, case: dict[str, Any] | None, by: str) -> None:
    store().decide(candidate_id, decision, case=case, by=by.strip() or None)


def write_reviewed(testset_path: Path, by: str) -> tuple[Path, str, int]:
    return write_accepted(store(), testset_path, by=by.strip() or None)


def corpus_of(folder: str) -> Path | None:
    """The corpus questions are written from: ``corpus/documents.jsonl`` in the runs folder."""
    path = Path(folder) / "corpus" / "documents.jsonl"
    return path if path.is_file() else None


def synth_estimate(corpus: Path, n: int, multi: float, unanswerable: float) -> str:
    return estimate_synth(synth_plan(chunks_from_corpus(corpus), n, multi=multi, unanswerable=unanswerable),
                          JudgeConfig(), store())  # fmt: skip


def generate(
    corpus: Path, testset_sha: str, n: int, multi: float, unanswerable: float, api_key: str | None, tick: Any
) -> SynthResult:
    planned = synth_plan(chunks_from_corpus(corpus), n, multi=multi, unanswerable=unanswerable)
    return synthesize(store(), testset_sha, planned, JudgeConfig(), api_key=api_key, on_done=tick)


def high_overlap(c: Candidate) -> bool:
    return c.overlap is not None and c.overlap >= HIGH
