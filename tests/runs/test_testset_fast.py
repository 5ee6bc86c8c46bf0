"""The vectorised test-set reader (a million questions: issue 29) accepts exactly what the exact
reader accepts, builds the same tables, and hands every file it does not accept to the exact reader,
which names the line and field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import evalcore.runs._scan  # noqa: F401  (loaded: the scan is worth it for any file)
from evalcore.errors import InputError, Problems
from evalcore.runs import testset as T
from evalcore.runs.jsonl import iter_jsonl, validate_line
from evalcore.schema import TestCase

ROOT = Path(__file__).resolve().parents[2]


def exact_tables(path: Path) -> dict[str, pl.DataFrame] | None:
    """The tables the exact (line-by-line) reader builds, or None when it reports a problem."""
    problems = Problems()
    kept = []
    for line, obj in iter_jsonl(path, problems, what="test case"):
        case = validate_line(TestCase, obj, path, line, problems)
        if isinstance(case, TestCase):
            kept.append((line, case))
    if problems.errors or len({c.qid for _, c in kept}) != len(kept):
        return None
    return T._tables(kept)


def assert_same(fast: dict[str, pl.DataFrame], exact: dict[str, pl.DataFrame]) -> None:
    for name in ("cases", "qrels", "tags", "evidence"):
        a, b = fast[name], exact[name]
        assert a.schema == b.schema, name
        if name == "tags":  # a question's own tags: key order may differ (struct order vs the line's)
            a, b = a.sort(pl.all(), maintain_order=True), b.sort(pl.all(), maintain_order=True)
        assert a.equals(b), (name, a, b)


def case(i: int, **change: Any) -> dict[str, Any]:
    c: dict[str, Any] = {
        "qid": f"q{i:04d}",
        "question": f'What does "setting {i}" do?\nAsk é ✓ \\ here',
        "relevant": {f"c{i}": 2, f"c{i}-b": 0, f"é{i}": 1} if i % 4 else {},
        "tags": {"type": "lookup", "topic": ["billing", "security"][i % 2], "source": "real"},
    }
    if i % 3 == 0:
        c["reference_answer"] = f"It keeps data for {i} days."
    if i % 5 == 0:
        c["evidence"] = [
            {"doc_id": f"d{i}", "start": 0, "end": 10, "quote": 'a "q"'},
            {"doc_id": "x", "start": 3, "end": 4, "grade": 2},
        ]
    if i % 7 == 0:
        c["split"] = "heldout"
    if i % 6 == 0:
        c["must_pass"] = True
    if i % 8 == 0:
        c["relevant"], c["answerable"] = {}, True  # answerable, not labeled yet
    if i % 9 == 0:
        c["tags"]["team"] = ["core", "core", "edge"]
    if i % 11 == 0:
        c["tags"]["lang"] = "de"
    c.update(change)
    return c


def write(path: Path, cases: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for i, c in enumerate(cases)))
    return path


def test_the_sample_test_set_reads_the_same_both_ways() -> None:
    path = ROOT / "sample_runs" / "testset.jsonl"
    fast = T._tables_fast(path)
    assert fast is not None, "a plainly valid test set takes the vectorised reader"
    assert_same(fast, exact_tables(path))  # type: ignore[arg-type]


def test_every_feature_of_a_test_case_reads_the_same_both_ways(tmp_path: Path) -> None:
    path = write(tmp_path / "testset.jsonl", [case(i) for i in range(1, 400)])
    fast = T._tables_fast(path)
    assert fast is not None
    assert_same(fast, exact_tables(path))  # type: ignore[arg-type]
    assert fast["evidence"].height and fast["qrels"]["rel"].min() == 0
    assert fast["tags"].filter(pl.col("tag") == "team")["value"].to_list()[:2] == ["core", "edge"]


VALID_ODD = {
    "answerable null": {"answerable": None},
    "reference_answer null": {"reference_answer": None},
    "evidence empty": {"evidence": []},
    "quote null": {"evidence": [{"doc_id": "d", "start": 0, "end": 1, "quote": None}]},
    "tag list empty": {"tags": {"type": "t", "topic": "p", "source": "real", "team": []}},
    "key with colon and comma": {"relevant": {"a: 1, b": 1}},
    "tag a list on one line, a string on others": {
        "tags": {"type": "t", "topic": "p", "source": "real", "lang": ["de", "fr"]}
    },
}

INVALID = {
    "negative grade": {"relevant": {"c": -1}},
    "float grade": {"relevant": {"c": 1.5}},
    "string grade": {"relevant": {"c": "2"}},
    "bool grade": {"relevant": {"c": True}},
    "null relevant": {"relevant": None},
    "list relevant": {"relevant": ["c"]},
    "empty chunk id": {"relevant": {"": 1}},
    "no tags": {"tags": None},
    "tags a string": {"tags": "lookup"},
    "no type": {"tags": {"topic": "p", "source": "real"}},
    "empty type": {"tags": {"type": "", "topic": "p", "source": "real"}},
    "bad source": {"tags": {"type": "t", "topic": "p", "source": "web"}},
    "null tag": {"tags": {"type": "t", "topic": "p", "source": "real", "team": None}},
    "number tag": {"tags": {"type": "t", "topic": "p", "source": "real", "team": 3}},
    "number in tag list": {"tags": {"type": "t", "topic": "p", "source": "real", "team": ["a", 3]}},
    "null in tag list": {"tags": {"type": "t", "topic": "p", "source": "real", "team": ["a", None]}},
    "bad split": {"split": "train"},
    "null split": {"split": None},
    "string must_pass": {"must_pass": "yes"},
    "number must_pass": {"must_pass": 1},
    "null must_pass": {"must_pass": None},
    "string answerable": {"answerable": "no"},
    "answerable false with a label": {"answerable": False, "relevant": {"c": 1}},
    "span end before start": {"evidence": [{"doc_id": "d", "start": 5, "end": 5}]},
    "negative start": {"evidence": [{"doc_id": "d", "start": -1, "end": 5}]},
    "span grade 0": {"evidence": [{"doc_id": "d", "start": 0, "end": 5, "grade": 0}]},
    "empty doc_id": {"evidence": [{"doc_id": "", "start": 0, "end": 5}]},
    "null evidence": {"evidence": None},
    "unknown span key": {"evidence": [{"doc_id": "d", "start": 0, "end": 5, "page": 3}]},
    "float start": {"evidence": [{"doc_id": "d", "start": 0.5, "end": 5}]},
    "span without end": {"evidence": [{"doc_id": "d", "start": 0}]},
    "unknown key": {"difficulty": "hard"},
    "duplicate qid": {"qid": "q0001"},
    "empty qid": {"qid": ""},
    "number qid": {"qid": 5},
    "no question": {"question": None},
    "number reference": {"reference_answer": 5},
}


@pytest.mark.parametrize("name", list(VALID_ODD))
def test_an_odd_but_valid_case_reads_the_same_both_ways(tmp_path: Path, name: str) -> None:
    cases = [case(i) for i in range(1, 40)]
    cases[20] = {k: v for k, v in case(21, **VALID_ODD[name]).items()}
    path = write(tmp_path / "testset.jsonl", cases)
    exact = exact_tables(path)
    assert exact is not None
    fast = T._tables_fast(path)
    if fast is not None:
        assert_same(fast, exact)


@pytest.mark.parametrize("name", list(INVALID))
def test_a_case_the_record_refuses_goes_to_the_exact_reader_which_names_it(tmp_path: Path, name: str) -> None:
    cases = [case(i) for i in range(1, 40)]
    bad = case(21, **INVALID[name])
    cases[20] = {k: v for k, v in bad.items() if not (v is None and name == "no question")}
    path = write(tmp_path / "testset.jsonl", cases)
    assert T._tables_fast(path) is None, "the vectorised reader must not accept it"
    with pytest.raises(InputError) as err:
        T.read_testset(path)
    assert any(p.line == 21 for p in err.value.problems), [str(p) for p in err.value.problems]
