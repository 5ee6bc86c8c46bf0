"""Coverage counts and the warnings a thin test set gets."""

from __future__ import annotations

from pathlib import Path

from evalcore import read_testset
from evalcore.testset.coverage import coverage
from helpers import SAMPLE, case, write_jsonl


def _tags(type_: str, topic: str, source: str) -> dict[str, str]:
    return {"type": type_, "topic": topic, "source": source}


def test_counts_on_the_sample_test_set() -> None:
    cov = coverage(read_testset(SAMPLE / "testset.jsonl"))
    assert cov.questions == 146
    assert cov.unanswerable == 22 and cov.answerable == 124
    assert cov.heldout == 26
    topics = dict(cov.slices["topic"].select("value", "questions").iter_rows())
    assert topics["billing"] == 29 and sum(topics.values()) == 146
    assert cov.labeled_chunks["max"] == 2.0
    # the sample set leans on synthetic identifier questions, and the page should say so
    assert any("type 'identifier'" in w and "outnumber" in w for w in cov.warnings)
    assert any("topic 'auth' has 1 question" in w for w in cov.warnings)
    assert not any("unanswerable" in w for w in cov.warnings)


def test_a_thin_test_set_gets_every_warning(tmp_path: Path) -> None:
    rows = [
        case("q1", {"c1": 1}, tags=_tags("lookup", "billing", "synthetic"), reference_answer="x"),
        case("q2", {"c2": 1}, tags=_tags("lookup", "billing", "synthetic")),
        case("q3", {}, answerable=True, tags=_tags("lookup", "billing", "real"), reference_answer="y"),
    ]
    cov = coverage(read_testset(write_jsonl(tmp_path / "t.jsonl", rows)), min_topic=5)
    text = "\n".join(cov.warnings)
    assert "no comparison, multi-hop, identifier questions" in text
    assert "topic 'billing' has 3 questions, fewer than 5" in text
    assert "type 'lookup': 2 synthetic questions outnumber 1 real one" in text
    assert "no unanswerable question" in text
    assert "no held-out split" in text
    assert "1 answerable question has no labeled chunk" in text
    assert "1 answerable question has no reference answer" in text


def test_a_well_covered_slice_is_not_warned_about(tmp_path: Path) -> None:
    types = ("lookup", "comparison", "multi-hop", "identifier")
    rows = [
        case(
            f"q{i}",
            {f"c{i}": 1},
            tags=_tags(types[i % 4], "billing", "real"),
            reference_answer="r",
            split="heldout" if i % 5 == 0 else "dev",
        )
        for i in range(12)
    ] + [case("u1", {}, tags=_tags("lookup", "billing", "real"), reference_answer="r")]
    cov = coverage(read_testset(write_jsonl(tmp_path / "t.jsonl", rows)))
    assert cov.warnings == []
