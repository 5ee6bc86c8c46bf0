"""A session's agreement, as a team reads it: the statistics (:mod:`.agreement`) on the session's
labels against the session's judge or any other judge revision, per tag if asked, the
disagreements, and a plain verdict to act on.

Against another revision, a claim is matched by its text (case and spacing aside) to that
revision's claims of the same answer, and that revision's verdict is scored as faithfulness scores
it: SUPPORTED only when its quote is in the chunk the labeler saw. Claims it does not make are
counted, not guessed.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass
from typing import Any

from evalcore.calibration.agreement import UNSURE, Agreement, agreement, reference_label
from evalcore.calibration.sessions import TARGETS
from evalcore.metrics.quotes import claim_key, scored_verdict
from evalcore.store import Store
from evalcore.store.labels import ANSWER_ITEM, ItemRow, SessionRow
from evalcore.words import count

ALPHA_OK = 0.667  # Krippendorff's rule of thumb: below it, conclusions from the labels are tentative
MIN_UNSUPPORTED = 30  # unsupported labels for a recall estimate worth reading


def judge_labels(
    store: Store, session: SessionRow, items: list[ItemRow], judge: str | None
) -> list[str | None]:
    """Each item's judge verdict: the session's own (``judge`` None or the session's), or judge
    revision ``judge``'s (None for an item it has no verdict on)."""
    if judge is None or judge == session.judge:
        return [i.judge_label for i in items]
    if not judge.isdigit() or store.revision(int(judge)) is None:
        msg = f"no judge revision {judge!r} in {store.path}"
        raise ValueError(msg)
    outputs = {v.qid: v.output for v in store.verdicts(int(judge)) if v.ok and v.output}
    out: list[str | None] = []
    for item in items:
        o = outputs.get(item.qid)
        if o is None:
            out.append(None)
        elif item.claim_idx == ANSWER_ITEM:
            out.append(o["correctness"]["verdict"])
        else:
            claim = next(
                (c for c in o["claims"] if claim_key(c["claim"]) == claim_key(item.payload.get("claim"))),
                None,
            )
            if claim is None:
                out.append(None)
                continue
            # As faithfulness scores it: the quote in any chunk the generator was given.
            context = [c["text"] for c in item.payload.get("chunks", [])]
            out.append(scored_verdict(claim["verdict"], claim.get("quote"), context))
    return out


@dataclass
class SessionReport:
    session: SessionRow
    judge: str  # whose verdicts: "recorded" or a revision id
    overall: Agreement
    by: dict[str, Agreement]  # tag value -> agreement (when asked for)
    labelers: dict[str, int]  # labeler -> items labeled
    disagreements: list[dict[str, Any]]
    unmatched: int  # items the judge revision has no verdict for

    def verdict(self) -> str:
        """What the team can act on, in a sentence or three."""
        a = self.overall
        parts = []
        if a.human_alpha is not None and not math.isnan(a.human_alpha.value):
            if a.human_alpha.value < ALPHA_OK:
                parts.append(
                    f"labelers disagree (α {a.human_alpha}): fix the rubric before tuning the judge — "
                    "look at the items they split on"
                )
            else:
                parts.append(f"labelers agree (α {a.human_alpha})")
        else:
            parts.append("no item has two labels yet: people's agreement with each other is unmeasured")
        if a.items == 0:
            parts.append("no labeled item to compare the judge with yet")
            return "; ".join(parts) + "."
        judge = f"the judge agrees with them (AC1 {a.ac1}, {a.percent.value:.0%} of {a.items} items)"
        if a.ac1.value < 0.6:
            judge = (
                f"the judge agrees with them poorly (AC1 {a.ac1}, {a.percent.value:.0%} of {a.items} items)"
            )
        parts.append(judge)
        if self.session.target == "claims":
            rec = a.recall_unsupported
            if a.unsupported_labels < MIN_UNSUPPORTED:
                parts.append(
                    f"too few unsupported claims in the labels ({a.unsupported_labels}) for a useful "
                    f"recall estimate: label about {MIN_UNSUPPORTED - a.unsupported_labels} more "
                    "(a session sampled 'low-scores' finds them faster)"
                )
            elif not math.isnan(rec.value):
                parts.append(f"it catches {rec.value:.0%} of unsupported claims (recall {rec})")
        return "; ".join(parts) + "."


def session_report(
    store: Store,
    session: SessionRow,
    *,
    judge: str | None = None,
    by: str | None = None,
    tags: dict[str, dict[str, str]] | None = None,
    resamples: int = 2000,
) -> SessionReport:
    """The agreement of session ``session``'s labels with judge ``judge`` (the session's own by
    default), overall and per value of tag ``by`` (``tags``: qid -> tag -> value)."""
    items = store.items(session.id)
    labels = store.labels(session.id)
    per_item: dict[int, dict[str, str]] = {}
    rationale: dict[int, dict[str, str | None]] = {}
    for lb in labels:
        per_item.setdefault(lb.item_id, {})[lb.labeler] = lb.label
        rationale.setdefault(lb.item_id, {})[lb.labeler] = lb.rationale
    verdicts = judge_labels(store, session, items, judge)
    cats = [c for c in TARGETS[session.target] if c != UNSURE]

    def run(idx: list[int]) -> Agreement:
        return agreement(
            [items[i].qid for i in idx],
            [verdicts[i] for i in idx],
            [per_item.get(items[i].id, {}) for i in idx],
            cats,
            weights=[items[i].weight for i in idx],
            resamples=resamples,
        )

    every = list(range(len(items)))
    slices: dict[str, Agreement] = {}
    if by:
        groups: dict[str, list[int]] = {}
        for i in every:
            groups.setdefault((tags or {}).get(items[i].qid, {}).get(by, "(none)"), []).append(i)
        slices = {f"{by}={v}": run(idx) for v, idx in sorted(groups.items())}
    counts: dict[str, int] = {}
    for lb in labels:
        counts[lb.labeler] = counts.get(lb.labeler, 0) + 1
    disagreements = []
    for i in every:
        people = per_item.get(items[i].id, {})
        ref = reference_label(list(people.values()))
        sure = {v for v in people.values() if v != UNSURE}
        if (ref is not None and verdicts[i] is not None and ref != verdicts[i]) or len(sure) > 1:
            disagreements.append(
                {
                    "item": items[i].id,
                    "qid": items[i].qid,
                    "claim": items[i].payload.get("claim") if items[i].claim_idx != ANSWER_ITEM else None,
                    "judge": verdicts[i],
                    "people": people,
                    "rationale": {k: v for k, v in rationale.get(items[i].id, {}).items() if v},
                    "why": "people split" if len(sure) > 1 else "judge differs",
                }
            )
    return SessionReport(
        session=session,
        judge=judge or session.judge,
        overall=run(every),
        by=slices,
        labelers=counts,
        disagreements=disagreements,
        unmatched=sum(1 for v in verdicts if v is None),
    )


# ---- export and import (teams that label elsewhere)

EXPORT_FIELDS = (
    "session",
    "item",
    "qid",
    "claim_idx",
    "claim",
    "labeler",
    "version",
    "label",
    "rationale",
    "created",
    "source",
)


def export_labels(store: Store, session: SessionRow, fmt: str = "csv", *, history: bool = False) -> str:
    items = {i.id: i for i in store.items(session.id)}
    rows = []
    for lb in store.labels(session.id, history=history):
        it = items[lb.item_id]
        rows.append(
            {
                "session": session.name,
                "item": lb.item_id,
                "qid": it.qid,
                "claim_idx": it.claim_idx,
                "claim": it.payload.get("claim"),
                "labeler": lb.labeler,
                "version": lb.version,
                "label": lb.label,
                "rationale": lb.rationale,
                "created": lb.created,
                "source": lb.source,
            }
        )
    if fmt == "jsonl":
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=EXPORT_FIELDS)
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def import_labels(
    store: Store, session: SessionRow, text: str, fmt: str, where: str
) -> tuple[int, list[str]]:
    """Labels made elsewhere (``labeler, qid, claim_idx, label`` and optionally ``rationale``; CSV
    with a header, or JSON Lines) into the session, each as a new label version with source
    ``import``. Returns how many were stored, and a message per line that was not (file:line: why)."""
    from evalcore.store.labels import QuotaFull

    items = {(i.qid, i.claim_idx): i for i in store.items(session.id)}
    allowed = set(TARGETS[session.target])
    if fmt == "jsonl":
        records: list[tuple[int, Any]] = []
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    records.append((n, json.loads(line)))
                except json.JSONDecodeError as exc:
                    records.append((n, f"not JSON ({exc.msg})"))
    else:
        reader = csv.DictReader(io.StringIO(text))
        records = [(n, r) for n, r in enumerate(reader, 2)]  # line 1 is the header
    stored, problems = 0, []
    for n, r in records:
        if isinstance(r, str) or not isinstance(r, dict):
            problems.append(f"{where}:{n}: {r if isinstance(r, str) else 'not an object'}")
            continue
        missing = [f for f in ("labeler", "qid", "label") if not str(r.get(f) or "").strip()]
        if missing:
            problems.append(
                f"{where}:{n}: missing {', '.join(missing)} (columns: labeler, qid, claim_idx, label, rationale)"
            )
            continue
        raw = r.get("claim_idx")
        try:
            idx = ANSWER_ITEM if raw in (None, "") else int(raw)
        except (TypeError, ValueError):
            problems.append(
                f"{where}:{n}: field 'claim_idx': expected a whole number, found {r.get('claim_idx')!r}"
            )
            continue
        item = items.get((str(r["qid"]), idx))
        if item is None:
            problems.append(f"{where}:{n}: no item qid={r['qid']} claim_idx={idx} in session {session.name}")
            continue
        if r["label"] not in allowed:
            problems.append(
                f"{where}:{n}: field 'label': expected one of {', '.join(sorted(allowed))}, found {r['label']!r}"
            )
            continue
        try:
            store.submit_label(
                item.id, str(r["labeler"]), str(r["label"]), r.get("rationale") or None, source="import"
            )
        except QuotaFull:
            problems.append(
                f"{where}:{n}: item {item.id} already has its {count(session.labels_per_item, 'label')} from others"
            )
            continue
        stored += 1
    return stored, problems


# ---- where a judge stands: measured against people or not, and its scores corrected


@dataclass
class Standing:
    """What the calibration sessions in the store say about the judge of a run's verdicts."""

    sessions: list[tuple[SessionRow, int]]  # sessions whose labels measure this judge, with labeled items
    corrected: list[Any]  # Corrected figures for this run (sessions on its results file and judge)
    unmeasured: str | None  # the flag, with how to measure it; None when measured or nothing judged

    def lines(self) -> list[str]:
        out = [
            f"measured against people in session {s.name} ({count(n, 'labeled item')}): evalcore agreement {s.name}"
            for s, n in self.sessions
        ]
        return out + [str(c) + f" (session {s.name})" for s, c in self.corrected]


def standing(store: Store, run: Any) -> Standing:
    """Where ``run``'s judge (the run as shown: its run file's verdicts or a revision's) stands."""
    from evalcore.calibration.correct import corrected
    from evalcore.judge.revision import RECORDED, judged_by
    from evalcore.store.labels import judge_key

    key = judge_key(run.judge)
    judged = run.claims.height > 0 or run.results["correctness"].drop_nulls().len() > 0
    sha = run.results_sha256()
    measuring: list[tuple[SessionRow, int]] = []
    fixes: list[tuple[SessionRow, Any]] = []
    for s in store.sessions():
        same_file = s.run_id == run.run_id and s.results_sha256 == sha
        if not (key and s.judge_key == key) and not (not key and same_file and s.judge == RECORDED):
            continue
        items = store.items(s.id)
        labels = store.labels(s.id)
        labeled = len({lb.item_id for lb in labels})
        if labeled:
            measuring.append((s, labeled))
        if same_file and labeled:
            seen = run if s.judge == RECORDED and not key else judged_by(store, run, s.judge)
            c = corrected(seen, s, items, labels)
            if c is not None:
                fixes.append((s, c))
    flag = None
    if judged and not measuring:
        who = run.judge_text()
        others = [s for s in store.sessions() if s.labels]
        if others:
            s = others[-1]
            how = (
                f"to check, re-judge run {s.run_id}, which people already labeled, with this judge "
                f"(evalcore judge RUN_FOLDER --like {run.path}) and read evalcore agreement {s.name} --judge REVISION"
            )
        else:
            how = (
                "to check, label about 150 of its claims in a calibration session (the Calibration page, "
                f"or evalcore calibrate create {run.path} --name NAME)"
            )
        flag = (
            f"agreement unmeasured for this judge ({who}): nobody has compared its verdicts with people's "
            f"yet, so how far its scores can be trusted is not known; {how}"
        )
    return Standing(measuring, fixes, flag)
