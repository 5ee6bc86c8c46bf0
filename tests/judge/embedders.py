"""A small deterministic embedder for tests: words hashed into 64 buckets (no model, no network)."""

from __future__ import annotations

import re
import zlib


def bag_of_words(texts: list[str]) -> list[list[float]]:
    out = []
    for text in texts:
        v = [0.0] * 64
        for w in re.findall(r"[a-z0-9$]+", text.lower()):
            if len(w) > 3:
                v[zlib.crc32(w.encode()) % 64] += 1.0
        out.append(v)
    return out


def broken(texts: list[str]) -> list[list[float]]:
    return [[1.0]]  # one vector, whatever it is given
