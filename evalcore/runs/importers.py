"""Import runs made by other tools into ragtriage's run format (the source files are only read).

* TREC: qrels (``qid iter docno rel``) become a test set; a run (``qid Q0 docno rank score tag``)
  becomes a run folder. Questions have no text in TREC files; the qid stands in for it.
* Ragas: a results export (CSV, JSON or JSON Lines) with ``user_input``, ``retrieved_contexts``,
  ``response``, ``reference`` (or Ragas 0.1's ``question``, ``contexts``, ``answer``, ``ground_truth``)
  and metric columns. Chunk ids are derived from a hash of the chunk text; the Ragas metric columns are
  kept as *external* scores (``ext:<name>``), never mixed with evalcore's own.

The test set goes to ``OUT/testset.jsonl``. When that file already exists, an import that would write
the same questions reuses it, so several runs of one test set import into one folder; one that would
write different questions stops and says how to go on. ``testset=`` adds the run to an existing test set
instead (Ragas rows are matched to its questions by text, TREC queries by qid).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from evalcore.errors import InputError, Problem
from evalcore.runs.trec import read_trec
from evalcore.runs.writer import RunWriter, chunk_id_for
from evalcore.words import agree, count

RAGAS_TEXT_COLUMNS = {"user_input", "retrieved_contexts", "response", "reference", "reference_contexts"}
# Ragas 0.1 named the columns after the question, not the user: same meaning, older names.
RAGAS_01_NAMES = {
    "question": "user_input",
    "contexts": "retrieved_contexts",
    "answer": "response",
    "ground_truth": "reference",
    "ground_truths": "reference",
}
RAGAS_REQUIRED = ("user_input", "retrieved_contexts")


def _write_testset(path: Path, lines: list[str], source: str, match: str) -> None:
    """Write the test set an import made, or reuse the one already there if it holds the same
    questions; anything else stops with the way forward that works (nothing is overwritten).
    ``match`` is what identifies a question across files: ``qid`` (TREC) or ``question`` (Ragas)."""
    text = "".join(line + "\n" for line in lines)
    if path.exists():
        if _same_questions(path, text):
            return
        new = [json.loads(line)[match] for line in lines]
        try:
            old = {
                json.loads(line).get(match)
                for line in path.read_text(encoding="utf-8-sig").splitlines()
                if line.strip()
            }
        except (OSError, ValueError):
            old = set()
        absent = sum(1 for q in new if q not in old)
        apart = f"import into another --out (e.g. {path.parent / Path(source.split()[-1]).stem})"
        if absent == 0:
            how = (
                f"all {len(new)} of its questions are in it: to add this run to "
                f"that test set, pass --testset {path}; to keep the two apart, {apart}"
            )
        else:
            how = f"{absent} of its {len(new)} questions are not in it: to keep the two test sets apart, {apart}"
        msg = f"{path} already exists and holds other questions than {source}; nothing was overwritten. {how}"
        raise FileExistsError(msg)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _same_questions(path: Path, text: str) -> bool:
    """Whether the test set at ``path`` holds exactly the cases ``text`` would write (as JSON values:
    key order and spacing aside)."""
    try:
        old = [json.loads(line) for line in path.read_text(encoding="utf-8-sig").splitlines() if line.strip()]
    except (OSError, ValueError):
        return False
    new = [json.loads(line) for line in text.splitlines() if line.strip()]
    return old == new


def _run_id(name: str) -> str:
    """A run id from a name: what the manifest's pattern allows, anything else a dash."""
    return "".join(ch if ch.isalnum() or ch in "._-" else "-" for ch in name)


def _run_folder(out: Path, rid: str) -> Path:
    folder = out / rid
    if folder.exists():
        msg = f"{folder} already exists; runs are never overwritten — pass another --run-id"
        raise FileExistsError(msg)
    return folder


def import_trec(
    qrels: str | Path,
    run: str | Path,
    out: str | Path,
    *,
    run_id: str | None = None,
    testset: str | Path | None = None,
) -> Path:
    """Write ``out/testset.jsonl`` (or reuse it, or use ``testset``) and ``out/<run_id>/`` from TREC
    files. Returns the run folder."""
    files = read_trec(qrels, run, will_score=False)
    out = Path(out)
    rid = _run_id(run_id or files.runid or Path(run).stem)
    folder = _run_folder(out, rid)
    ts = Path(testset) if testset is not None else out / "testset.jsonl"
    # Written whole with polars (a JSON object with data-named keys, "relevant", is built as text from
    # JSON-encoded strings), in qid order.
    q = files.qrels.with_columns(pl.col("chunk_id").cast(pl.String), pl.col("rel").clip(lower_bound=0))
    lines = (
        q.group_by("qid")
        .agg(relevant=pl.concat_str(_json_str(pl.col("chunk_id")), pl.lit(":"), pl.col("rel")).str.join(","))
        .sort("qid")
        .select(
            pl.concat_str(
                pl.lit('{"qid":'),
                _json_str(pl.col("qid")),
                pl.lit(',"question":'),
                _json_str(pl.concat_str(pl.lit("(TREC query "), pl.col("qid"), pl.lit(")"))),
                pl.lit(',"relevant":{'),
                pl.col("relevant"),
                pl.lit('},"tags":{"type":"trec","topic":"trec","source":"real"}}'),
            )
        )
    )
    if testset is None:
        _write_testset(ts, lines.to_series().to_list(), f"the qrels {Path(qrels).name}", "qid")
        known = q.select("qid").unique()
    else:
        known = _testset_qids(ts)
    # trec_eval ignores queries without qrels; so does the import (and queries the test set lacks).
    results = (
        files.run.join(known, on="qid", how="semi")
        .group_by("qid", maintain_order=True)
        .agg(retrieved=pl.struct(pl.col("chunk_id").cast(pl.String), "score"))
    )
    with RunWriter(folder, testset=ts, run_id=rid, label=rid, system={"imported_from": "trec"}) as w:
        w.add_frame(results)
    return folder


def _testset_qids(path: Path) -> pl.DataFrame:
    from evalcore.runs.testset import read_testset

    return read_testset(path).cases.select("qid")  # type: ignore[union-attr]  # raises if unusable


def _json_str(expr: pl.Expr) -> pl.Expr:
    """Each string JSON-encoded (quotes and escapes), vectorised: polars encodes ``{"s": ...}``."""
    return pl.struct(s=expr).struct.json_encode().str.slice(5).str.head(-1)


def _read_ragas(path: Path) -> list[dict[str, Any]]:
    """The export's rows with Ragas' current column names; the file's shape is checked once, so a
    wrong file gets one message naming what is missing, not one per row."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        rows = _read_csv(path)
    elif suffix in (".jsonl", ".ndjson"):
        rows = []
        for i, line in enumerate(_text(path).splitlines(), start=1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except ValueError as exc:
                raise InputError(
                    [
                        Problem(
                            str(path), f"not a JSON object: {exc.args[0]}", line=i, hint="one sample per line"
                        )
                    ]
                ) from None
    else:
        try:
            data = json.loads(_text(path))
        except ValueError as exc:
            hint = "a JSON Lines export needs a .jsonl name" if "Extra data" in str(exc) else None
            raise InputError([Problem(str(path), f"cannot parse JSON: {exc}", hint=hint)]) from None
        if isinstance(data, dict):
            data = data.get("samples") or data.get("data") or next(iter(data.values()), None)
        if not isinstance(data, list):
            raise InputError([Problem(str(path), "expected a list of samples", expected="[{...}, ...]")])
        rows = data
    if not rows or not all(isinstance(r, dict) for r in rows):
        raise InputError([Problem(str(path), "the export holds no sample", expected="one object per sample")])
    given = set().union(*rows)  # the file's own column names, for the message
    rows = [
        {RAGAS_01_NAMES.get(k, k) if RAGAS_01_NAMES.get(k, k) not in r else k: v for k, v in r.items()}
        for r in rows
    ]
    columns = set().union(*rows)
    missing = [c for c in RAGAS_REQUIRED if c not in columns]
    if missing:
        old = {v: k for k, v in RAGAS_01_NAMES.items() if k != "ground_truths"}
        raise InputError(
            [
                Problem(
                    str(path),
                    "not a Ragas export: missing "
                    + agree(len(missing), "column ", "columns ")
                    + ", ".join(missing),
                    found="columns " + ", ".join(sorted(given)[:12]),
                    expected=", ".join(f"{c} (Ragas 0.1: {old[c]})" for c in missing),
                    hint=(
                        "this is RAGChecker's output: evalcore import ragchecker FILE --out DIR"
                        if _read_ragchecker(path) is not None
                        else "export with Ragas' EvaluationResult.to_pandas().to_csv() or .to_json(); for "
                        "another tool's files, write runs with evalcore.RunWriter (docs/run-format.md)"
                    ),
                )
            ]
        )
    first = 2 if suffix == ".csv" else 1  # the line of the first sample (a CSV's first is its header)
    for i, r in enumerate(rows):
        for col in ("retrieved_contexts", "reference_contexts"):
            if isinstance(r.get(col), str):
                r[col] = _parse_list(r[col], path, col, line=first + i if suffix != ".json" else None)
        if isinstance(r.get("reference"), list):  # Ragas 0.1's ground_truths: a list of answers
            r["reference"] = " ".join(str(x) for x in r["reference"]) or None
    return rows


def _text(path: Path) -> str:
    """The file as UTF-8 text; a file saved in another encoding (cp1252 by Excel, Latin-1) is named
    with the line and column of its first byte that is not UTF-8, and how to save it as UTF-8."""
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(
            [
                Problem(
                    str(path),
                    f"not UTF-8 text: byte 0x{raw[exc.start]:02x} at column {column} (the file was probably "
                    "saved as cp1252 or Latin-1)",
                    line=line,
                    expected="UTF-8",
                    hint="save it as UTF-8 (Excel: Save As > 'CSV UTF-8'; pandas: to_csv(..., encoding='utf-8')), "
                    "or convert it: iconv -f cp1252 -t utf-8 FILE > FILE.utf8.csv",
                )
            ]
        ) from None


def _read_csv(path: Path) -> list[dict[str, Any]]:
    """A CSV export's rows as text (Python's csv module, strict: a row cut off mid-field is named with
    its line and field, where polars' reader stopped with a traceback)."""
    import csv
    import io

    text = _text(path)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader, None)
    except csv.Error as exc:
        raise InputError([Problem(str(path), f"not a CSV file: {exc}", line=1)]) from None
    if not header:
        raise InputError(
            [Problem(str(path), "the export holds no sample", expected="a header and one row per sample")]
        )
    rows: list[dict[str, Any]] = []
    start = 2
    while True:
        start = reader.line_num + 1
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            # Which field was open: the row's text from its first line, parsed leniently.
            tail = "\n".join(text.splitlines()[start - 1 :])
            partial = next(csv.reader(io.StringIO(tail)), [])
            field = header[min(len(partial), len(header)) - 1] if partial else header[0]
            raise InputError(
                [
                    Problem(
                        str(path),
                        f"the row ends inside a quoted field ({exc}): the file looks cut off mid-row",
                        line=start,
                        field=field,
                        hint="export the file again, whole; or delete this last, partial row",
                    )
                ]
            ) from None
        if not any(c.strip() for c in cells):
            continue
        if len(cells) < len(header):
            raise InputError(
                [
                    Problem(
                        str(path),
                        f"the row has {len(cells)} of the header's {len(header)} fields: the file looks cut off mid-row",
                        line=start,
                        field=header[len(cells)],
                        hint="export the file again, whole; or delete this last, partial row",
                    )
                ]
            )
        # (an empty cell is a missing value, as polars' reader had it)
        rows.append({k: (v if v != "" else None) for k, v in zip(header, cells, strict=False)})
    return rows


def _parse_list(text: str, path: Path, col: str, *, line: int | None = None) -> list[str]:
    # Ragas' to_pandas().to_csv() writes lists as Python reprs; JSON lists are accepted too.
    import ast

    try:
        value = json.loads(text)
    except ValueError:
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            raise InputError(
                [
                    Problem(
                        str(path),
                        "cannot read the list of contexts",
                        line=line,
                        field=col,
                        found=text[:60],
                        expected="a JSON or Python list of strings",
                    )
                ]
            ) from None
    if not isinstance(value, list):
        raise InputError(
            [Problem(str(path), "expected a list of strings", line=line, field=col, found=text[:60])]
        )
    return [str(v) for v in value]


def import_ragas(
    path: str | Path, out: str | Path, *, run_id: str | None = None, testset: str | Path | None = None
) -> Path:
    """Write ``out/testset.jsonl`` (or reuse it, or use ``testset``) and ``out/<run_id>/`` from a
    Ragas results export."""
    path, out = Path(path), Path(out)
    rows = _read_ragas(path)
    rid = _run_id(run_id or path.stem)
    folder = _run_folder(out, rid)
    problems = []
    for i, r in enumerate(rows, start=1):
        for col in RAGAS_REQUIRED:
            if r.get(col) in (None, ""):
                problems.append(
                    Problem(
                        str(path),
                        "required column is empty",
                        line=i + (1 if path.suffix == ".csv" else 0),
                        field=col,
                        hint="Ragas exports need user_input and retrieved_contexts",
                    )
                )
    if problems:
        raise InputError(problems)
    qid_of = _qids_by_text(Path(testset), rows, path) if testset is not None else None
    labeled = any(r.get("reference_contexts") is not None for r in rows)
    metric_cols = _metric_columns(rows, path)
    cases, records = [], []
    for i, r in enumerate(rows, start=1):
        qid = qid_of[r["user_input"]] if qid_of is not None else f"ragas-{i:05d}"
        ref_ctx = r.get("reference_contexts") or []
        case: dict[str, Any] = {
            "qid": qid,
            "question": r["user_input"],
            # Ragas has no chunk labels; reference contexts, where present, become the relevant set.
            "relevant": {chunk_id_for(t): 1 for t in ref_ctx},
            "reference_answer": r.get("reference"),
            "tags": {"type": "unknown", "topic": "unknown", "source": "real"},
        }
        if not labeled:
            # No labels at all is not "the corpus cannot answer": Ragas samples are questions with
            # a reference answer. They stay answerable; their retrieval is unscored, not scored 0.
            case["answerable"] = True
        cases.append(case)
        ctx = list(dict.fromkeys(r["retrieved_contexts"]))
        ext = {}
        for m in metric_cols:
            v = r.get(m)
            ext[m] = None if v in (None, "") else float(v)  # checked numeric by _metric_columns
            if ext[m] is not None and ext[m] != ext[m]:  # NaN: Ragas writes it for a failed metric
                ext[m] = None
        records.append(
            (
                qid,
                {
                    "retrieved": [
                        {"chunk_id": chunk_id_for(t), "score": float(len(ctx) - j), "text": t}
                        for j, t in enumerate(ctx)
                    ],
                    "answer": r.get("response"),
                    "external_scores": ext,
                },
            )
        )
    notes = None
    if not labeled:
        notes = (
            "The export has no reference_contexts: no question has labeled chunks, so evalcore's retrieval "
            "metrics are not computed (the questions count as answerable, with no labels); use the external "
            "Ragas scores, or add labels to testset.jsonl."
        )
    return _write_import(
        out, folder, rid, testset, cases, records, f"the export {path.name}", "Ragas", notes=notes,
        external=metric_cols,
    )  # fmt: skip


def _write_import(
    out: Path,
    folder: Path,
    rid: str,
    testset: str | Path | None,
    cases: list[dict[str, Any]],
    records: list[tuple[str, dict[str, Any]]],
    source: str,
    tool: str,
    *,
    notes: str | None,
    external: list[str],
    judge: dict[str, Any] | None = None,
) -> Path:
    """An import's test set (``out/testset.jsonl``, written or reused, unless ``testset`` is given)
    and its run folder, written by RunWriter: the same for every tool's files."""
    if testset is None:
        ts = out / "testset.jsonl"
        _write_testset(ts, [json.dumps(c, ensure_ascii=False) for c in cases], source, "question")
    else:
        ts = Path(testset)
    with RunWriter(
        folder,
        testset=ts,
        run_id=rid,
        label=f"{rid} (imported from {tool})",
        notes=notes,
        created=datetime.now(UTC),
        system={"imported_from": tool.lower()},
        judge=judge,
        external_metrics=dict.fromkeys(external, tool.lower()),
    ) as w:
        for qid, rec in records:
            w.add(qid, **rec)
    return folder


def _read_ragchecker(path: Path) -> list[dict[str, Any]] | None:
    """RAGChecker's ``checking_outputs.json`` results (``{"results": [...]}`` with ``query_id``,
    ``query``, ``response``, ``retrieved_context``, ``response_claims``…), or None if the file is
    not one."""
    if path.suffix.lower() != ".json":
        return None
    try:
        data = json.loads(_text(path))
    except ValueError:
        return None
    rows = data.get("results") if isinstance(data, dict) else None
    if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) for r in rows):
        return None
    if not all("query" in r and "retrieved_context" in r for r in rows):
        return None
    return rows


# RAGChecker's entailment of a response claim by each retrieved chunk, in our verdicts.
# (a contradicted claim is not supported: run files keep SUPPORTED / NOT_SUPPORTED)
_RAGCHECKER_VERDICTS = {"Entailment": "SUPPORTED", "Contradiction": "NOT_SUPPORTED"}


def _ragchecker_claims(row: dict[str, Any], chunks: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The response's claims as stored judge output: SUPPORTED when RAGChecker's checker found a
    retrieved chunk that entails the claim (that chunk's text is its quote, so evalcore's quote
    check finds it), else NOT_SUPPORTED (naming the chunk that contradicts it, if one does) — so
    faithfulness comes out as RAGChecker defines it (claims entailed by the retrieved context)."""
    triplets = row.get("response_claims")
    if triplets is None:
        return None
    checks = row.get("retrieved2response") or []
    claims = []
    for i, t in enumerate(triplets):
        text = " ".join(str(x) for x in t) if isinstance(t, list) else str(t)
        per_chunk = checks[i] if i < len(checks) and isinstance(checks[i], list) else []
        verdict, chunk = "NOT_SUPPORTED", None
        for want in ("Entailment", "Contradiction"):
            j = next((j for j, v in enumerate(per_chunk) if v == want and j < len(chunks)), None)
            if j is not None:
                verdict, chunk = _RAGCHECKER_VERDICTS[want], chunks[j]
                break
        claims.append(
            {
                "claim": text or "(empty claim)",
                "verdict": verdict,
                "quote": chunk["text"] if chunk is not None and verdict == "SUPPORTED" else None,
                "chunk_id": chunk["chunk_id"] if chunk is not None else None,
            }
        )
    return claims


def import_ragchecker(
    path: str | Path, out: str | Path, *, run_id: str | None = None, testset: str | Path | None = None
) -> Path:
    """Write ``out/testset.jsonl`` (or reuse it, or use ``testset``) and ``out/<run_id>/`` from
    RAGChecker's checking output: questions, responses, retrieved contexts, ground-truth answers,
    its claim-level checks (as imported judge output) and its metrics (as external scores)."""
    path, out = Path(path), Path(out)
    rows = _read_ragchecker(path)
    if rows is None:
        raise InputError(
            [
                Problem(
                    str(path),
                    "not a RAGChecker output",
                    expected='{"results": [{"query_id", "query", "response", "retrieved_context", ...}]}',
                    hint="RAGChecker's checker writes it (checking_outputs.json); for any other tool, write "
                    "runs with evalcore.RunWriter (docs/run-format.md)",
                )
            ]
        )
    rid = _run_id(run_id or path.stem)
    folder = _run_folder(out, rid)
    qid_of = (
        _qids_by_text(Path(testset), [{"user_input": r["query"]} for r in rows], path)
        if testset is not None
        else None
    )
    metric_names = sorted({m for r in rows for m in (r.get("metrics") or {})})
    cases, records = [], []
    for i, r in enumerate(rows, start=1):
        qid = qid_of[r["query"]] if qid_of is not None else f"rc-{r.get('query_id', i)}"
        cases.append(
            {
                "qid": qid,
                "question": r["query"],
                "relevant": {},
                "answerable": True,  # RAGChecker has no chunk labels: retrieval unscored, not scored 0
                "reference_answer": r.get("gt_answer"),
                "tags": {"type": "unknown", "topic": "unknown", "source": "real"},
            }
        )
        # The retrieved contexts in their order (RAGChecker's checks are indexed by it); a chunk
        # retrieved twice is listed once in the ranked list.
        given = [c if isinstance(c, dict) else {"text": str(c)} for c in r.get("retrieved_context") or []]
        ctx = [{"chunk_id": chunk_id_for(c.get("text") or ""), "text": c.get("text") or ""} for c in given]
        chunks: dict[str, dict[str, Any]] = {}
        for c, ref in zip(given, ctx, strict=True):
            if ref["text"] and ref["chunk_id"] not in chunks:
                chunks[ref["chunk_id"]] = {**ref, **({"doc_id": str(c["doc_id"])} if c.get("doc_id") else {})}
        ext = {m: float(v) for m, v in (r.get("metrics") or {}).items() if _number(v)}
        claims = _ragchecker_claims(r, ctx)
        records.append(
            (
                qid,
                {
                    "retrieved": [
                        {**c, "score": float(len(chunks) - j)} for j, c in enumerate(chunks.values())
                    ],
                    "answer": r.get("response"),
                    "external_scores": ext,
                    **({"judge": {"claims": claims, "model": "ragchecker"}} if claims is not None else {}),
                },
            )
        )
    notes = (
        "Imported from RAGChecker: its response claims are the judge output (SUPPORTED where its checker "
        "found a retrieved chunk entailing the claim), its metrics are external scores; no chunk labels, "
        "so retrieval metrics are not computed."
    )
    judge = {"model": "ragchecker", "prompt_version": "ragchecker claim entailment"}
    return _write_import(
        out, folder, rid, testset, cases, records, f"the output {path.name}", "RAGChecker", notes=notes,
        external=metric_names, judge=judge,
    )  # fmt: skip


def _number(v: Any) -> bool:
    try:
        float(v)
    except (TypeError, ValueError):
        return False
    return not isinstance(v, bool)


def _metric_columns(rows: list[dict[str, Any]], path: Path) -> list[str]:
    """The export's score columns: those besides Ragas' text columns that hold numbers. A value in
    one that is not a number is an error naming its line and column, never a score quietly dropped;
    an empty value or NaN is Ragas' own mark of a metric that failed (kept as missing)."""
    columns = sorted({k for r in rows for k in r} - RAGAS_TEXT_COLUMNS)
    numeric = [c for c in columns if any(_number(r.get(c)) for r in rows)]
    first = 2 if path.suffix.lower() == ".csv" else 1
    problems = [
        Problem(
            str(path),
            "a score that is not a number",
            line=first + i if path.suffix.lower() != ".json" else None,
            field=c,
            found=str(r[c])[:40],
            expected="a number, or empty where the metric failed",
        )
        for c in numeric
        for i, r in enumerate(rows)
        if r.get(c) not in (None, "") and not _number(r.get(c))
    ]
    if problems:
        raise InputError(problems)
    return numeric


def _qids_by_text(testset: Path, rows: list[dict[str, Any]], path: Path) -> dict[str, str]:
    """Each export row's qid in an existing test set, found by its question text (a Ragas export has
    no ids); every row whose question the test set lacks is reported at once."""
    from evalcore.runs.testset import read_testset

    ts = read_testset(testset)
    assert ts is not None  # read_testset raises when it cannot be used
    by_text = dict(ts.cases.select("question", "qid").iter_rows())
    problems = [
        Problem(
            str(path),
            "this question is not in the test set",
            line=i + (1 if path.suffix.lower() == ".csv" else 0),  # a CSV's first line is its header
            field="user_input",
            found=str(r["user_input"])[:80],
            hint=f"add it to {testset.name}, or import without --testset to write a test set of its own",
        )
        for i, r in enumerate(rows, start=1)
        if r["user_input"] not in by_text
    ]
    if problems:
        raise InputError(problems)
    return {r["user_input"]: by_text[r["user_input"]] for r in rows}


@dataclass(frozen=True)
class TraceImport:
    folder: Path  # the run
    log: Path  # the production log, for Signals
    traces: int  # read
    problems: list[Problem]  # what was left out or read without its chunks, by trace and span id


def import_trace_files(
    paths: list[str | Path], out: str | Path, *, run_id: str | None = None, testset: str | Path | None = None
) -> TraceImport:
    """Traces (OTLP JSON with OpenInference attributes, Phoenix span exports, Langfuse exports; see
    :mod:`evalcore.runs.traces`) into a run — ``out/testset.jsonl`` (unlabeled: one question a trace)
    and ``out/<run_id>/`` — and a production log, ``out/logs/<run_id>.jsonl``, for Signals. A trace
    that could not be read is named in ``problems``; with none readable, :class:`InputError`."""
    from evalcore.runs.traces import read_traces

    out = Path(out)
    found, problems = read_traces(paths)
    if not found:
        problems.error(str(paths[0]), "no trace with a question could be read", hint="see the lines above")
        raise InputError(problems.items)
    rid = _run_id(run_id or Path(paths[0]).stem)
    folder = _run_folder(out, rid)
    log = out / "logs" / f"{rid}.jsonl"
    if log.exists():
        msg = f"{log} already exists; pass another --run-id (imports never overwrite a file)"
        raise FileExistsError(msg)
    qid_of = (
        _qids_by_text(Path(testset), [{"user_input": i.question} for i in found], Path(paths[0]))
        if testset is not None
        else None
    )
    cases, records = [], []
    for i in found:
        qid = qid_of[i.question] if qid_of is not None else f"tr-{i.trace_id[:16]}"
        cases.append(
            {
                "qid": qid,
                "question": i.question,
                "relevant": {},
                "answerable": True,  # a production question has no chunk labels: retrieval unscored
                "tags": {
                    "type": "unknown",
                    "topic": "unknown",
                    "source": "real",
                    "origin": "production trace",
                },
            }
        )
        seen: dict[str, dict[str, Any]] = {}
        for c in i.retrieved:
            seen.setdefault(c["chunk_id"], c)
        records.append(
            (
                qid,
                {
                    "retrieved": list(seen.values()),
                    "answer": i.answer,
                    **({"latency_ms": i.latency_ms} if i.latency_ms is not None else {}),
                    **({"tokens": i.tokens} if i.tokens else {}),
                },
            )
        )
    models = sorted({i.model for i in found if i.model})
    notes = (
        f"Imported from {count(len(found), 'trace')} ({', '.join(Path(p).name for p in paths)}): the root span's "
        "input is the question, the first retriever span's documents the retrieved chunks, the answer the "
        f"root's (or the last LLM span's) output{'; model ' + ', '.join(models) if models else ''}. No chunk "
        "labels, so retrieval metrics are not computed."
    )
    _write_import(
        out, folder, rid, testset, cases, records, f"the traces {Path(paths[0]).name}", "traces",
        notes=notes, external=[],
    )  # fmt: skip
    log.parent.mkdir(parents=True, exist_ok=True)
    tmp = log.with_suffix(".jsonl.tmp")
    tmp.write_text(
        "".join(json.dumps(i.log_record(), ensure_ascii=False) + "\n" for i in found), encoding="utf-8"
    )
    os.replace(tmp, log)
    # A trace left out does not stop the import: said as a warning, by its trace and span ids.
    return TraceImport(folder, log, len(found), [replace(p, severity="warning") for p in problems.items])
