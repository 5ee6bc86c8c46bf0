"""evalcore: score RAG runs — retrieval and generation apart — compare them, and gate CI.

The public API::

    from evalcore import load_runs, score_run, summarize, compare, RunWriter

Names are imported on first use (PEP 562), so ``evalcore`` and its CLI start without loading every
module: ``evalcore import`` does not pay for the statistics, and nothing pays for what it does not use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalcore._version import __version__

# name -> the module that owns it. (No module of the package may share a name with the API: importing
# it would set the package attribute to the module, shadowing the function; hence comparison.py.)
_API = {
    "Comparison": "evalcore.comparison",
    "compare": "evalcore.comparison",
    "InputError": "evalcore.errors",
    "Problem": "evalcore.errors",
    "LoadResult": "evalcore.runs.load",
    "Run": "evalcore.runs.load",
    "load_run": "evalcore.runs.load",
    "load_runs": "evalcore.runs.load",
    "Measure": "evalcore.metrics.measures",
    "parse_measure": "evalcore.metrics.measures",
    "parse_measures": "evalcore.metrics.measures",
    "evaluate": "evalcore.metrics.retrieval",
    "score_run": "evalcore.score",
    "score_runs": "evalcore.score",
    "summarize": "evalcore.score",
    "TestSet": "evalcore.runs.testset",
    "read_testset": "evalcore.runs.testset",
    "RunWriter": "evalcore.runs.writer",
}

__all__ = [  # noqa: RUF022 - the version first, then the API in order
    "__version__",
    "Comparison",
    "InputError",
    "LoadResult",
    "Measure",
    "Problem",
    "Run",
    "RunWriter",
    "TestSet",
    "compare",
    "evaluate",
    "load_run",
    "load_runs",
    "parse_measure",
    "parse_measures",
    "read_testset",
    "score_run",
    "score_runs",
    "summarize",
]


def __getattr__(name: str) -> Any:
    if name in _API:
        import importlib

        value = getattr(importlib.import_module(_API[name]), name)
        globals()[name] = value
        return value
    msg = f"module 'evalcore' has no attribute {name!r}"
    raise AttributeError(msg)


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:
    from evalcore.comparison import Comparison, compare
    from evalcore.errors import InputError, Problem
    from evalcore.metrics.measures import Measure, parse_measure, parse_measures
    from evalcore.metrics.retrieval import evaluate
    from evalcore.runs.load import LoadResult, Run, load_run, load_runs
    from evalcore.runs.testset import TestSet, read_testset
    from evalcore.runs.writer import RunWriter
    from evalcore.score import score_run, score_runs, summarize
