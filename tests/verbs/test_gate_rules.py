"""The gate's rules one at a time, on comparisons built to the point: a metric's severity, the
direction of a lower-is-better metric, the significance requirement, and Holm across the family."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

from evalcore import compare, load_runs
from evalcore.comparison import Comparison
from evalcore.gate import GatePolicy, MetricRule, run_gate
from evalcore.stats import holm
from helpers import SAMPLE

RERANK, PROMPT2 = "2026-11-02-hybrid-rerank", "2026-11-16-rerank-prompt-v2"


def _comparison(rows: list[dict[str, Any]]) -> Comparison:
    """A comparison holding only a summary (no must-pass question)."""
    full = [
        {
            "n": 100,
            "baseline": 0.5,
            "candidate": 0.5,
            "ci_low": None,
            "ci_high": None,
            "p": None,
            "p_holm": None,
            **r,
        }
        for r in rows
    ]
    summary = pl.DataFrame(
        full,
        schema_overrides={"ci_low": pl.Float64, "ci_high": pl.Float64, "p": pl.Float64, "p_holm": pl.Float64},
    )
    per_q = pl.DataFrame(schema={"qid": pl.String, "must_pass": pl.Boolean})
    return Comparison(
        baseline=None,
        candidate=None,
        k=5,
        metrics=tuple(r["metric"] for r in rows),  # type: ignore[arg-type]
        per_question=per_q,
        summary=summary,
    )


def _status(rows: list[dict[str, Any]], rules: list[MetricRule], **policy: Any) -> dict[str, str]:
    res = run_gate(_comparison(rows), GatePolicy(tuple(rules), must_pass_metrics=(), **policy))
    return {c["metric"]: c["status"] for c in res.checks} | {"_passed": str(res.passed)}


def test_severity_decides_whether_a_drop_fails_the_build() -> None:
    rows = [
        {"metric": "R@5", "delta": -0.10, "p_holm": 0.001},
        {"metric": "faithfulness", "delta": -0.10, "p_holm": 0.001},
    ]
    got = _status(rows, [MetricRule("R@5", 0.02, "fail"), MetricRule("faithfulness", 0.02, "warn")])
    assert got == {"R@5": "fail", "faithfulness": "warn", "_passed": "False"}
    got = _status(rows, [MetricRule("R@5", 0.02, "warn"), MetricRule("faithfulness", 0.02, "warn")])
    assert got["_passed"] == "True", "warnings never fail the build"


def test_a_lower_is_better_metric_fails_when_it_rises_not_when_it_falls() -> None:
    rule = [MetricRule("false_refusal", 0.05, "fail")]
    assert (
        _status([{"metric": "false_refusal", "delta": +0.10, "p_holm": 0.01}], rule)["false_refusal"]
        == "fail"
    )
    assert (
        _status([{"metric": "false_refusal", "delta": -0.10, "p_holm": 0.01}], rule)["false_refusal"]
        == "pass"
    )
    assert (
        _status([{"metric": "R@5", "delta": +0.10, "p_holm": 0.01}], [MetricRule("R@5", 0.05)])["R@5"]
        == "pass"
    )


def test_require_significance_lets_an_insignificant_drop_pass() -> None:
    rows = [{"metric": "R@5", "delta": -0.10, "p_holm": 0.20}]
    assert _status(rows, [MetricRule("R@5", 0.02)])["R@5"] == "fail"
    assert _status(rows, [MetricRule("R@5", 0.02)], require_significance=True)["R@5"] == "pass"
    significant = [{"metric": "R@5", "delta": -0.10, "p_holm": 0.01}]
    assert _status(significant, [MetricRule("R@5", 0.02)], require_significance=True)["R@5"] == "fail"


def test_a_metric_without_a_direction_cannot_be_gated(tmp_path) -> None:  # type: ignore[no-untyped-def]
    cfg = tmp_path / "gate.toml"
    cfg.write_text("[metrics.no_answer]\nmax_drop = 0.1\n")
    with pytest.raises(ValueError, match="no better direction"):
        GatePolicy.from_toml(cfg)


def test_holm_is_applied_across_every_metric_compared_at_once() -> None:
    """Not per metric alone: the reported p_holm is holm() over the whole family, and here the
    correction changes a conclusion (a raw p under 0.05 that is not significant once corrected)."""
    runs = load_runs(SAMPLE).runs
    c = compare(runs["2026-10-19-hybrid"], runs[RERANK], permutations=2000)
    tested = c.summary.filter(pl.col("p").is_not_null())
    assert tested["p_holm"].to_list() == pytest.approx(holm(tested["p"].to_numpy()).tolist())
    flipped = tested.filter((pl.col("p") < 0.05) & (pl.col("p_holm") >= 0.05))
    assert "R@5" in flipped["metric"].to_list(), "R@5: p < 0.01 alone, not significant among 14"
    c = compare(runs[RERANK], runs[PROMPT2], permutations=2000)
    by = c.by_slice("type", metrics=["faithfulness", "abstention", "R@5"], permutations=2000)
    cells = by.filter(pl.col("p").is_not_null())
    assert cells["p_holm"].to_list() == pytest.approx(holm(cells["p"].to_numpy()).tolist())


def test_a_policy_file_sets_every_rule_it_names_and_keeps_the_defaults_of_the_rest(tmp_path) -> None:  # type: ignore[no-untyped-def]
    cfg = tmp_path / "gate.toml"
    cfg.write_text(
        "[gate]\n"
        "require_significance = true\n"
        "alpha = 0.01\n"
        "k = 10\n"
        'must_pass_metrics = ["R@10", "faithfulness"]\n'
        '[metrics."R@5"]\n'
        'severity = "warn"\n'  # max_drop not given: the default tolerance (0.02) stays
        "[metrics.faithfulness]\n"
        "max_drop = 0.2\n"  # severity not given: "fail", whatever the default was
        '[metrics."P@5"]\n'
        "max_drop = 0.01\n",  # a metric with no default rule
        encoding="utf-8",
    )
    policy = GatePolicy.from_toml(cfg)
    rules = {r.metric: (r.max_drop, r.severity) for r in policy.rules}
    assert rules["R@5"] == (0.02, "warn")
    assert rules["faithfulness"] == (0.2, "fail")
    assert rules["P@5"] == (0.01, "fail")
    assert rules["nDCG@10"] == (0.02, "fail"), "a rule the file does not name keeps its default"
    assert policy.must_pass_metrics == ("R@10", "faithfulness")
    assert (policy.require_significance, policy.alpha, policy.k) == (True, 0.01, 10)
    default = GatePolicy.from_toml(_write(tmp_path / "empty.toml", ""))
    assert (default.require_significance, default.alpha, default.k) == (False, 0.05, 5)
    assert default.must_pass_metrics == GatePolicy.default().must_pass_metrics


def _write(path, text: str):  # type: ignore[no-untyped-def]
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[gates]\nk = 5\n", "unknown key gates"),
        ("[gate]\nkk = 5\nalpha = 0.1\n", "unknown key gate.kk;"),
        ('[metrics."R@5"]\nmax_drop = 0.1\ntolerance = 1\n', "takes max_drop and severity"),
        ('[metrics."R@5"]\nseverity = "WARN"\n', 'severity must be "fail" or "warn", found \'WARN\''),
        ('[metrics."R@5"]\nmax_drop = -0.1\n', "max_drop must be a number >= 0, found -0.1"),
        ('[metrics."R@5"]\nmax_drop = "a lot"\n', "max_drop must be a number >= 0"),
        (
            '[gate]\nmust_pass_metrics = ["R@5", "no_answer"]\n',
            "gate.must_pass_metrics: no_answer has no better",
        ),
        ("[gate\n", "not valid TOML"),
    ],
)
def test_a_policy_file_with_a_mistake_is_refused_naming_the_file_and_key(
    tmp_path, text: str, message: str
) -> None:  # type: ignore[no-untyped-def]
    cfg = _write(tmp_path / "gate.toml", text)
    with pytest.raises(ValueError, match=None) as err:
        GatePolicy.from_toml(cfg)
    assert str(err.value).startswith(str(cfg)) and message in str(err.value)


def test_the_junit_report_counts_and_marks_every_outcome_the_way_ci_reads_it() -> None:
    import xml.etree.ElementTree as ET

    from evalcore.gate import GateResult, junit_report

    res = GateResult(
        passed=False,
        checks=[
            {"metric": "R@5", "status": "fail", "reason": "dropped 0.10 > 0.02"},
            {"metric": "faithfulness", "status": "warn", "reason": "dropped 0.10 > 0.05"},
            {"metric": "correctness", "status": "pass", "reason": "ok"},
            {"metric": "abstention", "status": "skipped", "reason": "no question has it"},
            {"metric": "relevance", "status": "incomparable", "reason": "judges differ"},
        ],
        must_pass=[
            {"qid": "q<1>", "status": "fail", "reasons": ["R@5 fell", "faithfulness fell"]},
            {"qid": "q2", "status": "pass", "reasons": []},
        ],
    )
    text = junit_report(res)
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n') and text.endswith("</testsuite>\n")
    suite = ET.fromstring(text.split("\n", 1)[1])
    assert suite.attrib == {
        "name": "ragtriage gate",
        "tests": "7",
        "failures": "2",
        "skipped": "2",
        "errors": "1",
    }
    got = {
        (case.get("classname"), case.get("name")): [(child.tag, child.get("message")) for child in case]
        for case in suite
    }
    assert got == {
        ("ragtriage.metrics", "R@5"): [("failure", "dropped 0.10 > 0.02")],
        ("ragtriage.metrics", "faithfulness"): [("skipped", "warn: dropped 0.10 > 0.05")],
        ("ragtriage.metrics", "correctness"): [],
        ("ragtriage.metrics", "abstention"): [("skipped", "skipped: no question has it")],
        ("ragtriage.metrics", "relevance"): [("error", "judges differ")],
        ("ragtriage.must_pass", "q<1>"): [("failure", "R@5 fell; faithfulness fell")],
        ("ragtriage.must_pass", "q2"): [],
    }


def test_must_pass_questions_fail_with_every_reason_in_order() -> None:
    def row(
        qid: str, answerable: bool = True, left: list[str] | None = None, **deltas: float
    ) -> dict[str, Any]:
        out: dict[str, Any] = {
            "qid": qid,
            "must_pass": True,
            "answerable": answerable,
            "left_top_k": left or [],
            "diagnosis": "d",
            "abstention_base": None,
            "abstention_cand": None,
        }
        for m in ("R@5", "faithfulness", "false_refusal", "abstention"):
            d = deltas.get(m.replace("@", "_"))
            base = 0.5 if d is not None else None
            out |= {f"{m}_base": base, f"{m}_cand": None if d is None else base + d, f"{m}_delta": d}  # type: ignore[operator]
        return out

    rows = [
        row("q1", R_5=-0.5, left=["c1", "c2"]),
        row("q2", answerable=False, faithfulness=-0.5, abstention=-1.0),
        row("q3", false_refusal=+0.5),
        row("q4", R_5=+0.5, false_refusal=-0.5),
    ]
    rows[1] |= {"abstention_base": 1, "abstention_cand": 0}
    per_q = pl.DataFrame(rows, infer_schema_length=None)
    cmp = _comparison([{"metric": "R@5", "delta": 0.0, "p_holm": 0.5}])
    cmp = Comparison(
        baseline=None, candidate=None, k=5, metrics=cmp.metrics, per_question=per_q, summary=cmp.summary
    )
    policy = GatePolicy((), must_pass_metrics=("R@5", "faithfulness", "false_refusal"))
    res = run_gate(cmp, policy)
    got = {m["qid"]: (m["status"], m["reasons"]) for m in res.must_pass}
    assert got == {
        "q1": ("fail", ["R@5 0.500 → 0.000", "labeled chunks left the top 5: c1, c2"]),
        "q2": ("fail", ["unanswerable question stopped abstaining", "faithfulness 0.500 → 0.000"]),
        "q3": ("fail", ["false_refusal 0.500 → 1.000"]),
        "q4": ("pass", []),
    }
    assert not res.passed and res.exit_code == 1


def test_a_p_value_equal_to_alpha_is_not_significant() -> None:
    rows = [{"metric": "R@5", "delta": -0.10, "p_holm": 0.05}]
    assert _status(rows, [MetricRule("R@5", 0.02)], require_significance=True)["R@5"] == "pass"


def test_a_skipped_or_unjudgeable_check_still_names_its_rule() -> None:
    res = run_gate(
        _comparison([{"metric": "R@5", "n": 0}]),
        GatePolicy((MetricRule("R@5", 0.03, "warn"),), must_pass_metrics=()),
    )
    assert res.checks == [
        {
            "metric": "R@5",
            "status": "skipped",
            "severity": "warn",
            "reason": "no question has this metric in both runs",
            "max_drop": 0.03,
        }
    ]
    assert res.passed


def test_the_per_question_export_holds_every_question_as_json_or_csv(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import dataclasses
    import json

    from evalcore.gate import write_per_question

    runs = load_runs(SAMPLE).runs
    res = run_gate(compare(runs[RERANK], runs[PROMPT2], permutations=200), GatePolicy.default())
    assert res.comparison is not None
    # The sample's runs lose no labeled chunk; give two questions some, as a retrieval change would.
    pq0 = res.comparison.per_question
    left = [["c-1", "c-2"] if i == 0 else ["c-9"] if i == 3 else [] for i in range(pq0.height)]
    per_q = pq0.with_columns(left_top_k=pl.Series(left, dtype=pl.List(pl.String)))
    res = dataclasses.replace(res, comparison=dataclasses.replace(res.comparison, per_question=per_q))

    write_per_question(res, tmp_path / "pq.JSON")  # the suffix in any case
    text = (tmp_path / "pq.JSON").read_text(encoding="utf-8")
    assert text.startswith("[\n") and text.endswith("]\n"), "one readable JSON document"
    rows = json.loads(text)
    assert [r["qid"] for r in rows] == per_q["qid"].to_list()
    assert [r["left_top_k"] for r in rows] == per_q["left_top_k"].to_list()

    write_per_question(res, tmp_path / "pq.csv")
    csv = pl.read_csv(tmp_path / "pq.csv")
    assert csv["qid"].to_list() == per_q["qid"].to_list()
    joined = per_q["left_top_k"].list.join(" ").to_list()
    assert csv["left_top_k"].fill_null("").to_list() == joined, "chunk ids joined by single spaces"
