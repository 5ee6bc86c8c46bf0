"""Cached loaders. Keys are the runs folder plus every run file's mtime and size, never frames."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import polars as pl
import streamlit as st

from evalcore import LoadResult, load_runs, score_run, summarize
from evalcore.io import manifest_summary

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_RUNS = ROOT / "sample_runs"


def runs_folder() -> Path:
    """``--runs DIR`` after ``--`` on the streamlit command line, else ``$RAGTRIAGE_RUNS``, else sample_runs/."""
    argv = sys.argv[1:]
    if "--runs" in argv and argv.index("--runs") + 1 < len(argv):
        return Path(argv[argv.index("--runs") + 1]).resolve()
    env = os.environ.get("RAGTRIAGE_RUNS")
    return Path(env).resolve() if env else DEFAULT_RUNS


def fingerprint(folder: Path) -> tuple[tuple[str, int, int], ...]:
    """Every file under ``folder`` with its mtime and size: a cache key that changes when a run does."""
    out = []
    for p in sorted(folder.rglob("*")):
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts):
            st_ = p.stat()
            out.append((str(p.relative_to(folder)), st_.st_mtime_ns, st_.st_size))
    return tuple(out)


@st.cache_resource(show_spinner="Loading runs…", max_entries=4)
def _load(folder: str, _key: tuple[tuple[str, int, int], ...]) -> LoadResult:
    return load_runs(folder)


def load(folder: Path) -> LoadResult:
    return _load(str(folder), fingerprint(folder))


@st.cache_data(show_spinner=False, max_entries=64)
def headline(folder: str, run_id: str, _key: tuple[tuple[str, int, int], ...]) -> pl.DataFrame:
    run = _load(folder, _key).runs[run_id]
    return summarize(score_run(run), run.testset)


def overview_table(result: LoadResult) -> pl.DataFrame:
    return pl.DataFrame([manifest_summary(r) for r in result.runs.values()])
