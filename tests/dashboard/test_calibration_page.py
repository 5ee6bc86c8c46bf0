"""The Calibration page as a team uses it (AppTest): a session created from the page with the CI
width shown first, labeling blind (the judge's verdict appears only after submitting), labels in
the store, the agreement view, and Overview flagging an unmeasured judge, then showing the
corrected score."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from evalcore.store import Store
from helpers import ROOT, SAMPLE
from tests.dashboard.test_pages import texts as page_texts

RUN = "2026-11-16-rerank-prompt-v2"


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "store.sqlite"
    monkeypatch.setenv("RAGTRIAGE_RUNS", str(SAMPLE))
    monkeypatch.setenv("RAGTRIAGE_STORE", str(path))
    return path


def texts(at: AppTest) -> str:
    """What a reader sees, bold marks and all alerts included."""
    return (page_texts(at) + "\n" + "\n".join(x.value for x in at.success)).replace("**", "")


def progress(at: AppTest) -> str:
    return at.get("progress")[0].proto.text


def calibration(**params: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    at.switch_page("pages/4_Calibration.py")
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, at.exception
    return at


def test_create_a_session_label_blind_and_read_the_agreement(store: Path) -> None:
    at = calibration()
    assert "No labeling session for this test set yet" in texts(at)
    at.selectbox(key="cal_new_run").select(RUN)
    at.number_input(key="cal_new_n").set_value(20)
    at.text_input(key="cal_new_name").input("weekly").run()
    assert "20 of 216 claims: agreement measured to about ±0.16" in texts(at)
    at.button(key="cal_create").click().run()
    assert not at.exception, at.exception
    with Store(store) as s:
        session = s.find_session("weekly")
        assert session is not None and session.items == 20
        judge_of = {i.id: i.judge_label for i in s.items(session.id)}

    assert "Type your name above" in texts(at)
    at.text_input(key="cal_labeler").input("ann").run()
    shown = texts(at)
    assert (
        progress(at) == "ann: 0 of 20 labeled" and "the judge said" not in shown and "the judge:" not in shown
    )
    submit = at.button(key="cal_submit")
    submit.click().run()
    assert "Pick a label first" in texts(at)
    at.button(key="cal_pick_1").click().run()
    assert at.button(key="cal_pick_1").proto.type == "primary"
    at.text_area(key="cal_rationale").input("no chunk says it").run()
    at.button(key="cal_submit").click().run()
    assert not at.exception, at.exception
    after = texts(at)
    assert "Saved: you said NOT_SUPPORTED; the judge said" in after and progress(at) == "ann: 1 of 20 labeled"
    assert at.text_area(key="cal_rationale").value == ""
    with Store(store) as s:
        (label,) = s.labels(session.id)
    assert (label.labeler, label.label, label.rationale) == ("ann", "NOT_SUPPORTED", "no chunk says it")
    assert f"the judge said {judge_of[label.item_id]}" in after
    # ← goes back to the labeled item: now its verdict is shown, and a new label is a new version
    at.button(key="cal_prev").click().run()
    assert f"Your label: NOT_SUPPORTED (version 1) · the judge: {judge_of[label.item_id]}" in texts(at)
    at.button(key="cal_pick_0").click().run()
    at.button(key="cal_submit").click().run()
    with Store(store) as s:
        history = s.labels(session.id, history=True)
    assert [(x.version, x.label) for x in history] == [(1, "NOT_SUPPORTED"), (2, "SUPPORTED")]

    # another day, another browser: ann resumes where she stopped
    again = calibration(session="weekly", labeler="ann")
    assert progress(again) == "ann: 1 of 20 labeled"
    assert "Your label:" not in texts(again), "she is shown an item she has not labeled"

    at.segmented_control(key="cal_mode").set_value("Agreement").run()
    assert not at.exception, at.exception
    assert "No item has two labels yet" in texts(at)
    assert at.query_params["session"] == "weekly" and at.query_params["mode"] == "Agreement"


def test_overview_flags_an_unmeasured_judge_then_shows_the_corrected_score(store: Path) -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    at.query_params["run"] = RUN
    at.run()
    assert not at.exception, at.exception
    assert "Agreement unmeasured for this judge (claude-opus-4-1 · prompt faithfulness-v3)" in texts(at)
    from evalcore.calibration.sessions import SessionSpec, create
    from evalcore.runs.load import load_runs

    run = load_runs(SAMPLE).runs[RUN]
    with Store(store) as s:
        sid = create(s, run, "recorded", SessionSpec(name="m", n=40, labels_per_item=1))
        for k, item in enumerate(s.items(sid)):
            s.submit_label(item.id, "ann", "NOT_SUPPORTED" if k % 2 else str(item.judge_label))
    at.run()
    shown = texts(at)
    assert "Agreement unmeasured" not in shown
    assert "Corrected for the judge's measured error: faithfulness 0.64 by the judge; " in shown
    assert "corrected with 40 human labels (session m)" in shown


def test_probes_run_from_the_page_with_a_typed_key_and_are_kept(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.judge.mock_api import mock_api

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with mock_api() as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
        api.reads_first = 1
        at = calibration(mode="Probes")
        assert "No probe has been run on this test set's runs yet." in texts(at)
        assert at.button(key="cal_probe_go").disabled, "no key yet"
        at.multiselect(key="cal_probes").set_value(["position"])
        at.number_input(key="cal_probe_n").set_value(10).run()
        assert "10 questions x probes retest, position: at most" in texts(at)
        at.text_input(key="cal_probe_key").input("sk-ant-page-typed-key").run()
        at.button(key="cal_probe_go").click().run()
        assert not at.exception, at.exception
        shown = texts(at)
        assert "retest: 0 of 10 verdicts flipped" in shown and "more than the noise floor" in shown
        assert sum(api.requests.values()) > 10
        typed = "sk-ant-page-typed-key"
        assert all(
            typed in (h.get("x-api-key"), h.get("authorization", "").removeprefix("Bearer "))
            for h in api.headers
        )
    table = at.dataframe[-1].value
    assert list(table["probe"]) == ["position", "retest"] and list(table["beyond noise floor"]) == [
        "yes",
        "–",
    ]
    assert "sk-ant-page-typed-key" not in store.read_bytes().decode("latin-1")
    assert "key" not in at.query_params


def test_agreement_view_compares_two_judges_on_the_same_labels_and_moves_labels(store: Path) -> None:
    from evalcore.calibration.sessions import SessionSpec, create
    from evalcore.runs.load import load_runs
    from evalcore.store import Verdict

    run = load_runs(SAMPLE).runs[RUN]
    with Store(store) as s:
        sid = create(s, run, "recorded", SessionSpec(name="pair", n=30, sampling="low-scores"))
        items = s.items(sid)
        for k, item in enumerate(items):
            truth = "NOT_SUPPORTED" if k % 3 == 0 else str(item.judge_label)
            s.submit_label(item.id, "ann", truth, "checked chunk 2" if k == 0 else None)
            s.submit_label(item.id, "bob", "SUPPORTED" if k % 5 == 1 else truth)
        rev = s.new_revision(run.run_id, run.results_sha256(), ("claude-other", "p", "s"))
        for qid in {i.qid for i in items}:
            claims = [{"claim": i.payload["claim"], "verdict": "NOT_SUPPORTED", "quote": None, "chunk_id": None} for i in items if i.qid == qid]  # fmt: skip
            s.add(rev, Verdict(qid=qid, cache_key=f"k-{qid}", ok=True, output={"claims": claims, "correctness": {"verdict": "correct"}}))  # fmt: skip
    at = calibration(session="pair", mode="Agreement")
    shown = texts(at)
    assert "Labelers agree" in shown or "Labelers disagree" in shown
    stats = at.dataframe[0].value
    assert list(stats["statistic"])[:2] == ["labelers: Krippendorff's α", "labelers: κ ann / bob"]
    assert at.selectbox(key="cal_judge").options == ["the session's judge", f"revision {rev}"]
    at.selectbox(key="cal_judge").select(str(rev)).run()
    assert not at.exception, at.exception
    assert "Two judges on the same 60 human labels" in texts(at)
    both = at.dataframe[1].value
    assert list(both.columns) == ["statistic", "the session's judge (recorded)", f"revision {rev}"]
    assert at.query_params["judge"] == str(rev)
    dis = next(d for d in at.dataframe if "why" in d.value.columns).value
    assert {"judge differs", "people split"} <= set(dis["why"])


def test_labels_exported_from_the_page_import_into_another_session(store: Path) -> None:
    from dashboard import calib
    from evalcore.calibration.sessions import SessionSpec, create
    from evalcore.runs.load import load_runs

    run = load_runs(SAMPLE).runs[RUN]
    with Store(store) as s:
        a = s.find_session(create(s, run, "recorded", SessionSpec(name="a", n=10, seed=4)))
        b = s.find_session(create(s, run, "recorded", SessionSpec(name="b", n=10, seed=4)))
        assert a is not None and b is not None
        for item in s.items(a.id):
            s.submit_label(item.id, "ann", "SUPPORTED", "fine")
    exported = calib.export(a, "csv").encode()
    assert calib.import_file(b, "from-a.csv", exported) == (10, [])
    assert calib.import_file(b, "bad.csv", b"\xff\xfe") == (
        0,
        ["bad.csv: not UTF-8 text; save it as UTF-8 CSV or JSON Lines"],
    )
    stored, problems = calib.import_file(b, "x.jsonl", b'{"labeler": "ann"}\nnot json\n')
    assert (
        stored == 0
        and problems[0].startswith("x.jsonl:1: missing qid, label")
        and problems[1].startswith("x.jsonl:2: not JSON")
    )
