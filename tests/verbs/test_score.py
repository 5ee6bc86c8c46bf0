"""Per-question scores are cached on disk; the cache never serves scores of a changed run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalcore import load_runs, score_run

RUN = "2026-11-02-hybrid-rerank"


def test_cached_scores_equal_fresh_ones(runs_copy: Path) -> None:
    run = load_runs(runs_copy).runs[RUN]
    first = score_run(run)
    assert score_run(run).equals(first)
    assert score_run(run, cache=False).equals(first)


def test_scoring_runs_side_by_side_gives_each_run_its_own_scores(runs_copy: Path) -> None:
    from evalcore.score import score_runs

    runs = load_runs(runs_copy).runs
    together = score_runs(runs.values(), workers=4)
    assert list(together) == list(runs)
    for run_id, run in runs.items():
        assert together[run_id].equals(score_run(run, cache=False)), run_id
    # Distinct runs really differ (a mix-up between threads would not go unseen).
    assert not together["2026-10-05-bm25"].equals(together[RUN])


def test_editing_a_run_file_invalidates_its_cached_scores(runs_copy: Path) -> None:
    run = load_runs(runs_copy).runs[RUN]
    before = score_run(run).filter(score_run(run)["qid"] == "hv-017")["abstention"].item()
    path = runs_copy / RUN / "results.jsonl"
    recs = [json.loads(x) for x in path.read_text().splitlines()]
    for rec in recs:
        if rec["qid"] == "hv-017":
            rec["abstained"] = not bool(before)
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    after_run = load_runs(runs_copy).runs[RUN]
    after = score_run(after_run).filter(score_run(after_run)["qid"] == "hv-017")["abstention"].item()
    assert after == 1.0 - before


def test_slice_comparisons_are_kept_on_disk_and_equal_fresh_ones(runs_copy: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import importlib

    from evalcore import compare

    cmp = importlib.import_module("evalcore.comparison")  # the package exports a function of that name

    runs = load_runs(runs_copy).runs
    base, cand = runs["2026-10-19-hybrid"], runs[RUN]
    first = compare(base, cand).by_slice("type", permutations=500)
    fresh = compare(
        *[load_runs(runs_copy).runs[r] for r in (base.run_id, cand.run_id)]
    )  # as a new process would
    monkeypatch.setattr(
        cmp, "_summarise", lambda *a, **k: (_ for _ in ()).throw(AssertionError("recomputed"))
    )
    again = fresh.by_slice("type", permutations=500)
    assert again.equals(first) and "p_holm" in first.columns
    monkeypatch.undo()
    assert compare(base, cand).by_slice("topic", permutations=500)["slice"].n_unique() > 1  # another key


def test_one_question_scored_alone_equals_its_row_of_the_whole_run(runs_copy: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import evalcore.score as score

    runs = list(load_runs(runs_copy).runs.values())
    cases = runs[-1].testset.cases
    qids = (cases.filter(~cases["answerable"])["qid"][0], runs[-1].claims["qid"][0], cases["qid"][0], "nope")
    real, sizes = score._score, []
    monkeypatch.setattr(
        score, "_score", lambda run, ms: sizes.append(run.retrieved["qid"].n_unique()) or real(run, ms)
    )
    # Nothing is cached yet: each run scores this question only.
    alone = {qid: score.score_question(runs, qid) for qid in qids}
    assert sizes and max(sizes) <= 1, "a run was scored whole for one question"
    for run in runs:
        whole = score_run(run, cache=False)
        for qid in qids:
            row = whole.filter(whole["qid"] == qid)
            got = alone[qid][run.run_id]
            assert got.height == row.height <= 1, (run.run_id, qid)
            if row.height:
                mine = got.row(0, named=True)
                # A column the one question has no value in (an imported score it lacks) may be absent.
                assert {c: mine.get(c) for c in row.columns} == row.row(0, named=True), (run.run_id, qid)
    # Runs scored before give the row from their cached scores: nothing is scored again.
    score.score_runs(runs)
    monkeypatch.setattr(score, "_score", lambda *a, **k: (_ for _ in ()).throw(AssertionError("rescored")))
    assert score.score_question(runs, qids[1])[runs[-1].run_id].height == 1


def test_a_copied_run_is_not_scored_again(runs_copy: Path, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Scores are kept by the results file's content: a run folder copied elsewhere (a new path and
    a new mtime: a clone, a re-downloaded bucket, a nightly job's archive) finds them."""
    import os
    import shutil

    from evalcore import score

    first = score_run(load_runs(runs_copy).runs[RUN])
    elsewhere = tmp_path / "archive"
    shutil.copytree(runs_copy, elsewhere)
    os.utime(elsewhere / RUN / "results.jsonl", ns=(1, 1))
    monkeypatch.setattr(score, "_score", lambda *a, **k: (_ for _ in ()).throw(AssertionError("rescored")))
    assert score_run(load_runs(elsewhere).runs[RUN]).equals(first)


def test_the_trend_reads_kept_means_without_reading_a_run(runs_copy: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A trend across many runs: each run's means (and CIs) are scored once, in the background, then
    kept; a fresh process charts them from disk without reading a single results file."""
    from evalcore import score
    from evalcore.runs import RunFolder
    from evalcore.score import MeansBackfill, run_means, trend

    folder = RunFolder(runs_copy)
    ids = list(folder.entries)
    filled = MeansBackfill(folder, ids)
    assert filled.wait(60) and filled.pending == 0 and not filled.failed
    assert folder.loaded() == {}, "the pass keeps no run in memory"
    runs = load_runs(runs_copy).runs
    for r in ids:
        assert filled.means[r].equals(run_means(runs[r])), r
        s = score_run(runs[r])
        f1 = filled.means[r].filter(filled.means[r]["metric"] == "faithfulness")
        assert f1["mean"].item() == pytest.approx(s["faithfulness"].drop_nulls().mean(), rel=1e-12)
        assert f1["questions"].item() == s.height
    again = RunFolder(runs_copy)
    monkeypatch.setattr(
        RunFolder, "load", lambda *a, **k: (_ for _ in ()).throw(AssertionError("read a run"))
    )
    monkeypatch.setattr(score, "_score", lambda *a, **k: (_ for _ in ()).throw(AssertionError("rescored")))
    kept = MeansBackfill(again, ids)
    assert kept.pending == 0 and set(kept.means) == set(ids)
    table = trend(list(again.entries.values()), ["R@5", "faithfulness"], kept.means)
    assert table["run_id"].unique(maintain_order=True).to_list() == ids, "one point per run, oldest first"
    assert table.filter((table["run_id"] == RUN) & (table["metric"] == "R@5"))[
        "mean"
    ].item() == pytest.approx(score_run(runs[RUN])["R@5"].drop_nulls().mean(), rel=1e-12)


def test_a_broken_run_found_by_the_trend_pass_is_a_problem_of_the_folder(runs_copy: Path) -> None:
    from evalcore.runs import RunFolder
    from evalcore.score import MeansBackfill

    (runs_copy / "2026-10-05-bm25" / "results.jsonl").write_text('{"qid": "hv-001", "retrieved": [}\n')
    folder = RunFolder(runs_copy)
    filled = MeansBackfill(folder, list(folder.entries))
    assert filled.wait(60)
    assert filled.failed == {"2026-10-05-bm25"} and len(filled.means) == 3
    assert any("malformed JSON" in str(p) for p in folder.problems)
    assert "2026-10-05-bm25" not in folder.entries


def test_a_process_exiting_mid_trend_pass_logs_no_failed_runs(runs_copy: Path, tmp_path: Path) -> None:
    """A dashboard stopped while its trend is still being scored: the runs left are not "failed"
    with a traceback each (thread pools refuse work once the interpreter is exiting; the cache's
    pending writes keep it alive a moment meanwhile)."""
    import os
    import subprocess
    import sys

    code = f"""
import atexit, time
import evalcore.runs.load as load
from evalcore.runs import RunFolder
from evalcore.score import MeansBackfill
real = load.RunFolder.load
def slow(self, *a, **k):
    time.sleep(0.5)
    return real(self, *a, **k)
load.RunFolder.load = slow
folder = RunFolder({str(runs_copy)!r})
MeansBackfill(folder, list(folder.entries))
atexit.register(time.sleep, 2.0)  # as a pending cache write would
time.sleep(0.1)
"""
    env = {**os.environ, "RAGTRIAGE_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0
    assert "Traceback" not in out.stderr and "failed" not in out.stderr, out.stderr[-2000:]
