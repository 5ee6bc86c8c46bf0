"""Cached loaders: thin wrappers around evalcore. No arithmetic here.

Every cache is keyed on the runs folder plus a fingerprint of its files (path, mtime, size), never on
frames: a changed run file is a new key. Objects holding runs are kept with ``cache_resource`` (shared,
not copied); small derived tables with ``cache_data``. Long texts never enter the cached aggregates.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl
import streamlit as st

from dashboard import tables
from evalcore import Comparison, Run, compare, score_run, summarize
from evalcore.comparison import incomparable
from evalcore.errors import Problem, SetupError
from evalcore.judge import LATEST, RECORDED, Estimate, RerunReport, judged_by
from evalcore.question import QuestionDetail, question_across_runs, question_detail
from evalcore.runs import (
    RunEntry,
    RunFolder,
    TestSetGroup,
    find_group,
    group_runs,
    is_remote,
    parsed_before,
    resolve,
)
from evalcore.runs import runs_location as location_of
from evalcore.score import MeansBackfill, score_question, trend
from evalcore.score import ceilings as score_ceilings
from evalcore.store import OverBudget, Revision, Store, Verdict

if TYPE_CHECKING:
    from evalcore.calibration import Standing

Key = str  # a digest of the folder's listing (see fingerprint)


# A bucket's listing is taken again at most this often (seconds): every page load within it reads
# the mirror as it is (docs/deploy.md).
LISTING_TTL = 5.0


def runs_location() -> str:
    """``--runs DIR`` after ``--`` on the streamlit command line, else ``$RAGTRIAGE_RUNS``, else
    sample_runs/ — a folder, or a bucket URL (``s3://bucket/prefix``, ``gs://``, ``az://``)."""
    argv = sys.argv[1:]
    given = (
        argv[argv.index("--runs") + 1] if "--runs" in argv and argv.index("--runs") + 1 < len(argv) else None
    )
    return location_of(given)


def runs_folder() -> Path:
    """The folder to read: the runs location itself, or its bucket prefix mirrored (listed again
    when the last listing is older than LISTING_TTL). :class:`SetupError` when the bucket cannot be
    listed, naming the URL and why."""
    return resolve(runs_location(), max_age=LISTING_TTL).root


def shown(text: str) -> str:
    """A message about the runs with the mirror's paths written as the bucket's URLs."""
    loc = runs_location()
    return resolve(loc, max_age=LISTING_TTL).display(text) if is_remote(loc) else text


def bucket_problems() -> list[Problem]:
    """What the last listing of the bucket found wrong (objects listed, then gone)."""
    loc = runs_location()
    return resolve(loc, max_age=LISTING_TTL).problems if is_remote(loc) else []


def fingerprint(folder: Path) -> Key:
    """A digest of every run and test-set file under ``folder`` with its mtime and size: taken on
    every page load, so a run added or removed shows on the next one (about 20 ms for 1,000 runs
    here: benchmarks/bench_listing.py). ``os.scandir`` and plain strings, not ``Path`` objects: a
    third of the time. A digest, not the listing: every cached function hashes its arguments on
    every call, and Streamlit's hasher took 0.3 s a page view over the 800 entries of 200 runs."""
    out: list[tuple[str, int, int]] = []

    def walk(path: str, rel: str) -> None:
        try:
            with os.scandir(path) as it:
                entries = sorted(it, key=lambda e: e.name)
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            return  # (removed while it was listed)
        for e in entries:
            if e.name.startswith("."):
                continue
            if e.is_dir():
                walk(e.path, rel + e.name + "/")
            elif e.name.endswith((".json", ".jsonl", ".parquet")):
                try:
                    st_ = e.stat()
                except FileNotFoundError:
                    continue
                out.append((rel + e.name, st_.st_mtime_ns, st_.st_size))

    walk(str(folder), "")
    return hashlib.blake2b(repr(out).encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()


@st.cache_resource(show_spinner=False, max_entries=4)
def _folder(folder: str, key: Key) -> RunFolder:
    # Keyed on the fingerprint too (an argument named ``_key`` would be left out of the cache key,
    # and a run added to the folder would not appear until the server restarted).
    # The folder's manifests now; test sets and each run's results when a page first needs them (a
    # page about two runs of twenty reads two results files). A folder seen before loads from the
    # caches, scores included: nothing to compile or score. Otherwise every page scores what it
    # loads: the compiled measures (about a second to load) load on a background thread while the
    # run files are read — when they are compiled already. Right after an install they are not, and
    # the first runs are scored in polars (evalcore.metrics._vector).
    return RunFolder(folder, preload_measures=not parsed_before(folder))


def load(folder: Path) -> tuple[RunFolder, Key]:
    key = fingerprint(folder)
    return _folder(str(folder), key), key


def runs(folder: str, run_ids: Iterable[str] | None, key: Key) -> dict[str, Run]:
    """These runs (None: every run of the folder), read the first time they are asked for (several
    at a time); runs whose results have errors are left out (their problems are the folder's, see
    :class:`RunFolder`)."""
    return _folder(folder, key).load(run_ids)


def question_runs(folder: str, run_ids: Iterable[str], qid: str, key: Key) -> dict[str, Run]:
    """Each run's record of one question: a run read before whole, any other from the one line of
    its file holding the qid (see :meth:`RunFolder.question`)."""
    return _folder(folder, key).question(run_ids, qid)


def load_run_cached(folder: str, run_id: str, key: Key) -> Run:
    got = runs(folder, [run_id], key)
    if run_id not in got:
        raise SetupError(f"run {run_id} could not be loaded: see the problems listed on Overview")
    return got[run_id]


def entries(folder: str, key: Key) -> dict[str, RunEntry]:
    """Every run of the folder whose manifest and test set read cleanly (results not read)."""
    return _folder(folder, key).entries


@st.cache_resource(
    show_spinner="Scoring…",
    max_entries=64,
)
def scores(folder: str, run_id: str, key: Key) -> pl.DataFrame:
    return score_run(load_run_cached(folder, run_id, key))


@st.cache_data(show_spinner=False, max_entries=256)
def summary(folder: str, run_id: str, by: str | None, key: Key) -> pl.DataFrame:
    run = load_run_cached(folder, run_id, key)
    return summarize(scores(folder, run_id, key), run.testset, by=by)


@st.cache_data(show_spinner=False, max_entries=64)
def ceilings(folder: str, run_id: str, by: str | None, metrics: tuple[str, ...], key: Key) -> pl.DataFrame:
    return score_ceilings(entries(folder, key)[run_id].testset, metrics, by)


@st.cache_resource(show_spinner="Comparing runs…", max_entries=32)
def comparison(
    folder: str, base: str, cand: str, k: int, key: Key, judge: str = RECORDED, stamp: int = 0
) -> Comparison:
    """Baseline vs candidate, with the verdicts ``judge`` names (``recorded``: the run files';
    ``latest``: each run's newest revision in the store, or its run file's when it has none — the
    comparison still says when the two sides' judges differ). ``stamp`` (the store's newest
    revision id) renews the cached comparison when a re-judge added a revision."""
    pair_runs = runs(folder, [base, cand], key)
    revised = judged_runs(folder, [base, cand], key) if judge == LATEST else {}
    if not revised:
        return compare(
            pair_runs[base],
            pair_runs[cand],
            k=k,
            scores=(scores(folder, base, key), scores(folder, cand, key)),
        )
    from evalcore.judge import judged_by

    pair = [judged_by(store(), pair_runs[r], LATEST) if r in revised else pair_runs[r] for r in (base, cand)]
    return compare(pair[0], pair[1], k=k)


def judged_runs(folder: str, run_ids: list[str], key: Key) -> dict[str, int]:
    """For each run, its newest revision id in the store (runs without one are left out)."""
    got = runs(folder, run_ids, key)
    out = {}
    for r in run_ids:
        revs = store().revisions(r, got[r].results_sha256())
        if revs:
            out[r] = revs[-1].id
    return out


@st.cache_data(show_spinner="Testing each slice…", max_entries=128)
def comparison_by_slice(folder: str, base: str, cand: str, k: int, by: str, key: Key) -> pl.DataFrame:
    return comparison(folder, base, cand, k, key).by_slice(by)


@st.cache_resource(show_spinner=False, max_entries=4)
def _means(folder: str, run_ids: tuple[str, ...], key: Key) -> MeansBackfill:
    # One background pass per folder version and test set, shared by every session.
    return MeansBackfill(_folder(folder, key), run_ids)


def trend_means(folder: str, run_ids: tuple[str, ...], key: Key, wait: float = 0.0) -> MeansBackfill:
    """Each run's means for the trend (:class:`~evalcore.score.MeansBackfill`): those kept on disk at
    once, the rest scored in the background; waits at most ``wait`` seconds for them."""
    got = _means(folder, run_ids, key)
    got.wait(wait)
    return got


def report_html(cmp: Comparison) -> bytes:
    """The comparison as the self-contained HTML page ``evalcore report`` writes (the same renderer)."""
    from evalcore.report import html

    return html(cmp).encode("utf-8")


def groups(folder: str, key: Key) -> list[TestSetGroup]:
    """The folder's runs grouped by the test set they answered (see :mod:`evalcore.runs.groups`);
    a run whose results turned out broken is no longer among them."""
    return _groups(folder, tuple(entries(folder, key)), key)


@st.cache_resource(show_spinner=False, max_entries=8)
def _groups(folder: str, run_ids: tuple[str, ...], key: Key) -> list[TestSetGroup]:
    known = entries(folder, key)  # (a run another session found broken meanwhile is left out)
    return group_runs([known[r] for r in run_ids if r in known], folder)


def trend_table(folder: str, run_ids: tuple[str, ...], metrics: tuple[str, ...], key: Key) -> pl.DataFrame:
    """The trend of these runs as far as they are scored (see :func:`trend_means`)."""
    known = entries(folder, key)
    means = dict(_means(folder, run_ids, key).means)
    return trend([known[r] for r in run_ids if r in known], metrics, means)


def detail(
    folder: str, run_id: str, qid: str, k: int, key: Key, judge: str = RECORDED
) -> QuestionDetail | None:
    """One question of one run, judged by ``judge`` (``recorded``: the run file's verdicts; else a
    revision id in the store). Not cached: one question's rows are a filter away (or one line of the
    file), and caching would copy its long texts."""
    run = question_runs(folder, [run_id], qid, key).get(run_id)
    if run is None:
        return None
    return question_detail(judged_by(store(), run, judge), qid, k=k)  # ("recorded": the run itself)


# ---- the judge: revisions in the store, and re-judging from the page


def standing(folder: str, run_id: str, key: Key, judge: str = RECORDED) -> Standing:
    """Where a run's judge stands against people's labels (measured or not, corrected scores);
    kept until a label is added or a rerun adds verdicts."""
    return _standing(folder, run_id, key, judge, store().labels_stamp(), store().newest_revision_id())


@st.cache_data(show_spinner=False, max_entries=64)
def _standing(folder: str, run_id: str, key: Key, judge: str, labels_stamp: int, revs_stamp: int) -> Standing:
    from evalcore.calibration import standing as calibration_standing

    run = judged_by(store(), load_run_cached(folder, run_id, key), judge)  # ("recorded": the run itself)
    # Corrected scores are aggregates over every person's labels (no one label is shown): the
    # same figure for every reader, so read as the server, not as the reader.
    return calibration_standing(_store(), run)


@st.cache_resource(show_spinner=False)
def _store() -> Store:
    """The store (``$RAGTRIAGE_STORE`` or the user's data folder), opened once per server."""
    return Store()


def store() -> Store:
    """The store as the reader of this page (signed in, or the local identity), with the access
    file's daily budget: every write it makes is checked against their role and audited as theirs,
    and the labels it reads are the ones they may see."""
    from dashboard import auth

    return _store().acting_as(auth.current(), auth.access().budget)


def revisions(folder: str, run_id: str, key: Key) -> list[Revision]:
    """The run's judge revisions for its results file as it is now, oldest first."""
    run = entries(folder, key)[run_id]
    return store().revisions(run.run_id, run.results_sha256())


def revision_diff(folder: str, run_id: str, a: str, b: str, qid: str, key: Key) -> dict[str, Any] | None:
    """How one question's verdicts differ between two judgings (``recorded`` or revision ids); None
    when they do not."""
    from evalcore.judge import diff, judged_by

    run = load_run_cached(folder, run_id, key)
    changed = diff(judged_by(store(), run, a), judged_by(store(), run, b)).filter(pl.col("qid") == qid)
    return changed.row(0, named=True) if changed.height else None


def failed_verdict(revision: str, qid: str) -> Verdict | None:
    """This question's verdict in a revision when it failed (its reason is what the page shows)."""
    if revision == RECORDED:
        return None
    return next((v for v in store().verdicts(int(revision)) if v.qid == qid and not v.ok), None)


def judge_key_in_env() -> bool:
    return bool(os.environ.get("ANTHROPIC_API_KEY"))


def judge_estimate(folder: str, run_id: str, qids: list[str], key: Key, like: str | None = None) -> Estimate:
    """What re-judging these questions would cost (with the judge of run ``like``, if named);
    drawn on every rerun of a page, so kept until a rerun adds verdicts to the store (which changes
    what the cache holds)."""
    # The questions are keyed by one digest: Streamlit hashing the list itself took 3 s a rerun
    # when Compare offers a million questions.
    return _estimate(folder, run_id, qids_digest(qids), key, like, store().newest_revision_id(), _qids=qids)


def qids_digest(qids: list[str]) -> str:
    """One short key for a list of questions, in order (JSON: no two lists write alike, whatever
    characters the qids hold)."""
    return hashlib.blake2b(json.dumps(qids).encode(), digest_size=16).hexdigest()


@st.cache_data(show_spinner=False, max_entries=64)
def _estimate(
    folder: str, run_id: str, digest: str, key: Key, like: str | None, stamp: int, *, _qids: list[str]
) -> Estimate:
    from evalcore.judge import estimate, items_for

    # One question (the Question page): its line of the file is enough.
    one = question_runs(folder, [run_id], _qids[0], key).get(run_id) if len(_qids) == 1 else None
    run = one or load_run_cached(folder, run_id, key)
    return estimate(items_for(run, _qids), _config(folder, key, like), store())


def judge_like(folder: str, run_id: str, key: Key) -> str | None:
    """Why a run cannot be re-judged with ``run_id``'s judge (None: it can)."""
    try:
        _config(folder, key, run_id)
    except ValueError as exc:
        return str(exc)
    return None


def _config(folder: str, key: Key, like: str | None) -> Any:
    from evalcore.judge import JudgeConfig, config_like

    if like is None:
        return JudgeConfig()
    return config_like(store(), load_run_cached(folder, like, key))


def rejudge(
    folder: str,
    run_id: str,
    qids: list[str],
    key: Key,
    api_key: str | None,
    on_verdict: Callable[[Any], None] | None = None,
    like: str | None = None,
) -> RerunReport:
    """Judge these questions of the run into a new revision (with the judge of run ``like``, if
    named). The key is the environment's, or one typed into this browser session (passed through,
    never stored)."""
    from evalcore.judge import rerun

    run = load_run_cached(folder, run_id, key)
    config = _config(folder, key, like)
    return rerun(run, store(), config, qids=qids, api_key=api_key or None, on_verdict=on_verdict)


@st.cache_data(show_spinner=False, max_entries=64)
def across_runs(folder: str, qid: str, run_ids: tuple[str, ...], key: Key) -> pl.DataFrame:
    # Runs scored before give the question's row from the cache; the others score this question only
    # (a folder opened on a question page does not score every run for one row of each).
    got = question_runs(folder, run_ids, qid, key)
    chosen = [got[r] for r in run_ids if r in got]
    return question_across_runs(chosen, qid, score_question(chosen, qid))


def overview_table(folder: str, run_ids: tuple[str, ...], key: Key) -> pl.DataFrame:
    """The Overview's runs table: a row per run (of the chosen test set), its manifest flattened;
    question counts come with each run's means (no run is read for this table)."""
    known = entries(folder, key)
    means = _means(folder, run_ids, key).means
    return pl.DataFrame(
        [
            tables.manifest_row(known[r], None if r not in means else _questions(means[r]))
            for r in run_ids
            if r in known
        ]
    )


def _questions(means: pl.DataFrame) -> int | None:
    return int(means["questions"][0]) if means.height else None


__all__ = [
    "LATEST",
    "RECORDED",
    "OverBudget",
    "SetupError",
    "across_runs",
    "ceilings",
    "comparison",
    "comparison_by_slice",
    "detail",
    "failed_verdict",
    "find_group",
    "groups",
    "incomparable",
    "judge_estimate",
    "judge_key_in_env",
    "judged_runs",
    "load",
    "overview_table",
    "rejudge",
    "report_html",
    "revision_diff",
    "revisions",
    "runs_folder",
    "scores",
    "store",
    "summary",
    "trend_means",
    "trend_table",
]
