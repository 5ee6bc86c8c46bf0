"""Run files in and out: discovering and loading run folders (JSON Lines or parquet), the test set,
the writer for pipelines, importers from other tools, and TREC files.

Names are imported on first use, so reading TREC files does not load the run loader."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

_API = {
    "LoadResult": "load",
    "Run": "load",
    "RunEntry": "load",
    "RunFolder": "load",
    "discover_runs": "load",
    "load_run": "load",
    "load_runs": "load",
    "read_run": "load",
    "TestSet": "testset",
    "read_testset": "testset",
    "RunWriter": "writer",
}
__all__ = [
    "LoadResult",
    "Run",
    "RunEntry",
    "RunFolder",
    "RunWriter",
    "TestSet",
    "discover_runs",
    "load_run",
    "load_runs",
    "read_run",
    "read_testset",
]


def __getattr__(name: str) -> Any:
    if name in _API:
        import importlib

        value = getattr(importlib.import_module(f"evalcore.runs.{_API[name]}"), name)
        globals()[name] = value
        return value
    msg = f"module 'evalcore.runs' has no attribute {name!r}"
    raise AttributeError(msg)


if TYPE_CHECKING:
    from evalcore.runs.load import (
        LoadResult,
        Run,
        RunEntry,
        RunFolder,
        discover_runs,
        load_run,
        load_runs,
        read_run,
    )
    from evalcore.runs.testset import TestSet, read_testset
    from evalcore.runs.writer import RunWriter
