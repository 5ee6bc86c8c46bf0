"""Reading production logs: good lines in polars, bad lines named by number and never fatal."""

from __future__ import annotations

import json
from pathlib import Path

from evalcore.signals.logs import read_log
from helpers import SAMPLE


def line(**kw: object) -> str:
    base = {
        "conversation_id": "c1",
        "time": "2026-11-01T10:00:00Z",
        "question": "How long are snapshots kept?",
    }
    return json.dumps({**base, **kw})


def test_the_sample_log_reads_clean() -> None:
    log = read_log(SAMPLE / "logs" / "production.jsonl")
    assert log.problems == [] and log.bad_lines == 0
    assert log.interactions.height > 3000
    assert log.interactions["time"].dt.date().n_unique() == 28
    assert log.retrieved.filter(log.retrieved["line"] == 1)["rank"].to_list() == [1, 2, 3, 4, 5]


def test_malformed_lines_are_reported_and_the_rest_kept(tmp_path: Path) -> None:
    rows = [
        line(
            answer="30 days.",
            retrieved=[{"chunk_id": "a", "score": 0.2}, {"chunk_id": "b", "score": 0.9}],
            feedback={"thumb": "up"},
            behaviour={"copied": True},
            unknown_key=1,
        ),
        '{"conversation_id": "c2", "time": "2026-11-01T10:01:00Z", "question": "trunc',
        line(time="yesterday"),
        line(keyword_hits="many"),
        "",
        line(conversation_id=""),
        line(feedback={"thumb": "sideways"}),
        "[1, 2]",
        line(answer="I don't know — the documentation does not cover it.", time="2026-11-01T12:00:00+02:00"),
    ]
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join(rows) + "\n")
    log = read_log(path)
    by_line = {p.line: p for p in log.problems}
    assert set(by_line) == {2, 3, 4, 6, 7, 8}
    assert "not valid JSON" in by_line[2].message
    assert by_line[3].field == "time" and by_line[4].field == "keyword_hits"
    assert by_line[6].field == "conversation_id" and by_line[7].field == "feedback.thumb"
    assert log.bad_lines == 6
    good = log.interactions
    assert good["line"].to_list() == [1, 9]
    first, last = good.row(0, named=True), good.row(1, named=True)
    assert (
        first["top_score"] == 0.9 and first["n_retrieved"] == 2 and first["thumb"] == "up" and first["copied"]
    )
    assert not first["abstained"] and last["abstained"] and last["abstained_inferred"]
    assert last["time"].hour == 10  # +02:00 read as UTC


def test_an_empty_log_is_an_error_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("")
    log = read_log(path)
    assert log.interactions.is_empty() and "empty" in log.problems[0].message


def test_a_number_where_a_time_belongs_is_named(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text(line() + "\n" + line(time=1764000000) + "\n" + line(conversation_id="c3") + "\n")
    log = read_log(path)
    assert log.interactions["line"].to_list() == [1, 3]
    assert [p.line for p in log.problems] == [2]


def test_cli_signals_names_bad_lines_and_the_alert(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from evalcore.cli import main

    lines = (SAMPLE / "logs" / "production.jsonl").read_text().splitlines()
    lines[4] = lines[4][:30]
    path = tmp_path / "prod.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert main(["signals", str(path)]) == 0
    captured = capsys.readouterr()
    assert "prod.jsonl:5: error: not valid JSON" in captured.err
    assert f"{len(lines) - 1:,} questions read, 1 bad line left out" in captured.out
    assert "ALERT 2026-11-19: the no-answer rate rose to 42%" in captured.out
    assert main(["signals", str(path), "--fail-on-alert"]) == 1


def test_cli_signals_on_a_folder_and_an_empty_log(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from evalcore.cli import main

    (tmp_path / "a.jsonl").write_text(line() + "\n")
    (tmp_path / "empty.jsonl").write_text("")
    assert main(["signals", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "a.jsonl: 1 question read" in out and "thumbs: not logged" in out and "too little history" in out
    assert "empty.jsonl: 0 questions read" in out and "logging broke" in out
    assert main(["signals", str(tmp_path), "--fail-on-alert"]) == 1  # an empty log is worth a page
