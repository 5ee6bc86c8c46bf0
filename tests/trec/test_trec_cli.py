"""`evalcore trec` is a drop-in for trec_eval: same numbers (pytrec_eval oracle), same output format."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from evalcore.cli import main
from evalcore.errors import InputError
from evalcore.runs.trec import read_trec
from helpers import make_data, oracle, write_trec


def parse(out: str) -> dict[tuple[str, str], str]:
    rows = {}
    for line in out.strip().splitlines():
        name, qid, value = line.split("\t")
        assert len(name) >= 22, "trec_eval pads measure names to 22 characters"
        rows[(name.strip(), qid)] = value
    return rows


def test_per_query_and_summary_values_match_trec_eval(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qp, rp = write_trec(tmp_path)
    assert (
        main(
            [
                "trec",
                "-q",
                "-m",
                "map",
                "-m",
                "P.5,10",
                "-m",
                "ndcg_cut.10",
                "-m",
                "recip_rank",
                "-m",
                "Rprec",
                str(qp),
                str(rp),
            ]
        )
        == 0
    )
    rows = parse(capsys.readouterr().out)
    run, qrels = make_data(3, n_q=80)
    pytest.importorskip("pytrec_eval")
    theirs = oracle(run, qrels)
    for qid, vals in theirs.items():
        for ours, trec in [
            ("map", "map"),
            ("P_5", "P_5"),
            ("ndcg_cut_10", "ndcg_cut_10"),
            ("recip_rank", "recip_rank"),
        ]:
            assert rows[(ours, qid)] == f"{vals[trec]:6.4f}", (qid, ours)
    n = len(theirs)
    mean_map = sum(v["map"] for v in theirs.values()) / n
    assert rows[("map", "all")] == f"{mean_map:6.4f}"


def test_default_output_is_the_official_set_in_trec_eval_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qp, rp = write_trec(tmp_path)
    assert main(["trec", str(qp), str(rp)]) == 0
    captured = capsys.readouterr()
    names = [line.split("\t")[0].strip() for line in captured.out.splitlines()]
    assert names[:10] == [
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "map",
        "gm_map",
        "Rprec",
        "bpref",
        "recip_rank",
    ]
    assert names[10:21] == [f"iprec_at_recall_{x / 10:.2f}" for x in range(11)]
    assert names[21:] == ["P_5", "P_10", "P_15", "P_20", "P_30", "P_100", "P_200", "P_500", "P_1000"]
    assert captured.out.splitlines()[0].endswith("\tall\tmyrun")
    assert captured.err == "", "trec_eval's default set is complete: nothing left out"


def test_complete_flag_counts_missing_queries_as_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qp, rp = tmp_path / "q", tmp_path / "r"
    qp.write_text("1 0 a 1\n2 0 b 1\n2 0 c 1\n2 0 d 0\n")
    rp.write_text("1 Q0 a 1 1.0 t\n")
    main(["trec", "-m", "map", "-m", "num_q", "-m", "num_rel", str(qp), str(rp)])
    rows = parse(capsys.readouterr().out)
    assert rows[("map", "all")] == "1.0000" and rows[("num_rel", "all")] == "1"
    main(["trec", "-q", "-c", "-m", "map", "-m", "num_q", "-m", "num_rel", "-m", "gm_map", str(qp), str(rp)])
    rows = parse(capsys.readouterr().out)
    assert rows[("map", "all")] == "0.5000" and rows[("num_q", "all")] == "2"
    # The missing query's relevant documents count (trec_eval's out.test.aqc: num_rel all 561 = 474 + 10
    # + the 77 of the query absent from results.trunc), but it gets no per-query rows there either.
    assert rows[("num_rel", "all")] == "3"
    assert ("map", "2") not in rows and ("map", "1") in rows
    assert rows[("gm_map", "all")] == f"{(1.0 * 0.00001) ** 0.5:6.4f}", "the missing query is the floor in gm"


def test_max_documents_nosummary_and_measure_parameters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qp, rp = tmp_path / "q", tmp_path / "r"
    qp.write_text("1 0 a 0\n1 0 b 1\n1 0 c 1\n")
    rp.write_text("1 Q0 a 1 3.0 t\n1 Q0 b 2 2.0 t\n1 Q0 x 3 1.5 t\n1 Q0 c 4 1.0 t\n")
    main(
        [
            "trec",
            "-q",
            "-n",
            "-M2",
            "-m",
            "num_ret",
            "-m",
            "P.2,1",
            "-mutility.2,-1,0,0",
            "-m",
            "relstring.3",
            "-m",
            "iprec_at_recall..5",
            str(qp),
            str(rp),
        ]
    )
    rows = parse(capsys.readouterr().out)
    assert all(q != "all" for _, q in rows), "-n: no summary rows"
    assert rows[("num_ret", "1")] == "2", "-M2: only the top 2 count"
    assert [k for k, _ in rows] == [
        "num_ret",
        "iprec_at_recall_0.50",
        "P_1",
        "P_2",
        "relstring_3",
        "utility_2,-1,0,0",
    ], "trec_eval's order, cutoffs ascending; a parameter is part of relstring's name"
    assert rows[("utility_2,-1,0,0", "1")] == "1.0000", "2 x 1 relevant retrieved - 1 non-relevant retrieved"
    assert rows[("relstring_3", "1")] == "'01'" and rows[("iprec_at_recall_0.50", "1")] == "0.5000"
    assert main(["trec", "-m", "P.0", str(qp), str(rp)]) == 2
    assert "must be positive" in capsys.readouterr().err
    assert main(["trec", "-m", "bogus", str(qp), str(rp)]) == 2
    assert "unknown measure 'bogus'" in capsys.readouterr().err


def test_relevance_level_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qp, rp = tmp_path / "q", tmp_path / "r"
    qp.write_text("1 0 a 1\n1 0 b 2\n")
    rp.write_text("1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0 t\n")
    main(["trec", "-l2", "-m", "recip_rank", str(qp), str(rp)])
    assert parse(capsys.readouterr().out)[("recip_rank", "all")] == "0.5000"


def test_bad_run_line_names_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qp, rp = tmp_path / "q", tmp_path / "r"
    qp.write_text("1 0 a 1\n")
    rp.write_text("1 Q0 a 1 1.0 t\n1 Q0 b 2 high t\n1 Q0 a 3 0.5 t\n")
    assert main(["trec", str(qp), str(rp)]) == 2
    err = capsys.readouterr().err
    assert f"{rp}:2: error: field 'score'" in err
    assert f"{rp}:3: error: docno 'a' appears twice" in err


def test_fast_and_general_readers_agree(tmp_path: Path) -> None:
    from polars.testing import assert_frame_equal

    from evalcore.runs.trec import _fast_read, read_trec

    run, qrels = make_data(5, n_q=40)
    clean_q, clean_r = tmp_path / "q1", tmp_path / "r1"
    clean_q.write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in qrels.iter_rows()))
    clean_r.write_text("".join(f"{q} Q0 {d} 1 {s} t\n" for q, d, s in run.iter_rows()))
    messy_q, messy_r = tmp_path / "q2", tmp_path / "r2"
    messy_q.write_text("".join(f"{q}\t0   {d} {r}\n\n" for q, d, r in qrels.iter_rows()))
    messy_r.write_text("".join(f" {q}\tQ0  {d} 1 {s} t\n" for q, d, s in run.iter_rows()))
    assert _fast_read(clean_r, "run") is not None and _fast_read(messy_r, "run") is None
    a, b = read_trec(clean_q, clean_r), read_trec(messy_q, messy_r)
    as_text = pl.col("chunk_id").cast(pl.String)
    assert_frame_equal(a.run.with_columns(as_text), b.run.with_columns(as_text))
    assert_frame_equal(a.qrels.with_columns(as_text), b.qrels.with_columns(as_text))
    assert a.runid == b.runid == "t"


def test_tab_and_doubled_space_do_not_merge_fields(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qp, rp = tmp_path / "q", tmp_path / "r"
    qp.write_text("1 0 a 1\n1 0 b 0\n")
    rp.write_text("1\tQ0  a 1 2.0 t\n1 Q0 b 2 1.0 t\n")
    main(["trec", "-m", "num_ret", "-m", "num_rel_ret", str(qp), str(rp)])
    rows = parse(capsys.readouterr().out)
    assert rows[("num_ret", "all")] == "2" and rows[("num_rel_ret", "all")] == "1"


def test_text_after_a_run_lines_tag_is_ignored_as_trec_eval_does(tmp_path: Path) -> None:
    """trec_eval reads the first six fields of a run line (its own test suite has such a file)."""
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n")
    plain, noted = tmp_path / "plain", tmp_path / "noted"
    lines = ["q1 Q0 d1 1 2.5 tagA", "q1 Q0 d2 2 1.5 tagA", "q2 Q0 d9 1 3.0 tagA", "q2 Q0 d3 2 1.0 tagA"]
    plain.write_text("\n".join(lines) + "\n")
    noted.write_text("\n".join(f"{x} some comment here" for x in lines) + "\n")
    files = [read_trec(qrels, p) for p in (plain, noted)]
    as_text = [f.run.with_columns(pl.col("chunk_id").cast(pl.String)) for f in files]
    assert as_text[0].equals(as_text[1]) and files[1].runid == "tagA"
    # The general path (a tab sends a file there) reads them the same way.
    tabbed = tmp_path / "tabbed"
    tabbed.write_text("\n".join(f"{x}\tcomment" for x in lines) + "\n")
    assert read_trec(qrels, tabbed).run.with_columns(pl.col("chunk_id").cast(pl.String)).equals(as_text[0])
    short = tmp_path / "short"
    short.write_text("q1 Q0 d1 1 2.5\n")
    with pytest.raises(InputError, match="at least 6 fields"):
        read_trec(qrels, short)


def test_qrels_and_run_given_the_wrong_way_round_are_named_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qp, rp = write_trec(tmp_path)
    assert main(["trec", str(rp), str(qp)]) == 2
    err = capsys.readouterr().err
    assert f"{rp}:1: error: a qrels line must have 4 fields" in err
    assert "this looks like a run file: give the qrels first, then the run (QRELS RUN)" in err
