"""Retrieval measures: the guide's worked example, trec_eval conventions, and invariants (hypothesis)."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.metrics.measures import parse_measure, parse_measures
from evalcore.metrics.retrieval import evaluate, kernel, straddling_ties


def frames(
    run: dict[str, list[tuple[str, float]]], labels: dict[str, dict[str, int]]
) -> tuple[pl.DataFrame, pl.DataFrame]:
    r = pl.DataFrame(
        [(q, c, s) for q, items in run.items() for c, s in items],
        schema={"qid": pl.String, "chunk_id": pl.String, "score": pl.Float64},
        orient="row",
    )
    q = pl.DataFrame(
        [(q, c, g) for q, rel in labels.items() for c, g in rel.items()],
        schema={"qid": pl.String, "chunk_id": pl.String, "rel": pl.Int64},
        orient="row",
    )
    return r, q


def test_guide_worked_example_recall_at_3_and_mrr_are_075() -> None:
    labels = {"q1": {"c4": 1}, "q2": {"c2": 1, "c9": 1}, "q3": {}}
    run = {
        "q1": [("c1", 3.0), ("c4", 2.0), ("c7", 1.0)],
        "q2": [("c9", 3.0), ("c3", 2.0), ("c5", 1.0)],
        "q3": [("c8", 1.0)],
    }
    r, q = frames(run, labels)
    answerable = [qid for qid, rel in labels.items() if rel]  # q3 is unanswerable: scored on the answer side
    out = evaluate(r, q, ["R@3", "RR"], qids=answerable)
    assert out["qid"].to_list() == ["q1", "q2"]
    assert out["R@3"].mean() == pytest.approx(0.75)
    assert out["RR"].mean() == pytest.approx(0.75)


def test_ties_are_broken_by_chunk_id_descending_and_rank_field_ignored() -> None:
    r, q = frames({"q": [("a", 1.0), ("b", 1.0), ("c", 1.0)]}, {"q": {"a": 1}})
    # trec_eval order for equal scores: c, b, a -> the relevant 'a' is third.
    out = evaluate(r, q, ["RR", "P@1", "hit@2", "hit@3"]).row(0, named=True)
    assert out == {"qid": "q", "RR": pytest.approx(1 / 3), "P@1": 0.0, "hit@2": 0.0, "hit@3": 1.0}


def test_ties_after_the_first_question_are_broken_by_chunk_id_too() -> None:
    # The first question has no tie; the second has one (the run skips ordering ids when no block
    # has a tie, so the check must look past the first block).
    r, q = frames(
        {"q1": [("z", 3.0), ("y", 2.0)], "q2": [("a", 2.0), ("b", 1.0), ("c", 1.0)]},
        {"q1": {"z": 1}, "q2": {"b": 1}},
    )
    out = evaluate(r, q, ["RR"]).sort("qid")["RR"].to_list()
    assert out == [1.0, pytest.approx(1 / 3)]  # q2: a, c, b


def test_two_chunk_ids_sharing_a_hash_are_still_told_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    # Chunk ids are coded by their 64-bit hash and every row is checked against its code's hash
    # under a second seed; with every hash of the first seed equal (a collision) the codes must
    # still be right.
    r, q = frames({"q": [("a", 3.0), ("b", 2.0), ("c", 1.0)]}, {"q": {"b": 1}})
    expected = evaluate(r, q, ["RR", "P@1"]).row(0, named=True)
    real = pl.Series.hash

    def colliding(self: pl.Series, seed: int = 0) -> pl.Series:
        return pl.Series([7] * self.len(), dtype=pl.UInt64) if seed == 0 else real(self, seed)

    monkeypatch.setattr(pl.Series, "hash", colliding)
    assert evaluate(r, q, ["RR", "P@1"]).row(0, named=True) == expected == {"qid": "q", "RR": 0.5, "P@1": 0.0}


def test_idcg_uses_all_labeled_items_not_the_retrieved_list() -> None:
    # One of two relevant chunks retrieved, at rank 1: nDCG must be < 1.
    r, q = frames({"q": [("a", 2.0), ("x", 1.0)]}, {"q": {"a": 1, "never": 1}})
    out = evaluate(r, q, ["nDCG@10"])
    assert out["nDCG@10"][0] == pytest.approx(1 / (1 + 1 / 1.5849625007211563))


def test_exponential_gain_is_a_separate_named_variant() -> None:
    r, q = frames({"q": [("x", 3.0), ("a", 2.0), ("b", 1.0)]}, {"q": {"a": 1, "b": 3}})
    out = evaluate(r, q, ["nDCG@3", "nDCG_exp@3"]).row(0, named=True)
    assert out["nDCG@3"] != pytest.approx(out["nDCG_exp@3"])


def test_precision_divides_by_k_even_when_fewer_results() -> None:
    r, q = frames({"q": [("a", 1.0)]}, {"q": {"a": 1}})
    assert evaluate(r, q, ["P@5"])["P@5"][0] == pytest.approx(0.2)


def test_judged_at_k_counts_labeled_chunks_of_any_grade() -> None:
    r, q = frames({"q": [("a", 4.0), ("b", 3.0), ("c", 2.0), ("d", 1.0)]}, {"q": {"a": 0, "c": 2}})
    assert evaluate(r, q, ["judged@4"])["judged@4"][0] == pytest.approx(0.5)


def test_measure_names_round_trip() -> None:
    for name in [
        "P@5",
        "R@10",
        "hit@5",
        "RR",
        "RR@10",
        "nDCG@10",
        "nDCG",
        "nDCG_exp@10",
        "AP",
        "AP@100",
        "Rprec",
        "judged@10",
        "P(rel=2)@5",
    ]:
        assert str(parse_measure(name)) == name
    assert [str(m) for m in parse_measures("recall@5,mrr,map")] == ["R@5", "RR", "AP"]


@pytest.mark.parametrize(
    "bad, says",
    [
        ("P", "needs a cutoff"),
        ("Rprec@5", "takes no cutoff"),
        ("nDCG(rel=2)@5", "takes no rel"),
        ("F1@5", "unknown measure"),
    ],
)
def test_bad_measure_names_say_what_is_wrong(bad: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        parse_measure(bad)


def test_the_names_an_unknown_measure_error_suggests_are_real_measures_in_canonical_spelling() -> None:
    with pytest.raises(ValueError, match="unknown measure") as err:
        parse_measure("F1@5")
    suggested = str(err.value).split("expected one of ", 1)[1].split(", ")
    assert len(suggested) >= 10 and "bpref" in suggested
    assert [str(parse_measure(name)) for name in suggested] == suggested


def test_straddling_ties_are_counted() -> None:  # and told apart from ties that change nothing
    r, q = frames(
        {"q1": [("a", 2.0), ("b", 1.0), ("c", 1.0)], "q2": [("a", 3.0), ("b", 2.0), ("c", 1.0)]},
        {"q1": {"c": 1}, "q2": {"a": 1}},
    )
    t = straddling_ties(r, q, [2]).row(0, named=True)
    assert t == {"k": 2, "straddled": 1, "affected": 1}
    # The same split tie with both chunks unlabeled (grade 0 alike): straddled, but no value moves.
    r, q = frames({"q1": [("a", 2.0), ("b", 1.0), ("c", 1.0)]}, {"q1": {"a": 1}})
    t = straddling_ties(r, q, [2, 3]).to_dicts()
    assert t == [{"k": 2, "straddled": 1, "affected": 0}, {"k": 3, "straddled": 0, "affected": 0}]
    assert straddling_ties(r, q, []).schema == {"k": pl.Int64, "straddled": pl.Int64, "affected": pl.Int64}


# ------------------------------------------------------------------ properties

ALL = [
    "P@3",
    "R@3",
    "R@5",
    "R@10",
    "hit@3",
    "RR",
    "RR@3",
    "nDCG@3",
    "nDCG",
    "nDCG_exp@5",
    "AP",
    "Rprec",
    "judged@5",
]

rankings = st.lists(
    st.tuples(st.sampled_from([f"d{i}" for i in range(15)]), st.sampled_from([0.5, 1.0, 1.5, 2.0, 3.0])),
    min_size=0,
    max_size=12,
    unique_by=lambda t: t[0],
)
labels = st.dictionaries(
    st.sampled_from([f"d{i}" for i in range(15)]), st.integers(0, 3), min_size=1, max_size=6
)


@settings(max_examples=60, deadline=None)
@given(run=rankings, rel=labels)
def test_every_measure_is_between_0_and_1(run: list[tuple[str, float]], rel: dict[str, int]) -> None:
    r, q = frames({"q": run}, {"q": rel})
    out = evaluate(r, q, ALL, qids=["q"]).row(0, named=True)
    for m in ALL:
        assert 0.0 <= out[m] <= 1.0 + 1e-12, m


@settings(max_examples=60, deadline=None)
@given(run=rankings, rel=labels, seed=st.integers(0, 1000))
def test_row_order_of_tied_items_changes_nothing(
    run: list[tuple[str, float]], rel: dict[str, int], seed: int
) -> None:
    shuffled = run[:]
    random.Random(seed).shuffle(shuffled)
    a = evaluate(*frames({"q": run}, {"q": rel}), ALL, qids=["q"])
    b = evaluate(*frames({"q": shuffled}, {"q": rel}), ALL, qids=["q"])
    assert a.equals(b)


@settings(max_examples=60, deadline=None)
@given(run=rankings, rel=labels)
def test_unjudged_documents_never_raise_a_score(run: list[tuple[str, float]], rel: dict[str, int]) -> None:
    base = evaluate(*frames({"q": run}, {"q": rel}), ALL, qids=["q"]).row(0, named=True)
    # Appending unjudged chunks below everything can only keep or lower every measure but judged@k.
    extra = run + [(f"unjudged{i}", 0.01 - i * 1e-4) for i in range(5)]
    more = evaluate(*frames({"q": extra}, {"q": rel}), ALL, qids=["q"]).row(0, named=True)
    for m in ALL:
        if not m.startswith("judged"):
            assert more[m] <= base[m] + 1e-12, m


@settings(max_examples=60, deadline=None)
@given(run=rankings, rel=labels)
def test_recall_is_monotone_in_k(run: list[tuple[str, float]], rel: dict[str, int]) -> None:
    ks = [1, 2, 3, 5, 8, 13]
    out = evaluate(*frames({"q": run}, {"q": rel}), [f"R@{k}" for k in ks], qids=["q"]).row(0, named=True)
    vals = [out[f"R@{k}"] for k in ks]
    assert vals == sorted(vals)


@settings(max_examples=80, deadline=None)
@given(
    runs=st.lists(rankings, min_size=1, max_size=4),
    seed=st.integers(0, 1000),
    layout=st.sampled_from(["ranked", "shuffled", "split"]),
)
def test_row_order_in_the_file_never_changes_a_value(
    runs: list[list[tuple[str, float]]], seed: int, layout: str
) -> None:
    """Rank order with ties in any order (the usual file), rows in any order, and a question's rows
    split over the file all give exactly the values of the file sorted trec_eval's way."""
    rnd = random.Random(seed)
    rows = []
    for qi, run in enumerate(runs):
        rows += [(f"q{qi}", cid, score) for cid, score in sorted(run, key=lambda t: (-t[1], rnd.random()))]
    if layout == "shuffled":
        rnd.shuffle(rows)
    elif layout == "split":  # each question's second half after every question's first half
        halves = [[r for r in rows if r[0] == f"q{qi}"] for qi in range(len(runs))]
        rows = [r for h in halves for r in h[: len(h) // 2]] + [r for h in halves for r in h[len(h) // 2 :]]
    df = pl.DataFrame(
        rows, schema={"qid": pl.String, "chunk_id": pl.String, "score": pl.Float64}, orient="row"
    )
    labels = pl.DataFrame(
        [(f"q{qi}", cid, (qi + int(cid[1:])) % 3) for qi, run in enumerate(runs) for cid, _ in run],
        schema={"qid": pl.String, "chunk_id": pl.String, "rel": pl.Int64},
        orient="row",
    )
    qids = [f"q{qi}" for qi in range(len(runs))]
    canonical = df.sort(["qid", "score", "chunk_id"], descending=[False, True, True])
    assert evaluate(df, labels, ALL, qids=qids).equals(evaluate(canonical, labels, ALL, qids=qids))


def test_long_rankings_far_out_of_order_are_sorted_fully() -> None:
    """A ranking written bottom-up (or with one huge tie) is too disordered for the cheap in-place
    pass; the full sort must give the same values as the ranking written top-down."""
    n = 500
    top_down = [(f"d{i:03d}", float(n - i) if i % 50 else 1.0) for i in range(n)]
    labels = {"q": {f"d{i:03d}": i % 4 for i in range(0, n, 7)}}
    expected = evaluate(*frames({"q": top_down}, labels), ALL, qids=["q"])
    assert evaluate(*frames({"q": top_down[::-1]}, labels), ALL, qids=["q"]).equals(expected)
    one_tie = [(c, 1.0) for c, _ in top_down]
    tied = evaluate(*frames({"q": one_tie[::-1]}, labels), ALL, qids=["q"])
    # All tied: trec_eval ranks by chunk id descending, so d499 first.
    assert tied.equals(evaluate(*frames({"q": sorted(one_tie, reverse=True)}, labels), ALL, qids=["q"]))
    assert tied["RR"][0] == 1 / (n - max(i for i in range(0, n, 7) if i % 4 >= 1))


def test_a_chunk_listed_twice_for_one_question_is_an_error() -> None:
    with pytest.raises(ValueError, match="chunk 'c1' is listed twice for question 'q2'"):
        evaluate(
            *frames({"q1": [("c1", 1.0)], "q2": [("c1", 2.0), ("c2", 1.5), ("c1", 1.0)]}, {"q2": {"c1": 1}}),
            ["P@5"],
        )
    # Also when the file is out of rank order (so the rows are re-sorted before the check).
    with pytest.raises(ValueError, match="chunk 'c9' is listed twice for question 'q1'"):
        evaluate(
            *frames({"q0": [("c1", 1.0)], "q1": [("c9", 1.0), ("c2", 3.0), ("c9", 2.0)]}, {"q1": {"c2": 1}}),
            ["P@5"],
        )


def test_the_first_compile_after_an_install_is_announced(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A user's first `evalcore metrics` waits ~10 s for numba: it must say why, once."""
    import evalcore.metrics.retrieval as r

    assert r._compiled_before(Path(r.kernel().__file__)), "the session compiled it (conftest)"
    monkeypatch.setattr(r, "_KERNEL_READY", [])
    monkeypatch.setattr(r, "_compiled_before", lambda source: False)
    with caplog.at_level("WARNING", logger="evalcore"):
        r.kernel()
        r.kernel()
    assert [m for m in caplog.messages if "compiling" in m] == [
        "evalcore: compiling the retrieval metrics kernel (once after an install; about 10 s)"
    ]


def test_codes_from_hashes_number_values_by_first_row_and_probe_past_taken_slots() -> None:
    # The table is 16 slots for 7 rows: 31, 63 and 95 all fold to slot 15 and 0 to slot 0, so the
    # probe wraps past the end and past slots other hashes hold; equal hashes still share a code.
    h = np.array([31, 63, 0, 31, 95, 63, 0], dtype=np.uint64)
    code, first = kernel().first_codes(h)
    assert code.tolist() == [0, 1, 2, 0, 3, 1, 2]
    assert first.tolist() == [True, True, True, False, True, False, False]


def test_codes_from_hashes_stay_right_as_the_table_grows() -> None:
    # 5,000 distinct hashes over 50,000 rows (the table starts at 16 slots and doubles past half
    # full): codes by first row, as numpy's inverse in that order.
    rng = np.random.default_rng(3)
    distinct = np.unique(rng.integers(0, 2**63, 5_000, dtype=np.int64)).astype(np.uint64)
    distinct[:500] = (distinct[:500] >> np.uint64(40)) << np.uint64(40)  # alike in their low bits
    h = rng.choice(distinct, 50_000)
    code, first = kernel().first_codes(h)
    _, at, inverse = np.unique(h, return_index=True, return_inverse=True)
    order = np.argsort(at)  # distinct values in the order of their first row
    expected = np.empty_like(order)
    expected[order] = np.arange(order.size)
    assert code.tolist() == expected[inverse].tolist()
    assert np.flatnonzero(first).tolist() == sorted(at.tolist())


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["q1", "q2", "q3", None]),
            st.sampled_from("abcdef"),
            st.sampled_from([0.5, 1.0, 2.0, None, float("nan")]),
        ),
        min_size=1,
        max_size=30,
        unique_by=lambda t: (t[0], t[1]),
    ),
    st.booleans(),
    st.lists(st.integers(1, 29), max_size=3),
)
def test_rank_of_a_frame_already_in_order_is_the_rank_of_the_sorted_frame(
    rows: list[tuple[str, str, float]], presort: bool, cuts: list[int]
) -> None:
    """rank() skips sorting a frame whose questions are blocks already in trec_eval's order: the
    ranks must be those of sorting it — with ties of score (chunk id descending), a tie in the wrong
    order, a question whose rows are split in two blocks, a null score (the sort puts it first), a
    null qid, NaN, and the frame in several chunks (a big run read a block of lines at a time),
    a question's rows split between two."""
    from evalcore.metrics.retrieval import rank

    df = pl.DataFrame(
        rows, schema={"qid": pl.String, "chunk_id": pl.String, "score": pl.Float64}, orient="row"
    )
    if presort:  # questions in blocks in trec order, questions in no particular order
        df = df.sort(["qid", "score", "chunk_id"], descending=[True, True, True])
    at = sorted({0, *(c for c in cuts if c < df.height), df.height})
    df = pl.concat([df.slice(a, b - a) for a, b in itertools.pairwise(at)], rechunk=False)
    assert df.n_chunks() == len(at) - 1
    got = rank(df).collect()
    want = (
        df.lazy()
        .sort(["qid", "score", "chunk_id"], descending=[False, True, True])
        .with_columns(rank=pl.int_range(1, pl.len() + 1, dtype=pl.Int32).over("qid"))
        .collect()
    )
    assert got.sort("qid", "rank").equals(want)
    # A run's retrieved table marks its questions by line (one qid per line, one line per qid):
    # the ranks told apart by lines are those told apart by qids, and None exactly when they are.
    from evalcore.metrics.retrieval import ranks_as_listed

    first = {q: i for i, q in enumerate(dict.fromkeys(df["qid"].to_list()))}
    lined = df.with_columns(line=pl.Series([first[q] + 1 for q in df["qid"].to_list()], dtype=pl.Int64))
    by_qid, by_line = ranks_as_listed(lined), ranks_as_listed(lined, by_line=True)
    assert (by_qid is None) == (by_line is None)
    if by_qid is not None and by_line is not None:
        assert by_qid.tolist() == by_line.tolist()
    # Unsigned line numbers (a row index, rle_id) whose differences would wrap: the same answer.
    unsigned = ranks_as_listed(lined.with_columns(pl.col("line").cast(pl.UInt32)), by_line=True)
    assert (unsigned is None) == (by_line is None)
