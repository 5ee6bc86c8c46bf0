"""What a judge revision reads into a run, checked where a one-line slip would change a figure or
land a label on the wrong claim: only the chunks the generator was given count in judged context
precision, and claims are numbered as in the run file."""

from __future__ import annotations

import dataclasses

import polars as pl

from evalcore import load_run, score_run
from evalcore.judge.revision import with_verdicts
from evalcore.metrics.quotes import find
from evalcore.store import Verdict
from helpers import SAMPLE

RUN = "2026-11-16-rerank-prompt-v2"


def output(chunks: list[tuple[str, bool]], claims: list[str]) -> dict:  # type: ignore[type-arg]
    return {
        "claims": [{"claim": c, "verdict": "SUPPORTED", "quote": None, "chunk_id": None} for c in claims],
        "correctness": {"verdict": "correct", "reason": "."},
        "relevance": {"score": 1.0, "reason": "."},
        "chunks": [{"chunk_id": c, "relevant": r} for c, r in chunks],
        "reference_statements": [],
        "questions_from_answer": [],
    }


def test_a_grade_for_a_chunk_the_generator_was_not_given_never_counts() -> None:
    run = load_run(SAMPLE / RUN)
    run = dataclasses.replace(run, manifest=run.manifest.model_copy(update={"context_k": 5}))
    # hv-002's generator saw its top 5 (run.json's context_k); guides/faq#01 is rank 8.
    graded = [("billing/plans#02", True), ("security/overview#03", False), ("guides/faq#01", True)]
    v = Verdict("hv-002", "k", True, output=output(graded, ["Keeps snapshots for 30 days."]))
    judged = with_verdicts(run, [v], 1)
    row = score_run(judged).filter(pl.col("qid") == "hv-002").row(0, named=True)
    assert row["judged_context_precision"] == 0.5  # 1 of the 2 given chunks; never 2 of 3


def test_claims_from_a_revision_are_numbered_as_in_the_run_file() -> None:
    """Labels are imported by (qid, claim number): a revision's claim 0 is the run file's claim 0."""
    run = load_run(SAMPLE / RUN)
    recorded = run.claims.filter(pl.col("qid") == "hv-003").sort("claim_idx")
    texts = recorded["claim"].to_list()
    v = Verdict("hv-003", "k", True, output=output([], texts))
    judged = with_verdicts(run, [v], 1).claims.filter(pl.col("qid") == "hv-003").sort("claim_idx")
    assert judged.select("claim_idx", "claim").equals(recorded.select("claim_idx", "claim"))
    assert judged["claim_idx"].to_list()[0] == recorded["claim_idx"].to_list()[0] == 0


def test_a_quote_that_ends_its_sentence_differently_is_found() -> None:
    """The judge quotes "kept for 90 days." where the chunk goes on "kept for 90 days, then…"."""
    chunk = "Snapshots on the Team plan are kept for 90 days, then pruned by the retention job."
    got = find("Snapshots on the Team plan are kept for 90 days.", ["Another chunk.", chunk])
    assert got is not None and got.index == 1 and chunk[got.start : got.end].endswith("90 days")


def test_a_judgings_coverage_names_every_reason_a_question_is_missing() -> None:
    """Mutation-run gap: judged, failed, not judged by this judge, and no answer (null or blank), each
    counted in the one line every surface prints."""
    import dataclasses

    import polars as pl

    from evalcore import load_runs
    from evalcore.judge.revision import coverage
    from evalcore.store import Verdict
    from helpers import SAMPLE

    run = load_runs(SAMPLE).runs["2026-11-16-rerank-prompt-v2"]
    blank = {"hv-004": None, "hv-005": "   "}
    results = run.results.with_columns(
        answer=pl.when(pl.col("qid") == "hv-004")
        .then(pl.lit(None, pl.String))
        .when(pl.col("qid") == "hv-005")
        .then(pl.lit(blank["hv-005"]))
        .otherwise(pl.col("answer"))
    )
    run = dataclasses.replace(run, results=results)
    verdicts = [
        Verdict("hv-001", "k1", True, output={"claims": []}),
        Verdict("hv-002", "k2", False, reason="overloaded"),
        Verdict("hv-003", "k3", False, reason="timed out"),
        Verdict("hv-003", "k3b", True, output={"claims": []}),  # failed once, then judged: judged
    ]
    assert coverage(run, verdicts) == (
        "2 of 146 questions judged; 1 failed judgment (evalcore revisions shows why); "
        "141 answers not judged by this judge; 2 without an answer to judge"
    )
