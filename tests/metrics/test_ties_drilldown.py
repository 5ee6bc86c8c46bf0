"""When tied scores decide whether a labeled chunk is in the top k, the drill-down says so — on the
Question page too — so a user does not read trec_eval's tie rule as a model change."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from evalcore import RunWriter, load_run
from evalcore.question import question_detail
from helpers import ROOT, case, write_jsonl


def tied_run(tmp_path: Path) -> Path:
    ts = write_jsonl(tmp_path / "testset.jsonl", [case("q1", {"c3": 1}), case("q2", {"c1": 1})])
    with RunWriter(tmp_path / "run", testset=ts) as w:
        w.add(
            "q1",
            retrieved=[
                {"chunk_id": "c1", "score": 30.0},
                *({"chunk_id": f"c{i}", "score": 20.0} for i in range(2, 8)),
            ],
        )
        w.add("q2", retrieved=[{"chunk_id": f"c{i}", "score": 10.0 - i} for i in range(1, 8)])
    return tmp_path / "run"


def test_a_tie_across_the_cutoff_with_a_labeled_chunk_is_said(tmp_path: Path) -> None:
    run = load_run(tied_run(tmp_path))
    d = question_detail(run, "q1", k=5)
    assert d is not None and d.missing_labeled == ["c3"]  # trec_eval's order: c7 c6 c5 c4 inside, c3 c2 out
    assert d.tie_at_cutoff == (
        "6 chunks tie at score 20 across the top-5 cutoff (4 inside, 2 outside), labeled c3 among them: "
        "trec_eval's rule orders tied chunks by chunk id, so which of them are in the top k is not the "
        "system's doing"
    )
    assert question_detail(run, "q1", k=7).tie_at_cutoff is None  # every tied chunk inside
    assert question_detail(run, "q2", k=5).tie_at_cutoff is None  # no tie


def test_the_question_page_says_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()
    tied_run(tmp_path)
    monkeypatch.setenv("RAGTRIAGE_RUNS", str(tmp_path))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    at.switch_page("pages/3_Question.py")
    at.query_params["qid"] = "q1"
    at.run()
    assert not at.exception, at.exception
    assert any("6 chunks tie at score 20 across the top\\-5 cutoff" in c.value for c in at.caption)
