"""Generation measures computed in code from stored judge output (no model call here).

* faithfulness = |supported claims whose quote is found in the retrieved text| / |claims|.
  An answer with no factual claim is *not applicable* (null), never 0 or 1. A SUPPORTED claim whose
  quote cannot be found in the question's retrieved chunks does not count as supported, and is flagged.
* correctness = 1 (correct), 0.5 (partially_correct), 0 (incorrect), from the judge's verdict against
  the reference answer; answerable questions only.
* relevance = the stored answer-relevance score in [0, 1].
* abstention (unanswerable questions): 1 if the system declined to answer.
  false_refusal (answerable questions): 1 if it declined. no_answer (all questions): 1 if it declined.
"""

from __future__ import annotations

import polars as pl

CORRECTNESS_SCORE = {"correct": 1.0, "partially_correct": 0.5, "incorrect": 0.0}


def _normalise(expr: pl.Expr) -> pl.Expr:
    # Case, quote style and white space are not evidence of a made-up quote. (Unicode form is
    # folded by normalise(), which applies NFKC only where it can change anything.)
    return (
        expr.str.to_lowercase()
        .str.replace_all(r"[\u2018\u2019\u201c\u201d\"'`]", "")
        # = ``\s+`` -> " ", but a single " " (most of any text) is not a match to rewrite: 5x faster.
        .str.replace_all(r"\s{2,}|[^\S ]", " ")
        .str.strip_chars(" .,;:")
    )


def normalise(texts: pl.Series) -> pl.Series:
    """Texts folded for quote matching: NFKC, lower case, no quote marks, single spaces.

    NFKC leaves ASCII unchanged, so it runs only on the texts that hold other characters.
    """
    df = pl.DataFrame({"t": texts.fill_null("")}).with_row_index("i")
    wide = pl.col("t").str.contains(r"[^\x00-\x7F]")
    parts = [
        df.filter(~wide),
        df.filter(wide).with_columns(pl.col("t").str.normalize("NFKC")),
    ]
    return pl.concat(parts).sort("i").select(_normalise(pl.col("t")))["t"]


def check_quotes(claims: pl.DataFrame, retrieved: pl.DataFrame) -> pl.DataFrame:
    """``claims`` with ``quote_found``: the quote occurs (normalised) in the question's retrieved text."""
    quoted = claims.filter(pl.col("quote").is_not_null()).select("qid").unique()
    mine = retrieved.join(quoted, on="qid", how="semi").select("qid", "text")
    # A chunk is retrieved for many questions: fold each distinct text once.
    distinct = mine.select("text").unique().drop_nulls()
    distinct = distinct.with_columns(norm=normalise(distinct["text"]))
    context = (
        mine.join(distinct, on="text", how="left")
        .group_by("qid")
        .agg(context=pl.col("norm").fill_null("").str.join(" "))
    )
    q = claims.select(pl.col("quote"))["quote"]
    return (
        claims.with_columns(_q=normalise(q))
        .join(context, on="qid", how="left")
        .with_columns(
            quote_found=pl.when(pl.col("_q").str.len_chars() == 0)
            .then(False)
            .otherwise(pl.col("context").fill_null("").str.contains(pl.col("_q"), literal=True))
        )
        .drop("context", "_q")
    )


def generation_scores(results: pl.DataFrame, claims: pl.DataFrame, retrieved: pl.DataFrame,
                      cases: pl.DataFrame) -> pl.DataFrame:
    """Per-question generation measures (null where a measure does not apply)."""
    checked = check_quotes(claims, retrieved)
    per_q = checked.group_by("qid").agg(
        supported=((pl.col("verdict") == "SUPPORTED") & pl.col("quote_found")).sum(),
        unverified_quotes=((pl.col("verdict") == "SUPPORTED") & ~pl.col("quote_found")).sum(),
    )
    df = (
        results.select("qid", "n_claims", "correctness", "relevance", "abstained")
        .join(cases.select("qid", "answerable"), on="qid", how="left")
        .join(per_q, on="qid", how="left")
    )
    ans = pl.col("answerable")
    abst = pl.col("abstained").cast(pl.Float64)
    return df.select(
        "qid",
        faithfulness=pl.when(pl.col("n_claims") > 0)
        .then(pl.col("supported").fill_null(0) / pl.col("n_claims"))
        .otherwise(None),
        correctness=pl.when(ans).then(pl.col("correctness").replace_strict(CORRECTNESS_SCORE, default=None)),
        relevance=pl.col("relevance"),
        abstention=pl.when(~ans).then(abst),
        false_refusal=pl.when(ans).then(abst),
        no_answer=abst,
        unverified_quotes=pl.col("unverified_quotes").fill_null(0).cast(pl.Int64),
    )
