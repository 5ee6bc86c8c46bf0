"""A session's report as a team reads it: the verdict in words, the disagreements, a second judge
revision measured on the same labels, the judge-corrected score, and labels exported and imported
round trip — through the CLI as a user types it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalcore.calibration.correct import corrected
from evalcore.calibration.report import export_labels, import_labels, session_report
from evalcore.calibration.sessions import SessionSpec, create
from evalcore.cli import main
from evalcore.runs.load import Run, load_runs
from evalcore.score import score_run
from evalcore.store import Store, Verdict
from tests.helpers import SAMPLE

RUN = "2026-11-16-rerank-prompt-v2"
FLIP = {"SUPPORTED": "NOT_SUPPORTED", "NOT_SUPPORTED": "SUPPORTED", "CONTRADICTED": "SUPPORTED"}


@pytest.fixture(scope="module")
def run() -> Run:
    return load_runs(SAMPLE).runs[RUN]


def labeled(store: Store, run: Run, *, judge_wrong_every: int, people_split_every: int = 0) -> int:
    """A session of 60 claims: ann and bob label; the judge is wrong on every ``judge_wrong_every``-th
    item (people say the opposite), and bob disagrees with ann on every ``people_split_every``-th."""
    sid = create(store, run, "recorded", SessionSpec(name="s", n=60, sampling="low-scores", seed=1))
    for k, item in enumerate(store.items(sid)):
        truth = FLIP[item.judge_label] if k % judge_wrong_every == 0 else item.judge_label
        store.submit_label(item.id, "ann", truth, "the chunk says so" if k == 0 else None)
        bob = FLIP[truth] if people_split_every and k % people_split_every == 1 else truth
        store.submit_label(item.id, "bob", bob)
    return sid


def test_the_report_says_in_words_how_the_judge_and_people_agree(run: Run, tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        sid = labeled(store, run, judge_wrong_every=5)
        session = store.find_session(sid)
        assert session is not None
        rep = session_report(store, session, resamples=300)
    a = rep.overall
    assert a.items == 60 and a.percent.value < 0.85 and a.percent.value > 0.75  # weighted
    assert a.human_alpha is not None and a.human_alpha.value == pytest.approx(1.0)
    text = rep.verdict()
    assert text.startswith("labelers agree (α 1.00")
    assert "the judge agrees with them" in text
    assert len(rep.disagreements) == 12 and {d["why"] for d in rep.disagreements} == {"judge differs"}
    assert sum(map(sum, a.confusion)) == 60
    assert rep.disagreements[0]["rationale"] in ({}, {"ann": "the chunk says so"})


def test_when_people_split_the_report_says_fix_the_rubric_first(run: Run, tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        sid = labeled(store, run, judge_wrong_every=7, people_split_every=3)
        session = store.find_session(sid)
        assert session is not None
        rep = session_report(store, session, resamples=200)
    assert "labelers disagree" in rep.verdict() and "fix the rubric" in rep.verdict()
    assert any(d["why"] == "people split" for d in rep.disagreements)


def test_a_second_judge_revision_is_measured_on_the_same_labels(run: Run, tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        sid = labeled(store, run, judge_wrong_every=4)
        session = store.find_session(sid)
        assert session is not None
        items = store.items(sid)
        truth = {(i.qid, i.payload["claim"]): FLIP[i.judge_label] if k % 4 == 0 else i.judge_label for k, i in enumerate(items)}  # fmt: skip
        # a better judge: it says what people say on every sampled claim (quotes where they are)
        rev = store.new_revision(run.run_id, run.results_sha256(), ("claude-better", "p2", "s2"))
        by_qid: dict[str, list] = {}
        for i in items:
            by_qid.setdefault(i.qid, []).append(i)
        for qid, its in by_qid.items():
            claims = []
            for i in its:
                label = truth[(qid, i.payload["claim"])]
                chunk = i.payload["chunks"][0]
                claims.append(
                    {"claim": i.payload["claim"].upper(), "verdict": label,
                     "quote": chunk["text"][:40] if label == "SUPPORTED" else None,
                     "chunk_id": chunk["chunk_id"] if label == "SUPPORTED" else None}
                )  # fmt: skip
            store.add(
                rev,
                Verdict(qid=qid, cache_key=f"k{qid}", ok=True, output={"claims": claims, "correctness": {"verdict": "correct"}}),
            )  # fmt: skip
        old = session_report(store, session, resamples=200)
        new = session_report(store, session, judge=str(rev), resamples=200)
        assert new.judge == str(rev) and new.unmatched == 0
        assert new.overall.percent.value == pytest.approx(1.0)
        assert old.overall.percent.value < 0.8
        with pytest.raises(ValueError, match="no judge revision '999'"):
            session_report(store, session, judge="999")


def test_corrected_faithfulness_moves_toward_what_people_say(run: Run, tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        sid = create(store, run, "recorded", SessionSpec(name="s", n=80, labels_per_item=1, seed=2))
        session = store.find_session(sid)
        assert session is not None
        # people find every claim the judge called SUPPORTED to be NOT_SUPPORTED on a third of items
        for k, item in enumerate(store.items(sid)):
            store.submit_label(item.id, "ann", "NOT_SUPPORTED" if k % 3 == 0 else item.judge_label)
        c = corrected(run, session, store.items(sid), store.labels(sid))
    assert c is not None and c.metric == "faithfulness" and c.labels == 80
    judge_faith = score_run(run)["faithfulness"].drop_nulls().mean()
    assert c.judge == pytest.approx(judge_faith)  # the judge's figure is the one Overview shows
    assert c.value < c.judge - 0.1 and c.low < c.value < c.high
    assert str(c).startswith(f"faithfulness {c.judge:.2f} by the judge; {c.value:.2f} [")


def test_labels_round_trip_through_export_and_import_and_bad_lines_are_named(
    run: Run, tmp_path: Path
) -> None:
    with Store(tmp_path / "a.db") as a:
        sid = labeled(a, run, judge_wrong_every=5)
        session = a.find_session(sid)
        assert session is not None
        csv_text = export_labels(a, session, "csv")
        jsonl_text = export_labels(a, session, "jsonl")
        before = session_report(a, session, resamples=100).overall
    assert csv_text.splitlines()[0].startswith("session,item,qid,claim_idx,claim,labeler")
    assert len(jsonl_text.splitlines()) == 120
    for fmt, text in (("csv", csv_text), ("jsonl", jsonl_text)):
        with Store(tmp_path / f"b-{fmt}.db") as b:
            sid_b = create(b, run, "recorded", SessionSpec(name="s", n=60, sampling="low-scores", seed=1))
            session_b = b.find_session(sid_b)
            assert session_b is not None
            stored, problems = import_labels(b, session_b, text, fmt, f"labels.{fmt}")
            assert (stored, problems) == (120, [])
            after = session_report(b, session_b, resamples=100).overall
            assert after.confusion == before.confusion
            assert {lb.source for lb in b.labels(sid_b)} == {"import"}
    bad = "labeler,qid,claim_idx,label\nann,nope,0,SUPPORTED\nann,{q},x,SUPPORTED\n,{q},0,SUPPORTED\nann,{q},{c},MAYBE\n"
    with Store(tmp_path / "a.db") as a:
        session = a.find_session("s")
        assert session is not None
        item = a.items(session.id)[0]
        text = bad.format(q=item.qid, c=item.claim_idx)
        stored, problems = import_labels(a, session, text, "csv", "mine.csv")
    assert stored == 0
    assert problems[0].startswith("mine.csv:2: no item qid=nope")
    assert problems[1].startswith("mine.csv:3: field 'claim_idx': expected a whole number")
    assert problems[2].startswith("mine.csv:4: missing labeler")
    assert problems[3].startswith("mine.csv:5: field 'label': expected one of")


def test_the_cli_creates_a_session_reports_agreement_and_moves_labels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "cli.db")
    run_dir = str(SAMPLE / RUN)
    assert (
        main(["calibrate", "create", run_dir, "--name", "weekly", "--n", "40", "--dry-run", "--store", db])
        == 0
    )
    assert "dry run: no session created" in capsys.readouterr().out
    assert main(["calibrate", "create", run_dir, "--name", "weekly", "--n", "40", "--store", db]) == 0
    out = capsys.readouterr().out
    assert "40 of 216 claims" in out and "session 1 (weekly): 40 items, 2 labels each" in out
    with Store(db) as store:
        for item in store.items(1):
            store.submit_label(item.id, "ann", item.judge_label)
    assert main(["calibrate", "status", "weekly", "--store", db]) == 0
    assert "40 labels, 0 items complete" in capsys.readouterr().out
    assert main(["agreement", "weekly", "--store", db, "--resamples", "100"]) == 0
    out = capsys.readouterr().out
    assert "no item has two labels yet" in out and "percent agreement                  1.00" in out
    assert main(["agreement", "weekly", "--store", db, "--format", "json", "--resamples", "100"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["overall"]["items"] == 40 and report["overall"]["percent"] == 1.0
    assert main(["calibrate", "export", "weekly", "--format", "jsonl", "--store", db]) == 0
    exported = tmp_path / "labels.jsonl"
    exported.write_text(capsys.readouterr().out.replace('"ann"', '"bob"'))
    assert main(["calibrate", "import", "weekly", str(exported), "--store", db]) == 0
    assert "40 labels imported into session weekly; 0 lines refused" in capsys.readouterr().out
    assert main(["agreement", "nope", "--store", db]) == 2
    assert "no calibration session 'nope'" in capsys.readouterr().err
