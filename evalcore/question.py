"""One question, looked at closely: its labels, each run's ranked chunks, answer and judge claims.

Everything a drill-down shows, computed here so the dashboard only lays it out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import polars as pl

from evalcore.metrics.generation import context_chunks
from evalcore.metrics.quotes import check_quotes
from evalcore.metrics.retrieval import rank
from evalcore.runs.load import Run
from evalcore.runs.testset import is_heldout


@dataclass(frozen=True)
class QuestionDetail:
    run_id: str
    qid: str
    case: dict[str, Any]  # the test case: question, reference answer, tags, split, must_pass
    labels: dict[str, int]  # chunk id -> grade
    chunks: (
        pl.DataFrame
    )  # rank, chunk_id, doc_id, score, text, grade (null = unlabeled), in_top_k, in_context
    missing_labeled: list[str]  # labeled relevant chunks not in the top k
    answer: str | None
    abstained: bool | None
    claims: pl.DataFrame  # claim, verdict, quote, chunk_id, quote_found, quote_match, quote_chunk
    result: dict[str, Any]  # latency, tokens, cost, error, correctness, relevance
    tie_at_cutoff: str | None = None  # when tied scores decide whether a labeled chunk is in the top k


def tie_at_cutoff(ranked: pl.DataFrame, k: int) -> str | None:
    """Whether tied scores straddle the top-``k`` cutoff with a labeled chunk among them, in words:
    which of the tied chunks count in P@k, R@k and nDCG@k is then decided by trec_eval's tie rule
    (chunk id, descending), not by the system — a user should not read it as a model change.
    ``ranked``: ``rank, chunk_id, score, grade`` (:func:`question_detail`'s chunks)."""
    if ranked.height <= k:
        return None
    at = ranked.filter(pl.col("rank") == k)
    if at.height == 0:
        return None
    score = at["score"][0]
    tied = ranked.filter(pl.col("score") == score)
    inside = tied.filter(pl.col("rank") <= k).height
    labeled = tied.filter(pl.col("grade").fill_null(0) >= 1)["chunk_id"].to_list()
    if inside == tied.height or not labeled:
        return None
    return (
        f"{tied.height} chunks tie at score {score:g} across the top-{k} cutoff ({inside} inside, "
        f"{tied.height - inside} outside), labeled {', '.join(labeled)} among them: trec_eval's rule orders "
        "tied chunks by chunk id, so which of them are in the top k is not the system's doing"
    )


def question_detail(run: Run, qid: str, *, k: int = 5) -> QuestionDetail | None:
    """The drill-down of ``qid`` in ``run``; None if the run has no result for it."""
    res = run.results.filter(pl.col("qid") == qid)
    if res.height == 0:
        return None
    case = run.testset.cases.filter(pl.col("qid") == qid).row(0, named=True)
    labels = dict(run.testset.qrels.filter(pl.col("qid") == qid).select("chunk_id", "rel").iter_rows())
    mine = run.retrieved.filter(pl.col("qid") == qid)
    ranked = (
        rank(mine.select("qid", "chunk_id", "score"))
        .collect()
        .join(mine.select("chunk_id", "doc_id", "text"), on="chunk_id", how="left")
        .with_columns(
            grade=pl.col("chunk_id").replace_strict(labels, default=None, return_dtype=pl.Int64),
            in_top_k=pl.col("rank") <= k,
            in_context=pl.lit(True)
            if run.manifest.context_k is None
            else pl.col("rank") <= run.manifest.context_k,
        )
        .sort("rank")
        .select("rank", "chunk_id", "doc_id", "score", "text", "grade", "in_top_k", "in_context")
    )
    top = set(ranked.filter(pl.col("in_top_k"))["chunk_id"])
    missing = sorted(c for c, g in labels.items() if g >= 1 and c not in top)
    context = context_chunks(mine, run.manifest.context_k)
    claims = check_quotes(run.claims.filter(pl.col("qid") == qid), context).sort("claim_idx")
    row = res.row(0, named=True)
    tags = run.testset.tags.filter(pl.col("qid") == qid)
    case["tags"] = {
        t: [v for tt, v in tags.select("tag", "value").iter_rows() if tt == t]
        for t in dict.fromkeys(tags["tag"].to_list())
    }
    return QuestionDetail(
        run_id=run.run_id,
        qid=qid,
        case=case,
        labels=labels,
        chunks=ranked,
        missing_labeled=missing,
        tie_at_cutoff=tie_at_cutoff(ranked, k),
        answer=row["answer"],
        abstained=row["abstained"],
        claims=claims.select(
            "claim", "verdict", "quote", "chunk_id", "quote_found", "quote_match", "quote_chunk"
        ),
        result={
            k_: row[k_]
            for k_ in (
                "latency_ms",
                "input_tokens",
                "output_tokens",
                "cost_usd",
                "error",
                "correctness",
                "relevance",
                "abstained_inferred",
            )
        },
    )


def question_across_runs(
    runs: Iterable[Run],
    qid: str,
    scores: dict[str, pl.DataFrame],
    metrics: Iterable[str] | None = None,
) -> pl.DataFrame:
    """One row per run that answered ``qid`` (in creation order): run id, label, created, every metric.

    ``scores`` holds each run's per-question scores (:func:`~evalcore.score.score_runs`).
    """
    rows = []
    for run in runs:
        full = scores[run.run_id]
        s = full.filter(pl.col("qid") == qid)
        if s.height:
            rows.append(
                {
                    "run_id": run.run_id,
                    "label": run.label,
                    "created": run.manifest.created,
                    **{k: v for k, v in s.row(0, named=True).items() if k != "qid"},
                }
            )
    df = pl.DataFrame(rows) if rows else pl.DataFrame(schema={"run_id": pl.String})
    if metrics is not None and rows:
        df = df.select("run_id", "label", "created", *[m for m in metrics if m in df.columns])
    return df


def question_choices(cases: pl.DataFrame, *, include_heldout: bool, keep: str | None = None) -> pl.DataFrame:
    """The questions a picker offers: held-out ones left out unless asked for (looking at them while
    tuning overfits the prompt to the test set), except ``keep`` (a question a link already names)."""
    if include_heldout:
        return cases
    return cases.filter(~is_heldout() | (pl.col("qid") == (keep or "")))
