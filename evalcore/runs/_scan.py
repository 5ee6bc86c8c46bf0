"""One compiled pass over a JSON Lines file's bytes: what a vectorised JSON reader cannot see.

polars reads JSON Lines at hundreds of MB/s but keeps the first of two duplicate keys and cannot tell
a missing key from an explicit ``null``; both would be silently wrong numbers here (the line-by-line
reader rejects them). This scan finds them, so the fast path is taken only for files that are
plainly valid, and the exact reader names the line and field of anything else.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

(
    CLEAN,
    DUPLICATE_KEY,
    ESCAPED_KEY,
    FORBIDDEN_NULL,
    UNBALANCED,
    TOO_DEEP,
    NOT_UTF8,
    LONE_SURROGATE,
    BAD_ESCAPE,
) = range(9)
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
def _hex(b: int) -> int:
    if 48 <= b <= 57:
        return b - 48
    if 97 <= b <= 102:
        return b - 87
    if 65 <= b <= 70:
        return b - 55
    return -1


@njit(cache=True, nogil=True)
def _utf8_len(buf: np.ndarray, i: int) -> int:
    """The length of the UTF-8 sequence starting at ``buf[i]`` (a byte >= 0x80), or -1 when it is not
    one (a stray continuation byte, an overlong form, a surrogate, past U+10FFFF, cut short)."""
    n = buf.shape[0]
    b = buf[i]
    if 0xC2 <= b <= 0xDF:
        k, lo, hi = 2, 0x80, 0xBF
    elif 0xE0 <= b <= 0xEF:
        k = 3
        lo = 0xA0 if b == 0xE0 else 0x80
        hi = 0x9F if b == 0xED else 0xBF
    elif 0xF0 <= b <= 0xF4:
        k = 4
        lo = 0x90 if b == 0xF0 else 0x80
        hi = 0x8F if b == 0xF4 else 0xBF
    else:
        return -1
    if i + k > n or not lo <= buf[i + 1] <= hi:
        return -1
    for j in range(2, k):
        if not 0x80 <= buf[i + j] <= 0xBF:
            return -1
    return k


@njit(cache=True, nogil=True)
def _hex4(buf: np.ndarray, i: int) -> int:
    """The four hex digits at ``buf[i:i+4]`` as a number, or -1."""
    if i + 4 > buf.shape[0]:
        return -1
    cp = 0
    for j in range(4):
        h = _hex(buf[i + j])
        if h < 0:
            return -1
        cp = cp * 16 + h
    return cp


@njit(cache=True, nogil=True)
def _escape_len(buf: np.ndarray, i: int) -> int:
    """The length of the ``\\uXXXX`` escape at ``buf[i]`` (12 for a surrogate pair), -1 for half a
    pair, -2 for anything but four hex digits (skipping six bytes over it could step over the
    string's closing quote)."""
    cp = _hex4(buf, i + 2)
    if cp < 0:
        return -2
    if cp < 0xD800 or cp >= 0xE000:
        return 6
    if cp >= 0xDC00 or i + 12 > buf.shape[0] or buf[i + 6] != 92 or buf[i + 7] != 117:
        return -1
    lo = _hex4(buf, i + 8)
    return 12 if 0xDC00 <= lo < 0xE000 else -1


@njit(cache=True, nogil=True)
def scan_jsonl(buf: np.ndarray, no_null: np.ndarray) -> tuple[int, int, int, int, int, int]:
    """``(problem, line, lines, blank_lines, values, strings)``: the first problem (one of the constants
    above; CLEAN if none) and its 1-based line, how many lines hold something, how many are blank, how
    many keys have a value other than null, and how many of those values are strings. (A reader that
    dropped a key or turned a number into a string shows in the last two.)

    Problems: a key repeated in one object (at any depth); a key holding a backslash escape (it could
    spell a key the hash does not see); ``null`` as the value of a key whose hash is in ``no_null``;
    brackets that do not balance within a line; nesting deeper than :data:`MAX_DEPTH`; bytes in a
    string that are not UTF-8; a ``\\u`` escape without four hex digits; an escaped half of a surrogate pair (``\\ud800`` alone: no character,
    which the exact reader refuses and pyarrow would keep as something else).
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
                    step = 1
                    if buf[i] >= 128:
                        step = _utf8_len(buf, i)
                        if step < 0:
                            return NOT_UTF8, line, lines, blank, 0, 0
                    for j in range(step):
                        h = (h ^ np.uint64(buf[i + j])) * _FNV_PRIME
                    i += step
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
                    b = buf[i]
                    if b == 92:
                        if i + 1 < n and buf[i + 1] == 117:  # \uXXXX: half a surrogate pair is no character
                            step = _escape_len(buf, i)
                            if step < 0:
                                return (
                                    (LONE_SURROGATE if step == -1 else BAD_ESCAPE),
                                    line,
                                    lines,
                                    blank,
                                    0,
                                    0,
                                )
                            i += step
                        else:
                            i += 2  # the escaped character
                        continue
                    if b == 10:
                        return UNBALANCED, line, lines, blank, 0, 0
                    if b >= 128:
                        step = _utf8_len(buf, i)
                        if step < 0:
                            return NOT_UTF8, line, lines, blank, 0, 0
                        i += step
                        continue
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


# ---------------------------------------------------------------------------------------------------
# Lifting one list of flat objects out of every line (``retrieved``: 20 chunks a line, most of a file)

LIFT_FIELDS = ("chunk_id", "score", "doc_id", "text", "rank")
LIFT_STRINGS = (True, False, True, True, False)  # the others are numbers (rank: an integer)
_LIFT_NAMES = np.frombuffer("".join(LIFT_FIELDS).encode(), np.uint8).copy()
_LIFT_ENDS = np.cumsum([len(f) for f in LIFT_FIELDS]).astype(np.int64)


@njit(cache=True, nogil=True)
def _field(buf: np.ndarray, start: int, end: int, names: np.ndarray, ends: np.ndarray) -> int:
    """Which of :data:`LIFT_FIELDS` the key ``buf[start:end]`` is, or -1."""
    lo = 0
    for f in range(ends.shape[0]):
        hi = ends[f]
        if hi - lo == end - start:
            same = True
            for j in range(hi - lo):
                if buf[start + j] != names[lo + j]:
                    same = False
                    break
            if same:
                return f
        lo = hi
    return -1


@njit(cache=True, nogil=True)
def _string(buf: np.ndarray, i: int, out: np.ndarray, o: int) -> tuple[int, int]:
    """Decode the JSON string starting at ``buf[i]`` (its opening quote) into ``out`` from ``o``;
    ``(i, o)`` after it, or ``(-1, o)`` for anything but a plain, valid string."""
    n = buf.shape[0]
    i += 1
    while i < n:
        b = buf[i]
        if b == 34:
            return i + 1, o
        if b < 32:
            return -1, o
        if b != 92:
            out[o] = b
            o += 1
            i += 1
            continue
        if i + 1 >= n:
            return -1, o
        e = buf[i + 1]
        i += 2
        if e == 34 or e == 92 or e == 47:
            out[o] = e
        elif e == 110:
            out[o] = 10
        elif e == 116:
            out[o] = 9
        elif e == 114:
            out[o] = 13
        elif e == 98:
            out[o] = 8
        elif e == 102:
            out[o] = 12
        elif e == 117:  # \uXXXX (a surrogate pair is two of them) -> UTF-8, by the scan's rule
            step = _escape_len(buf, i - 2)
            if step < 0:
                return -1, o
            cp = _hex4(buf, i)
            if step == 12:
                cp = 0x10000 + ((cp - 0xD800) << 10) + (_hex4(buf, i + 6) - 0xDC00)
            i += step - 2
            if cp < 0x80:
                out[o] = cp
            elif cp < 0x800:
                out[o] = 0xC0 | (cp >> 6)
                o += 1
                out[o] = 0x80 | (cp & 0x3F)
            elif cp < 0x10000:
                out[o] = 0xE0 | (cp >> 12)
                o += 1
                out[o] = 0x80 | ((cp >> 6) & 0x3F)
                o += 1
                out[o] = 0x80 | (cp & 0x3F)
            else:
                out[o] = 0xF0 | (cp >> 18)
                o += 1
                out[o] = 0x80 | ((cp >> 12) & 0x3F)
                o += 1
                out[o] = 0x80 | ((cp >> 6) & 0x3F)
                o += 1
                out[o] = 0x80 | (cp & 0x3F)
        else:
            return -1, o
        o += 1
    return -1, o


@njit(cache=True, nogil=True)
def _number(buf: np.ndarray, i: int, integer: bool) -> int:
    """The end of the JSON number starting at ``buf[i]`` (its grammar exactly), or -1; with
    ``integer`` a fraction or an exponent is refused too."""
    n = buf.shape[0]
    if i < n and buf[i] == 45:
        i += 1
    if i >= n:
        return -1
    if buf[i] == 48:
        i += 1
    elif 49 <= buf[i] <= 57:
        while i < n and 48 <= buf[i] <= 57:
            i += 1
    else:
        return -1
    if i < n and buf[i] == 46:
        if integer:
            return -1
        i += 1
        if i >= n or not 48 <= buf[i] <= 57:
            return -1
        while i < n and 48 <= buf[i] <= 57:
            i += 1
    if i < n and (buf[i] == 101 or buf[i] == 69):
        if integer:
            return -1
        i += 1
        if i < n and (buf[i] == 43 or buf[i] == 45):
            i += 1
        if i >= n or not 48 <= buf[i] <= 57:
            return -1
        while i < n and 48 <= buf[i] <= 57:
            i += 1
    return i


@njit(cache=True, nogil=True)
def _space(buf: np.ndarray, i: int) -> int:
    n = buf.shape[0]
    while i < n and (buf[i] == 32 or buf[i] == 9 or buf[i] == 13):
        i += 1
    return i


@njit(cache=True, nogil=True)
def _after_item(buf: np.ndarray, i: int, close: int) -> tuple[int, int]:
    """After an item of an object or array: ``(1, i)`` past a comma and the space after it, ``(0, i)``
    past the closing bracket ``close``, or ``(-1, i)``."""
    i = _space(buf, i)
    if i < buf.shape[0] and buf[i] == 44:
        return 1, _space(buf, i + 1)
    if i < buf.shape[0] and buf[i] == close:
        return 0, i + 1
    return -1, i


@njit(cache=True, nogil=True)
def lift_list(
    buf: np.ndarray,
    key: np.ndarray,
    names: np.ndarray,
    ends: np.ndarray,
    strings: np.ndarray,
    cap: int,
    lines: int,
) -> tuple[
    bool, np.ndarray, int, int, np.ndarray, np.ndarray, int, np.ndarray, np.ndarray, np.ndarray, np.ndarray
]:
    """Take the value of the top-level key ``key`` out of every line of a file that
    :func:`scan_jsonl` found clean, when it is an array of flat objects whose keys are among
    :data:`LIFT_FIELDS` (``chunk_id`` and ``score`` in each), with values of their kind or null.

    Returns ``(ok, rest, rest_len, rows, list_offsets, has_list, n_elements, data, data_len,
    offsets, valid)``: ``rest`` is the file with each such value replaced by ``0`` (for a JSON
    reader, now small); per row, where its elements start and whether it had the key; per field
    (in :data:`LIFT_FIELDS` order), the bytes of its values (strings decoded; numbers as written)
    with offsets and validity per element. ``ok`` is False for anything else — the caller reads the
    file as before. ``cap`` bounds the elements (1 + the ``{`` in the file) and ``lines`` the rows
    (1 + its newlines): :func:`lift` counts both, vectorised."""
    n = buf.shape[0]
    nf = ends.shape[0]
    rest = np.empty(n + 1, np.uint8)
    data = np.empty((nf, n + 1), np.uint8)
    data_len = np.zeros(nf, np.int64)
    offsets = np.empty((nf, cap + 1), np.int64)
    offsets[:, 0] = 0
    valid = np.zeros((nf, cap), np.bool_)
    list_off = np.zeros(lines + 1, np.int64)
    has_list = np.zeros(lines, np.bool_)
    fail = (False, rest, 0, 0, list_off, has_list, 0, data, data_len, offsets, valid)
    r = 0
    row = 0
    e = 0
    depth = 0
    expect_key = False
    lifting = False  # the last key read at depth 1 is ``key``
    klen = key.shape[0]
    i = 0
    while i < n:
        c = buf[i]
        if c == 34:
            start = i
            i += 1
            while i < n and buf[i] != 34:
                i += 2 if buf[i] == 92 else 1
            if i >= n:
                return fail  # the scan and this loop disagree on where the string ends: never lift
            i += 1
            if expect_key and depth == 1:
                lifting = i - start - 2 == klen
                if lifting:
                    for j in range(klen):
                        if buf[start + 1 + j] != key[j]:
                            lifting = False
                            break
            expect_key = False
            rest[r : r + i - start] = buf[start:i]
            r += i - start
            continue
        if c == 58 and depth == 1 and lifting:
            lifting = False
            rest[r] = 58
            r += 1
            i = _space(buf, i + 1)
            if i >= n or buf[i] != 91 or has_list[row]:
                return fail
            has_list[row] = True
            rest[r] = 48  # 0: never longer than the list it stands for ([] included)
            r += 1
            i = _space(buf, i + 1)
            if i < n and buf[i] == 93:
                i += 1
                continue
            while True:  # the elements: {...} , {...} ]
                if i >= n or buf[i] != 123:
                    return fail
                i = _space(buf, i + 1)
                if i < n and buf[i] == 125:
                    return fail  # {}: no chunk_id (the exact reader says so)
                while True:  # "field": value , ... }
                    if i >= n or buf[i] != 34:
                        return fail
                    ks = i + 1
                    i += 1
                    while i < n and buf[i] != 34:
                        i += 1
                    f = _field(buf, ks, i, names, ends)
                    if f < 0:
                        return fail
                    i = _space(buf, i + 1)
                    if i >= n or buf[i] != 58:
                        return fail
                    i = _space(buf, i + 1)
                    if i >= n:
                        return fail
                    if buf[i] == 110:  # null: absent for the tables (chunk_id and score: the scan refuses)
                        if i + 4 > n or buf[i + 1] != 117 or buf[i + 2] != 108 or buf[i + 3] != 108:
                            return fail
                        i += 4
                    elif strings[f]:
                        if buf[i] != 34:
                            return fail
                        i, data_len[f] = _string(buf, i, data[f], data_len[f])
                        if i < 0:
                            return fail
                        valid[f, e] = True
                    else:
                        end = _number(buf, i, f == 4)
                        if end < 0:
                            return fail
                        if end - i == 2 and buf[i] == 45 and buf[i + 1] == 48:
                            i += 1  # -0 is the integer 0 to a JSON reader (-0.0 stays negative)
                        data[f, data_len[f] : data_len[f] + end - i] = buf[i:end]
                        data_len[f] += end - i
                        i = end
                        valid[f, e] = True
                    more, i = _after_item(buf, i, 125)
                    if more < 0:
                        return fail
                    if more:
                        continue
                    break
                if not (valid[0, e] and valid[1, e]):
                    return fail
                e += 1
                for f in range(nf):
                    offsets[f, e] = data_len[f]
                more, i = _after_item(buf, i, 93)
                if more < 0:
                    return fail
                if more:
                    continue
                break
            continue
        i += 1
        rest[r] = c
        r += 1
        if c == 123 or c == 91:
            depth += 1
            expect_key = c == 123 and depth == 1
        elif c == 125 or c == 93:
            depth -= 1
            expect_key = False
        elif c == 44:
            expect_key = depth == 1
        elif c == 10:
            row += 1
            list_off[row] = e
    if r > 0 and rest[r - 1] != 10:
        row += 1
        list_off[row] = e
    return True, rest, r, row, list_off, has_list, e, data, data_len, offsets, valid


@njit(cache=True, nogil=True)
def lift_grades(
    buf: np.ndarray, key: np.ndarray, cap: int, lines: int
) -> tuple[bool, np.ndarray, int, int, np.ndarray, np.ndarray, int, np.ndarray, int, np.ndarray, np.ndarray]:
    """Take the value of the top-level key ``key`` out of every line of a file that
    :func:`scan_jsonl` found clean, when it is an object of non-empty keys to whole numbers >= 0 (a
    test case's ``relevant``: chunk id -> grade; each line's keys differ, which no JSON reader turns
    into columns).

    Returns ``(ok, rest, rest_len, rows, pair_offsets, has_obj, n_pairs, keys, keys_len,
    key_offsets, grades)``: ``rest`` is the file with each such value replaced by ``0``; per row,
    where its pairs start and whether it had the key; the keys' bytes (the scan refused escaped keys,
    so they are as written) with offsets, and the grades. ``ok`` is False for anything else (a
    negative, fractional or quoted grade, an empty key, another kind of value): the caller reads the
    file with the exact reader, which names the line and field."""
    n = buf.shape[0]
    rest = np.empty(n + 1, np.uint8)
    keys = np.empty(n + 1, np.uint8)
    key_off = np.empty(cap + 1, np.int64)
    key_off[0] = 0
    grades = np.empty(cap, np.int64)
    pair_off = np.zeros(lines + 1, np.int64)
    has_obj = np.zeros(lines, np.bool_)
    fail = (False, rest, 0, 0, pair_off, has_obj, 0, keys, 0, key_off, grades)
    r = 0
    row = 0
    e = 0
    k_len = 0
    depth = 0
    expect_key = False
    lifting = False
    klen = key.shape[0]
    i = 0
    while i < n:
        c = buf[i]
        if c == 34:
            start = i
            i += 1
            while i < n and buf[i] != 34:
                i += 2 if buf[i] == 92 else 1
            if i >= n:
                return fail
            i += 1
            if expect_key and depth == 1:
                lifting = i - start - 2 == klen
                if lifting:
                    for j in range(klen):
                        if buf[start + 1 + j] != key[j]:
                            lifting = False
                            break
            expect_key = False
            rest[r : r + i - start] = buf[start:i]
            r += i - start
            continue
        if c == 58 and depth == 1 and lifting:
            lifting = False
            rest[r] = 58
            r += 1
            i = _space(buf, i + 1)
            if i >= n or buf[i] != 123 or has_obj[row]:
                return fail
            has_obj[row] = True
            rest[r] = 48  # 0: never longer than the object it stands for ({} included)
            r += 1
            i = _space(buf, i + 1)
            if i < n and buf[i] == 125:
                i += 1
                continue
            while True:  # "key": grade , ... }
                if i >= n or buf[i] != 34:
                    return fail
                ks = i + 1
                i += 1
                while i < n and buf[i] != 34:
                    i += 1
                if i >= n or i == ks or e >= cap:
                    return fail  # an empty key (the record refuses it)
                keys[k_len : k_len + i - ks] = buf[ks:i]
                k_len += i - ks
                i = _space(buf, i + 1)
                if i >= n or buf[i] != 58:
                    return fail
                i = _space(buf, i + 1)
                if i >= n or not 48 <= buf[i] <= 57:
                    return fail  # negative, quoted, true/false, null, an object...
                end = _number(buf, i, True)
                if end < 0 or end - i > 18:
                    return fail  # a fraction, an exponent, or more than an int64 holds
                g = 0
                for j in range(i, end):
                    g = g * 10 + (buf[j] - 48)
                grades[e] = g
                e += 1
                key_off[e] = k_len
                i = end
                more, i = _after_item(buf, i, 125)
                if more < 0:
                    return fail
                if more:
                    continue
                break
            continue
        i += 1
        rest[r] = c
        r += 1
        if c == 123 or c == 91:
            depth += 1
            expect_key = c == 123 and depth == 1
        elif c == 125 or c == 93:
            depth -= 1
            expect_key = False
        elif c == 44:
            expect_key = depth == 1
        elif c == 10:
            row += 1
            pair_off[row] = e
    if r > 0 and rest[r - 1] != 10:
        row += 1
        pair_off[row] = e
    return True, rest, r, row, pair_off, has_obj, e, keys, k_len, key_off, grades


@njit(cache=True, nogil=True)
def repeat_in_lines(line: np.ndarray, h: np.ndarray) -> int:
    """A row whose hash ``h`` appeared before among the rows of its ``line`` (a chunk twice in one
    ranked list), -1 if none, -2 if ``line`` is not in order (rows of a line apart). One pass over
    the rows: each line's few hashes compared pairwise, a long line's sorted. Called with read-only
    arrays (as polars hands them over), the signature :func:`warm_up` compiles."""
    n = line.shape[0]
    i = 0
    while i < n:
        j = i + 1
        while j < n and line[j] == line[i]:
            j += 1
        if j < n and line[j] < line[i]:
            return -2
        if j - i <= 32:
            for a in range(i + 1, j):
                for b in range(i, a):
                    if h[a] == h[b]:
                        return a
        else:
            order = np.argsort(h[i:j], kind="mergesort")
            for t in range(1, j - i):
                if h[i + order[t]] == h[i + order[t - 1]]:
                    return i + max(order[t], order[t - 1])
        i = j
    return -1


def warm_up() -> None:
    """Load the compiled functions (numba's disk cache, or a compile after an install)."""
    line, h = np.zeros(2, np.int64), np.zeros(2, np.uint64)
    line.setflags(write=False)
    h.setflags(write=False)
    repeat_in_lines(line, h)
    tiny = np.frombuffer(b'{"r":[{"chunk_id":"a","score":1}]}\n', np.uint8)
    scan_jsonl(tiny, np.zeros(1, np.int64))
    lift_list(tiny, np.frombuffer(b"r", np.uint8), _LIFT_NAMES, _LIFT_ENDS, np.array(LIFT_STRINGS), 3, 2)
    lift_grades(np.frombuffer(b'{"r":{"c":1}}\n', np.uint8), np.frombuffer(b"r", np.uint8), 3, 2)


def lift(buf: np.ndarray, key: str) -> tuple[Any, ...] | None:
    """:func:`lift_list` with this module's field table; None when the file is not of that shape."""
    out = lift_list(
        buf,
        np.frombuffer(key.encode(), np.uint8),
        _LIFT_NAMES,
        _LIFT_ENDS,
        np.array(LIFT_STRINGS),
        1 + int(np.count_nonzero(buf == 123)),  # elements: at most one per {
        1 + int(np.count_nonzero(buf == 10)),
    )
    return out if out[0] else None


def lift_object(buf: np.ndarray, key: str) -> tuple[Any, ...] | None:
    """:func:`lift_grades` sized for ``buf``; None when the file is not of that shape."""
    out = lift_grades(
        buf,
        np.frombuffer(key.encode(), np.uint8),
        1 + int(np.count_nonzero(buf == 58)),  # pairs: at most one per colon
        1 + int(np.count_nonzero(buf == 10)),
    )
    return out if out[0] else None
