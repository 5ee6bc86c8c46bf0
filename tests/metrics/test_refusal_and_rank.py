"""Two rules that feed everything downstream: when an answer counts as a refusal (abstention), and
the rank order outside the compiled loop (which chunks 'left the top k', the gate's reasons)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from evalcore import compare, load_run
from evalcore.metrics.refusal import looks_like_refusal
from evalcore.metrics.retrieval import rank
from helpers import case, write_jsonl

ANSWERS = {
    "I don't know.": True,
    "I do not know which plan you are on.": True,
    "The documentation does not cover archive tiers.": True,
    "Snapshots are kept for 90 days; I don't know about archives.": False,
    "Restores take an hour. I cannot answer for the agent.": False,
    "Known issue: no answer yet from support, but restarts fix it.": False,
}


@pytest.mark.parametrize(("answer", "refused"), list(ANSWERS.items()))
def test_only_an_answer_that_opens_with_a_refusal_counts_as_one(answer: str, refused: bool) -> None:
    assert looks_like_refusal(answer) is refused


def test_both_readers_infer_abstention_the_same_way(tmp_path: Path) -> None:
    """The line-by-line reader uses the Python pattern, the whole-file and parquet readers the polars
    one; a mid-sentence "I don't know" must be an answer in all of them."""
    ts = write_jsonl(tmp_path / "testset.jsonl", [case(f"q{i}") for i in range(len(ANSWERS))])
    recs = [{"qid": f"q{i}", "answer": a} for i, a in enumerate(ANSWERS)]
    from evalcore import RunWriter

    for fmt in ("jsonl", "parquet"):
        with RunWriter(tmp_path / fmt, testset=ts, fmt=fmt) as w:  # type: ignore[arg-type]
            for r in recs:
                w.add(r["qid"], answer=r["answer"])
    bad = tmp_path / "slow"
    (bad).mkdir()
    (bad / "run.json").write_text((tmp_path / "jsonl" / "run.json").read_text().replace('"jsonl"', '"slow"'))
    # A blank line sends this copy through the line-by-line reader.
    (bad / "results.jsonl").write_text("\n" + "".join(json.dumps(r) + "\n" for r in recs))
    for name in ("jsonl", "parquet", "slow"):
        got = load_run(tmp_path / name).results.sort("qid")["abstained"].to_list()
        assert got == list(ANSWERS.values()), name


def test_tied_scores_rank_by_chunk_id_descending_everywhere() -> None:
    tied = pl.DataFrame({"qid": ["q"] * 3, "chunk_id": ["a", "c", "b"], "score": [1.0, 1.0, 1.0]})
    assert rank(tied).collect().sort("rank")["chunk_id"].to_list() == ["c", "b", "a"], "trec_eval's tie-break"


def test_a_labeled_chunk_pushed_out_by_a_tie_left_the_top_k(tmp_path: Path) -> None:
    """Baseline ranks the labeled 'a' first; the candidate ties it with 'z', which wins the tie-break
    (chunk id descending) at k=1. Ascending order would keep 'a' and hide the regression."""
    ts = write_jsonl(tmp_path / "testset.jsonl", [case("q1", {"a": 1})])
    from evalcore import RunWriter

    for name, ret in (("base", [("a", 2.0), ("z", 1.0)]), ("cand", [("a", 1.0), ("z", 1.0)])):
        with RunWriter(tmp_path / name, testset=ts) as w:
            w.add("q1", retrieved=[{"chunk_id": c, "score": s} for c, s in ret])
    cmp = compare(load_run(tmp_path / "base"), load_run(tmp_path / "cand"), k=1, permutations=100)
    row = cmp.question("q1")
    assert row is not None and row["left_top_k"] == ["a"] and row["diagnosis"] == "retrieval"


@pytest.mark.parametrize("lines", [False, True], ids=["qids", "lines"])
@pytest.mark.parametrize("seed", range(5))
def test_chunk_moves_are_the_same_whether_a_run_is_listed_in_rank_order_or_not(
    seed: int, lines: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs listed in trec_eval's order (as run files are) find their top k by marking rows in
    numpy; any other order is ranked by sorting. Both must name the same chunks leaving and entering
    the top k — ties, questions in one run only, labels of grade 0 included."""
    import random
    from types import SimpleNamespace

    import evalcore.comparison as comparison

    rnd = random.Random(seed)
    qrels = pl.DataFrame(
        [(f"q{q}", f"c{c}", rnd.choice([0, 1, 2])) for q in range(30) for c in rnd.sample(range(12), 4)],
        schema=["qid", "chunk_id", "rel"],
        orient="row",
    )

    def run() -> SimpleNamespace:
        rows = []
        for q in rnd.sample(range(32), 26):
            for c in rnd.sample(range(12), rnd.randint(0, 9)):
                rows.append((f"q{q}", f"c{c}", float(rnd.randint(0, 3))))
        df = (
            rank(pl.DataFrame(rows, schema=["qid", "chunk_id", "score"], orient="row")).collect().drop("rank")
        )
        if lines:  # as a loaded run's table: each question's rows carry its record's line
            df = df.with_columns(line=pl.col("qid").rle_id().cast(pl.Int64) + 1)
        return SimpleNamespace(retrieved=df, testset=SimpleNamespace(qrels=qrels))

    base, cand = run(), run()
    listed = comparison._chunk_moves(base, cand, 3).sort("qid")  # type: ignore[arg-type]
    import evalcore.metrics.retrieval as retrieval

    assert comparison.ranks_as_listed(base.retrieved, by_line=lines) is not None, "the numpy path"
    # The reference sorts: rank() checks the order with the same function, so both say "not in order".
    monkeypatch.setattr(comparison, "ranks_as_listed", lambda df, **kw: None)
    monkeypatch.setattr(retrieval, "ranks_as_listed", lambda df, **kw: None)
    sorted_ = comparison._chunk_moves(base, cand, 3).sort("qid")  # type: ignore[arg-type]
    assert listed.equals(sorted_)
    assert listed["left_top_k"].list.len().sum() + listed["entered_top_k"].list.len().sum() > 0
