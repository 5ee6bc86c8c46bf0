"""Discover run folders, read them into polars, validate them against their test set.

A run folder holds ``run.json`` (the manifest) and ``results.jsonl`` or ``results.parquet``. A plainly
valid file is read whole and checked vectorised; any other is validated line by line (or row by row),
so that each error names its line and field. A clean parse is cached as Arrow IPC keyed by path, mtime,
size and parser version (:mod:`evalcore.cache`), so a second load is a memory map. Run files are
never written.

:func:`load_runs` never raises for a bad run: it returns the runs that loaded and the problems of the
ones that did not, so one broken file cannot take the others down.
"""

from __future__ import annotations

import functools
import json
import os
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl
from pydantic import ValidationError

from evalcore.cache import content_sha256, file_key, has_frames, read_frames, remembered_sha256, write_frames
from evalcore.errors import InputError, Problem, Problems, short
from evalcore.metrics.retrieval import preload
from evalcore.paths import literal
from evalcore.runs.frames import FRAMES, check_records, frames_from_records
from evalcore.runs.jsonl import (
    field_path,
    iter_jsonl,
    load_scanner_for,
    loads_strict,
    read_plain_blocks,
    validate_line,
)
from evalcore.runs.nested import frames_from_nested
from evalcore.runs.testset import TestSet, read_testset
from evalcore.schema import ResultRecord, RunManifest
from evalcore.words import agree, count

_TESTSET_LOCK = threading.Lock()


@dataclass(frozen=True)
class RunEntry:
    """A run folder whose ``run.json`` read cleanly and whose test set is at hand: what a run picker
    needs (id, label, time, test set, judge) before the run's results file is read."""

    path: Path
    manifest: RunManifest
    testset: TestSet

    @property
    def run_id(self) -> str:
        return self.manifest.run_id

    @property
    def label(self) -> str:
        return self.manifest.label or self.manifest.run_id

    @property
    def judge(self) -> tuple[str, str, str] | None:
        """Who produced the run's judge verdicts — (model, prompt, schema), each as precise as the
        run says — or None when it does not say (then no judge change can be detected)."""
        j = self.manifest.judge
        if j is None or j.model is None:
            return None
        return (j.model, j.prompt_sha256 or j.prompt_version or "", j.schema_sha256 or "")

    def judge_text(self) -> str:
        j = self.manifest.judge
        if j is None or j.model is None:
            return "an unrecorded judge"
        prompt = j.prompt_version or (j.prompt_sha256 or "")[:10]
        return f"{j.model}" + (f" · prompt {prompt}" if prompt else "")

    @property
    def results_file(self) -> Path:
        """The run's results file (parquet if present, else JSON Lines)."""
        parquet = self.path / "results.parquet"
        return parquet if parquet.exists() else self.path / "results.jsonl"

    def results_sha256(self) -> str:
        """The results file's content hash: what judge revisions attach to, besides the run id.
        Hashed once per file version (path, mtime, size) and remembered on disk
        (:func:`evalcore.cache.content_sha256`), not on every page that asks."""
        return _content_hash(self.results_file, file_key(self.results_file))


@dataclass(frozen=True)
class Run(RunEntry):
    """One loaded run: the manifest and long tables of its results."""

    results: pl.DataFrame  # one row per question answered
    retrieved: pl.DataFrame  # one row per retrieved chunk, in file order
    claims: pl.DataFrame  # one row per judge claim
    external: pl.DataFrame  # long: qid, name, value (scores computed outside evalcore)
    warnings: tuple[Problem, ...] = ()
    source_key: str | None = None  # "sha256:" + the results file's content hash when it was read;
    # None for a run holding part of its file (RunFolder.question), whose scores must not be cached

    @property
    def has_answers(self) -> bool:
        """Whether any question has a recorded answer: what a judge, a re-judge or a calibration
        session needs (a TREC import, a retrieval-only run, has none — nothing there to judge)."""
        if "answer" not in self.results.columns:
            return False
        return bool(self.results["answer"].str.strip_chars().str.len_chars().fill_null(0).gt(0).any())


@dataclass
class LoadResult:
    """Runs that loaded, keyed by run id (ordered by creation time), and every problem found."""

    runs: dict[str, Run] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]


# --------------------------------------------------------------------------- cache


@functools.cache
def _hasher() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=2, thread_name_prefix="evalcore-sha256")


@functools.cache
def _side() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="evalcore-testset")


@functools.lru_cache(maxsize=1024)
def _content_hash(path: Path, version: str) -> str:
    return content_sha256(path)


def _cache_read(path: Path) -> dict[str, pl.DataFrame] | None:
    """A results file's validated, flattened frames, if cached (see :mod:`evalcore.cache`)."""
    hit = read_frames(path, "results", FRAMES)
    return None if hit is None else hit[0]


# A run's parsed frames under this size are kept as parsed and cached by a background writer (the
# first view does not wait for the disk: a run of 10,000 questions x 20 chunks is ~10 MB). Bigger
# ones — chunk texts, answers, a million questions — are kept the same way while the ones a process
# kept, this one included, fit in KEEP_PARSED_BUDGET (writing a million-question run's 2.4 GB took 4.2 s of the
# first `evalcore metrics`); past it they are written at once and swapped for their memory-mapped
# cache file, so that a folder of many such runs seen for the first time does not hold them all in
# memory.
KEEP_PARSED_BELOW = 16 << 20


def _budget() -> int:
    """An eighth of the memory this process may use (3 GB of this machine's 24 GB): the machine's,
    or a container's limit when lower (cgroup v2, then v1); else 1 GB."""
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return 1 << 30
    for limit in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            total = min(total, int(Path(limit).read_text().strip()))
        except (OSError, ValueError):  # absent, or "max"
            continue
    return total // 8


KEEP_PARSED_BUDGET = _budget()
_KEPT_BIG = [0]  # bytes of big runs this process kept as parsed (never lowered: a bound, not a count)
_KEPT_LOCK = threading.Lock()


def _keep_parsed(size: int) -> bool:
    """Whether a run's parsed frames of ``size`` bytes stay in memory (written to the cache in the
    background) rather than being written at once and memory-mapped."""
    if size < KEEP_PARSED_BELOW:
        return True
    with _KEPT_LOCK:
        if _KEPT_BIG[0] + size > KEEP_PARSED_BUDGET:
            return False
        _KEPT_BIG[0] += size
        return True


# --------------------------------------------------------------------------- results


def _read_results_jsonl(path: Path, problems: Problems) -> dict[str, pl.DataFrame] | None:
    fast = _results_jsonl_fast(path)
    if fast is not None:
        return fast
    before = len(problems.errors)
    records: list[tuple[int, ResultRecord]] = []
    for lineno, obj in iter_jsonl(path, problems, what="result record"):
        rec = validate_line(ResultRecord, obj, path, lineno, problems)
        if isinstance(rec, ResultRecord):
            records.append((lineno, rec))
    if len(problems.errors) > before:
        return None
    return frames_from_records(records)


# Keys whose explicit null the record model refuses, but which polars cannot tell from a missing key.
_NOT_NULL = ("qid", "retrieved", "external_scores", "chunk_id", "score", "claim", "verdict")


def _results_jsonl_fast(path: Path) -> dict[str, pl.DataFrame] | None:
    """A plainly valid results.jsonl, read and checked vectorised (:mod:`evalcore.runs.nested`) a
    block of lines at a time, each block turned into the run's tables before the next is read; None
    sends it to the line-by-line reader, which names the line and field of each problem."""
    blocks = read_plain_blocks(path, _nested_block, no_null=_NOT_NULL, lift="retrieved")
    return None if blocks is None else _joined(blocks)


def _joined(parts: list[dict[str, pl.DataFrame]]) -> dict[str, pl.DataFrame]:
    """The tables of a file read in parts (blocks of lines, row groups), in order, uncopied: each
    part's tables are cast to the run's fixed schema, so they always line up."""
    if len(parts) == 1:
        return parts[0]
    return {name: pl.concat([p[name] for p in parts], rechunk=False) for name in parts[0]}


def _nested_block(df: pl.DataFrame, first_line: int) -> dict[str, pl.DataFrame] | None:
    ext = df.schema.get("external_scores")
    if isinstance(ext, pl.Struct):
        # JSON holds external scores as an object {name: value}; the nested form is a list of
        # {name, value}. Numbers only (a string or an object needs the exact check).
        fields = [f for f in ext.fields if f.dtype != pl.Null]
        if any(f.dtype not in (pl.Float64, pl.Int64) for f in fields):
            return None
        pairs = [
            pl.struct(
                name=pl.lit(f.name), value=pl.col("external_scores").struct.field(f.name).cast(pl.Float64)
            )
            for f in fields
        ]
        df = df.with_columns(
            external_scores=pl.concat_list(pairs).list.eval(
                pl.element().filter(pl.element().struct.field("value").is_not_null())
            )
            if pairs
            else pl.lit(None, dtype=pl.Null)
        )
    elif ext is not None and ext != pl.Null:
        return None
    return frames_from_nested(df, first_line)


# A Parquet file of more rows than this is turned into the run's tables a row group at a time, two
# at once: its nested frame and the tables never sit whole side by side (a million questions read
# whole peaked at 5.1 GB).
PARQUET_PARTS_FROM = 200_000


def _parquet_by_row_groups(path: Path) -> dict[str, pl.DataFrame] | None:
    """A big, plainly valid Parquet file's tables, read a row group at a time on two threads (each
    group's rows numbered where they stand in the file); None for a small file, one row group, or
    anything a group's fast conversion refuses — the caller then reads the file whole and names each
    problem."""
    import pyarrow.parquet as pq

    try:
        meta = pq.ParquetFile(path).metadata
    except (OSError, ValueError):  # pyarrow: ArrowInvalid is a ValueError
        return None
    sizes = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    if meta.num_rows < PARQUET_PARTS_FROM or len(sizes) < 2:
        return None
    starts = [sum(sizes[:i]) for i in range(len(sizes))]

    def part(start: int, n: int) -> dict[str, pl.DataFrame] | None:
        try:
            df = pl.scan_parquet(literal(path)).slice(start, n).collect()
        except (OSError, pl.exceptions.PolarsError):
            return None
        return frames_from_nested(df, start + 1) if df.height == n else None

    done: list[dict[str, pl.DataFrame]] = []
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="evalcore-parquet") as pool:
        jobs = [pool.submit(part, a, n) for a, n in zip(starts, sizes, strict=True)]
        for job in jobs:
            got = job.result()
            if got is None:  # the file is read whole to name the row: the other groups need not be
                for rest in jobs:
                    rest.cancel()
                return None
            done.append(got)
    return _joined(done)


def _read_results_parquet(path: Path, problems: Problems) -> dict[str, pl.DataFrame] | None:
    """Parquet holds the same records as JSONL, nested. Shape is checked vectorised, not per row."""
    fast = _parquet_by_row_groups(path)
    if fast is not None:
        return fast
    try:
        df = pl.read_parquet(literal(path))
    except (OSError, pl.exceptions.PolarsError) as exc:
        problems.error(path, f"cannot read parquet: {exc}", hint="re-write it with RunWriter or polars")
        return None
    if df.height == 0:
        problems.error(path, "the file holds no result", expected="one row per question")
        return None
    fast = frames_from_nested(df)
    if fast is not None:
        return fast
    # Anything not plainly valid goes through the same model as a JSON line, row by row, so both
    # formats accept exactly the same records and report the same errors (row numbers for lines).
    if "qid" not in df.columns:
        problems.error(path, "required column is missing", field="qid", hint="see `evalcore schema`")
        return None
    before = len(problems.errors)
    records: list[tuple[int, ResultRecord]] = []
    for i, obj in enumerate(df.iter_rows(named=True), start=1):
        obj = {k: v for k, v in obj.items() if v is not None or k == "qid"}
        if isinstance(obj.get("external_scores"), list):
            obj["external_scores"] = {e["name"]: e["value"] for e in obj["external_scores"]}
        rec = validate_line(ResultRecord, obj, path, i, problems)
        if isinstance(rec, ResultRecord):
            records.append((i, rec))
    if len(problems.errors) > before:
        return None
    return frames_from_records(records)


def _read_question(folder: Path, qid: str) -> dict[str, pl.DataFrame] | None:
    """The frames of the one line of ``folder``'s results.jsonl whose record has this qid, found by
    a byte search for the qid as JSON writes it and checked as any line of a whole file is (record
    model, then the record checks); None when the run has a parquet file, a byte order mark, no such
    line or more than one, or the line has a problem — the caller then reads the whole file."""
    path = folder / "results.jsonl"
    if (folder / "results.parquet").exists():
        return None
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if data.startswith(b"\xef\xbb\xbf") or not qid.isascii():
        return None  # (a non-ASCII qid may be written escaped or not: the whole file tells)
    needle = json.dumps(qid).encode()
    found: list[tuple[int, dict[str, Any]]] = []
    at = data.find(needle)
    while at != -1:
        start = data.rfind(b"\n", 0, at) + 1
        end = data.find(b"\n", at)
        end = len(data) if end == -1 else end
        try:
            obj = loads_strict(data[start:end].decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            return None
        if isinstance(obj, dict) and obj.get("qid") == qid:
            found.append((start, obj))
        at = data.find(needle, end)
    if len(found) != 1:
        return None
    start, obj = found[0]
    lineno = data.count(b"\n", 0, start) + 1
    problems = Problems()
    rec = validate_line(ResultRecord, obj, path, lineno, problems)
    if not isinstance(rec, ResultRecord):
        return None
    frames = frames_from_records([(lineno, rec)])
    check_records(path, frames, problems)
    return None if problems.errors else frames


def _check_against_testset(
    run_path: Path, results: pl.DataFrame, testset: TestSet, problems: Problems
) -> None:
    """Every qid is in the test set; questions of the test set without a result are noted."""
    if results["qid"].equals(testset.cases["qid"]):
        return  # every question answered, in the test set's order (the usual run): nothing to join
    unknown = results.join(testset.cases.select("qid"), on="qid", how="anti").head(50)
    for row in unknown.iter_rows(named=True):
        problems.error(
            run_path,
            f"qid '{row['qid']}' is not in the test set {testset.path.name}",
            line=row["line"],
            field="qid",
            expected="a qid of the test set",
            hint="check that the run answers this test set version, or add the question to the test set",
        )
    missing = testset.cases.join(results.select("qid"), on="qid", how="anti")
    if missing.height:
        ids = ", ".join(missing["qid"].head(5).to_list())
        problems.warning(
            run_path,
            f"{count(missing.height, 'question')} of the test set {agree(missing.height, 'has', 'have')} no result in this run ({ids}"
            f"{', ...' if missing.height > 5 else ''}); they are left out of this run's means",
            hint="comparisons use the questions both runs answered",
        )


def _read_manifest(folder: Path, problems: Problems) -> RunManifest | None:
    path = folder / "run.json"
    try:
        # A UTF-8 byte order mark is accepted here as in every file of a run (editors on Windows add it).
        raw = path.read_bytes().removeprefix(b"\xef\xbb\xbf").decode("utf-8")
        obj = loads_strict(raw)
    except UnicodeDecodeError as exc:
        problems.error(path, "not valid UTF-8", found=f"byte at offset {exc.start}", hint="re-save as UTF-8")
        return None
    except (ValueError, OSError) as exc:
        line = getattr(exc, "lineno", None)
        problems.error(path, f"cannot parse run.json: {exc}", line=line, hint="it must be one JSON object")
        return None
    if not isinstance(obj, dict):
        problems.error(path, "run.json is not a JSON object", found=type(obj).__name__)
        return None
    try:
        return RunManifest.model_validate(obj)
    except ValidationError as exc:
        for err in exc.errors(include_url=False):
            problems.error(
                path,
                "unknown field" if err["type"] == "extra_forbidden" else err["msg"],
                field=field_path(tuple(err["loc"])),
                found=short(err.get("input")) if err["type"] != "missing" else None,
                hint="see `evalcore schema` and docs/run-format.md",
            )
        return None


def read_run(
    folder: str | Path,
    problems: Problems | None = None,
    *,
    testsets: dict[Path, TestSet | None] | None = None,
    testset: TestSet | None = None,
) -> Run | None:
    """Read one run folder. Problems go to ``problems`` (``None`` returned if the run is unusable);
    with ``problems=None`` an :class:`InputError` is raised instead.

    ``testsets`` caches test sets shared by several runs; ``testset`` overrides the manifest's.
    """
    folder = Path(folder)
    own = problems is None
    problems = Problems() if problems is None else problems
    before = len(problems.items)
    before_errors = len(problems.errors)
    manifest = _read_manifest(folder, problems)
    run = None
    if manifest is not None:
        run = _read_run_body(folder, manifest, problems, testsets if testsets is not None else {}, testset)
    if own and len(problems.errors) > before_errors:
        raise InputError(problems.errors)
    if run is not None:
        run = Run(**{**run.__dict__, "warnings": tuple(problems.items[before:])})
    return run


def _read_run_body(
    folder: Path,
    manifest: RunManifest,
    problems: Problems,
    testsets: dict[Path, TestSet | None],
    override: TestSet | None,
) -> Run | None:
    before = len(problems.errors)
    ts = override
    if ts is None:
        ts_path = _testset_path(folder, manifest, problems)
        if ts_path is None:
            return None
        with _TESTSET_LOCK:  # runs load in threads; a shared test set is read once
            if ts_path not in testsets:
                # A results file needs nothing of its test set: both are read at once (each
                # waits on pyarrow's threads or compiled code that let go of the interpreter).
                job = _side().submit(_read_testset_apart, ts_path)
                own = Problems()
                parsed = _read_results(folder, own)
                testsets[ts_path], found = job.result()
                problems.items.extend([*found.items, *own.items])
                ts = testsets[ts_path]
                return _assemble(folder, manifest, ts, parsed if ts is not None else None, problems, before)
            ts = testsets[ts_path]
    parsed = _read_results(folder, problems) if ts is not None else None
    return _assemble(folder, manifest, ts, parsed, problems, before)


def _read_testset_apart(path: Path) -> tuple[TestSet | None, Problems]:
    own = Problems()
    return read_testset(path, own), own


def _testset_path(folder: Path, manifest: RunManifest, problems: Problems) -> Path | None:
    """The run's test set file (resolved), or None with a problem when it is not there."""
    ts_path = (folder / manifest.test_set.path).resolve()
    if ts_path.exists():
        return ts_path
    near = sorted(
        p.relative_to(folder.parent).as_posix()
        for d in (folder, folder.parent)
        for p in d.glob("*testset*.jsonl")
    )
    problems.error(
        folder / "run.json",
        f"the test set {manifest.test_set.path} was not found (looked for {ts_path})",
        field="test_set.path",
        hint="the path is relative to the run folder"
        + (f"; test sets nearby: {', '.join(near[:3])}" if near else ""),
    )
    return None


@dataclass(frozen=True)
class _Parsed:
    """A run's results file read and checked on its own (before its test set is at hand)."""

    path: Path
    frames: dict[str, pl.DataFrame] | None
    source_key: str | None


def _read_results(folder: Path, problems: Problems) -> _Parsed | None:
    """The run's results file as checked frames (``frames`` None when it has errors), or None when
    the folder has no usable results file. Needs nothing of the test set, so a folder's runs parse
    while their test set is read."""
    jsonl, parquet = folder / "results.jsonl", folder / "results.parquet"
    if jsonl.exists() and parquet.exists():
        problems.error(folder, "both results.jsonl and results.parquet exist", hint="keep one of them")
        return None
    if not (parquet.exists() or jsonl.exists()):
        problems.error(
            folder, "no results.jsonl or results.parquet in the run folder", hint="write one with RunWriter"
        )
        return None
    results_path = parquet if parquet.exists() else jsonl
    # What the run's scores are kept under: the file's content, so a copied, moved or re-downloaded
    # run is not scored again (the parse below is still keyed by path, mtime and size).
    # Hashed on a thread of its own while the file is parsed (hashlib lets go of the interpreter):
    # a file never seen costs its parse, not its parse and its hash.
    known = remembered_sha256(results_path)
    hashing = None if known is not None else _hasher().submit(content_sha256, results_path)
    parse_key = file_key(results_path)
    # A file that read cleanly before and has not changed since comes from the cache, checked.
    frames = _cache_read(results_path)
    fresh = frames is None
    if fresh:
        read = _read_results_parquet if results_path == parquet else _read_results_jsonl
        frames = read(results_path, problems)
    source_key = f"sha256:{known if hashing is None else hashing.result()}"
    if frames is None:
        return _Parsed(results_path, None, source_key)
    if fresh:
        errors = len(problems.errors)
        check_records(results_path, frames, problems)
        if len(problems.errors) == errors:
            if _keep_parsed(int(sum(f.estimated_size() for f in frames.values()))):
                write_frames(results_path, "results", frames, later=True, key=parse_key)
            else:
                write_frames(results_path, "results", frames, key=parse_key)
                # From now on the frames are the cache file's, memory-mapped: the parsed copy is
                # freed, so a folder of many big runs seen for the first time does not hold them
                # all in memory.
                frames = _cache_read(results_path) or frames
    return _Parsed(results_path, frames, source_key)


def _assemble(
    folder: Path,
    manifest: RunManifest,
    ts: TestSet | None,
    parsed: _Parsed | None,
    problems: Problems,
    before: int,
) -> Run | None:
    """The run from its parsed results and its test set, checked against each other; None when
    either has errors (``before``: the error count before this run was read)."""
    if ts is None:
        problems.error(
            folder / "run.json", "the run's test set has errors (listed above)", field="test_set.path"
        )
        return None
    if ts.sha256 != manifest.test_set.sha256:
        problems.warning(
            folder / "run.json",
            "the test set on disk is not the one this run answered",
            field="test_set.sha256",
            expected=f"sha256 {manifest.test_set.sha256[:12]}… (recorded in the run)",
            found=f"sha256 {ts.sha256[:12]}… ({ts.path.name} on disk)",
            hint="scores use the labels on disk; re-run the system on this test set to compare like with like",
        )
    if parsed is None or parsed.frames is None:
        return None
    frames = parsed.frames
    _check_against_testset(parsed.path, frames["results"], ts, problems)
    if len(problems.errors) > before:
        return None
    return Run(
        path=folder,
        manifest=manifest,
        testset=ts,
        results=frames["results"],
        retrieved=frames["retrieved"],
        claims=frames["claims"],
        external=frames["external"],
        source_key=parsed.source_key,
    )


def discover_runs(folder: str | Path) -> list[Path]:
    """Every folder under ``folder`` (itself included) that holds a ``run.json``, hidden ones skipped."""
    root = Path(folder)
    found = []
    for manifest in sorted(root.rglob("run.json")):
        rel = manifest.relative_to(root).parts
        if any(p.startswith(".") for p in rel[:-1]):
            continue
        found.append(manifest.parent)
    return found


class RunFolder:
    """A runs folder read on demand: every ``run.json`` at once, each test set the first time a
    caller needs the runs' test sets, each run's results file the first time that run is asked for
    (:meth:`load`). A page about two runs of a folder of twenty reads two results files, not twenty.

    Never raises for bad input: :attr:`problems` holds what was found so far — in manifests and test
    sets, and in the results of every run asked for. A run whose results have errors is left out of
    :meth:`load`'s answer (and of :attr:`entries` from then on). Safe to share between threads.
    """

    def __init__(
        self, folder: str | Path, *, testset: str | Path | None = None, preload_measures: bool = False
    ) -> None:
        self.root = Path(folder)
        self._preload = preload_measures
        self._lock = threading.RLock()  # the state below; held briefly, never while a file is read
        self._reading = threading.Lock()  # one read of results files at a time
        self._problems = Problems()  # of the folder, the manifests and the test sets
        self._run_problems: dict[str, list[Problem]] = {}  # of each run read, warnings included
        self._runs: dict[str, Run] = {}
        self._failed: set[str] = set()
        self._override: TestSet | None = None
        self._testsets: dict[Path, TestSet | None] | None = None
        self._manifests: dict[str, tuple[Path, RunManifest, Path | None]] = {}
        if not self.root.is_dir():
            self._problems.error(
                self.root, "the runs folder does not exist", hint="pass a folder that holds run folders"
            )
            return
        if testset is not None:
            self._override = read_testset(testset, self._problems)
        folders = discover_runs(self.root)
        if not folders:
            self._problems.warning(self.root, "no run folder found (a run folder holds run.json)")
        read = []
        for f in folders:
            manifest = _read_manifest(f, self._problems)
            if manifest is not None:
                path = None if testset is not None else _testset_path(f, manifest, self._problems)
                if testset is not None or path is not None:
                    read.append((f, manifest, path))
        # Oldest first; a run id already taken is reported, not loaded.
        for f, manifest, path in sorted(read, key=lambda r: (r[1].created, r[1].run_id)):
            taken = self._manifests.get(manifest.run_id)
            if taken is not None:
                self._problems.error(
                    f / "run.json",
                    f"run id '{manifest.run_id}' is already used by {taken[0]}",
                    field="run_id",
                    hint="give each run a unique run_id",
                )
                continue
            self._manifests[manifest.run_id] = (f, manifest, path)

    # ---------------------------------------------------------------- what is known without results

    @property
    def entries(self) -> dict[str, RunEntry]:
        """Every run whose manifest and test set read cleanly and whose results are not known to be
        broken, by id, oldest first. Reads the test sets the first time (not the results)."""
        testsets = self._read_testsets()
        out = {}
        with self._lock:
            for run_id, (f, manifest, path) in self._manifests.items():
                ts = self._override if path is None else testsets.get(path)
                if ts is not None and run_id not in self._failed:
                    out[run_id] = RunEntry(f, manifest, ts)
        return out

    @property
    def problems(self) -> list[Problem]:
        """Every problem found so far, grouped by file, in line order."""
        with self._lock:
            found = [*self._problems.items, *(p for ps in self._run_problems.values() for p in ps)]
        return sorted(found, key=lambda p: (p.path, p.line or 0))

    @property
    def failed(self) -> set[str]:
        """Runs whose results were read and have errors (see :attr:`problems`)."""
        with self._lock:
            return set(self._failed)

    def loaded(self) -> dict[str, Run]:
        """The runs read so far, oldest first."""
        with self._lock:
            return {r: self._runs[r] for r in self._manifests if r in self._runs}

    def result(self) -> LoadResult:
        """The runs read so far and every problem found so far."""
        return LoadResult(runs=self.loaded(), problems=self.problems)

    # ---------------------------------------------------------------- reading

    def load(self, run_ids: Iterable[str] | None = None, *, keep: bool = True) -> dict[str, Run]:
        """These runs (default: every run of the folder), read if they were not yet — several at a
        time, while the test sets are read. Runs whose results have errors, and ids that are not a
        run of the folder, are left out (see :attr:`problems`). ``keep=False``: runs not read before
        are read and returned but not kept (their problems are): for a pass over hundreds of runs
        that needs each once, as the scores behind a trend do."""
        wanted = list(self._manifests) if run_ids is None else list(dict.fromkeys(run_ids))
        # Pages and the sidebar ask for entries, problems and loaded runs meanwhile: they are not
        # kept waiting for the files being read (only another read is).
        with self._reading:
            with self._lock:
                todo = [
                    r
                    for r in wanted
                    if r in self._manifests and r not in self._runs and r not in self._failed
                ]
            fresh = self._read(todo, keep=keep) if todo else {}
        with self._lock:
            return {r: self._runs.get(r) or fresh[r] for r in wanted if r in self._runs or r in fresh}

    def question(self, run_ids: Iterable[str], qid: str) -> dict[str, Run]:
        """Each run's record of one question, for a page about that question across many runs: a run
        read before gives its whole self; any other only the line of its JSON Lines file that holds
        the qid (:func:`_read_question`: a byte search, the line checked by the same record model and
        record checks as a whole file's), not the other lines. Such a run holds that question alone
        and has no ``source_key``, so its scores are never cached as the run's. A run whose line is
        not found exactly once or does not read cleanly is read whole, as any page would, so that its
        problems are named the same way. Ids that are not a run of the folder are left out."""
        testsets = self._read_testsets()
        with self._lock:
            wanted = [r for r in dict.fromkeys(run_ids) if r in self._manifests and r not in self._failed]
            out: dict[str, Run] = {r: self._runs[r] for r in wanted if r in self._runs}
        whole = []
        for r in wanted:
            if r in out:
                continue
            f, manifest, path = self._manifests[r]
            ts = self._override if path is None else testsets.get(path)
            frames = _read_question(f, qid) if ts is not None else None
            if frames is None:
                whole.append(r)
                continue
            out[r] = Run(
                path=f,
                manifest=manifest,
                testset=ts,  # type: ignore[arg-type]
                results=frames["results"],
                retrieved=frames["retrieved"],
                claims=frames["claims"],
                external=frames["external"],
            )
        if whole:
            out.update(self.load(whole))
        return {r: out[r] for r in wanted if r in out}

    def _read_testsets(self) -> dict[Path, TestSet | None]:
        if self._testsets is None:
            # (A load in progress reads them beside its results files: wait for it rather than read
            # them twice.)
            with self._reading:
                if self._testsets is None:
                    read = {p: _read_testset_apart(p) for p in self._testset_paths()}
                    with self._lock:
                        self._take_testsets(read)
        assert self._testsets is not None
        return self._testsets

    def _testset_paths(self) -> list[Path]:
        return list(dict.fromkeys(p for _, _, p in self._manifests.values() if p is not None))

    def _take_testsets(self, read: dict[Path, tuple[TestSet | None, Problems]]) -> None:
        self._testsets = {}
        for p, (ts, found) in read.items():
            self._testsets[p] = ts
            self._problems.items.extend(found.items)

    def _read(self, todo: list[str], *, keep: bool = True) -> dict[str, Run]:
        # Whether the compiled reader pays for loading it is decided on the whole folder: its other
        # runs are likely next (a page of one run, then the next page), and one of them read line
        # by line costs what loading the reader does.
        load_scanner_for(
            sum(
                f.stat().st_size
                for d, _, _ in self._manifests.values()
                for f in (d / "results.jsonl",)
                if f.is_file()
            ),
            then=preload if self._preload else None,
        )
        # Twice the cores: while numba loads (holding the interpreter most of a second) the others
        # parse. Test sets not read yet are the first jobs: a results file needs nothing of its test
        # set, and the checks between the two come last.
        with ThreadPoolExecutor(max_workers=min(4, 2 * (os.cpu_count() or 1))) as pool:
            ts_jobs = (
                {p: pool.submit(_read_testset_apart, p) for p in self._testset_paths()}
                if self._testsets is None
                else {}
            )
            owns = {r: Problems() for r in todo}
            jobs = {r: pool.submit(_read_results, self._manifests[r][0], owns[r]) for r in todo}
            if ts_jobs:
                read = {p: job.result() for p, job in ts_jobs.items()}
                with self._lock:
                    self._take_testsets(read)
            testsets = self._testsets or {}
            out = {}
            for r in todo:
                f, manifest, path = self._manifests[r]
                own = owns[r]
                ts = self._override if path is None else testsets.get(path)
                run = _assemble(f, manifest, ts, jobs[r].result(), own, 0)
                with self._lock:
                    self._run_problems[r] = own.items
                    if run is None:
                        self._failed.add(r)
                    else:
                        out[r] = Run(**{**run.__dict__, "warnings": tuple(own.items)})
                        if keep:
                            self._runs[r] = out[r]
        return out


def load_runs(
    folder: str | Path, *, testset: str | Path | None = None, preload_measures: bool = False
) -> LoadResult:
    """Load every run under ``folder``. Never raises for bad input: see ``LoadResult.problems``.

    Runs are ordered by their ``created`` time. A run whose id is already taken is reported, not loaded.
    ``preload_measures``: also load the compiled retrieval measures on a background thread (after
    the compiled reader, when the folder needs that), for a caller that scores the runs next.
    :class:`RunFolder` reads a folder's runs one at a time, as they are needed.
    """
    folder_ = RunFolder(folder, testset=testset, preload_measures=preload_measures)
    folder_.load()
    return folder_.result()


def parsed_before(folder: str | Path) -> bool:
    """Whether every run under ``folder`` was read before, unchanged since (its parse is cached):
    then a load is a few memory maps and, most likely, its scores are cached too."""
    for run_folder in discover_runs(Path(folder)):
        results = [run_folder / n for n in ("results.parquet", "results.jsonl") if (run_folder / n).exists()]
        if not results or not has_frames(results[0], "results"):
            return False
    return True


def load_run(folder: str | Path) -> Run:
    """Load one run folder or raise :class:`InputError` listing every problem."""
    run = read_run(folder)
    if run is None:  # pragma: no cover - read_run raises when it has no run
        raise InputError([Problem(str(folder), "the run could not be loaded")])
    return run
