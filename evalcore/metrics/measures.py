"""What a retrieval measure *is*: its canonical name, parameters and formula.

How measures are computed lives in :mod:`evalcore.metrics.retrieval`. Names round-trip and are safe as column
names, CLI arguments and URL parameters::

    P@5  R@10  hit@5  RR  RR@10  nDCG@10  nDCG  nDCG_exp@10  AP  AP@100  Rprec  judged@10
    P(rel=2)@5  R(rel=2)@10      # a relevance threshold for the binary measures (default 1)

>>> str(parse_measure("P(rel=2)@5"))
'P(rel=2)@5'
>>> parse_measure("ndcg@10") == parse_measure("nDCG@10")
True
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class MeasureSpec:
    name: str
    title: str
    formula: str
    cutoff: str  # "required", "optional" or "none"
    binary: bool  # takes a relevance threshold


SPECS: dict[str, MeasureSpec] = {
    s.name: s
    for s in [
        MeasureSpec(
            "P",
            "precision@k",
            "|relevant in top k| / k  (missing ranks count as not relevant)",
            "required",
            True,
        ),
        MeasureSpec("R", "recall@k", "|relevant in top k| / |relevant|", "required", True),
        MeasureSpec("hit", "hit@k (success)", "1 if any relevant in top k else 0", "required", True),
        MeasureSpec(
            "RR",
            "reciprocal rank",
            "1 / rank of the first relevant result (0 if none; within k for RR@k)",
            "optional",
            True,
        ),
        MeasureSpec(
            "nDCG",
            "nDCG (linear gain)",
            "DCG@k / IDCG@k, DCG@k = sum_{i<=k} rel_i / log2(i+1), IDCG from all labeled items",
            "optional",
            False,
        ),
        MeasureSpec(
            "nDCG_exp",
            "nDCG (exponential gain)",
            "as nDCG with gain 2^rel_i - 1",
            "optional",
            False,
        ),
        MeasureSpec(
            "AP",
            "average precision",
            "sum over relevant retrieved ranks r (<= k) of P@r, divided by |relevant|",
            "optional",
            True,
        ),
        MeasureSpec("Rprec", "R-precision", "|relevant in top R| / R, R = |relevant|", "none", True),
        MeasureSpec("judged", "judged@k", "|labeled (any grade) in top k| / k", "required", False),
        MeasureSpec(
            "bpref",
            "bpref (binary preference)",
            "mean over relevant retrieved r of 1 - min(|judged non-relevant above r|, R) / min(N, R); "
            "unlabeled chunks are skipped, not counted as non-relevant (Buckley & Voorhees 2004)",
            "none",
            True,
        ),
        # trec_eval's other measures, used by `evalcore trec` (not offered as RAG metrics):
        MeasureSpec(
            "infAP", "inferred AP", "AP estimated from a sampled pool (Yilmaz & Aslam 2006)", "none", True
        ),
        MeasureSpec(
            "iprec",
            "interpolated precision at a recall level",
            "max P at ranks with recall >= level",
            "none",
            True,
        ),
        MeasureSpec(
            "pt11", "11-point average", "mean interpolated precision at recall 0, 0.1, ..., 1", "none", True
        ),
        MeasureSpec("iprec_fma", "iprec, the level's count in one rounding", "as iprec", "none", True),
        MeasureSpec(
            "pt11_fma", "11-point average, the levels' counts in one rounding", "as pt11", "none", True
        ),
        MeasureSpec(
            "iprec_round", "iprec, the level's count rounded (trec_eval 10)", "as iprec", "none", True
        ),
        MeasureSpec(
            "pt11_round",
            "11-point average, the levels' counts rounded (trec_eval 10)",
            "as pt11",
            "none",
            True,
        ),
        MeasureSpec("Rprec_mult", "precision at a multiple of R", "P at (long)(x R + 0.9)", "none", True),
        MeasureSpec(
            "rbp",
            "rank-biased precision (persistence p, default 0.9)",
            "(1 - p) sum_i gain_i p^(i-1), gains scaled to [0, 1]",
            "none",
            False,
        ),
        MeasureSpec(
            "rbp_resid",
            "RBP residual",
            "p^n + (1 - p) sum over unjudged p^(i-1); 0 if none is unjudged",
            "none",
            False,
        ),
        MeasureSpec("unj", "unjudged at k", "|top k outside the judgments| / k", "required", False),
        MeasureSpec("relP", "relative precision", "|relevant in top k| / min(k, R)", "required", True),
        MeasureSpec("nonrel_judged_ret", "judged non-relevant retrieved", "count", "none", True),
        MeasureSpec("num_ret", "retrieved", "count", "none", True),
        MeasureSpec("num_rel_ret", "relevant retrieved", "count", "none", True),
        MeasureSpec("num_rel", "relevant", "count", "none", True),
        MeasureSpec("G", "normalized gain (trec_eval's G)", "see trec_eval's m_G.c", "none", False),
        MeasureSpec(
            "binG", "binary G", "mean over relevant of 1 / log2(2 + non-relevant above)", "none", True
        ),
        MeasureSpec(
            "nDCG_rel", "nDCG averaged over relevant documents", "see trec_eval's m_ndcg_rel.c", "none", False
        ),
        MeasureSpec("RnDCG", "nDCG averaged at the R levels", "see trec_eval's m_Rndcg.c", "none", False),
    ]
}

_ALIASES = {
    "p": "P",
    "precision": "P",
    "r": "R",
    "recall": "R",
    "hit": "hit",
    "success": "hit",
    "rr": "RR",
    "mrr": "RR",
    "ndcg": "nDCG",
    "ndcg_exp": "nDCG_exp",
    "ap": "AP",
    "map": "AP",
    "rprec": "Rprec",
    "r-prec": "Rprec",
    "judged": "judged",
    "bpref": "bpref",
}

_NAME_RE = re.compile(r"^(?P<name>[A-Za-z_-]+)(?:\(rel=(?P<rel>\d+)\))?(?:@(?P<k>\d+))?$")


@dataclass(frozen=True, order=True)
class Measure:
    """A retrieval measure with its parameters. ``str(m)`` is its canonical name."""

    name: str
    cutoff: int | None = None
    rel: int = 1
    param: float = 0.0  # a float parameter of some trec_eval measures (a recall level, a multiple of R)

    @property
    def spec(self) -> MeasureSpec:
        return SPECS[self.name]

    def __str__(self) -> str:
        rel = f"(rel={self.rel})" if self.rel != 1 else ""
        k = f"@{self.cutoff}" if self.cutoff is not None else ""
        p = f"[{self.param:g}]" if self.param else ""
        return f"{self.name}{p}{rel}{k}"


def parse_measure(text: str) -> Measure:
    """Parse a canonical (or alias) measure name; raise ``ValueError`` saying what is accepted."""
    m = _NAME_RE.match(text.strip())
    name = _ALIASES.get(m.group("name").lower()) if m else None
    if m is None or name is None:
        msg = f"unknown measure {text!r}; expected one of {', '.join(known_examples())}"
        raise ValueError(msg)
    spec = SPECS[name]
    k = int(m.group("k")) if m.group("k") else None
    rel = int(m.group("rel")) if m.group("rel") else 1
    if spec.cutoff == "required" and k is None:
        msg = f"measure {text!r} needs a cutoff, e.g. {name}@10"
        raise ValueError(msg)
    if spec.cutoff == "none" and k is not None:
        msg = f"measure {text!r} takes no cutoff; use {name}"
        raise ValueError(msg)
    if k is not None and k < 1:
        msg = f"measure {text!r}: the cutoff must be at least 1"
        raise ValueError(msg)
    if rel != 1 and not spec.binary:
        msg = f"measure {text!r}: {name} uses the graded labels as gains and takes no rel= threshold"
        raise ValueError(msg)
    if rel < 1:
        msg = f"measure {text!r}: rel must be at least 1 (0 means judged not relevant)"
        raise ValueError(msg)
    return Measure(name, k, rel)


def parse_measures(texts: list[str] | tuple[str, ...] | str) -> list[Measure]:
    """Parse several names (a list, or one comma-separated string), keeping order, dropping repeats."""
    if isinstance(texts, str):
        texts = [t for t in texts.split(",") if t.strip()]
    return list(dict.fromkeys(parse_measure(t) for t in texts))


def known_examples() -> list[str]:
    return [
        "P@5",
        "R@10",
        "hit@5",
        "RR",
        "RR@10",
        "nDCG@10",
        "nDCG",
        "nDCG_exp@10",
        "AP",
        "AP@100",
        "Rprec",
        "bpref",
        "judged@10",
    ]
