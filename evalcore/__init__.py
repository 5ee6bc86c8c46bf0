"""evalcore: score RAG runs — retrieval and generation apart — compare them, and gate CI.

The public API::

    from evalcore import load_runs, score_run, summarize, compare, RunWriter
"""

from __future__ import annotations

__version__ = "0.1.0"

from evalcore.compare import Comparison, compare
from evalcore.errors import InputError, Problem
from evalcore.io import LoadResult, Run, load_run, load_runs
from evalcore.measures import Measure, parse_measure, parse_measures
from evalcore.retrieval import evaluate
from evalcore.scoring import score_run, summarize
from evalcore.testset import TestSet, read_testset
from evalcore.writer import RunWriter

__all__ = [
    "Comparison", "InputError", "LoadResult", "Measure", "Problem", "Run", "RunWriter", "TestSet",
    "__version__", "compare", "evaluate", "load_run", "load_runs", "parse_measure", "parse_measures",
    "read_testset", "score_run", "summarize",
]
