"""Labels carried to a new chunking of the sample corpus: every label maps or is listed."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from evalcore import read_testset
from evalcore.cli import main
from evalcore.errors import InputError
from evalcore.testset.remap import read_chunks, remap
from evalcore.testset.write import read_cases, write_version
from helpers import SAMPLE


def rechunk(tmp_path: Path, size: int = 300, step: int = 250) -> tuple[Path, dict[str, str]]:
    """A fixed-window rechunking of the sample corpus: chunks.jsonl, and each document's text."""
    docs = [json.loads(line) for line in (SAMPLE / "corpus" / "documents.jsonl").read_text().splitlines()]
    rows = []
    for d in docs:
        for n, start in enumerate(range(0, len(d["text"]), step)):
            end = min(len(d["text"]), start + size)
            rows.append({"chunk_id": f"{d['doc_id']}~{n}", "doc_id": d["doc_id"], "start": start, "end": end,
                         "text": d["text"][start:end]})  # fmt: skip
    path = tmp_path / "chunks.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path, {d["doc_id"]: d["text"] for d in docs}


def test_every_label_maps_to_a_chunk_holding_its_quote(tmp_path: Path) -> None:
    chunks_path, _ = rechunk(tmp_path)
    chunks = read_chunks(chunks_path)
    result = remap(read_cases(SAMPLE / "testset.jsonl"), chunks)
    assert result.counts() == {"mapped": 124, "unchanged": 22}
    text = dict(chunks.select("chunk_id", "text").iter_rows())
    for case in result.cases:
        for span in case.get("evidence", []):
            # some new chunk of the question holds the span's quote, or most of it
            held = [c for c in case["relevant"] if span["quote"][: len(span["quote"]) // 2] in text[c]]
            assert held, (case["qid"], span)


def test_unmappable_labels_are_listed_and_kept(tmp_path: Path) -> None:
    chunks_path, _ = rechunk(tmp_path)
    chunks = read_chunks(chunks_path).filter(pl.col("doc_id") != "billing/plans")  # a document gone
    result = remap(read_cases(SAMPLE / "testset.jsonl"), chunks)
    lost = result.unmapped
    assert not lost.is_empty()
    assert lost.filter(pl.col("qid") == "hv-002")["note"][0].endswith(
        "its document is not in the chunk table"
    )
    out = {c["qid"]: c for c in result.cases}
    assert len(out) == 146  # nothing dropped
    assert (
        out["hv-002"]["relevant"] == {} and out["hv-002"]["answerable"] is True
    )  # unlabeled, not unanswerable


def test_cli_writes_a_new_version_and_runs_score_against_it(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    chunks_path, _ = rechunk(tmp_path)
    out = tmp_path / "testset.rechunked.jsonl"
    before = (SAMPLE / "testset.jsonl").read_bytes()
    args = [
        "testset",
        "remap",
        str(SAMPLE / "testset.jsonl"),
        "--chunks",
        str(chunks_path),
        "--out",
        str(out),
    ]
    assert main(args) == 0
    assert "124 mapped, 22 unchanged" in capsys.readouterr().out
    assert (SAMPLE / "testset.jsonl").read_bytes() == before  # the old version untouched
    new = read_testset(out)
    assert new.cases.height == 146 and new.qrels["chunk_id"].str.contains("~").all()
    assert main(args) == 2  # never over an existing file
    assert "already exists" in capsys.readouterr().err


def test_bad_chunk_lines_are_named(tmp_path: Path) -> None:
    path = tmp_path / "chunks.jsonl"
    path.write_text(
        '{"chunk_id": "a", "doc_id": "d", "start": 0, "end": 10, "text": "x"}\n{"chunk_id": "b", "doc_id": "d", "start": 5}\n'
    )
    with pytest.raises(InputError) as exc:
        read_chunks(path)
    assert any(p.line == 2 and p.field == "end" for p in exc.value.problems)


def test_a_chunk_table_without_text_and_with_extra_columns_reads(tmp_path: Path) -> None:
    path = tmp_path / "chunks.jsonl"
    path.write_text('{"chunk_id": "a", "doc_id": "d", "start": 0, "end": 10, "title": "x", "tokens": 3}\n')
    table = read_chunks(path)
    assert table.height == 1 and table["text"][0] is None


def test_a_chunk_table_of_the_wrong_shape_lists_the_first_problems(tmp_path: Path) -> None:
    path = tmp_path / "chunks.jsonl"
    path.write_text("".join('{"id": "a", "doc": "d"}\n' for _ in range(100)))
    with pytest.raises(InputError) as exc:
        read_chunks(path)
    assert len(exc.value.problems) <= 25 and "not listed" in exc.value.problems[-1].message


def test_write_version_validates_each_case(tmp_path: Path) -> None:
    with pytest.raises(InputError) as exc:
        write_version(
            [{"qid": "a", "question": "q?", "tags": {"type": "t", "topic": "t", "source": "made-up"}}],
            tmp_path / "x.jsonl",
        )
    assert exc.value.problems[0].field == "tags.source"
    assert not (tmp_path / "x.jsonl").exists()


def test_the_chunks_a_run_retrieved_placed_in_the_corpus(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from evalcore import load_runs
    from evalcore.testset.remap import chunks_located

    run = load_runs(SAMPLE).runs["2026-11-16-rerank-prompt-v2"]
    table, lost = chunks_located(run.retrieved, SAMPLE / "corpus" / "documents.jsonl")
    assert lost == [] and table.height == run.retrieved["chunk_id"].n_unique()
    docs = {
        json.loads(x)["doc_id"]: json.loads(x)["text"]
        for x in (SAMPLE / "corpus" / "documents.jsonl").read_text().splitlines()
    }
    for r in table.iter_rows(named=True):
        assert docs[r["doc_id"]][r["start"] : r["end"]] == r["text"]
    # the paragraph ids are the index's own, so every label maps back to itself
    result = remap(read_cases(SAMPLE / "testset.jsonl"), table)
    old = {
        json.loads(x)["qid"]: json.loads(x)["relevant"]
        for x in (SAMPLE / "testset.jsonl").read_text().splitlines()
    }
    for case in result.cases:
        assert set(case["relevant"]) <= set(old[case["qid"]]) or not old[case["qid"]]
    out = tmp_path / "v2.jsonl"
    args = [
        "testset",
        "remap",
        str(SAMPLE / "testset.jsonl"),
        "--chunks",
        str(SAMPLE / "2026-11-16-rerank-prompt-v2"),
        "--out",
        str(out),
    ]
    assert main(args) == 2 and "has no chunks.jsonl" in capsys.readouterr().err
    assert main([*args, "--corpus", str(SAMPLE / "corpus" / "documents.jsonl")]) == 0
    assert out.exists()
