"""Generation measures computed in code from stored judge output (no model call here).

* faithfulness = |SUPPORTED claims whose quote is found in a chunk the generator was given| / |claims|.
  An answer with no factual claim is *not applicable* (null), never 0 or 1. A SUPPORTED claim with no
  quote, or whose quote is in none of those chunks (:mod:`evalcore.metrics.quotes`: inside one chunk,
  exact or strict fuzzy), does not count as supported, and is flagged (``unverified_quotes``).
* correctness = 1 (correct), 0.5 (partially_correct), 0 (incorrect), from the judge's verdict against
  the reference answer; answerable questions only.
* relevance = the stored answer-relevance score in [0, 1].
* judged_context_precision = chunks the judge graded relevant to the question / chunks it graded,
  among those the generator was given; judged_context_recall = statements of the reference answer
  that a given chunk states / the reference's statements (n/a without a reference). Both come from
  a judge revision's context grades — the judge's view of retrieval, for questions without labels —
  and are never mixed with the label-based retrieval metrics.
* abstention (unanswerable questions): 1 if the system declined to answer.
  false_refusal (answerable questions): 1 if it declined. no_answer (all questions): 1 if it declined.
"""

from __future__ import annotations

import polars as pl

from evalcore.metrics.quotes import check_quotes
from evalcore.metrics.retrieval import rank
from evalcore.schema import CORRECTNESS_SCORE


def context_chunks(retrieved: pl.DataFrame, context_k: int | None) -> pl.DataFrame:
    """The chunks the generator was given: ``qid, chunk_id, text, rank`` — the top ``context_k`` of
    each ranked list (trec_eval's order), or every retrieved chunk when the run does not say."""
    ranked = rank(retrieved.select("qid", "chunk_id", "score", "text"))
    if context_k is not None:
        ranked = ranked.filter(pl.col("rank") <= context_k)
    return ranked.select("qid", "chunk_id", "text", "rank").collect()


def generation_scores(
    results: pl.DataFrame,
    claims: pl.DataFrame,
    retrieved: pl.DataFrame,
    cases: pl.DataFrame,
    *,
    context_k: int | None = None,
) -> pl.DataFrame:
    """Per-question generation measures (null where a measure does not apply). Quotes are checked
    against the top ``context_k`` retrieved chunks (all of them when None)."""
    if claims.height:
        # Only the questions with claims need their context ranked; a run whose chunks carry no text
        # (ids and scores only) has no context a quote could be found in.
        if retrieved["text"].null_count() == retrieved.height:
            quoted = retrieved.clear()  # (asked first: the join below took 2-4 s at a million questions)
        else:
            asked = claims.select("qid").unique()
            # Every question has claims (the usual judged run): every chunk is context, no join.
            whole = asked.height == results.height and results["qid"].n_unique() == results.height
            quoted = retrieved if whole else retrieved.join(asked, on="qid", how="semi")
            if quoted["text"].null_count() == quoted.height:
                quoted = quoted.clear()
        checked = check_quotes(claims, context_chunks(quoted, context_k))
        per_q = checked.group_by("qid").agg(
            supported=((pl.col("verdict") == "SUPPORTED") & pl.col("quote_found")).sum(),
            unverified_quotes=((pl.col("verdict") == "SUPPORTED") & ~pl.col("quote_found")).sum(),
        )
    else:  # a run with no judge output (a retrieval run): no quote to look for, no chunk to fold
        per_q = pl.DataFrame(
            schema={"qid": pl.String, "supported": pl.UInt32, "unverified_quotes": pl.UInt32}
        )
    # The judge's context grades come with a judge revision; a run file's recorded judge output has
    # none, and then the judged context metrics are not columns at all (not n/a on every page).
    context = ("judged_chunks", "judged_relevant", "ref_statements", "ref_covered")
    graded = all(c in results.columns for c in context)
    df = results.select(
        "qid", "n_claims", "correctness", "relevance", "abstained", *(context if graded else ())
    )
    if df["qid"].equals(cases["qid"]):  # every question, in the test set's order: no join needed
        df = df.with_columns(cases["answerable"])
    else:
        df = df.join(cases.select("qid", "answerable"), on="qid", how="left", maintain_order="left")
    df = df.join(per_q, on="qid", how="left", maintain_order="left")  # (score_run relies on it)
    ans = pl.col("answerable")
    abst = pl.col("abstained").cast(pl.Float64)
    return df.select(
        "qid",
        faithfulness=pl.when(pl.col("n_claims") > 0)
        .then(pl.col("supported").fill_null(0) / pl.col("n_claims"))
        .otherwise(None),
        correctness=pl.when(ans).then(pl.col("correctness").replace_strict(CORRECTNESS_SCORE, default=None)),
        relevance=pl.col("relevance"),
        **(
            {
                "judged_context_precision": pl.when(pl.col("judged_chunks") > 0).then(
                    pl.col("judged_relevant") / pl.col("judged_chunks")
                ),
                "judged_context_recall": pl.when(pl.col("ref_statements") > 0).then(
                    pl.col("ref_covered") / pl.col("ref_statements")
                ),
            }
            if graded
            else {}
        ),
        abstention=pl.when(~ans).then(abst),
        false_refusal=pl.when(ans).then(abst),
        no_answer=abst,
        unverified_quotes=pl.col("unverified_quotes").fill_null(0).cast(pl.Int64),
    )
