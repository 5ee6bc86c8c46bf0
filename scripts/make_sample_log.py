"""Generate sample_runs/logs/production.jsonl: four weeks of Harbor Vault's production traffic.

Deterministic (seeded, no clock):

    python scripts/make_sample_log.py            # refuses to overwrite an existing log
    python scripts/make_sample_log.py --force

``make_sample_runs.py`` writes it too, with the rest of sample_runs/.

Questions are the sample test set's, asked in users' own ways (some with an e-mail address, a
phone number or a name in them, as real traffic has), retrieved by the sample's hybrid + reranker
retriever over the same documentation. Feedback and behaviour follow the answers.

**The planted incident**: on 2026-11-19 and 2026-11-20 an ingestion job dropped the billing,
backups and restore documentation from the index. Their questions retrieve only unrelated chunks with low
scores, the system declines most of them, and the no-answer rate jumps — what the Signals page
must show. It is fixed on 2026-11-21.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sample_corpus import BM25, OUT, build_cases, build_docs, retrieve, tokens

START = datetime(2026, 11, 1, tzinfo=UTC)
DAYS = 28
INCIDENT = {datetime(2026, 11, 19, tzinfo=UTC).date(), datetime(2026, 11, 20, tzinfo=UTC).date()}
DROPPED = ("billing/", "restore/", "settings/restore", "backups/", "settings/scheduling")
REFUSAL = "I don't know — the documentation I have does not cover this."

PII_WRAPS = [
    "{q} My email is {first}.{last}@example.com if you need it.",
    "{q} You can call me on +1 415 555 {n4}.",
    "Hi, this is {First} {Last}. {q}",
    "{q} Our account number is 4{n7}.",
    "{q} Thanks, {First}",
]
FIRST = ["ada", "grace", "alan", "edsger", "barbara", "ken", "margaret", "linus"]
LAST = ["lovelace", "hopper", "turing", "dijkstra", "liskov", "thompson", "hamilton", "torvalds"]
CASUAL = ["{q}", "{q}", "{q}", "hey {lq}", "{q} thanks", "quick question: {lq}", "{lq}??"]
TYPOS = ["harborvualt {lq}", "{q} (hrbr-vlt agent)"]


def user_words(q: str, rnd: random.Random) -> str:
    lq = q[0].lower() + q[1:]
    r = rnd.random()
    if r < 0.06:
        first, last = rnd.choice(FIRST), rnd.choice(LAST)
        return rnd.choice(PII_WRAPS).format(
            q=q, first=first, last=last, First=first.title(), Last=last.title(),
            n4=f"{rnd.randrange(10000):04d}", n7=f"{rnd.randrange(10**7):07d}",
        )  # fmt: skip
    if r < 0.09:
        return rnd.choice(TYPOS).format(q=q, lq=lq)
    return rnd.choice(CASUAL).format(q=q, lq=lq)


def write_log(out: Path) -> int:
    """Write the log to ``out``; the number of lines."""
    rnd = random.Random(20261204)
    docs = build_docs()
    chunks = [c for d in docs for c in d.chunks]
    cases = build_cases(docs, random.Random(20261202))
    full = BM25(chunks)
    kept = [c for c in chunks if not c.doc_id.startswith(DROPPED)]
    partial = BM25(kept)
    lines = []
    conv = 0
    for day in range(DAYS):
        date = START + timedelta(days=day)
        incident = date.date() in INCIDENT
        weekend = date.weekday() >= 5
        for _ in range(rnd.randint(60, 80) if weekend else rnd.randint(120, 150)):
            case = rnd.choice(cases)
            conv += 1
            when = date + timedelta(seconds=rnd.randrange(7 * 3600, 22 * 3600))
            index, bm25 = (kept, partial) if incident else (chunks, full)
            ranked = retrieve("rerank", case, index, bm25, rnd)[:5]
            question = user_words(case.question, rnd)
            keyword_hits = sum(1 for s in bm25.scores(tokens(question)) if s > 0)
            if question.startswith("harborvualt") or "hrbr-vlt" in question:
                keyword_hits = 0 if rnd.random() < 0.7 else keyword_hits
            found = any(case.relevant.get(c.chunk_id, 0) > 0 for c, _ in ranked)
            if not case.relevant:
                abstain = rnd.random() < 0.8
            elif not found:
                abstain = rnd.random() < 0.85
            else:
                abstain = rnd.random() < 0.04
            answer = REFUSAL if abstain else (case.reference or "It is configured under Settings.")
            thumb = None
            r = rnd.random()
            if abstain and case.relevant:
                thumb = "down" if r < 0.35 else None
            elif r < 0.15:
                thumb = "up"
            elif r < 0.19:
                thumb = "down"
            rec = {
                "conversation_id": f"c-{conv:06d}",
                "time": when.isoformat().replace("+00:00", "Z"),
                "question": question,
                "retrieved": [{"chunk_id": c.chunk_id, "score": s, "doc_id": c.doc_id} for c, s in ranked],
                "answer": answer,
                "keyword_hits": keyword_hits,
                "behaviour": {
                    "rephrased": rnd.random() < (0.3 if abstain else 0.05),
                    "opened_source": (not abstain) and rnd.random() < 0.25,
                    "copied": (not abstain) and rnd.random() < 0.12,
                    "asked_for_person": rnd.random() < (0.2 if abstain else 0.02),
                },
            }
            if thumb:
                rec["feedback"] = {
                    "thumb": thumb,
                    **({"reason": "didn't answer my question"} if thumb == "down" and abstain else {}),
                }
            lines.append(rec)
    lines.sort(key=lambda r: str(r["time"]))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines))
    return len(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=OUT / "logs" / "production.jsonl")
    ap.add_argument("--force", action="store_true")
    args = ap.parse_args()
    if args.out.exists() and not args.force:
        sys.exit(f"{args.out} exists; pass --force to regenerate it")
    print(f"wrote {args.out}: {write_log(args.out)} lines")


if __name__ == "__main__":
    main()
