"""A comparison is one report that decides every row's significance and verdict; the CLI, the gate and
the dashboard render those decisions and never compare a p-value themselves."""

from __future__ import annotations

import polars as pl
import pytest

from dashboard import tables
from evalcore import compare, load_runs
from evalcore.comparison import decide
from evalcore.gate import GatePolicy, MetricRule, run_gate
from helpers import SAMPLE


@pytest.fixture(scope="module")
def cmp():  # type: ignore[no-untyped-def]
    lr = load_runs(SAMPLE)
    return compare(lr.runs["2026-10-05-bm25"], lr.runs["2026-11-16-rerank-prompt-v2"], permutations=2000)


def test_each_row_has_a_verdict_by_the_metrics_direction(cmp) -> None:  # type: ignore[no-untyped-def]
    v = dict(cmp.summary.select("metric", "verdict").iter_rows())
    assert v["faithfulness"] == "worse" and v["abstention"] == "worse", "higher is better and it fell"
    assert v["AP"] == "better" and v["no_answer"] == "moved", "a rate with no direction only moves"
    assert v["correctness"] == "no change", "its CI spans 0 and p_holm > 0.05"


def test_the_level_belongs_to_the_report_and_the_gate_asks_it_at_its_own(cmp) -> None:  # type: ignore[no-untyped-def]
    strict = cmp.with_alpha(0.0075)
    worse = dict(strict.summary.select("metric", "verdict").iter_rows())
    assert worse["faithfulness"] == "worse" and worse["abstention"] == "no change"  # p_holm 0.0070 / 0.0080
    assert cmp.summary.filter(pl.col("metric") == "abstention")["verdict"][0] == "worse", (
        "a copy, not a change"
    )
    policy = GatePolicy(
        rules=(MetricRule("abstention", 0.01, "fail"),),
        require_significance=True,
        alpha=0.0075,
        must_pass_metrics=(),
    )
    check = run_gate(cmp, policy).checks[0]
    assert check["status"] == "pass" and "(not significant)" in check["reason"]
    loose = GatePolicy(rules=policy.rules, require_significance=True, must_pass_metrics=())
    assert run_gate(cmp, loose).checks[0]["status"] == "fail", "at 0.05 the same drop is significant"


def test_a_judge_change_is_a_verdict_too() -> None:
    summary = pl.DataFrame(
        {"metric": ["faithfulness", "R@5"], "n": [10, 10], "p_holm": [0.001, 0.001], "better": [-0.2, 0.1]}
    ).with_columns(comparable=pl.Series([False, True]))
    decided = decide(summary, 0.05)
    assert decided["verdict"].to_list() == ["not comparable", "better"]
    assert decided["significant"].to_list() == [False, True]


def test_the_dashboard_shows_the_reports_verdicts(cmp) -> None:  # type: ignore[no-untyped-def]
    shown = tables.compare_summary(cmp.with_alpha(0.0075))
    sig = dict(shown.select("metric", "sig").iter_rows())
    assert sig["faithfulness"] == "★ worse" and sig["abstention"] == "", "decided at the report's level"
    moves = tables.significant_moves(cmp)
    assert set(moves.filter(pl.col("change") == "worse")["metric"]) == {"faithfulness", "abstention"}
