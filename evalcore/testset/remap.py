"""Labels that survive rechunking: evidence spans (document + character span) resolved to the chunk
ids of a new index build by overlap, grades carried over.

A chunk takes a span's grade when it holds at least ``min_share`` of the span's characters (default
0.25), or the span covers at least half of the chunk (a span spread over many small chunks keeps all
of them). Where several spans reach one chunk it takes the highest grade. Nothing is dropped
silently: every question whose labels could not be carried is listed with the reason, and kept in
the new version as answerable-but-unlabeled (its answer is still scored; its retrieval waits for a
label) rather than turned into an unanswerable one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
from pydantic import BaseModel, ConfigDict, Field, StrictInt

from evalcore.errors import InputError, Problem, Problems
from evalcore.runs.jsonl import iter_jsonl, validate_line
from evalcore.words import count

MIN_SHARE = 0.25
MAX_PROBLEMS = 20  # a chunk table of the wrong shape fails on every line: the first ones say why


class ChunkRow(BaseModel):
    """A line of a chunk table as an index build exports it: the four fields a span needs, text if
    there is one, any other column ignored (``evalcore.schema.Chunk`` is the strict form a run writes)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    chunk_id: str = Field(min_length=1)
    doc_id: str = Field(min_length=1)
    start: StrictInt = Field(ge=0)
    end: StrictInt = Field(ge=0)
    text: str | None = None


CHUNK_COVER = 0.5

REPORT_SCHEMA = {"qid": pl.String, "status": pl.String, "old": pl.String, "new": pl.String, "note": pl.String}


def read_corpus(path: str | Path) -> dict[str, tuple[str, str]]:
    """A corpus (``documents.jsonl``: doc_id, text, optional topic): doc id -> (text, topic; the doc
    id's first path part when no topic is given). A line without a string doc_id and text is named."""
    path = Path(path)
    problems = Problems()
    docs: dict[str, tuple[str, str]] = {}
    for lineno, obj in iter_jsonl(path, problems, what="document"):
        doc, text, topic = obj.get("doc_id"), obj.get("text"), obj.get("topic")
        if not isinstance(doc, str) or not isinstance(text, str) or not doc:
            problems.error(path, "a document needs a string doc_id and text", line=lineno, field="doc_id")
            continue
        docs[doc] = (text, topic if isinstance(topic, str) and topic else doc.split("/")[0])
    if problems.errors:
        raise InputError(problems.errors)
    return docs


def chunks_located(retrieved: pl.DataFrame, corpus: str | Path) -> tuple[pl.DataFrame, list[str]]:
    """A chunk table built from the chunks a run retrieved (chunk id, doc id, text), each text found in
    its document of ``corpus`` (:func:`read_corpus`) for its span; and the chunk ids that could not be
    placed (no doc id, no text, or the text is not in the document)."""
    docs = {doc: text for doc, (text, _) in read_corpus(corpus).items()}
    rows, lost = [], []
    for cid, doc, text in (
        retrieved.select("chunk_id", "doc_id", "text").unique("chunk_id").sort("chunk_id").iter_rows()
    ):
        at = docs.get(doc or "", "").find(text) if text else -1
        if at < 0:
            lost.append(cid)
            continue
        rows.append((cid, doc, at, at + len(text), text))
    schema = {
        "chunk_id": pl.String,
        "doc_id": pl.String,
        "start": pl.Int64,
        "end": pl.Int64,
        "text": pl.String,
    }
    return pl.DataFrame(rows, schema=schema, orient="row"), lost


def read_chunks(path: str | Path) -> pl.DataFrame:
    """A chunk table (``chunks.jsonl``: chunk_id, doc_id, start, end, text) — or a run folder holding
    one — as a frame; every bad line named."""
    path = Path(path)
    if path.is_dir():
        if not (path / "chunks.jsonl").exists() and (path / "run.json").exists():
            raise InputError([Problem(str(path), "this run folder has no chunks.jsonl",
                                      hint="pass --corpus DOCS to place the chunks it retrieved in their documents")])  # fmt: skip
        path = path / "chunks.jsonl"
    problems = Problems()
    rows = []
    for lineno, obj in iter_jsonl(path, problems, what="chunk"):
        if len(problems.errors) >= MAX_PROBLEMS:
            problems.error(
                path, f"more problems after line {lineno - 1} are not listed", hint="fix these first"
            )
            break
        chunk = validate_line(ChunkRow, obj, path, lineno, problems)
        if isinstance(chunk, ChunkRow):
            if chunk.end <= chunk.start:
                problems.error(
                    path,
                    f"end ({chunk.end}) must be greater than start ({chunk.start})",
                    line=lineno,
                    field="end",
                )
                continue
            rows.append((chunk.chunk_id, chunk.doc_id, chunk.start, chunk.end, chunk.text))
    frame = pl.DataFrame(
        rows,
        schema={
            "chunk_id": pl.String,
            "doc_id": pl.String,
            "start": pl.Int64,
            "end": pl.Int64,
            "text": pl.String,
        },
        orient="row",
    )
    dup = frame.filter(pl.col("chunk_id").is_duplicated())
    if not dup.is_empty():
        problems.error(path, f"chunk id '{dup['chunk_id'][0]}' appears more than once", field="chunk_id")
    if problems.errors:
        raise InputError(problems.errors)
    return frame


@dataclass(frozen=True)
class Remapped:
    cases: list[dict[str, Any]]  # the new version's lines
    report: pl.DataFrame  # qid, status, old chunk ids, new chunk ids, note

    def counts(self) -> dict[str, int]:
        return dict(self.report.group_by("status").len().sort("status").iter_rows())

    @property
    def unmapped(self) -> pl.DataFrame:
        return self.report.filter(pl.col("status").is_in(["unmapped", "partly mapped"]))


def _span_chunks(
    span: dict[str, Any], chunks: dict[str, list[tuple[str, int, int]]], min_share: float
) -> dict[str, int]:
    start, end, grade = span["start"], span["end"], span.get("grade", 1)
    length = end - start
    found: dict[str, int] = {}
    for cid, cstart, cend in chunks.get(span["doc_id"], []):
        inter = min(end, cend) - max(start, cstart)
        if inter <= 0:
            continue
        if inter / length >= min_share or inter / (cend - cstart) >= CHUNK_COVER:
            found[cid] = max(found.get(cid, 0), grade)
    return found


def remap(
    cases: list[dict[str, Any]], chunk_table: pl.DataFrame, *, min_share: float = MIN_SHARE
) -> Remapped:
    """The test set's cases with ``relevant`` rebuilt from their evidence spans over ``chunk_table``."""
    chunks: dict[str, list[tuple[str, int, int]]] = {}
    for cid, doc, start, end in chunk_table.select("chunk_id", "doc_id", "start", "end").iter_rows():
        chunks.setdefault(doc, []).append((cid, start, end))
    known_ids = set(chunk_table["chunk_id"].to_list())
    out: list[dict[str, Any]] = []
    report: list[dict[str, str]] = []
    for case in cases:
        new = dict(case)
        qid = case["qid"]
        old = {c: g for c, g in (case.get("relevant") or {}).items() if g >= 1}
        spans = case.get("evidence") or []
        old_s = ", ".join(sorted(old))
        if not spans:
            if not old:  # unanswerable (or unlabeled): nothing to carry
                out.append(new)
                report.append(
                    {"qid": qid, "status": "unchanged", "old": "", "new": "", "note": "no label to carry"}
                )
                continue
            kept = {c: g for c, g in old.items() if c in known_ids}
            new["relevant"] = kept
            if kept:
                status, note = "kept", "no evidence spans: labels kept where the chunk id still exists"
            else:
                status = "unmapped"
                note = "no evidence spans, and none of its chunk ids is in the new chunking: add evidence spans and remap"
                new["answerable"] = True
            if len(kept) < len(old) and kept:
                status, note = (
                    "partly mapped",
                    f"no evidence spans; {count(len(old) - len(kept), 'chunk id')} gone",
                )
            out.append(new)
            report.append(
                {"qid": qid, "status": status, "old": old_s, "new": ", ".join(sorted(kept)), "note": note}
            )
            continue
        mapped: dict[str, int] = {}
        missing: list[str] = []
        for i, span in enumerate(spans):
            found = _span_chunks(span, chunks, min_share)
            if not found:
                why = (
                    "its document is not in the chunk table"
                    if span["doc_id"] not in chunks
                    else "no chunk overlaps it"
                )
                missing.append(f"span {i + 1} ({span['doc_id']} {span['start']}-{span['end']}): {why}")
            for cid, grade in found.items():
                mapped[cid] = max(mapped.get(cid, 0), grade)
        new["relevant"] = dict(sorted(mapped.items()))
        if "answerable" in new and new["answerable"] is False:
            new.pop("answerable")  # labels again: answerability follows from them
        if not mapped:
            new["answerable"] = True
            status = "unmapped"
        else:
            status = "partly mapped" if missing else "mapped"
            if new.get("answerable") is True:
                new.pop("answerable")
        out.append(new)
        report.append(
            {
                "qid": qid,
                "status": status,
                "old": old_s,
                "new": ", ".join(sorted(mapped)),
                "note": "; ".join(missing),
            }
        )
    return Remapped(out, pl.DataFrame(report, schema=REPORT_SCHEMA))
