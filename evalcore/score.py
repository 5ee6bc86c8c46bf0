"""Score a run: one row per question, one column per metric, and means per slice with CIs.

Retrieval metrics are computed on answerable questions with labels only (unanswerable ones have no
relevant chunk; they are scored on the answer side, by abstention; an answerable question whose
chunks are not labeled yet has null retrieval metrics). Means are per question (macro); the
per-question vectors are kept because they feed the confidence intervals and the paired tests.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import polars as pl

from evalcore.cache import cached_frame, cached_frame_if_any, code_version, remembered_sha256
from evalcore.metrics.catalogue import DEFAULT_MEASURES
from evalcore.metrics.embedding import Embedder, relevance_ragas
from evalcore.metrics.generation import generation_scores
from evalcore.metrics.measures import Measure, parse_measures
from evalcore.metrics.retrieval import evaluate
from evalcore.runs.load import Run, RunEntry, RunFolder
from evalcore.runs.testset import LABELED, TestSet
from evalcore.stats import SMALL_SLICE, bootstrap_ci


def score_run(
    run: Run,
    measures: Iterable[Measure | str] = DEFAULT_MEASURES,
    *,
    cache: bool = True,
    embedder: Embedder | None = None,
) -> pl.DataFrame:
    """Per-question scores of ``run``: ``qid``, every retrieval measure (null on unanswerable
    questions and on answerable ones with no labeled chunk), the generation metrics (null where not
    applicable), ``unverified_quotes``, and any imported external score as ``ext:<name>``.

    Results are kept on disk beside the JSONL conversion cache, keyed by the results file's content
    hash, the test set's sha256, the measures and evalcore's source, so a fresh process does not
    rescore a run it has seen, nor a copy of it.

    With an ``embedder`` (texts -> vectors), a run judged by a revision that wrote questions from
    each answer also gets ``relevance_ragas`` (:mod:`evalcore.metrics.embedding`); not cached.
    """
    ms = parse_measures([str(m) for m in measures])
    if embedder is not None:
        out = _score(run, ms)
        if "answer_questions" not in run.results.columns:
            return out
        ragas = relevance_ragas(run.results, run.testset.cases, embedder)
        return out.join(ragas, on="qid", how="left")
    if not cache or run.source_key is None:
        return _score(run, ms)
    return cached_frame(
        "scores", _scores_key(run.source_key, run.testset.sha256, ms), lambda: _score(run, ms)
    )


def _scores_key(source: str, testset_sha256: str, ms: list[Measure]) -> str:
    """What a run's cached scores depend on: its results file's content (``source``, a run's
    ``source_key``), its test set, the measures and evalcore's own code."""
    return f"{source}|{testset_sha256}|{','.join(map(str, ms))}|{code_version()}"


def score_question(
    runs: Iterable[Run], qid: str, measures: Iterable[Measure | str] = DEFAULT_MEASURES
) -> dict[str, pl.DataFrame]:
    """Each run's scores of one question (run id -> its row of :func:`score_run`; no row when the
    run did not answer it). A run scored before gives its row from the cache; any other run scores
    that question only — the same numbers (every measure is per question), without scoring a whole
    run for one row when a folder is opened on a question page."""
    ms = parse_measures([str(m) for m in measures])
    out = {}
    for run in runs:
        full = (
            None
            if run.source_key is None
            else cached_frame_if_any("scores", _scores_key(run.source_key, run.testset.sha256, ms))
        )
        if full is None:
            one = pl.col("qid") == qid
            full = _score(
                replace(
                    run,
                    results=run.results.filter(one),
                    retrieved=run.retrieved.filter(one),
                    claims=run.claims.filter(one),
                    external=run.external.filter(one),
                ),
                ms,
            )
        out[run.run_id] = full.filter(pl.col("qid") == qid)
    return out


def score_runs(
    runs: Iterable[Run], measures: Iterable[Measure | str] = DEFAULT_MEASURES, *, workers: int | None = None
) -> dict[str, pl.DataFrame]:
    """:func:`score_run` for each run (run id -> scores), a few runs at a time on threads: polars and
    the retrieval kernel release the GIL, so on 2 cores 20 runs score in ~2/3 of the time."""
    todo = list(runs)
    ms = [str(m) for m in measures]
    workers = workers or min(4, os.cpu_count() or 1, max(1, len(todo)))
    if workers == 1 or len(todo) < 2:
        fresh = {r.run_id: score_run(r, ms) for r in todo}
    else:
        with ThreadPoolExecutor(workers, thread_name_prefix="evalcore-score") as pool:
            fresh = dict(
                zip([r.run_id for r in todo], pool.map(lambda r: score_run(r, ms), todo), strict=True)
            )
    return fresh


def _score(run: Run, ms: list[Measure]) -> pl.DataFrame:
    cases = run.testset.cases
    # An answerable question whose chunks are not labeled yet gets null retrieval metrics, not 0s.
    qids = run.results["qid"]
    in_order = qids.equals(cases["qid"])  # every question, in the test set's order (the usual run)
    if in_order:
        labeled = qids.filter(cases.select(LABELED).to_series())
    else:
        labeled = run.results.join(cases.filter(LABELED).select("qid"), on="qid", how="semi")["qid"]
    ret = evaluate(run.retrieved, run.testset.qrels, ms, qids=labeled)
    gen = generation_scores(run.results, run.claims, run.retrieved, cases, context_k=run.manifest.context_k)
    # generation_scores keeps the results' rows in their order: side by side, not joined
    out = (
        gen
        if gen["qid"].equals(qids)
        else qids.to_frame().join(gen, on="qid", how="left", maintain_order="left")
    )
    out = out.select("qid").join(ret, on="qid", how="left", maintain_order="left").hstack(out.drop("qid"))
    if run.external.height:
        ext = run.external.with_columns(name="ext:" + pl.col("name")).pivot(
            on="name", index="qid", values="value", aggregate_function="first"
        )
        out = out.join(ext, on="qid", how="left")
    return out.sort("qid")


def metric_columns(scores: pl.DataFrame) -> list[str]:
    """The metric columns of a per-question score table, in table order."""
    return [c for c in scores.columns if c not in ("qid", "unverified_quotes")]


def slice_frame(testset: TestSet, by: str | None) -> pl.DataFrame:
    """``qid, slice`` rows for slicing by tag ``by`` (a question may sit in several slices);
    every question in slice ``all`` when ``by`` is None."""
    if by is None:
        return testset.cases.select("qid", slice=pl.lit("all"))
    tags = testset.tags.filter(pl.col("tag") == by)
    if tags.height == 0:
        known = ", ".join(testset.tag_names())
        msg = f"unknown tag {by!r}; this test set has: {known}"
        raise ValueError(msg)
    return tags.select("qid", slice="value")


def summarize(
    scores: pl.DataFrame,
    testset: TestSet,
    *,
    by: str | None = None,
    metrics: Sequence[str] | None = None,
    resamples: int = 2000,
    seed: int = 0,
) -> pl.DataFrame:
    """Mean of every metric per slice, with n, a bootstrap 95% CI and a ``small`` flag.

    Returns a long table ``slice, metric, n, mean, ci_low, ci_high, small``.
    """
    metrics = list(metrics) if metrics is not None else metric_columns(scores)
    joined = slice_frame(testset, by).join(scores, on="qid", how="inner")
    rows = []
    for (slice_value,), part in joined.group_by("slice", maintain_order=True):
        for m in metrics:
            vals = part[m].drop_nulls().to_numpy()
            n = int(vals.size)
            lo, hi = bootstrap_ci(vals, resamples=resamples, seed=seed)
            rows.append(
                {
                    "slice": str(slice_value),
                    "metric": m,
                    "n": n,
                    "mean": float(vals.mean()) if n else None,
                    "ci_low": lo if n else None,
                    "ci_high": hi if n else None,
                    "small": n < SMALL_SLICE,
                }
            )
    schema = {
        "slice": pl.String,
        "metric": pl.String,
        "n": pl.Int64,
        "mean": pl.Float64,
        "ci_low": pl.Float64,
        "ci_high": pl.Float64,
        "small": pl.Boolean,
    }
    return pl.DataFrame(rows, schema=schema).sort("slice", maintain_order=True)


MEANS_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "metric": pl.String,
    "n": pl.Int64,
    "mean": pl.Float64,
    "ci_low": pl.Float64,
    "ci_high": pl.Float64,
    "questions": pl.Int64,
}


def run_means(
    run: Run, measures: Iterable[Measure | str] = DEFAULT_MEASURES, *, resamples: int = 1000
) -> pl.DataFrame:
    """Each metric's mean over the run's questions with its bootstrap 95% CI — a point of the trend
    across runs — as ``metric, n, mean, ci_low, ci_high, questions`` (``questions``: the run's
    question count). Kept on disk under the same key as the run's scores (the results file's
    content, the test set, the measures, the code), so a folder of hundreds of runs charts from a
    few kilobytes per run: :func:`cached_means` finds them without reading the run."""
    ms = parse_measures([str(m) for m in measures])
    if run.source_key is None:
        return _means(score_run(run, ms, cache=False), resamples)
    key = f"{_scores_key(run.source_key, run.testset.sha256, ms)}|{resamples}"
    return cached_frame("means", key, lambda: _means(score_run(run, ms), resamples))


def cached_means(
    entry: RunEntry, measures: Iterable[Measure | str] = DEFAULT_MEASURES, *, resamples: int = 1000
) -> pl.DataFrame | None:
    """:func:`run_means` of the run as its results file is now, if kept on disk; else None. The run
    is not read, nor hashed: its content hash is remembered per file version, or this is None."""
    ms = parse_measures([str(m) for m in measures])
    try:
        sha = remembered_sha256(entry.results_file)
    except OSError:
        return None
    if sha is None:
        return None
    return cached_frame_if_any(
        "means", f"{_scores_key(f'sha256:{sha}', entry.testset.sha256, ms)}|{resamples}"
    )


class MeansBackfill:
    """Every run's :func:`run_means` for a trend across hundreds of runs, computed on background
    threads, newest run first, without keeping the runs read (a folder of 200 runs is not held in
    memory for a chart of 200 points). Means already on disk are taken at once (no run is read);
    the rest fill :attr:`means` as they are scored, so a page can draw what is there and say how
    many are still coming. A run whose results turn out broken lands in the folder's problems and
    in :attr:`failed`."""

    def __init__(
        self,
        folder: RunFolder,
        run_ids: Sequence[str],
        measures: Iterable[Measure | str] = DEFAULT_MEASURES,
        *,
        workers: int = 2,
    ) -> None:
        self.measures = [str(m) for m in measures]
        entries = folder.entries
        self.means: dict[str, pl.DataFrame] = {}
        self.failed: set[str] = set()
        todo = []
        for r in reversed(run_ids):  # newest first: the runs a page shows first
            hit = cached_means(entries[r], self.measures) if r in entries else None
            if hit is not None:
                self.means[r] = hit
            else:
                todo.append(r)
        self.total = len(run_ids)
        self._folder = folder
        self._lock = threading.Lock()
        self._todo = todo
        self._done = threading.Event()
        self._left = len(todo)
        if not todo:
            self._done.set()
            return
        for i in range(max(1, min(workers, len(todo)))):
            threading.Thread(target=self._work, name=f"evalcore-means-{i}", daemon=True).start()

    def _work(self) -> None:
        while True:
            with self._lock:
                if _exiting():
                    self._done.set()  # (nothing more will be scored: a waiter is not kept waiting)
                    return
                if not self._todo:
                    return
                r = self._todo.pop(0)
            try:
                got = self._folder.load([r], keep=False).get(r)
                if got is None:
                    self.failed.add(r)
                else:
                    self.means[r] = run_means(got, self.measures)
            except Exception:  # a background pass must never die silently half-way
                if _exiting():  # the process is exiting (a stopped dashboard): not the run's fault
                    self._done.set()
                    return
                logging.getLogger(__name__).exception("scoring run %s for the trend failed", r)
                self.failed.add(r)
            finally:
                with self._lock:
                    self._left -= 1
                    if self._left == 0:
                        self._done.set()

    @property
    def pending(self) -> int:
        """Runs not scored yet."""
        with self._lock:
            return self._left

    def wait(self, seconds: float | None = None) -> bool:
        """Wait until every run is scored, at most ``seconds``; whether they all are."""
        return self._done.wait(seconds)


def _exiting() -> bool:
    """Whether the interpreter is shutting down (its main thread has ended): thread pools then
    refuse work, which is no fault of the run being scored — a stopped dashboard logged one
    traceback per run its trend had left to score."""
    return not threading.main_thread().is_alive()


def _means(scores: pl.DataFrame, resamples: int) -> pl.DataFrame:
    rows = []
    for m in metric_columns(scores):
        vals = scores[m].drop_nulls().to_numpy()
        lo, hi = bootstrap_ci(vals, resamples=resamples)
        rows.append(
            {
                "metric": m,
                "n": int(vals.size),
                "mean": float(vals.mean()) if vals.size else None,
                "ci_low": lo if vals.size else None,
                "ci_high": hi if vals.size else None,
                "questions": scores.height,
            }
        )
    return pl.DataFrame(rows, schema=MEANS_SCHEMA)


def trend(
    runs: Sequence[RunEntry], metrics: Sequence[str], means: Mapping[str, pl.DataFrame]
) -> pl.DataFrame:
    """Mean of each metric per run, in the order given (creation order), with bootstrap CIs: for a
    chart over time. ``means`` holds each run's :func:`run_means`; a run without them is left out
    (the caller says how many are still being scored). Returns
    ``run_id, label, created, metric, n, mean, ci_low, ci_high``.
    """
    schema: dict[str, pl.DataType | type[pl.DataType]] = {
        "run_id": pl.String,
        "label": pl.String,
        "created": pl.Datetime("us", "UTC"),
        **{k: v for k, v in MEANS_SCHEMA.items() if k != "questions"},
    }
    kept = [run for run in runs if run.run_id in means]
    if not kept:
        return pl.DataFrame(schema=schema)
    # One frame of every run's means, filtered once: a filter per run cost 200 runs ~1 s on every
    # redraw of Overview.
    frames = [means[run.run_id] for run in kept]
    heights = [f.height for f in frames]
    at = pl.Series("i", [i for i, h in enumerate(heights) for _ in range(h)], dtype=pl.Int64)
    about = pl.DataFrame(
        {
            "i": range(len(kept)),
            "run_id": [run.run_id for run in kept],
            "label": [run.label for run in kept],
            "created": [run.manifest.created for run in kept],
        },
        schema={"i": pl.Int64, "run_id": pl.String, "label": pl.String, "created": pl.Datetime("us", "UTC")},
    )
    return (
        pl.concat(frames, how="vertical_relaxed")
        .with_columns(at)
        .filter(pl.col("metric").is_in(list(metrics)) & (pl.col("n") > 0))
        .join(about, on="i", how="left", maintain_order="left")
        .select(list(schema))
    )


def split_applicable(table: pl.DataFrame) -> tuple[pl.DataFrame, list[str]]:
    """A summary (any table with ``metric`` and ``n``) without the metrics that apply to no question
    (n = 0 in every row: label metrics on a run without labels, abstention on a retrieval-only run),
    and those metrics' names — so a table says they do not apply instead of showing rows of blanks."""
    n = table.group_by("metric", maintain_order=True).agg(pl.col("n").sum())
    gone = n.filter(pl.col("n") == 0)["metric"].to_list()
    return table.filter(~pl.col("metric").is_in(gone)), gone


def ceilings(testset: TestSet, metrics: Sequence[str], by: str | None = None) -> pl.DataFrame:
    """The highest mean each metric can reach per slice: ``slice, metric, ceiling`` (metrics that
    reach 1.0 are left out). A chart colours a mean against this, not against 1.0, or P@5 = 0.22
    looks poor when 0.23 is the best any system could do. Per question, the best possible value is
    min(1, labeled relevant / k) for precision at k, min(1, k / labeled relevant) for recall at k,
    and min(1, labeled / k) for judged at k; the ceiling is its mean over the questions scored."""
    from evalcore.metrics.measures import parse_measure

    scored = testset.cases.filter(LABELED).select("qid")
    slices = slice_frame(testset, by).join(scored, on="qid", how="inner")
    rows: list[dict[str, object]] = []
    for m in metrics:
        try:
            measure = parse_measure(m)
        except ValueError:
            continue  # a generation metric or an imported score: its ceiling is 1
        k = measure.cutoff
        if measure.name not in ("P", "R", "judged") or not k:
            continue
        labels = (
            testset.qrels if measure.name == "judged" else testset.qrels.filter(pl.col("rel") >= measure.rel)
        )
        count = labels.group_by("qid").agg(c=pl.len().cast(pl.Float64))
        best = {
            "P": (pl.col("c").clip(upper_bound=k) / k),
            "judged": (pl.col("c").clip(upper_bound=k) / k),
            "R": pl.when(pl.col("c") > 0).then((k / pl.col("c")).clip(upper_bound=1.0)).otherwise(0.0),
        }[measure.name]
        part = (
            slices.join(count, on="qid", how="left")
            .with_columns(pl.col("c").fill_null(0.0))
            .group_by("slice")
            .agg(ceiling=best.mean())
            .filter(pl.col("ceiling") < 1.0)
        )
        rows.extend({"slice": s, "metric": m, "ceiling": c} for s, c in part.iter_rows())
    return pl.DataFrame(rows, schema={"slice": pl.String, "metric": pl.String, "ceiling": pl.Float64})
