"""A drop-in for trec_eval on classic TREC files, printing trec_eval's own output format.

    evalcore trec QRELS RUN [-q] [-c] [-l LEVEL] [-m MEASURE ...]

Supported measures (trec_eval names): runid, num_q, num_ret, num_rel, num_rel_ret, map, gm_map, Rprec,
recip_rank, P, recall, ndcg, ndcg_cut, map_cut, success — with cutoffs as ``P.5,10``. Without ``-m``
the supported part of trec_eval's "official" set is printed (bpref and iprec_at_recall are not
implemented; a note on stderr says so, so a diff against trec_eval is explained).

Query set, as trec_eval: a query is evaluated when it has both results and qrels (a qrels query whose
judgments are all below the relevance level counts, scoring 0). ``-c`` averages over every qrels query,
those missing from the run counting 0. Output order: per query (``-q``, sorted by qid) then ``all``.
"""

from __future__ import annotations

import math
import mmap
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from evalcore import _kernel  # noqa: F401 - numba is imported with this module: every TREC read needs it
from evalcore.errors import InputError, Problems
from evalcore.measures import Measure
from evalcore.retrieval import _groups, categorical, evaluate, kernel, preload

MIN_GEO_MEAN = 0.00001
DEFAULT_CUTS = {
    "P": [5, 10, 15, 20, 30, 100, 200, 500, 1000],
    "recall": [5, 10, 15, 20, 30, 100, 200, 500, 1000],
    "ndcg_cut": [5, 10, 15, 20, 30, 100, 200, 500, 1000],
    "map_cut": [5, 10, 15, 20, 30, 100, 200, 500, 1000],
    "success": [1, 5, 10],
}
# trec_eval prints measures in this order whatever order -m named them.
ORDER = ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "recip_rank",
         "P", "recall", "ndcg", "ndcg_cut", "map_cut", "success"]
OFFICIAL = ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "recip_rank", "P"]
OFFICIAL_UNSUPPORTED = ["bpref", "iprec_at_recall"]
ALL_TREC = ORDER
_OURS = {"P": "P", "recall": "R", "ndcg_cut": "nDCG", "map_cut": "AP", "success": "hit"}
SUMMARY_ONLY = {"runid", "num_q", "gm_map"}
INTEGER = {"num_q", "num_ret", "num_rel", "num_rel_ret"}


@dataclass(frozen=True)
class TrecFiles:
    """The two files, as frames. ``chunk_id`` is categorical in both, sharing one mapping, so joins
    and :func:`~evalcore.retrieval.evaluate` work on integer codes; its values are the docnos."""

    qrels: pl.DataFrame  # qid, chunk_id, rel
    run: pl.DataFrame  # qid, chunk_id, score
    runid: str


_FAST: dict[str, tuple[list[int], list[str], dict[str, pl.DataType | type[pl.DataType]], int]] = {
    # kind: (columns read, their names, typed columns, fields per line).
    "qrels": ([0, 2, 3], ["qid", "chunk_id", "rel"], {"column_3": pl.Int64}, 4),
    "run": ([0, 2, 4], ["qid", "chunk_id", "score"], {"column_4": pl.Float64}, 6),
}


def _fast_read(path: Path, kind: str, chunk_dtype: pl.DataType | None = None) -> tuple[pl.DataFrame, str] | None:
    """Read a well-formed TREC file with polars' CSV reader and check it vectorised. Returns the
    frame (docnos parsed straight into the categorical ``chunk_dtype``) and the first line's last
    field (a run's tag).

    Returns None at the first sign of anything unusual — tabs, carriage returns, runs of spaces, a
    short or long line, a non-numeric or non-finite value — and the caller takes the general path,
    which reports every problem with its line number. A clean file never needs that path.
    """
    df = _fast_parse(path, kind, chunk_dtype or pl.Categorical(pl.Categories.random()))
    return None if df is None else _fast_check(path, kind, df)


def _fast_parse(path: Path, kind: str, chunk_dtype: pl.DataType) -> pl.DataFrame | None:
    cols, _, types, _ = _FAST[kind]
    try:
        return pl.read_csv(
            path, has_header=False, separator=" ", quote_char=None, columns=cols,
            schema_overrides={**types, "column_2": chunk_dtype}, infer_schema=False, truncate_ragged_lines=False,
        )
    except (pl.exceptions.PolarsError, OSError):
        return None


def _fast_check(path: Path, kind: str, df: pl.DataFrame) -> tuple[pl.DataFrame, str] | None:
    """The checks of :func:`_fast_read` on a parsed file (one compiled pass over its bytes)."""
    _, names, _, n_fields = _FAST[kind]
    try:
        with path.open("rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            view = np.frombuffer(mm, dtype=np.uint8)
            spaces, odd, first_end = kernel().scan_text(view)
            del view  # the map cannot close while an array points into it
            first_line = mm[:first_end]
    except (OSError, ValueError):  # ValueError: an empty file cannot be mapped
        return None
    # A tab can hide a field from the space-separated reader ("1\tQ0  d" is still 6 fields), so any
    # tab (or carriage return) sends the file to the general path, which splits on all white space.
    if odd or df.height == 0 or df.width != len(names):
        return None
    # The reader refuses a line with too many fields (a doubled or trailing space makes one), so
    # exactly n-1 spaces per line means no line is short either.
    if spaces != (n_fields - 1) * df.height:
        return None
    df.columns = names
    if df.null_count().sum_horizontal().item() > 0:
        return None
    if kind == "run" and not df["score"].is_finite().all():
        return None
    return df, first_line.split(b" ")[-1].decode("utf-8", "replace")


def _has_duplicates(df: pl.DataFrame, codes: np.ndarray) -> bool:
    """Does a (qid, chunk) pair repeat? One pass over each question's rows, in the compiled kernel."""
    start, end, _, order = _groups(df["qid"])
    if order is not None:
        codes = codes[order]
    n = int(codes.max()) + 1 if codes.size else 0
    return bool(kernel().first_repeat(start, end, codes, n) >= 0)


def _split_lines(path: Path, n_fields: int, names: list[str], what: str, example: str, problems: Problems) -> pl.DataFrame:
    try:
        raw = pl.read_csv(
            path, has_header=False, separator="\x1f", quote_char=None, new_columns=["raw"],
            schema_overrides={"raw": pl.String}, encoding="utf8",
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
    df = df.filter(pl.col("raw").str.strip_chars() != "")
    bad = df.filter(pl.col("parts").list.len() != n_fields).head(20)
    for row in bad.iter_rows(named=True):
        problems.error(
            path, f"a {what} line must have {n_fields} fields", line=row["line"],
            expected=example, found=f"{len(row['parts'])} field(s): {row['raw'][:60]!r}",
        )
    if bad.height:
        return pl.DataFrame()
    return df.select(pl.col("line").cast(pl.Int64), *[pl.col("parts").list.get(i).alias(n) for i, n in enumerate(names)])


def read_trec(qrels_path: str | Path, run_path: str | Path) -> TrecFiles:
    """Read a TREC qrels file (``qid iter docno rel``) and run (``qid Q0 docno rank score tag``).

    Raises :class:`InputError` naming the file and line of every problem.
    """
    qp, rp = Path(qrels_path), Path(run_path)
    preload()  # the compiled kernel loads while the files are parsed
    docno = pl.Categorical(pl.Categories.random())  # one mapping for both files' docnos
    parsed_q, parsed_r = _fast_parse(qp, "qrels", docno), _fast_parse(rp, "run", docno)
    # Both files are parsed before the checks, which need the kernel: it loads meanwhile.
    fast_q = None if parsed_q is None else _fast_check(qp, "qrels", parsed_q)
    fast_r = None if parsed_r is None else _fast_check(rp, "run", parsed_r)
    if fast_q is not None and fast_r is not None:
        (q, _), (r, runid) = fast_q, fast_r
        qc, rc = q["chunk_id"], r["chunk_id"]
        # Duplicates are rare: when the quick check sees one, the general path names its lines.
        if not _has_duplicates(q, qc.to_physical().to_numpy()) and not _has_duplicates(r, rc.to_physical().to_numpy()):
            return TrecFiles(qrels=q, run=r, runid=runid)
    problems = Problems()
    q = _split_lines(qp, 4, ["qid", "iter", "chunk_id", "rel"], "qrels", "'qid iter docno rel'", problems)
    r = _split_lines(rp, 6, ["qid", "q0", "chunk_id", "rank", "score", "tag"], "run", "'qid Q0 docno rank score tag'", problems)
    if problems.errors:
        raise InputError(problems.errors)
    q = q.with_columns(rel_n=pl.col("rel").cast(pl.Int64, strict=False))
    for row in q.filter(pl.col("rel_n").is_null()).head(20).iter_rows(named=True):
        problems.error(qp, "the relevance must be an integer", line=row["line"], field="rel", found=repr(row["rel"]))
    r = r.with_columns(score_n=pl.col("score").cast(pl.Float64, strict=False))
    badscore = r.filter(pl.col("score_n").is_null() | ~pl.col("score_n").is_finite()).head(20)
    for row in badscore.iter_rows(named=True):
        problems.error(rp, "the score must be a finite number", line=row["line"], field="score", found=repr(row["score"]))
    for frame, path, _what in ((q, qp, "qrels"), (r, rp, "run")):
        if frame.height == 0:
            continue
        dup = frame.with_columns(first=pl.col("line").min().over("qid", "chunk_id")).filter(pl.col("line") != pl.col("first"))
        for row in dup.head(20).iter_rows(named=True):
            problems.error(
                path, f"docno '{row['chunk_id']}' appears twice for query '{row['qid']}' (first on line {row['first']})",
                line=row["line"], expected="each docno once per query",
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


def parse_trec_measures(args: list[str] | None) -> tuple[dict[str, list[int] | None], list[str]]:
    """trec_eval ``-m`` arguments to {measure: cutoffs}; also returns names that were skipped."""
    wanted: dict[str, list[int] | None] = {}
    skipped: list[str] = []
    for arg in args or ["official"]:
        base, _, params = arg.partition(".")
        if base in ("official", "all_trec"):
            for name in OFFICIAL if base == "official" else ALL_TREC:
                wanted.setdefault(name, list(DEFAULT_CUTS[name]) if name in DEFAULT_CUTS else None)
            if base == "official":
                skipped.extend(OFFICIAL_UNSUPPORTED)
            continue
        if base not in ORDER:
            msg = f"measure {base!r} is not supported by evalcore trec; supported: {', '.join(ORDER)}"
            raise ValueError(msg)
        if base in DEFAULT_CUTS:
            cuts = [int(c) for c in params.split(",") if c] if params else list(DEFAULT_CUTS[base])
            if any(c < 1 for c in cuts):
                msg = f"cutoffs of {base} must be positive"
                raise ValueError(msg)
            wanted[base] = sorted(set(cuts))
        elif params:
            msg = f"measure {base!r} takes no parameters"
            raise ValueError(msg)
        else:
            wanted[base] = None
    return wanted, skipped


def trec_eval(
    files: TrecFiles,
    measures: dict[str, list[int] | None],
    *,
    level: int = 1,
    complete: bool = False,
    per_query: bool = True,
) -> tuple[list[tuple[str, str, float | int | str]], list[tuple[str, str, float | int | str]]]:
    """Compute trec_eval's values. Returns (per-query rows, summary rows) as (name, qid, value);
    the per-query rows only with ``per_query`` (``-q``)."""
    run_q = files.run["qid"].unique()
    qids = sorted(set(run_q) & set(files.qrels["qid"].unique()), key=lambda s: s.encode())
    ap, rr, rprec = Measure("AP", None, level), Measure("RR", None, level), Measure("Rprec", None, level)
    ours: list[Measure] = [ap, rr, rprec, Measure("nDCG", None)]
    for name, cuts in measures.items():
        if name in _OURS and cuts:
            ours.extend(Measure(_OURS[name], c, level if name != "ndcg_cut" else 1) for c in cuts)
    num_ret = files.run.group_by("qid").agg(num_ret=pl.len())
    # Relevant retrieved = P@depth x depth at a depth no ranking exceeds: the kernel counts it, with
    # no join of the whole run against the qrels.
    depth = max(1, int(num_ret.select(pl.col("num_ret").max()).item() or 1))
    everything = Measure("P", depth, level)
    vals = evaluate(files.run, files.qrels, [*ours, everything], qids=qids)
    nrel = files.qrels.group_by("qid").agg(num_rel=(pl.col("rel") >= level).sum())
    table = (
        vals.join(num_ret, on="qid", how="left")
        .join(nrel, on="qid", how="left")
        .with_columns(num_rel_ret=(pl.col(str(everything)) * depth).round().cast(pl.Int64))
    )  # evaluate returns qids in byte order; left joins keep it

    # The per-query measures in trec_eval's order: (printed name, column, integer?).
    columns: list[tuple[str, str, bool]] = []
    for name in ORDER:
        if name not in measures or name in SUMMARY_ONLY:
            continue
        if name in INTEGER:
            columns.append((name, name, True))
        elif name in ("map", "Rprec", "recip_rank", "ndcg"):
            columns.append((name, str({"map": ap, "Rprec": rprec, "recip_rank": rr, "ndcg": Measure("nDCG")}[name]), False))
        else:
            for c in measures[name] or []:
                m = Measure(_OURS[name], c, level if name != "ndcg_cut" else 1)
                columns.append((f"{name}_{c}", str(m), False))

    values = {col: table[col].to_list() for _, col, _ in columns}
    n_eval = len(qids)
    n_avg = files.qrels["qid"].n_unique() if complete else n_eval
    rows: list[tuple[str, str, float | int | str]] = []
    if per_query:
        for i, q in enumerate(table["qid"].to_list()):
            rows.extend((printed, q, int(values[col][i]) if is_int else float(values[col][i])) for printed, col, is_int in columns)

    summary: list[tuple[str, str, float | int | str]] = []
    aps = table[str(ap)].to_list()
    for name in ORDER:
        if name not in measures:
            continue
        if name == "runid":
            summary.append(("runid", "all", files.runid))
        elif name == "num_q":
            summary.append(("num_q", "all", n_avg))
        elif name == "gm_map":
            logs = sum(math.log(max(a, MIN_GEO_MEAN)) for a in aps) + (n_avg - n_eval) * math.log(MIN_GEO_MEAN)
            summary.append(("gm_map", "all", math.exp(logs / n_avg) if n_avg else 0.0))
        else:
            for printed, col, is_int in columns:
                if printed == name or (printed.startswith(name + "_") and printed[len(name) + 1 :].isdigit()):
                    # Summed in qid order, one value after another, as trec_eval sums.
                    total = sum(values[col])
                    summary.append((printed, "all", int(total) if is_int else (total / n_avg if n_avg else 0.0)))
    return rows, summary


def format_rows(rows: list[tuple[str, str, float | int | str]]) -> str:
    """trec_eval's line format: ``%-22s\\t%s\\t%6.4f`` (integers and the run id as they are)."""
    out = []
    for name, qid, value in rows:
        if isinstance(value, (str, int)):
            out.append(f"{name:<22}\t{qid}\t{value}")
        else:
            out.append(f"{name:<22}\t{qid}\t{value:6.4f}")
    return "\n".join(out) + ("\n" if out else "")
