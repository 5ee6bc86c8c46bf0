"""How much a question borrows from its source chunk: the share of the question's content words that
appear in the chunk it was written from (its labeled chunks).

The guide: questions written while looking at a chunk "tend to reuse its exact words, which flatters
keyword retrieval and makes the set easier than real traffic". Real users ask in their own words, so
the real questions' overlap is the yardstick for the synthetic ones'.

Content words are lower-cased word tokens (letters, digits, ``_`` and inner ``-`` or ``.``: ``HV-3021``
and ``key_rotation_days`` stay one word) minus a short list of English function words.

>>> content_words("What does error HV-3021 mean for the Team plan?")
['error', 'hv-3021', 'mean', 'team', 'plan']
>>> overlap("Why do I get HV-3021 when signing in?", "Error HV-3021 means that two-factor authentication is required")
0.5
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import polars as pl

from evalcore.runs.testset import TestSet

_WORD = re.compile(r"[a-z0-9]+(?:[_.\-][a-z0-9]+)*")
STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "no",
        "nor",
        "not",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "i'm",
        "im",
        "we're",
        "it's",
        "there's",
        "get",
        "got",
        "can't",
        "cannot",
        "don't",
        "dont",
        "doesn't",
        "isn't",
        "my",
        "much",
        "many",
        "also",
        "still",
        "yet",
    ]
)
HIGH = 0.8  # at or above: most of the question's words are the chunk's own


def content_words(text: str) -> list[str]:
    words = _WORD.findall(text.lower())
    return list(dict.fromkeys(w for w in words if w not in STOPWORDS))


def overlap(question: str, chunk_text: str) -> float | None:
    """Share of the question's content words found among the chunk's words (None: no content word)."""
    q = content_words(question)
    if not q:
        return None
    c = set(_WORD.findall(chunk_text.lower()))
    # A word counts when the chunk has it, or the chunk has it without a plural / verb -s.
    found = sum(1 for w in q if w in c or (w.endswith("s") and w[:-1] in c) or (w + "s") in c)
    return round(found / len(q), 3)


def chunk_texts(retrieved: Iterable[pl.DataFrame]) -> dict[str, str]:
    """chunk id -> text, from the retrieved lists of runs (or any frame with chunk_id and text)."""
    out: dict[str, str] = {}
    for frame in retrieved:
        if "text" not in frame.columns:
            continue
        for cid, text in frame.select("chunk_id", "text").drop_nulls().unique("chunk_id").iter_rows():
            out.setdefault(cid, text)
    return out


def overlap_table(ts: TestSet, texts: Mapping[str, str]) -> pl.DataFrame:
    """One row per answerable question: its overlap with its best-graded labeled chunks (``basis``
    says what it was measured against: ``chunk`` texts, or the ``evidence`` quotes where no chunk
    text is known; null overlap where neither is)."""
    best = ts.qrels.filter(pl.col("rel") >= 1).filter(pl.col("rel") == pl.col("rel").max().over("qid"))
    by_q: dict[str, list[str]] = {}
    for qid, cid in best.select("qid", "chunk_id").iter_rows():
        by_q.setdefault(qid, []).append(cid)
    quotes: dict[str, list[str]] = {}
    for qid, quote in ts.evidence.select("qid", "quote").drop_nulls().iter_rows():
        quotes.setdefault(qid, []).append(quote)
    rows = []
    for case in ts.cases.filter(pl.col("answerable")).iter_rows(named=True):
        known = [texts[c] for c in by_q.get(case["qid"], []) if c in texts]
        basis, text = (
            ("chunk", "\n".join(known))
            if known
            else ("evidence", "\n".join(quotes[case["qid"]]))
            if case["qid"] in quotes
            else (None, None)
        )
        rows.append(
            {
                "qid": case["qid"],
                "question": case["question"],
                "source": case["source"],
                "type": case["type"],
                "topic": case["topic"],
                "overlap": overlap(case["question"], text) if text is not None else None,
                "basis": basis,
                "chunks": ", ".join(by_q.get(case["qid"], [])),
            }
        )
    schema = {
        "qid": pl.String,
        "question": pl.String,
        "source": pl.String,
        "type": pl.String,
        "topic": pl.String,
        "overlap": pl.Float64,
        "basis": pl.String,
        "chunks": pl.String,
    }
    return pl.DataFrame(rows, schema=schema)


def overlap_summary(table: pl.DataFrame) -> pl.DataFrame:
    """Per source (real / synthetic): questions measured, median and mean overlap, the share at or
    above :data:`HIGH`."""
    return (
        table.drop_nulls("overlap")
        .group_by("source")
        .agg(
            pl.len().alias("questions"),
            pl.col("overlap").median().round(3).alias("median"),
            pl.col("overlap").mean().round(3).alias("mean"),
            (pl.col("overlap") >= HIGH).mean().round(3).alias(f"share >= {HIGH}"),
        )
        .sort("source")
    )


def most_overlapping(table: pl.DataFrame, n: int = 10, source: str = "synthetic") -> pl.DataFrame:
    """The ``n`` questions of ``source`` that borrow most from their chunk: the ones to review first."""
    return (
        table.filter(pl.col("source") == source)
        .drop_nulls("overlap")
        .sort(["overlap", "qid"], descending=[True, False])
        .head(n)
    )
