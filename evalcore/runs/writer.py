"""Write runs from a RAG pipeline without hand-writing JSON.

>>> import tempfile, pathlib, json
>>> tmp = pathlib.Path(tempfile.mkdtemp())
>>> _ = (tmp / "testset.jsonl").write_text(json.dumps({"qid": "q1", "question": "Why?",
...     "relevant": {"c1": 1}, "tags": {"type": "lookup", "topic": "t", "source": "real"}}) + "\\n")
>>> with RunWriter(tmp / "my-run", testset=tmp / "testset.jsonl", system={"retriever": "bm25"}) as w:
...     w.add("q1", retrieved=[{"chunk_id": "c1", "score": 2.5, "text": "Because."}], answer="Because.")
>>> sorted(p.name for p in (tmp / "my-run").iterdir())
['results.jsonl', 'run.json']

Each record is validated as it is added (a bad one raises at once, naming the field); the run folder
appears only when the writer closes without error, so a crashed pipeline never leaves half a run.
An existing run folder is never overwritten.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

import polars as pl
from pydantic import ValidationError

from evalcore._version import __version__
from evalcore.cache import file_sha256
from evalcore.runs.jsonl import field_path
from evalcore.schema import ResultRecord, RunManifest


class RunWriter:
    """Collects one result per question and writes ``run.json`` + ``results.jsonl`` atomically."""

    def __init__(
        self,
        folder: str | Path,
        *,
        testset: str | Path,
        run_id: str | None = None,
        label: str | None = None,
        system: dict[str, Any] | None = None,
        judge: dict[str, Any] | None = None,
        created: datetime | None = None,
        notes: str | None = None,
        external_metrics: dict[str, str] | None = None,
        fmt: Literal["jsonl", "parquet"] = "jsonl",
        context_k: int | None = None,
    ) -> None:
        self.folder = Path(folder)
        if self.folder.exists():
            msg = f"{self.folder} already exists; runs are never overwritten — choose a new folder"
            raise FileExistsError(msg)
        ts = Path(testset)
        rel = os.path.relpath(ts.resolve(), self.folder.resolve())
        self.manifest = RunManifest.model_validate(
            {
                "run_id": run_id or self.folder.name,
                "label": label,
                "created": created or datetime.now(UTC),
                "test_set": {"path": Path(rel).as_posix(), "sha256": file_sha256(ts)},
                "system": system or {},
                "judge": judge,
                "library_version": __version__,
                "notes": notes,
                "external_metrics": external_metrics or {},
                "context_k": context_k,
            }
        )
        self.fmt = fmt
        self._records: list[dict[str, Any]] = []
        self._frames: list[pl.DataFrame] = []
        self._qids: set[str] = set()
        self._closed = False

    def add(self, qid: str, **fields: Any) -> None:
        """Add the result of one question (fields as in ``results.jsonl``)."""
        if qid in self._qids:
            msg = f"qid {qid!r} was already added to this run"
            raise ValueError(msg)
        try:
            rec = ResultRecord.model_validate({"qid": qid, **fields})
        except ValidationError as exc:
            err = exc.errors(include_url=False)[0]
            msg = f"result for {qid!r}: field '{field_path(tuple(err['loc']))}': {err['msg']} (got {err.get('input')!r})"
            raise ValueError(msg) from None
        self._qids.add(qid)
        self._records.append(
            rec.model_dump(mode="json", exclude_none=True, exclude_defaults=True) | {"qid": qid}
        )

    def add_frame(self, results: pl.DataFrame) -> None:
        """Add many results at once: a frame with a row per question and the columns of
        ``results.jsonl`` (``retrieved`` a list of ``{chunk_id, score, ...}`` structs). It is checked
        by the same vectorised rules the loader applies, and written by polars — for pipelines and
        importers with many thousands of questions, where :meth:`add` per record is the slow part."""
        from evalcore.runs.nested import frames_from_nested

        if frames_from_nested(results) is None:
            # Not plainly valid: the record model names the first bad row and field.
            for row in results.iter_rows(named=True):
                self.add(row.pop("qid"), **{k: v for k, v in row.items() if v is not None})
            return
        qids = results["qid"].to_list()
        repeated = self._qids.intersection(qids) or (
            len(set(qids)) < len(qids) and {q for q in qids if qids.count(q) > 1}
        )
        if repeated:
            msg = f"qid {sorted(repeated)[0]!r} was already added to this run"
            raise ValueError(msg)
        self._qids.update(qids)
        self._frames.append(results)

    def close(self) -> Path:
        """Write the run folder (atomically: a temporary folder renamed into place)."""
        if self._closed:
            return self.folder
        if not self._records and not self._frames:
            msg = "no result was added; a run needs at least one"
            raise ValueError(msg)
        self.folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{self.folder.name}.", dir=self.folder.parent))
        # mkdtemp makes the folder private (0700); a run folder gets the user's umask like any other.
        umask = os.umask(0)
        os.umask(umask)
        tmp.chmod(0o777 & ~umask)
        try:
            (tmp / "run.json").write_text(
                json.dumps(
                    self.manifest.model_dump(mode="json", exclude_none=True), indent=2, ensure_ascii=False
                )
                + "\n",
                encoding="utf-8",
            )
            if self.fmt == "jsonl":
                with (tmp / "results.jsonl").open("w", encoding="utf-8") as fh:
                    for rec in self._records:
                        fh.write(json.dumps(rec, ensure_ascii=False, allow_nan=False) + "\n")
                with (tmp / "results.jsonl").open("ab") as fb:
                    for frame in self._frames:
                        frame.write_ndjson(fb)
            else:
                if self._frames:
                    msg = "add_frame writes JSON Lines; use fmt='jsonl' (or add() for parquet)"
                    raise ValueError(msg)
                rows = [
                    {
                        **r,
                        "external_scores": [
                            {"name": k, "value": v} for k, v in r.get("external_scores", {}).items()
                        ],
                    }
                    for r in self._records
                ]
                pl.DataFrame(rows, infer_schema_length=None).write_parquet(tmp / "results.parquet")
            tmp.rename(self.folder)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        self._closed = True
        return self.folder

    def __enter__(self) -> RunWriter:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc_type is None:
            self.close()


def chunk_id_for(text: str) -> str:
    """A stable chunk id for a chunk known only by its text (imports from tools that keep no ids)."""
    return "sha1:" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]
