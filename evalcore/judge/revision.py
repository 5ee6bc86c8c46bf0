"""A run as a judge revision sees it: the run's answers and chunks with the revision's verdicts in
place of the judge output recorded in the run file. Scoring it is ordinary scoring — the
faithfulness rule and the quote check (:mod:`evalcore.metrics`) apply to the revision's claims as to
recorded ones, so a SUPPORTED claim whose quote is not in the context it names counts as not
supported and is flagged.

``recorded`` is the judge output in the run file. ``latest`` is each question's latest verdict by
the judge of the run's newest revision: a partial re-judge (``evalcore judge RUN --qids a b``)
refines the revisions it follows instead of replacing them with two questions. A later failed
judgment does not erase an earlier good one. A number is that one revision.
"""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any

import polars as pl

from evalcore.judge.prompt import PROMPT_VERSION
from evalcore.metrics.generation import context_chunks
from evalcore.runs.frames import CLAIMS_SCHEMA
from evalcore.runs.load import Run
from evalcore.schema import JudgeConfig
from evalcore.store import Store, Verdict
from evalcore.words import count

RECORDED = "recorded"
LATEST = "latest"


def resolve(store: Store, run: Run, which: str, results_sha256: str) -> int | None:
    """A revision id from ``recorded`` (None), ``latest`` or a number; ``ValueError`` names what exists."""
    if which == RECORDED:
        return None
    revisions = store.revisions(run.run_id, results_sha256)
    if which == LATEST:
        if not revisions:
            msg = f"run {run.run_id} has no judge revision in {store.path}; `evalcore judge` makes one"
            raise ValueError(msg)
        return revisions[-1].id
    ids = {r.id for r in revisions}
    if not which.isdigit() or int(which) not in ids:
        known = ", ".join(str(i) for i in sorted(ids)) or "none"
        msg = f"no revision {which!r} for run {run.run_id} (its revisions: {known}; or 'recorded', 'latest')"
        raise ValueError(msg)
    return int(which)


def latest_verdicts(
    store: Store, run: Run, results_sha256: str
) -> tuple[list[Verdict], int, tuple[str, str, str]]:
    """Each question's latest verdict by the judge of the newest revision (the latest successful
    one, else the latest failure), over every revision of the run by that judge; with the newest
    revision's id and its judge. ``ValueError`` when the run has no revision."""
    revisions = store.revisions(run.run_id, results_sha256)
    if not revisions:
        msg = f"run {run.run_id} has no judge revision in {store.path}; `evalcore judge` makes one"
        raise ValueError(msg)
    newest = revisions[-1]
    per_question: dict[str, Verdict] = {}
    for r in revisions:  # oldest first: a later verdict replaces an earlier one
        if r.judge != newest.judge:
            continue
        for v in store.verdicts(r.id):
            before = per_question.get(v.qid)
            if v.ok or before is None or not before.ok:
                per_question[v.qid] = v
    return list(per_question.values()), newest.id, newest.judge


def coverage(run: Run, verdicts: list[Verdict]) -> str:
    """Which questions a judging covers, and why the others are missing: answered and judged,
    failed judgments, answers never judged by this judge, no answer to judge."""
    answered = set(
        run.results.filter(pl.col("answer").is_not_null() & (pl.col("answer").str.strip_chars() != ""))["qid"]
    )
    ok = {v.qid for v in verdicts if v.ok}
    failed = {v.qid for v in verdicts if not v.ok} - ok
    unjudged = answered - ok - failed
    no_answer = run.results.height - len(answered)
    parts = [f"{len(ok & answered)} of {count(run.results.height, 'question')} judged"]
    if failed:
        parts.append(f"{count(len(failed), 'failed judgment')} (evalcore revisions shows why)")
    if unjudged:
        parts.append(f"{count(len(unjudged), 'answer')} not judged by this judge")
    if no_answer:
        parts.append(f"{no_answer} without an answer to judge")
    return "; ".join(parts)


def with_verdicts(
    run: Run,
    verdicts: list[Verdict],
    revision_id: int,
    judge: tuple[str, str, str] | None = None,
    *,
    source: str | None = None,
) -> Run:
    """``run`` judged by these verdicts. A question without a successful verdict has no judge output
    (its faithfulness, correctness and relevance are not applicable), never the recorded one."""
    ok = {v.qid: v.output for v in verdicts if v.ok and v.output is not None}
    claims = [
        {
            "qid": qid,
            "claim_idx": i,
            "claim": c["claim"],
            "verdict": c["verdict"],
            "quote": c.get("quote"),
            "chunk_id": c.get("chunk_id"),
        }
        for qid, out in ok.items()
        for i, c in enumerate(out["claims"])
    ]
    judged = pl.DataFrame(
        {
            "qid": list(ok),
            "n_claims": [len(out["claims"]) for out in ok.values()],
            "correctness": [out["correctness"]["verdict"] for out in ok.values()],
            "relevance": [float(out["relevance"]["score"]) for out in ok.values()],
        },
        schema={"qid": pl.String, "n_claims": pl.Int64, "correctness": pl.String, "relevance": pl.Float64},
    )
    context = _context_counts(run, ok)
    asked = pl.DataFrame(
        {
            "qid": [q for q, out in ok.items() if "questions_from_answer" in out],
            "answer_questions": [
                out["questions_from_answer"] for out in ok.values() if "questions_from_answer" in out
            ],
        },
        schema={"qid": pl.String, "answer_questions": pl.List(pl.String)},
    )
    extra = (*CONTEXT_COLUMNS, "answer_questions")
    results = run.results.drop("n_claims", "correctness", "relevance", *extra, strict=False)
    results = results.join(judged, on="qid", how="left").join(context, on="qid", how="left")
    results = results.join(asked, on="qid", how="left")
    results = results.select(*[c for c in run.results.columns if c not in extra], *extra)
    manifest = run.manifest
    if judge is not None:  # the run now carries this revision's judge, for comparisons to check
        model, prompt, schema = judge
        manifest = manifest.model_copy(
            update={
                "judge": JudgeConfig(
                    model=model,
                    prompt_version=f"{PROMPT_VERSION} (revision {revision_id})",
                    prompt_sha256=prompt,
                    schema_sha256=schema,
                )
            }
        )
    return dataclasses.replace(
        run,
        manifest=manifest,
        results=results,
        claims=pl.DataFrame(claims, schema=CLAIMS_SCHEMA),
        # Scores are cached by source: this run, judged by this revision, is a source of its own.
        source_key=None
        if run.source_key is None
        else f"{run.source_key}|{source or f'judge-revision-{revision_id}'}",
    )


# Per question, from the judge's context grades (generation_scores turns them into judged context
# precision and recall): chunks graded and judged relevant; reference statements, and those a chunk
# covers. Only chunks the generator was given count; a grade of any other id is ignored.
CONTEXT_COLUMNS = ("judged_chunks", "judged_relevant", "ref_statements", "ref_covered")


def _context_counts(run: Run, outputs: dict[str, Any]) -> pl.DataFrame:
    given: dict[str, set[str]] = {}
    ctx = context_chunks(run.retrieved.filter(pl.col("qid").is_in(list(outputs))), run.manifest.context_k)
    for qid, cid in ctx.select("qid", "chunk_id").iter_rows():
        given.setdefault(qid, set()).add(cid)
    rows = []
    for qid, out in outputs.items():
        if "chunks" not in out:  # a revision from before the judge graded chunks
            continue
        ids = given.get(qid, set())
        grades = {c["chunk_id"]: c["relevant"] for c in out["chunks"] if c["chunk_id"] in ids}
        statements = out.get("reference_statements") or []
        rows.append(
            {
                "qid": qid,
                "judged_chunks": len(grades),
                "judged_relevant": sum(grades.values()),
                "ref_statements": len(statements),
                "ref_covered": sum(1 for st in statements if st.get("chunk_id") in ids),
            }
        )
    schema = {"qid": pl.String, **dict.fromkeys(CONTEXT_COLUMNS, pl.Int64)}
    return pl.DataFrame(rows, schema=schema)


def judged_by(store: Store, run: Run, which: str) -> Run:
    """``run`` under ``which``: ``recorded`` (the run file's), ``latest`` (each question's latest
    verdict by the newest revision's judge) or a revision id."""
    if which == LATEST:
        verdicts, newest, judge = latest_verdicts(store, run, run.results_sha256())
        # The scores' cache key: what the merged verdicts are (they change whenever one is added).
        content = "\n".join(sorted(f"{v.qid}|{v.cache_key}|{v.ok}|{v.message_id}" for v in verdicts))
        digest = hashlib.sha256(content.encode()).hexdigest()[:16]
        return with_verdicts(run, verdicts, newest, judge, source=f"judge-latest-{digest}")
    rev = resolve(store, run, which, run.results_sha256())
    if rev is None:
        return run
    revision = store.revision(rev)
    return with_verdicts(run, store.verdicts(rev), rev, revision.judge if revision else None)


def judged_verdicts(store: Store, run: Run, which: str) -> list[Verdict] | None:
    """The verdicts ``which`` names (None for ``recorded``: the run file's own output)."""
    if which == LATEST:
        return latest_verdicts(store, run, run.results_sha256())[0]
    rev = resolve(store, run, which, run.results_sha256())
    return None if rev is None else store.verdicts(rev)


def diff(a: Run, b: Run) -> pl.DataFrame:
    """How the verdicts of two judgings of one run differ, per question: claims only in ``a`` or
    only in ``b`` (by claim text), claims whose verdict flipped, faithfulness under each, and the
    SUPPORTED quotes the quote check rejected under each. Questions where nothing differs are left out.

    ``a`` and ``b`` are the run under two revisions (:func:`judged_by`), ``recorded`` included."""
    from evalcore.score import score_run

    def claims(run: Run) -> dict[str, dict[str, str]]:
        out: dict[str, dict[str, str]] = {}
        for qid, claim, verdict in run.claims.select("qid", "claim", "verdict").iter_rows():
            out.setdefault(qid, {})[claim] = verdict
        return out

    ca, cb = claims(a), claims(b)
    sa = score_run(a, []).select("qid", "faithfulness", "unverified_quotes")
    sb = score_run(b, []).select("qid", "faithfulness", "unverified_quotes")
    fa = {q: (f, u) for q, f, u in sa.iter_rows()}
    fb = {q: (f, u) for q, f, u in sb.iter_rows()}
    rows = []
    for qid in sorted(set(fa) | set(fb)):
        x, y = ca.get(qid, {}), cb.get(qid, {})
        added = sorted(set(y) - set(x))
        removed = sorted(set(x) - set(y))
        flipped = sorted(f"{c}: {x[c]} → {y[c]}" for c in set(x) & set(y) if x[c] != y[c])
        (f1, u1), (f2, u2) = fa.get(qid, (None, 0)), fb.get(qid, (None, 0))
        if added or removed or flipped or f1 != f2 or u1 != u2:
            rows.append(
                {
                    "qid": qid,
                    "faithfulness_a": f1,
                    "faithfulness_b": f2,
                    "claims_added": added,
                    "claims_removed": removed,
                    "verdicts_flipped": flipped,
                    "quotes_rejected_a": u1,
                    "quotes_rejected_b": u2,
                }
            )
    schema: dict[str, pl.DataType | type[pl.DataType]] = {
        "qid": pl.String,
        "faithfulness_a": pl.Float64,
        "faithfulness_b": pl.Float64,
        "claims_added": pl.List(pl.String),
        "claims_removed": pl.List(pl.String),
        "verdicts_flipped": pl.List(pl.String),
        "quotes_rejected_a": pl.Int64,
        "quotes_rejected_b": pl.Int64,
    }
    return pl.DataFrame(rows, schema=schema)
