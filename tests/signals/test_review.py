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
