"""A drop-in for trec_eval on classic TREC files, printing trec_eval's own output format.

    evalcore trec QRELS RUN [-q] [-c] [-n] [-l LEVEL] [-M MAX] [-N DOCS] [-m MEASURE ...]

Measures and their parameters are trec_eval's (``-m P.5,7,3``, ``-m iprec_at_recall..10,.20``,
``-m utility.2,-1,0,0``, ``-m Rprec_mult.0.2,0.5``, ``-m 11pt_avg..25,.5,.75``, ``-m relstring.20``);
``official`` (the default) and ``all_trec`` name the usual sets. Values are computed by the same
compiled loop as evalcore's own metrics (:mod:`evalcore.metrics._kernel`), each measure as trec_eval's
``m_<name>.c`` computes it, and checked against pytrec_eval (which wraps trec_eval's code).

Query set, as trec_eval: a query is evaluated when it has both results and qrels (a qrels query whose
judgments are all below the relevance level counts, scoring 0). ``-c`` averages over every qrels query:
those missing from the run count 0 on every measure (their relevant documents still count in
``num_rel``), and have no per-query rows. Output: per query (``-q``, sorted by qid) then ``all``,
measures in trec_eval's order whatever order ``-m`` named them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import polars as pl

from evalcore.metrics.measures import Measure
from evalcore.metrics.retrieval import evaluate, rank
from evalcore.runs.trec import TrecFiles

MIN_GEO_MEAN = 0.00001  # trec_eval's floor for the geometric means
CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
RECALL_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
Params = Literal["none", "cuts", "levels", "values", "length", "pairs"]
Levels = Literal["round", "x86", "fused"]
LEVEL_RULES: dict[str, str] = {
    "round": "trec_eval 10: lround(level x R)",
    "x86": "trec_eval 9 on x86-64, and pytrec_eval: (long)(level x R + 0.9)",
    "fused": "trec_eval 9 built with fused multiply-add (arm64), as its own expected test outputs",
}


@dataclass(frozen=True)
class TrecSpec:
    """One trec_eval measure: its parameters (with defaults) and how it prints."""

    name: str
    params: Params = "none"
    default: tuple[float, ...] = ()
    per_query: bool = True  # printed for each query with -q
    summary: bool = True  # printed in the "all" rows
    integer: bool = False  # summed and printed as an integer
    geometric: bool = False  # "all" is the geometric mean (of the named base measure)


@dataclass
class Request:
    """What ``-m`` asked for: measure name -> its parameters (None: the defaults)."""

    measures: dict[str, tuple[float, ...] | None] = field(default_factory=dict)
    pairs: dict[str, dict[str, float]] = field(default_factory=dict)  # ndcg.1=3,2=9 / rbp.p=0.95
    raw: dict[str, str] = field(default_factory=dict)  # parameters as typed, for the printed name
    skipped: list[str] = field(default_factory=list)


# trec_eval 9's measures, in the order it prints them.
SPECS: dict[str, TrecSpec] = {
    s.name: s
    for s in [
        TrecSpec("runid", per_query=False),
        TrecSpec("num_q", per_query=False, integer=True),
        TrecSpec("num_ret", integer=True),
        TrecSpec("num_rel", integer=True),
        TrecSpec("num_rel_ret", integer=True),
        TrecSpec("map"),
        TrecSpec("gm_map", per_query=False, geometric=True),
        TrecSpec("Rprec"),
        TrecSpec("bpref"),
        TrecSpec("recip_rank"),
        TrecSpec("iprec_at_recall", "levels", RECALL_LEVELS),
        TrecSpec("P", "cuts", CUTS),
        TrecSpec("relstring", "length", (10,), summary=False),
        TrecSpec("recall", "cuts", CUTS),
        TrecSpec("infAP"),
        TrecSpec("gm_bpref", per_query=False, geometric=True),
        TrecSpec("Rprec_mult", "levels", (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)),
        TrecSpec("utility", "values", (1.0, -1.0, 0.0, 0.0)),
        TrecSpec("11pt_avg", "values", RECALL_LEVELS),
        TrecSpec("binG"),
        TrecSpec("G"),
        TrecSpec("ndcg", "pairs"),
        TrecSpec("ndcg_rel"),
        TrecSpec("Rndcg"),
        TrecSpec("ndcg_cut", "cuts", CUTS),
        TrecSpec("map_cut", "cuts", CUTS),
        TrecSpec("relative_P", "cuts", CUTS),
        TrecSpec("success", "cuts", (1, 5, 10)),
        TrecSpec("set_P"),
        TrecSpec("set_relative_P"),
        TrecSpec("set_recall"),
        TrecSpec("set_map"),
        TrecSpec("set_F", "values", (1.0,)),
        TrecSpec("num_nonrel_judged_ret", integer=True),
        TrecSpec("rbp", "pairs"),
        TrecSpec("rbp_resid"),
        TrecSpec("unj", "cuts", (5, 10, 20)),
    ]
}
OFFICIAL = [
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
]
ALL_TREC = list(SPECS)
# trec_eval 10's all_trec is complete; a measure a later trec_eval adds would be named here.
NOT_IMPLEMENTED: set[str] = set()


def parse_trec_measures(args: list[str] | None) -> Request:
    """trec_eval ``-m`` arguments (``NAME`` or ``NAME.PARAMS``); ``ValueError`` says what is accepted."""
    req = Request()
    for arg in args or ["official"]:
        base, dot, params = arg.partition(".")
        if base in ("official", "all_trec"):
            for name in OFFICIAL if base == "official" else ALL_TREC:
                if name in NOT_IMPLEMENTED:
                    req.skipped.append(name)
                else:
                    req.measures.setdefault(name, None)
            continue
        spec = SPECS.get(base)
        if spec is None:
            msg = (
                f"unknown measure {base!r}; trec_eval's measures: {', '.join(SPECS)} (or official, all_trec)"
            )
            raise ValueError(msg)
        if base in NOT_IMPLEMENTED:
            msg = (
                f"measure {base!r} is not implemented by evalcore trec yet (gain-based; see docs/metrics.md)"
            )
            raise ValueError(msg)
        if not dot:
            req.measures[base] = None
            continue
        if spec.params == "pairs":
            req.measures[base] = None
            req.pairs[base] = _pairs(arg, base, params)
            req.raw[base] = params
            continue
        if spec.params == "none":
            msg = f"measure {base!r} takes no parameters"
            raise ValueError(msg)
        try:
            values = tuple(float(v) for v in params.split(",") if v != "")
        except ValueError:
            msg = f"cannot read the parameters of {arg!r}: expected numbers separated by commas"
            raise ValueError(msg) from None
        if not values:
            msg = f"{arg!r}: no parameter after the dot"
            raise ValueError(msg)
        if spec.params in ("cuts", "length"):
            values = tuple(float(int(v)) for v in values)  # trec_eval reads cutoffs with atol
            if any(v < 1 for v in values):
                msg = f"cutoffs of {base} must be positive"
                raise ValueError(msg)
        if spec.params in ("cuts", "levels"):
            values = tuple(sorted(set(values)))
        if base == "utility" and len(values) != 4:
            msg = "utility takes 4 coefficients (relevant retrieved, non-relevant retrieved, relevant missed, other)"
            raise ValueError(msg)
        req.measures[base] = values
        req.raw[base] = params
    return req


def _pairs(arg: str, base: str, params: str) -> dict[str, float]:
    """``NAME=VALUE`` parameters: gains of relevance levels (``ndcg.1=3,2=9``, a level's default gain
    is the level) and rbp's persistence (``rbp.p=0.95``)."""
    out: dict[str, float] = {}
    for item in params.split(","):
        key, eq, value = item.partition("=")
        key = key.strip()
        ok_key = key == "p" if base == "rbp" else False
        try:
            int(key)
            ok_key = True
        except ValueError:
            pass
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not eq or not ok_key or math.isnan(number):
            want = "p=0.95 (and LEVEL=GAIN)" if base == "rbp" else "LEVEL=GAIN pairs, e.g. ndcg.1=3,2=9"
            msg = f"cannot read the parameters of {arg!r}: expected {want}"
            raise ValueError(msg)
        out[key] = number
    if base == "rbp" and not 0.0 < out.get("p", 0.9) < 1.0:
        msg = f"{arg!r}: rbp's persistence p must be between 0 and 1"
        raise ValueError(msg)
    return out


Row = tuple[str, str, float | int | str]


@dataclass(frozen=True)
class _Column:
    printed: str
    key: str = ""  # the per-query values are those computed under this key, or
    derive: Callable[[dict[str, list[float]]], list[float]] | None = None  # derived from them
    integer: bool = False

    def values(self, v: dict[str, list[float]]) -> list[float]:
        return self.derive(v) if self.derive is not None else v[self.key]


def trec_eval(
    files: TrecFiles,
    request: Request,
    *,
    level: int = 1,
    complete: bool = False,
    per_query: bool = True,
    limit: int = 0,
    num_docs: int = 0,
    levels: Levels = "round",
) -> tuple[list[Row], list[Row]]:
    """trec_eval's values: (per-query rows, summary rows) as (name, qid, value); per-query rows only
    with ``per_query`` (``-q``). ``limit`` is ``-M`` (0: no limit), ``num_docs`` is ``-N``.
    ``levels``: how iprec_at_recall and 11pt_avg turn a recall level into a count of relevant
    documents (:data:`LEVEL_RULES`; trec_eval 10's rounding by default, see ``_kernel._iprec``)."""
    iprec, pt11 = {"round": ("iprec_round", "pt11_round"), "fused": ("iprec_fma", "pt11_fma")}.get(
        levels, ("iprec", "pt11")
    )
    wanted = request.measures
    qids = sorted(set(files.run["qid"].unique()) & set(files.qrels["qid"].unique()), key=lambda s: s.encode())
    measures: dict[str, Measure] = {}

    def need(key: str, m: Measure) -> str:
        measures[key] = m
        return key

    def params(name: str) -> tuple[float, ...]:
        p = wanted.get(name)
        return p if p is not None else SPECS[name].default

    for base in ("num_ret", "num_rel", "num_rel_ret"):
        need(base, Measure(base, None, level))
    columns: list[tuple[str, list[_Column]]] = []  # in trec_eval's order
    for name, spec in SPECS.items():
        if name not in wanted:
            continue
        cols: list[_Column] = []
        simple = {
            "map": Measure("AP", None, level),
            "gm_map": Measure("AP", None, level),
            "Rprec": Measure("Rprec", None, level),
            "bpref": Measure("bpref", None, level),
            "gm_bpref": Measure("bpref", None, level),
            "recip_rank": Measure("RR", None, level),
            "infAP": Measure("infAP", None, level),
            "rbp_resid": Measure("rbp_resid", None, 1, 0.9),
            "num_nonrel_judged_ret": Measure("nonrel_judged_ret", None, level),
            "G": Measure("G"),
            "binG": Measure("binG", None, level),
            "ndcg_rel": Measure("nDCG_rel"),
            "Rndcg": Measure("RnDCG"),
        }
        if name in ("num_ret", "num_rel", "num_rel_ret"):
            cols.append(_Column(name, key=name, integer=True))
        elif name in simple:
            key = need(name if name not in ("gm_map", "gm_bpref") else name[3:], simple[name])
            cols.append(_Column(name, key=key, integer=spec.integer))
        elif name in ("ndcg", "rbp"):
            pairs = request.pairs.get(name, {})
            printed = name if name not in request.raw else f"{name}_{request.raw[name]}"
            gains = {int(k): g for k, g in pairs.items() if k != "p"}
            if name == "rbp" and not gains:
                key = need(printed, Measure("rbp", None, 1, pairs.get("p", 0.9)))
                cols.append(_Column(printed, key=key))
            elif name == "ndcg" and not gains:
                cols.append(_Column(printed, key=need(printed, Measure("nDCG"))))
            else:
                cols.append(
                    _Column(printed, derive=_gained(files, qids, limit, name, gains, pairs.get("p", 0.9)))
                )
        elif name in ("P", "recall", "ndcg_cut", "map_cut", "relative_P", "success", "unj"):
            ours = {
                "P": "P",
                "recall": "R",
                "ndcg_cut": "nDCG",
                "map_cut": "AP",
                "relative_P": "relP",
                "success": "hit",
                "unj": "unj",
            }
            for cut in params(name):
                m = Measure(ours[name], int(cut), level if name not in ("ndcg_cut", "unj") else 1)
                key = need(f"{name}_{int(cut)}", m)
                cols.append(_Column(key, key=key))
        elif name in ("iprec_at_recall", "Rprec_mult"):
            kind = iprec if name == "iprec_at_recall" else "Rprec_mult"
            for x in params(name):
                key = need(f"{name}_{x:3.2f}", Measure(kind, None, level, x))
                cols.append(_Column(key, key=key))
        elif name == "11pt_avg":
            at = params(name)
            printed = name if name not in request.raw else f"{name}_{request.raw[name]}"
            if at == RECALL_LEVELS:
                cols.append(_Column(printed, key=need(printed, Measure(pt11, None, level))))
            else:
                keys = [need(f"iprec@{x!r}", Measure(iprec, None, level, x)) for x in at]
                cols.append(_Column(printed, derive=_average_of(keys)))
        elif name == "utility":
            printed = name if name not in request.raw else f"{name}_{request.raw[name]}"
            cols.append(_Column(printed, derive=_utility(params(name), num_docs)))
        elif name.startswith("set_"):
            cols.append(
                _Column(name, derive=_set_measure(name, params("set_F")[0] if name == "set_F" else 1.0))
            )
        columns.append((name, cols))

    ms = list(dict.fromkeys(measures.values()))
    vals = evaluate(files.run, files.qrels, ms, qids=qids, limit=limit)  # qids in byte order
    by_measure = {str(m): vals[str(m)].to_list() for m in ms}
    v = {key: by_measure[str(m)] for key, m in measures.items()}
    computed = {
        col.printed: (col.values(v), col.integer or SPECS[name].integer)
        for name, cols in columns
        for col in cols
    }

    n_eval = len(qids)
    all_q = files.qrels["qid"].n_unique()
    n_avg = all_q if complete else n_eval
    rows: list[Row] = []
    if per_query:
        strings = (
            _relstrings(files, qids, int(params("relstring")[0]), limit) if "relstring" in wanted else {}
        )
        for i, q in enumerate(qids):
            for name, cols in columns:
                spec = SPECS[name]
                if not spec.per_query:
                    continue
                if name == "relstring":
                    printed = name if name not in request.raw else f"{name}_{request.raw[name]}"
                    rows.append((printed, q, f"'{strings.get(q, '')}'"))
                    continue
                for col in cols:
                    values, is_int = computed[col.printed]
                    rows.append((col.printed, q, int(values[i]) if is_int else float(values[i])))

    summary: list[Row] = []
    for name, cols in columns:
        spec = SPECS[name]
        if not spec.summary:
            continue
        if name == "runid":
            summary.append(("runid", "all", files.runid))
        elif name == "num_q":
            summary.append(("num_q", "all", n_avg))
        elif spec.geometric:
            values = computed[name][0]
            logs = sum(math.log(max(x, MIN_GEO_MEAN)) for x in values) + (n_avg - n_eval) * math.log(
                MIN_GEO_MEAN
            )
            summary.append((name, "all", math.exp(logs / n_avg) if n_avg else 0.0))
        else:
            for col in cols:
                values, is_int = computed[col.printed]
                total = sum(values)  # in qid order, one value after another, as trec_eval sums
                if name == "num_rel" and complete:
                    total += _missing_relevant(files, set(qids), level)
                summary.append(
                    (col.printed, "all", int(total) if is_int else (total / n_avg if n_avg else 0.0))
                )
    return rows, summary


def _counts(v: dict[str, list[float]]) -> zip[tuple[float, float, float]]:
    return zip(v["num_ret"], v["num_rel"], v["num_rel_ret"], strict=True)


def _average_of(keys: list[str]) -> Callable[[dict[str, list[float]]], list[float]]:
    """The mean of several per-query columns, summed from the last down (as m_11pt_avg.c sums)."""

    def derive(v: dict[str, list[float]]) -> list[float]:
        return [sum(v[k][i] for k in reversed(keys)) / len(keys) for i in range(len(v[keys[0]]))]

    return derive


def _utility(p: tuple[float, ...], num_docs: int) -> Callable[[dict[str, list[float]]], list[float]]:
    """m_utility.c: p1 relevant retrieved + p2 non-relevant retrieved + p3 relevant missed + p4 the rest."""

    def derive(v: dict[str, list[float]]) -> list[float]:
        return [
            p[0] * rr + p[1] * (ret - rr) + p[2] * (rel - rr) + p[3] * (num_docs + rr - ret - rel)
            for ret, rel, rr in _counts(v)
        ]

    return derive


def _set_measure(name: str, beta: float) -> Callable[[dict[str, list[float]]], list[float]]:
    def derive(v: dict[str, list[float]]) -> list[float]:
        return [_set_value(name, ret, rel, rr, beta) for ret, rel, rr in _counts(v)]

    return derive


def _set_value(name: str, ret: float, rel: float, rr: float, beta: float) -> float:
    """The unranked set measures (m_set_*.c) from the counts; 0 where trec_eval leaves them unset."""
    if name == "set_P":
        return rr / ret if ret else 0.0
    if name == "set_recall":
        return rr / rel if rel else 0.0
    if name == "set_relative_P":
        return rr / min(ret, rel) if min(ret, rel) else 0.0
    if not (ret and rel):
        return 0.0
    if name == "set_map":
        return (rr * rr) / (ret * rel)
    p, r = rr / ret, rr / rel
    return (beta + 1.0) * p * r / (beta * p + r) if rr else 0.0


def _missing_relevant(files: TrecFiles, evaluated: set[str], level: int) -> int:
    """Relevant documents of the qrels queries that have no results (``-c`` counts them in num_rel)."""
    q = files.qrels.filter(~pl.col("qid").is_in(list(evaluated)) & (pl.col("rel") >= level))
    return q.height


def _relstrings(files: TrecFiles, qids: list[str], length: int, limit: int) -> dict[str, str]:
    """m_relstring.c: the relevance of the first ``length`` retrieved, a character each — the digit,
    '>' above 9, '-' for a document outside the qrels (or labeled -1, "not in the pool"), '.' pooled
    but not judged (-2), '<' for any other negative label."""
    depth = min(length, limit) if limit > 0 else length
    ranked = (
        rank(files.run.filter(pl.col("qid").is_in(qids)).with_columns(pl.col("chunk_id").cast(pl.String)))
        .filter(pl.col("rank") <= depth)
        .join(
            files.qrels.lazy().with_columns(pl.col("chunk_id").cast(pl.String)),
            on=["qid", "chunk_id"],
            how="left",
        )
        .with_columns(
            c=pl.when(pl.col("rel").is_null() | (pl.col("rel") == -1))
            .then(pl.lit("-"))
            .when(pl.col("rel") > 9)
            .then(pl.lit(">"))
            .when(pl.col("rel") >= 0)
            .then(pl.col("rel").cast(pl.String))
            .when(pl.col("rel") == -2)
            .then(pl.lit("."))
            .otherwise(pl.lit("<"))
        )
        .sort("qid", "rank")
        .group_by("qid", maintain_order=True)
        .agg(pl.col("c").str.join(""))
        .collect()
    )
    return dict(ranked.iter_rows())


def _gained(
    files: TrecFiles, qids: list[str], limit: int, name: str, gains: dict[int, float], p: float
) -> Callable[[dict[str, list[float]]], list[float]]:
    """ndcg and rbp with gains named on the command line (m_ndcg.c, m_rbp.c, gain_init.c): a level
    not named gains its own value; a document outside the qrels (or with a negative label) gains 0.
    nDCG's ideal ranking takes each level's documents in descending gain while the gain is positive;
    RBP scales the gains to [0, 1] when any is outside it."""
    ranked = rank(
        files.run.filter(pl.col("qid").is_in(qids)).with_columns(pl.col("chunk_id").cast(pl.String))
    )
    if limit > 0:
        ranked = ranked.filter(pl.col("rank") <= limit)
    rels = (
        ranked.join(
            files.qrels.lazy().with_columns(pl.col("chunk_id").cast(pl.String)),
            on=["qid", "chunk_id"],
            how="left",
        )
        .sort("qid", "rank")
        .group_by("qid", maintain_order=True)
        .agg(pl.col("rel"))
        .collect()
    )
    retrieved = dict(rels.iter_rows())
    counts: dict[str, dict[int, int]] = {}
    for q, rel, n in files.qrels.filter(pl.col("rel") >= 0).group_by("qid", "rel").len().iter_rows():
        counts.setdefault(q, {})[rel] = n

    def value(q: str) -> float:
        at = counts.get(q, {})
        table = {lv: float(lv) for lv in range(max(at, default=-1) + 1)} | {
            k: float(g) for k, g in gains.items()
        }
        got = [table.get(r, 0.0) if r is not None and r >= 0 else 0.0 for r in retrieved.get(q, [])]
        if name == "rbp":
            lo, hi = min(table.values()), max(table.values())
            if lo < 0 or hi > 1:
                scaled = {k: (g - lo) / (hi - lo) for k, g in table.items()}
                got = [scaled.get(r, 0.0) if r is not None and r >= 0 else 0.0 for r in retrieved.get(q, [])]
            total, cur = 0.0, 1.0
            for g in got:
                if g != 0:
                    total += g * cur
                cur *= p
            return (1.0 - p) * total
        dcg = 0.0
        for i, g in enumerate(got):
            if g != 0:
                dcg += g / math.log2(i + 2)
        ideal = [g for lv, g in sorted(table.items(), key=lambda t: -t[1]) for _ in range(at.get(lv, 0))]
        idcg = 0.0
        for i, g in enumerate(ideal):
            if g <= 0:
                break
            idcg += g / math.log2(i + 2)
        return dcg / idcg if idcg > 0 else 0.0

    def derive(v: dict[str, list[float]]) -> list[float]:
        return [value(q) for q in qids]

    return derive


def format_rows(rows: list[Row]) -> str:
    """trec_eval's line format: ``%-22s\\t%s\\t%6.4f`` (integers, strings and the run id as they are)."""
    out = []
    for name, qid, value in rows:
        if isinstance(value, (str, int)):
            out.append(f"{name:<22}\t{qid}\t{value}")
        else:
            out.append(f"{name:<22}\t{qid}\t{value:6.4f}")
    return "\n".join(out) + ("\n" if out else "")
