"""Generation metrics from stored judge output: faithfulness only counts quotes found in what was
retrieved, quote matching forgives typography but not words, and each metric applies where it should."""

from __future__ import annotations

import polars as pl
import pytest

from evalcore.metrics.generation import generation_scores

CHUNK = "The vault keeps  snapshots\nfor 30 days — “daily” backups are pruned."


def _score(
    claims: list[dict],
    *,
    answerable: bool = True,
    abstained: bool = False,
    correctness: str | None = "correct",
) -> dict:
    results = pl.DataFrame(
        {
            "qid": ["q1"],
            "n_claims": [len(claims)],
            "correctness": [correctness],
            "relevance": [0.8],
            "abstained": [abstained],
        },
        schema_overrides={"correctness": pl.String},
    )
    claim_frame = pl.DataFrame(
        [
            {"qid": "q1", "claim_idx": i, "verdict": c["verdict"], "quote": c.get("quote")}
            for i, c in enumerate(claims)
        ],
        schema={"qid": pl.String, "claim_idx": pl.Int64, "verdict": pl.String, "quote": pl.String},
    )
    retrieved = pl.DataFrame(
        {
            "qid": ["q1", "q1"],
            "chunk_id": ["c1", "c2"],
            "score": [2.0, 1.0],
            "text": [CHUNK, "Seats are billed monthly."],
        }
    )
    cases = pl.DataFrame({"qid": ["q1"], "answerable": [answerable]})
    return generation_scores(results, claim_frame, retrieved, cases).row(0, named=True)


def test_faithfulness_counts_only_supported_claims_whose_quote_is_in_the_retrieved_text() -> None:
    row = _score(
        [
            {"verdict": "SUPPORTED", "quote": "keeps snapshots for 30 days"},  # white space differs
            {"verdict": "SUPPORTED", "quote": '"Daily" backups are pruned.'},  # quote marks, case, full stop
            {"verdict": "SUPPORTED", "quote": "snapshots are kept for 90 days"},  # not in any chunk
            {"verdict": "NOT_SUPPORTED", "quote": None},
            {"verdict": "SUPPORTED", "quote": None},  # supported, but no quote
        ]
    )
    assert row["faithfulness"] == pytest.approx(2 / 5)
    assert row["unverified_quotes"] == 2, "the made-up quote and the missing one are flagged"


def test_an_answer_without_claims_is_not_applicable_rather_than_zero_or_one() -> None:
    assert _score([])["faithfulness"] is None


def test_correctness_and_abstention_apply_where_they_should() -> None:
    assert _score([], correctness="partially_correct")["correctness"] == 0.5
    answered = _score([], answerable=False, abstained=False, correctness=None)
    assert (
        answered["abstention"] == 0.0
        and answered["correctness"] is None
        and answered["false_refusal"] is None
    )
    declined = _score([], answerable=True, abstained=True)
    assert (
        declined["false_refusal"] == 1.0 and declined["abstention"] is None and declined["no_answer"] == 1.0
    )
