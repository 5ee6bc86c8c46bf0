"""Finding a judge's quote in the chunks the generator was given — the one rule, used by faithfulness,
by the dashboard's highlighting and by the judge.

A quote is looked for **inside one chunk at a time**, never across the border of two, and only in the
chunks the generator saw (the run's ``context_k``; all retrieved chunks when the run does not say).

1. **Exact**, after folding both texts the same way (:func:`fold`): Unicode NFKC, lower case, quote
   marks (``' " ` ‘ ’ “ ”``) dropped, every run of white space made one space, and the quote's own
   leading and trailing white space and ``. , ; :`` dropped. Case, typography and line breaks are not
   evidence of a made-up quote.
2. **Fuzzy**, only where the exact match fails, for a judge's small slips (a dropped word, a typo):
   the folded quote is at least :data:`FUZZY_MIN_CHARS` characters long, its best alignment inside one
   chunk scores at least :data:`FUZZY_MIN_SCORE` (rapidfuzz's ``partial_ratio``, an edit-distance
   similarity in 0..100: 95 allows about one edit per 40 characters), **and** the numbers in the quote
   are exactly the numbers in the aligned text (``30 days`` never matches ``90 days``).

Every result says which kind of match it was.

>>> m = find("the Vault tier are kept", ['Backups in the "Vault" tier are kept for 90 days.'])
>>> (m.kind, m.index, m.start, m.end)
('exact', 0, 11, 36)
>>> find("kept for 30 days", ["kept for 90 days"]) is None
True
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import polars as pl

FUZZY_MIN_SCORE = 95.0
FUZZY_MIN_CHARS = 20
QUOTE_MARKS = "\u2018\u2019\u201c\u201d\"'`"
_EDGE = " .,;:"
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")

MatchKind = Literal["exact", "fuzzy"]


@dataclass(frozen=True)
class QuoteMatch:
    """Where a quote was found: in ``texts[index]``, characters ``start:end`` of the original text."""

    kind: MatchKind
    index: int
    start: int
    end: int
    score: float  # 100 for an exact match


def fold(text: str) -> tuple[str, list[int]]:
    """``text`` folded for matching, with, for each folded character, its offset in ``text``.

    >>> fold("A  “B”")
    ('a b', [0, 1, 4])
    """
    out: list[str] = []
    where: list[int] = []
    prev_space = False
    i, n = 0, len(text)
    while i < n:
        # A base character and the combining marks after it are normalised together (NFKC composes them).
        j = i + 1
        while j < n and unicodedata.combining(text[j]):
            j += 1
        for c in unicodedata.normalize("NFKC", text[i:j]).lower():
            if c in QUOTE_MARKS:
                continue
            if c.isspace():
                if prev_space:
                    continue
                c, prev_space = " ", True
            else:
                prev_space = False
            out.append(c)
            where.append(i)
        i = j
    return "".join(out), where


def fold_quote(quote: str | None) -> str:
    """A quote folded as :func:`fold` folds a text, its edges stripped of white space and ``.,;:``."""
    return fold(quote or "")[0].strip(_EDGE)


def _fold_expr(expr: pl.Expr) -> pl.Expr:
    return (
        expr.str.to_lowercase()
        .str.replace_all(f"[{QUOTE_MARKS}]", "")
        # = ``\s+`` -> " ", but a single " " (most of any text) is not a match to rewrite: 5x faster.
        .str.replace_all(r"\s{2,}|[^\S ]", " ")
    )


def fold_series(texts: pl.Series) -> pl.Series:
    """:func:`fold` of many texts at once, vectorised (the offsets are not kept). NFKC leaves ASCII
    unchanged, so it runs only on the texts that hold other characters."""
    df = pl.DataFrame({"t": texts.fill_null("")}).with_row_index("i")
    wide = pl.col("t").str.contains(r"[^\x00-\x7F]")
    parts = [df.filter(~wide), df.filter(wide).with_columns(pl.col("t").str.normalize("NFKC"))]
    return pl.concat(parts).sort("i").select(_fold_expr(pl.col("t")))["t"]


def fold_quotes(quotes: pl.Series) -> pl.Series:
    """:func:`fold_quote` of many quotes at once."""
    return fold_series(quotes).str.strip_chars(_EDGE)


def _numbers(text: str) -> list[str]:
    return _NUMBER.findall(text)


def fuzzy_span(q: str, folded: str) -> tuple[int, int, float] | None:
    """The best alignment of the folded quote ``q`` inside one folded text, if it passes the strict
    fuzzy rule (length, score, identical numbers): ``(start, end, score)`` in ``folded``."""
    if len(q) < FUZZY_MIN_CHARS or len(q) > len(folded):
        return None
    from rapidfuzz import fuzz

    al = fuzz.partial_ratio_alignment(q, folded, score_cutoff=FUZZY_MIN_SCORE)
    if al is None:
        return None
    a, b = al.dest_start, al.dest_end
    # Widen to whole words and numbers at the edges: the alignment window is as long as the quote,
    # so a dropped letter leaves the last word cut ("…to star"), and a cut-off digit must not pass
    # the number check.
    while a > 0 and folded[a - 1].isalnum() and folded[a].isalnum():
        a -= 1
    while b < len(folded) and folded[b - 1].isalnum() and folded[b].isalnum():
        b += 1
    if _numbers(q) != _numbers(folded[a:b]):
        return None
    return a, b, float(al.score)


def find(quote: str | None, texts: Sequence[str | None]) -> QuoteMatch | None:
    """The first chunk (in the order given: rank order) holding ``quote`` exactly; else the best strict
    fuzzy match; None if neither. A quote that folds to nothing is never found."""
    q = fold_quote(quote)
    if not q:
        return None
    folded = [fold(t or "") for t in texts]
    for i, (f, where) in enumerate(folded):
        at = f.find(q)
        if at >= 0:
            return QuoteMatch("exact", i, where[at], where[at + len(q) - 1] + 1, 100.0)
    best: QuoteMatch | None = None
    for i, (f, where) in enumerate(folded):
        hit = fuzzy_span(q, f)
        if hit is not None and (best is None or hit[2] > best.score):
            a, b, score = hit
            best = QuoteMatch("fuzzy", i, where[a], where[b - 1] + 1, score)
    return best


def claim_key(text: str | None) -> str:
    """A claim's text as two judgings of one answer are matched by (case and spacing aside)."""
    return " ".join((text or "").lower().split())


def scored_verdict(verdict: str, quote: str | None, context: Sequence[str | None]) -> str:
    """A claim's verdict as faithfulness scores it: SUPPORTED only when its quote is found in one of
    the chunks the generator was given (``context``, whichever the judge named), else NOT_SUPPORTED;
    any other verdict as it is. The one rule behind faithfulness, calibration labels against a
    revision, and the probes' scored flips.

    >>> scored_verdict("SUPPORTED", "kept for 90 days.", ["Other.", "Snapshots are kept for 90 days, then pruned."])
    'SUPPORTED'
    >>> scored_verdict("SUPPORTED", "kept for 30 days", ["Snapshots are kept for 90 days."])
    'NOT_SUPPORTED'
    """
    if verdict != "SUPPORTED":
        return verdict
    return "SUPPORTED" if quote and find(quote, context) is not None else "NOT_SUPPORTED"


def span(text: str | None, quote: str | None) -> QuoteMatch | None:
    """Where ``quote`` sits inside one ``text`` (exact or strict fuzzy), for highlighting.

    >>> m = span("Keeps  snapshots for 90 days.", "snapshots for 90")
    >>> (m.start, m.end, m.kind)
    (7, 23, 'exact')
    """
    return find(quote, [text])


def _none_found(claims: pl.DataFrame) -> pl.DataFrame:
    """``claims`` as :func:`check_quotes` returns them when no quote is found in any chunk."""
    return claims.with_columns(
        quote_chunk=pl.lit(None, dtype=pl.String),
        quote_match=pl.lit(None, dtype=pl.String),
        quote_found=pl.lit(False),
    )


def check_quotes(claims: pl.DataFrame, context: pl.DataFrame) -> pl.DataFrame:
    """``claims`` (``qid, quote, ...``) with where each quote was found in ``context`` (``qid, chunk_id,
    text, rank``: the chunks the generator was given): ``quote_found``, ``quote_match`` (``exact`` |
    ``fuzzy`` | null) and ``quote_chunk`` (the chunk it was found in, the best-ranked one for an exact
    match). Vectorised for the exact match; the fuzzy one runs only on quotes that failed it."""
    if context["text"].null_count() == context.height:
        # No chunk has text (a run of ids and scores): no quote can be found. (Folding 3,000,000
        # quotes and joining them back took 2 s at a million questions to say so.)
        return _none_found(claims)
    claims = claims.with_row_index("_claim")
    quoted = claims.filter(pl.col("quote").is_not_null())
    q = quoted.select("_claim", "qid", _q=fold_quotes(quoted["quote"])).filter(
        pl.col("_q").str.len_chars() > 0
    )
    # A chunk without text holds no quote: it never joins a claim (a run of ids has millions).
    mine = (
        context.join(q.select("qid").unique(), on="qid", how="semi")
        .select("qid", "chunk_id", "text", "rank")
        .filter(pl.col("text").cast(pl.String).str.len_bytes() > 0)
    )
    # A chunk is retrieved for many questions: fold each distinct text once.
    distinct = mine.select("text").unique().drop_nulls()
    distinct = distinct.with_columns(norm=fold_series(distinct["text"]))
    chunks = mine.join(distinct, on="text", how="left").with_columns(pl.col("norm").fill_null(""))
    pairs = q.join(chunks.select("qid", "chunk_id", "rank", "norm"), on="qid", how="inner")
    exact = (
        pairs.filter(pl.col("norm").str.contains(pl.col("_q"), literal=True))
        .sort("_claim", "rank")
        .group_by("_claim", maintain_order=True)
        .agg(quote_chunk=pl.col("chunk_id").first())
        .with_columns(quote_match=pl.lit("exact"), _score=pl.lit(100.0))
    )
    # fuzzy_span's own first test, on whole columns: a quote too short for the fuzzy rule, or longer
    # than the chunk, is never aligned (a run of ids without text has millions of such pairs).
    rest = pairs.join(exact.select("_claim"), on="_claim", how="anti").filter(
        pl.col("_q").str.len_chars().is_between(FUZZY_MIN_CHARS, pl.col("norm").str.len_chars())
    )
    fuzzy_rows: dict[int, tuple[str, float]] = {}
    for claim, qq, chunk_id, norm in rest.select("_claim", "_q", "chunk_id", "norm").iter_rows():
        hit = fuzzy_span(qq, norm)
        if hit is not None and (claim not in fuzzy_rows or hit[2] > fuzzy_rows[claim][1]):
            fuzzy_rows[claim] = (chunk_id, hit[2])
    fuzzy = pl.DataFrame(
        {
            "_claim": list(fuzzy_rows),
            "quote_chunk": [v[0] for v in fuzzy_rows.values()],
            "quote_match": ["fuzzy"] * len(fuzzy_rows),
            "_score": [v[1] for v in fuzzy_rows.values()],
        },
        schema={
            "_claim": pl.UInt32,
            "quote_chunk": pl.String,
            "quote_match": pl.String,
            "_score": pl.Float64,
        },
    )
    found = pl.concat([exact.cast({"_claim": pl.UInt32}), fuzzy], how="vertical_relaxed")
    if found.height == 0:
        return _none_found(claims.drop("_claim"))
    return (
        claims.join(found.drop("_score"), on="_claim", how="left")
        .with_columns(quote_found=pl.col("quote_match").is_not_null())
        .sort("_claim")
        .drop("_claim")
    )
