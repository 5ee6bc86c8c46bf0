"""A review sample of production answers becomes a labeling session in the calibration store."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalcore.calibration.report import session_report
from evalcore.signals.logs import read_log
from evalcore.signals.review import create_review
from evalcore.store import Store
from helpers import SAMPLE


def test_review_session_labels_go_to_the_calibration_store(tmp_path: Path) -> None:
    store = Store(tmp_path / "store.sqlite")
    log = read_log(SAMPLE / "logs" / "production.jsonl")
    sid = create_review(store, log, "prod-week", 12, labels_per_item=2)
    session = store.find_session("prod-week")
    assert session is not None and session.target == "production" and session.run_id == "log:production.jsonl"
    items = store.items(sid)
    assert len(items) == 12 and all(i.judge_label is None for i in items)
    assert all(i.payload["answer"] and not i.payload["answer"].startswith("I don't know") for i in items)
    for item in items:
        store.submit_label(item.id, "ann", "SUPPORTED")
        store.submit_label(item.id, "bob", "SUPPORTED" if item.id % 4 else "NOT_SUPPORTED")
    rep = session_report(store, store.find_session("prod-week"))
    assert rep.overall.human_alpha is not None
    assert "no labeled item to compare the judge with" in rep.verdict()
    with pytest.raises(ValueError, match="exists"):
        create_review(store, log, "prod-week", 5)


def test_a_judged_review_measures_the_judge_on_production_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    from helpers import ROOT

    sys.path.insert(0, str(ROOT / "tests" / "judge"))
    from mock_api import mock_api

    from evalcore import load_runs
    from evalcore.judge.client import JudgeConfig
    from evalcore.testset.overlap import chunk_texts

    store = Store(tmp_path / "store.sqlite")
    log = read_log(SAMPLE / "logs" / "production.jsonl")
    texts = chunk_texts(r.retrieved for r in load_runs(SAMPLE).runs.values())
    with mock_api() as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-real")
        sid = create_review(store, log, "judged", 15, texts=texts, judge=JudgeConfig())
        assert sum(api.requests.values()) == 15
    session = store.find_session("judged")
    assert (
        session is not None and session.judge.isdigit() and session.judge_key.startswith(JudgeConfig().model)
    )
    items = store.items(sid)
    labels = [i.judge_label for i in items]
    assert (
        set(labels) - {None} <= {"SUPPORTED", "NOT_SUPPORTED", "CONTRADICTED"}
        and labels.count("SUPPORTED") > 5
    )
    for item in items:  # a person who agrees with the judge wherever it gave a verdict
        store.submit_label(item.id, "ann", item.judge_label or "unsure")
    rep = session_report(store, session)
    assert rep.overall.percent.value == 1.0


def test_answer_verdict_checks_quotes() -> None:
    from evalcore.signals.review import answer_verdict

    chunks = [{"chunk_id": "c1", "text": "Snapshots are kept for 90 days on Team."}]
    ok = {
        "claims": [
            {"claim": "90 days", "verdict": "SUPPORTED", "quote": "kept for 90 days", "chunk_id": "c1"}
        ]
    }
    fake = {
        "claims": [
            {"claim": "1 year", "verdict": "SUPPORTED", "quote": "kept for one year", "chunk_id": "c1"}
        ]
    }
    contra = {"claims": [*ok["claims"], {"claim": "x", "verdict": "CONTRADICTED"}]}
    assert answer_verdict(ok, chunks) == "SUPPORTED"
    assert answer_verdict(fake, chunks) == "NOT_SUPPORTED"  # a quote not in its chunk does not count
    assert answer_verdict(contra, chunks) == "CONTRADICTED"
    assert answer_verdict({"claims": []}, chunks) is None
