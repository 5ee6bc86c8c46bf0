"""Run files in and out: discovering and loading run folders (JSON Lines or parquet), the test set,
the writer for pipelines, importers from other tools, and TREC files.

Names are imported on first use, so reading TREC files does not load the run loader."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalcore.faces import face

_API = {
    "TestSetGroup": "groups",
    "find_group": "groups",
    "group_runs": "groups",
    "LoadResult": "load",
    "Run": "load",
    "RunEntry": "load",
    "RunFolder": "load",
    "discover_runs": "load",
    "load_run": "load",
    "load_runs": "load",
    "parsed_before": "load",
    "read_run": "load",
    "is_remote": "remote",
    "resolve": "remote",
    "runs_location": "remote",
    "HELDOUT": "testset",
    "TestSet": "testset",
    "is_heldout": "testset",
    "read_testset": "testset",
    "RunWriter": "writer",
}
__all__ = [
    "HELDOUT",
    "LoadResult",
    "Run",
    "RunEntry",
    "RunFolder",
    "RunWriter",
    "TestSet",
    "TestSetGroup",
    "discover_runs",
    "find_group",
    "group_runs",
    "is_heldout",
    "is_remote",
    "load_run",
    "load_runs",
    "parsed_before",
    "read_run",
    "read_testset",
    "resolve",
    "runs_location",
]
__getattr__, __dir__ = face(__name__, _API)

if TYPE_CHECKING:
    from evalcore.runs.groups import TestSetGroup, find_group, group_runs
    from evalcore.runs.load import (
        LoadResult,
        Run,
        RunEntry,
        RunFolder,
        discover_runs,
        load_run,
        load_runs,
        parsed_before,
        read_run,
    )
    from evalcore.runs.remote import is_remote, resolve, runs_location
    from evalcore.runs.testset import HELDOUT, TestSet, is_heldout, read_testset
    from evalcore.runs.writer import RunWriter
