"""The compile-free path (polars) that scores a user's first runs while the kernel compiles: the same
numbers as the kernel, on the cases that break naive implementations."""

from __future__ import annotations

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from evalcore import load_runs
from evalcore.metrics import _vector
from evalcore.metrics.catalogue import DEFAULT_MEASURES
from evalcore.metrics.measures import parse_measures
from evalcore.metrics.retrieval import evaluate
from helpers import SAMPLE, make_data

MEASURES = [
    *DEFAULT_MEASURES,
    "P@1",
    "R@1",
    "RR",
    "AP@10",
    "nDCG",
    "nDCG@3",
    "hit@1",
    "P(rel=2)@5",
    "R(rel=2)@10",
]


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_the_polars_path_equals_the_kernel(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    run, qrels = make_data(seed)
    ms = parse_measures(MEASURES)
    # Every question of the qrels, those with nothing retrieved included (they score 0).
    targets = qrels["qid"].unique()
    kernel = evaluate(run, qrels, ms, qids=targets)
    vector = _vector.evaluate_vector(run, qrels, ms, targets)
    assert_frame_equal(vector, kernel, abs_tol=1e-12)


def test_evaluate_takes_the_polars_path_until_the_kernel_is_at_hand(monkeypatch: pytest.MonkeyPatch) -> None:
    import evalcore.metrics.retrieval as retrieval

    run, qrels = make_data(7)
    used = []
    real = _vector.evaluate_vector
    monkeypatch.setattr(_vector, "evaluate_vector", lambda *a: used.append(1) or real(*a))
    monkeypatch.setattr(retrieval, "kernel_at_hand", lambda: False)
    monkeypatch.setattr(retrieval, "preload", lambda **kw: None)
    fresh = evaluate(run, qrels, list(DEFAULT_MEASURES))
    assert used == [1], "no compile on first use: polars scored it"
    monkeypatch.setattr(retrieval, "kernel_at_hand", lambda: True)
    assert_frame_equal(fresh, evaluate(run, qrels, list(DEFAULT_MEASURES)), abs_tol=1e-12)
    assert used == [1]
    # Measures the polars path does not have, a limit, or a chunk listed twice: always the kernel.
    monkeypatch.setattr(retrieval, "kernel_at_hand", lambda: False)
    evaluate(run, qrels, ["bpref"])
    evaluate(run, qrels, ["AP"], limit=5)
    dup = pl.concat([run, run.head(1)])
    with pytest.raises(ValueError, match="listed twice"):
        evaluate(dup, qrels, ["AP"])
    assert used == [1]


def test_the_polars_path_on_the_sample_runs() -> None:
    ms = parse_measures(list(DEFAULT_MEASURES))
    for run in load_runs(SAMPLE).runs.values():
        qrels = run.testset.qrels
        targets = run.results["qid"].unique()
        assert_frame_equal(
            _vector.evaluate_vector(run.retrieved.select("qid", "chunk_id", "score"), qrels, ms, targets),
            evaluate(run.retrieved, qrels, ms, qids=targets),
            abs_tol=1e-12,
        )
