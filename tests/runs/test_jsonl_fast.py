"""results.jsonl has two readers and one contract: the whole-file path (polars + one compiled scan) is
taken only for plainly valid files and gives exactly the frames of the line-by-line path; anything
else goes line by line, and the error names the same line and field."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import evalcore.runs.load as load
from evalcore.errors import Problems
from evalcore.runs.frames import check_records
from helpers import SAMPLE


def _slow(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[dict | None, Problems]:
    problems = Problems()
    with monkeypatch.context() as m:
        m.setattr(load, "_results_jsonl_fast", lambda p: None)
        return load._read_results_jsonl(path, problems), problems


def test_plainly_valid_files_take_the_fast_path_and_give_the_same_frames(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    files = sorted(SAMPLE.glob("*/results.jsonl"))
    assert len(files) == 4
    for path in files:
        fast = load._results_jsonl_fast(path)
        assert fast is not None, f"{path} is plainly valid"
        slow, problems = _slow(path, monkeypatch)
        assert not problems.errors and slow is not None
        for name in fast:
            assert fast[name].equals(slow[name]), (path, name)


def test_small_files_are_read_line_by_line_until_the_scanner_is_loaded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A first view of a few small runs does not pay the second it takes to load the compiled
    scanner: it reads them line by line, to the same frames."""
    import sys

    from evalcore.runs import jsonl
    from evalcore.runs.jsonl import read_plain_blocks

    path = sorted(SAMPLE.glob("*/results.jsonl"))[0]
    fast = load._results_jsonl_fast(path)
    monkeypatch.delitem(sys.modules, "evalcore.runs._scan")
    monkeypatch.setattr(jsonl, "_WANTED", threading.Event())
    assert read_plain_blocks(path, lambda df, _: df) is None, "small and the scanner not loaded: line by line"
    slow = load._read_results_jsonl(path, Problems())
    assert fast is not None and slow is not None
    assert all(fast[name].equals(slow[name]) for name in fast)
    assert "evalcore.runs._scan" not in sys.modules, "and the scanner was not loaded for it"


def test_a_folder_of_many_small_runs_loads_the_scanner(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each file under the threshold, but the folder over it: the scanner is loaded once for all
    (20 runs of 8.5 MB each took 46 s line by line, 3.7 s scanned)."""
    import sys

    from evalcore.runs import jsonl

    sizes = [p.stat().st_size for p in SAMPLE.glob("*/results.jsonl")]
    monkeypatch.setattr(jsonl, "SCAN_WORTH", max(sizes) + 1)  # every file below it ...
    monkeypatch.delitem(sys.modules, "evalcore.runs._scan")
    monkeypatch.setattr(jsonl, "_WANTED", threading.Event())
    assert sum(sizes) >= jsonl.SCAN_WORTH  # ... the folder above it
    lr = load.load_runs(SAMPLE)
    assert len(lr.runs) == 4 and "evalcore.runs._scan" in sys.modules


GOOD = {"qid": "q1", "retrieved": [{"chunk_id": "c1", "score": 1.0}], "answer": "x"}


def _lifted(path: Path) -> dict | None:
    import numpy as np

    from evalcore.runs._scan import CLEAN, scan_jsonl
    from evalcore.runs.jsonl import _read_lifted
    from evalcore.runs.nested import frames_from_nested

    buf = np.frombuffer(path.read_bytes(), np.uint8)
    assert scan_jsonl(buf, np.zeros(0, np.int64))[0] == CLEAN  # what the lifter may assume
    df = _read_lifted(buf, "retrieved")
    return None if df is None else frames_from_nested(df)


def test_retrieved_lists_are_read_by_the_compiled_scanner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lists of chunks (most of a file's bytes) skip the JSON reader — a run with texts, one made
    by ``evalcore import trec``, escapes and non-ASCII text — and give the frames the exact reader
    gives."""
    from evalcore.runs.importers import import_trec

    files = sorted(SAMPLE.glob("*/results.jsonl"))
    trec = tmp_path / "run.trec"
    trec.write_text("".join(f"q{q} Q0 d{d} {d + 1} {9 - d}.5 sys\n" for q in range(3) for d in range(4)))
    qrels = tmp_path / "qrels"
    qrels.write_text("q0 0 d1 1\nq1 0 d2 2\nq2 0 d0 1\n")
    files.append(import_trec(qrels, trec, tmp_path / "imported") / "results.jsonl")
    odd = tmp_path / "odd.jsonl"
    odd.write_text(
        json.dumps(
            {"qid": "q1", "retrieved": [{"chunk_id": 'c"1', "score": -1.5e-3, "text": "a\\b\n\t😀 é"}]}
        )
        + "\n"
        + json.dumps(
            {
                "qid": "q2",
                "retrieved": [{"text": "x", "rank": 2, "score": 7, "chunk_id": "c", "doc_id": None}],
            },
            ensure_ascii=False,
        )
        + "\n"
        + '{"qid":"q3","retrieved":[],"answer":"no"}\n',
        encoding="utf-8",
    )
    files.append(odd)
    for path in files:
        lifted = _lifted(path)
        assert lifted is not None, f"{path}: the lists were not lifted"
        slow, problems = _slow(path, monkeypatch)
        assert not problems.errors and slow is not None
        for name in lifted:
            assert lifted[name].equals(slow[name]), (path, name)


@pytest.mark.parametrize(
    "line",
    [
        '{"qid": "q2", "retrieved": [{"chunk_id": "c", "score": 1, "extra": 1}]}',
        '{"qid": "q2", "retrieved": [{"chunk_id": "c", "score": "1"}]}',
        '{"qid": "q2", "retrieved": [{"chunk_id": 1, "score": 1}]}',
        '{"qid": "q2", "retrieved": [{"chunk_id": "c", "score": 01}]}',
        '{"qid": "q2", "retrieved": [{"chunk_id": "c", "score": 1.}]}',
        '{"qid": "q2", "retrieved": [{"chunk_id": "c", "score": 1, "rank": 1.5}]}',
        '{"qid": "q2", "retrieved": [{"chunk_id": "c", "score": 1,}]}',
        '{"qid": "q2", "retrieved": [{"chunk_id": "c", "score": 1},]}',
        '{"qid": "q2", "retrieved": [{"chunk_id": "c", "score": 1} {"chunk_id": "d", "score": 1}]}',
        '{"qid": "q2", "retrieved": [{"chunk_id": "c\\x", "score": 1}]}',
        '{"qid": "q2", "retrieved": [{"chunk_id": "c", "score": 1, "text": ["t"]}]}',
        '{"qid": "q2", "retrieved": [{"score": 1}]}',
        '{"qid": "q2", "retrieved": [{}]}',
        '{"qid": "q2", "retrieved": {"chunk_id": "c", "score": 1}}',
    ],
)
def test_lists_of_another_shape_are_left_to_the_readers_that_check_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line: str
) -> None:
    """Anything but a flat list of known keys with values of their kind is not lifted; the file then
    gets exactly what it got before (pyarrow's read of the whole line, or the exact reader's)."""
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + line + "\n")
    assert _lifted(path) is None
    fast = load._results_jsonl_fast(path)
    slow, problems = _slow(path, monkeypatch)
    if fast is not None:
        assert not problems.errors and slow is not None and all(fast[n].equals(slow[n]) for n in fast)


# A defect per line 2; the line-by-line reader must name it (line 2, field) whichever path ran first.
DEFECTS = [
    ('{"qid": "q2", "answer": "a", "answer": "b"}', "answer", "appears twice"),
    ('{"qid": "q2", "retrieved": null}', "retrieved", "valid list"),
    ('{"qid": "q2", "retrieved": [null]}', "retrieved[0]", "valid dictionary"),
    (
        '{"qid": "q2", "retrieved": [{"chunk_id": "c", "score": 1, "extra": 1}]}',
        "retrieved[0].extra",
        "unknown field",
    ),
    ('{"qid": "q2", "judge": {"claims": [{"claim": "c"}]}}', "judge.claims[0].verdict", "missing"),
    (
        '{"qid": "q2", "judge": {"claims": [{"claim": "c", "verdict": null}]}}',
        "judge.claims[0].verdict",
        "SUPPORTED",
    ),
    ('{"qid": "q2", "external_scores": {"f": "high"}}', "external_scores.f", "valid number"),
    ('{"qid": "q2", "tokens": {"input": 1.5}}', "tokens.input", "valid integer"),
    ('{"qid": "q2", "latency_ms": -1}', "latency_ms", "greater than or equal"),
    ('{"qid": "q2", "retrieved": [{"chunk_id": "c", "score": NaN}]}', None, "NaN"),
    # A \u escape without four hex digits: skipped as six bytes it stepped over the closing quote
    # and the list reader then ran off the end of the line (a crash; found by a review's fuzzing).
    ('{"qid": "q2", "answer": "\\u12"}"}', None, "ends before"),
    ('{"qid": "q2", "answer": "\\u12"}', None, "malformed JSON"),
    # Half a surrogate pair: pyarrow kept something, the exact reader refuses it.
    ('{"qid": "q2", "answer": "a\\ud800 b"}', "answer", "unicode"),
    (
        '{"qid": "q2", "retrieved": [{"chunk_id": "c\\udc00", "score": 1}]}',
        "retrieved[0].chunk_id",
        "unicode",
    ),
]


@pytest.mark.parametrize(("line", "field", "words"), DEFECTS)
def test_a_defect_goes_line_by_line_and_names_its_line_and_field(
    tmp_path: Path, line: str, field: str | None, words: str
) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + line + "\n")
    assert load._results_jsonl_fast(path) is None
    problems = Problems()
    assert load._read_results_jsonl(path, problems) is None
    err = problems.errors[0]
    assert err.line == 2 and (field is None or err.field == field) and words in str(err), str(err)


def test_blank_lines_keep_their_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps(GOOD) + "\n\n" + json.dumps({**GOOD, "qid": "q3"}) + "\n")
    frames = load._read_results_jsonl(path, Problems())
    assert frames is not None and frames["results"]["line"].to_list() == [1, 3]


# Ids and texts with quotes, backslashes, control, accented and astral characters (written escaped or
# raw: \uXXXX and surrogate pairs); numbers of every JSON form, beyond int64 too.
chunk = st.fixed_dictionaries(
    {
        "chunk_id": st.text('ab"\\\né😀', min_size=1, max_size=3),
        "score": st.floats(-5, 5)
        | st.integers(-3, 3)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.integers(-(10**20), 10**20),
    },
    optional={
        "text": st.none() | st.text(max_size=5),
        "doc_id": st.none() | st.text("d", max_size=2),
        "rank": st.integers(1, 9),
    },
)
claim = st.fixed_dictionaries(
    {
        "claim": st.text("xy", min_size=1, max_size=3),
        "verdict": st.sampled_from(["SUPPORTED", "NOT_SUPPORTED"]),
    },
    optional={"quote": st.none() | st.text(max_size=4)},
)
record = st.fixed_dictionaries(
    {},
    optional={
        "retrieved": st.lists(chunk, max_size=3, unique_by=lambda c: c["chunk_id"]),
        "answer": st.none() | st.text(max_size=12),
        "abstained": st.none() | st.booleans(),
        "judge": st.none()
        | st.fixed_dictionaries(
            {},
            optional={
                "claims": st.none() | st.lists(claim, max_size=2),
                "correctness": st.sampled_from(["correct", "incorrect", "maybe"]),
                "relevance": st.floats(0, 1.5),
            },
        ),
        "latency_ms": st.floats(-1, 100) | st.integers(0, 9),
        "external_scores": st.dictionaries(st.sampled_from(["f", "g"]), st.none() | st.floats(0, 1)),
        "tokens": st.fixed_dictionaries(
            {}, optional={"input": st.integers(-1, 5), "output": st.integers(0, 5)}
        ),
    },
)


@pytest.mark.parametrize(
    "how", ["lifted", "pyarrow", "blocks"], ids=["lists lifted", "whole lines by pyarrow", "blocks of lines"]
)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(recs=st.lists(record, min_size=1, max_size=6), ascii_only=st.booleans(), compact=st.booleans())
def test_the_fast_path_never_accepts_what_the_exact_one_refuses(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    how: str,
    recs: list[dict],
    ascii_only: bool,
    compact: bool,
) -> None:
    """Every whole-file reader: the retrieved lists read by the compiled scanner (once it is loaded),
    the whole line by pyarrow (a folder's first files, while it loads), and a big file a block of
    lines at a time (here blocks of 150 bytes, so a block is a line or two and the blocks' inferred
    types differ: a column null in one block, a struct field missing in another)."""
    from evalcore.runs import jsonl

    if how == "pyarrow":
        monkeypatch.setattr(jsonl, "_COMPILED", threading.Event())
    if how == "blocks":
        monkeypatch.setattr(jsonl, "BLOCK", 150)
    path = tmp_path_factory.mktemp("jsonl") / "results.jsonl"
    sep = (",", ":") if compact else (", ", ": ")
    path.write_text(
        "".join(
            json.dumps({"qid": f"q{i}", **r}, ensure_ascii=ascii_only, separators=sep) + "\n"
            for i, r in enumerate(recs)
        ),
        encoding="utf-8",
    )
    fast = load._results_jsonl_fast(path)
    slow, problems = _slow(path, monkeypatch)
    if fast is None:
        return
    assert not problems.errors, f"the fast path accepted a file with errors: {problems.errors[0]}"
    assert slow is not None
    for name in ("results", "retrieved", "claims"):
        assert fast[name].equals(slow[name]), name
    # External scores: an explicit null is "not computed"; either way no score reaches the tables.
    assert (
        fast["external"]
        .drop_nulls()
        .sort("qid", "name")
        .equals(slow["external"].drop_nulls().sort("qid", "name"))
    )


def test_right_after_an_install_the_lifter_compiles_in_another_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Compiling the scanner takes seconds holding the interpreter: not beside a user's first view.
    Until a child process has compiled it, files are read by pyarrow whole; once compiled, a
    background thread loads it and lists are lifted. What the caller asked to load next (the
    retrieval kernel) is loaded after it, either way."""
    from evalcore.runs import jsonl

    spawned: list[str] = []
    after: list[bool] = []
    monkeypatch.setattr(jsonl, "_COMPILED", threading.Event())
    monkeypatch.setattr(jsonl, "_WARMING", threading.Lock())
    monkeypatch.setattr(jsonl, "scanner_compiled", lambda *a: False)
    monkeypatch.setattr("evalcore.metrics.retrieval.compile_elsewhere", spawned.append)
    jsonl.load_scanner_for(jsonl.SCAN_WORTH, then=lambda: after.append(jsonl._COMPILED.is_set()))
    assert spawned == ["from evalcore.runs._scan import warm_up; warm_up()"]
    assert not jsonl._COMPILED.is_set(), "not loaded here: whole lines by pyarrow"
    assert after == [False]

    monkeypatch.setattr(jsonl, "_WARMING", threading.Lock())
    monkeypatch.setattr(jsonl, "scanner_compiled", lambda *a: True)
    done = threading.Event()
    jsonl.load_scanner_for(
        jsonl.SCAN_WORTH, then=lambda: (after.append(jsonl._COMPILED.is_set()), done.set())
    )
    assert done.wait(30), "compiled on disk: loaded on a background thread, then what comes next"
    assert after == [False, True] and len(spawned) == 1


def test_a_small_folder_loads_what_comes_next_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from evalcore.runs import jsonl

    after: list[int] = []
    monkeypatch.setattr(jsonl, "_WANTED", threading.Event())
    jsonl.load_scanner_for(jsonl.SCAN_WORTH - 1, then=lambda: after.append(1))
    assert after == [1] and not jsonl._WANTED.is_set()


def test_the_lifter_never_reads_past_a_string_it_cannot_close() -> None:
    """Called on bytes the scan would refuse, the list reader says no instead of reading past the end."""
    import numpy as np

    from evalcore.runs._scan import lift

    for raw in (b'{"a":"\\u12"}"}', b'{"a":"x\\', b'{"a":"x'):
        assert lift(np.frombuffer(raw, np.uint8), "retrieved") is None, raw


def test_a_score_of_minus_zero_keeps_the_sign_a_json_reader_gives_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """-0 is the integer 0 (then 0.0); -0.0 is negative zero. Equal as numbers, but a table prints
    them apart."""
    import numpy as np

    path = tmp_path / "results.jsonl"
    path.write_text(
        '{"qid": "q1", "retrieved": [{"chunk_id": "a", "score": -0}, {"chunk_id": "b", "score": -0.0}]}\n'
    )
    lifted = _lifted(path)
    slow, _ = _slow(path, monkeypatch)
    assert lifted is not None and slow is not None
    signs = np.signbit(lifted["retrieved"]["score"].to_numpy()).tolist()
    assert signs == np.signbit(slow["retrieved"]["score"].to_numpy()).tolist() == [False, True]


def test_a_big_file_is_read_a_block_of_lines_at_a_time_to_the_same_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Peak memory: a 2.2 GB run read whole held its bytes, the scanner's buffers and pyarrow's copy
    at once (9x its frames). Read a block at a time, each block turned into the run's tables before
    the next is read, the tables equal those of the file read whole, line numbers included — though
    the blocks' inferred types differ: a column null in one block (answer, judge), a struct field one
    block lacks (text), a number whole in one block and a fraction in another (latency_ms)."""
    from evalcore.runs import jsonl

    path = tmp_path / "results.jsonl"
    lines = []
    for i in range(300):
        chunk = {"chunk_id": f"c{i}", "score": 1.5}
        if i >= 150:
            chunk["text"] = f"text {i}"
        rec = {
            "qid": f"q{i}",
            "retrieved": [chunk],
            "answer": None if i < 100 else f"a{i}",
            "latency_ms": i if i < 150 else i + 0.5,
            "judge": None if i < 120 else {"claims": [{"claim": "c", "verdict": "SUPPORTED"}]},
        }
        lines.append(json.dumps(rec))
    path.write_text("\n".join(lines) + "\n")
    whole = load._results_jsonl_fast(path)
    seen: list[int] = []
    real = jsonl._read_block
    monkeypatch.setattr(
        jsonl, "_read_block", lambda data, *a, **kw: seen.append(len(data)) or real(data, *a, **kw)
    )
    monkeypatch.setattr(jsonl, "BLOCK", 4096)
    blocks = load._results_jsonl_fast(path)
    assert whole is not None and blocks is not None
    assert len(seen) > 3 and max(seen) <= 4096 + 200, "read in blocks"
    for name in whole:
        assert blocks[name].equals(whole[name]), name
    assert blocks["results"]["line"].to_list() == list(range(1, 301))
    assert blocks["results"]["latency_ms"][299] == 299.5 and blocks["claims"].height == 180

    # A problem in a later block is named with its line in the whole file.
    lines[250] = lines[250].replace('"q250"', '"q3"')
    path.write_text("\n".join(lines) + "\n")
    problems = Problems()
    frames = load._read_results_jsonl(path, problems)
    assert frames is not None
    check_records(path, frames, problems)
    assert [(e.line, e.field) for e in problems.errors] == [(251, "qid")]


def test_a_list_of_nulls_is_named_by_the_exact_reader_not_read_as_empty(tmp_path: Path) -> None:
    """``[null]`` is typed List(Null), which reads as empty lists; the record model refuses a null
    element, so the fast path must hand such a file (or block) to the exact reader."""
    for line in ('{"qid":"q1","judge":{"claims":[null]}}', '{"qid":"q1","retrieved":[null]}'):
        path = tmp_path / "results.jsonl"
        path.write_text(line + "\n")
        assert load._results_jsonl_fast(path) is None, line
        problems = Problems()
        assert load._read_results_jsonl(path, problems) is None
        assert [e.line for e in problems.errors] == [1], line


def test_a_file_emptied_after_its_size_was_taken_is_no_crash(tmp_path: Path) -> None:
    """The size says "read in blocks", the read finds nothing (the file was rewritten meanwhile):
    no tables, and the caller's exact reader says what it finds."""
    import os

    from evalcore.runs import jsonl

    class Shrunk(type(tmp_path)):  # type: ignore[misc]
        def stat(self, **kw):  # type: ignore[no-untyped-def]
            real = os.stat(self)
            return os.stat_result((real.st_mode, *real[1:6], 10**9, *real[7:]))

    path = tmp_path / "results.jsonl"
    path.write_text("")
    assert jsonl.read_plain_blocks(Shrunk(path), lambda df, _: df) is None
    assert jsonl.read_plain_blocks(Shrunk(tmp_path / "gone.jsonl"), lambda df, _: df) is None


def test_lifted_tables_keep_none_of_the_lifters_block_sized_buffers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lifter writes each field into a (fields x block) array; polars keeps a string as a view
    into the buffer it came from, so a table holding a view of one row kept the whole array alive:
    a million-question run peaked at 4.0 GB for 2.3 GB of tables. The tables hold copies of what
    they use, and the lifter's arrays are freed once the block is read."""
    import gc
    import importlib
    import weakref

    # as the reader imports it (a test before this one may have imported the module afresh)
    _scan = importlib.import_module("evalcore.runs._scan")

    path = tmp_path / "results.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {
                    "qid": f"q{i}",
                    "retrieved": [
                        {
                            "chunk_id": f"chunk-{i}-{j}-long-enough-for-a-buffer",
                            "doc_id": f"d{j}",
                            "score": 1.0 / (j + 1),
                        }
                        for j in range(5)
                    ],
                }
            )
            + "\n"
            for i in range(200)
        )
    )
    made: list[weakref.ref] = []
    real = _scan.lift

    def lift(buf, key):  # type: ignore[no-untyped-def]
        out = real(buf, key)
        if out is not None:
            # the file's bytes less the lists, and the per-field values, offsets and validity
            made.extend(weakref.ref(a) for a in out[1:] if getattr(a, "ndim", 0) == 2 or a is out[1])
        return out

    monkeypatch.setattr(_scan, "lift", lift)
    frames = _lifted(path)
    assert frames is not None and made
    gc.collect()
    kept = [r for r in made if r() is not None]
    assert not kept, f"{len(kept)} of the lifter's arrays outlive the read"
    assert frames["retrieved"]["chunk_id"][7] == "chunk-1-2-long-enough-for-a-buffer"


def test_a_big_file_is_read_on_every_core_a_block_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One big run keeps both cores busy: its blocks are parsed side by side on worker threads, and
    the tables come out in the file's order with the file's line numbers."""
    from evalcore.runs import jsonl

    path = tmp_path / "results.jsonl"
    path.write_text(
        "".join(
            json.dumps({"qid": f"q{i}", "retrieved": [{"chunk_id": f"c{i}", "score": 1}]}) + "\n"
            for i in range(400)
        )
    )
    threads: set[str] = set()
    real = jsonl._read_block

    def spy(*a, **kw):  # type: ignore[no-untyped-def]
        threads.add(threading.current_thread().name)
        return real(*a, **kw)

    monkeypatch.setattr(jsonl, "_read_block", spy)
    monkeypatch.setattr(jsonl, "BLOCK", 2000)
    frames = load._results_jsonl_fast(path)
    assert frames is not None
    assert len(threads) == jsonl.WORKERS >= 2, threads
    assert frames["results"]["qid"].to_list() == [f"q{i}" for i in range(400)]
    assert frames["results"]["line"].to_list() == list(range(1, 401))
    assert frames["retrieved"]["chunk_id"].to_list() == [f"c{i}" for i in range(400)]
