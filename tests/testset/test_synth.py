"""Synthetic questions through the real SDK against the local Messages API: queued for review with
their source chunks and spans as labels, overlap kept, never paid for twice, never in the test set
unreviewed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from evalcore import read_testset
from evalcore.judge.client import JudgeConfig
from evalcore.store import Store
from evalcore.testset.synth import chunks_from_corpus, estimate, plan, synthesize
from helpers import ROOT, SAMPLE

sys.path.insert(0, str(ROOT / "tests" / "judge"))
from mock_api import mock_api

CORPUS = SAMPLE / "corpus" / "documents.jsonl"


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    with mock_api() as running:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", running.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-real")
        yield running


def test_corpus_paragraphs_are_the_sample_index_chunks() -> None:
    chunks = chunks_from_corpus(CORPUS)
    ts = read_testset(SAMPLE / "testset.jsonl")
    assert set(ts.qrels["chunk_id"]) <= {c.chunk_id for c in chunks}  # same ids as the index
    text = CORPUS.read_text()
    first = chunks[0]
    import json

    doc = json.loads(text.splitlines()[0])
    assert doc["text"][first.start : first.end] == first.text


def test_plan_mixes_kinds_as_asked() -> None:
    chunks = chunks_from_corpus(CORPUS)
    planned = plan(chunks, 20, multi=0.25, unanswerable=0.1, seed=1)
    kinds = [k for k, _ in planned]
    assert kinds.count("multi") == 5 and kinds.count("unanswerable") == 2 and kinds.count("single") == 13
    assert all(len(c) == 2 and c[0].topic == c[1].topic for k, c in planned if k == "multi")


def test_questions_are_queued_with_labels_and_never_paid_twice(api, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    store = Store(tmp_path / "store.sqlite")
    ts = read_testset(SAMPLE / "testset.jsonl")
    chunks = chunks_from_corpus(CORPUS)
    planned = plan(chunks, 10, multi=0.2, unanswerable=0.1, seed=2)
    assert "10 questions: 0 from the cache, 10 to write" in estimate(planned, JudgeConfig(), store)
    got = synthesize(store, ts.sha256, planned, JudgeConfig())
    assert got.queued == 10 and got.cached == 0 and got.failed == [] and api.synth_requests == 10
    queue = store.candidates(testset=ts.sha256, origin="synthetic")
    assert len(queue) == 10 and {c.status for c in queue} == {"pending"}
    single = next(c for c in queue if c.detail["kind"] == "single")
    assert single.case["tags"]["source"] == "synthetic"
    cid = single.case["tags"]["source_chunks"][0]
    assert single.case["relevant"] == {cid: 2}
    span = single.case["evidence"][0]
    doc = next(c for c in chunks if c.chunk_id == cid)
    assert (
        CORPUS.read_text().count(span["quote"]) >= 1 and doc.start <= span["start"] < span["end"] <= doc.end
    )
    assert single.overlap is not None and single.overlap >= 0.8  # the copycat writer is flagged
    unans = next(c for c in queue if c.detail["kind"] == "unanswerable")
    assert unans.case["relevant"] == {} and unans.case["tags"]["type"] == "unanswerable"
    assert read_testset(SAMPLE / "testset.jsonl").sha256 == ts.sha256  # the test set untouched
    again = synthesize(store, ts.sha256, planned, JudgeConfig())
    assert again.cached == 10 and api.synth_requests == 10  # nothing paid twice
    assert len(store.candidates(testset=ts.sha256)) == 10


def test_a_quote_not_in_its_chunk_is_flagged_for_the_reviewer(api, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    corpus = tmp_path / "docs.jsonl"
    corpus.write_text('{"doc_id": "d/1", "text": "BADQUOTE The agent retries three times. Then it stops."}\n')
    store = Store(tmp_path / "store.sqlite")
    synthesize(store, "f" * 64, plan(chunks_from_corpus(corpus), 1, multi=0, unanswerable=0), JudgeConfig())
    cand = store.candidates()[0]
    assert cand.detail["notes"][0].startswith("quote not found in d/1#01")
    assert cand.case["relevant"] == {"d/1#01": 1} and cand.case["evidence"] == []
