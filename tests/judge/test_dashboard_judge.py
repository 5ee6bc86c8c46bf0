"""Re-judging from the Question page, against the local Messages API mock: the key typed into the
page stays in the session, the new revision shows at once, and a revision's verdicts are what the
page then shows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mock_api import mock_api
from streamlit.testing.v1 import AppTest
from test_judge import KEY, make_run

from helpers import ROOT


@pytest.fixture(autouse=True)
def _clear_caches() -> None:
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()


@pytest.fixture
def api(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """A runs folder with one run, a store of its own, no key on the server, the API mocked."""
    make_run(tmp_path)
    monkeypatch.setenv("RAGTRIAGE_RUNS", str(tmp_path))
    monkeypatch.setenv("RAGTRIAGE_STORE", str(tmp_path / "store.sqlite"))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with mock_api() as running:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", running.url)
        yield running


def test_rejudge_a_question_from_the_page(tmp_path: Path, api) -> None:  # type: ignore[no-untyped-def]
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page("pages/3_Question.py")
    at.query_params["qid"] = "q-ok"
    at.run()
    assert not at.exception, at.exception
    assert at.selectbox(key="q_judge").value == "recorded"
    assert at.button(key="q_rejudge").disabled, "no key yet: nothing to send"
    assert any("No API key on the server" in c.value for c in at.caption)
    captions = [re.sub(r"\\(.)", r"\1", c.value) for c in at.caption]
    assert any("1 question: 0 in the cache (free), 1 to judge" in c for c in captions)
    at.text_input(key="judge_key").input(KEY).run()
    at.button(key="q_rejudge").click().run()
    assert not at.exception, at.exception
    assert sum(api.requests.values()) == 1
    judge = at.selectbox(key="q_judge")
    assert judge.value == "1" and "revision 1 · claude-sonnet-4-5" in judge.format_func(judge.value)
    # The page now shows the revision's verdicts: the mock judge's claim, with its quote.
    assert any(m.value.startswith(":green-badge[SUPPORTED]") for m in at.markdown)
    # The new revision against the run file's own verdicts (which hold none): what changed.
    at.selectbox(key="q_judge_vs").select("recorded").run()
    diff = "\n".join(re.sub(r"\\(.)", r"\1", m.value) for m in at.markdown)
    assert "From recorded (the run file's) to revision 1" in diff and "faithfulness – → 1.000" in diff
    assert "+ Snapshots on the Team plan are kept for 90 days." in diff
    # The key went to the API, and nowhere else: not the URL, not the store.
    assert KEY not in str(dict(at.query_params))
    assert KEY.encode() not in (tmp_path / "store.sqlite").read_bytes()


def test_rejudge_the_listed_questions_of_both_runs_from_compare(tmp_path: Path, api) -> None:  # type: ignore[no-untyped-def]
    from test_judge import CHUNK, QUESTIONS

    from evalcore import RunWriter

    with RunWriter(tmp_path / "run2", testset=tmp_path / "testset.jsonl", system={"prompt": "v2"}) as w:
        for qid in QUESTIONS:
            w.add(
                qid,
                retrieved=[{"chunk_id": "c1", "score": 1.0, "text": CHUNK}],
                answer="The Team plan costs $99.",
            )
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page("pages/2_Compare.py")
    at.query_params["base"], at.query_params["cand"] = "run", "run2"
    at.query_params["status"] = ["regressed", "mixed", "improved", "unchanged"]
    at.run()
    assert not at.exception, at.exception
    assert "faithfulness" not in set(at.dataframe[0].value["metric"]), "no judge output recorded yet"
    at.text_input(key="cmp_rejudge_key").input(KEY).run()
    at.button(key="cmp_rejudge").click().run()
    assert not at.exception, at.exception
    assert sum(api.requests.values()) == 2 * len(QUESTIONS), "every listed question, in both runs"
    assert at.selectbox(key="cmp_judge").value == "latest"
    summary = at.dataframe[0].value.set_index("metric")
    # The mock judge reads the chunks: run's answers are in them, run2's "$99" is not.
    assert summary.loc["faithfulness", "delta"] < 0
    assert KEY not in str(dict(at.query_params))


def test_a_failed_rejudge_says_so_where_its_verdicts_are_shown(tmp_path: Path, api) -> None:  # type: ignore[no-untyped-def]
    api.behaviour["How long are Team snapshots kept?"] = "refusal"
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page("pages/3_Question.py")
    at.query_params["qid"] = "q-ok"
    at.run()
    at.text_input(key="judge_key").input(KEY).run()
    at.button(key="q_rejudge").click().run()
    assert not at.exception, at.exception
    judge = at.selectbox(key="q_judge")
    assert judge.value == "1" and judge.format_func("1").endswith("1 verdict, 1 failed")
    shown = "\n".join(re.sub(r"\\(.)", r"\1", w.value) for w in [*at.warning, *at.error])
    assert "The judge failed on this answer in revision 1: the judge refused to answer" in shown


def test_an_answer_that_was_never_given_is_not_offered_for_judging(tmp_path: Path, api) -> None:  # type: ignore[no-untyped-def]
    from test_judge import QUESTIONS

    from evalcore import RunWriter

    with RunWriter(tmp_path / "retrieval-only", testset=tmp_path / "testset.jsonl") as w:
        for qid in QUESTIONS:
            w.add(qid, retrieved=[{"chunk_id": "c1", "score": 1.0}])
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page("pages/3_Question.py")
    at.query_params["qid"], at.query_params["run"] = "q-ok", "retrieval-only"
    at.run()
    assert not at.exception, at.exception
    # Not a disabled button: no judge action at all on a run that recorded no answer (issue 30).
    assert not [e for e in at.expander if "Re-judge" in e.label]
    assert not [b for b in at.button if b.key == "q_rejudge"]
    assert not [s for s in at.selectbox if s.label == "Judge verdicts"]


def test_compare_rejudges_the_baseline_like_the_candidate_in_one_click(
    tmp_path: Path, api, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """Two runs judged by different judges: Compare says so, and one button re-judges the baseline
    with the candidate's judge, after which the two sides compare again."""
    from test_judge import CHUNK, QUESTIONS

    from evalcore import RunWriter, load_run
    from evalcore.judge.client import JudgeConfig
    from evalcore.judge.rerun import rerun
    from evalcore.store import Store

    with RunWriter(tmp_path / "run2", testset=tmp_path / "testset.jsonl", system={"prompt": "v2"}) as w:
        for qid in QUESTIONS:
            w.add(
                qid,
                retrieved=[{"chunk_id": "c1", "score": 1.0, "text": CHUNK}],
                answer="The Team plan costs $99.",
            )
    ok = ["q-ok", "q-429"]
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)  # for the setup only: the page gets no key
    with Store(tmp_path / "store.sqlite") as store:
        rerun(load_run(tmp_path / "run"), store, JudgeConfig(model="claude-test-old"), qids=ok)
        rerun(load_run(tmp_path / "run2"), store, JudgeConfig(model="claude-test-new"), qids=ok)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    sent = sum(api.requests.values())
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page("pages/2_Compare.py")
    at.query_params["base"], at.query_params["cand"], at.query_params["judge"] = "run", "run2", "latest"
    at.run()
    assert not at.exception, at.exception
    assert any("judged by different judges" in w.value for w in at.warning)
    assert at.dataframe[0].value.set_index("metric").loc["faithfulness", "sig"] == "judge changed"
    at.text_input(key="cmp_like_key").input(KEY).run()
    at.button(key="cmp_like").click().run()
    assert not at.exception, at.exception
    bodies = api.bodies[sent:]
    asked = {api.question_of(b) for b in bodies}
    assert asked == {q for q, _, _ in QUESTIONS.values()}, "every question the comparison covers"
    assert {b["model"] for b in bodies} == {"claude-test-new"}, "with the candidate's model"
    assert all("$99" not in b["messages"][0]["content"] for b in bodies), "the baseline's answers only"
    assert not any("judged by different judges" in w.value for w in at.warning)
    summary = at.dataframe[0].value.set_index("metric")
    assert summary.loc["faithfulness", "sig"] != "judge changed"


def test_a_link_opens_a_question_under_a_judge_revision(
    tmp_path: Path, api, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    from evalcore import load_run
    from evalcore.judge.client import JudgeConfig
    from evalcore.judge.rerun import rerun
    from evalcore.store import Store

    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with Store(tmp_path / "store.sqlite") as store:
        rerun(load_run(tmp_path / "run"), store, JudgeConfig(), qids=["q-ok"])
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page("pages/3_Question.py")
    at.query_params["qid"], at.query_params["judge"] = "q-ok", "latest"
    at.run()
    assert not at.exception, at.exception
    assert at.selectbox(key="q_judge").value == "1"
    assert at.query_params["judge"] in ("1", ["1"]), "the link now names the revision it shows"
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page("pages/3_Question.py")
    at.query_params["qid"], at.query_params["judge"] = "q-ok", "7"
    at.run()
    assert at.selectbox(key="q_judge").value == "recorded"
    assert any("Judge revision 7 is not one of" in c.value for c in at.caption)
