"""Ranked-retrieval measures, vectorised in polars, with trec_eval's conventions.

Conventions (identical to trec_eval 9.x; checked against pytrec_eval by tests/test_retrieval_oracle.py):

* ranking is by score descending, ties broken by chunk id descending (byte order); any rank field
  in the input is ignored;
* a retrieved chunk without a label is not relevant (``judged@k`` shows how many were labeled);
* "relevant" means grade >= ``rel`` (default 1) for the binary measures; nDCG uses the grade as gain;
* IDCG is computed from **all** labeled items of the question, not from the retrieved list;
* a question with no relevant label scores 0 on every measure (trec_eval's rule); RAG scoring
  excludes unanswerable questions before calling :func:`evaluate`.

Input frames: ``retrieved`` with ``qid, chunk_id, score`` and ``qrels`` with ``qid, chunk_id, rel``.
Output: one row per question, one Float64 column per measure named by its canonical name.
"""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

from evalcore.measures import Measure, parse_measures


def rank(retrieved: pl.DataFrame | pl.LazyFrame) -> pl.LazyFrame:
    """Order each question's chunks trec_eval's way and number them from 1 (``rank`` column)."""
    return (
        retrieved.lazy()
        .sort(["qid", "score", "chunk_id"], descending=[False, True, True])
        .with_columns(rank=pl.int_range(1, pl.len() + 1, dtype=pl.Int32).over("qid"))
    )


def _as_measures(measures: Iterable[Measure | str]) -> list[Measure]:
    out: list[Measure] = []
    for m in measures:
        out.extend(parse_measures([m]) if isinstance(m, str) else [m])
    return list(dict.fromkeys(out))


def _encode(run_col: pl.Series, qrels_col: pl.Series, extra: pl.Series | None = None) -> tuple[pl.Series, pl.Series, pl.Series]:
    """Integer codes shared by both frames, numbered in byte order of the ids.

    The codes sort exactly as the strings do, so trec_eval's tie-break (chunk id descending) becomes
    a numeric sort, and joins run on integers. Returns (run codes, qrels codes, categories).
    """
    parts = [run_col, qrels_col] + ([extra] if extra is not None else [])
    cats = pl.concat(parts).unique().sort()
    enum = pl.Enum(cats)
    return run_col.cast(enum).to_physical(), qrels_col.cast(enum).to_physical(), cats


def evaluate(
    retrieved: pl.DataFrame | pl.LazyFrame,
    qrels: pl.DataFrame | pl.LazyFrame,
    measures: Iterable[Measure | str],
    *,
    qids: pl.Series | list[str] | None = None,
) -> pl.DataFrame:
    """Per-question values of ``measures``.

    ``qids`` is the set of questions to score (default: questions with both results and labels, as
    trec_eval). A question in ``qids`` with no retrieved chunk scores 0.

    >>> import polars as pl
    >>> run = pl.DataFrame({"qid": ["q1", "q1", "q1"], "chunk_id": ["c1", "c4", "c7"], "score": [3.0, 2.0, 1.0]})
    >>> qrels = pl.DataFrame({"qid": ["q1"], "chunk_id": ["c4"], "rel": [1]})
    >>> evaluate(run, qrels, ["R@3", "RR"]).to_dicts()
    [{'qid': 'q1', 'R@3': 1.0, 'RR': 0.5}]
    """
    ms = _as_measures(measures)
    run_df = retrieved.lazy().select("qid", "chunk_id", "score").collect()
    qrels_df = qrels.lazy().select("qid", "chunk_id", pl.col("rel").cast(pl.Int64)).collect()
    wanted = None if qids is None else pl.Series("qid", list(qids), dtype=pl.String).unique()
    # Runs list each question's chunks together. Then only the first qid of each block needs
    # encoding, and its code is spread over the block — instead of hashing every row's qid.
    block = run_df["qid"].rle_id()
    starts = run_df["qid"].filter(block.diff().fill_null(1) != 0)
    contiguous = starts.n_unique() == starts.len()
    if contiguous:
        sq, qq, qcats = _encode(starts, qrels_df["qid"], wanted)
        rq = sq.gather(block)
    else:
        rq, qq, qcats = _encode(run_df["qid"], qrels_df["qid"], wanted)
    rc, qc, _ = _encode(run_df["chunk_id"], qrels_df["chunk_id"])
    run_c = pl.DataFrame({"q": rq, "c": rc, "score": run_df["score"]})
    qrels_c = pl.DataFrame({"q": qq, "c": qc, "rel": qrels_df["rel"]})
    if wanted is None:
        q = run_c.select("q").unique().join(qrels_c.select("q").unique(), on="q", how="semi")
    else:
        q = pl.DataFrame({"q": wanted.cast(pl.Enum(qcats)).to_physical()})
    run_c = run_c.join(q, on="q", how="semi")

    levels = sorted({m.rel for m in ms if m.spec.binary} | {1})
    need_full = any(m.cutoff is None for m in ms)
    max_k = max((m.cutoff for m in ms if m.cutoff is not None), default=0)

    # One exact integer key per (question, chunk): the join runs on a single u64 column.
    key = (pl.col("q").cast(pl.UInt64) * (1 << 32) + pl.col("c").cast(pl.UInt64)).alias("key")
    # Already in trec_eval's order (each question's block by score, then chunk id, descending)? Then
    # the sort is skipped: the check is one vectorised pass, the sort the largest single cost.
    same_q = pl.col("q") == pl.col("q").shift(-1)
    in_order = (pl.col("score") > pl.col("score").shift(-1)) | (
        (pl.col("score") == pl.col("score").shift(-1)) & (pl.col("c") > pl.col("c").shift(-1))
    )
    ranked = _trec_order(run_c, contiguous, same_q, in_order).with_columns(
        rank=pl.int_range(1, pl.len() + 1, dtype=pl.Int32).over("q")
    )
    if not need_full:
        ranked = ranked.filter(pl.col("rank") <= max_k)
    num_rel = qrels_c.group_by("q").agg(
        [(pl.col("rel") >= lvl).sum().cast(pl.Int64).alias(f"_nrel{lvl}") for lvl in levels]
    )
    # Joins keep the left (rank) order, so every sum adds in the same order on every run and equal
    # inputs give bit-identical values however their rows were ordered.
    rows = (
        ranked.with_columns(key)
        .join(qrels_c.select(key, "rel"), on="key", how="left", maintain_order="left")
        .join(num_rel, on="q", how="left", maintain_order="left")
    )
    rows = rows.with_columns(
        [(pl.col("rel").fill_null(0) >= lvl).alias(f"_isrel{lvl}") for lvl in levels]
    ).with_columns(
        [
            pl.col(f"_isrel{lvl}").cast(pl.Int32).cum_sum().over("q").alias(f"_cum{lvl}")
            for lvl in levels
            if any(m.name == "AP" and m.rel == lvl for m in ms)
        ]
    )

    rank_c = pl.col("rank")
    rank_f = rank_c.cast(pl.Float64)
    gain_lin = pl.col("rel").fill_null(0).clip(lower_bound=0).cast(pl.Float64)
    gain_exp = (2.0 ** pl.col("rel").fill_null(0).clip(lower_bound=0).cast(pl.Float64)) - 1.0
    disc = (rank_f + 1.0).log(2)

    aggs: list[pl.Expr] = []
    for m in ms:
        name = str(m)
        isrel = pl.col(f"_isrel{m.rel}")
        nrel = pl.col(f"_nrel{m.rel}").first().fill_null(0)
        within = isrel if m.cutoff is None else isrel & (rank_c <= m.cutoff)
        if m.name == "P":
            aggs.append((within.sum() / m.cutoff).alias(name))
        elif m.name == "R":
            aggs.append(_safe_div(within.sum(), nrel).alias(name))
        elif m.name == "hit":
            aggs.append(within.any().cast(pl.Float64).alias(name))
        elif m.name == "RR":
            aggs.append((1.0 / pl.when(within).then(rank_f).min()).fill_null(0.0).alias(name))
        elif m.name == "AP":
            prec = pl.col(f"_cum{m.rel}").cast(pl.Float64) / rank_f
            aggs.append(_safe_div(pl.when(within).then(prec).otherwise(0.0).sum(), nrel).alias(name))
        elif m.name == "Rprec":
            aggs.append(_safe_div((isrel & (rank_c <= nrel)).sum(), nrel).alias(name))
        elif m.name in ("nDCG", "nDCG_exp"):
            gain = gain_lin if m.name == "nDCG" else gain_exp
            dcg = gain / disc if m.cutoff is None else pl.when(rank_c <= m.cutoff).then(gain / disc).otherwise(0.0)
            aggs.append(dcg.sum().alias(f"_dcg:{name}"))
        elif m.name == "judged":
            aggs.append(((pl.col("rel").is_not_null() & (rank_c <= m.cutoff)).sum() / m.cutoff).alias(name))
        else:  # pragma: no cover - the registry and this switch are kept in step by tests
            msg = f"no computation for measure {name}"
            raise ValueError(msg)

    per_q = rows.group_by("q").agg(aggs)
    out = q.join(per_q, on="q", how="left")

    ndcgs = [m for m in ms if m.name in ("nDCG", "nDCG_exp")]
    if ndcgs:
        ideal = (
            qrels_c.filter(pl.col("rel") > 0)
            .sort(["q", "rel"], descending=[False, True])
            .with_columns(irank=pl.int_range(1, pl.len() + 1).over("q"))
        )
        idisc = (pl.col("irank").cast(pl.Float64) + 1.0).log(2)
        iaggs = []
        for m in ndcgs:
            g = pl.col("rel").cast(pl.Float64)
            if m.name == "nDCG_exp":
                g = 2.0**g - 1.0
            term = g / idisc if m.cutoff is None else pl.when(pl.col("irank") <= m.cutoff).then(g / idisc).otherwise(0.0)
            iaggs.append(term.sum().alias(f"_idcg:{m}"))
        out = out.join(ideal.group_by("q").agg(iaggs), on="q", how="left")
        out = out.with_columns(
            [
                pl.when(pl.col(f"_idcg:{m}") > 0)
                .then(pl.col(f"_dcg:{m}").fill_null(0.0) / pl.col(f"_idcg:{m}"))
                .otherwise(0.0)
                .alias(str(m))
                for m in ndcgs
            ]
        )
    cols = [str(m) for m in ms]
    # Codes are numbered in byte order of the qids, so sorting by code sorts by qid.
    out = out.sort("q")
    return out.select(
        pl.Series("qid", qcats.gather(out["q"]), dtype=pl.String),
        *[pl.col(c).cast(pl.Float64).fill_null(0.0) for c in cols],
    )


def _trec_order(run_c: pl.DataFrame, contiguous: bool, same_q: pl.Expr, in_order: pl.Expr) -> pl.DataFrame:
    """Rows in trec_eval's order: each question's rows by score, then chunk id, descending.

    A run file is normally written in rank order already; then only tied scores can be out of
    trec_eval's order, and only those rows are sorted and put back where the tie sits. Anything
    else gets the full sort.
    """
    if not contiguous:
        return run_c.sort(["q", "score", "c"], descending=[False, True, True])
    tie = (
        (pl.col("q") == pl.col("q").shift(1)) & (pl.col("score") == pl.col("score").shift(1))
    ).fill_null(False) | (same_q & (pl.col("score") == pl.col("score").shift(-1))).fill_null(False)
    # One pass, three answers: already in order? in score order? how many rows share a score?
    ok, by_score, ties = run_c.select(
        (~same_q.fill_null(False) | in_order.fill_null(True)).all().alias("ok"),
        (~same_q.fill_null(False) | (pl.col("score") >= pl.col("score").shift(-1)).fill_null(True)).all().alias("by_score"),
        tie.sum().alias("ties"),
    ).row(0)
    if ok:
        return run_c
    if not by_score or ties > run_c.height // 5:
        # Not in rank order, or so many tied rows that a plain sort is cheaper than fixing them.
        return run_c.sort(["q", "score", "c"], descending=[False, True, True])
    # In score order within each question: fix the order inside groups of equal scores only.
    idx = run_c.with_row_index("_i").filter(tie)
    # Tied rows keep their slots; within each group of equal scores (contiguous in the file) the
    # chunk ids are re-dealt in descending order. Groups are ordered by where they sit in the file,
    # not by qid, so blocks in any order go back where they came from.
    fixed = idx.with_columns(start=pl.col("_i").min().over(["q", "score"])).sort(
        ["start", "c"], descending=[False, True]
    )
    return run_c.with_columns(c=run_c["c"].scatter(fixed["_i"].sort(), fixed["c"]))


def _safe_div(num: pl.Expr, den: pl.Expr) -> pl.Expr:
    return pl.when(den > 0).then(num.cast(pl.Float64) / den.cast(pl.Float64)).otherwise(0.0)


def straddling_ties(retrieved: pl.DataFrame, qrels: pl.DataFrame, cutoffs: Iterable[int]) -> pl.DataFrame:
    """For each cutoff k: how many questions have a group of equal scores that the cutoff splits
    (ranks k and k+1 share a score), and in how many of those the tied group mixes labels, so that the
    value at k depends on the tie-break rule. trec_eval breaks such ties by chunk id; other tools do not.

    Returns ``k, straddled, affected``.
    """
    ranked = rank(retrieved.select("qid", "chunk_id", "score")).join(
        qrels.lazy().select("qid", "chunk_id", "rel"), on=["qid", "chunk_id"], how="left"
    )
    ranked = ranked.with_columns(rel=pl.col("rel").fill_null(0))
    out = []
    for k in sorted(set(cutoffs)):
        at_k = ranked.filter(pl.col("rank") == k).select("qid", kscore="score")
        nxt = ranked.filter(pl.col("rank") == k + 1).select("qid", nscore="score")
        split = at_k.join(nxt, on="qid").filter(pl.col("kscore") == pl.col("nscore")).select("qid", "kscore")
        groups = (
            ranked.join(split, on="qid")
            .filter(pl.col("score") == pl.col("kscore"))
            .group_by("qid")
            .agg(mixed=pl.col("rel").n_unique() > 1)
            .collect()
        )
        out.append({"k": k, "straddled": groups.height, "affected": int(groups["mixed"].sum())})
    return pl.DataFrame(out, schema={"k": pl.Int64, "straddled": pl.Int64, "affected": pl.Int64})
