"""The metric catalogue shared by scoring, comparison, the gate and the dashboard.

Retrieval metrics are named by :mod:`evalcore.metrics.measures` (``R@5``, ``nDCG@10``...). Generation metrics
have fixed names. ``higher_is_better`` tells comparisons which way is a regression.
"""

from __future__ import annotations

from dataclasses import dataclass

from evalcore.metrics.measures import SPECS, parse_measure


@dataclass(frozen=True)
class MetricInfo:
    name: str
    kind: str  # "retrieval" | "generation" | "external"
    higher_is_better: bool | None  # None: neither direction is a regression (e.g. no-answer rate)
    description: str


GENERATION: dict[str, MetricInfo] = {
    m.name: m
    for m in [
        MetricInfo("faithfulness", "generation", True, "supported claims (quote found) / claims; n/a without claims"),
        MetricInfo("correctness", "generation", True, "judge verdict against the reference answer (1, 0.5, 0)"),
        MetricInfo("relevance", "generation", True, "does the answer address the question (0..1)"),
        MetricInfo("abstention", "generation", True, "unanswerable questions: declined to answer"),
        MetricInfo("false_refusal", "generation", False, "answerable questions: declined to answer"),
        MetricInfo("no_answer", "generation", None, "all questions: declined to answer"),
    ]
}


def metric_info(name: str) -> MetricInfo:
    """Metadata of any metric column name."""
    if name in GENERATION:
        return GENERATION[name]
    if name.startswith("ext:"):
        return MetricInfo(name, "external", True, "computed outside evalcore (imported); not recomputed here")
    m = parse_measure(name)
    return MetricInfo(str(m), "retrieval", True, SPECS[m.name].formula)


def is_metric(name: str) -> bool:
    try:
        metric_info(name)
    except ValueError:
        return False
    return True
