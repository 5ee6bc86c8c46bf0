"""A file path as polars must be given it to read that file and no other.

polars reads a path holding ``[``, ``]``, ``*`` or ``?`` as a glob pattern: ``runs/v[2]/results.parquet``
reads ``runs/v2/results.parquet`` if that exists — another run, silently. Every path evalcore hands
to a polars reader goes through :func:`literal`, which escapes those characters (``[[]`` is a
literal ``[`` to the pattern matcher), so the file named is the file read.
"""

from __future__ import annotations

import re
from pathlib import Path

_GLOB = re.compile(r"([\[\]*?])")


def literal(path: Path | str) -> str:
    """``path`` with its glob characters escaped for polars' readers.

    >>> literal("runs/v[2]/a*.jsonl")
    'runs/v[[]2[]]/a[*].jsonl'
    """
    return _GLOB.sub(r"[\1]", str(path))
