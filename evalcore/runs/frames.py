"""The flattened tables a run is carried in: one row per question (``results``), per retrieved chunk
(``retrieved``), per judge claim (``claims``) and per imported score (``external``).

Their column types are defined here once; the JSON Lines path, the parquet fast path and the cache
all produce exactly these frames. The records' *shape* is the contract in :mod:`evalcore.schema`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from evalcore.errors import Problems
from evalcore.metrics.refusal import looks_like_refusal
from evalcore.schema import ResultRecord

RESULTS_SCHEMA: dict[str, Any] = {
    "qid": pl.String,
    "line": pl.Int64,
    "answer": pl.String,
    "abstained": pl.Boolean,
    "abstained_inferred": pl.Boolean,
    "error": pl.String,
    "latency_ms": pl.Float64,
    "input_tokens": pl.Int64,
    "output_tokens": pl.Int64,
    "cost_usd": pl.Float64,
    "correctness": pl.String,
    "relevance": pl.Float64,
    "n_claims": pl.Int64,  # null: not judged for faithfulness; 0: no factual claim
    "judge_model": pl.String,
    "judge_message_id": pl.String,
    "n_retrieved": pl.Int64,
}
RETRIEVED_SCHEMA: dict[str, Any] = {
    "qid": pl.String,
    "chunk_id": pl.String,
    "doc_id": pl.String,
    "score": pl.Float64,
    "text": pl.String,
    "line": pl.Int64,
}
CLAIMS_SCHEMA: dict[str, Any] = {
    "qid": pl.String,
    "claim_idx": pl.Int64,
    "claim": pl.String,
    "verdict": pl.String,
    "quote": pl.String,
    "chunk_id": pl.String,
}
EXTERNAL_SCHEMA: dict[str, Any] = {"qid": pl.String, "name": pl.String, "value": pl.Float64}

FRAMES = ("results", "retrieved", "claims", "external")


def frames_from_records(records: list[tuple[int, ResultRecord]]) -> dict[str, pl.DataFrame]:
    res: dict[str, list[Any]] = {k: [] for k in RESULTS_SCHEMA}
    ret: dict[str, list[Any]] = {k: [] for k in RETRIEVED_SCHEMA}
    cl: dict[str, list[Any]] = {k: [] for k in CLAIMS_SCHEMA}
    ext: dict[str, list[Any]] = {k: [] for k in EXTERNAL_SCHEMA}
    for lineno, r in records:
        judge = r.judge
        claims = judge.claims if judge else None
        inferred = r.abstained is None
        # Unstated: inferred from the answer; with no answer and no error there is nothing to infer from
        # (a retrieval-only run, e.g. imported from TREC): abstention metrics are not applicable.
        abstained = (
            r.abstained
            if r.abstained is not None
            else None
            if r.answer is None and r.error is None
            else looks_like_refusal(r.answer)
        )
        row = {
            "qid": r.qid,
            "line": lineno,
            "answer": r.answer,
            "abstained": abstained,
            "abstained_inferred": inferred,
            "error": r.error,
            "latency_ms": r.latency_ms,
            "input_tokens": r.tokens.input if r.tokens else None,
            "output_tokens": r.tokens.output if r.tokens else None,
            "cost_usd": r.cost_usd,
            "correctness": judge.correctness if judge else None,
            "relevance": judge.relevance if judge else None,
            "n_claims": None if claims is None else len(claims),
            "judge_model": judge.model if judge else None,
            "judge_message_id": judge.message_id if judge else None,
            "n_retrieved": len(r.retrieved),
        }
        for k, v in row.items():
            res[k].append(v)
        for c in r.retrieved:
            ret["qid"].append(r.qid)
            ret["chunk_id"].append(c.chunk_id)
            ret["doc_id"].append(c.doc_id)
            ret["score"].append(c.score)
            ret["text"].append(c.text)
            ret["line"].append(lineno)
        for i, claim in enumerate(claims or []):
            cl["qid"].append(r.qid)
            cl["claim_idx"].append(i)
            cl["claim"].append(claim.claim)
            cl["verdict"].append(claim.verdict)
            cl["quote"].append(claim.quote)
            cl["chunk_id"].append(claim.chunk_id)
        for name, value in r.external_scores.items():
            ext["qid"].append(r.qid)
            ext["name"].append(name)
            ext["value"].append(value)
    return {
        "results": pl.DataFrame(res, schema=RESULTS_SCHEMA),
        "retrieved": pl.DataFrame(ret, schema=RETRIEVED_SCHEMA),
        "claims": pl.DataFrame(cl, schema=CLAIMS_SCHEMA),
        "external": pl.DataFrame(ext, schema=EXTERNAL_SCHEMA),
    }


def repeats(frame: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """The rows whose ``keys`` an earlier line already had, each with ``first``: that line. The one
    rule behind "duplicate qid" in a results file and "docno twice for a query" in a TREC file."""
    return frame.with_columns(first=pl.col("line").min().over(keys)).filter(pl.col("line") != pl.col("first"))


def check_records(run_path: Path, frames: dict[str, pl.DataFrame], problems: Problems) -> None:
    """Cross-record checks of the file alone, vectorised: duplicate qids and chunk ids."""
    results = frames["results"]
    dup = repeats(results, ["qid"]).head(50)
    for row in dup.iter_rows(named=True):
        problems.error(
            run_path,
            f"duplicate qid '{row['qid']}' (first on line {row['first']})",
            line=row["line"],
            field="qid",
            expected="one result per question",
            hint="keep one result per qid; a rerun of a question belongs in a new run",
        )
    retrieved = frames["retrieved"]
    # A chunk twice in one ranked list: within one record (its line), so a qid written twice is the
    # one error above, not one knock-on error per chunk of its list blaming the first line.
    # Checked by hashes first, with no grouping (a first view pays this once per run); a file with
    # duplicates — or, never seen, two chunk ids sharing a hash — then pays for the grouping that
    # names them.
    if _each_chunk_once(retrieved):
        return
    dup_chunks = (
        retrieved.group_by("line", "qid", "chunk_id").agg(pl.len()).filter(pl.col("len") > 1).head(50)
    )
    for row in dup_chunks.sort("line").iter_rows(named=True):
        problems.error(
            run_path,
            f"chunk id '{row['chunk_id']}' appears {row['len']} times in the ranked list of '{row['qid']}'",
            line=row["line"],
            field="retrieved",
            expected="each chunk once per ranked list",
            hint="deduplicate before writing (trec_eval refuses duplicates too; they are never collapsed silently)",
        )


# From this many retrieved rows a compiled pass looks for a chunk twice in a list (20,000,000 rows:
# ~0.2 s against ~1.5 s for polars' count of distinct pairs), when the compiled scanner is at hand.
COMPILED_CHECK_FROM = 1_000_000


def _each_chunk_once(retrieved: pl.DataFrame) -> bool:
    """Whether no chunk id appears twice in one ranked list (one line). True is certain; False may
    be a hash collision (never seen), which the caller's grouping then finds to be no repeat."""
    import numpy as np

    from evalcore.runs.jsonl import scanner_compiled

    if retrieved.height >= COMPILED_CHECK_FROM and scanner_compiled("repeat_in_lines"):
        from evalcore.runs._scan import repeat_in_lines

        # Lines in file order, each list's rows together: each list's chunk-id hashes compared.
        # Read-only, whether polars hands over a view or a copy: the one signature compiled.
        line = retrieved["line"].to_numpy().astype(np.int64, copy=False)
        h = retrieved["chunk_id"].hash(2).to_numpy()
        line.setflags(write=False)
        h.setflags(write=False)
        found = repeat_in_lines(line, h)
        if found != -2:  # -2: rows of one line apart (not as a file is read): counted below
            return found == -1
    # Distinct (line, chunk id) hashes counted: no grouping at all.
    pair = pl.col("line").hash(1) ^ pl.col("chunk_id").hash(2)
    return retrieved.select(pair.n_unique()).item() == retrieved.height
