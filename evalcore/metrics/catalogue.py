"""The metric catalogue: every metric's name, kind, direction and role, and the default sets — the one
place scoring, comparison, the gate, the CLI and the dashboard learn them from.

Retrieval metrics are named by :mod:`evalcore.metrics.measures` (``R@5``, ``nDCG@10``...); generation
metrics have fixed names; imported scores are ``ext:<name>``.

**Direction.** ``higher_is_better`` is True, False, or None for a rate that is neither good nor bad
(``no_answer``: a rise can mean an index problem, a fall to zero that the system started guessing).
:meth:`MetricInfo.better` turns a delta so that positive is an improvement, and is the only place that
decides what "improved" and "regressed" mean; a metric without a direction neither improves nor
regresses.

>>> metric_info("false_refusal").better(-0.25)
0.25
>>> metric_info("no_answer").better(0.5) is None
True
>>> metric_info("R@5").regressed(-0.1), metric_info("false_refusal").regressed(-0.1)
(True, False)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import polars as pl

from evalcore.metrics.measures import SPECS, Measure, parse_measure

EPS = 1e-12  # deltas smaller than this are ties (floating-point noise, not a change)

Kind = Literal["retrieval", "generation", "external"]
# What a change in the metric says about a question (compare's diagnosis):
#   retrieval  — the right chunk reached the model, or not;   answer — the answer was right / faithful;
#   abstention — the system declined when it should (not);    soft   — reported, never a question's status;
#   rate       — a rate with no better direction.
Role = Literal["retrieval", "answer", "abstention", "soft", "rate"]


@dataclass(frozen=True)
class MetricInfo:
    name: str
    kind: Kind
    higher_is_better: bool | None
    role: Role
    description: str  # the definition, formula-like (docs, the report's glossary)
    plain: str = ""  # the same in everyday words, for someone who has not met the metric

    def better(self, delta: float | None) -> float | None:
        """``delta`` turned so that positive is an improvement; None without a direction."""
        if delta is None or self.higher_is_better is None:
            return None
        return delta if self.higher_is_better else -delta

    def better_expr(self, delta: pl.Expr) -> pl.Expr:
        """:meth:`better` as a polars expression."""
        if self.higher_is_better is None:
            return pl.lit(None, dtype=pl.Float64)
        return delta if self.higher_is_better else -delta

    @property
    def judged(self) -> bool:
        """Whether the judge's verdicts make this metric (so a changed judge changes it)."""
        return self.name in JUDGED

    @property
    def needs(self) -> str:
        """What a question must have for the metric to apply to it, in words (why it may be n/a)."""
        return _NEEDS.get(self.name) or {
            "retrieval": "an answerable question with labeled chunks",
            "external": "an imported score",
        }.get(self.kind, "")

    def improved(self, delta: float | None) -> bool:
        b = self.better(delta)
        return b is not None and b > EPS

    def regressed(self, delta: float | None) -> bool:
        b = self.better(delta)
        return b is not None and b < -EPS

    @property
    def direction(self) -> str:
        """How a person reads it: "higher", "lower" or "either" is better."""
        return {True: "higher", False: "lower", None: "either"}[self.higher_is_better]


GENERATION: dict[str, MetricInfo] = {
    m.name: m
    for m in [
        MetricInfo(
            "faithfulness",
            "generation",
            True,
            "answer",
            "SUPPORTED claims whose quote is in the context / claims; n/a without claims",
            "how much of the answer is backed by the chunks the model was given",
        ),
        MetricInfo(
            "correctness",
            "generation",
            True,
            "answer",
            "judge verdict against the reference answer (1, 0.5, 0)",
            "whether the answer agrees with the reference answer (half marks for partly)",
        ),
        MetricInfo(
            "relevance",
            "generation",
            True,
            "soft",
            "does the answer address the question (0..1)",
            "whether the answer is about what was asked",
        ),
        MetricInfo(
            "judged_context_precision",
            "generation",
            True,
            "soft",
            "the judge's view of retrieval: given chunks it graded relevant / given chunks",
            "how many of the chunks given to the model the judge found useful",
        ),
        MetricInfo(
            "judged_context_recall",
            "generation",
            True,
            "soft",
            "the judge's view of retrieval: reference statements a given chunk states / statements",
            "how much of the reference answer the given chunks contain, as the judge reads them",
        ),
        MetricInfo(
            "abstention",
            "generation",
            True,
            "abstention",
            "unanswerable questions: declined to answer",
            "how often the system said it could not answer when the documents hold no answer",
        ),
        MetricInfo(
            "false_refusal",
            "generation",
            False,
            "abstention",
            "answerable questions: declined to answer",
            "how often the system declined a question it could have answered (lower is better)",
        ),
        MetricInfo(
            "no_answer",
            "generation",
            None,
            "rate",
            "all questions: declined to answer",
            "how often the system gave no answer at all (neither good nor bad by itself)",
        ),
    ]
}
GENERATION_METRICS: tuple[str, ...] = tuple(GENERATION)
# Made from the judge's verdicts: not comparable between runs judged by different judges.
JUDGED: tuple[str, ...] = (
    "faithfulness",
    "correctness",
    "relevance",
    "judged_context_precision",
    "judged_context_recall",
    "relevance_ragas",
)
_NEEDS = {
    "faithfulness": "judge claims about the answer",
    "correctness": "a judge verdict on an answerable question",
    "relevance": "a relevance score from the judge",
    "judged_context_precision": "the judge's chunk grades (a judge revision: `evalcore judge`)",
    "relevance_ragas": "questions the judge wrote from the answer (a judge revision) and an embedder",
    "judged_context_recall": "the judge's reference coverage (a judge revision of a question with a reference)",
    "abstention": "an unanswerable question with a recorded answer",
    "false_refusal": "an answerable question with a recorded answer",
    "no_answer": "a recorded answer (or error)",
}

# The retrieval measures scored when none are named (CLI, dashboard, comparisons).
DEFAULT_MEASURES: tuple[str, ...] = ("R@5", "R@10", "P@5", "hit@5", "RR@10", "nDCG@10", "AP", "judged@10")
# What a person looks at first: Overview's trend, the headline of a run.
HEADLINE: tuple[str, ...] = ("R@5", "nDCG@10", "faithfulness", "correctness", "abstention")


# Reported only when asked for (an embedder given): not one of the metrics every run is scored on.
RELEVANCE_RAGAS = MetricInfo(
    "relevance_ragas",
    "generation",
    True,
    "soft",
    "RAGAS answer relevance: mean cosine of the question to questions the judge wrote from the answer",
    "whether the answer is about what was asked, measured by how close the question is to questions "
    "the answer would answer",
)


def metric_info(name: str) -> MetricInfo:
    """Metadata of any metric column name; ``ValueError`` for a name that is no metric."""
    if name in GENERATION:
        return GENERATION[name]
    if name == RELEVANCE_RAGAS.name:
        return RELEVANCE_RAGAS
    if name.startswith("ext:"):
        return MetricInfo(
            name,
            "external",
            True,
            "soft",
            "computed outside evalcore (imported); not recomputed here",
            "a score another tool computed, shown as it was imported",
        )
    m = parse_measure(name)
    return MetricInfo(str(m), "retrieval", True, "retrieval", SPECS[m.name].formula, _plain_measure(m))


# Retrieval measures in everyday words; {k} is the cutoff ("the top 5"), {rel} the grade counted as
# relevant when it is not the default. Measures without words here (trec_eval's own) keep their title.
_PLAIN_MEASURE = {
    "R": "share of the chunks labeled relevant that are in {top}",
    "P": "share of {top} that are labeled relevant",
    "hit": "whether any chunk labeled relevant is in {top}",
    "RR": "how high the first relevant chunk ranks (1 = first, 0.5 = second, …){within}",
    "nDCG": "how well {top} puts the most relevant chunks first (1 = the best possible order)",
    "nDCG_exp": "as nDCG, with highly relevant chunks weighted much more",
    "AP": "how early all the relevant chunks come{within} (1 = all of them first)",
    "Rprec": "share of the top R retrieved that are relevant, R being how many are labeled relevant",
    "judged": "share of {top} that someone has labeled (relevant or not): low means the retrieval "
    "figures rest on few labels",
    "bpref": "how often relevant chunks rank above chunks labeled not relevant (unlabeled ones ignored)",
}


def _plain_measure(m: Measure) -> str:
    words = _PLAIN_MEASURE.get(m.name)
    if words is None:
        return m.spec.title
    top = f"the top {m.cutoff} retrieved" if m.cutoff is not None else "the retrieved chunks"
    within = f" within the top {m.cutoff}" if m.cutoff is not None else ""
    text = words.format(top=top, within=within)
    return text if m.rel == 1 else f"{text}; relevant means graded {m.rel} or higher"


def is_metric(name: str) -> bool:
    try:
        metric_info(name)
    except ValueError:
        return False
    return True


def retrieval_only(names: list[str] | tuple[str, ...]) -> list[str]:
    """The retrieval measures among metric names (what must be computed from the ranked lists)."""
    return list(dict.fromkeys(n for n in names if metric_info(n).kind == "retrieval"))
