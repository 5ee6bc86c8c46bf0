"""Loading and validation: every bad input names its file, line and field; one bad run never stops others."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import polars as pl
import pytest

from evalcore import InputError, load_runs, read_testset
from evalcore.cli import main
from helpers import SAMPLE, case, write_jsonl


def only_error(problems: list, severity: str = "error"):  # type: ignore[no-untyped-def]
    errs = [p for p in problems if p.severity == severity]
    assert errs, "expected a problem"
    return errs[0]


def break_results(runs: Path, run_id: str, line_no: int, new_line: str | bytes) -> Path:
    path = runs / run_id / "results.jsonl"
    lines = path.read_bytes().split(b"\n")
    lines[line_no - 1] = new_line if isinstance(new_line, bytes) else new_line.encode()
    path.write_bytes(b"\n".join(lines))
    return path


def record(runs: Path, run_id: str, line_no: int) -> dict:  # type: ignore[type-arg]
    return json.loads((runs / run_id / "results.jsonl").read_text().splitlines()[line_no - 1])


BASE = "2026-10-05-bm25"


def test_sample_runs_load_without_problems(runs_copy: Path) -> None:
    lr = load_runs(runs_copy)
    assert lr.problems == []
    assert list(lr.runs) == [
        "2026-10-05-bm25",
        "2026-10-19-hybrid",
        "2026-11-02-hybrid-rerank",
        "2026-11-16-rerank-prompt-v2",
    ]


@pytest.mark.parametrize(
    "mutate, field, message",
    [
        (
            lambda r: r | {"retrieved": [{**r["retrieved"][0], "score": "high"}]},
            "retrieved[0].score",
            "valid number",
        ),
        (lambda r: r | {"abstained": "no"}, "abstained", "valid boolean"),
        (lambda r: r | {"answr": "typo"}, "answr", "unknown field"),
        (lambda r: {k: v for k, v in r.items() if k != "qid"}, "qid", "required field is missing"),
        (lambda r: r | {"qid": "not-in-testset"}, "qid", "is not in the test set"),
        (lambda r: r | {"retrieved": [r["retrieved"][0], r["retrieved"][0]]}, "retrieved", "appears 2 times"),
    ],
)
def test_bad_record_is_reported_with_file_line_and_field_and_others_still_load(
    runs_copy, mutate, field, message
) -> None:  # type: ignore[no-untyped-def]
    bad = mutate(record(runs_copy, BASE, 7))
    path = break_results(runs_copy, BASE, 7, json.dumps(bad))
    lr = load_runs(runs_copy)
    p = only_error(lr.problems)
    assert p.path == str(path) and p.line == 7 and p.field == field
    assert message in str(p)
    assert BASE not in lr.runs and len(lr.runs) == 3, "the other runs still load"


def test_nan_score_is_rejected_not_silently_used(runs_copy: Path) -> None:
    text = json.dumps(record(runs_copy, BASE, 3)).replace('"score": ', '"score": NaN, "x": ', 1)
    break_results(runs_copy, BASE, 3, text)
    p = only_error(load_runs(runs_copy).problems)
    assert p.line == 3 and "NaN" in str(p)


def test_malformed_json_names_line_and_column(runs_copy: Path) -> None:
    break_results(runs_copy, BASE, 12, '{"qid": "hv-012", "retrieved": [}')
    p = only_error(load_runs(runs_copy).problems)
    assert p.line == 12 and "malformed JSON" in p.message and "column" in str(p)


def test_a_cut_off_line_says_what_was_left_open(runs_copy: Path) -> None:
    full = json.dumps(record(runs_copy, BASE, 3))
    cut = full[: full.index('"text": "') + 20]
    break_results(runs_copy, BASE, 3, cut)
    p = only_error(load_runs(runs_copy).problems)
    assert p.line == 3 and "the line ends before its JSON does (cut off?)" in p.message
    assert "the list 'retrieved' and the line's object are not closed" in p.message


def test_non_utf8_bytes_name_the_line(runs_copy: Path) -> None:
    break_results(runs_copy, BASE, 5, b'{"qid": "hv-005", "answer": "caf\xe9"}')
    p = only_error(load_runs(runs_copy).problems)
    assert p.line == 5 and "UTF-8" in str(p) and "0xe9" in str(p)


def test_duplicate_qid_names_both_lines(runs_copy: Path) -> None:
    rec = record(runs_copy, BASE, 2)
    break_results(runs_copy, BASE, 9, json.dumps(rec))
    errs = [p for p in load_runs(runs_copy).problems if "duplicate qid" in p.message]
    assert errs and "first on line 2" in errs[0].message and errs[0].line == 9


def test_empty_results_file(runs_copy: Path) -> None:
    (runs_copy / BASE / "results.jsonl").write_text("")
    p = only_error(load_runs(runs_copy).problems)
    assert "empty" in p.message and p.path.endswith("results.jsonl")


def test_testset_hash_mismatch_is_a_warning_naming_both_hashes(runs_copy: Path) -> None:
    manifest = json.loads((runs_copy / BASE / "run.json").read_text())
    recorded = "ab" * 32
    manifest["test_set"]["sha256"] = recorded
    (runs_copy / BASE / "run.json").write_text(json.dumps(manifest))
    lr = load_runs(runs_copy)
    w = only_error(lr.problems, "warning")
    assert "abababababab" in str(w) and lr.runs[BASE].testset.sha256[:12] in str(w)
    assert BASE in lr.runs, "a warning does not stop the run loading"


@pytest.mark.parametrize(
    "line, message",
    [
        (json.dumps(case("q1", {"c1": 1.5})), "valid integer"),
        (json.dumps(case("q1", {"c1": -1})), "greater than or equal to 0"),
        (
            '{"qid": "q1", "question": "x", "relevant": {"c1": 1, "c1": 2}, "tags": {"type": "a", "topic": "b", "source": "real"}}',
            "appears twice",
        ),
        (
            json.dumps(case("q1", tags={"type": "lookup", "topic": "t", "source": "scraped"})),
            "'real' or 'synthetic'",
        ),
        (json.dumps(case("q1", {"c1": 2}, answerable=False)), "field 'answerable'"),
    ],
)
def test_bad_test_set_lines(tmp_path: Path, line: str, message: str) -> None:
    path = write_jsonl(tmp_path / "ts.jsonl", [case("q0", {"c0": 1}), line])
    with pytest.raises(InputError) as exc:
        read_testset(path)
    p = exc.value.problems[0]
    assert p.line == 2 and message in str(p), str(p)


def test_duplicate_qid_in_test_set(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "ts.jsonl", [case("q1", {"a": 1}), case("q1", {"b": 1})])
    with pytest.raises(InputError, match="duplicate qid 'q1' \\(first on line 1\\)"):
        read_testset(path)


def test_validate_command_exit_codes(runs_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(runs_copy)]) == 0
    assert "OK: 4 of 4 runs loaded" in capsys.readouterr().out
    break_results(runs_copy, BASE, 4, "{oops")
    assert main(["validate", str(runs_copy)]) == 1
    out = capsys.readouterr().out
    # The summary names the run that failed, not the ones that were fine.
    assert "results.jsonl:4: error" in out
    assert f"FAILED: 3 of 4 runs loaded; failed: {BASE};" in out


def test_validate_fails_on_a_folder_without_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A CI step pointed at the wrong folder must fail, not pass on nothing."""
    (tmp_path / "empty").mkdir()
    assert main(["validate", str(tmp_path / "empty")]) == 1
    assert "FAILED: no run folder under" in capsys.readouterr().out
    assert main(["validate", str(tmp_path / "missing")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_a_byte_order_mark_is_accepted_in_every_file(runs_copy: Path) -> None:
    for name in ("run.json", "results.jsonl"):
        p = runs_copy / BASE / name
        p.write_bytes(b"\xef\xbb\xbf" + p.read_bytes())
    ts = next(runs_copy.glob("*.jsonl"))
    ts.write_bytes(b"\xef\xbb\xbf" + ts.read_bytes())
    lr = load_runs(runs_copy)
    assert lr.errors == [] and len(lr.runs) == 4


def test_a_missing_test_set_says_where_it_looked(runs_copy: Path) -> None:
    manifest = runs_copy / BASE / "run.json"
    obj = json.loads(manifest.read_text())
    obj["test_set"]["path"] = "../testset-old.jsonl"
    manifest.write_text(json.dumps(obj))
    (msg,) = [str(p) for p in load_runs(runs_copy).errors]
    assert "test set ../testset-old.jsonl was not found (looked for " in msg
    assert str((runs_copy / "testset-old.jsonl").resolve()) in msg
    assert "test sets nearby: " in msg


def test_jsonl_is_converted_once_then_read_from_cache(
    runs_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import evalcore.runs.load as io

    first = load_runs(runs_copy)
    calls = []
    convert = io._read_results_jsonl
    monkeypatch.setattr(
        io, "_read_results_jsonl", lambda path, problems: calls.append(1) or convert(path, problems)
    )
    lr = load_runs(runs_copy)
    assert calls == [] and len(lr.runs) == 4
    assert all(lr.runs[r].retrieved.equals(first.runs[r].retrieved) for r in lr.runs)
    # Touching a file invalidates its cache entry: that file (only) is converted again.
    p = runs_copy / BASE / "results.jsonl"
    p.write_bytes(p.read_bytes() + b"\n")
    assert len(load_runs(runs_copy).runs) == 4 and calls == [1]


def test_parsed_before_says_whether_a_load_would_be_served_from_the_cache(runs_copy: Path) -> None:
    # The dashboard loads the compiled measures only for a folder it has not read before.
    from evalcore.runs.load import parsed_before

    assert not parsed_before(runs_copy)
    load_runs(runs_copy)
    assert parsed_before(runs_copy)
    p = runs_copy / BASE / "results.jsonl"
    p.write_text(p.read_text() + "\n")  # changed since: read again
    assert not parsed_before(runs_copy)


def test_a_file_with_errors_is_never_cached(runs_copy: Path) -> None:
    """Errors must show on every load, not only the first."""
    p = runs_copy / BASE / "results.jsonl"
    lines = p.read_text().splitlines()
    p.write_text("\n".join([*lines, lines[0]]) + "\n")  # a duplicate qid
    for _ in range(2):
        lr = load_runs(runs_copy)
        assert BASE not in lr.runs and any("duplicate qid" in e.message for e in lr.errors)


def test_parquet_results_load_like_jsonl(tmp_path: Path, runs_copy: Path) -> None:
    from evalcore import RunWriter, load_run, score_run

    src = load_run(runs_copy / BASE)
    lines = [json.loads(x) for x in (runs_copy / BASE / "results.jsonl").read_text().splitlines()]
    with RunWriter(tmp_path / "pq", testset=runs_copy / "testset.jsonl", fmt="parquet") as w:
        for rec in lines:
            w.add(rec.pop("qid"), **rec)
    pq = load_run(tmp_path / "pq")
    assert (tmp_path / "pq" / "results.parquet").exists()
    assert score_run(pq).equals(score_run(src))


def _as_parquet(tmp_path: Path, runs_copy: Path, run_id: str, mutate=None) -> Path:  # type: ignore[no-untyped-def]
    from evalcore import RunWriter

    lines = [json.loads(x) for x in (runs_copy / run_id / "results.jsonl").read_text().splitlines()]
    out = tmp_path / "parquet" / run_id
    with RunWriter(out, testset=runs_copy / "testset.jsonl", fmt="parquet") as w:
        for rec in lines:
            w.add(rec.pop("qid"), **rec)
    if mutate is not None:
        import polars as pl

        path = out / "results.parquet"
        mutate(pl.read_parquet(path)).write_parquet(path)
    return out


@pytest.mark.parametrize("run_id", ["2026-10-05-bm25", "2026-11-16-rerank-prompt-v2"])
def test_parquet_fast_path_gives_the_same_tables_as_line_by_line_validation(
    tmp_path: Path, runs_copy: Path, run_id: str
) -> None:
    import polars as pl
    from polars.testing import assert_frame_equal

    from evalcore import load_run
    from evalcore.runs.nested import frames_from_nested

    folder = _as_parquet(tmp_path, runs_copy, run_id)
    fast = frames_from_nested(pl.read_parquet(folder / "results.parquet"))
    assert fast is not None, "a clean file takes the vectorised path"
    exact = load_run(runs_copy / run_id)
    for name in ("results", "retrieved", "claims", "external"):
        assert_frame_equal(
            fast[name].drop("line", strict=False), getattr(exact, name).drop("line", strict=False)
        )


def test_broken_parquet_gets_row_and_field_errors(tmp_path: Path, runs_copy: Path) -> None:
    import polars as pl

    def nan_score_in_row_3(df: pl.DataFrame) -> pl.DataFrame:
        rows = df.to_dicts()
        rows[2]["retrieved"][0]["score"] = float("nan")
        return pl.DataFrame(rows, schema=df.schema)

    folder = _as_parquet(tmp_path, runs_copy, BASE, nan_score_in_row_3)
    lr = load_runs(folder.parent)
    p = only_error(lr.problems)
    assert p.path.endswith("results.parquet") and p.line == 3 and p.field == "retrieved[0].score"
    assert "finite" in str(p)
    assert folder.name not in lr.runs


def test_test_set_is_parsed_once_and_an_edit_is_seen(
    runs_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import evalcore.runs.testset as tsmod

    path = runs_copy / "testset.jsonl"
    first = read_testset(path)
    monkeypatch.setattr(tsmod, "validate_line", lambda *a, **k: pytest.fail("parsed again"))
    again = read_testset(path)
    assert (
        again.sha256 == first.sha256 and again.cases.equals(first.cases) and again.qrels.equals(first.qrels)
    )
    monkeypatch.undo()
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[1:]) + "\n")  # drop the first question
    edited = read_testset(path)
    assert edited.cases.height == first.cases.height - 1 and edited.sha256 != first.sha256


def test_a_parse_cached_by_other_code_is_not_served(runs_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The parse cache is keyed on evalcore's own source too: after a parser changes, files are parsed
    again (a parser bug must not pass on a warm cache and fail on a clean one)."""
    import evalcore.cache as cache
    import evalcore.runs.load as io

    load_runs(runs_copy)
    calls = []
    convert = io._read_results_jsonl
    monkeypatch.setattr(
        io, "_read_results_jsonl", lambda path, problems: calls.append(1) or convert(path, problems)
    )
    load_runs(runs_copy)
    assert calls == [], "same code, same files: from the cache"
    monkeypatch.setattr(cache, "code_version", lambda: "another parser")
    assert len(load_runs(runs_copy).runs) == 4 and len(calls) == 4, "other code: every file parsed again"


def test_columns_without_a_value_are_not_written_to_the_cache_and_come_back(tmp_path: Path) -> None:
    """A run made from a TREC file has no chunk texts or doc ids: those columns are not written (a
    folder's first view writes a third less), and the frames served from the cache are the ones
    parsed — dtypes, column order, row count, even when every column of a frame is empty."""
    import evalcore.cache as cache
    from evalcore.errors import Problems
    from evalcore.runs.importers import import_trec
    from evalcore.runs.load import _read_results_jsonl

    qrels, trec = tmp_path / "qrels", tmp_path / "run.trec"
    qrels.write_text("q0 0 d1 1\nq1 0 d2 2\n")
    trec.write_text("".join(f"q{q} Q0 d{d} {d + 1} {9 - d}.5 sys\n" for q in range(2) for d in range(3)))
    run = import_trec(qrels, trec, tmp_path / "runs")
    parsed = _read_results_jsonl(run / "results.jsonl", Problems())
    assert parsed is not None and parsed["retrieved"]["text"].null_count() == 6
    served = load_runs(tmp_path / "runs").runs[run.name]
    for name in ("results", "retrieved", "claims", "external"):
        assert getattr(served, name).equals(parsed[name]), name
        assert getattr(served, name).schema == parsed[name].schema, name
    cache.flush_writes()  # a small run is cached in the background
    (entry,) = (cache.cache_dir() / "results").iterdir()
    written = pl.read_ipc(entry / "retrieved.arrow")
    assert "text" not in written.columns and "doc_id" not in written.columns
    assert {"chunk_id", "score"} <= set(written.columns)

    every_null = pl.DataFrame({"a": [None, None], "b": [None, None]}, schema={"a": pl.String, "b": pl.Int64})
    source = tmp_path / "source.jsonl"
    source.write_text("x")
    cache.write_frames(source, "demo", {"f": every_null})
    hit = cache.read_frames(source, "demo", ("f",))
    assert hit is not None and hit[0]["f"].equals(every_null) and hit[0]["f"].schema == every_null.schema


def test_a_first_load_caches_small_runs_in_the_background_and_big_ones_at_once(
    runs_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder's first view does not wait for the disk: small runs are written to the cache by a
    background thread at the lowest priority (the loading thread keeps its own), and a reload in the
    same process meanwhile is served from memory without waiting for it; runs above
    ``KEEP_PARSED_BELOW`` are kept the same way within ``KEEP_PARSED_BUDGET``, and past it written
    before the load returns and swapped for their cache files."""
    import threading

    import evalcore.cache as cache
    import evalcore.runs.load as io

    gate = threading.Event()
    pending = cache._write_pending
    monkeypatch.setattr(cache, "_write_pending", lambda *a: gate.wait(10) and pending(*a))
    mine = (
        os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) if sys.platform.startswith("linux") else 0
    )
    try:
        first = load_runs(runs_copy)
        assert len(first.runs) == 4
        results = [r.results_file for r in first.runs.values()]
        on_disk = [
            (cache.cache_dir() / "results" / cache.file_key(p) / "meta.json").exists() for p in results
        ]
        assert not any(on_disk), "written after the load, not during it"
        assert io.parsed_before(runs_copy), "pending writes count as cached"
        calls: list[int] = []
        convert = io._read_results_jsonl
        monkeypatch.setattr(
            io, "_read_results_jsonl", lambda path, problems: calls.append(1) or convert(path, problems)
        )
        again = load_runs(runs_copy)  # the writer is held: served from memory, not re-parsed
        assert calls == [] and all(
            again.runs[r].retrieved.equals(first.runs[r].retrieved) for r in again.runs
        )
        if sys.platform.startswith("linux"):
            (writer,) = [t for t in threading.enumerate() if t.name.startswith("ragtriage-cache")]
            assert os.getpriority(os.PRIO_PROCESS, writer.native_id) == 19
            assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == mine
    finally:
        gate.set()
    cache.flush_writes()
    assert not cache._PENDING
    assert all((cache.cache_dir() / "results" / cache.file_key(p) / "meta.json").exists() for p in results)

    # Every run is "big" now. The process may keep one more as parsed (within its budget): that
    # one is written in the background; the next is written at once and memory-mapped.
    monkeypatch.setattr(io, "KEEP_PARSED_BELOW", 0)
    other = "2026-10-19-hybrid"
    p, q = runs_copy / BASE / "results.jsonl", runs_copy / other / "results.jsonl"
    size = sum(
        getattr(first.runs[BASE], n).estimated_size() for n in ("results", "retrieved", "claims", "external")
    )
    monkeypatch.setattr(io, "KEEP_PARSED_BUDGET", size + 10)
    monkeypatch.setattr(io, "_KEPT_BIG", [0])
    gate.clear()  # a background write now waits; the second big run's write must not be one
    mapped: list[Path] = []
    read = io._cache_read
    monkeypatch.setattr(io, "_cache_read", lambda path: mapped.append(path) or read(path))
    for f in (p, q):
        f.write_bytes(f.read_bytes() + b"\n")  # a new version: parsed again, now "big"
    try:
        folder = io.RunFolder(runs_copy)
        assert list(folder.load([BASE])) == [BASE]
        assert not (cache.cache_dir() / "results" / cache.file_key(p) / "meta.json").exists()
        assert mapped.count(p) == 1, "looked up, then kept as parsed (its write is held)"
        assert list(folder.load([other])) == [other]
        assert (cache.cache_dir() / "results" / cache.file_key(q) / "meta.json").exists()
        assert mapped.count(q) == 2, "past the budget: looked up, then swapped for the file just written"
    finally:
        gate.set()
    cache.flush_writes()
    assert (cache.cache_dir() / "results" / cache.file_key(p) / "meta.json").exists()


def test_a_process_that_loads_runs_leaves_complete_cache_entries_when_it_exits(runs_copy: Path) -> None:
    """The CLI and scripts exit right after a load: the background writes finish first."""
    import subprocess

    import evalcore.cache as cache

    code = f"from evalcore import load_runs; print(len(load_runs({str(runs_copy)!r}).runs))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "4"
    assert len(list((cache.cache_dir() / "results").glob("*/meta.json"))) == 4
    assert len(list((cache.cache_dir() / "testset").glob("*/meta.json"))) == 1
    assert not list(cache.cache_dir().rglob("*.tmp"))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX")
def test_a_forked_child_does_not_wait_for_its_parents_writes(
    runs_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading
    import time

    import evalcore.cache as cache

    gate = threading.Event()
    pending = cache._write_pending
    monkeypatch.setattr(cache, "_write_pending", lambda *a: gate.wait(10) and pending(*a))
    try:
        load_runs(runs_copy)
        assert cache._PENDING
        pid = os.fork()
        if pid == 0:  # the child: no writer thread here; nothing to wait for
            cache.flush_writes()
            os._exit(0 if not cache._PENDING else 1)
        deadline = time.monotonic() + 20
        while (done := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        if done[0] == 0:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail("the forked child hung waiting for its parent's cache writes")
        assert os.waitstatus_to_exitcode(done[1]) == 0
    finally:
        gate.set()


def test_a_test_set_changed_while_it_is_read_is_read_again_next_time(
    runs_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import evalcore.cache as cache
    import evalcore.runs.testset as ts_module

    path = runs_copy / "testset.jsonl"
    read = ts_module._tables_fast  # the read step (the vectorised reader takes a plainly valid file)

    def edit_while_reading(*args: object) -> object:
        out = read(*args)  # type: ignore[arg-type]
        assert out is not None, "the sample test set takes the vectorised reader"
        path.write_text(
            path.read_text().replace('"hv-001", "question": "', '"hv-001", "question": "Edited: ', 1)
        )
        return out

    monkeypatch.setattr(ts_module, "_tables_fast", edit_while_reading)
    first = read_testset(path)
    monkeypatch.setattr(ts_module, "_tables_fast", read)
    assert not first.cases.filter(pl.col("question").str.starts_with("Edited: ")).height
    cache.flush_writes()
    again = read_testset(path)
    assert again.cases.filter(pl.col("question").str.starts_with("Edited: "))["qid"].to_list() == ["hv-001"]


def test_a_results_file_changed_while_it_is_read_is_read_again_next_time(
    runs_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache entry is filed under the file as it was before it was read: an edit made during
    the read is never hidden behind the older content on the next load."""
    import evalcore.cache as cache
    import evalcore.runs.load as io

    p = runs_copy / BASE / "results.jsonl"
    convert = io._read_results_jsonl

    def edit_while_reading(path: Path, problems: object) -> object:
        out = convert(path, problems)  # type: ignore[arg-type]
        if path == p:
            p.write_text(p.read_text().replace('"score": 5.573', '"score": 5.574', 1))
        return out

    monkeypatch.setattr(io, "_read_results_jsonl", edit_while_reading)
    assert load_runs(runs_copy).runs[BASE].retrieved["score"][0] == 5.573  # what was read
    cache.flush_writes()
    monkeypatch.setattr(io, "_read_results_jsonl", convert)
    assert load_runs(runs_copy).runs[BASE].retrieved["score"][0] == 5.574


def test_a_cache_write_that_fails_is_reported_once_and_never_fails_a_load(
    runs_copy: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Whatever the writer raises — a bug, or pyarrow's own errors on the big-run path that is
    written before the load returns — the runs load, and the user is told once per process."""
    import logging

    import pyarrow as pa

    import evalcore.cache as cache
    import evalcore.runs.load as io

    monkeypatch.setattr(cache, "_REPORTED", [])
    written = cache._write_entry

    def broken(*args: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(cache, "_write_entry", broken)
    with caplog.at_level(logging.DEBUG, logger="evalcore"):
        first = load_runs(runs_copy)
        cache.flush_writes()
    assert len(first.runs) == 4 and first.problems == []
    warned = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1 and "disk on fire" in warned[0].getMessage()
    assert "RAGTRIAGE_CACHE_DIR" in warned[0].getMessage()
    monkeypatch.setattr(cache, "_write_entry", written)
    again = load_runs(runs_copy)  # nothing was cached: read again, same tables
    assert all(again.runs[r].retrieved.equals(first.runs[r].retrieved) for r in first.runs)

    def unwritable(*args: object) -> None:
        raise pa.ArrowNotImplementedError("no such type")

    cache.flush_writes()
    monkeypatch.setattr(cache, "_write_ipc", unwritable)
    monkeypatch.setattr(io, "KEEP_PARSED_BELOW", 0)
    monkeypatch.setattr(io, "KEEP_PARSED_BUDGET", 0)  # written at once (in this thread), and failing
    p = runs_copy / BASE / "results.jsonl"
    p.write_bytes(p.read_bytes() + b"\n")
    assert len(load_runs(runs_copy).runs) == 4
    assert not list(cache.cache_dir().rglob("*.tmp"))


# --------------------------------------------------------------------------- a folder read on demand


def _count_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    import evalcore.runs.load as load_mod

    read: list[str] = []
    real = load_mod._read_results

    def spy(folder: Path, problems):  # type: ignore[no-untyped-def]
        read.append(folder.name)
        return real(folder, problems)

    monkeypatch.setattr(load_mod, "_read_results", spy)
    return read


def test_a_run_folder_reads_only_the_runs_asked_for(runs_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from evalcore.runs.load import RunFolder

    read = _count_reads(monkeypatch)
    folder = RunFolder(runs_copy)
    entries = folder.entries
    assert list(entries) == [p.name for p in sorted(runs_copy.glob("2026-*"))], "every run, oldest first"
    assert entries[BASE].testset.cases.height > 0 and read == [], "pickers need no results file"
    cand = list(entries)[-1]
    assert list(folder.load([cand])) == [cand] and read == [cand]
    assert list(folder.load([BASE, cand])) == [BASE, cand] and read == [cand, BASE], "each file read once"
    assert list(folder.loaded()) == [BASE, cand]
    assert len(folder.load()) == 4 and sorted(read) == sorted(entries)
    assert folder.load(["no-such-run"]) == {}


def test_a_run_whose_results_are_broken_leaves_the_folder_when_it_is_read(runs_copy: Path) -> None:
    from evalcore.runs.load import RunFolder

    break_results(runs_copy, BASE, 3, '{"qid": "hv-003", "retrieved": [}')
    folder = RunFolder(runs_copy)
    assert BASE in folder.entries and not folder.problems, "not known before its results are read"
    assert folder.load([BASE]) == {}
    assert BASE not in folder.entries
    err = only_error(folder.problems)
    assert err.path.endswith(f"{BASE}/results.jsonl") and err.line == 3
    assert len(folder.load()) == 3, "the others still load"
    assert folder.result().problems == folder.problems and len(folder.result().runs) == 3


def test_a_run_id_used_twice_is_reported_before_any_results_file_is_read(
    runs_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    from evalcore.runs.load import RunFolder

    shutil.copytree(runs_copy / BASE, runs_copy / "copy-of-bm25")
    read = _count_reads(monkeypatch)
    folder = RunFolder(runs_copy)
    err = only_error(folder.problems)
    assert err.field == "run_id" and "already used by" in err.message and read == []
    assert len(folder.entries) == 4


def test_a_question_is_read_from_its_own_line_and_equals_the_whole_files_rows(
    runs_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from polars.testing import assert_frame_equal

    from evalcore.runs.load import RunFolder

    whole = RunFolder(runs_copy).load()
    read = _count_reads(monkeypatch)
    folder = RunFolder(runs_copy)
    for qid in ("hv-001", "hv-026", whole[BASE].results["qid"][-1]):
        got = folder.question(list(whole), qid)
        assert list(got) == list(whole) and read == [], "no results file parsed whole"
        for run_id, run in got.items():
            assert run.source_key is None, "its scores must never be cached as the whole run's"
            for name in ("results", "retrieved", "claims", "external"):
                assert_frame_equal(
                    getattr(run, name), getattr(whole[run_id], name).filter(pl.col("qid") == qid)
                )
    cand = list(whole)[-1]
    folder.load([cand])
    assert folder.question([cand], "hv-001")[cand].source_key is not None, "a run read whole gives itself"


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda rec: {**rec, "retrieved": [{"chunk_id": "c1", "score": "high"}]}, "retrieved[0].score"),
        (lambda rec: {**rec, "latency_ms": -1}, "latency_ms"),
    ],
)
def test_a_question_whose_line_is_broken_reads_the_file_whole_and_names_the_problem(
    runs_copy: Path,
    mutate,
    message: str,  # type: ignore[no-untyped-def]
) -> None:
    from evalcore.runs.load import RunFolder

    rec = record(runs_copy, BASE, 2)
    break_results(runs_copy, BASE, 2, json.dumps(mutate(rec)))
    folder = RunFolder(runs_copy)
    got = folder.question(list(folder.entries), rec["qid"])
    assert BASE not in got and len(got) == 3 and BASE not in folder.entries
    err = only_error(folder.problems)
    assert err.line == 2 and message in (err.field or ""), err


def test_a_question_answered_twice_in_a_file_is_read_whole_and_reported(runs_copy: Path) -> None:
    from evalcore.runs.load import RunFolder

    path = runs_copy / BASE / "results.jsonl"
    first = path.read_text().splitlines()[0]
    path.write_text(path.read_text() + first + "\n")
    folder = RunFolder(runs_copy)
    got = folder.question(list(folder.entries), json.loads(first)["qid"])
    assert BASE not in got and len(got) == 3
    dup = [p for p in folder.problems if p.field == "qid"]
    assert dup and dup[0].line == 147 and "duplicate qid" in dup[0].message


def test_a_run_folder_answers_what_it_knows_while_it_reads_a_file(
    runs_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    import evalcore.runs.load as load_mod
    from evalcore.runs.load import RunFolder

    folder = RunFolder(runs_copy)
    ids = list(folder.entries)
    reading, release = threading.Event(), threading.Event()
    real = load_mod._read_results

    def slow(path: Path, problems):  # type: ignore[no-untyped-def]
        reading.set()
        release.wait(10)
        return real(path, problems)

    monkeypatch.setattr(load_mod, "_read_results", slow)
    worker = threading.Thread(target=folder.load, args=([ids[-1]],))
    worker.start()
    try:
        assert reading.wait(10)
        asked = threading.Thread(target=lambda: (folder.entries, folder.problems, folder.loaded()))
        asked.start()
        asked.join(2)
        assert not asked.is_alive(), "a page's sidebar is not kept waiting for another page's read"
    finally:
        release.set()
        worker.join(10)
    assert list(folder.loaded()) == [ids[-1]]


def test_a_qid_written_twice_is_one_error_naming_both_lines(tmp_path: Path) -> None:
    """Not one knock-on "chunk id appears 2 times" error per chunk, blaming a line with no duplicate."""
    import shutil

    run = tmp_path / "r"
    shutil.copytree(SAMPLE / "2026-10-05-bm25", run)
    shutil.copy(SAMPLE / "testset.jsonl", tmp_path / "testset.jsonl")
    lines = (run / "results.jsonl").read_text().splitlines()
    (run / "results.jsonl").write_text("\n".join([*lines, lines[0]]) + "\n")
    lr = load_runs(tmp_path)
    assert [str(p) for p in lr.problems] == [
        f"{run / 'results.jsonl'}:{len(lines) + 1}: error: field 'qid': duplicate qid 'hv-001' (first on line 1); "
        "expected one result per question. Fix: keep one result per qid; a rerun of a question belongs in a new run"
    ]


@pytest.mark.parametrize("compiled", [False, True], ids=["counted", "compiled"])
def test_a_chunk_twice_in_one_ranked_list_is_named_by_both_checks(
    compiled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Big runs look for a chunk listed twice with a compiled pass over each list's hashes, small
    ones by counting distinct pairs: the same errors either way — a repeat in a short list, in a long
    one (sorted, not compared pairwise), none for the same chunk in two lists, and rows of one list
    apart (not as a file is read) still checked."""
    import evalcore.runs.frames as frames_mod
    from evalcore.errors import Problems
    from evalcore.runs.frames import check_records

    monkeypatch.setattr(frames_mod, "COMPILED_CHECK_FROM", 0 if compiled else 1 << 60)
    if compiled:
        import importlib

        import evalcore.runs.jsonl as jsonl

        scan = importlib.import_module("evalcore.runs._scan")  # as the check imports it (sys.modules)

        monkeypatch.setattr(jsonl, "scanner_compiled", lambda *a: True)

        calls: list[int] = []
        real = scan.repeat_in_lines
        monkeypatch.setattr(scan, "repeat_in_lines", lambda *a: calls.append(1) or real(*a))

    def errors(lists: dict[int, list[str]], order: list[int] | None = None) -> list[tuple[int | None, str]]:
        rows = [(line, f"q{line}", c) for line, cs in lists.items() for c in cs]
        retrieved = pl.DataFrame(rows, schema=["line", "qid", "chunk_id"], orient="row")
        if order is not None:
            retrieved = retrieved[order]
        results = pl.DataFrame({"qid": [f"q{n}" for n in lists], "line": list(lists)})
        problems = Problems()
        check_records(Path("results.jsonl"), {"results": results, "retrieved": retrieved}, problems)
        return [(e.line, e.message) for e in problems.errors]

    twice = "chunk id 'c1' appears 2 times in the ranked list of "
    assert errors({1: ["c1", "c2"], 2: ["c2", "c1"]}) == []
    assert errors({1: ["c1", "c2"], 2: ["c2", "c1", "c3", "c1"]}) == [(2, twice + "'q2'")]
    long = [f"c{i}" for i in range(2, 60)]
    assert errors({1: long, 2: [*long[:40], "c1", *long[40:], "c1"]}) == [(2, twice + "'q2'")]
    assert errors({1: long, 2: long}) == []
    # The rows of line 1 apart: -2 from the compiled pass, then counted.
    assert errors({1: ["c1", "c2"], 2: ["c3"]}, order=[0, 2, 1]) == []
    assert errors({1: ["c1", "c1"], 2: ["c3"]}, order=[0, 2, 1]) == [(1, twice + "'q1'")]
    if compiled:
        assert len(calls) == 6


def test_a_big_parquet_file_is_read_a_row_group_at_a_time_to_the_same_tables(
    tmp_path: Path, runs_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A million-question Parquet file read whole held its nested frame beside the tables (5.1 GB);
    read a row group at a time, two at once, the tables are those of the file read whole, row
    numbers included, and a problem in a later group is named with its row in the whole file."""
    import evalcore.runs.load as load
    from evalcore.errors import Problems

    folder = _as_parquet(tmp_path, runs_copy, BASE)
    path = folder / "results.parquet"
    pl.read_parquet(path).write_parquet(path, row_group_size=40)
    import pyarrow.parquet as pq

    assert pq.ParquetFile(path).metadata.num_row_groups > 3
    whole = load._read_results_parquet(path, Problems())
    groups: list[int] = []
    real = load.frames_from_nested
    monkeypatch.setattr(load, "frames_from_nested", lambda df, *a: groups.append(df.height) or real(df, *a))
    monkeypatch.setattr(load, "PARQUET_PARTS_FROM", 10)
    parts = load._read_results_parquet(path, Problems())
    assert whole is not None and parts is not None
    assert len(groups) > 3 and max(groups) == 40, "read a row group at a time"
    for name in whole:
        assert parts[name].equals(whole[name]), name
    assert parts["results"]["line"].to_list() == list(range(1, whole["results"].height + 1))

    rows = pl.read_parquet(path).to_dicts()
    rows[101]["retrieved"][0]["score"] = float("nan")
    pl.DataFrame(rows, schema=pl.read_parquet(path).schema).write_parquet(path, row_group_size=40)
    problems = Problems()
    assert load._read_results_parquet(path, problems) is None
    assert [(p.line, p.field) for p in problems.errors] == [(102, "retrieved[0].score")]


def test_a_path_with_glob_characters_reads_that_file_and_no_other(tmp_path: Path, runs_copy: Path) -> None:
    """polars reads ``run[1]/results.parquet`` as a pattern matching ``run1/results.parquet``: a run
    folder named with brackets beside one named without read the other run's results, silently.
    Parquet results, TREC files and production logs are read from the file named."""
    from evalcore.runs.trec import read_trec
    from evalcore.signals.volume import _scan

    base = _as_parquet(tmp_path, runs_copy, BASE)
    cand = _as_parquet(tmp_path, runs_copy, "2026-11-16-rerank-prompt-v2")
    odd = base.parent / "run[1]"
    base.rename(odd)
    cand.rename(base.parent / "run1")
    for folder, run_id in (("run[1]", "bracketed"), ("run1", "plain")):
        manifest = json.loads((base.parent / folder / "run.json").read_text())
        manifest["run_id"] = run_id
        (base.parent / folder / "run.json").write_text(json.dumps(manifest))
    lr = load_runs(base.parent)
    assert not lr.errors, lr.errors[:2]
    want = load_runs(runs_copy).runs[BASE]
    assert lr.runs["bracketed"].retrieved["chunk_id"].to_list() == want.retrieved["chunk_id"].to_list()
    assert not lr.runs["plain"].retrieved.equals(lr.runs["bracketed"].retrieved)

    trec = tmp_path / "t[1]"
    plain = tmp_path / "t1"
    for d, doc in ((trec, "right"), (plain, "wrong")):
        d.mkdir()
        (d / "qrels").write_text(f"q1 0 {doc} 1\n")
        (d / "run").write_text(f"q1 Q0 {doc} 1 2.0 sys\n")
    files = read_trec(trec / "qrels", trec / "run")
    assert [str(x) for x in files.run["chunk_id"].to_list()] == ["right"]

    log = tmp_path / "l[1]"
    log.mkdir()
    (tmp_path / "l1").mkdir()
    (log / "part.jsonl").write_text('{"time": "2026-11-19T10:00:00Z", "answer": "right"}\n')
    (tmp_path / "l1" / "part.jsonl").write_text('{"time": "2026-11-19T10:00:00Z", "answer": "wrong"}\n')
    assert _scan((log / "part.jsonl",)).collect()["answer"].to_list() == ["right"]


def test_a_token_count_past_64_bits_is_named_not_a_crash(tmp_path: Path, runs_copy: Path) -> None:
    """The tables keep token counts as Int64: 2**64 - 1 crashed the loader (JSON Lines: a TypeError
    building the tables; Parquet's UInt64: a failed cast). Both now name the row and field."""
    big = 2**64 - 1
    path = runs_copy / BASE / "results.jsonl"
    lines = path.read_text().splitlines()
    rec = json.loads(lines[2])
    rec["tokens"] = {"input": big}
    lines[2] = json.dumps(rec)
    path.write_text("\n".join(lines) + "\n")
    p = only_error(load_runs(runs_copy).problems)
    assert (p.line, p.field) == (3, "tokens.input") and "9223372036854775807" in str(p)

    df = pl.read_ndjson(path.read_bytes().replace(str(big).encode(), b"1"))
    df = df.with_columns(tokens=pl.struct(input=pl.Series([1, big] + [1] * (df.height - 2), dtype=pl.UInt64)))
    df.write_parquet(path.with_suffix(".parquet"))
    path.unlink()
    p = only_error(load_runs(runs_copy).problems)
    assert (p.line, p.field) == (2, "tokens.input")
