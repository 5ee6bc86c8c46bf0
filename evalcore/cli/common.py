"""What every command shares: exit codes, messages, the store, reading a run argument, tables,
and runs in object storage read from their mirror."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import polars as pl

from evalcore.errors import InputError, Problem, SetupError, redact

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2

FORMAT: dict[str, Any] = {"choices": ["table", "json", "csv"], "default": "table"}
JUDGE_HELP = "whose judge verdicts to score with: 'recorded' (the run file's), 'latest' or a revision id"
STORE_HELP = "the store (default $RAGTRIAGE_STORE, else ~/.local/share/ragtriage/store.sqlite)"
OUT_HELP = "the runs folder to import into: the test set goes to OUT/testset.jsonl, the run to OUT/RUN_ID/"
TESTSET_HELP = (
    "add the run to this existing test set instead of writing OUT/testset.jsonl "
    "(TREC queries matched by qid, Ragas rows by question text)"
)

LOCATED: list[Any] = []  # runs locations in object storage this command mirrored (for messages)


def usage_error(msg: str) -> int:
    print(f"evalcore: error: {display_text(msg)}", file=sys.stderr)
    return EXIT_USAGE


def open_store(target: Any) -> Any:
    """The store, opened as whoever runs the command (:func:`evalcore.access.cli_identity`: the
    local user, or ``$RAGTRIAGE_USER`` under an access file) with the access file's daily budget."""
    from evalcore.access import access_path, cli_identity, load_access
    from evalcore.store import Store

    return Store(target, actor=cli_identity(), budget=load_access(access_path()).budget)


def print_problems(problems: list[Problem], stream: Any = None) -> None:
    stream = stream or sys.stderr
    for p in problems:
        print(display_text(str(p)), file=stream)


def runs_folder() -> str:
    """The runs location (:func:`evalcore.runs.remote.runs_location`: ``$RAGTRIAGE_RUNS``, a folder
    or a bucket URL read from its mirror, else the bundled sample runs)."""
    from evalcore.runs.remote import is_remote, resolve, runs_location

    where = runs_location()
    if is_remote(where):
        loc = resolve(where)
        LOCATED.append(loc)
        return str(loc.root)
    return where


def load_run_arg(path: str) -> Any:
    """A run folder, or ``RUNS_DIR:RUN_ID``/a run id inside ``$RAGTRIAGE_RUNS``."""
    from evalcore.runs.load import discover_runs, load_runs, read_run

    p = Path(path)
    if p.is_dir() and (p / "run.json").exists():
        return read_run(p)
    if p.is_dir():
        inside = [f.relative_to(p).as_posix() for f in discover_runs(p)][:5]
        raise InputError(
            [
                Problem(
                    path,
                    "is a folder without run.json, not a run folder",
                    hint=(
                        f"pass one of the run folders in it ({', '.join(inside)})"
                        if inside
                        else "a run folder holds run.json and results.jsonl; `evalcore validate DIR` checks a folder"
                    ),
                )
            ]
        )
    folder = Path(runs_folder())
    if folder.is_dir():
        lr = load_runs(folder)
        if path in lr.runs:
            return lr.runs[path]
    raise InputError(
        [
            Problem(
                path,
                f"not a run folder (no run.json) and not a run id in {folder}",
                hint="pass the folder that holds run.json",
            )
        ]
    )


def render_table(df: pl.DataFrame, FORMAT: str) -> str:
    if FORMAT == "json":
        return json.dumps(df.to_dicts(), indent=1, default=str)
    if FORMAT == "csv":  # CSV has no lists: a list cell (the chunks that left the top k) is joined by spaces
        lists = [c for c, t in df.schema.items() if isinstance(t, pl.List)]
        joined = df.with_columns([pl.col(c).cast(pl.List(pl.String)).list.join(" ") for c in lists])
        return joined.write_csv().rstrip("\n")  # print() ends the last line
    with pl.Config(
        tbl_rows=-1,
        tbl_cols=-1,
        tbl_width_chars=200,
        fmt_str_lengths=60,
        tbl_hide_dataframe_shape=True,
        tbl_hide_column_data_types=True,
        float_precision=4,
    ):
        return str(df)


def display_text(text: str) -> str:
    """A message with mirrored paths written as the bucket URLs they came from, secrets masked."""
    for loc in LOCATED:
        text = loc.display(text)
    return redact(text)


class ShownStdout:
    """Standard output with mirrored paths written as the bucket URLs they came from."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def write(self, text: str) -> int:
        for loc in LOCATED:  # (paths only: the data printed is not masked, nor changed)
            text = loc.display(text)
        return int(self.inner.write(text))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def mirror_urls(args: argparse.Namespace) -> None:
    """Every run, folder or test set given as an ``s3://``/``gs://``/``az://`` URL is read from its
    mirror (:mod:`evalcore.runs.remote`): the same URLs work for every verb."""
    from evalcore.runs.remote import is_remote, resolve

    def local(value: Any, name: str) -> Any:
        if isinstance(value, list):
            return [local(v, name) for v in value]
        if not is_remote(value):
            return value
        if name in ("out", "summary", "junit"):
            msg = f"--{name} {redact(value)}: ragtriage never writes to a bucket; write locally, then upload"
            raise SetupError(msg)
        loc = resolve(value)
        LOCATED.append(loc)
        for p in loc.problems:
            print(display_text(str(p)), file=sys.stderr)
        return str(loc.root)

    for name, value in vars(args).items():
        if name not in ("func", "store"):
            setattr(args, name, local(value, name))


def add_timeout(parser: argparse.ArgumentParser) -> None:
    """``--timeout`` for a command that sends requests to the judge model; the default is the judge's
    own (:class:`evalcore.judge.JudgeConfig`), read without importing the judge at start-up."""
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        help="seconds a request may take before it is retried (then failed, with its reason; default 60)",
    )
