"""One compiled pass over a JSON Lines file's bytes: what a vectorised JSON reader cannot see.

polars reads JSON Lines at hundreds of MB/s but keeps the first of two duplicate keys and cannot tell
a missing key from an explicit ``null``; both would be silently wrong numbers here (the line-by-line
reader rejects them). This scan finds them, so the fast path is taken only for files that are
plainly valid, and the exact reader names the line and field of anything else.
"""

from __future__ import annotations

import numpy as np
from numba import njit

CLEAN, DUPLICATE_KEY, ESCAPED_KEY, FORBIDDEN_NULL, UNBALANCED, TOO_DEEP = range(6)
MAX_DEPTH = 256  # deeper nesting than any record has: the exact reader takes the file
MAX_KEYS = 1 << 16
_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


def key_hash(key: bytes) -> int:
    """The hash :func:`scan_jsonl` computes for a key (64-bit FNV-1a of its bytes), as a signed int."""
    h = int(_FNV_OFFSET)
    for b in key:
        h = ((h ^ b) * int(_FNV_PRIME)) & 0xFFFFFFFFFFFFFFFF
    return h - (1 << 64) if h >= 1 << 63 else h


@njit(cache=True, nogil=True)
def scan_jsonl(buf: np.ndarray, no_null: np.ndarray) -> tuple[int, int, int, int, int, int]:
    """``(problem, line, lines, blank_lines, values, strings)``: the first problem (one of the constants
    above; CLEAN if none) and its 1-based line, how many lines hold something, how many are blank, how
    many keys have a value other than null, and how many of those values are strings. (A reader that
    dropped a key or turned a number into a string shows in the last two.)

    Problems: a key repeated in one object (at any depth); a key holding a backslash escape (it could
    spell a key the hash does not see); ``null`` as the value of a key whose hash is in ``no_null``;
    brackets that do not balance within a line; nesting deeper than :data:`MAX_DEPTH`.
    """
    n = buf.shape[0]
    keys = np.empty(MAX_KEYS, np.int64)  # hashes of the keys of every open object
    starts = np.empty(MAX_DEPTH, np.int64)  # per open container: where its keys start in ``keys``
    is_obj = np.empty(MAX_DEPTH, np.bool_)
    depth = 0
    nkeys = 0
    line = 1
    lines = 0
    blank = 0
    has_content = False
    key_next = False  # the next string is a key
    last_key = np.int64(0)
    after_colon = False
    values = 0
    strings = 0
    i = 0
    while i < n:
        c = buf[i]
        if c == 34:  # a string: read to its closing quote in one tight loop
            has_content = True
            if after_colon:
                values += 1
                strings += 1
            after_colon = False
            i += 1
            if key_next:
                key_next = False
                h = _FNV_OFFSET
                while i < n and buf[i] != 34:
                    if buf[i] == 92:  # an escaped key could spell a key the hash does not see
                        return ESCAPED_KEY, line, lines, blank, 0, 0
                    h = (h ^ np.uint64(buf[i])) * _FNV_PRIME
                    i += 1
                k = np.int64(h)
                for j in range(starts[depth - 1], nkeys):
                    if keys[j] == k:
                        return DUPLICATE_KEY, line, lines, blank, 0, 0
                if nkeys == MAX_KEYS:
                    return TOO_DEEP, line, lines, blank, 0, 0
                keys[nkeys] = k
                nkeys += 1
                last_key = k
            else:
                while i < n and buf[i] != 34:
                    if buf[i] == 92:
                        i += 1  # skip the escaped character
                    elif buf[i] == 10:
                        return UNBALANCED, line, lines, blank, 0, 0
                    i += 1
            if i >= n:
                return UNBALANCED, line, lines, blank, 0, 0
            i += 1  # past the closing quote
            continue
        i += 1
        if c == 10:  # newline
            if depth != 0:
                return UNBALANCED, line, lines, blank, 0, 0
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
        if c == 123 or c == 91:  # { or [
            if after_colon:
                values += 1
            if depth == MAX_DEPTH:
                return TOO_DEEP, line, lines, blank, 0, 0
            starts[depth] = nkeys
            is_obj[depth] = c == 123
            depth += 1
            key_next = c == 123
            after_colon = False
        elif c == 125 or c == 93:  # } or ]
            if depth == 0:
                return UNBALANCED, line, lines, blank, 0, 0
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
                        return FORBIDDEN_NULL, line, lines, blank, 0, 0
            elif after_colon:  # a number, true or false
                values += 1
            after_colon = False
    if depth != 0:
        return UNBALANCED, line, lines, blank, 0, 0
    if has_content:
        lines += 1
    return CLEAN, 0, lines, blank, values, strings
