"""Labeling sessions: what people label, how it is sampled, and what the sample size buys.

A session is made from a run as one judge revision saw it (``recorded``: the run file's own
verdicts; or a revision of the store). Its items are either **claims** (faithfulness: is the claim
stated in the chunks?) or **answers** (correctness against the reference). Each item keeps what the
labeler is shown — the question, the answer, the chunks the generator was given and, for a claim,
where its quote is — and, apart, the judge's verdict, which the labeler sees only after labeling.

Sampling, with each item's weight (the inverse of its chance of being drawn), so that estimates from
an oversampled session stay unbiased:

* ``uniform`` — every item equally likely;
* ``stratified:TAG`` — in proportion to the questions' TAG values (at least one per value);
* ``low-scores`` — half the sample from the items the judge scored low (a claim it did not find
  supported; an answer below fully correct), where the rare and costly errors are, the rest from the
  others.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any

import polars as pl

from evalcore.metrics.generation import context_chunks
from evalcore.metrics.quotes import check_quotes
from evalcore.runs.load import Run
from evalcore.store import Store
from evalcore.store.labels import ANSWER_ITEM, judge_key

CLAIM_LABELS = ("SUPPORTED", "NOT_SUPPORTED", "CONTRADICTED", "unsure")
ANSWER_LABELS = ("correct", "partially_correct", "incorrect", "unsure")
# "production": a whole logged answer, judged for faithfulness (there is no reference answer).
TARGETS = {"claims": CLAIM_LABELS, "answers": ANSWER_LABELS, "production": CLAIM_LABELS}

RUBRIC_VERSION = "rubric-v1"
RUBRICS = {
    "claims": (
        "Read the claim, then the chunks the system was given. SUPPORTED: one chunk states the claim "
        "(the highlighted quote, if any, is where the judge says it is — check it). NOT_SUPPORTED: no "
        "chunk states it, even if it is true in the world. CONTRADICTED: a chunk states the opposite. "
        "unsure: you cannot tell; say why in the rationale."
    ),
    "answers": (
        "Compare the answer with the reference answer. correct: it says what the reference says "
        "(wording may differ). partially_correct: part of it is right, part missing or wrong. "
        "incorrect: it is wrong or answers something else. unsure: you cannot tell; say why."
    ),
    "production": (
        "Read the answer, then the chunks the system retrieved. SUPPORTED: everything the answer states "
        "is stated in a chunk. NOT_SUPPORTED: some statement is in no chunk, even if it is true in the "
        "world. CONTRADICTED: a chunk states the opposite of something the answer says. unsure: you "
        "cannot tell; say why in the rationale."
    ),
}


@dataclass(frozen=True)
class SessionSpec:
    name: str
    target: str = "claims"  # "claims" or "answers"
    n: int = 150
    sampling: str = "uniform"  # "uniform", "stratified:TAG" or "low-scores"
    labels_per_item: int = 2
    seed: int = 0
    rubric: str | None = None  # the target's default rubric when None


def candidates(run: Run, target: str) -> list[dict[str, Any]]:
    """Every item a session of ``target`` could hold, from ``run`` as its judge saw it: ``qid,
    claim_idx, payload, judge_label, low`` (``low``: the judge scored it low)."""
    if target not in ("claims", "answers"):  # "production" sessions are made from logs (signals.review)
        msg = f"target must be 'claims' or 'answers', not {target!r}"
        raise ValueError(msg)
    cases = {
        r["qid"]: r
        for r in run.testset.cases.select("qid", "question", "reference_answer").iter_rows(named=True)
    }
    answers = dict(run.results.select("qid", "answer").iter_rows())
    ctx = context_chunks(run.retrieved, run.manifest.context_k)
    chunks: dict[str, list[dict[str, str]]] = {}
    for qid, cid, text in ctx.sort("qid", "rank").select("qid", "chunk_id", "text").iter_rows():
        chunks.setdefault(qid, []).append({"chunk_id": cid, "text": text or ""})

    def base(qid: str) -> dict[str, Any]:
        case = cases.get(qid, {})
        return {
            "question": case.get("question"),
            "reference": case.get("reference_answer"),
            "answer": answers.get(qid),
            "chunks": chunks.get(qid, []),
        }

    out: list[dict[str, Any]] = []
    if target == "answers":
        judged = run.results.filter(pl.col("correctness").is_not_null()).select("qid", "correctness")
        for qid, verdict in judged.iter_rows():
            out.append(
                {
                    "qid": qid,
                    "claim_idx": ANSWER_ITEM,
                    "payload": base(qid),
                    "judge_label": verdict,
                    "low": verdict != "correct",
                }
            )
        return out
    checked = check_quotes(run.claims, ctx)
    for row in checked.sort("qid", "claim_idx").iter_rows(named=True):
        # The judge's verdict as it is scored: SUPPORTED only when its quote is in a chunk the
        # generator was given (check_quotes, as faithfulness).
        verdict = row["verdict"]
        scored = "NOT_SUPPORTED" if verdict == "SUPPORTED" and not row["quote_found"] else verdict
        payload = base(row["qid"]) | {
            "claim": row["claim"],
            "quote": row["quote"],
            "chunk_id": row["chunk_id"],
        }
        out.append(
            {"qid": row["qid"], "claim_idx": int(row["claim_idx"]), "payload": payload, "judge_label": scored, "low": scored != "SUPPORTED"}
        )  # fmt: skip
    return out


def sample(
    cands: list[dict[str, Any]], spec: SessionSpec, tags: pl.DataFrame | None = None
) -> list[dict[str, Any]]:
    """``spec.n`` items (all, if fewer), each with its ``stratum`` and ``weight``."""
    rng = random.Random(spec.seed)
    if spec.sampling == "uniform":
        strata = {"all": cands}
    elif spec.sampling == "low-scores":
        strata = {
            "judge low": [c for c in cands if c["low"]],
            "judge high": [c for c in cands if not c["low"]],
        }
    elif spec.sampling.startswith("stratified:"):
        tag = spec.sampling.split(":", 1)[1]
        value: dict[str, str] = {}
        if tags is not None:
            for qid, v in tags.filter(pl.col("tag") == tag).select("qid", "value").iter_rows():
                value.setdefault(qid, v)
        if not value:
            msg = f"no question has the tag {tag!r}; stratify by a tag of this test set"
            raise ValueError(msg)
        strata = {}
        for c in cands:
            strata.setdefault(f"{tag}={value.get(c['qid'], '(none)')}", []).append(c)
    else:
        msg = f"sampling must be 'uniform', 'stratified:TAG' or 'low-scores', not {spec.sampling!r}"
        raise ValueError(msg)
    strata = {k: v for k, v in strata.items() if v}
    total = sum(len(v) for v in strata.values())
    n = min(spec.n, total)
    alloc = _allocate(strata, n, spec.sampling == "low-scores")
    out = []
    for name, items in strata.items():
        k = alloc[name]
        if k == 0:
            continue
        weight = len(items) / k
        for c in rng.sample(items, k):
            out.append({**c, "stratum": name, "weight": weight})
    return sorted(out, key=lambda c: (c["qid"], c["claim_idx"]))


def _allocate(strata: dict[str, list[Any]], n: int, half_low: bool) -> dict[str, int]:
    sizes = {k: len(v) for k, v in strata.items()}
    if half_low and "judge low" in sizes:
        low = min(sizes["judge low"], max(1, n // 2))
        high = min(sizes.get("judge high", 0), n - low)
        low = min(sizes["judge low"], n - high)  # the rest back to low when high runs out
        return {"judge low": low, "judge high": high}
    total = sum(sizes.values())
    alloc = {k: max(1, math.floor(n * s / total)) if n >= len(sizes) else 0 for k, s in sizes.items()}
    # Hand out what rounding left, largest strata first; never more than a stratum holds.
    left = n - sum(alloc.values())
    for k in sorted(sizes, key=lambda k: -sizes[k]) * (abs(left) + 1):
        if left == 0:
            break
        if left > 0 and alloc[k] < sizes[k]:
            alloc[k] += 1
            left -= 1
        elif left < 0 and alloc[k] > 1:
            alloc[k] -= 1
            left += 1
    return {k: min(v, sizes[k]) for k, v in alloc.items()}


def ci_half_width(n: int, p: float = 0.85) -> float:
    """The 95% CI half-width of an agreement rate near ``p`` measured on ``n`` items (normal
    approximation; answers with several claims make the real one somewhat wider).

    >>> round(ci_half_width(150), 3)
    0.057"""
    return 1.96 * math.sqrt(p * (1 - p) / n) if n > 0 else float("inf")


def preview(cands: list[dict[str, Any]], spec: SessionSpec) -> str:
    """What a session of this size buys, in words, before it is created."""
    n = min(spec.n, len(cands))
    low = sum(1 for c in cands if c["low"])
    if spec.sampling == "low-scores":
        low_n = min(low, max(1, n // 2))
    else:
        low_n = round(n * low / len(cands)) if cands else 0
    what = (
        "claims the judge did not find supported"
        if spec.target == "claims"
        else "answers the judge scored below correct"
    )
    text = (
        f"{n} of {len(cands)} {spec.target}: agreement measured to about ±{ci_half_width(n):.2f} (95% CI); "
        f"about {low_n} {what}, so the judge's recall on them to about ±{ci_half_width(low_n, 0.7):.2f}"
    )
    if low_n < 30:
        text += " — too few for a useful recall estimate: sample 'low-scores' or label more"
    return text


def create(store: Store, run: Run, judge: str, spec: SessionSpec) -> int:
    """A new session in the store, from ``run`` as judge revision ``judge`` saw it; its id."""
    from evalcore.judge.revision import LATEST, RECORDED, judged_by

    if spec.labels_per_item < 1:
        msg = "labels per item must be at least 1"
        raise ValueError(msg)
    if store.find_session(spec.name) is not None:
        msg = f"a session named {spec.name!r} exists; choose another name"
        raise ValueError(msg)
    seen = judged_by(store, run, judge)
    cands = candidates(seen, spec.target)
    if not cands:
        what = "judge claims" if spec.target == "claims" else "judge correctness verdicts"
        msg = f"{run.run_id} under judge {judge!r} has no {what} to label"
        raise ValueError(msg)
    items = sample(cands, spec, run.testset.tags)
    session = {
        "name": spec.name,
        "run_id": run.run_id,
        "results_sha256": run.results_sha256(),
        "judge_key": judge_key(seen.judge),
        "judge": judge
        if judge == RECORDED
        else str(store.revisions(run.run_id)[-1].id if judge == LATEST else judge),
        "target": spec.target,
        "sampling": spec.sampling,
        "seed": spec.seed,
        "labels_per_item": spec.labels_per_item,
        "rubric": spec.rubric or RUBRICS[spec.target],
        "rubric_version": RUBRIC_VERSION if spec.rubric is None else "custom",
    }
    return store.create_session(session, items)


def order_for(labeler: str, item_ids: list[int], session_id: int) -> list[int]:
    """The labeler's own order of the items: shuffled per labeler (and the same every time they
    come back), so that two labelers do not meet the same items in the same order."""
    rng = random.Random(f"{session_id}:{labeler}")
    out = list(item_ids)
    rng.shuffle(out)
    return out


def next_item(store: Store, session_id: int, labeler: str) -> tuple[int | None, int, int]:
    """The labeler's next item to label (None: nothing left for them), and their progress: items
    they labeled, and items they could label in all (theirs plus those with a free slot)."""
    ids = [i.id for i in store.items(session_id)]
    mine = store.held_by(session_id, labeler)
    full = store.full_items(session_id)
    open_ = [i for i in order_for(labeler, ids, session_id) if i not in mine and i not in full]
    return (open_[0] if open_ else None), len(mine), len(mine) + len(open_)
