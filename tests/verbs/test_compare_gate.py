"""Run comparison and the CI gate on the sample runs, whose regressions are known by construction."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from evalcore import compare, load_runs
from evalcore.cli import main
from evalcore.stats import bootstrap_ci, holm, paired_randomization_test
from helpers import SAMPLE

RERANK, PROMPT2, BM25, HYBRID = (
    "2026-11-02-hybrid-rerank",
    "2026-11-16-rerank-prompt-v2",
    "2026-10-05-bm25",
    "2026-10-19-hybrid",
)


@pytest.fixture(scope="module")
def runs():  # type: ignore[no-untyped-def]
    return load_runs(SAMPLE).runs


def test_prompt_change_drops_faithfulness_while_retrieval_holds(runs) -> None:  # type: ignore[no-untyped-def]
    c = compare(runs[RERANK], runs[PROMPT2])
    s = {r["metric"]: r for r in c.summary.iter_rows(named=True)}
    assert s["R@5"]["delta"] == 0 and s["nDCG@10"]["delta"] == 0
    assert s["faithfulness"]["delta"] < -0.1 and s["faithfulness"]["p_holm"] < 0.05
    assert s["faithfulness"]["ci_high"] < 0, "the effect size's CI excludes 0"
    regressed = c.per_question.filter(pl.col("status") == "regressed")
    assert set(regressed["diagnosis"].unique()) == {"generation", "abstention"}


def test_retriever_change_regressions_are_diagnosed_as_retrieval_with_chunks_that_left(runs) -> None:  # type: ignore[no-untyped-def]
    c = compare(runs[BM25], runs[HYBRID], k=1, permutations=1000)
    ret = c.per_question.filter(pl.col("diagnosis") == "retrieval")
    assert ret.height > 0
    lost = ret.filter(pl.col("left_top_k").list.len() > 0)
    assert lost.height > 0
    row = lost.row(0, named=True)
    labeled = set(runs[BM25].testset.qrels.filter(pl.col("qid") == row["qid"])["chunk_id"])
    assert set(row["left_top_k"]) <= labeled


def test_per_question_table_is_sorted_by_worst_regression(runs) -> None:  # type: ignore[no-untyped-def]
    c = compare(runs[RERANK], runs[PROMPT2])
    worst = c.per_question["worst_delta"].to_list()
    assert worst == sorted(worst)


def test_slices_are_holm_corrected_together(runs) -> None:  # type: ignore[no-untyped-def]
    c = compare(runs[RERANK], runs[PROMPT2])
    by = c.by_slice("type", metrics=["faithfulness", "R@5"], permutations=2000)
    assert set(by["slice"]) >= {"lookup", "identifier", "comparison", "multi-hop", "unanswerable"}
    tested = by.filter(pl.col("p").is_not_null())
    assert (tested["p_holm"] >= tested["p"]).all()


def test_stats_helpers_against_known_values() -> None:
    assert holm([0.01, 0.04, 0.03]).tolist() == pytest.approx([0.03, 0.06, 0.06])
    lo, hi = bootstrap_ci([1.0] * 30 + [0.0] * 70)
    assert lo < 0.3 < hi
    assert paired_randomization_test([0.0] * 50) == 1.0
    assert paired_randomization_test([0.5] * 30, permutations=5000) < 0.001


def test_gate_passes_on_an_improvement_and_fails_on_the_prompt_regression(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert (
        main(
            [
                "gate",
                "--baseline",
                str(SAMPLE / HYBRID),
                "--candidate",
                str(SAMPLE / RERANK),
                "--permutations",
                "2000",
            ]
        )
        == 0
    )
    md, junit, pq = tmp_path / "summary.md", tmp_path / "junit.xml", tmp_path / "pq.csv"
    code = main(
        [
            "gate",
            "--baseline",
            str(SAMPLE / RERANK),
            "--candidate",
            str(SAMPLE / PROMPT2),
            "--summary",
            str(md),
            "--junit",
            str(junit),
            "--per-question",
            str(pq),
            "--permutations",
            "2000",
        ]
    )
    assert code == 1, "must-pass questions regressed"
    text = md.read_text()
    assert "❌ failed" in text and "unanswerable question stopped abstaining" in text
    xml = junit.read_text()
    assert 'classname="ragtriage.must_pass"' in xml and "<failure" in xml
    per_q = pl.read_csv(pq)
    assert {"qid", "status", "diagnosis", "faithfulness_delta"} <= set(per_q.columns)


def test_gate_config_tolerances_and_bad_config(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    cfg = tmp_path / "gate.toml"
    cfg.write_text(
        '[gate]\nmust_pass_metrics = ["R@5"]\n[metrics.faithfulness]\nmax_drop = 0.05\nseverity = "fail"\n'
    )
    assert (
        main(
            [
                "gate",
                "--baseline",
                str(SAMPLE / RERANK),
                "--candidate",
                str(SAMPLE / PROMPT2),
                "--config",
                str(cfg),
                "--permutations",
                "2000",
            ]
        )
        == 1
    )
    assert "| faithfulness |" in capsys.readouterr().out
    cfg.write_text('[metrics."F1@5"]\nmax_drop = 0.1\n')
    assert (
        main(
            [
                "gate",
                "--baseline",
                str(SAMPLE / RERANK),
                "--candidate",
                str(SAMPLE / PROMPT2),
                "--config",
                str(cfg),
            ]
        )
        == 2
    )
    assert "unknown measure 'F1@5'" in capsys.readouterr().err


def test_gate_on_missing_run_is_exit_2(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["gate", "--baseline", "/nonexistent/run", "--candidate", str(SAMPLE / RERANK)]) == 2
    assert "not a run folder" in capsys.readouterr().err


def test_metrics_command_by_tag_json(capsys) -> None:  # type: ignore[no-untyped-def]
    assert (
        main(["metrics", str(SAMPLE / BM25), "--by", "source", "--format", "json", "--resamples", "200"]) == 0
    )
    rows = json.loads(capsys.readouterr().out)
    r5 = {r["slice"]: r["mean"] for r in rows if r["metric"] == "R@5"}
    assert r5["synthetic"] > r5["real"], "synthetic questions flatter keyword retrieval (the guide's warning)"


def test_cli_compare_states_the_held_out_rule_the_dashboard_uses(capsys) -> None:  # type: ignore[no-untyped-def]
    base, cand = SAMPLE / "2026-11-02-hybrid-rerank", SAMPLE / "2026-11-16-rerank-prompt-v2"
    assert main(["compare", str(base), str(cand), "--top", "200", "--permutations", "200"]) == 0
    out = capsys.readouterr().out
    assert "on the 146 questions both runs answered" in out
    assert "(all 146, 26 of them held-out)" in out
    assert "held-out questions not listed: add --include-heldout" in out
    listed = [line for line in out.splitlines() if line.startswith("│ hv-")]
    runs = load_runs(SAMPLE).runs
    held = set(runs["2026-11-16-rerank-prompt-v2"].testset.cases.filter(pl.col("split") == "heldout")["qid"])
    assert listed and not any(line.split()[1] in held for line in listed)
    assert (
        main(["compare", str(base), str(cand), "--top", "200", "--permutations", "200", "--include-heldout"])
        == 0
    )
    listed = [line.split()[1] for line in capsys.readouterr().out.splitlines() if line.startswith("│ hv-")]
    assert held & set(listed), "asked for, the held-out regressions are listed too"


def test_the_gate_across_two_test_set_versions_says_what_it_left_out(runs_copy: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from helpers import two_testset_versions

    base, cand = "2026-11-02-hybrid-rerank", "2026-11-16-rerank-prompt-v2"
    folder = two_testset_versions(runs_copy, cand)
    main(
        ["gate", "--baseline", str(folder / base), "--candidate", str(folder / cand), "--permutations", "200"]
    )
    out = capsys.readouterr().out
    assert "on the 143 questions both runs answered in both test set versions" in out
    assert "3 questions left out: 1 question text changed, 2 labels changed" in out


def test_cli_compare_csv_per_question_and_runs_of_unrelated_test_sets(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    base, cand = SAMPLE / "2026-11-02-hybrid-rerank", SAMPLE / "2026-11-16-rerank-prompt-v2"
    assert (
        main(["compare", str(base), str(cand), "--format", "csv", "--per-question", "--permutations", "100"])
        == 0
    )
    rows = pl.read_csv(capsys.readouterr().out.encode())
    assert rows.height == 146 and rows.schema["left_top_k"] == pl.String, "list columns joined for CSV"
    # Two unrelated Ragas exports both number their questions ragas-00001...: never compared as one.
    from helpers import mixed_runs_folder

    folder = mixed_runs_folder(tmp_path / "runs")
    capsys.readouterr()
    code = main(
        ["compare", str(folder / "support-bot" / "support-bot"), str(folder / "hr-policies" / "hr-policies")]
    )
    assert code == 2
    assert "the runs answer different test sets" in capsys.readouterr().err


def test_cli_metrics_names_what_does_not_apply_instead_of_printing_nulls(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from helpers import mixed_runs_folder

    folder = mixed_runs_folder(tmp_path / "runs")
    capsys.readouterr()
    assert main(["metrics", str(folder / "hr-policies" / "hr-policies")]) == 0
    out = capsys.readouterr().out
    assert "null" not in out and "ext:faithfulness" in out
    assert "not applicable (no question they apply to), left out: R@5" in out
