"""Every measure `evalcore trec -m all_trec` prints equals trec_eval's own code (pytrec_eval wraps it),
per query, on data with ties, unlabeled documents, graded and pooled-but-unjudged (-1) labels."""

from __future__ import annotations

import random

import polars as pl
import pytest

from evalcore.metrics.retrieval import categorical
from evalcore.runs.trec import TrecFiles
from evalcore.trec_eval import ALL_TREC, NOT_IMPLEMENTED, parse_trec_measures, trec_eval
from helpers import make_data

pytrec_eval = pytest.importorskip("pytrec_eval")

# pytrec_eval's names for what -m all_trec computes (its trec_eval is 9.0's: recall levels counted as
# x86-64 counts them, and no rbp or unj, which test_trec_eval_suite checks against trec_eval's outputs). Rndcg is ported from trec_eval's current
# m_Rndcg.c, whose expected outputs it reproduces (test_trec_eval_suite); pytrec_eval's older copy
# gives other values on some queries (one relevant document, found below the ideal ranking's end).
THEIRS = (
    {m for m in pytrec_eval.supported_measures} - NOT_IMPLEMENTED - {"relstring", "runid", "num_q", "Rndcg"}
)


def _files(run: pl.DataFrame, qrels: pl.DataFrame) -> TrecFiles:
    rc, qc = categorical(run["chunk_id"], qrels["chunk_id"])
    return TrecFiles(qrels=qrels.with_columns(chunk_id=qc), run=run.with_columns(chunk_id=rc), runid="r")


def _pooled(qrels: pl.DataFrame, seed: int) -> pl.DataFrame:
    """Some labels -1: in the pool but not judged (infAP's sampling)."""
    rnd = random.Random(seed)
    return qrels.with_columns(rel=pl.Series([r if rnd.random() > 0.2 else -1 for r in qrels["rel"]]))


@pytest.mark.parametrize(("seed", "level", "pooled"), [(0, 1, False), (1, 2, False), (2, 1, True)])
def test_all_trec_per_query_values_equal_trec_eval(seed: int, level: int, pooled: bool) -> None:
    run, qrels = make_data(seed, n_q=200)
    if pooled:
        qrels = _pooled(qrels, seed)
    rows, _ = trec_eval(_files(run, qrels), parse_trec_measures(["all_trec"]), level=level, levels="x86")
    ours: dict[tuple[str, str], float] = {(n, q): float(v) for n, q, v in rows if not isinstance(v, str)}
    q: dict[str, dict[str, int]] = {}
    for qid, cid, rel in qrels.iter_rows():
        q.setdefault(qid, {})[cid] = rel
    r: dict[str, dict[str, float]] = {}
    for qid, cid, score in run.iter_rows():
        r.setdefault(qid, {})[cid] = score
    theirs = pytrec_eval.RelevanceEvaluator(q, THEIRS, relevance_level=level).evaluate(r)
    compared = set()
    for qid, values in theirs.items():
        for name, value in values.items():
            if name.startswith("gm_"):
                continue  # summary-only in trec_eval; checked through the summary below
            assert (name, qid) in ours, f"{name} missing for {qid}"
            mine = ours[(name, qid)]
            assert mine == pytest.approx(value, abs=1e-12, nan_ok=True), (name, qid, mine, value)
            compared.add(name)
    expected = {
        "bpref",
        "infAP",
        "iprec_at_recall_0.50",
        "11pt_avg",
        "Rprec_mult_1.20",
        "utility",
        "relative_P_5",
        "set_F",
        "set_map",
        "set_relative_P",
        "num_nonrel_judged_ret",
        "num_rel_ret",
        "success_5",
    }
    assert expected <= compared


def test_all_trec_lists_every_trec_eval_measure_in_its_order() -> None:
    req = parse_trec_measures(["all_trec"])
    assert list(req.measures) == [m for m in ALL_TREC if m not in NOT_IMPLEMENTED]
    assert set(req.skipped) == NOT_IMPLEMENTED, "what is left out is said, so a diff is explained"
