"""The test set: questions, graded relevance labels, evidence spans, reference answers and tags."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from evalcore.cache import file_key, file_sha256, read_frames, write_frames
from evalcore.errors import InputError, Problems
from evalcore.runs.jsonl import iter_jsonl, present_counts, scan_clean, validate_line, validate_plain
from evalcore.schema import TestCase

CASES_SCHEMA = {
    "qid": pl.String,
    "line": pl.Int64,
    "question": pl.String,
    "reference_answer": pl.String,
    "type": pl.String,
    "topic": pl.String,
    "source": pl.String,
    "split": pl.String,
    "must_pass": pl.Boolean,
    "answerable": pl.Boolean,
    "n_relevant": pl.Int64,
}
QRELS_SCHEMA = {"qid": pl.String, "chunk_id": pl.String, "rel": pl.Int64}
TAGS_SCHEMA = {"qid": pl.String, "tag": pl.String, "value": pl.String}
EVIDENCE_SCHEMA = {
    "qid": pl.String,
    "doc_id": pl.String,
    "start": pl.Int64,
    "end": pl.Int64,
    "quote": pl.String,
    "grade": pl.Int64,
}

# Columns of ``cases`` that can be used to slice results, besides free-form tags.
BUILTIN_SLICES = ("type", "topic", "source", "split", "must_pass", "answerable")

HELDOUT = "heldout"  # the split kept out of sight while tuning


def is_heldout() -> pl.Expr:
    """Rows of held-out questions (a frame with a ``split`` column): the one rule every view that
    hides them — a picker, a question list, a count — filters by."""
    return pl.col("split") == HELDOUT


# Questions whose retrieval can be scored: answerable, with a relevant chunk to score it against.
# (Answerable with no label is "not labeled yet": its answer is scored, its retrieval is not.)
LABELED = pl.col("answerable") & (pl.col("n_relevant") > 0)


@dataclass(frozen=True)
class TestSet:
    """A loaded test set. ``sha256`` is its version: every score names the test set it came from."""

    __test__ = False

    path: Path
    sha256: str
    cases: pl.DataFrame  # one row per question
    qrels: pl.DataFrame  # qid, chunk_id, rel (graded; 0 = judged not relevant)
    tags: pl.DataFrame  # long: qid, tag, value (built-in slices included)
    evidence: pl.DataFrame

    @property
    def version(self) -> str:
        return self.sha256[:12]

    @property
    def n_unlabeled(self) -> int:
        """Answerable questions with no labeled chunk yet (their retrieval is not scored)."""
        return self.cases.filter(pl.col("answerable") & ~LABELED).height

    @property
    def n_heldout(self) -> int:
        """Questions of the held-out split (means include them; per-question views hide them by default)."""
        return self.cases.filter(is_heldout()).height

    def tag_names(self) -> list[str]:
        """Every tag a result can be sliced by, built-in ones first."""
        extra = sorted(set(self.tags["tag"].unique().to_list()) - set(BUILTIN_SLICES))
        return [*BUILTIN_SLICES, *extra]


def read_testset(path: str | Path, problems: Problems | None = None) -> TestSet | None:
    """Read and validate a test set. Problems go to ``problems``; ``None`` if it cannot be used.

    With ``problems=None`` an :class:`InputError` is raised instead.
    """
    path = Path(path)
    own = problems is None
    problems = Problems() if problems is None else problems
    version = file_key(path) if path.is_file() else None  # before reading: see write_frames
    hit = read_frames(path, "testset", _FRAMES, key=version) if version else None
    if hit is not None:  # parsed cleanly before, and unchanged since (path, mtime and size)
        frames, meta = hit
        return TestSet(path=path, sha256=meta["sha256"], **frames)
    before = len(problems.errors)
    noted = len(problems)
    fast = _tables_fast(path)
    if fast is not None:
        return _kept(TestSet(path=path, sha256=file_sha256(path), **fast), version)
    plain = validate_plain(path, TestCase)
    validated = (
        plain
        if plain is not None
        else (
            (lineno, validate_line(TestCase, obj, path, lineno, problems))
            for lineno, obj in iter_jsonl(path, problems, what="test case")
        )
    )
    kept: list[tuple[int, TestCase]] = []
    seen: dict[str, int] = {}
    for lineno, case in validated:
        if not isinstance(case, TestCase):
            continue
        if case.qid in seen:
            problems.error(
                path,
                f"duplicate qid '{case.qid}' (first on line {seen[case.qid]})",
                line=lineno,
                field="qid",
                expected="each qid once",
                hint="give the second question its own qid, or merge the two",
            )
            continue
        seen[case.qid] = lineno
        kept.append((lineno, case))
    failed = len(problems.errors) > before or not kept
    if failed:
        if not kept and len(problems.errors) == before:
            problems.error(path, "the test set holds no question", hint="add one JSON object per line")
        if own:
            raise InputError(problems.errors)
        return None
    ts = TestSet(path=path, sha256=file_sha256(path), **_tables(kept))
    # Only a clean parse is cached: warnings must show every time.
    return _kept(ts, version) if len(problems) == noted else ts


_FRAMES = ("cases", "qrels", "tags", "evidence")


def _kept(ts: TestSet, version: Any) -> TestSet:
    """``ts``, its tables written to the parse cache (in the background) under the file's version
    taken before it was read."""
    write_frames(
        ts.path,
        "testset",
        {n: getattr(ts, n) for n in _FRAMES},
        {"sha256": ts.sha256},
        later=True,
        key=version,
    )
    return ts


def _tables(kept: list[tuple[int, TestCase]]) -> dict[str, pl.DataFrame]:
    """The test set's tables from its validated cases (in file order, qids unique), built a column
    at a time: a 10,000-question test set in ~0.1 s, a fifth of a row-by-row build."""
    cases = [c for _, c in kept]
    qids = [c.qid for c in cases]
    n_rel = [sum(g >= 1 for g in c.relevant.values()) for c in cases]
    # Stated, or else implied by the labels. Answerable with no label = not labeled yet.
    answerable = [
        c.answerable if c.answerable is not None else n > 0 for c, n in zip(cases, n_rel, strict=True)
    ]
    must_pass = [c.must_pass for c in cases]
    text: dict[str, list[str]] = {
        "type": [c.tags.type for c in cases],
        "topic": [c.tags.topic for c in cases],
        "source": [c.tags.source for c in cases],
        "split": [c.split for c in cases],
        "must_pass": [str(v).lower() for v in must_pass],
        "answerable": [str(v).lower() for v in answerable],
    }
    columns = {
        "qid": qids,
        "line": [line for line, _ in kept],
        "question": [c.question for c in cases],
        "reference_answer": [c.reference_answer for c in cases],
        **{name: text[name] for name in ("type", "topic", "source", "split")},
        "must_pass": must_pass,
        "answerable": answerable,
        "n_relevant": n_rel,
    }
    qrels = {
        "qid": [q for q, c in zip(qids, cases, strict=True) for _ in c.relevant],
        "chunk_id": [cid for c in cases for cid in c.relevant],
        "rel": [g for c in cases for g in c.relevant.values()],
    }
    # Tags, long: each question's built-in slices (in BUILTIN_SLICES order), then its own tags.
    builtin = [text[name] for name in BUILTIN_SLICES]
    tag_q: list[str] = []
    tag_k: list[str] = []
    tag_v: list[str] = []
    for i, c in enumerate(cases):
        tag_q.extend([qids[i]] * len(BUILTIN_SLICES))
        tag_k.extend(BUILTIN_SLICES)
        tag_v.extend(col[i] for col in builtin)
        for key, value in (c.tags.model_extra or {}).items():
            values = list(dict.fromkeys([value] if isinstance(value, str) else value))
            tag_q.extend([qids[i]] * len(values))
            tag_k.extend([key] * len(values))
            tag_v.extend(values)
    evidence = [{"qid": c.qid, **span.model_dump()} for c in cases for span in c.evidence]
    return {
        "cases": pl.DataFrame(columns, schema=CASES_SCHEMA),
        "qrels": pl.DataFrame(qrels, schema=QRELS_SCHEMA),
        "tags": pl.DataFrame({"qid": tag_q, "tag": tag_k, "value": tag_v}, schema=TAGS_SCHEMA),
        "evidence": pl.DataFrame(evidence, schema=EVIDENCE_SCHEMA),
    }


# --------------------------------------------------------------------------- the vectorised reader
#
# A test set of a million questions is 300 MB; validating it a case at a time (pydantic, then the
# tables built in Python) took a minute. A file the compiled scan finds plainly valid is read whole
# instead, and every rule of :class:`TestCase` is checked on whole columns. Anything the checks do
# not accept goes to the exact reader above, which names the line and field — so both accept and
# refuse the same files (tests/runs/test_testset_fast.py).
#
# ``relevant`` is an object whose keys are chunk ids: a different struct on every line, which no
# JSON reader turns into columns. The compiled lifter takes it out of each line (chunk id, grade),
# and pyarrow reads the rest of the line, inferring types strictly (a tag that is a list on one line
# and a number on another is refused, not converted). Every value the frames hold is counted against
# the scan's count: a value a reader dropped or converted makes the counts differ.

_FAST_NO_NULL = ("qid", "question", "relevant", "evidence", "tags", "split", "must_pass")
_TOP = {
    "qid",
    "question",
    "relevant",
    "evidence",
    "reference_answer",
    "tags",
    "split",
    "must_pass",
    "answerable",
}
_SPAN = {"doc_id": pl.String, "start": pl.Int64, "end": pl.Int64, "quote": pl.String, "grade": pl.Int64}
_SPLITS = ("dev", HELDOUT)
_SOURCES = ("real", "synthetic")


def _tables_fast(path: Path) -> dict[str, pl.DataFrame] | None:
    """The test set's tables read and checked whole, or None for anything not plainly valid."""
    scanned = scan_clean(path, _FAST_NO_NULL)
    if scanned is None:
        return None
    data, lines, values, strings = scanned
    import numpy as np

    from evalcore.runs._scan import lift_object
    from evalcore.runs.jsonl import read_arrow

    lifted = lift_object(np.frombuffer(data, dtype=np.uint8), "relevant")
    if lifted is None:
        return None
    _, rest, rest_len, rows, pair_off, _, n_pairs, keys, _, key_off, grades = lifted
    df = read_arrow(memoryview(rest[:rest_len]))
    if df is None or df.height != lines or rows != lines:
        return None
    try:
        return _checked_tables(data, df, values, strings, pair_off, n_pairs, keys, key_off, grades)
    except (pl.exceptions.PolarsError, ValueError, TypeError):
        return None


def _no_null_in(data: bytes, names: list[str]) -> bool:
    """Whether no key of these names has an explicit ``null`` anywhere in the file."""
    import numpy as np

    from evalcore.runs._scan import CLEAN, key_hash, scan_jsonl

    hashes = np.array([key_hash(k.encode()) for k in names], np.int64)
    return scan_jsonl(np.frombuffer(data, dtype=np.uint8), hashes)[0] == CLEAN


def _checked_tables(
    data: bytes,
    df: pl.DataFrame,
    values: int,
    strings: int,
    pair_off: object,
    n_pairs: int,
    keys: object,
    key_off: object,
    grades: object,
) -> dict[str, pl.DataFrame] | None:
    import numpy as np
    import pyarrow as pa

    n = df.height
    if not set(df.columns) <= _TOP or "qid" not in df.columns or "question" not in df.columns:
        return None  # a key the record does not know (or a required one missing)
    if "tags" not in df.columns or not isinstance(df.schema["tags"], pl.Struct):
        return None
    # Every value read, counted as the scan counted them (relevant: the object and its grades).
    got_values, got_strings = present_counts(df)
    if (got_values + n_pairs, got_strings) != (values, strings):
        return None
    offs = np.asarray(pair_off)[: n + 1]
    chunk_ids = pa.LargeStringArray.from_buffers(
        n_pairs, pa.py_buffer(np.asarray(key_off)[: n_pairs + 1]), pa.py_buffer(np.asarray(keys))
    )
    pairs = pl.DataFrame(
        {
            "qid": df["qid"].gather(np.repeat(np.arange(n), np.diff(offs))),
            "chunk_id": pl.Series(chunk_ids, dtype=pl.String),
            "rel": np.asarray(grades)[:n_pairs],
        }
    )
    if df.schema["qid"] != pl.String or df.schema["question"] != pl.String:
        return None
    tag = df["tags"].struct.unnest()
    fields = dict(tag.schema)
    if any(fields.get(k) != pl.String for k in ("type", "topic", "source")):
        return None
    extra = [k for k in fields if k not in ("type", "topic", "source")]
    if any(fields[k] not in (pl.String, pl.List(pl.String), pl.List(pl.Null)) for k in extra):
        return None

    def col(name: str, dtype: pl.DataType | type[pl.DataType]) -> pl.Series:
        """A column of the record, null where no line has the key; None-typed only if all null."""
        if name not in df.columns:
            return pl.Series(name, [None] * n, dtype=dtype)
        s = df[name]
        if s.dtype == pl.Null:
            return s.cast(dtype)
        if s.dtype != dtype:
            raise TypeError(name)
        return s

    split, must_pass, answerable = (
        col("split", pl.String),
        col("must_pass", pl.Boolean),
        col("answerable", pl.Boolean),
    )
    reference = col("reference_answer", pl.String)
    checks = [
        df["qid"].null_count() == 0 and bool((df["qid"].str.len_chars() > 0).all()),
        df["question"].null_count() == 0 and bool((df["question"].str.len_chars() > 0).all()),
        df["qid"].n_unique() == n,  # a duplicate: the exact reader names both lines
        df["tags"].null_count() == 0,
        tag["type"].null_count() == 0 and bool((tag["type"].str.len_chars() > 0).all()),
        tag["topic"].null_count() == 0 and bool((tag["topic"].str.len_chars() > 0).all()),
        tag["source"].null_count() == 0 and bool(tag["source"].is_in(_SOURCES).all()),
        bool(split.drop_nulls().is_in(_SPLITS).all()),
    ]
    # A null in an extra tag is a line without that key, or an explicit null the record refuses;
    # the scan tells them apart when it is given the names.
    if extra and not _no_null_in(data, extra):
        return None
    for k in extra:  # and a null inside a list of tags
        if fields[k] != pl.String and tag[k].list.eval(pl.element().is_null()).explode().any():
            checks.append(False)
    if "evidence" in df.columns and df.schema["evidence"] != pl.Null:
        ev_type = df.schema["evidence"]
        if not isinstance(ev_type, pl.List) or not (
            isinstance(ev_type.inner, pl.Struct) or ev_type.inner == pl.Null
        ):
            return None
        ev = df.select("qid", "evidence").explode("evidence").drop_nulls("evidence")
        ev = ev.unnest("evidence") if ev.height else pl.DataFrame(schema={"qid": pl.String, **_SPAN})
    else:
        ev = pl.DataFrame(schema={"qid": pl.String, **_SPAN})
    if not set(ev.columns) - {"qid"} <= set(_SPAN):
        return None  # a span key the record does not know
    for name, dtype in _SPAN.items():
        if name not in ev.columns:
            ev = ev.with_columns(pl.lit(None, dtype=dtype).alias(name))
        elif ev.schema[name] == pl.Null:
            ev = ev.with_columns(pl.col(name).cast(dtype))
        elif ev.schema[name] != dtype:
            return None
    if ev.height:
        checks += [
            ev["doc_id"].null_count() == 0 and bool((ev["doc_id"].str.len_chars() > 0).all()),
            ev["start"].null_count() == 0 and bool((ev["start"] >= 0).all()),
            ev["end"].null_count() == 0 and bool((ev["end"] > ev["start"]).all()),
            bool((ev["grade"].fill_null(1) >= 1).all()),
        ]
    if not all(checks):
        return None
    n_rel = pairs.filter(pl.col("rel") >= 1).group_by("qid").len("n_relevant")
    cases = (
        pl.DataFrame(
            {
                "qid": df["qid"],
                "line": pl.int_range(1, n + 1, dtype=pl.Int64, eager=True),
                "question": df["question"],
                "reference_answer": reference,
                "type": tag["type"],
                "topic": tag["topic"],
                "source": tag["source"],
                "split": split.fill_null("dev"),
                "must_pass": must_pass.fill_null(False),
                "stated": answerable,
            }
        )
        .join(n_rel, on="qid", how="left", maintain_order="left")
        .with_columns(n_relevant=pl.col("n_relevant").fill_null(0).cast(pl.Int64))
    )
    if cases.filter(pl.col("stated").not_() & (pl.col("n_relevant") > 0)).height:
        return None  # answerable false beside a relevant label: the exact reader says which
    cases = cases.with_columns(answerable=pl.col("stated").fill_null(pl.col("n_relevant") > 0)).select(
        list(CASES_SCHEMA)
    )
    # Tags, long: each question's built-in slices (in BUILTIN_SLICES order), then its own tags.
    shown = cases.select(
        "qid",
        "type",
        "topic",
        "source",
        "split",
        must_pass=pl.col("must_pass").cast(pl.String).str.to_lowercase(),
        answerable=pl.col("answerable").cast(pl.String).str.to_lowercase(),
    ).with_row_index("row")
    parts = [
        shown.select("row", "qid", tag=pl.lit(name), value=pl.col(name), order=pl.lit(i, dtype=pl.Int64))
        for i, name in enumerate(BUILTIN_SLICES)
    ]
    for j, k in enumerate(extra, start=len(BUILTIN_SLICES)):
        own = pl.DataFrame({"row": shown["row"], "qid": df["qid"], "value": tag[k]})
        if fields[k] != pl.String:
            own = own.with_columns(
                pl.col("value").cast(pl.List(pl.String)).list.unique(maintain_order=True)
            ).explode("value")
        parts.append(
            own.drop_nulls("value").select(
                "row", "qid", tag=pl.lit(k), value="value", order=pl.lit(j, dtype=pl.Int64)
            )
        )
    tags_long = pl.concat(parts).sort("row", "order", maintain_order=True).select("qid", "tag", "value")
    return {
        "cases": cases.cast(CASES_SCHEMA),  # type: ignore[arg-type]
        "qrels": pairs.cast(QRELS_SCHEMA),  # type: ignore[arg-type]
        "tags": tags_long.cast(TAGS_SCHEMA),  # type: ignore[arg-type]
        "evidence": ev.select("qid", *_SPAN).with_columns(pl.col("grade").fill_null(1)).cast(EVIDENCE_SCHEMA),  # type: ignore[arg-type]
    }
