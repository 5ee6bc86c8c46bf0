"""Differential test: evalcore's retrieval measures equal pytrec_eval's (trec_eval 9.x) to 1e-12.

The generated data has what breaks naive implementations: tied scores across a cutoff, unjudged
chunks, graded labels (0, 1, 2, 3), judged-not-relevant labels, questions with fewer retrieved chunks
than the cutoff, relevant chunks never retrieved, and questions with no relevant label at all.
"""

from __future__ import annotations

import random

import polars as pl
import pytest

from evalcore.metrics.retrieval import evaluate
from helpers import CUTS, make_data, oracle

pytrec_eval = pytest.importorskip("pytrec_eval")

PAIRS = (
    [(f"P@{k}", f"P_{k}") for k in CUTS]
    + [(f"R@{k}", f"recall_{k}") for k in CUTS]
    + [(f"nDCG@{k}", f"ndcg_cut_{k}") for k in CUTS]
    + [(f"AP@{k}", f"map_cut_{k}") for k in CUTS]
    + [(f"hit@{k}", f"success_{k}") for k in (1, 5, 10)]
    + [("RR", "recip_rank"), ("AP", "map"), ("Rprec", "Rprec"), ("nDCG", "ndcg")]
)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_measure_equals_pytrec_eval_on_tied_graded_partial_data(seed: int) -> None:
    run, qrels = make_data(seed)
    ours = evaluate(run, qrels, [m for m, _ in PAIRS])
    theirs = oracle(run, qrels)
    assert set(ours["qid"]) == set(theirs), "same query set as trec_eval (results and labels both present)"
    worst = 0.0
    for row in ours.iter_rows(named=True):
        for mine, trec in PAIRS:
            diff = abs(row[mine] - theirs[row["qid"]][trec])
            worst = max(worst, diff)
            assert diff <= 1e-12, (row["qid"], mine, row[mine], theirs[row["qid"]][trec])
    assert worst <= 1e-12


def test_relevance_threshold_matches_trec_eval_level_2() -> None:
    run, qrels = make_data(7)
    names = [
        ("P(rel=2)@5", "P_5"),
        ("R(rel=2)@10", "recall_10"),
        ("RR(rel=2)", "recip_rank"),
        ("AP(rel=2)", "map"),
    ]
    ours = evaluate(run, qrels, [m for m, _ in names])
    theirs = oracle(run, qrels, level=2)
    for row in ours.iter_rows(named=True):
        for mine, trec in names:
            assert abs(row[mine] - theirs[row["qid"]][trec]) <= 1e-12, (row["qid"], mine)


def test_data_really_has_ties_across_cutoffs() -> None:
    # Guard against the generator silently losing the case this test exists for.
    from evalcore.metrics.retrieval import straddling_ties

    run, qrels = make_data(0)
    ties = straddling_ties(run, qrels, [5, 10])
    assert ties["straddled"].min() > 10
    assert ties["affected"].min() > 0


@pytest.mark.parametrize("seed", [3, 4])
def test_rank_ordered_runs_with_shuffled_ties_equal_pytrec_eval(seed: int) -> None:
    """Run files as systems write them: each question in rank order (ties in any order), questions in
    numeric order (q2 before q10, unlike byte order). evalcore skips the full sort here."""
    run, qrels = make_data(seed)
    rnd = random.Random(seed)
    ordered = (
        run.with_columns(
            n=pl.col("qid").str.slice(1).cast(pl.Int64),
            tie=pl.Series([rnd.random() for _ in range(run.height)]),
        )
        .sort(["n", "score", "tie"], descending=[False, True, False])
        .drop("n", "tie")
    )
    ours = evaluate(ordered, qrels, [m for m, _ in PAIRS])
    theirs = oracle(run, qrels)
    for row in ours.iter_rows(named=True):
        for mine, trec in PAIRS:
            assert abs(row[mine] - theirs[row["qid"]][trec]) <= 1e-12, (row["qid"], mine)


def test_exponential_gain_ndcg_equals_trec_eval_with_the_gains_mapped_in_the_qrels() -> None:
    """nDCG_exp uses 2^grade - 1 as the gain; trec_eval's ndcg uses the label itself as the gain, so
    with each label replaced by 2^grade - 1 the two must agree (IDCG from all labels in both)."""
    run, qrels = make_data(11)
    ours = evaluate(run, qrels, ["nDCG_exp@5", "nDCG_exp@10", "nDCG_exp"])
    theirs = oracle(run, qrels.with_columns(rel=(2 ** pl.col("rel")) - 1))
    linear = evaluate(run, qrels, ["nDCG@10"])
    differs = 0
    for row, lin in zip(ours.iter_rows(named=True), linear["nDCG@10"].to_list(), strict=True):
        t = theirs[row["qid"]]
        for mine, trec in (
            ("nDCG_exp@5", "ndcg_cut_5"),
            ("nDCG_exp@10", "ndcg_cut_10"),
            ("nDCG_exp", "ndcg"),
        ):
            assert abs(row[mine] - t[trec]) <= 1e-12, (row["qid"], mine)
        differs += abs(row["nDCG_exp@10"] - lin) > 1e-9
    assert differs > 10, "graded labels make the two gains differ"
