"""The default retrieval measures in polars, for the one moment the compiled kernel is not there yet.

The kernel (:mod:`evalcore.metrics._kernel`) is compiled by numba the first time it is used after an
install — about 10-20 s on a small machine — and cached on disk from then on. A user's first look at
the dashboard should not wait for that: while the kernel compiles in the background, runs of modest
size are scored here, with the same definitions (trec_eval's ranking: score descending, then chunk id
descending; relevance at the measure's level; every question asked for gets a row, 0 with nothing
retrieved). ``tests/metrics/test_vector.py`` holds both paths equal on random runs with ties, graded
labels and questions without results, and on the sample runs.

Only the measures below, with no ``limit``; anything else goes to the kernel.
"""

from __future__ import annotations

import polars as pl

from evalcore.metrics.measures import Measure

SUPPORTED = frozenset({"P", "R", "hit", "RR", "nDCG", "AP", "judged"})
MAX_ROWS = 500_000  # above this the kernel is worth its compile (and is far faster)


def supports(measures: list[Measure], rows: int, limit: int) -> bool:
    return limit == 0 and rows <= MAX_ROWS and all(m.name in SUPPORTED for m in measures)


def evaluate_vector(
    run: pl.DataFrame, qrels: pl.DataFrame, measures: list[Measure], targets: pl.Series
) -> pl.DataFrame:
    """Per-question values of ``measures`` for the questions ``targets`` (``qid`` + a column per
    measure, sorted by qid). ``run``: qid, chunk_id, score; ``qrels``: qid, chunk_id, rel."""
    wanted = pl.DataFrame({"qid": targets})
    ranked = (
        run.join(wanted, on="qid", how="semi")
        .sort(["qid", "score", "chunk_id"], descending=[False, True, True])
        .with_columns(rank=pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over("qid"))
        .join(qrels, on=["qid", "chunk_id"], how="left")
    )
    judged = ranked["rel"].is_not_null()
    ranked = ranked.with_columns(judged=judged, rel=pl.col("rel").fill_null(0))
    per_q = []
    for m in measures:
        level = m.rel if m.spec.binary else 1
        rel = pl.col("judged") & (pl.col("rel") >= level)
        k = m.cutoff
        in_k = pl.col("rank") <= k if k else pl.lit(True)
        num_rel = qrels.filter(pl.col("rel") >= level).group_by("qid").agg(num_rel=pl.len())
        name = str(m)
        if m.name == "P":
            expr = (rel & in_k).sum() / k
        elif m.name == "R":
            expr = (rel & in_k).sum().cast(pl.Float64)  # divided by num_rel below
        elif m.name == "hit":
            expr = (rel & in_k).any().cast(pl.Float64)
        elif m.name == "RR":
            expr = (1.0 / pl.col("rank").filter(rel & in_k).min()).fill_null(0.0)
        elif m.name == "judged":
            expr = (pl.col("judged") & in_k).sum() / k
        elif m.name == "AP":
            # precision at each relevant rank: (relevant so far) / rank, summed; / num_rel below
            expr = (rel.cum_sum() / pl.col("rank")).filter(rel & in_k).sum()
        else:  # nDCG: linear gain, DCG over the top k, IDCG from every labeled chunk's grade
            gain = pl.col("rel").clip(lower_bound=0).cast(pl.Float64)
            expr = (gain / (pl.col("rank") + 1).cast(pl.Float64).log(2)).filter(in_k).sum()
        part = ranked.group_by("qid").agg(expr.alias(name))
        if m.name in ("R", "AP"):
            part = part.join(num_rel, on="qid", how="left").select(
                "qid",
                pl.when(pl.col("num_rel") > 0)
                .then(pl.col(name) / pl.col("num_rel"))
                .otherwise(0.0)
                .alias(name),
            )
        elif m.name == "nDCG":
            part = part.join(_ideal(qrels, k), on="qid", how="left").select(
                "qid",
                pl.when(pl.col("idcg") > 0).then(pl.col(name) / pl.col("idcg")).otherwise(0.0).alias(name),
            )
        per_q.append(part)
    out = wanted
    for part in per_q:
        out = out.join(part, on="qid", how="left")
    cols = [str(m) for m in measures]
    return out.with_columns([pl.col(c).cast(pl.Float64).fill_null(0.0) for c in cols]).sort("qid")


def _ideal(qrels: pl.DataFrame, k: int | None) -> pl.DataFrame:
    """Each question's ideal DCG: its labeled grades, best first, over the top k."""
    ideal = (
        qrels.filter(pl.col("rel") > 0)
        .sort(["qid", "rel"], descending=[False, True])
        .with_columns(pos=pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over("qid"))
    )
    if k:
        ideal = ideal.filter(pl.col("pos") <= k)
    return ideal.group_by("qid").agg(idcg=(pl.col("rel").cast(pl.Float64) / (pl.col("pos") + 1).log(2)).sum())
