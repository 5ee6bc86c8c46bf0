"""Reading classic TREC files (qrels and runs) into polars, fast for clean files and with a line and
field for every problem otherwise. The trec_eval drop-in that uses them is :mod:`evalcore.trec_eval`.

"""

from __future__ import annotations

import mmap
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from evalcore.errors import InputError, Problems
from evalcore.metrics.retrieval import categorical, first_repeat, preload, row_groups, scan_text
from evalcore.paths import literal
from evalcore.runs.frames import repeats
from evalcore.words import count


@dataclass(frozen=True)
class TrecFiles:
    """The two files, as frames. ``chunk_id`` is categorical in both, sharing one mapping, so joins
    and :func:`~evalcore.metrics.retrieval.evaluate` work on integer codes; its values are the docnos."""

    qrels: pl.DataFrame  # qid, chunk_id, rel
    run: pl.DataFrame  # qid, chunk_id, score
    runid: str


_FAST: dict[str, tuple[list[int], list[str], dict[str, pl.DataType | type[pl.DataType]], int]] = {
    # kind: (columns read, their names, typed columns, fields per line).
    "qrels": ([0, 2, 3], ["qid", "chunk_id", "rel"], {"column_3": pl.Int64}, 4),
    "run": ([0, 2, 4], ["qid", "chunk_id", "score"], {"column_4": pl.Float64}, 6),
}


def _fast_read(
    path: Path, kind: str, chunk_dtype: pl.DataType | None = None
) -> tuple[pl.DataFrame, str] | None:
    """Read a well-formed TREC file with polars' CSV reader and check it vectorised. Returns the
    frame (docnos parsed straight into the categorical ``chunk_dtype``) and the first line's last
    field (a run's tag).

    Returns None at the first sign of anything unusual — tabs, carriage returns, runs of spaces, a
    short or long line, a non-numeric or non-finite value — and the caller takes the general path,
    which reports every problem with its line number. A clean file never needs that path.
    """
    df = _fast_parse(path, kind, chunk_dtype or pl.Categorical(pl.Categories.random()))
    return None if df is None else _fast_check(kind, df, _facts(path))


def _fast_parse(path: Path, kind: str, chunk_dtype: pl.DataType) -> pl.DataFrame | None:
    cols, _, types, _ = _FAST[kind]
    try:
        return pl.read_csv(
            literal(path),
            has_header=False,
            separator=" ",
            quote_char=None,
            columns=cols,
            schema_overrides={**types, "column_2": chunk_dtype},
            infer_schema=False,
            truncate_ragged_lines=False,
        )
    except (pl.exceptions.PolarsError, OSError):
        return None


def _count(mm: mmap.mmap, byte: int) -> int:
    """How many times ``byte`` occurs in the mapped file (numpy, a block at a time)."""
    view = np.frombuffer(mm, dtype=np.uint8)
    try:
        return sum(int(np.count_nonzero(view[a : a + _BLOCK] == byte)) for a in range(0, view.size, _BLOCK))
    finally:
        del view  # the map cannot close while an array points into it


_BLOCK = 1 << 24
# The checks below run in numpy and polars on small files (an import of 200,000 lines loads no compiled
# code: that load costs more than the checks) and in the compiled kernel on large ones (a 10M-line run:
# one pass instead of several). tests/trec/test_read_trec.py holds the two to the same answers.
COMPILED_FROM = 32 << 20


def _compiled(size: int) -> bool:
    return size >= COMPILED_FROM


def _scan(mm: mmap.mmap) -> tuple[int, bool]:
    """(spaces, odd): odd if the file needs the general reader (see the kernel's ``scan_text``)."""
    if _compiled(len(mm)):
        view = np.frombuffer(mm, dtype=np.uint8)
        try:
            spaces, odd = scan_text(view)
        finally:
            del view
        return int(spaces), bool(odd)
    odd = any(mm.find(s) >= 0 for s in (b"\t", b"\r", b"  ", b"\n ", b"\n#")) or mm[:1] in (b" ", b"#")
    return (_count(mm, 32) if not odd else 0), odd


def _facts(path: Path) -> tuple[int, bool, bytes] | None:
    """What the checks of :func:`_fast_read` need from a file's bytes: (spaces, odd, first line).
    None if the file cannot be mapped (missing, or empty)."""
    try:
        with path.open("rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            # A tab can hide a field from the space-separated reader ("1\tQ0  d" is still 6 fields),
            # and so can a doubled or leading space: any of them sends the file to the general path,
            # which splits on all white space. A comment line (# first) is skipped there.
            spaces, odd = _scan(mm)
            end = mm.find(b"\n")
            return spaces, odd, mm[: end if end >= 0 else len(mm)]
    except (OSError, ValueError):  # ValueError: an empty file cannot be mapped
        return None


def _fast_check(
    kind: str, df: pl.DataFrame, facts: tuple[int, bool, bytes] | None
) -> tuple[pl.DataFrame, str] | None:
    """The checks of :func:`_fast_read` on a parsed file and its :func:`_facts`."""
    _, names, _, n_fields = _FAST[kind]
    if facts is None:
        return None
    spaces, odd, first_line = facts
    if odd or df.height == 0 or df.width != len(names):
        return None
    # Exactly n - 1 spaces a line: no line is short or long (the reader skips fields it is not asked
    # for). A run line with text after its tag (trec_eval ignores it) is read by the general path.
    if spaces != (n_fields - 1) * df.height:
        return None
    df.columns = names
    if df.null_count().sum_horizontal().item() > 0:
        return None
    if kind == "run" and not df["score"].is_finite().all():
        return None
    return df, first_line.split(b" ")[-1].decode("utf-8", "replace")


def _has_duplicates(df: pl.DataFrame, codes: np.ndarray) -> bool:
    """Does a (qid, chunk) pair repeat? Each pair as one integer (question block × chunk code),
    counted distinct — integers hash fast, where a (string, string) struct would not."""
    start, end, _, order = row_groups(df["qid"])
    if order is not None:
        codes = codes[order]
    n = int(codes.max()) + 1 if codes.size else 0
    if _compiled(codes.size * 40):  # about 40 bytes a line
        return bool(first_repeat(start, end, codes, n) >= 0)
    block = np.repeat(np.arange(start.size, dtype=np.int64), end - start)
    key = pl.Series(block * n + codes.astype(np.int64))
    return key.n_unique() != key.len()


def _split_lines(
    path: Path,
    n_fields: int,
    names: list[str],
    what: str,
    example: str,
    problems: Problems,
    *,
    more_ok: bool = False,
) -> pl.DataFrame:
    """Every line split on white space; ``more_ok``: fields after the first ``n_fields`` are ignored
    (trec_eval reads a run line's first six fields and ignores the rest)."""
    try:
        raw = pl.read_csv(
            literal(path),
            has_header=False,
            separator="\x1f",
            quote_char=None,
            new_columns=["raw"],
            schema_overrides={"raw": pl.String},
            encoding="utf8",
        )
    except pl.exceptions.NoDataError:
        problems.error(path, f"the {what} file is empty", expected=example)
        return pl.DataFrame()
    except (pl.exceptions.ComputeError, OSError) as exc:
        problems.error(path, f"cannot read the {what} file: {exc}", hint="it must be UTF-8 text")
        return pl.DataFrame()
    # The line number survives the filter, so every error can name it.
    df = raw.with_row_index("line", offset=1).with_columns(
        parts=pl.col("raw").str.strip_chars().str.replace_all(r"\s+", " ").str.split(" ")
    )
    # Blank lines and comments (a line that starts with #, as trec_eval reads them) are skipped.
    df = df.filter((pl.col("raw").str.strip_chars() != "") & ~pl.col("raw").str.starts_with("#"))
    n = pl.col("parts").list.len()
    bad = df.filter(n < n_fields if more_ok else n != n_fields).head(20)
    for row in bad.iter_rows(named=True):
        # The other kind's line (4 fields in a run, 6 in qrels): the two files were given swapped.
        swapped = len(row["parts"]) == (4 if what == "run" else 6)
        problems.error(
            path,
            f"a {what} line must have {'at least ' if more_ok else ''}{n_fields} fields",
            line=row["line"],
            expected=example,
            found=f"{count(len(row['parts']), 'field')}: {row['raw'][:60]!r}",
            hint="this looks like a qrels file: give the qrels first, then the run (QRELS RUN)"
            if swapped and what == "run"
            else "this looks like a run file: give the qrels first, then the run (QRELS RUN)"
            if swapped
            else None,
        )
    if bad.height:
        return pl.DataFrame()
    return df.select(
        pl.col("line").cast(pl.Int64), *[pl.col("parts").list.get(i).alias(n) for i, n in enumerate(names)]
    )


def read_trec(qrels_path: str | Path, run_path: str | Path, *, will_score: bool = True) -> TrecFiles:
    """Read a TREC qrels file (``qid iter docno rel``) and run (``qid Q0 docno rank score tag``).

    Raises :class:`InputError` naming the file and line of every problem. ``will_score``: the caller
    computes measures next, so the compiled measures load in the background meanwhile.
    """
    qp, rp = Path(qrels_path), Path(run_path)
    if will_score:
        preload()
    docno = pl.Categorical(pl.Categories.random())  # one mapping for both files' docnos
    # The byte scans of both files run on a thread while polars parses them (its parse leaves part
    # of the second core idle: 100,000 x 100 lines read 0.35 s sooner so). They need the compiled
    # kernel, which loads meanwhile.
    with ThreadPoolExecutor(1, thread_name_prefix="evalcore-trec-scan") as pool:
        facts = pool.submit(lambda: (_facts(qp), _facts(rp)))
        parsed_q, parsed_r = _fast_parse(qp, "qrels", docno), _fast_parse(rp, "run", docno)
        facts_q, facts_r = facts.result()
    fast_q = None if parsed_q is None else _fast_check("qrels", parsed_q, facts_q)
    fast_r = None if parsed_r is None else _fast_check("run", parsed_r, facts_r)
    if fast_q is not None and fast_r is not None:
        (q, _), (r, runid) = fast_q, fast_r
        qc, rc = q["chunk_id"], r["chunk_id"]
        # Duplicates are rare: when the quick check sees one, the general path names its lines.
        if not _has_duplicates(q, qc.to_physical().to_numpy()) and not _has_duplicates(
            r, rc.to_physical().to_numpy()
        ):
            return TrecFiles(qrels=q, run=r, runid=runid)
    problems = Problems()
    q = _split_lines(qp, 4, ["qid", "iter", "chunk_id", "rel"], "qrels", "'qid iter docno rel'", problems)
    r = _split_lines(
        rp,
        6,
        ["qid", "q0", "chunk_id", "rank", "score", "tag"],
        "run",
        "'qid Q0 docno rank score tag'",
        problems,
        more_ok=True,
    )
    if problems.errors:
        raise InputError(problems.errors)
    q = q.with_columns(rel_n=pl.col("rel").cast(pl.Int64, strict=False))
    for row in q.filter(pl.col("rel_n").is_null()).head(20).iter_rows(named=True):
        problems.error(
            qp, "the relevance must be an integer", line=row["line"], field="rel", found=repr(row["rel"])
        )
    r = r.with_columns(score_n=pl.col("score").cast(pl.Float64, strict=False))
    badscore = r.filter(pl.col("score_n").is_null() | ~pl.col("score_n").is_finite()).head(20)
    for row in badscore.iter_rows(named=True):
        problems.error(
            rp, "the score must be a finite number", line=row["line"], field="score", found=repr(row["score"])
        )
    for frame, path, _what in ((q, qp, "qrels"), (r, rp, "run")):
        if frame.height == 0:
            continue
        for row in repeats(frame, ["qid", "chunk_id"]).head(20).iter_rows(named=True):
            problems.error(
                path,
                f"docno '{row['chunk_id']}' appears twice for query '{row['qid']}' (first on line {row['first']})",
                line=row["line"],
                expected="each docno once per query",
                hint="trec_eval refuses duplicates too; keep one line",
            )
    if problems.errors:
        raise InputError(problems.errors)
    runid = r["tag"][0] if r.height else ""
    rc, qc = categorical(r["chunk_id"], q["chunk_id"])
    return TrecFiles(
        qrels=q.select("qid", chunk_id=qc, rel="rel_n"),
        run=r.select("qid", chunk_id=rc, score="score_n"),
        runid=runid,
    )
