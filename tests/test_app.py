"""The home page (a placeholder until the dashboard issue): renders the sample runs with evalcore's numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from conftest import ROOT, SAMPLE
from evalcore import load_runs, score_run, summarize


@pytest.fixture(autouse=True)
def _clear_caches() -> None:
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()


def run_app(monkeypatch: pytest.MonkeyPatch, folder: Path) -> AppTest:
    monkeypatch.setenv("RAGTRIAGE_RUNS", str(folder))
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=30).run()


def test_home_lists_runs_and_headline_metrics_equal_evalcore(monkeypatch: pytest.MonkeyPatch) -> None:
    at = run_app(monkeypatch, SAMPLE)
    assert not at.exception
    runs_df = at.dataframe[0].value
    assert list(runs_df["run_id"]) == list(load_runs(SAMPLE).runs)
    metrics = at.dataframe[1].value.set_index("metric")
    run = load_runs(SAMPLE).runs["2026-11-16-rerank-prompt-v2"]
    expected = summarize(score_run(run), run.testset)
    for row in expected.iter_rows(named=True):
        assert metrics.loc[row["metric"], "mean"] == pytest.approx(row["mean"])


def test_a_broken_run_is_listed_and_the_others_still_render(monkeypatch: pytest.MonkeyPatch, runs_copy: Path) -> None:
    (runs_copy / "2026-10-05-bm25" / "results.jsonl").write_text('{"qid": "hv-001", "retrieved": [}\n')
    at = run_app(monkeypatch, runs_copy)
    assert not at.exception
    assert any("results.jsonl:1" in e.value and "malformed JSON" in e.value for e in at.error)
    assert len(at.dataframe[0].value) == 3


def test_run_text_is_never_rendered_as_html(monkeypatch: pytest.MonkeyPatch, runs_copy: Path) -> None:
    manifest = json.loads((runs_copy / "2026-10-05-bm25" / "run.json").read_text())
    manifest["label"] = "<script>alert(1)</script>"
    (runs_copy / "2026-10-05-bm25" / "run.json").write_text(json.dumps(manifest))
    at = run_app(monkeypatch, runs_copy)
    assert not at.exception
    assert all("<script>" not in m.body for m in at.markdown), "labels reach pages only through escaped widgets"
