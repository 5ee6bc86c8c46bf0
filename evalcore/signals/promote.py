"""Closing the loop (the guide: "every confirmed failure becomes a test case"): a logged question,
labeled by a person, proposed as a real test case — with personal data redacted first.

The person sees the question as redacted (:func:`evalcore.signals.pii.redact`), may edit it, labels
the relevant chunks (or marks it unanswerable), writes the reference answer and the tags. A question
or reference answer in which personal data is still found is refused. The case keeps the
conversation id as a tag; it waits, accepted, in the store's review queue until a new test-set
version is written (:func:`evalcore.testset.review.write_accepted`).
"""

from __future__ import annotations

import re
from typing import Any

from evalcore.signals.pii import find
from evalcore.store import Store


def case_for(
    conversation_id: str,
    *,
    question: str,
    relevant: dict[str, int] | None,
    reference_answer: str | None,
    type_: str,
    topic: str,
    extra_tags: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The test case a promotion proposes. ``relevant`` None or empty: unanswerable."""
    qid = "prod-" + re.sub(r"[^A-Za-z0-9._-]+", "-", conversation_id).strip("-")
    rel = {c: int(g) for c, g in (relevant or {}).items() if int(g) >= 1}
    return {
        "qid": qid,
        "question": question.strip(),
        "relevant": rel,
        "reference_answer": (reference_answer or "").strip() or None,
        "tags": {
            "type": type_.strip() or "lookup",
            "topic": topic.strip() or "unknown",
            "source": "real",
            "conversation_id": conversation_id,
            **(extra_tags or {}),
        },
        "split": "dev",
    }


def personal_data_left(case: dict[str, Any]) -> list[str]:
    """What personal data the case's question or reference answer still holds, in words."""
    out = []
    for field in ("question", "reference_answer"):
        for f in find(case.get(field) or ""):
            article = "an" if f.kind[0] in "aeiou" else "a"
            out.append(f"{field.replace('_', ' ')}: {article} {f.kind} ({f.text!r})")
    return out


def promote(store: Store, testset_sha256: str, case: dict[str, Any], *, by: str, original: str) -> int:
    """Queue the case as accepted (a person made it); its candidate id. Refuses personal data."""
    left = personal_data_left(case)
    if left:
        msg = "personal data is still in the case — redact it first: " + "; ".join(left)
        raise ValueError(msg)
    if not by.strip():
        msg = "a promotion needs the name of the person who labeled it"
        raise ValueError(msg)
    conv = case["tags"]["conversation_id"]
    for earlier in store.candidates(testset=testset_sha256, origin="production"):
        if earlier.ref == conv and earlier.status != "discarded":
            msg = (
                f"conversation {conv} is already {earlier.status} for this test set (candidate {earlier.id})"
            )
            raise ValueError(msg)
    cid = store.add_candidate(
        testset_sha256,
        "production",
        case["tags"]["conversation_id"],
        case,
        detail={"original_question_redacted": original != case["question"]},
        accepted_by=by.strip(),
    )
    return cid
