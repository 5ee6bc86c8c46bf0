"""The Signals page as its users meet it (AppTest): the planted incident alerted, a log with bad lines
still shown, a review sample labeled on the Calibration page, and a logged question with an e-mail
address promoted — redacted — into a new test-set version."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from evalcore import read_testset
from helpers import SAMPLE
from tests.dashboard.test_pages import open_page, texts


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "runs"
    shutil.copytree(SAMPLE, folder)
    monkeypatch.setenv("RAGTRIAGE_RUNS", str(folder))
    monkeypatch.setenv("RAGTRIAGE_STORE", str(tmp_path / "store.sqlite"))
    monkeypatch.delenv("RAGTRIAGE_LOGS", raising=False)
    return folder


def page(path: str = "pages/6_Signals.py", **params: str) -> AppTest:
    return open_page(pytest.MonkeyPatch(), path, Path(os.environ["RAGTRIAGE_RUNS"]), **params)


def test_monitor_shows_the_planted_incident(runs: Path) -> None:
    at = page()
    alerts = [e.value.replace("\\", "") for e in at.error]
    assert len(alerts) == 1 and alerts[0].startswith("2026-11-19: the no-answer rate rose to 42%")
    assert len(at.get("plotly_chart")) == 2
    reasons = at.dataframe[0].value
    assert reasons["reason"].iloc[0] == "(none given)" and "didn't answer my question" in set(
        reasons["reason"]
    )
    low = at.dataframe[1].value
    assert len(low) > 100 and low["top_score"].is_monotonic_increasing


def test_a_log_with_bad_lines_still_shows_the_rest(runs: Path) -> None:
    log = runs / "logs" / "production.jsonl"
    lines = log.read_text().splitlines()
    lines[9] = lines[9][:40]  # a truncated line
    lines[20] = json.dumps({**json.loads(lines[20]), "time": "last tuesday"})
    log.write_text("\n".join(lines) + "\n")
    at = page()
    assert any("2 bad lines left out" in e.label for e in at.expander)
    shown = "\n".join(t.value for t in at.text)
    assert "production.jsonl:10: error: not valid JSON" in shown and "production.jsonl:21" in shown
    assert at.error[0].value.replace("\\", "").startswith("2026-11-19")


def test_a_link_to_a_line_that_is_not_usable_says_so(runs: Path) -> None:
    at = page(mode="Promote", line="999999")
    assert any("Line 999999 of the link is not a usable line" in w.value for w in at.warning)


def test_no_log_says_where_to_put_one(runs: Path) -> None:
    shutil.rmtree(runs / "logs")
    at = page()
    assert "No production log found" in at.info[0].value


def test_review_sample_is_labeled_on_the_calibration_page(runs: Path) -> None:
    at = page(mode="Review")
    at.text_input(key="sig_rev_name").input("prod-nov")
    at.number_input(key="sig_rev_n").set_value(10).run()
    at.button(key="sig_rev_go").click().run()
    assert "Session prod-nov created with 10 answers" in at.success[0].value.replace("`", "")
    cal = page("pages/4_Calibration.py", session="prod-nov", labeler="ann")
    assert "Read the answer, then the chunks the system retrieved" in texts(cal)
    assert "Asked in production at" in texts(cal)
    cal.button(key="cal_pick_1").click().run()  # NOT_SUPPORTED
    cal.button(key="cal_submit").click().run()
    assert not cal.exception
    assert any("Saved: you said NOT_SUPPORTED." in s.value.replace("*", "") for s in cal.success)


def test_promote_a_question_with_an_email_address(runs: Path) -> None:
    log = runs / "logs" / "production.jsonl"
    line = next(
        i for i, t in enumerate(log.read_text().splitlines(), start=1) if "alan.turing@example.com" in t
    )
    at = page(mode="Promote", line=str(line))
    assert any("Personal data found: email" in w.value for w in at.warning)
    assert at.text_area(key=f"sig_q_{line}").value.endswith("My email is [EMAIL] if you need it.")
    at.multiselect(key=f"sig_rel_{line}").select("billing/plans#05")
    at.text_area(key=f"sig_ref_{line}").input("365 days.")
    at.text_input(key="sig_who").input("ann").run()
    assert at.button(key="sig_promote").disabled  # type and topic are the person's to pick
    at.selectbox(key=f"sig_type_{line}").select("lookup")
    at.selectbox(key=f"sig_topic_{line}").select("billing").run()
    at.button(key="sig_promote").click().run()
    assert any("Queued" in s.value for s in at.success)
    at.button(key="sig_promote").click().run()  # a second click does not queue it twice
    assert any("already accepted for this test set" in e.value for e in at.error)
    assert "1 accepted case waits" in texts(at).replace("*", "")
    at.button(key="sig_write").click().run()
    assert any("testset.reviewed.jsonl" in s.value for s in at.success)
    new = read_testset(runs / "testset.reviewed.jsonl")
    row = new.cases.filter(new.cases["source"] == "real").tail(1).row(0, named=True)
    assert (
        row["qid"].startswith("prod-c-")
        and "[EMAIL]" in row["question"]
        and "example.com" not in row["question"]
    )
    assert (runs / "testset.jsonl").read_bytes() == (SAMPLE / "testset.jsonl").read_bytes()
