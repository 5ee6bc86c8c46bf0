"""Test-set versions: what changed between two, and the version each run answered."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from evalcore import load_runs, read_testset
from evalcore.cli import main
from evalcore.testset.versions import answered_versions, diff, diff_counts
from helpers import SAMPLE


def _edited(tmp_path: Path) -> Path:
    rows = [json.loads(line) for line in (SAMPLE / "testset.jsonl").read_text().splitlines()]
    rows[1]["relevant"] = {"billing/plans#02": 1}  # regraded
    rows[2]["question"] = "Which values does key_rotation_days take?"
    rows[5]["tags"]["topic"] = "other"
    del rows[3]
    rows.append({**rows[0], "qid": "hv-new"})
    out = tmp_path / "testset.v2.jsonl"
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return out


def test_diff_names_each_kind_of_change(tmp_path: Path) -> None:
    table = diff(read_testset(SAMPLE / "testset.jsonl"), read_testset(_edited(tmp_path)))
    assert diff_counts(table) == {"added": 1, "removed": 1, "relabeled": 1, "edited": 2}
    rows = {r["qid"]: r for r in table.iter_rows(named=True)}
    assert rows["hv-new"]["change"] == "added" and rows["hv-004"]["change"] == "removed"
    assert rows["hv-002"]["detail"] == "billing/plans#02: 2 -> 1"
    assert rows["hv-003"]["fields"] == "question" and rows["hv-006"]["fields"] == "tags"


def test_diff_of_a_version_with_itself_is_empty() -> None:
    ts = read_testset(SAMPLE / "testset.jsonl")
    assert diff(ts, ts).is_empty()


def test_cli_diff(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["testset", "diff", str(SAMPLE / "testset.jsonl"), str(_edited(tmp_path))]) == 0
    out = capsys.readouterr().out
    assert "1 added, 1 removed, 1 relabeled, 2 edited" in out


def test_answered_versions_show_a_run_of_an_older_version(tmp_path: Path) -> None:
    shutil.copytree(SAMPLE, tmp_path / "runs")
    ts = tmp_path / "runs" / "testset.jsonl"
    ts.write_text(
        ts.read_text() + json.dumps({**json.loads(ts.read_text().splitlines()[0]), "qid": "hv-x"}) + "\n"
    )
    table = answered_versions(load_runs(tmp_path / "runs").runs.values())
    assert table.height == 4 and not any(table["current"])  # every run answered the version before the edit
    assert table["answered"][0] != table["on_disk"][0]


def test_a_question_whose_text_and_labels_both_change_is_relabeled_and_edited(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in (SAMPLE / "testset.jsonl").read_text().splitlines()]
    rows[1]["relevant"] = {"billing/plans#02": 1}
    rows[1]["question"] = "What does the Team plan cost a year?"
    out = tmp_path / "testset.v2.jsonl"
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    table = diff(read_testset(SAMPLE / "testset.jsonl"), read_testset(out))
    (row,) = table.iter_rows(named=True)
    assert row["change"] == "relabeled and edited" and row["fields"] == "relevant, question"
    assert diff_counts(table) == {"added": 0, "removed": 0, "relabeled": 1, "edited": 1}


def test_a_version_that_adds_many_questions_to_a_small_test_set_is_the_same_test_set(tmp_path: Path) -> None:
    """Grouped by the questions they share with the smaller one, not with the larger."""
    from evalcore.runs.groups import same_test_set

    rows = [json.loads(line) for line in (SAMPLE / "testset.jsonl").read_text().splitlines()]
    small, grown = tmp_path / "small.jsonl", tmp_path / "grown.jsonl"
    small.write_text("".join(json.dumps(r) + "\n" for r in rows[:10]))
    extra = [{**rows[0], "qid": f"new-{i}", "question": f"A new question {i}?"} for i in range(200)]
    grown.write_text("".join(json.dumps(r) + "\n" for r in [*rows[:10], *extra]))
    assert same_test_set(read_testset(small), read_testset(grown))
    other = tmp_path / "other.jsonl"
    other.write_text(
        "".join(json.dumps({**r, "question": r["question"] + " (reworded)"}) + "\n" for r in rows[:10])
    )
    assert not same_test_set(read_testset(small), read_testset(other))
