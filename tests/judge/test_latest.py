"""``--judge latest`` after a partial re-judge: each question's latest verdict by the same judge, so
re-judging two questions refines the revision it follows instead of scoring faithfulness on n=2;
and the figures say why questions are missing."""

from __future__ import annotations

import json
from pathlib import Path

from mock_api import mock_api

from evalcore import load_run
from evalcore.judge.client import JudgeConfig
from evalcore.judge.rerun import rerun
from evalcore.judge.revision import coverage, judged_by, latest_verdicts
from evalcore.store import Store
from helpers import SAMPLE

RUN = "2026-11-16-rerank-prompt-v2"
CONFIG = JudgeConfig(model="claude-test-1", timeout=30, max_retries=1)  # (a loaded CI machine)


def test_a_partial_rejudge_refines_the_revision_it_follows(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    from evalcore.cli import main

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-latest")
    run = load_run(SAMPLE / RUN)
    qids = run.results["qid"].to_list()
    with mock_api() as api, Store(tmp_path / "s.sqlite") as store:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
        first = rerun(run, store, CONFIG, qids=qids[:40])
        assert first.judged == 40, [(v.qid, v.reason) for v in first.failed]
        api.behaviour = {}  # the same judge, asked again about two questions
        second = rerun(run, store, CONFIG, qids=qids[:2])
        assert second.cached == 2  # (an unchanged judgment is never paid twice)
        other = rerun(
            run, store, JudgeConfig(model="claude-test-2", timeout=30, max_retries=1), qids=qids[40:42]
        )
        assert other.judged == 2
        # The newest revision is the other judge's: latest is its two questions, never mixed with
        # the first judge's forty.
        verdicts, newest, judge = latest_verdicts(store, run, run.results_sha256())
        assert newest == other.revision_id and judge[0] == "claude-test-2" and len(verdicts) == 2
        # The first judge again, on two questions: latest is all forty of that judge.
        again = rerun(run, store, CONFIG, qids=qids[:2])
        verdicts, newest, judge = latest_verdicts(store, run, run.results_sha256())
        assert newest == again.revision_id and judge[0] == "claude-test-1" and len(verdicts) == 40
        judged = judged_by(store, run, "latest")
        assert judged.results.filter(judged.results["n_claims"].is_not_null()).height == 40
        assert coverage(run, verdicts).startswith("40 of 146 questions judged; 106 answers not judged")
        db = str(tmp_path / "s.sqlite")
        assert (
            main(["metrics", str(SAMPLE / RUN), "--store", db, "--judge", "latest", "--format", "json"]) == 0
        )
        captured = capsys.readouterr()
        means = {r["metric"]: r for r in json.loads(captured.out)}
        assert means["faithfulness"]["n"] > 2  # not the last re-judge's two questions
        assert "judge latest (claude-test-1" in captured.err and "40 of 146 questions judged" in captured.err
        # A revision named by its id covers exactly its own questions (the other judge's two here).
        assert (
            main(
                [
                    "metrics",
                    str(SAMPLE / RUN),
                    "--store",
                    db,
                    "--judge",
                    str(other.revision_id),
                    "--format",
                    "json",
                ]
            )
            == 0
        )
        err = capsys.readouterr().err
        assert f"judge {other.revision_id} (claude-test-2" in err and "2 of 146 questions judged" in err


def test_verdicts_of_an_earlier_results_file_are_not_this_ones(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A run file rewritten after it was judged (new answers): 'latest' and a revision id both look
    only at revisions of the file as it is now — never verdicts of answers that are gone."""
    import shutil

    import pytest

    from evalcore.judge.revision import judged_verdicts

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-latest")
    folder = tmp_path / "runs"
    shutil.copytree(SAMPLE, folder)
    run = load_run(folder / RUN)
    with mock_api() as api, Store(tmp_path / "s.sqlite") as store:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
        done = rerun(run, store, CONFIG, qids=run.results["qid"].to_list()[:3])
        assert judged_verdicts(store, run, "latest") and judged_verdicts(store, run, str(done.revision_id))
        assert judged_verdicts(store, run, "recorded") is None, "the run file's own: no stored verdicts"
        path = folder / RUN / "results.jsonl"
        path.write_text(path.read_text().replace("Harbor Vault", "HarborVault"))  # new answers
        edited = load_run(folder / RUN)
        with pytest.raises(ValueError, match="has no judge revision"):
            judged_verdicts(store, edited, "latest")
        with pytest.raises(ValueError, match=f"no revision '{done.revision_id}'"):
            judged_verdicts(store, edited, str(done.revision_id))


def test_a_later_failure_never_replaces_a_judgment_that_succeeded(tmp_path: Path) -> None:
    """'latest' per question: a later successful verdict replaces an earlier one; a later failure
    (a timeout, a refusal) does not replace a success, but does replace an earlier failure."""
    from evalcore.store import Verdict

    run = load_run(SAMPLE / RUN)
    sha, judge = run.results_sha256(), ("claude-test-1", "p", "s")
    out = {"claims": [], "correctness": "correct"}
    with Store(tmp_path / "s.sqlite") as store:
        first = store.new_revision(run.run_id, sha, judge)
        store.add(first, Verdict("hv-001", "k1", True, output=out))
        store.add(first, Verdict("hv-002", "k2", False, reason="timed out"))
        store.add(first, Verdict("hv-003", "k3", True, output=out))
        second = store.new_revision(run.run_id, sha, judge)
        store.add(second, Verdict("hv-001", "k4", False, reason="timed out"))
        store.add(second, Verdict("hv-002", "k5", False, reason="refused"))
        store.add(second, Verdict("hv-003", "k6", True, output={**out, "correctness": "incorrect"}))
        got = {v.qid: v for v in latest_verdicts(store, run, sha)[0]}
    assert got["hv-001"].ok and got["hv-001"].cache_key == "k1", "the success stands"
    assert got["hv-002"].reason == "refused", "the newer failure replaces the older one"
    assert got["hv-003"].cache_key == "k6", "a newer success replaces an older one"


def test_resolve_names_each_revision_of_this_file_and_what_exists(tmp_path: Path) -> None:
    """Third mutation run: ``resolve`` could ignore the file version, pick the wrong end for
    'latest' or lose its messages without a test noticing."""
    import pytest

    from evalcore.judge.revision import resolve

    run = load_run(SAMPLE / RUN)
    sha, judge = run.results_sha256(), ("claude-test-1", "p", "s")
    with Store(tmp_path / "s.sqlite") as store:
        with pytest.raises(
            ValueError, match=f"run {RUN} has no judge revision in .*`evalcore judge` makes one"
        ):
            resolve(store, run, "latest", sha)
        with pytest.raises(
            ValueError, match=r"no revision '7' for run .* \(its revisions: none; or 'recorded', 'latest'\)"
        ):
            resolve(store, run, "7", sha)
        other = store.new_revision(run.run_id, "0" * 64, judge)  # of an earlier version of the file
        first = store.new_revision(run.run_id, sha, judge)
        second = store.new_revision(run.run_id, sha, judge)
        third = store.new_revision(run.run_id, sha, judge)
        assert resolve(store, run, "recorded", sha) is None
        assert resolve(store, run, "latest", sha) == third, "the newest of this file's revisions"
        assert resolve(store, run, str(first), sha) == first
        with pytest.raises(ValueError, match=rf"its revisions: {first}, {second}, {third};"):
            resolve(store, run, str(other), sha)
