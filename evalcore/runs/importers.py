"""Import runs made by other tools into ragtriage's run format (the source files are only read).

* TREC: qrels (``qid iter docno rel``) become a test set; a run (``qid Q0 docno rank score tag``)
  becomes a run folder. Questions have no text in TREC files; the qid stands in for it.
* Ragas: a results export (CSV or JSON) with ``user_input``, ``retrieved_contexts``, ``response``,
  ``reference`` and metric columns. Chunk ids are derived from a hash of the chunk text; the Ragas
  metric columns are kept as *external* scores (``ext:<name>``), never mixed with evalcore's own.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from evalcore.errors import InputError, Problem
from evalcore.runs.trec import read_trec
from evalcore.runs.writer import RunWriter

RAGAS_TEXT_COLUMNS = {"user_input", "retrieved_contexts", "response", "reference", "reference_contexts"}


def chunk_id_for(text: str) -> str:
    """A stable chunk id for a chunk known only by its text."""
    return "sha1:" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def _write_testset(path: Path, cases: list[dict[str, Any]]) -> None:
    if path.exists():
        msg = f"{path} already exists; nothing is overwritten — choose another --out"
        raise FileExistsError(msg)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for c in cases:
            fh.write(json.dumps(c, ensure_ascii=False) + "\n")


def import_trec(qrels: str | Path, run: str | Path, out: str | Path, *, run_id: str | None = None) -> Path:
    """Write ``out/testset.jsonl`` and ``out/<run_id>/`` from TREC files. Returns the run folder."""
    files = read_trec(qrels, run, will_score=False)
    out = Path(out)
    rid = run_id or files.runid or Path(run).stem
    rid = "".join(ch if ch.isalnum() or ch in "._-" else "-" for ch in rid)
    ts = out / "testset.jsonl"
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
    _write_lines(ts, lines.to_series())
    # trec_eval ignores queries without qrels; so does the import.
    results = (
        files.run.join(q.select("qid").unique(), on="qid", how="semi")
        .group_by("qid", maintain_order=True)
        .agg(retrieved=pl.struct(pl.col("chunk_id").cast(pl.String), "score"))
    )
    with RunWriter(out / rid, testset=ts, run_id=rid, label=rid, system={"imported_from": "trec"}) as w:
        w.add_frame(results)
    return out / rid


def _json_str(expr: pl.Expr) -> pl.Expr:
    """Each string JSON-encoded (quotes and escapes), vectorised: polars encodes ``{"s": ...}``."""
    return pl.struct(s=expr).struct.json_encode().str.slice(5).str.head(-1)


def _write_lines(path: Path, lines: pl.Series) -> None:
    if path.exists():
        msg = f"{path} already exists; nothing is overwritten — choose another --out"
        raise FileExistsError(msg)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        fh.write("\n".join(lines.to_list()) + "\n")


def _read_ragas(path: Path) -> list[dict[str, Any]]:
    if path.suffix.lower() == ".csv":
        df = pl.read_csv(path, infer_schema_length=0)
        rows = df.to_dicts()
        for r in rows:
            for col in ("retrieved_contexts", "reference_contexts"):
                if isinstance(r.get(col), str):
                    r[col] = _parse_list(r[col], path, col)
        return rows
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, dict):
        data = data.get("samples") or data.get("data") or next(iter(data.values()))
    if not isinstance(data, list):
        raise InputError([Problem(str(path), "expected a list of samples", expected="[{...}, ...]")])
    return data


def _parse_list(text: str, path: Path, col: str) -> list[str]:
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
                        field=col,
                        found=text[:60],
                        expected="a JSON or Python list of strings",
                    )
                ]
            ) from None
    if not isinstance(value, list):
        raise InputError([Problem(str(path), "expected a list of strings", field=col, found=text[:60])])
    return [str(v) for v in value]


def import_ragas(path: str | Path, out: str | Path, *, run_id: str | None = None) -> Path:
    """Write ``out/testset.jsonl`` and ``out/<run_id>/`` from a Ragas results export."""
    path, out = Path(path), Path(out)
    rows = _read_ragas(path)
    problems = []
    for i, r in enumerate(rows, start=1):
        for col in ("user_input", "retrieved_contexts"):
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
    rid = run_id or path.stem
    labeled = any(r.get("reference_contexts") is not None for r in rows)
    metric_cols = sorted({k for r in rows for k in r} - RAGAS_TEXT_COLUMNS)
    cases, records = [], []
    for i, r in enumerate(rows, start=1):
        qid = f"ragas-{i:05d}"
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
            try:
                ext[m] = None if v in (None, "") else float(v)
            except (TypeError, ValueError):
                continue
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
    ts = out / "testset.jsonl"
    _write_testset(ts, cases)
    notes = None
    if not labeled:
        notes = (
            "The export has no reference_contexts: no question has labeled chunks, so evalcore's retrieval "
            "metrics are not computed (the questions count as answerable, with no labels); use the external "
            "Ragas scores, or add labels to testset.jsonl."
        )
    with RunWriter(
        out / rid,
        testset=ts,
        run_id=rid,
        label=f"{rid} (imported from Ragas)",
        notes=notes,
        created=datetime.now(UTC),
        system={"imported_from": "ragas"},
        external_metrics={m: "ragas" for m in metric_cols},
    ) as w:
        for qid, rec in records:
            w.add(qid, **rec)
    return out / rid
