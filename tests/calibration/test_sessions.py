"""Labeling sessions on a real run: what is sampled and with which weight, what a labeler is shown
(never the judge's verdict), each labeler's own order, and resuming where they stopped."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalcore.calibration.sessions import (
    SessionSpec,
    candidates,
    create,
    next_item,
    order_for,
    preview,
    sample,
)
from evalcore.runs.load import Run, load_runs
from evalcore.store import Store
from tests.helpers import SAMPLE

RUN = "2026-11-16-rerank-prompt-v2"


@pytest.fixture(scope="module")
def run() -> Run:
    return load_runs(SAMPLE).runs[RUN]


def test_low_scores_sampling_fills_half_the_sample_with_the_judges_rare_verdicts_and_keeps_weights(
    run: Run,
) -> None:
    cands = candidates(run, "claims")
    low = [c for c in cands if c["low"]]
    assert 30 < len(low) < len(cands) / 2  # the rarer verdicts: a uniform sample holds fewer
    items = sample(cands, SessionSpec(name="x", n=60, sampling="low-scores"))
    assert len(items) == 60
    drawn_low = [i for i in items if i["low"]]
    assert len(drawn_low) == min(30, len(low))
    # weights are inverse inclusion probabilities: each stratum's weights add up to its size
    assert sum(i["weight"] for i in drawn_low) == pytest.approx(len(low))
    assert sum(i["weight"] for i in items) == pytest.approx(len(cands))
    uniform = sample(cands, SessionSpec(name="x", n=60))
    assert sum(1 for i in uniform if i["low"]) < len(drawn_low)


def test_stratified_sampling_draws_every_tag_value_in_proportion(run: Run) -> None:
    cands = candidates(run, "answers")
    items = sample(
        cands, SessionSpec(name="x", target="answers", n=40, sampling="stratified:topic"), run.testset.tags
    )
    topics = {t for (t,) in run.testset.tags.filter(tag="topic").select("value").unique().iter_rows()}
    judged = {c["qid"] for c in cands}
    topics_judged = {
        v for q, v in run.testset.tags.filter(tag="topic").select("qid", "value").iter_rows() if q in judged
    }
    assert {i["stratum"].split("=", 1)[1] for i in items} == topics_judged <= topics
    assert len(items) == 40
    with pytest.raises(ValueError, match="no question has the tag 'nope'"):
        sample(cands, SessionSpec(name="x", sampling="stratified:nope"), run.testset.tags)


def test_preview_says_what_the_size_buys_before_anything_is_created(run: Run) -> None:
    cands = candidates(run, "claims")
    small = preview(cands, SessionSpec(name="x", n=40))
    big = preview(cands, SessionSpec(name="x", n=200, sampling="low-scores"))
    assert small.startswith("40 of ") and "±0.11" in small and "too few for a useful recall estimate" in small
    assert "too few" not in big


def test_a_session_shows_labelers_the_claim_and_chunks_but_never_the_judges_verdict(
    run: Run, tmp_path: Path
) -> None:
    with Store(tmp_path / "s.db") as store:
        sid = create(store, run, "recorded", SessionSpec(name="first", n=20, seed=3))
        session = store.find_session("first")
        assert session is not None and session.items == 20 and session.judge_key.startswith("claude")
        item = store.items(sid)[0]
        assert {"question", "answer", "chunks", "claim", "quote", "chunk_id"} <= set(item.payload)
        shown = repr(item.payload)
        assert "verdict" not in shown and "SUPPORTED" not in shown and item.judge_label is not None
        with pytest.raises(ValueError, match="a session named 'first' exists"):
            create(store, run, "recorded", SessionSpec(name="first"))


def test_each_labeler_has_their_own_order_and_resumes_where_they_stopped(run: Run, tmp_path: Path) -> None:
    ids = list(range(1, 31))
    assert order_for("ann", ids, 1) == order_for("ann", ids, 1)
    assert order_for("ann", ids, 1) != order_for("bob", ids, 1)
    with Store(tmp_path / "s.db") as store:
        sid = create(store, run, "recorded", SessionSpec(name="s", n=5, labels_per_item=1))
        first, done, total = next_item(store, sid, "ann")
        assert first is not None and (done, total) == (0, 5)
        store.submit_label(first, "ann", "SUPPORTED")
    with Store(tmp_path / "s.db") as store:  # another day, another server
        again, done, total = next_item(store, sid, "ann")
        assert again != first and (done, total) == (1, 5)
        # bob never gets ann's item: its one slot is taken
        seen = set()
        while True:
            nxt, _, _ = next_item(store, sid, "bob")
            if nxt is None:
                break
            seen.add(nxt)
            store.submit_label(nxt, "bob", "NOT_SUPPORTED")
        assert first not in seen and len(seen) == 4
        assert next_item(store, sid, "ann") == (None, 1, 1)
