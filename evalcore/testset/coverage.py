"""Coverage of a test set: how many questions each slice holds, what is labeled, and where it is
thin (the guide: "make sure every question type and every important document group is present").

The thresholds of the warnings are arguments with documented defaults (docs/testset.md), so a team
with another idea of "thin" says so once, on the command line or the page.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from evalcore.runs.testset import HELDOUT, LABELED, TestSet
from evalcore.words import agree, count

# The question types the guide names; a test set without one of them is warned about.
GUIDE_TYPES = ("lookup", "comparison", "multi-hop", "identifier")
MIN_TOPIC = 10  # a topic with fewer questions gives means too wide to act on
SLICES = ("type", "topic", "source", "split")


@dataclass(frozen=True)
class Coverage:
    path: str
    sha256: str
    questions: int
    answerable: int
    unanswerable: int
    unlabeled: int  # answerable, no labeled chunk yet: retrieval not scored
    must_pass: int
    heldout: int
    with_reference: int
    answerable_without_reference: int
    with_evidence: int
    labeled_chunks: dict[str, float]  # min / median / mean / max relevant chunks per labeled question
    slices: dict[str, pl.DataFrame]  # slice -> value, questions, share, real, synthetic, unanswerable
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {
            "path": self.path,
            "sha256": self.sha256,
            "questions": self.questions,
            "answerable": self.answerable,
            "unanswerable": self.unanswerable,
            "unlabeled": self.unlabeled,
            "must_pass": self.must_pass,
            "heldout": self.heldout,
            "with_reference": self.with_reference,
            "answerable_without_reference": self.answerable_without_reference,
            "with_evidence": self.with_evidence,
            "labeled_chunks": self.labeled_chunks,
            "slices": {k: v.to_dicts() for k, v in self.slices.items()},
            "warnings": self.warnings,
        }


def _slice_table(cases: pl.DataFrame, col: str) -> pl.DataFrame:
    n = cases.height
    return (
        cases.group_by(pl.col(col).alias("value"))
        .agg(
            pl.len().alias("questions"),
            (pl.col("source") == "real").sum().alias("real"),
            (pl.col("source") == "synthetic").sum().alias("synthetic"),
            (~pl.col("answerable")).sum().alias("unanswerable"),
        )
        .with_columns((pl.col("questions") / n).round(3).alias("share"))
        .select("value", "questions", "share", "real", "synthetic", "unanswerable")
        .sort(["questions", "value"], descending=[True, False])
    )


def coverage(
    ts: TestSet,
    *,
    min_topic: int = MIN_TOPIC,
    expected_types: tuple[str, ...] = GUIDE_TYPES,
    slices: tuple[str, ...] = SLICES,
) -> Coverage:
    """Counts per slice and the warnings where coverage is thin.

    Warnings: an expected question type missing; a topic with fewer than ``min_topic`` questions;
    a slice value where synthetic questions outnumber real ones; no unanswerable question; no
    held-out split; answerable questions with no labeled chunk; questions with no reference answer.
    """
    cases = ts.cases
    n = cases.height
    evidence_qids = set(ts.evidence["qid"].unique().to_list())
    per_q = cases.filter(LABELED)["n_relevant"]
    labeled_chunks = (
        {
            "min": float(per_q.min()),  # type: ignore[arg-type]
            "median": float(per_q.median()),  # type: ignore[arg-type]
            "mean": round(float(per_q.mean()), 2),  # type: ignore[arg-type]
            "max": float(per_q.max()),  # type: ignore[arg-type]
        }
        if len(per_q)
        else {}
    )
    tables = {s: _slice_table(cases, s) for s in slices if s in cases.columns}
    unanswerable = int((~cases["answerable"]).sum())
    cov = Coverage(
        path=str(ts.path),
        sha256=ts.sha256,
        questions=n,
        answerable=n - unanswerable,
        unanswerable=unanswerable,
        unlabeled=ts.n_unlabeled,
        must_pass=int(cases["must_pass"].sum()),
        heldout=ts.n_heldout,
        with_reference=int(cases["reference_answer"].is_not_null().sum()),
        answerable_without_reference=int((cases["answerable"] & cases["reference_answer"].is_null()).sum()),
        with_evidence=int(cases["qid"].is_in(list(evidence_qids)).sum()),
        labeled_chunks=labeled_chunks,
        slices=tables,
    )
    cov.warnings.extend(_warnings(cov, min_topic=min_topic, expected_types=expected_types))
    return cov


def _warnings(cov: Coverage, *, min_topic: int, expected_types: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    types = set(cov.slices["type"]["value"].to_list()) if "type" in cov.slices else set()
    missing = [t for t in expected_types if t not in types]
    if missing:
        out.append(
            f"no {', '.join(missing)} question{'s' if len(missing) > 1 else ''}: every question type "
            "should be present (write some from real traffic, or synthesise and review them)"
        )
    if "topic" in cov.slices:
        thin = cov.slices["topic"].filter(pl.col("questions") < min_topic)
        for row in thin.sort("questions").iter_rows(named=True):
            out.append(
                f"topic '{row['value']}' has {count(row['questions'], 'question')}, fewer than {min_topic}: "
                "its means are too wide to act on"
            )
    for name, table in cov.slices.items():
        if name == "source":
            continue
        for row in table.filter(pl.col("synthetic") > pl.col("real")).iter_rows(named=True):
            out.append(
                f"{name} '{row['value']}': {count(row['synthetic'], 'synthetic question')} {agree(row['synthetic'], 'outnumbers', 'outnumber')} "
                f"{count(row['real'], 'real one')} — synthetic questions flatter keyword retrieval"
            )
    if cov.unanswerable == 0:
        out.append(
            "no unanswerable question: add questions the corpus cannot answer (empty relevant), "
            "or abstention is never measured"
        )
    if cov.heldout == 0:
        out.append(f'no held-out split: mark some questions "split": "{HELDOUT}" and keep them out of tuning')
    if cov.unlabeled:
        out.append(
            f"{count(cov.unlabeled, 'answerable question')} {agree(cov.unlabeled, 'has', 'have')} no labeled chunk: their retrieval is not scored"
        )
    missing_ref = cov.answerable_without_reference
    if missing_ref > 0:
        out.append(
            f"{count(missing_ref, 'answerable question')} {agree(missing_ref, 'has', 'have')} no reference answer: their correctness is not judged"
        )
    return out
