"""Reviewing production answers with the judge's rubric: a random sample of a log's answers becomes a
labeling session in the same store as calibration labels (the Calibration page labels it, blind,
with the same keys and quota), so reviewed production answers are kept beside — and measured like —
the test set's.

A production answer has no reference answer, so the question asked is faithfulness, of the whole
answer: is everything it says stated in the chunks the system retrieved?
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from evalcore.calibration.sessions import RUBRIC_VERSION, RUBRICS
from evalcore.signals.alerts import review_sample
from evalcore.signals.logs import Log
from evalcore.store import Store
from evalcore.store.labels import ANSWER_ITEM

UNJUDGED = "none"  # the judge of a production session: no verdict yet (people label first)


def log_run_id(log: Log) -> str:
    """What a session on a log is attached to, like a run id: ``log:<file name>``."""
    return f"log:{log.name}"


def create_review(
    store: Store,
    log: Log,
    name: str,
    n: int,
    *,
    texts: Mapping[str, str] | None = None,
    seed: int = 0,
    labels_per_item: int = 1,
) -> int:
    """A labeling session on a uniform sample of ``n`` answered questions of ``log``; its id.
    ``texts`` (chunk id -> text) fills in chunk texts the log does not carry."""
    if store.find_session(name) is not None:
        msg = f"a session named {name!r} exists; choose another name"
        raise ValueError(msg)
    sample = review_sample(log.interactions, n, seed)
    if sample.is_empty():
        msg = f"{log.name} has no answered question to review"
        raise ValueError(msg)
    texts = texts or {}
    chunks: dict[int, list[dict[str, str]]] = {}
    lines = sample["line"].to_list()
    for line, cid, text in (
        log.retrieved.filter(pl.col("line").is_in(lines))
        .sort("line", "rank")
        .select("line", "chunk_id", "text")
        .iter_rows()
    ):
        chunks.setdefault(line, []).append({"chunk_id": cid, "text": text or texts.get(cid, "")})
    weight = log.interactions.filter(~pl.col("abstained")).height / sample.height
    items = [
        {
            "qid": f"{row['conversation_id']}@{row['line']}",
            "claim_idx": ANSWER_ITEM,
            "stratum": "all",
            "weight": weight,
            "payload": {
                "question": row["question"],
                "reference": None,
                "answer": row["answer"],
                "chunks": chunks.get(row["line"], []),
                "time": row["time"].isoformat(),
                "conversation_id": row["conversation_id"],
            },
            "judge_label": None,
        }
        for row in sample.iter_rows(named=True)
    ]
    session = {
        "name": name,
        "run_id": log_run_id(log),
        "results_sha256": log.sha256,
        "judge": UNJUDGED,
        "judge_key": UNJUDGED,
        "target": "production",
        "sampling": "uniform",
        "seed": seed,
        "labels_per_item": labels_per_item,
        "rubric": RUBRICS["production"],
        "rubric_version": RUBRIC_VERSION,
    }
    return store.create_session(session, items)
