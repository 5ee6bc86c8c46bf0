"""The on-disk cache of parsed files: validated frames as memory-mapped Arrow IPC.

Keyed by the source file's resolved path, mtime and size (and :data:`CACHE_VERSION`), so an edited
file is a new key and is parsed again. Lives in ``$RAGTRIAGE_CACHE_DIR`` (default
``~/.cache/ragtriage``); nothing is ever written beside the user's files. The cache is an
optimisation only: an unreadable, read-only or full cache directory never fails a load.

It is kept under ``$RAGTRIAGE_CACHE_MAX_GB`` (default :data:`DEFAULT_MAX_GB`): after a write, the
entries used least recently go until it holds 80% of that. Every edit of a run file and every new
version of evalcore makes new entries and leaves the old ones unused; unbounded, this machine's
cache had grown to 39 GB and filled the disk.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import math
import os
import re
import shutil
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

DEFAULT_MAX_GB = 20.0  # a folder of 200 runs x 10,000 questions with chunk texts takes ~16 GB
_ENTRY = re.compile(r"[0-9a-f]{32}(\.arrow|\.txt)?")  # what file_key and _cached_path name
KEPT = ("remote",)  # not entries: a bucket's mirror (evalcore.runs.remote), which its listing points into
PRUNE_EVERY = 30.0  # seconds: at most one look at the cache's size per process in that time
CACHE_VERSION = "6"  # 6: all-null columns not written; 5: a test case may state `answerable`; 4: Arrow IPC


def cache_dir() -> Path:
    """``$RAGTRIAGE_CACHE_DIR``, else ``$XDG_CACHE_HOME/ragtriage``, else ``~/.cache/ragtriage``."""
    env = os.environ.get("RAGTRIAGE_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ragtriage"


def file_key(path: Path) -> str:
    """The identity of a file as it is now — resolved path, mtime, size — and of the code that parses
    it (:func:`code_version`): a parser fixed or broken since is never served an old parse."""
    st = path.stat()
    raw = f"{path.resolve()}|{st.st_mtime_ns}|{st.st_size}|{CACHE_VERSION}|{code_version()}"
    return hashlib.sha256(raw.encode()).hexdigest()[:32]


def read_frames(
    source: Path, kind: str, names: tuple[str, ...], *, key: str | None = None
) -> tuple[dict[str, pl.DataFrame], dict[str, Any]] | None:
    """The frames (and small metadata) cached for ``source``, or None.

    Frames are memory-mapped, not decoded: their columns point into the cache file and pages are
    read as they are touched, so 20 runs of 10,000 questions "load" in a few hundredths of a second
    (polars' own IPC reader copies at ~1 GB/s; parquet decodes at a fraction of that).
    ``key``: the :func:`file_key` of ``source``, when the caller has just taken it.
    """
    try:
        folder = cache_dir() / kind / (key or file_key(source))
        pending = _PENDING.get(folder)
        if pending is not None:  # still being written: the frames are at hand, as parsed
            return {name: pending.frames[name] for name in names}, dict(pending.meta)
        meta_path = folder / "meta.json"
        if not meta_path.exists():
            return None
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        frames = {name: _read_frame(folder, name) for name in names}
        _used(meta_path)
        return frames, meta
    except (OSError, ValueError, pl.exceptions.PolarsError):  # pyarrow raises OSError/ValueError
        return None


def has_frames(source: Path, kind: str) -> bool:
    """Whether :func:`write_frames` kept frames for ``source`` as it is now (no frame is read), or
    is writing them in the background."""
    try:
        folder = cache_dir() / kind / file_key(source)
        return folder in _PENDING or (folder / "meta.json").exists()
    except OSError:
        return False


def write_frames(
    source: Path,
    kind: str,
    frames: dict[str, pl.DataFrame],
    meta: dict[str, Any] | None = None,
    *,
    later: bool = False,
    key: str | None = None,
) -> None:
    """Cache ``frames`` for ``source``. ``meta.json``, written last, marks the entry complete.

    ``key``: the :func:`file_key` of ``source`` taken *before* it was read (by default, taken now):
    if the file changes while it is read, the entry is then filed under the old version, which is
    never asked for again, rather than serving old content for the new one.

    ``later``: write them on a background thread of low priority instead. Writing costs a run of
    10,000 questions x 20 chunks ~35 ms of CPU, mostly the kernel's (~2 ms per MB on this VM): on a
    folder's first view that is 0.7 s of the two cores the browser and the parse share, spent
    instead once the page is drawn. Until it is written, :func:`read_frames` serves the entry from
    memory (it never waits for a thread that a busy machine may starve); the interpreter finishes
    pending writes before it exits.

    A write that fails (a full or read-only disk) is reported once per process and never raised.
    """
    try:
        folder = cache_dir() / kind / (key or file_key(source))
    except OSError:
        return
    if not later:
        _write_entry(folder, frames, meta)
        return
    with _PENDING_LOCK:
        if folder in _PENDING:
            return
        job = _Pending(frames, meta or {})
        _PENDING[folder] = job
        job.done = _writer().submit(_write_pending, folder, job)


def flush_writes() -> None:
    """Wait for every background write of :func:`write_frames` (``later=True``) to finish."""
    for job in list(_PENDING.values()):
        if job.done is not None:
            job.done.exception()


@dataclass
class _Pending:
    """An entry queued for the background writer: what a read serves until it is on disk."""

    frames: dict[str, pl.DataFrame]
    meta: dict[str, Any]
    done: Future[None] | None = None


_PENDING: dict[Path, _Pending] = {}
_PENDING_LOCK = threading.Lock()


@functools.cache
def _writer() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(1, thread_name_prefix="ragtriage-cache", initializer=_lower_priority)


def _forget_writes() -> None:
    """In a forked child: the parent's writer thread is not there, so neither are its writes."""
    global _PENDING_LOCK
    _PENDING_LOCK = threading.Lock()
    _PENDING.clear()
    _writer.cache_clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_writes)


def _lower_priority() -> None:
    """This thread (only) at the lowest CPU priority: it uses what the parse and the browser leave.
    Linux takes a thread id here; elsewhere the call would renice the whole process, so it is not made."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)


def _write_pending(folder: Path, job: _Pending) -> None:
    try:
        _write_entry(folder, job.frames, job.meta)
    except Exception as e:  # not even a bug in the writer may fail a load: it is reported
        _report(folder, e)
    finally:
        with _PENDING_LOCK:
            _PENDING.pop(folder, None)


_REPORTED: list[bool] = []


def _report(where: Path, error: BaseException) -> None:
    """Say once per process that the cache could not be written (a full disk would otherwise say
    it on every load); later failures go to the debug log."""
    log = logging.getLogger("evalcore")
    if _REPORTED:
        log.debug("evalcore: could not write the cache entry %s: %r", where, error)
        return
    _REPORTED.append(True)
    log.warning(
        "evalcore: could not write the cache entry %s: %r; runs still load, parsed each time "
        "(point RAGTRIAGE_CACHE_DIR at a writable folder with free space to cache them)",
        where,
        error,
    )


def _write_errors() -> tuple[type[BaseException], ...]:
    """What a cache write may raise on a full, read-only or odd disk: reported, never raised."""
    import pyarrow as pa

    return (OSError, ValueError, MemoryError, pl.exceptions.PolarsError, pa.ArrowException)


def _write_entry(folder: Path, frames: dict[str, pl.DataFrame], meta: dict[str, Any] | None) -> None:
    with _PENDING_LOCK:
        _WRITING[folder] = _WRITING.get(folder, 0) + 1  # (prune leaves it alone meanwhile)
    try:
        _write_files(folder, frames, meta)
    finally:
        with _PENDING_LOCK:
            _WRITING[folder] -= 1
            if not _WRITING[folder]:
                del _WRITING[folder]
    _prune_soon()


_WRITING: dict[Path, int] = {}  # entries being written now, by any thread of this process


def _write_files(folder: Path, frames: dict[str, pl.DataFrame], meta: dict[str, Any] | None) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tag = f"{os.getpid()}.{threading.get_ident()}"
        for name, frame in frames.items():
            # A column with no value (a run's chunk texts and doc ids when it has none) is not
            # written: the first view of a folder writes a third less (this VM's disk holds the
            # writer back after a few hundred MB), and the schema says what to put back.
            empty = [c for c in frame.columns if frame.height and frame[c].null_count() == frame.height]
            if empty:
                _write_ipc(frame.head(0), folder / f"{name}.schema.arrow")
                frame = frame.drop(empty[: frame.width - 1])  # one column keeps the height
            _write_ipc(frame, folder / f"{name}.arrow")
        tmp = folder / f".meta.{tag}.tmp"
        try:
            tmp.write_text(json.dumps(meta or {}), encoding="utf-8")
            os.replace(tmp, folder / "meta.json")
        finally:
            tmp.unlink(missing_ok=True)
    except _write_errors() as e:
        _report(folder, e)


@functools.cache
def code_version() -> str:
    """A hash of evalcore's own source: a cached result computed by other code is never served."""
    h = hashlib.sha256()
    for path in sorted(Path(__file__).parent.rglob("*.py")):
        h.update(path.read_bytes())
    return h.hexdigest()


def cached_frame(kind: str, key: str, compute: Callable[[], pl.DataFrame]) -> pl.DataFrame:
    """``compute()``, kept on disk under ``key`` (which must name every input of the result, and
    :func:`code_version`), so a fresh process does not redo it."""
    hit = cached_frame_if_any(kind, key)
    if hit is not None:
        return hit
    out = compute()
    path = _cached_path(kind, key)
    try:  # an optimisation only: a read-only or full disk must not fail the computation
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_ipc(out, path)
    except _write_errors() as e:
        _report(path, e)
    _prune_soon()
    return out


def cached_frame_if_any(kind: str, key: str) -> pl.DataFrame | None:
    """What :func:`cached_frame` kept under ``key``, or None (nothing is computed)."""
    path = _cached_path(kind, key)
    try:
        frame = _map_ipc(path)
    except (OSError, ValueError, pl.exceptions.PolarsError):
        return None
    _used(path)
    return frame


def file_sha256(path: Path) -> str:
    """The sha256 of ``path``'s bytes, read in 1 MB blocks."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def content_sha256(path: Path) -> str:
    """The sha256 of ``path``'s bytes, hashed once per version of the file (path, mtime, size) and
    remembered on disk, so a fresh process opening 200 runs reads 200 short files instead of hashing
    2 GB. What is keyed on it (a run's scores) then survives a copy, a move or a re-download of the
    same bytes, which a path-and-mtime key does not."""
    got = remembered_sha256(path)
    if got is not None:
        return got
    where = _sha_path(path)
    sha = file_sha256(path)
    try:
        where.parent.mkdir(parents=True, exist_ok=True)
        tmp = where.with_name(f".{where.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(sha, encoding="ascii")
        os.replace(tmp, where)
    except _write_errors() as e:
        _report(where, e)
    return sha


def remembered_sha256(path: Path) -> str | None:
    """:func:`content_sha256` of this version of ``path`` if it was taken before, else None (the
    file is not read)."""
    where = _sha_path(path)
    try:
        got = where.read_text(encoding="ascii")
    except (OSError, ValueError):
        return None
    if len(got) != 64:
        return None
    _used(where)
    return got


def _sha_path(path: Path) -> Path:
    st = path.stat()
    return _cached_path("sha256", f"{path.resolve()}|{st.st_mtime_ns}|{st.st_size}").with_suffix(".txt")


def _cached_path(kind: str, key: str) -> Path:
    return cache_dir() / kind / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.arrow"


def _write_ipc(frame: pl.DataFrame, path: Path) -> None:
    """Write uncompressed IPC (mappable) beside ``path`` and rename it into place: a reader, maybe
    another process with the old file mapped, never sees a half-written file."""
    import pyarrow as pa
    import pyarrow.ipc

    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    # pyarrow's writer, not polars': it writes from the calling thread (polars hands the work to its
    # own pool, which would escape the background writer's low priority).
    table = frame.to_arrow(compat_level=pl.CompatLevel.newest())
    try:
        with pa.OSFile(str(tmp), "wb") as sink, pyarrow.ipc.new_file(sink, table.schema) as out:
            out.write_table(table)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)  # a failed write (a full disk) leaves nothing behind


def _read_frame(folder: Path, name: str) -> pl.DataFrame:
    """A frame :func:`write_frames` wrote, its all-null columns back in place."""
    frame = _map_ipc(folder / f"{name}.arrow")
    full = folder / f"{name}.schema.arrow"
    if full.exists():
        schema = _map_ipc(full).schema
        frame = frame.with_columns(
            pl.lit(None, dtype=dtype).alias(c) for c, dtype in schema.items() if c not in frame.columns
        ).select(list(schema))
    return frame


def _map_ipc(path: Path) -> pl.DataFrame:
    import pyarrow as pa
    import pyarrow.ipc

    with pa.memory_map(str(path)) as source:
        frame = pl.from_arrow(pyarrow.ipc.open_file(source).read_all(), rechunk=False)
    if not isinstance(frame, pl.DataFrame):  # pragma: no cover - an IPC file always holds a table
        raise ValueError(path)
    return frame


def _used(path: Path) -> None:
    """Mark an entry used now (its mtime), so pruning keeps it over entries unused for longer."""
    with contextlib.suppress(OSError):
        os.utime(path)


def max_bytes() -> int:
    """The cache's size bound: ``$RAGTRIAGE_CACHE_MAX_GB`` GB, else :data:`DEFAULT_MAX_GB`."""
    raw = os.environ.get("RAGTRIAGE_CACHE_MAX_GB", "")
    try:
        gb = float(raw) if raw.strip() else DEFAULT_MAX_GB
        if not math.isfinite(gb):
            raise ValueError(raw)
    except ValueError:
        logging.getLogger("evalcore").warning(
            "evalcore: RAGTRIAGE_CACHE_MAX_GB=%r is not a number of GB; using %g", raw, DEFAULT_MAX_GB
        )
        gb = DEFAULT_MAX_GB
    return int(max(gb, 0.0) * 1e9)


_LAST_PRUNE: list[float] = []


def _prune_soon() -> None:
    """Prune on the background writer, at most once per :data:`PRUNE_EVERY` seconds a process."""
    now = time.monotonic()
    with _PENDING_LOCK:
        if _LAST_PRUNE and now - _LAST_PRUNE[0] < PRUNE_EVERY:
            return
        _LAST_PRUNE[:] = [now]
    with contextlib.suppress(RuntimeError):  # (the interpreter shutting down)
        _writer().submit(_prune_quietly)


def _prune_quietly() -> None:
    try:
        prune()
    except Exception as e:  # an optimisation only: never raised
        _report(cache_dir(), e)


def prune(limit: int | None = None) -> int:
    """Remove the entries used least recently until the cache holds at most 80% of ``limit`` bytes
    (default :func:`max_bytes`), if it holds more than ``limit``. Returns the bytes removed.

    An entry is a folder of frames (its ``meta.json`` says when it was last used) or one file. An
    entry being written (no ``meta.json`` yet, or queued in this process) is left alone unless it
    was abandoned over an hour ago. A folder goes ``meta.json`` first, so a reader in another
    process sees it gone, never half there; a process with its frames mapped keeps reading them."""
    limit = max_bytes() if limit is None else limit
    root = cache_dir()
    entries: list[tuple[float, int, Path]] = []  # (last used, bytes, path)
    now = time.time()
    with _PENDING_LOCK:
        pending = set(_PENDING) | set(_WRITING)
    try:
        kinds = [e for e in os.scandir(root) if e.is_dir(follow_symlinks=False) and e.name not in KEPT]
    except OSError:
        return 0
    for kind in kinds:
        with contextlib.suppress(OSError), os.scandir(kind.path) as it:
            for e in it:
                if e.name.startswith(".trash-"):  # left by a prune that was killed half-way
                    shutil.rmtree(e.path, ignore_errors=True)
                    continue
                if not _ENTRY.fullmatch(e.name):
                    continue  # not an entry this module wrote (a cache folder may be shared)
                with contextlib.suppress(OSError):
                    if e.is_dir(follow_symlinks=False):
                        size, newest = _folder_size(e.path)
                        newest = max(newest, e.stat(follow_symlinks=False).st_mtime)  # (made, still empty)
                        meta = Path(e.path) / "meta.json"
                        if meta.exists():
                            used = meta.stat().st_mtime
                        elif now - newest > 3600:
                            used = 0.0  # abandoned half-way (a killed writer): first to go
                        else:
                            continue
                        if Path(e.path) not in pending:
                            entries.append((used, size, Path(e.path)))
                    elif not e.name.startswith("."):
                        st_ = e.stat()
                        entries.append((st_.st_mtime, st_.st_size, Path(e.path)))
    total = sum(size for _, size, _ in entries)
    if total <= limit:
        return 0
    removed = 0
    for _, size, path in sorted(entries, key=lambda t: t[0]):
        if total - removed <= 0.8 * limit:
            break
        with contextlib.suppress(OSError):
            if path.is_dir():
                # Renamed away first (atomic): a writer making this entry again meanwhile makes a
                # new folder, never one with some of its files deleted under it.
                trash = path.with_name(f".trash-{os.getpid()}-{threading.get_ident()}-{path.name}")
                os.rename(path, trash)
                shutil.rmtree(trash, ignore_errors=True)
            else:
                path.unlink()
            removed += size
    logging.getLogger("evalcore").info(
        "evalcore: the cache held %.1f GB (bound %.1f GB): removed %.1f GB used least recently",
        total / 1e9,
        limit / 1e9,
        removed / 1e9,
    )
    return removed


def _folder_size(path: str) -> tuple[int, float]:
    """(bytes, newest mtime) of the files in an entry's folder."""
    size, newest = 0, 0.0
    with os.scandir(path) as it:
        for f in it:
            st_ = f.stat(follow_symlinks=False)
            size += st_.st_size
            newest = max(newest, st_.st_mtime)
    return size, newest
