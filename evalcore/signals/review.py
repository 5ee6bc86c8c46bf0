"""Reviewing production answers with the judge's rubric: a random sample of a log's answers becomes a
labeling session in the same store as calibration labels (the Calibration page labels it, blind,
with the same keys and quota), so reviewed production answers are kept beside — and measured like —
the test set's.

A production answer has no reference answer, so the question asked is faithfulness, of the whole
answer: is everything it says stated in the chunks the system retrieved?
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from evalcore.calibration.sessions import RUBRIC_VERSION, RUBRICS
from evalcore.judge.client import Item, JudgeConfig
from evalcore.judge.rerun import judge_into_revision
from evalcore.metrics.quotes import scored_verdict
from evalcore.signals.alerts import review_sample
from evalcore.signals.logs import Log
from evalcore.store import Store
from evalcore.store.labels import ANSWER_ITEM, judge_key

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
    judge: JudgeConfig | None = None,
    api_key: str | None = None,
    transport: Any = None,
) -> int:
    """A labeling session on a uniform sample of ``n`` answered questions of ``log``; its id.
    ``texts`` (chunk id -> text) fills in chunk texts the log does not carry. With ``judge``, the
    judge judges the sample first (a revision attached to the log) and its answer-level verdicts
    (:func:`answer_verdict`) are what people's labels measure; without, people label alone."""
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
    items: list[dict[str, Any]] = [
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
    which, key = UNJUDGED, UNJUDGED
    if judge is not None:
        judged = [
            Item(it["qid"], it["payload"]["question"], None, it["payload"]["answer"],
                 [(c["chunk_id"], c["text"]) for c in it["payload"]["chunks"]])
            for it in items
        ]  # fmt: skip
        report = judge_into_revision(
            judged,
            log_run_id(log),
            log.sha256,
            store,
            judge,
            api_key=api_key,
            transport=transport,
            batch=False,
        )
        by_qid = {v.qid: v for v in report.verdicts}
        for it in items:
            v = by_qid.get(it["qid"])
            if v is not None and v.ok and v.output is not None:
                it["judge_label"] = answer_verdict(v.output, it["payload"]["chunks"])
        which, key = str(report.revision_id), judge_key(judge.judge)
    session = {
        "name": name,
        "run_id": log_run_id(log),
        "results_sha256": log.sha256,
        "judge": which,
        "judge_key": key,
        "target": "production",
        "sampling": "uniform",
        "seed": seed,
        "labels_per_item": labels_per_item,
        "rubric": RUBRICS["production"],
        "rubric_version": RUBRIC_VERSION,
    }
    return store.create_session(session, items)


def answer_verdict(output: dict[str, Any], chunks: list[dict[str, str]]) -> str | None:
    """A whole answer's faithfulness from the judge's claims, as scored: CONTRADICTED if a claim is;
    else NOT_SUPPORTED if a claim is not supported — or is "SUPPORTED" with a quote found in none of
    the chunks the answer was given (the quotes module's rule, as faithfulness); else SUPPORTED. None:
    no factual claim to judge."""
    claims = output.get("claims") or []
    if not claims:
        return None
    context = [c["text"] for c in chunks]
    verdicts = [scored_verdict(str(c.get("verdict")), c.get("quote"), context) for c in claims]
    if "CONTRADICTED" in verdicts:
        return "CONTRADICTED"
    return "NOT_SUPPORTED" if "NOT_SUPPORTED" in verdicts else "SUPPORTED"
