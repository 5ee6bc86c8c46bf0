"""Generate sample_runs/: Harbor Vault's docs, a ~150-question test set, four runs and a production log.

Deterministic (seeded, no clock), so the committed files are reproducible:

    python scripts/make_sample_runs.py            # writes sample_runs/ (refuses to overwrite runs)
    python scripts/make_sample_runs.py --force    # regenerate from scratch

The retrievers are real, if small: BM25 over the chunks; an "embedding" retriever that also knows
the paraphrases people use (simulating semantic match); their reciprocal-rank fusion; and a reranker.
Answers and judge claims are simulated from what reached the context, with the failure modes the
dashboard exists to show: a missing chunk (retrieval), an answer that goes beyond its chunks
(generation), and an unanswerable question that stops being refused (abstention).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import sys
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from make_sample_log import write_log
from sample_corpus import (
    BM25,
    OUT,
    Case,
    Chunk,
    build_cases,
    build_docs,
    doc_text,
    first_sentence_with,
    retrieve,
)

import sample_kb as kb
from evalcore.runs.writer import RunWriter


def answer(case: Case, context: list[Chunk], prompt: str, rnd: random.Random) -> dict[str, object]:
    ctx_ids = {c.chunk_id for c in context}
    by_id = {c.chunk_id: c for c in context}
    have = [(cid, s) for cid, s in case.facts if cid in ctx_ids]
    helpful = prompt == "v2"  # v2: "always try to give a useful answer" — it guesses more and pads
    if not case.relevant:
        refuse_p = 0.45 if helpful else 0.85
        if rnd.random() < refuse_p:
            return {
                "answer": "I don't know — the documentation I have does not cover this.",
                "abstained": True,
                "judge": {"claims": [], "relevance": 0.5},
            }
        guess = f"Yes, {kb.PRODUCT} supports this; it is configured in the web console under Settings."
        top_chunk = context[0] if context else None
        return {
            "answer": guess,
            "abstained": False,
            "judge": {
                "claims": [
                    {"claim": f"{kb.PRODUCT} supports this.", "verdict": "NOT_SUPPORTED", "quote": None},
                    {
                        "claim": "It is configured in the web console under Settings.",
                        "verdict": "NOT_SUPPORTED",
                        "quote": None,
                        "chunk_id": top_chunk.chunk_id if top_chunk else None,
                    },
                ],
                "relevance": 0.7,
            },
        }
    if not have:
        if rnd.random() < (0.25 if helpful else 0.55):
            return {
                "answer": "I don't know — the documentation I have does not cover this.",
                "abstained": True,
                "judge": {"claims": [], "correctness": "incorrect", "relevance": 0.3},
            }
        wrong = (
            re.sub(r"\d+", lambda m: str(int(m.group()) * 2 + 1), case.reference or "")
            or "It depends on the plan."
        )
        if wrong == case.reference:
            wrong = "It depends on the plan and can be changed in the web console."
        return {
            "answer": wrong,
            "abstained": False,
            "judge": {
                "claims": [{"claim": wrong, "verdict": "NOT_SUPPORTED", "quote": None}],
                "correctness": "incorrect",
                "relevance": 0.8,
            },
        }
    claims: list[dict[str, str | None]] = []
    for cid, needle in have:
        sent = first_sentence_with(by_id[cid].text, needle.split(" ")[0] if len(needle) > 60 else needle)
        claims.append(
            {
                "claim": needle[0].upper() + needle[1:] + ".",
                "verdict": "SUPPORTED",
                "quote": sent,
                "chunk_id": cid,
            }
        )
    text = case.reference or ""
    partial = len(have) < len(case.facts)
    if partial:
        text = text + " (The other half of the question could not be checked.)"
    if helpful and rnd.random() < 0.4:
        pad = rnd.choice(
            [
                "This can also be changed per device with the hv CLI.",
                "Most customers leave this at its default.",
                "The change takes effect immediately for all devices.",
            ]
        )
        text = f"{text} {pad}"
        claims.append({"claim": pad, "verdict": "NOT_SUPPORTED", "quote": None})
    if rnd.random() < 0.03:
        # Judge quoting text that is not in the context: must not count as supported.
        claims[0] = {**claims[0], "quote": (claims[0]["quote"] or "").replace(" ", " really ", 1)}
    correctness = "partially_correct" if partial else "correct"
    if random.Random(f"slip|{case.qid}|{prompt}").random() < 0.05:
        # The generator misreads a chunk it had: retrieval was fine, the answer is not.
        slip = re.sub(r"\d+", lambda m: str(int(m.group()) + 7), text)
        slip = slip if slip != text else "Only administrators can do this, from the web console."
        text, correctness = slip, "incorrect"
        claims = [{"claim": slip, "verdict": "NOT_SUPPORTED", "quote": None}]
    relevance = round(0.75 + 0.25 * random.Random(f"rel|{text}").random(), 2)
    return {
        "answer": text,
        "abstained": False,
        "judge": {"claims": claims, "correctness": correctness, "relevance": relevance},
    }


SYSTEMS = [
    ("2026-10-05-bm25", "BM25 baseline", "bm25", "v1", datetime(2026, 10, 5, 9, 30, tzinfo=UTC)),
    (
        "2026-10-19-hybrid",
        "Hybrid (BM25 + embeddings, RRF)",
        "hybrid",
        "v1",
        datetime(2026, 10, 19, 14, 5, tzinfo=UTC),
    ),
    (
        "2026-11-02-hybrid-rerank",
        "Hybrid + reranker",
        "rerank",
        "v1",
        datetime(2026, 11, 2, 11, 0, tzinfo=UTC),
    ),
    (
        "2026-11-16-rerank-prompt-v2",
        "Hybrid + reranker, prompt v2",
        "rerank",
        "v2",
        datetime(2026, 11, 16, 16, 45, tzinfo=UTC),
    ),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--force", action="store_true", help="delete and regenerate the output folder")
    args = ap.parse_args()
    out: Path = args.out
    if out.exists() and any(out.iterdir()):
        if not args.force:
            sys.exit(f"{out} is not empty; pass --force to regenerate it")
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)

    rnd = random.Random(20261202)
    docs = build_docs()
    chunks = [c for d in docs for c in d.chunks]
    cases = build_cases(docs, rnd)

    (out / "corpus").mkdir()
    with (out / "corpus" / "documents.jsonl").open("w") as fh:
        for d in docs:
            fh.write(
                json.dumps({"doc_id": d.doc_id, "title": d.title, "topic": d.topic, "text": doc_text(d)})
                + "\n"
            )
    texts = {d.doc_id: doc_text(d) for d in docs}
    with (out / "testset.jsonl").open("w") as fh:
        for c in sorted(cases, key=lambda c: c.qid):
            evidence = []
            for cid, needle in c.facts:
                ch = next(x for x in chunks if x.chunk_id == cid)
                i = texts[ch.doc_id].find(needle)
                if i >= 0:
                    evidence.append(
                        {
                            "doc_id": ch.doc_id,
                            "start": i,
                            "end": i + len(needle),
                            "quote": needle,
                            "grade": c.relevant[cid],
                        }
                    )
            rec = {
                "qid": c.qid,
                "question": c.question,
                "relevant": c.relevant,
                "evidence": evidence,
                "reference_answer": c.reference if c.relevant else None,
                "tags": {"type": c.type, "topic": c.topic, "source": c.source, **c.extra_tags},
                "split": c.split,
                "must_pass": c.must_pass,
            }
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")

    bm25 = BM25(chunks)
    for run_id, label, system, prompt, created in SYSTEMS:
        grnd = random.Random(f"gen|{prompt}")
        with RunWriter(
            out / run_id,
            testset=out / "testset.jsonl",
            label=label,
            created=created,
            system={
                "chunker": "paragraph",
                "retriever": system,
                "embedding_model": None if system == "bm25" else "hv-embed-small-v2",
                "fusion": "rrf k=60" if system != "bm25" else None,
                "reranker": "hv-rerank-base" if system == "rerank" else None,
                "top_k_context": 5,
                "prompt_version": prompt,
                "generator_model": "claude-sonnet-4-5",
            },
            judge={"model": "claude-opus-4-1", "prompt_version": "faithfulness-v3"},
        ) as w:
            for case in sorted(cases, key=lambda c: c.qid):
                ranked = retrieve(system, case, chunks, bm25, rnd)
                context = [c for c, _ in ranked[:5]]
                gen = answer(case, context, prompt, grnd)
                lat = 400 + 900 * grnd.random() + (250 if system == "rerank" else 0)
                w.add(
                    case.qid,
                    retrieved=[
                        {"chunk_id": c.chunk_id, "doc_id": c.doc_id, "score": s, "text": c.text}
                        for c, s in ranked
                    ],
                    latency_ms=round(lat, 1),
                    tokens={"input": 900 + 40 * len(context), "output": 40 + len(str(gen["answer"])) // 4},
                    cost_usd=round(0.003 + 0.00001 * len(str(gen["answer"])), 5),
                    **gen,
                )

    n_log = write_log(out / "logs" / "production.jsonl")
    print(
        f"wrote {len(docs)} documents, {len(chunks)} chunks, {len(cases)} questions, {len(SYSTEMS)} runs "
        f"and a production log of {n_log} lines to {out}"
    )


if __name__ == "__main__":
    main()
