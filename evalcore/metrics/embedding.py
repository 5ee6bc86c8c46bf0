"""Answer relevance as the RAGAS paper defines it (Es et al. 2023): the judge writes the questions
the answer would answer, and the metric is the mean cosine similarity between their embeddings and
the embedding of the question asked. A vague or evasive answer suggests other questions, and scores
low.

It is reported as ``relevance_ragas``, beside — never instead of — the judge's own 0–1 ``relevance``
(the default), and only when an embedder is given: any callable that maps a list of texts to one
vector each (``embedder("module:function")`` imports one; ``sentence-transformers:MODEL`` uses that
library where it is installed). The figure depends on the embedder, so the embedder is part of what
is compared: score both runs with the same one.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import polars as pl

from evalcore.errors import SetupError

Embedder = Callable[[list[str]], Sequence[Sequence[float]]]


def relevance_ragas(results: pl.DataFrame, cases: pl.DataFrame, embed: Embedder) -> pl.DataFrame:
    """``qid, relevance_ragas`` from ``results.answer_questions`` (the judge's questions for each
    answer) and the test set's questions; null where the judge wrote none (a declined answer)."""
    df = results.select("qid", "answer_questions").join(cases.select("qid", "question"), on="qid", how="left")
    rows = [
        (q, asked, gen or [])
        for q, gen, asked in df.select("qid", "answer_questions", "question").iter_rows()
    ]
    texts: list[str] = []
    for _, asked, gen in rows:
        texts.append(asked or "")
        texts.extend(gen)
    vectors = np.asarray(embed(texts), dtype=float) if texts else np.zeros((0, 1))
    if vectors.ndim != 2 or len(vectors) != len(texts):
        msg = f"the embedder returned {vectors.shape} for {len(texts)} texts; it must return one vector per text"
        raise SetupError(msg)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)
    out: list[float | None] = []
    i = 0
    for _, _, gen in rows:
        asked, mine = unit[i], unit[i + 1 : i + 1 + len(gen)]
        i += 1 + len(gen)
        out.append(float(np.mean(mine @ asked)) if len(gen) else None)
    return pl.DataFrame(
        {"qid": [r[0] for r in rows], "relevance_ragas": out},
        schema={"qid": pl.String, "relevance_ragas": pl.Float64},
    )


def embedder(spec: str) -> Embedder:
    """An embedder from its name: ``sentence-transformers:MODEL`` (e.g. ``all-MiniLM-L6-v2``), or
    ``module:function`` naming any importable callable (texts -> vectors)."""
    kind, _, name = spec.partition(":")
    if kind == "sentence-transformers":
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            msg = "the sentence-transformers embedder needs: pip install sentence-transformers"
            raise SetupError(msg) from exc
        model = SentenceTransformer(name or "all-MiniLM-L6-v2")
        return lambda texts: model.encode(texts)
    if not name:
        msg = f"--embedder {spec!r}: expected 'module:function' or 'sentence-transformers:MODEL'"
        raise SetupError(msg)
    try:
        fn: Any = getattr(importlib.import_module(kind), name)
    except (ImportError, AttributeError) as exc:
        msg = f"--embedder {spec!r}: cannot import {name} from {kind} ({exc})"
        raise SetupError(msg) from exc
    if not callable(fn):
        msg = f"--embedder {spec!r}: {kind}.{name} is not callable"
        raise SetupError(msg)
    return fn
