"""One quote rule for faithfulness, highlighting and the judge: found inside one chunk the generator
was given, exactly after folding, or by a strict fuzzy match that says so."""

from __future__ import annotations

import re
import unicodedata

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.metrics.generation import generation_scores
from evalcore.metrics.quotes import check_quotes, find, fold, fold_series, span

VAULT = 'Backups in the "Vault" tier are kept for 90 days, then deleted.'


def _faithfulness(quote: str, texts: list[str | None], *, context_k: int | None = None) -> dict:
    n = len(texts)
    results = pl.DataFrame(
        {"qid": ["q"], "n_claims": [1], "correctness": [None], "relevance": [None], "abstained": [False]},
        schema_overrides={"correctness": pl.String, "relevance": pl.Float64},
    )
    claims = pl.DataFrame({"qid": ["q"], "claim_idx": [0], "verdict": ["SUPPORTED"], "quote": [quote]})
    retrieved = pl.DataFrame(
        {
            "qid": ["q"] * n,
            "chunk_id": [f"c{i}" for i in range(n)],
            "score": [float(n - i) for i in range(n)],
            "text": texts,
        }
    )
    cases = pl.DataFrame({"qid": ["q"], "answerable": [True]})
    return generation_scores(results, claims, retrieved, cases, context_k=context_k).row(0, named=True)


def test_faithfulness_and_highlighting_agree_on_quote_marks() -> None:
    """The bug this module exists for: the quote counted for faithfulness, the page found nothing."""
    quote = "the Vault tier are kept"
    assert _faithfulness(quote, [VAULT])["faithfulness"] == 1.0
    m = span(VAULT, quote)
    assert m is not None and m.kind == "exact"
    assert VAULT[m.start : m.end] == 'the "Vault" tier are kept'


def test_a_quote_is_found_only_in_chunks_that_carry_text() -> None:
    """A run of chunk ids and scores (no text) has no context a quote could be in: every SUPPORTED
    claim is unverified; one chunk with text among textless ones is still searched, past the rank
    cut of the textless ones."""
    none = _faithfulness("kept for 90 days", [None, None])
    assert (none["faithfulness"], none["unverified_quotes"]) == (0.0, 1)
    some = _faithfulness("kept for 90 days", [None, "", "Snapshots are kept for 90 days."])
    assert (some["faithfulness"], some["unverified_quotes"]) == (1.0, 0)
    cut = _faithfulness("kept for 90 days", [None, "", "Snapshots are kept for 90 days."], context_k=2)
    assert cut["faithfulness"] == 0.0, "the third chunk was not given to the generator"


def test_a_quote_is_never_found_across_the_border_of_two_chunks() -> None:
    texts = ["Snapshots are kept for", "90 days in every region."]
    assert find("kept for 90 days", texts) is None
    assert _faithfulness("kept for 90 days", texts)["faithfulness"] == 0.0


def test_only_chunks_the_generator_was_given_count_as_context() -> None:
    texts = ["Seats are billed monthly.", "Unrelated.", "Snapshots are kept for 90 days."]
    assert _faithfulness("kept for 90 days", texts)["faithfulness"] == 1.0
    row = _faithfulness("kept for 90 days", texts, context_k=2)
    assert row["faithfulness"] == 0.0 and row["unverified_quotes"] == 1


def test_a_judges_small_slip_matches_fuzzily_and_says_so() -> None:
    text = "Restores from the archive tier take up to twelve hours to start."
    quote = "Restores from the archive tier take up to twelve hour to start"  # a dropped letter
    m = find(quote, ["Seats are billed monthly.", text])
    assert m is not None and (m.kind, m.index) == ("fuzzy", 1) and 95 <= m.score < 100
    claims = pl.DataFrame({"qid": ["q"], "quote": [quote]})
    context = pl.DataFrame({"qid": ["q"], "chunk_id": ["c9"], "text": [text], "rank": [1]})
    row = check_quotes(claims, context).row(0, named=True)
    assert (row["quote_found"], row["quote_match"], row["quote_chunk"]) == (True, "fuzzy", "c9")


def test_a_fuzzy_match_points_exactly_at_the_text_it_matched() -> None:
    text = "Seats: Restores from the archive tier take up to twelve hours to start. Then more."
    quote = "Restores from the archive tier take up to twelve hour to start"
    m = span(text, quote)
    assert m is not None and m.kind == "fuzzy"
    assert text[m.start : m.end] == "Restores from the archive tier take up to twelve hours to start"


def test_a_quote_with_regex_characters_is_matched_as_plain_text() -> None:
    # The vectorised exact match must not read a quote as a pattern: "1.5" is not "125", "(" is text.
    chunk = "The Pro plan (billed yearly) costs 125 dollars per seat."
    assert _faithfulness("costs 1.5 dollars per seat", [chunk])["faithfulness"] == 0.0
    assert _faithfulness("Pro plan (billed yearly) costs", [chunk])["faithfulness"] == 1.0
    claims = pl.DataFrame({"qid": ["q"], "quote": ["plan (billed yearly"]})
    context = pl.DataFrame({"qid": ["q"], "chunk_id": ["c"], "text": [chunk], "rank": [1]})
    row = check_quotes(claims, context).row(0, named=True)
    assert (row["quote_found"], row["quote_match"]) == (True, "exact")


def test_fuzzy_matching_never_forgives_a_changed_number_or_a_short_quote() -> None:
    assert find("Backups in the Vault tier are kept for 30 days", [VAULT]) is None
    assert find("kept for 90 dayz", [VAULT]) is None, "short quotes must match exactly"
    assert find("Backups in the Vault tier are kept for 900 days", [VAULT]) is None


def test_an_exact_match_is_found_in_the_best_ranked_chunk() -> None:
    claims = pl.DataFrame({"qid": ["q", "q"], "quote": ["kept for 90 days", None]})
    context = pl.DataFrame(
        {
            "qid": ["q", "q"],
            "chunk_id": ["low", "high"],
            "text": ["Kept for 90 days.", "kept  for 90 days"],
            "rank": [2, 1],
        }
    )
    rows = check_quotes(claims, context).to_dicts()
    assert rows[0]["quote_chunk"] == "high" and rows[0]["quote_match"] == "exact"
    assert rows[1]["quote_found"] is False and rows[1]["quote_match"] is None


def _reference(text: str | None) -> str:
    t = unicodedata.normalize("NFKC", text or "").lower()
    t = re.sub("[\u2018\u2019\u201c\u201d\"'`]", "", t)
    return re.sub(r"[ \t\n\r\f\v\u00a0\u2003\u3000]+", " ", t)


ALPHABET = [
    *"abcXYZ09 .,;:'\"`\t\n\r",
    "\u2018",
    "\u2019",
    "\u201c",
    "\u201d",
    "\u00a0",
    "\u2003",
    "\u3000",
    "\ufb01",
    "\u00c4",
    "\u210c",
    "\u00bd",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text(alphabet=ALPHABET, max_size=40)), max_size=30))
def test_vectorised_and_offset_keeping_folding_equal_the_written_definition(texts: list[str | None]) -> None:
    """NFKC, lower case, quote marks dropped, every run of white space one space — both ways."""
    got = fold_series(pl.Series(texts, dtype=pl.String)).to_list()
    assert got == [_reference(t) for t in texts]
    assert [fold(t or "")[0] for t in texts] == got


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=ALPHABET, min_size=1, max_size=40), st.integers(0, 40), st.integers(1, 20))
def test_a_span_points_at_the_original_text_of_the_quote(text: str, a: int, n: int) -> None:
    quote = text[a : a + n]
    m = span(text, quote)
    folded_quote = fold(quote)[0].strip(" .,;:")
    if not folded_quote:
        assert m is None
        return
    assert m is not None and m.kind == "exact"
    assert folded_quote in fold(text[m.start : m.end])[0]


def test_one_quote_rule_everywhere_a_verdict_is_scored() -> None:
    """Faithfulness accepts a quote found in any chunk the generator was given, whichever chunk the
    judge named; so do a production review's answer verdict and the calibration and probe readings
    (they looked only in the named chunk, with copies of their own)."""
    from evalcore.metrics.quotes import scored_verdict
    from evalcore.signals.review import answer_verdict

    chunks = [
        {"chunk_id": "a", "text": "Unrelated text about invoices."},
        {"chunk_id": "b", "text": "Snapshots are kept for 90 days, then pruned."},
    ]
    claim = {
        "claim": "Kept for 90 days",
        "verdict": "SUPPORTED",
        "quote": "kept for 90 days.",
        "chunk_id": "a",
    }
    assert answer_verdict({"claims": [claim]}, chunks) == "SUPPORTED"
    assert scored_verdict("SUPPORTED", claim["quote"], [c["text"] for c in chunks]) == "SUPPORTED"
    assert answer_verdict({"claims": [{**claim, "quote": "kept for 30 days"}]}, chunks) == "NOT_SUPPORTED"


# ---- from the third mutation run's survivors: edges of the written folding and of find()


def test_a_combining_accent_folds_with_its_letter_and_keeps_the_offsets_of_the_text() -> None:
    from evalcore.metrics.quotes import fold

    assert fold("Cafe\u0301 ok") == ("café ok", [0, 1, 2, 3, 5, 6, 7])


def test_no_quote_folds_to_nothing_and_a_missing_chunk_text_holds_nothing() -> None:
    from evalcore.metrics.quotes import find, fold_quote

    assert fold_quote(None) == "" and find(None, ["anything"]) is None
    hit = find("XXXX", [None, "Here: XXXX marks the spot."])
    assert hit is not None and (hit.kind, hit.index) == ("exact", 1)


def test_an_exact_match_is_the_first_occurrence_and_scores_100() -> None:
    from evalcore.metrics.quotes import find

    hit = find("kept for 90 days", ["Snapshots are kept for 90 days; logs are kept for 90 days."])
    assert hit is not None and (hit.start, hit.end, hit.score) == (14, 30, 100.0)


def test_of_two_equally_good_fuzzy_matches_the_better_ranked_chunk_wins() -> None:
    """A judge's slip (a dropped letter) matches two chunks fuzzily: the first in rank order, unless
    a later one matches better."""
    from evalcore.metrics.quotes import find

    text = "The retention period can be changed in the console"
    slip = "The retention period can be chaged in the console"
    same = find(slip, [text, text])
    assert same is not None and (same.kind, same.index) == ("fuzzy", 0)
    worse = "The retntion priod can be chaged in the console"
    better = find(slip, [worse, text])
    assert better is not None and better.index == 1 and better.score > 95


def test_the_fuzzy_rule_s_length_bounds_and_word_edges() -> None:
    """Third mutation run: fuzzy_span's bounds (a quote of exactly 20 characters is tried, a shorter
    one never; a quote as long as the text is tried) and its widening to whole words at both edges
    (from the middle of the text, at its first character, at its end) had no test."""
    from evalcore.metrics.quotes import FUZZY_MIN_CHARS, fold, fold_quote, fuzzy_span

    def span(quote: str, text: str) -> tuple[int, int] | None:
        got = fuzzy_span(fold_quote(quote), fold(text)[0])
        return None if got is None else (got[0], got[1])

    note = "Note: archived data is kept for ninety days"
    assert len("kept for ninety dayz") == FUZZY_MIN_CHARS
    assert span("kept for ninety dayz", note) == (22, 43), "exactly 20 characters: tried, and found"
    assert span("keys are kept fo", "Rotation keys are kept for 90 days") is None, "under 20: never fuzzy"
    assert span("archived keys kept lonk", "Archived keys kept long") == (0, 23), "as long as the text"
    assert span("xarchived keys kept long", "Archived keys kept long") is None, "longer than the text"
    # A cut word at the start is widened to the whole word: in the middle, and at the text's start.
    assert span("rchived data is kept for", note) == (6, 31)
    assert span("rchived keys kept long", "Archived keys kept long") == (0, 23)
    # …and at the end: one letter of the last word, and the word that ends the text.
    assert span("keys are kept for 90 d", "Rotation keys are kept for 90 days") == (9, 34)
    assert span("archived keys kept lon", "Archived keys kept long") == (0, 23)


@pytest.mark.parametrize(
    ("quote", "text"),
    [
        # the quote as long as the chunk, one letter changed: the fuzzy rule's longest alignment
        ("restores take twelve hours to startx", "restores take twelve hours to starts"),
        # one character longer than the chunk: never aligned
        ("restores take twelve hours to startsx", "restores take twelve hours to starts"),
        # exactly the fuzzy rule's shortest quote, and one shorter
        ("twelve hours to stax", "restores take twelve hours to start"),
        ("welve hours to stax", "restores take twelve hours to start"),
        # a chunk without text
        ("restores take twelve hours to start", ""),
    ],
)
def test_the_vectorised_check_finds_what_find_finds_at_the_length_bounds(quote: str, text: str) -> None:
    m = find(quote, [text])
    claims = pl.DataFrame({"qid": ["q"], "quote": [quote]})
    context = pl.DataFrame({"qid": ["q"], "chunk_id": ["c"], "text": [text], "rank": [1]})
    row = check_quotes(claims, context).row(0, named=True)
    assert row["quote_match"] == (m.kind if m else None)


def test_claims_come_back_with_the_same_columns_whether_a_quote_is_found_or_no_chunk_has_text() -> None:
    """No chunk with text (a run of ids) or no quote found answers at once, without folding the
    quotes: the same columns, types and rows as a check that found one."""
    claims = pl.DataFrame(
        {
            "qid": ["q", "q"],
            "claim_idx": [0, 1],
            "verdict": ["SUPPORTED", "SUPPORTED"],
            "quote": ["kept for 90 days", None],
        }
    )
    context = pl.DataFrame({"qid": ["q"], "chunk_id": ["c0"], "text": [VAULT], "rank": [1]})
    found = check_quotes(claims, context)
    assert found["quote_found"].to_list() == [True, False]
    for other in (
        context.with_columns(text=pl.lit(None, dtype=pl.String)),
        context.clear(),
        context.with_columns(text=pl.lit("nothing of it")),
    ):
        none = check_quotes(claims, other)
        assert none.schema == found.schema
        assert none["quote_found"].to_list() == [False, False] and none["claim_idx"].to_list() == [0, 1]
