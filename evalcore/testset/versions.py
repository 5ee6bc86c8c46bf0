"""Test-set versions: the version a run answered, and what changed between two versions.

A version is the sha256 of the file's bytes (:mod:`evalcore.runs.testset`); two versions are
compared question by question, by qid.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import polars as pl

from evalcore.runs.load import Run
from evalcore.runs.testset import TestSet
from evalcore.words import count

CHANGES = ("added", "removed", "relabeled", "edited")
BOTH = "relabeled and edited"  # its labels and its text changed: a new question as much as a new label
# What each field of a case is, for the diff: a change to a label field makes the question relabeled.
LABEL_FIELDS = ("relevant", "evidence", "answerable")
TEXT_FIELDS = ("question", "reference_answer", "tags", "split", "must_pass")
DIFF_SCHEMA = {"qid": pl.String, "change": pl.String, "fields": pl.String, "detail": pl.String}


def _cases(ts: TestSet) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    rel: dict[str, dict[str, int]] = {}
    for qid, cid, grade in ts.qrels.iter_rows():
        rel.setdefault(qid, {})[cid] = grade
    ev: dict[str, list[tuple[Any, ...]]] = {}
    for row in ts.evidence.iter_rows(named=True):
        ev.setdefault(row["qid"], []).append((row["doc_id"], row["start"], row["end"], row["grade"]))
    tags: dict[str, list[tuple[str, str]]] = {}
    builtin = {"split", "must_pass", "answerable"}
    for qid, tag, value in ts.tags.iter_rows():
        if tag not in builtin:
            tags.setdefault(qid, []).append((tag, value))
    for c in ts.cases.iter_rows(named=True):
        q = c["qid"]
        out[q] = {
            "question": c["question"],
            "reference_answer": c["reference_answer"],
            "tags": sorted(tags.get(q, [])),
            "split": c["split"],
            "must_pass": c["must_pass"],
            "answerable": c["answerable"],
            "relevant": rel.get(q, {}),
            "evidence": sorted(ev.get(q, [])),
        }
    return out


def _relabel_detail(a: dict[str, int], b: dict[str, int]) -> str:
    parts = []
    for cid in sorted(set(a) | set(b)):
        if a.get(cid) != b.get(cid):
            parts.append(f"{cid}: {a.get(cid, '-')} -> {b.get(cid, '-')}")
    return "; ".join(parts)


def _show(value: Any) -> str:
    if isinstance(value, list):
        return (
            ", ".join(":".join(str(x) for x in v) if isinstance(v, tuple) else str(v) for v in value) or "-"
        )
    return (
        "-"
        if value is None
        else json.dumps(value, ensure_ascii=False)
        if isinstance(value, str)
        else str(value)
    )


def _field_detail(field: str, a: Any, b: Any) -> str:
    if field == "evidence":
        return (
            f"evidence: {len(a)} -> {count(len(b), 'span')}" if len(a) != len(b) else "evidence: spans moved"
        )
    return f"{field}: {_show(a)} -> {_show(b)}"


def diff(old: TestSet, new: TestSet) -> pl.DataFrame:
    """Questions added, removed, relabeled (relevant chunks, grades, evidence or answerability
    changed), edited (text, reference answer, tags, split, must-pass), or relabeled and edited, one
    row each, by qid."""
    a, b = _cases(old), _cases(new)
    rows: list[dict[str, str]] = []
    for qid in sorted(set(b) - set(a)):
        rows.append({"qid": qid, "change": "added", "fields": "", "detail": b[qid]["question"]})
    for qid in sorted(set(a) - set(b)):
        rows.append({"qid": qid, "change": "removed", "fields": "", "detail": a[qid]["question"]})
    for qid in sorted(set(a) & set(b)):
        changed = [f for f in (*LABEL_FIELDS, *TEXT_FIELDS) if a[qid][f] != b[qid][f]]
        if not changed:
            continue
        relabeled = any(f in LABEL_FIELDS for f in changed)
        edited = any(f in TEXT_FIELDS for f in changed)
        detail = "; ".join(
            _relabel_detail(a[qid]["relevant"], b[qid]["relevant"])
            if f == "relevant"
            else _field_detail(f, a[qid][f], b[qid][f])
            for f in changed
        )
        rows.append(
            {
                "qid": qid,
                "change": BOTH if relabeled and edited else "relabeled" if relabeled else "edited",
                "fields": ", ".join(changed),
                "detail": detail,
            }
        )
    order = {c: i for i, c in enumerate(CHANGES)} | {BOTH: CHANGES.index("relabeled")}
    return (
        pl.DataFrame(rows, schema=DIFF_SCHEMA)
        .with_columns(pl.col("change").replace_strict(order, return_dtype=pl.Int64).alias("_o"))
        .sort("_o", "qid")
        .drop("_o")
    )


def diff_counts(table: pl.DataFrame) -> dict[str, int]:
    """Questions per kind of change; a question relabeled and edited counts in both."""
    counts = dict(table.group_by("change").len().iter_rows())
    both = int(counts.get(BOTH, 0))
    return {c: int(counts.get(c, 0)) + (both if c in ("relabeled", "edited") else 0) for c in CHANGES}


def answered_versions(runs: Iterable[Run]) -> pl.DataFrame:
    """Per run: the test-set version it answered (recorded in its run.json), the file it names and
    whether that file on disk is still that version."""
    rows = [
        {
            "run_id": r.manifest.run_id,
            "created": r.manifest.created.isoformat(),
            "answered": r.manifest.test_set.sha256[:12],
            "on_disk": r.testset.sha256[:12],
            "current": r.manifest.test_set.sha256 == r.testset.sha256,
            "file": str(r.testset.path),
        }
        for r in runs
    ]
    schema = {
        "run_id": pl.String,
        "created": pl.String,
        "answered": pl.String,
        "on_disk": pl.String,
        "current": pl.Boolean,
        "file": pl.String,
    }
    return pl.DataFrame(rows, schema=schema).sort("created")
