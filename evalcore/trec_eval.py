"""A drop-in for trec_eval on classic TREC files, printing trec_eval's own output format.

    evalcore trec QRELS RUN [-q] [-c] [-l LEVEL] [-m MEASURE ...]

Query set, as trec_eval: a query is evaluated when it has both results and qrels (a qrels query whose
judgments are all below the relevance level counts, scoring 0). ``-c`` averages over every qrels query,
those missing from the run counting 0. Output order: per query (``-q``, sorted by qid) then ``all``.
"""

from __future__ import annotations

import math

import polars as pl

from evalcore.metrics.measures import Measure
from evalcore.metrics.retrieval import evaluate
from evalcore.runs.trec import TrecFiles

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
