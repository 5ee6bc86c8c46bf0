"""results.jsonl has two readers and one contract: the whole-file path (polars + one compiled scan) is
taken only for plainly valid files and gives exactly the frames of the line-by-line path; anything
else goes line by line, and the error names the same line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import evalcore.runs.load as load
from evalcore.errors import Problems
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

    from evalcore.runs.jsonl import read_plain

    path = sorted(SAMPLE.glob("*/results.jsonl"))[0]
    fast = load._results_jsonl_fast(path)
    monkeypatch.delitem(sys.modules, "evalcore.runs._scan")
    assert read_plain(path) is None, "small and the scanner not loaded: line by line"
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
    assert sum(sizes) >= jsonl.SCAN_WORTH  # ... the folder above it
    lr = load.load_runs(SAMPLE)
    assert len(lr.runs) == 4 and "evalcore.runs._scan" in sys.modules


GOOD = {"qid": "q1", "retrieved": [{"chunk_id": "c1", "score": 1.0}], "answer": "x"}

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


chunk = st.fixed_dictionaries(
    {"chunk_id": st.text("abc", min_size=1, max_size=3), "score": st.floats(-5, 5) | st.integers(-3, 3)},
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


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(record, min_size=1, max_size=6))
def test_the_fast_path_never_accepts_what_the_exact_one_refuses(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, recs: list[dict]
) -> None:
    path = tmp_path_factory.mktemp("jsonl") / "results.jsonl"
    path.write_text("".join(json.dumps({"qid": f"q{i}", **r}) + "\n" for i, r in enumerate(recs)))
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
