"""evalcore: score RAG runs — retrieval and generation apart — compare them, and gate CI.

The public API::

    from evalcore import load_runs, score_run, summarize, compare, RunWriter
"""

from __future__ import annotations

from evalcore._version import __version__
from evalcore.compare import Comparison, compare
from evalcore.errors import InputError, Problem
from evalcore.metrics.measures import Measure, parse_measure, parse_measures
from evalcore.metrics.retrieval import evaluate
from evalcore.runs.load import LoadResult, Run, load_run, load_runs
from evalcore.runs.testset import TestSet, read_testset
from evalcore.runs.writer import RunWriter
from evalcore.score import score_run, summarize

__all__ = [
    "Comparison", "InputError", "LoadResult", "Measure", "Problem", "Run", "RunWriter", "TestSet",
    "__version__", "compare", "evaluate", "load_run", "load_runs", "parse_measure", "parse_measures",
    "read_testset", "score_run", "summarize",
]
