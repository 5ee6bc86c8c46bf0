"""Run files in and out: discovering and loading run folders (JSON Lines or parquet), the test set,
the writer for pipelines, importers from other tools, and TREC files."""

from evalcore.runs.load import LoadResult, Run, discover_runs, load_run, load_runs, read_run
from evalcore.runs.testset import TestSet, read_testset
from evalcore.runs.writer import RunWriter

__all__ = ["LoadResult", "Run", "RunWriter", "TestSet", "discover_runs", "load_run", "load_runs", "read_run",
           "read_testset"]
