"""Reading JSON Lines strictly: every defect is reported with its file, line and what was found.

Python's ``json`` silently accepts ``NaN``/``Infinity`` and keeps the last of two duplicate keys; both
would turn into silently wrong numbers here, so both are rejected.

Two paths, one contract: :func:`read_plain_blocks` reads a plainly valid file with pyarrow or polars
(hundreds of MB/s), a block of lines at a time, beside one compiled scan for what they cannot see
(duplicate keys, forbidden nulls, blank lines); anything it is not sure of returns None, and
:func:`iter_jsonl` + :func:`validate_line` read the file line by line to name the line and field of
every problem.
"""

from __future__ import annotations

import io
import json
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import polars as pl
from pydantic import BaseModel, ValidationError

from evalcore.errors import Problems, short

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


class _DuplicateKeyError(ValueError):
    pass


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKeyError(key)
        out[key] = value
    return out


def _reject_constant(name: str) -> float:
    msg = f"{name} is not a number JSON allows"
    raise ValueError(msg)


def loads_strict(text: str) -> Any:
    """``json.loads`` that rejects NaN/Infinity and duplicate keys."""
    return json.loads(text, object_pairs_hook=_no_duplicate_keys, parse_constant=_reject_constant)


def _surrogate_at(value: Any, at: str = "") -> str | None:
    """The field (``retrieved[0].chunk_id``) of the first string or key holding half a surrogate
    pair, or None."""
    if isinstance(value, str):
        return at if any("\ud800" <= ch <= "\udfff" for ch in value) else None
    items: Iterator[tuple[str, Any]]
    if isinstance(value, dict):
        for key in value:
            if _surrogate_at(key) is not None:
                shown = key.encode("utf-8", "backslashreplace").decode("utf-8")  # printable
                return f"{at}.{shown}" if at else shown
        items = ((f"{at}.{k}" if at else k, v) for k, v in value.items())
    elif isinstance(value, list):
        items = ((f"{at}[{i}]", v) for i, v in enumerate(value))
    else:
        return None
    for where, v in items:
        found = _surrogate_at(v, where)
        if found is not None:
            return found
    return None


def iter_jsonl(path: Path, problems: Problems, *, what: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for every well-formed line; report the others in ``problems``."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        problems.error(path, f"cannot read the file: {exc.strerror or exc}")
        return
    if not data.strip():
        problems.error(
            path,
            "the file is empty",
            expected=f"one JSON object per line ({what})",
            found="no lines",
            hint=f"write at least one {what}, or remove the file",
        )
        return
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]  # a UTF-8 byte order mark is harmless; don't fail on it
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.error(
                path,
                "the line is not valid UTF-8",
                line=lineno,
                expected="UTF-8 text",
                found=f"byte 0x{raw[exc.start]:02x} at column {exc.start + 1}",
                hint="re-save the file as UTF-8 (e.g. `iconv -f latin1 -t utf-8`)",
            )
            continue
        try:
            obj = loads_strict(text)
        except _DuplicateKeyError as exc:
            problems.error(
                path,
                f"the key '{exc.args[0]}' appears twice in one object",
                line=lineno,
                field=str(exc.args[0]),
                expected="each key once",
                found="a duplicate",
                hint=(
                    "keep one of the two (in a test set's 'relevant' a repeated chunk id is one label given "
                    "twice); duplicates are never collapsed silently"
                ),
            )
            continue
        except json.JSONDecodeError as exc:
            cut = cut_off(text)
            if cut:
                problems.error(
                    path,
                    f"the line ends before its JSON does (cut off?): {cut}",
                    line=lineno,
                    expected="one complete JSON object on this line",
                    found=f"{len(text)} characters ending in {short(text[-30:])}",
                    hint="the writer may have stopped mid-line (a full disk, a killed process): write the line again",
                )
                continue
            problems.error(
                path,
                f"malformed JSON: {exc.msg}",
                line=lineno,
                expected="one complete JSON object on this line",
                found=f"{short(text[max(0, exc.colno - 20) : exc.colno + 20])} near column {exc.colno}",
                hint="check for a missing comma, quote or brace, or an object split over several lines",
            )
            continue
        except ValueError as exc:
            problems.error(
                path,
                str(exc),
                line=lineno,
                expected="a finite number",
                found="NaN or Infinity",
                hint="write null for a missing value",
            )
            continue
        broken = _surrogate_at(obj) if "\\ud" in text.lower() else None
        if broken is not None:
            problems.error(
                path,
                "a string escapes half a surrogate pair, which is no unicode character",
                line=lineno,
                field=broken or None,
                expected="a valid unicode string (\\ud83d\\ude00 is one character: a pair)",
                found="\\ud800-\\udfff alone",
                hint="the writer cut a string inside an emoji or other character: write the whole character",
            )
            continue
        if not isinstance(obj, dict):
            problems.error(
                path,
                "the line is not a JSON object",
                line=lineno,
                expected="an object {...}",
                found=type(obj).__name__,
            )
            continue
        yield lineno, obj


def field_path(loc: tuple[int | str, ...]) -> str:
    """Pydantic's location tuple as a readable path: ``retrieved[3].score``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def validate_line(
    model: type[BaseModel], obj: dict[str, Any], path: Path, lineno: int, problems: Problems
) -> BaseModel | None:
    """Validate one object against ``model``; report each failing field with line and value."""
    try:
        return model.model_validate(obj)
    except ValidationError as exc:
        for err in exc.errors(include_url=False):
            loc = tuple(err["loc"])
            kind = err["type"]
            if kind == "extra_forbidden":
                problems.error(
                    path,
                    "unknown field",
                    line=lineno,
                    field=field_path(loc),
                    found=short(err.get("input")),
                    hint="remove it or check its spelling (see `evalcore schema`)",
                )
            elif kind == "missing":
                problems.error(
                    path,
                    "required field is missing",
                    line=lineno,
                    field=field_path(loc),
                    hint="add it (see `evalcore schema`)",
                )
            else:
                problems.error(
                    path,
                    err["msg"],
                    line=lineno,
                    field=field_path(loc),
                    found=short(err.get("input")),
                )
        return None


def cut_off(text: str) -> str | None:
    """What is left open where a JSON line ends (a string, the lists and objects around it), innermost
    first; None if nothing is (the line is wrong in another way).

    >>> cut_off('{"qid": "q1", "retrieved": [{"chunk_id": "c1", "text": "The resto')
    "the string from column 56, an object in 'retrieved', the list 'retrieved' and the line's object are not closed"
    >>> cut_off('{"qid": "q1"} x') is None
    True
    """
    stack: list[tuple[str, str | None]] = []
    in_string, escaped, start = False, False, 0
    last_string: str | None = None
    key: str | None = None
    buf: list[str] = []
    for col, ch in enumerate(text, start=1):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
                last_string = "".join(buf)
            else:
                buf.append(ch)
            continue
        if ch == '"':
            in_string, start, buf = True, col, []
        elif ch == ":":
            key = last_string
        elif ch in "{[":
            parent = stack[-1][0] if stack else None
            stack.append((ch, key if parent == "{" else (stack[-1][1] if stack else None)))
            key = None
        elif ch in "}]":
            if not stack or stack[-1][0] != ("{" if ch == "}" else "["):
                return None  # a bracket closed wrongly: malformed, not cut off
            stack.pop()
        elif ch == ",":
            key = None
    if not stack and not in_string:
        return None
    parts = [f"the string from column {start}"] if in_string else []
    for i, (bracket, name) in enumerate(reversed(stack)):
        if i == len(stack) - 1:
            parts.append("the line's object")
        elif bracket == "[":
            parts.append(f"the list '{name}'" if name else "a list")
        else:
            parts.append(f"an object in '{name}'" if name else "an object")
    return (", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]) + (
        " are not closed" if len(parts) > 1 else " is not closed"
    )


# Loading the compiled scanner (numba, even from its disk cache) costs about 1.3 s once per process;
# the line-by-line reader handles about 18 MB/s. Below this size, while the scanner is not loaded yet,
# reading line by line is the faster way (a user's first dashboard view on a handful of small runs).
SCAN_WORTH = 16 << 20


def scan_worth_it(path: Path) -> bool:
    """Whether to read ``path`` with the compiled scanner rather than line by line: it is loaded (or
    loading, for a folder worth it), or the file is big enough to pay for loading it. Both ways
    accept and refuse the same files (``tests/runs/test_jsonl_fast.py``)."""
    import sys

    if _WANTED.is_set() or "evalcore.runs._scan" in sys.modules:
        return True
    try:
        return path.stat().st_size >= SCAN_WORTH
    except OSError:
        return True


def load_scanner_for(total_bytes: int, then: Callable[[], None] | None = None) -> None:
    """Load the compiled scanner when files of ``total_bytes`` together are about to be read: a
    folder of many runs, each under :data:`SCAN_WORTH`, pays for loading it many times over (20 runs of
    8.5 MB: 46 s line by line, a few seconds scanned). It loads on a background thread (importing
    numba alone takes a while; the first files parse with pyarrow meanwhile), and ``then`` runs after
    it — e.g. loading the retrieval kernel, which would otherwise hold numba's lock while the first
    files wait for their scan."""
    if total_bytes < SCAN_WORTH:
        if then is not None:
            then()
        return
    _WANTED.set()
    _warm_scanner_soon(then)


# Files larger than this are read a block of whole lines at a time: the file's bytes, the scanner's
# buffers and the JSON reader's copy then exist for a few blocks, not for the whole file (a 2.2 GB run
# read whole peaked at 9x its frames); WORKERS blocks are read side by side, one per core.
BLOCK = 64 << 20
WORKERS = max(2, min(4, os.cpu_count() or 2))


def read_plain_blocks(
    path: Path,
    convert: Callable[[pl.DataFrame, int], T | None],
    *,
    no_null: Sequence[str] = (),
    lift: str | None = None,
    block: int | None = None,
) -> list[T] | None:
    """Each block of whole lines of a plainly valid file (the whole file when it is at most ``block``
    bytes, :data:`BLOCK`) read into a frame and handed at once to ``convert(frame, first_line)``,
    which keeps what it needs: the block's frame and its parse buffers are freed before the next
    block is read, so a big file's peak memory is what ``convert`` keeps plus one block's parse. None when a block is not plainly valid or ``convert`` refuses one (returns None).

    Plainly valid: no byte order mark, no blank line, no key twice in one object, no escaped key, no
    ``null`` as the value of a key in ``no_null``, nothing the JSON readers refuse. Types are inferred
    per block, so a value of an unexpected type shows in the column's type (``convert`` checks those).

    ``lift`` names a top-level key whose value is a list of flat objects (a run's ``retrieved``
    chunks: most of its bytes) that the compiled scanner reads itself, once it is loaded
    (:func:`_read_lifted`); a JSON reader then reads only the rest of each line."""
    block = BLOCK if block is None else block
    try:
        size = path.stat().st_size
    except OSError:
        return None
    if size <= block:
        data = _plain_bytes(path)
        df = None if data is None else _read_block(data, no_null, lift)
        out = None if df is None else convert(df, 1)
        return None if out is None else [out]
    if not scan_worth_it(path):
        return None
    if lift is not None:
        load_scanner_for(size)  # lifted from the next blocks on, once loaded
    try:
        parts = _blocks(path, convert, no_null, lift, block)
    except OSError:  # the file went away or was cut short while it was read
        return None
    return parts or None  # nothing read: the file was emptied after its size was taken


def _blocks(
    path: Path,
    convert: Callable[[pl.DataFrame, int], T | None],
    no_null: Sequence[str],
    lift: str | None,
    block: int,
) -> list[T] | None:
    """The blocks of ``path`` read in order and converted on :data:`WORKERS` threads, each block on
    one thread (the scan, the lifter and pyarrow release the interpreter): one big file keeps every
    core busy, and at most ``WORKERS`` blocks' bytes and parse buffers exist at once. A block's first
    line is the count of newlines before it (a plainly valid file has no blank line; a block's frame
    holding a different number of rows than its newlines sends the file to the exact reader)."""
    from concurrent.futures import Future, ThreadPoolExecutor

    def one(view: memoryview, first_line: int, lines: int) -> T | None:
        df = _read_block(view, no_null, lift, threaded=False)
        if df is None or df.height != lines:
            return None
        return convert(df, first_line)

    parts: list[T] = []
    pending: list[Future[T | None]] = []
    carry = b""
    first_line = 1
    ok = True

    def settle(keep: int) -> bool:
        while len(pending) > keep:
            out = pending.pop(0).result()
            if out is None:
                return False
            parts.append(out)
        return True

    with path.open("rb") as fh, ThreadPoolExecutor(WORKERS, thread_name_prefix="evalcore-block") as pool:
        while ok:
            # Read straight into a fresh buffer after the previous block's unfinished line: no copy
            # of a block's bytes (the frames keep no view of them).
            buf = np.empty(len(carry) + block, np.uint8)  # not zeroed: every byte used is read
            buf[: len(carry)] = np.frombuffer(carry, np.uint8)
            got = fh.readinto(buf.data[len(carry) :])
            end = len(carry) + got
            if not end:
                break
            if first_line == 1 and buf[:3].tobytes() == b"\xef\xbb\xbf":
                ok = False
                break
            cut = _after_last_newline(buf, end) if got else end
            if cut == 0:  # one line longer than a block: take the next block too
                carry = buf[:end].tobytes()
                continue
            lines = int(np.count_nonzero(buf[:cut] == 10)) + (buf[cut - 1] != 10)
            pending.append(pool.submit(one, buf.data[:cut], first_line, lines))
            first_line += lines
            carry = buf[cut:end].tobytes()
            del buf
            ok = settle(WORKERS - 1)  # the next block is read while these parse
            if not got:
                break
        ok = ok and settle(0)
        for f in pending:
            f.cancel()
    return parts if ok else None


def _after_last_newline(buf: np.ndarray, end: int) -> int:
    """1 + where the last newline of ``buf[:end]`` is, 0 if none: looked for a MB at a time from the end."""
    hi = end
    while hi > 0:
        lo = max(0, hi - (1 << 20))
        found = np.flatnonzero(buf[lo:hi] == 10)
        if len(found):
            return lo + int(found[-1]) + 1
        hi = lo
    return 0


# A block at least this big is parsed by pyarrow on every core while the compiled scan checks it on
# another thread (one big file); smaller ones, one thread each (a folder's files read side by side).
THREADED_BLOCK = 32 << 20


def _read_block(
    data: bytes | memoryview,
    no_null: Sequence[str],
    lift: str | None,
    *,
    threaded: bool = True,
) -> pl.DataFrame | None:
    """One block of whole lines (or the whole file) as a frame; see :func:`read_plain_blocks`.
    ``threaded=False``: on this thread alone (the caller reads blocks side by side)."""
    buf = np.frombuffer(data, dtype=np.uint8)
    # While the compiled code loads (numba, about a second once per process) a folder's first files
    # are parsed by pyarrow, then scanned; after that, scanned and lifted.
    lifting = lift is not None and _COMPILED.is_set()
    if threaded and len(data) >= THREADED_BLOCK:
        # The scan (compiled, it releases the interpreter) runs beside pyarrow's parse on all cores;
        # the scan checks UTF-8, so pyarrow need not, and its frame counts only when the scan is clean.
        scanned: list[tuple[int, int, int] | None] = []
        scan = threading.Thread(target=lambda: scanned.append(_scan(buf, no_null)), name="evalcore-scan")
        scan.start()
        first = _read_arrow(data, checked=False, threads=True)
        scan.join()
        counts = scanned[0] if scanned else None
        lifting = False
    else:
        counts = _scan(buf, no_null)
        # (the scan checked UTF-8 — not the JSON reader's job, nor a decoded copy of the block's)
        first = None if lifting or counts is None else _read_arrow(data, checked=False)
    if counts is None:
        return None
    lines, values, strings = counts

    # pyarrow's JSON reader first (about twice polars' speed, side by side with other files on a
    # few threads); it infers types per block and refuses a later block that disagrees, and it may
    # read a date-like string as a timestamp (then the string count differs). Polars next, with types
    # from every line. Either way the frame must hold exactly the values the scan counted: a key
    # dropped or a value stringified shows as a difference, and the line-by-line reader takes over.
    def counted(df: pl.DataFrame | None) -> bool:
        return df is not None and df.height == lines and present_counts(df) == (values, strings)

    if lifting:
        first = _read_lifted(buf, lift)  # type: ignore[arg-type]
        if counted(first):
            return first
        first = _read_arrow(data, checked=False)
    if counted(first):
        return first
    # From the bytes, not the path: polars would read a path with [ ] * ? as a glob pattern.
    second = _read_polars(io.BytesIO(data))
    if counted(second):
        return second
    return None


_COMPILED = threading.Event()  # the scanner's compiled functions are loaded (see :func:`load_scanner_for`)
_WANTED = threading.Event()  # a folder worth the scanner is being read: every file takes it
_WARMING = threading.Lock()


def scanner_compiled(function: str = "lift_list") -> bool:
    """Whether numba's disk cache (beside the scanner's source) holds this function of the scanner
    (by default the lifter) — else calling it means compiling it: several seconds holding the
    interpreter."""
    return any((Path(__file__).parent / "__pycache__").glob(f"_scan.{function}-*.nbi"))


def _warm_scanner(then: Callable[[], None] | None = None) -> None:
    try:
        from evalcore.runs._scan import warm_up

        warm_up()
        _COMPILED.set()
    finally:
        if then is not None:
            then()


def _warm_scanner_soon(then: Callable[[], None] | None = None) -> None:
    """Load the compiled scanner and lifter on a background thread, so that the files after a
    folder's first few are lifted; then ``then``. Not compiled yet (right after an install):
    compiled in a low-priority child process instead, as the retrieval kernel is, and this process
    reads with pyarrow meanwhile."""
    if _COMPILED.is_set() or not _WARMING.acquire(blocking=False):
        if then is not None:
            then()
        return
    if scanner_compiled():
        threading.Thread(target=_warm_scanner, args=(then,), name="evalcore-scanner", daemon=True).start()
        return
    from evalcore.metrics.retrieval import compile_elsewhere

    compile_elsewhere("from evalcore.runs._scan import warm_up; warm_up()")
    if then is not None:
        then()


def _read_lifted(buf: np.ndarray, key: str) -> pl.DataFrame | None:
    """A file :func:`~evalcore.runs._scan.scan_jsonl` found clean (so UTF-8 throughout), read in two
    parts: the lists under ``key`` by the compiled scanner straight into Arrow arrays
    (:func:`evalcore.runs._scan.lift_list`), the rest of each line (the list replaced by ``0``) by
    pyarrow — about three times faster than pyarrow over the whole line. None when the
    lists are not of that shape (an unknown key, a nested value, a string where a number belongs):
    the caller reads the file whole."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from evalcore.runs._scan import LIFT_FIELDS, LIFT_STRINGS, lift

    out = lift(buf, key)
    if out is None:
        return None
    _, rest, rest_len, rows, list_off, has_list, n, values, lengths, offsets, valid = out
    df = _read_arrow(memoryview(rest[:rest_len]), checked=False)  # UTF-8: checked by the scan
    if df is None or df.height != rows:
        return None
    if not has_list[:rows].any():
        return df
    children, names = [], []
    for f, name in enumerate(LIFT_FIELDS):
        ok = valid[f, :n]
        n_valid = int(np.count_nonzero(ok))
        if not n_valid:
            continue  # null wherever it appears: as absent for the tables
        # Copies of the used part: polars keeps strings as views into the buffer they came from,
        # and a view of one row kept the lifter's whole (fields x block) arrays alive (a
        # million-question run's read peaked at 4.0 GB for 2.35 GB of tables; 3.3 GB with copies).
        arr = pa.LargeStringArray.from_buffers(
            n,
            pa.py_buffer(offsets[f, : n + 1].copy()),
            pa.py_buffer(values[f, : lengths[f]].copy()),
            None if n_valid == n else pa.py_buffer(np.packbits(ok, bitorder="little")),
            null_count=n - n_valid,
        )
        if not LIFT_STRINGS[f]:
            try:  # JSON numbers (the grammar checked): exactly as a JSON reader parses them
                arr = pc.cast(arr, pa.int64() if name == "rank" else pa.float64())
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                return None
        children.append(arr)
        names.append(name)
    lists = pa.LargeListArray.from_arrays(
        pa.array(list_off[: rows + 1]),
        pa.StructArray.from_arrays(children, names=names),
        mask=pa.array(~has_list[:rows]),
    )
    return df.with_columns(pl.Series(key, lists))


_REFUSED = (
    pl.exceptions.PolarsError,
    OSError,
    ValueError,
    TypeError,
    NotImplementedError,
)  # pyarrow: ValueError


def _read_polars(data: io.BytesIO) -> pl.DataFrame | None:
    try:
        return pl.read_ndjson(data, infer_schema_length=None)
    except _REFUSED:
        return None


def read_arrow(data: memoryview) -> pl.DataFrame | None:
    """Bytes the scan found clean (so UTF-8 throughout) read by pyarrow's JSON reader, which infers
    types strictly, on every core (one big file: a test set); None when it refuses them."""
    return _read_arrow(data, checked=False, threads=True)


def _read_arrow(
    data: bytes | memoryview, *, checked: bool = True, threads: bool = False
) -> pl.DataFrame | None:
    import pyarrow as pa
    import pyarrow.json as pj

    try:
        if checked:
            str(data, "utf-8")  # pyarrow does not check (polars does): bad bytes go to the exact reader
        # One thread per file where the caller reads several files at once (faster than threads
        # inside one); every core for one big file.
        table = pj.read_json(
            pa.BufferReader(pa.py_buffer(data)),
            read_options=pj.ReadOptions(use_threads=threads, block_size=1 << 24),
        )
    except _REFUSED:
        return None
    df = pl.from_arrow(table)
    return df if isinstance(df, pl.DataFrame) else None


def scan_clean(path: Path, no_null: Sequence[str] = ()) -> tuple[bytes, int, int, int] | None:
    """``(bytes, lines, values, strings)`` of a file the compiled scan finds plainly valid JSON Lines
    (as :func:`read_plain_blocks` requires: no byte order mark, no blank line, no key twice, no escaped key,
    no ``null`` for a key in ``no_null``), or None. A reader that reads the bytes its own way checks
    its frame against ``values`` and ``strings`` with :func:`present_counts`."""
    data = _plain_bytes(path)
    counts = None if data is None else _scan(np.frombuffer(data, dtype=np.uint8), no_null)
    return None if data is None or counts is None else (data, *counts)


def _plain_bytes(path: Path) -> bytes | None:
    """The file's bytes when the scanner is worth loading for it and it starts with no byte order mark."""
    if not scan_worth_it(path):
        return None
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if data.startswith(b"\xef\xbb\xbf") or not data:
        return None
    return data


def _scan(buf: np.ndarray, no_null: Sequence[str]) -> tuple[int, int, int] | None:
    """``(lines, values, strings)`` when the scan finds the bytes plainly valid (and not one blank line)."""
    from evalcore.runs._scan import CLEAN, key_hash, scan_jsonl

    problem, _, lines, blank, values, strings = scan_jsonl(
        buf, np.array([key_hash(k.encode()) for k in no_null], np.int64)
    )
    if problem != CLEAN or blank or not lines:
        return None
    return lines, values, strings


def present_counts(df: pl.DataFrame) -> tuple[int, int]:
    """How many keys of the JSON the frame holds a value for, and how many of those are strings —
    what the scan counted (:func:`scan_clean`), when the frame holds every value exactly."""
    n = s = 0
    for col in df.get_columns():
        a, b = _present_in(col)
        n, s = n + a, s + b
    return n, s


def _present_in(col: pl.Series) -> tuple[int, int]:
    here = col.len() - col.null_count()  # each non-null value is one key's value
    dtype = col.dtype
    if isinstance(dtype, pl.Struct):
        parts = [_present_in(col.struct.field(f.name)) for f in dtype.fields]
        return here + sum(p[0] for p in parts), sum(p[1] for p in parts)
    if isinstance(dtype, pl.List):
        inner = col.explode()  # elements are no keys; the keys of element objects are
        if isinstance(inner.dtype, pl.Struct):
            parts = [_present_in(inner.struct.field(f.name)) for f in inner.dtype.fields]
            return here + sum(p[0] for p in parts), sum(p[1] for p in parts)
        return here, 0
    return here, here if dtype == pl.String else 0


def validate_plain(path: Path, model: type[M]) -> list[tuple[int, M]] | None:
    """Every line validated against ``model`` in one call to pydantic's compiled JSON validator (no
    Python dict per line), with its line number — or None when the file is not plainly valid (the
    scan of :func:`read_plain_blocks` finds something, or any line fails), so that the line-by-line reader
    names each problem."""
    from pydantic import TypeAdapter

    data = _plain_bytes(path)
    if data is None:
        return None
    from evalcore.runs._scan import CLEAN, scan_jsonl

    problem, *_ = scan_jsonl(np.frombuffer(data, dtype=np.uint8), np.zeros(0, np.int64))
    if problem != CLEAN:
        return None
    numbered = [(i, raw) for i, raw in enumerate(data.split(b"\n"), start=1) if raw.strip()]
    if not numbered:
        return None
    try:
        items = TypeAdapter(list[model]).validate_json(b"[" + b",".join(raw for _, raw in numbered) + b"]")  # type: ignore[valid-type]
    except (ValidationError, ValueError):
        return None
    return [(i, item) for (i, _), item in zip(numbered, items, strict=True)]
