"""New test-set versions, written beside the old file and never over it.

A test set is something people made by hand; every tool that changes it (remap, accepted synthetic
questions, promoted production questions) writes a *new* file: each line validated against the
test-set schema, qids unique, written to a temporary file in the target folder and renamed into
place, so a reader never sees half a file and a crash leaves the old one as it was.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evalcore.cache import file_sha256
from evalcore.errors import InputError, Problem, Problems
from evalcore.runs.jsonl import field_path, iter_jsonl
from evalcore.schema import TestCase


def read_cases(path: str | Path) -> list[dict[str, Any]]:
    """The test set's lines as JSON objects, as written (unknown keys and key order kept)."""
    problems = Problems()
    out = [obj for _, obj in iter_jsonl(Path(path), problems, what="test case")]
    if problems.errors:
        raise InputError(problems.errors)
    return out


def default_out(path: str | Path, suffix: str) -> Path:
    """``testset.jsonl`` -> ``testset.<suffix>.jsonl``, or ``.<suffix>-2`` ... if that exists."""
    path = Path(path)
    stem = path.name.removesuffix(".jsonl")
    for i in range(1, 1000):
        name = f"{stem}.{suffix}{'' if i == 1 else f'-{i}'}.jsonl"
        if not (path.parent / name).exists():
            return path.parent / name
    msg = f"no free file name for a new version of {path}"
    raise InputError([Problem(str(path), msg)])


def write_version(
    cases: Iterable[dict[str, Any]], out: str | Path, *, source: str | Path | None = None
) -> str:
    """Validate every case and write them to ``out`` atomically; returns the new version's sha256.

    Refuses to write over an existing file (a test set is never overwritten: name a new one) or a
    case that breaks the schema (named by its line in the new file and its field).
    """
    out = Path(out)
    if out.exists():
        what = (
            "the test set itself"
            if source is not None and out.resolve() == Path(source).resolve()
            else "a file"
        )
        raise InputError(
            [
                Problem(
                    str(out),
                    f"{what} already exists there: a new version is written beside the old one, never over it",
                    hint="pass another --out path",
                )
            ]
        )
    problems = Problems()
    lines: list[str] = []
    seen: dict[str, int] = {}
    for lineno, case in enumerate(cases, start=1):
        try:
            TestCase.model_validate(case)
        except ValidationError as exc:
            for err in exc.errors():
                problems.error(out, err["msg"], line=lineno, field=field_path(err["loc"]))
            continue
        qid = case["qid"]
        if qid in seen:
            problems.error(
                out, f"duplicate qid '{qid}' (first on line {seen[qid]})", line=lineno, field="qid"
            )
            continue
        seen[qid] = lineno
        lines.append(json.dumps(case, ensure_ascii=False))
    if problems.errors:
        raise InputError(problems.errors)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")
        if out.exists():  # appeared meanwhile: still never overwrite
            raise InputError(
                [Problem(str(out), "the file appeared while writing", hint="pass another --out")]
            )
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return file_sha256(out)
