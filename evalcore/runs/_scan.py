"""One compiled pass over a JSON Lines file's bytes: what a vectorised JSON reader cannot see.

polars reads JSON Lines at hundreds of MB/s but keeps the first of two duplicate keys and cannot tell
a missing key from an explicit ``null``; both would be silently wrong numbers here (the line-by-line
reader rejects them). This scan finds them, so the fast path is taken only for files that are
plainly valid, and the exact reader names the line and field of anything else.
"""

from __future__ import annotations

import numpy as np
from numba import njit

CLEAN, DUPLICATE_KEY, ESCAPED_KEY, FORBIDDEN_NULL, UNBALANCED = range(5)
_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


def key_hash(key: bytes) -> int:
    """The hash :func:`scan_jsonl` computes for a key (64-bit FNV-1a of its bytes), as a signed int."""
    h = int(_FNV_OFFSET)
    for b in key:
        h = ((h ^ b) * int(_FNV_PRIME)) & 0xFFFFFFFFFFFFFFFF
    return h - (1 << 64) if h >= 1 << 63 else h


@njit(cache=True, nogil=True)
def scan_jsonl(buf: np.ndarray, no_null: np.ndarray) -> tuple[int, int, int, int]:
    """``(problem, line, lines, blank_lines)``: the first problem (one of the constants above; CLEAN if
    none) and its 1-based line, how many lines hold something, and how many are blank.

    Problems: a key repeated in one object (at any depth); a key holding a backslash escape (it could
    spell a key the hash does not see); ``null`` as the value of a key whose hash is in ``no_null``;
    brackets that do not balance within a line.
    """
    n = buf.shape[0]
    keys = np.empty(n // 4 + 16, np.int64)  # hashes of the keys of every open object
    starts = np.empty(n // 2 + 16, np.int64)  # per open container: where its keys start in ``keys``
    is_obj = np.empty(n // 2 + 16, np.bool_)
    depth = 0
    nkeys = 0
    line = 1
    lines = 0
    blank = 0
    has_content = False
    in_str = False
    escaped = False
    key_next = False  # the next string is a key
    is_key = False
    key_escaped = False
    h = np.uint64(0)
    last_key = np.int64(0)
    after_colon = False
    for i in range(n):
        c = buf[i]
        if in_str:
            if is_key:
                if escaped:
                    escaped = False
                elif c == 92:  # backslash
                    escaped = True
                    key_escaped = True
                elif c == 34:  # closing quote
                    in_str = False
                    if key_escaped:
                        return ESCAPED_KEY, line, lines, blank
                    k = np.int64(h)
                    for j in range(starts[depth - 1], nkeys):
                        if keys[j] == k:
                            return DUPLICATE_KEY, line, lines, blank
                    keys[nkeys] = k
                    nkeys += 1
                    last_key = k
                else:
                    h = (h ^ np.uint64(c)) * _FNV_PRIME
                continue
            if escaped:
                escaped = False
            elif c == 92:
                escaped = True
            elif c == 34:
                in_str = False
            continue
        if c == 10:  # newline
            if depth != 0:
                return UNBALANCED, line, lines, blank
            if has_content:
                lines += 1
            else:
                blank += 1
            has_content = False
            line += 1
            after_colon = False
            continue
        if c == 32 or c == 9 or c == 13:
            continue
        has_content = True
        if c == 34:  # opening quote
            in_str = True
            escaped = False
            is_key = key_next
            key_next = False
            if is_key:
                h = _FNV_OFFSET
                key_escaped = False
            after_colon = False
        elif c == 123:  # {
            starts[depth] = nkeys
            is_obj[depth] = True
            depth += 1
            key_next = True
            after_colon = False
        elif c == 91:  # [
            starts[depth] = nkeys
            is_obj[depth] = False
            depth += 1
            key_next = False
            after_colon = False
        elif c == 125 or c == 93:  # } or ]
            if depth == 0:
                return UNBALANCED, line, lines, blank
            depth -= 1
            nkeys = starts[depth]
            key_next = False
            after_colon = False
        elif c == 44:  # ,
            key_next = depth > 0 and is_obj[depth - 1]
            after_colon = False
        elif c == 58:  # :
            after_colon = True
        else:
            if c == 110 and after_colon:  # a value starting with n: null
                for j in range(no_null.shape[0]):
                    if no_null[j] == last_key:
                        return FORBIDDEN_NULL, line, lines, blank
            after_colon = False
    if depth != 0 or in_str:
        return UNBALANCED, line, lines, blank
    if has_content:
        lines += 1
    return CLEAN, 0, lines, blank
