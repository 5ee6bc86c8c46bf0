"""Ranked-retrieval measures with trec_eval's conventions: polars frames in and out, with the
per-question loop compiled (:mod:`evalcore.metrics._kernel`; ``docs/metrics.md`` says why and how).

Conventions (identical to trec_eval 9.x; checked against pytrec_eval by tests/test_retrieval_oracle.py):

* ranking is by score descending, ties broken by chunk id descending (byte order); any rank field
  in the input is ignored;
* a retrieved chunk without a label is not relevant (``judged@k`` shows how many were labeled);
* "relevant" means grade >= ``rel`` (default 1) for the binary measures; nDCG uses the grade as gain;
* IDCG is computed from **all** labeled items of the question, not from the retrieved list;
* a question with no relevant label scores 0 on every measure (trec_eval's rule); RAG scoring
  excludes unanswerable questions before calling :func:`evaluate`.

Input frames: ``retrieved`` with ``qid, chunk_id, score`` and ``qrels`` with ``qid, chunk_id, rel``.
Output: one row per question, one Float64 column per measure named by its canonical name.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType

import numpy as np
import polars as pl

from evalcore.metrics import _vector
from evalcore.metrics.measures import Measure, parse_measures


def rank(retrieved: pl.DataFrame | pl.LazyFrame) -> pl.LazyFrame:
    """Order each question's chunks trec_eval's way (score descending, then chunk id descending) and
    number them from 1 (``rank`` column). Rows of one question come together in that order; the
    questions come by qid — or, for a frame already in that order (one block of rows per question,
    as run files list them), as they are: checked in one pass instead of sorting 20,000,000 rows."""
    if isinstance(retrieved, pl.DataFrame) and retrieved.height:
        ordered = ranks_as_listed(retrieved)
        if ordered is not None:
            return retrieved.lazy().with_columns(_chunked_like(pl.Series("rank", ordered), retrieved))
    return (
        retrieved.lazy()
        .sort(["qid", "score", "chunk_id"], descending=[False, True, True])
        .with_columns(rank=pl.int_range(1, pl.len() + 1, dtype=pl.Int32).over("qid"))
    )


def _chunked_like(column: pl.Series, df: pl.DataFrame) -> pl.Series:
    """``column`` cut (without a copy) where ``df``'s columns are cut into chunks: a column of one
    chunk beside a frame of many (a big run read a block of lines at a time) makes polars copy the
    whole frame into one chunk to line them up — 0.7 s of 20,000,000 rows."""
    lengths = df.get_column(df.columns[0]).chunk_lengths()
    if len(lengths) <= 1:
        return column
    at = np.cumsum([0, *lengths])
    return pl.concat([column.slice(a, b - a) for a, b in itertools.pairwise(at)], rechunk=False)


def ranks_as_listed(df: pl.DataFrame, *, by_line: bool = False) -> np.ndarray | None:
    """Each row's rank (from 1, as :func:`rank` numbers them) when every question's rows form one
    block already in trec_eval's order (strictly: a tie of score with chunk ids descending), else
    None. ``by_line``: ``df`` is a run's retrieved table, whose ``line`` column (the record a row came
    from) marks the questions — one qid per line and each qid on one line, as the loader ensures — so
    blocks are told apart by comparing integers instead of hashing every qid."""
    if df["score"].null_count() or df["qid"].null_count():
        return None  # the sort puts null scores first (and null qids)
    h0 = None
    if by_line:
        if df["line"].null_count():
            return None
        line = df["line"].to_numpy().astype(np.int64, copy=False)  # (unsigned differences wrap)
        step = line[1:] - line[:-1]
        if step.size and step.min() < 0:
            return None  # lines out of order: a question's rows may be in two blocks
        same = step == 0
        del line, step
    else:
        # Row numbers from numpy over the qids' hashes and the scores: polars' shift of a column in
        # many chunks (a big run read a block at a time, then memory-mapped from the cache) copies
        # it, 0.7 s of a 20,000,000-row frame; comparing the qid strings row by row (rle_id) took
        # 0.56 s of it, their hashes under two seeds take 0.1 s (two different qids alike under
        # both: 1 in 2**128, the standard of the measures' own codes).
        qid = df["qid"]
        h0, h1 = qid.hash(seed=0).to_numpy(), qid.hash(seed=1).to_numpy()
        same = (h0[1:] == h0[:-1]) & (h1[1:] == h1[:-1])
        del h1
    score = df["score"].to_numpy()
    starts = np.concatenate((np.zeros(1, np.int64), np.flatnonzero(~same) + 1))
    # Rows that neither start a question nor score below the row before: ties (or out of order),
    # which must hold chunk ids descending; the string comparison runs on those rows only.
    tied = np.flatnonzero(same & ~(score[1:] < score[:-1])) + 1
    del same
    if tied.size:
        here, before = pl.Series(tied), pl.Series(tied - 1)
        s, c = df["score"], df["chunk_id"]
        if not ((s.gather(here) == s.gather(before)) & (c.gather(here) < c.gather(before))).all():
            return None
    # A question's rows in two blocks: a qid starts two blocks. Told apart by the qids' hashes
    # (two qids sharing one can only make this say no, and the sort then ranks the frame).
    if h0 is not None and pl.Series(h0[starts]).n_unique() != starts.size:
        return None
    del h0
    lengths = np.diff(np.append(starts, df.height))
    rank = np.arange(1, df.height + 1, dtype=np.int32)
    rank -= np.repeat(starts.astype(np.int32), lengths)
    return rank


def _as_measures(measures: Iterable[Measure | str]) -> list[Measure]:
    out: list[Measure] = []
    for m in measures:
        out.extend(parse_measures([m]) if isinstance(m, str) else [m])
    return list(dict.fromkeys(out))


def kernel() -> ModuleType:
    """The compiled per-question loop (:mod:`evalcore.metrics._kernel`), loaded once per process.

    Importing numba and loading the compiled code takes about a second, so it happens on first use
    rather than on ``import evalcore``; :func:`preload` starts it early in the background.
    """
    with _KERNEL_LOCK:
        from evalcore.metrics import _kernel

        if not _KERNEL_READY:
            if not _compiled_before(Path(_kernel.__file__)):
                _log.warning(
                    "evalcore: compiling the retrieval metrics kernel (once after an install; about 10 s)"
                )
            _kernel.warm_up()
            _KERNEL_READY.append(True)
            # Every function of the kernel is in numba's cache now: say so, for other processes.
            with contextlib.suppress(OSError):
                _ready_mark(Path(_kernel.__file__)).touch()
        return _kernel


def _ready_mark(source: Path) -> Path:
    return source.parent / "__pycache__" / f"{source.stem}.warm"


def _compiled_before(source: Path) -> bool:
    """Has numba cached a whole build of the kernel (next to its source, where it caches by default)?
    The mark is written after the last function is compiled, so a build still in progress in another
    process does not count."""
    return _ready_mark(source).exists() and any(
        (source.parent / "__pycache__").glob(f"{source.stem}.score_blocks-*.nbi")
    )


COMPILE_AFTER = 10.0  # seconds after a first, compile-free scoring that the kernel compiles (elsewhere)


def scan_text(buf: np.ndarray) -> tuple[int, bool]:
    """The compiled scan of a TREC file's bytes (spaces, odd) — this one function, without warming up
    the whole kernel, so the reader does not wait for what :func:`preload` loads beside it."""
    from evalcore.metrics import _kernel

    spaces, odd = _kernel.scan_text(buf)
    return int(spaces), bool(odd)


def first_repeat(start: np.ndarray, end: np.ndarray, codes: np.ndarray, n: int) -> int:
    """The first row whose code repeats within its block, or -1 (compiled, as :func:`scan_text`)."""
    from evalcore.metrics import _kernel

    return int(_kernel.first_repeat(start, end, codes, n))


def kernel_at_hand() -> bool:
    """Whether the kernel is loaded, or compiled on disk (numba's cache beside its source), so that
    using it costs about a second rather than a compile. ``RAGTRIAGE_KERNEL=always`` says yes
    regardless (the test suite pins the kernel path; ``tests/metrics/test_vector.py`` the other)."""
    if _KERNEL_READY or os.environ.get("RAGTRIAGE_KERNEL") == "always":
        return True
    return _compiled_before(Path(__file__).with_name("_kernel.py"))  # not imported: that loads numba


def _compile_elsewhere() -> None:
    """Compile the kernel in a low-priority child process: numba caches the build on disk, and this
    process loads it from there on its next scoring — no compile holding this interpreter's lock
    while a user clicks through the dashboard."""
    compile_elsewhere("from evalcore.metrics.retrieval import kernel; kernel()")


def compile_elsewhere(code: str) -> None:
    """Run ``code`` (which compiles something numba caches on disk) in a low-priority child process."""
    import subprocess
    import sys

    def lower_priority() -> None:
        if hasattr(os, "nice"):
            os.nice(15)

    subprocess.Popen(
        [sys.executable, "-c", code],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=lower_priority,
        start_new_session=True,
    )


def preload(*, compile_after: float | None = None) -> None:
    """Load the compiled kernel on a background thread while the caller reads files (which releases
    the interpreter lock), so the first :func:`evaluate` does not wait for it.

    When the kernel is not compiled yet, nothing starts now (a compile beside a user's first page
    view would slow it down; :func:`evaluate` scores in polars meanwhile); with ``compile_after``,
    a low-priority child process compiles it that many seconds later, so later and larger runs get
    it."""
    with _PRELOAD_LOCK:
        if _KERNEL_READY or _PRELOADING:
            return
        if kernel_at_hand():
            _PRELOADING.append(True)
            threading.Thread(target=kernel, name="evalcore-kernel", daemon=True).start()
        elif compile_after is not None:
            _PRELOADING.append(True)
            timer = threading.Timer(compile_after, _compile_elsewhere)
            timer.name, timer.daemon = "evalcore-kernel-compile", True
            timer.start()


_KERNEL_LOCK = threading.Lock()
_log = logging.getLogger("evalcore")
_KERNEL_READY: list[bool] = []
_PRELOAD_LOCK = threading.Lock()
_PRELOADING: list[bool] = []


def categorical(*cols: pl.Series) -> list[pl.Series]:
    """The columns as categoricals sharing one private mapping (one hashing pass per column), so
    that :func:`evaluate` and joins between them use integer codes; values are unchanged."""
    dtype = pl.Categorical(pl.Categories.random())
    return [col.cast(pl.String).cast(dtype) if col.dtype != pl.String else col.cast(dtype) for col in cols]


def _codes(
    *cols: pl.Series, k: ModuleType, ranked: bool = True
) -> tuple[list[np.ndarray], np.ndarray | None, pl.Series]:
    """Integer codes shared by several string columns: the codes of each column, the byte-order rank
    of each code (so trec_eval's tie-break, chunk id descending, compares ranks; None unless
    ``ranked``), and the string of each code (null for a code no column uses).

    Columns that already share one categorical mapping (as :func:`categorical` makes them) are used
    as they are; others are coded by their 64-bit hashes, every value checked against its code's
    string (a collision, never seen but possible, falls back to a categorical mapping).
    """
    if not (isinstance(cols[0].dtype, pl.Categorical) and all(c.dtype == cols[0].dtype for c in cols)):
        hashed = None if any(c.null_count() for c in cols) else _hashed_codes(cols, k)
        if hashed is not None:
            codes, names = hashed
            return codes, _byte_rank(names) if ranked else None, names
        cols = tuple(categorical(*cols))
    codes = [c.to_physical().to_numpy() for c in cols]
    n = max((int(c.max()) + 1 for c in codes if c.size), default=0)
    # The string of each code, from the row where it first appears.
    by_code = pl.Series("s", [None] * n, dtype=pl.String)
    for col, cc in zip(cols, codes, strict=True):
        if cc.size:
            first = pl.Series(cc).arg_unique()
            by_code = by_code.scatter(pl.Series(cc).gather(first), col.gather(first).cast(pl.String))
    return codes, _byte_rank(by_code) if ranked else None, by_code


def _byte_rank(names: pl.Series) -> np.ndarray:
    """The byte-order rank of each code's string (nulls last)."""
    rank = np.empty(names.len(), dtype=np.int64)
    rank[names.arg_sort(nulls_last=True).to_numpy()] = np.arange(names.len())
    return rank


def _hashed_codes(cols: tuple[pl.Series, ...], k: ModuleType) -> tuple[list[np.ndarray], pl.Series] | None:
    """Codes from the values' hashes: one hash of every value and one pass over a table of them
    (:func:`~evalcore.metrics._kernel.first_codes`), several times faster than hashing the strings
    into a categorical mapping or sorting them (a first view of a folder pays this once per run).
    None if two different values share a hash."""
    allv = pl.concat([c.cast(pl.String).rename("v") for c in cols])
    if allv.len() == 0:
        return [np.zeros(0, np.uint32) for _ in cols], allv
    code, first = k.first_codes(allv.hash(seed=0).to_numpy())
    names = allv.filter(pl.Series(first))
    # Two values sharing a hash would share a code: each row's hash under a second seed must equal
    # its code's (two different strings alike under both seeds: about 1 in 2**128). Comparing the
    # strings themselves took 4.8 s of 20,000,000 chunk ids.
    again = allv.hash(seed=1).to_numpy()
    if not np.array_equal(again, again[first][code]):
        return None
    bounds = np.cumsum([0, *(c.len() for c in cols)])
    return [code[a:b] for a, b in itertools.pairwise(bounds)], names


def row_groups(col: pl.Series) -> tuple[np.ndarray, np.ndarray, pl.Series, np.ndarray | None]:
    """Rows of ``col`` as runs of equal values: (start, end, value of each run, order). ``order`` is
    None when each value forms one run (the usual layout: a question's rows together); otherwise
    the rows must be taken in ``order`` (stable, by value) for the runs to be whole."""
    runs = col.rle().struct.unnest()
    if runs["value"].n_unique() != runs.height:
        order = col.to_frame().with_row_index().sort(col.name, maintain_order=True)["index"].to_numpy()
        runs = col.gather(order).rle().struct.unnest()
    else:
        order = None
    ends = np.cumsum(runs["len"].to_numpy().astype(np.int64))
    return ends - runs["len"].to_numpy(), ends, runs["value"], order


def evaluate(
    retrieved: pl.DataFrame | pl.LazyFrame,
    qrels: pl.DataFrame | pl.LazyFrame,
    measures: Iterable[Measure | str],
    *,
    qids: pl.Series | list[str] | None = None,
    limit: int = 0,
) -> pl.DataFrame:
    """Per-question values of ``measures``.

    ``limit`` (trec_eval's ``-M``): only the top ``limit`` chunks of each ranking count (0: all).

    ``qids`` is the set of questions to score (default: questions with both results and labels, as
    trec_eval). A question in ``qids`` with no retrieved chunk scores 0. A chunk listed twice for one
    question is an error (``ValueError``), as in trec_eval.

    >>> import polars as pl
    >>> run = pl.DataFrame({"qid": ["q1", "q1", "q1"], "chunk_id": ["c1", "c4", "c7"], "score": [3.0, 2.0, 1.0]})
    >>> qrels = pl.DataFrame({"qid": ["q1"], "chunk_id": ["c4"], "rel": [1]})
    >>> evaluate(run, qrels, ["R@3", "RR"]).to_dicts()
    [{'qid': 'q1', 'R@3': 1.0, 'RR': 0.5}]
    """
    ms = _as_measures(measures)
    run_df = retrieved.lazy().select("qid", "chunk_id", pl.col("score").cast(pl.Float64)).collect()
    qrels_df = qrels.lazy().select("qid", "chunk_id", pl.col("rel").cast(pl.Int64)).collect()
    wanted = None
    if qids is not None:  # a Series as it is (a Python loop over 10,000 qids costs a run ~2 ms)
        wanted = (
            qids.cast(pl.String).rename("qid")
            if isinstance(qids, pl.Series)
            else pl.Series("qid", list(qids), dtype=pl.String)
        ).unique()
    # The first use after an install: score in polars now, compile the kernel in the background. (A
    # chunk listed twice goes to the kernel, which names it in its error.)
    if (
        not kernel_at_hand()
        and _vector.supports(ms, run_df.height, limit)
        and not run_df.select(pl.struct("qid", "chunk_id").is_duplicated().any()).item()
    ):
        preload(compile_after=COMPILE_AFTER)
        asked = (
            wanted
            if wanted is not None
            else run_df.select("qid").unique().join(qrels_df.select("qid").unique(), on="qid")["qid"]
        )
        return _vector.evaluate_vector(run_df, qrels_df, ms, asked)
    k = kernel()

    # Each question's rows as one block (run files list them together; if not, they are gathered):
    # only each block's qid needs encoding, and blocks are the kernel's unit of work.
    starts, ends, run_q, run_order = row_groups(run_df["qid"])
    lab_starts, lab_ends, lab_q, lab_order = row_groups(qrels_df["qid"])
    if run_order is not None:
        run_df = run_df[run_order]
    if lab_order is not None:
        qrels_df = qrels_df[lab_order]
    extra = [] if wanted is None else [wanted]
    (bq, lq, *wq), _, qnames = _codes(run_q, lab_q, *extra, k=k, ranked=False)
    (c, lc), _, cnames = _codes(run_df["chunk_id"], qrels_df["chunk_id"], k=k, ranked=False)
    # numba compiles read-only and writable arrays apart, and a column from polars may be either: the
    # arrays go to the kernel writable (copied only where one is read-only), the signatures its
    # warm-up compiled, so a kernel compiled in another process is never compiled again here.
    c, lc = np.require(c, requirements="W"), np.require(lc, requirements="W")

    n_q = qnames.len()
    bq = bq.astype(np.int64)
    has_labels = np.zeros(n_q, dtype=bool)
    has_labels[lq] = True
    chosen = np.zeros(n_q, dtype=bool)
    if wanted is None:
        targets = bq[has_labels[bq]]
        chosen[targets] = True
    else:  # the asked questions' codes, in code order (marked: np.unique hashed 1,000,000 in ~1 s)
        chosen[wq[0]] = True
        targets = np.flatnonzero(chosen)
    pick = chosen[bq]
    qstart = np.zeros(n_q, dtype=np.int64)
    qend = np.zeros(n_q, dtype=np.int64)
    qstart[lq], qend[lq] = lab_starts, lab_ends

    score = run_df["score"].to_numpy()
    # The byte order of chunk ids breaks ties of score (trec_eval's rule); a run with no tie within
    # a question, the usual case, never compares two ids and skips sorting them.
    ranked = k.nearly_ranked(starts, ends, score, k.MAX_TIE)
    rank = _tie_rank(ends, score, c, cnames) if ranked else _byte_rank(cnames)
    if not ranked:
        c, score = _rank_order(starts, ends, c, rank, score)
    kind = np.array([k.KINDS[m.name] for m in ms], dtype=np.int64)
    cut = np.array([m.cutoff or 0 for m in ms], dtype=np.int64)
    lvl = np.array([m.rel if m.spec.binary else 1 for m in ms], dtype=np.int64)
    param = np.array([m.param for m in ms], dtype=np.float64)
    dup = k.first_repeat(starts[pick], ends[pick], c, rank.shape[0])
    if dup >= 0:
        qid = qnames[int(bq[np.searchsorted(ends, dup, side="right")])]
        msg = f"chunk {cnames[int(c[dup])]!r} is listed twice for question {qid!r}; each chunk may appear once per ranked list"
        raise ValueError(msg)
    values = _score_parallel(
        k,
        starts[pick],
        ends[pick],
        bq[pick],
        c,
        rank,
        np.require(score, requirements="W"),
        qstart,
        qend,
        lc,
        np.require(qrels_df["rel"].to_numpy(), requirements="W"),
        kind,
        cut,
        lvl,
        param,
        limit,
    )

    # Every target question gets a row; one with no retrieved chunk scores 0 on everything.
    full = np.zeros((n_q, len(ms)))
    full[bq[pick]] = values
    cols = [str(m) for m in ms]
    out = pl.DataFrame(
        {"qid": qnames.gather(pl.Series(targets)), **{c: full[targets, j] for j, c in enumerate(cols)}},
        schema={"qid": pl.String, **dict.fromkeys(cols, pl.Float64)},
    )
    return out.sort("qid")


def _tie_rank(ends: np.ndarray, score: np.ndarray, c: np.ndarray, names: pl.Series) -> np.ndarray:
    """For rows in score order within each block (blocks contiguous, ending at ``ends``): a rank per
    chunk code that orders, by byte order of the id, the chunks of every group of tied scores — the
    only rows the kernel ever compares by id. Ties are rare, so only their chunk ids are sorted."""
    rank = np.zeros(names.len(), dtype=np.int64)
    if score.shape[0] < 2:
        return rank
    same = score[1:] == score[:-1]
    same[ends[:-1] - 1] = False  # the last row of a block and the first of the next
    rows = np.flatnonzero(same)
    if rows.size:
        # The distinct codes of tied rows by marking them (np.unique hashed 10,000,000 rows: 0.3 s).
        mark = np.zeros(names.len(), dtype=bool)
        mark[c[rows]] = True
        mark[c[rows + 1]] = True
        tied = np.flatnonzero(mark)
        rank[tied] = _byte_rank(names.gather(pl.Series(tied)))
    return rank


def _rank_order(
    starts: np.ndarray, ends: np.ndarray, c: np.ndarray, rank: np.ndarray, score: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Rows such that each block is in trec_eval's order (score descending, then chunk id byte order
    descending), for a run not written in rank order — the kernel then only re-orders inside small
    tie groups. Sorted here, once."""
    block = np.repeat(np.arange(starts.shape[0]), ends - starts)
    order = (
        pl.DataFrame({"b": block, "s": score, "r": rank[c]})
        .with_row_index()
        .sort(["b", "s", "r"], descending=[False, True, True])["index"]
        .to_numpy()
    )
    return c[order], score[order]


def _score_parallel(
    k: ModuleType, start: np.ndarray, end: np.ndarray, bq: np.ndarray, *rest: object
) -> np.ndarray:
    """Run the kernel over the blocks split into one part per core, on threads (it releases the
    interpreter lock). Returns the values in block order."""
    rows = int((end - start).sum())
    parts = max(1, min(os.cpu_count() or 1, rows // 250_000))
    if parts == 1:
        return k.score_blocks(start, end, bq, *rest)
    bounds = np.linspace(0, bq.shape[0], parts + 1).astype(np.int64)
    pieces = [(start[a:b], end[a:b], bq[a:b]) for a, b in itertools.pairwise(bounds)]
    with ThreadPoolExecutor(parts) as pool:
        return np.concatenate(list(pool.map(lambda p: k.score_blocks(*p, *rest), pieces)))


def straddling_ties(retrieved: pl.DataFrame, qrels: pl.DataFrame, cutoffs: Iterable[int]) -> pl.DataFrame:
    """For each cutoff k: how many questions have a group of equal scores that the cutoff splits
    (ranks k and k+1 share a score), and in how many of those the tied group mixes labels, so that the
    value at k depends on the tie-break rule. trec_eval breaks such ties by chunk id; other tools do not.

    Returns ``k, straddled, affected``.
    """
    ranked = rank(retrieved.select("qid", "chunk_id", "score")).join(
        qrels.lazy().select("qid", "chunk_id", "rel"), on=["qid", "chunk_id"], how="left"
    )
    ranked = ranked.with_columns(rel=pl.col("rel").fill_null(0))
    out = []
    for k in sorted(set(cutoffs)):
        at_k = ranked.filter(pl.col("rank") == k).select("qid", kscore="score")
        nxt = ranked.filter(pl.col("rank") == k + 1).select("qid", nscore="score")
        split = at_k.join(nxt, on="qid").filter(pl.col("kscore") == pl.col("nscore")).select("qid", "kscore")
        groups = (
            ranked.join(split, on="qid")
            .filter(pl.col("score") == pl.col("kscore"))
            .group_by("qid")
            .agg(mixed=pl.col("rel").n_unique() > 1)
            .collect()
        )
        out.append({"k": k, "straddled": groups.height, "affected": int(groups["mixed"].sum())})
    return pl.DataFrame(out, schema={"k": pl.Int64, "straddled": pl.Int64, "affected": pl.Int64})
