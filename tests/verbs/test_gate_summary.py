"""The gate's Markdown summary — what a pull request shows — and its JUnit report (each check's
reason), compared whole with reviewed copies (tests/verbs/golden/), on the sample runs: every result a check can have, must-pass failures with
their reasons, chunks that left the top k, and a changed judge. A change to its wording or layout
shows here as a diff to review; when it is meant, rewrite the copies with
``RAGTRIAGE_UPDATE_GOLDEN=1 python -m pytest tests/verbs/test_gate_summary.py`` and read the diff."""

from __future__ import annotations

import dataclasses
import difflib
import os
from pathlib import Path

import pytest

from evalcore import compare, load_runs
from evalcore.gate import GatePolicy, MetricRule, junit_report, markdown_report, run_gate
from helpers import SAMPLE

GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture(scope="module")
def runs():  # type: ignore[no-untyped-def]
    return load_runs(SAMPLE).runs


def _same_as_golden(name: str, text: str) -> None:
    text = text.replace(str(SAMPLE), "<sample_runs>")  # the checkout's own path
    path = GOLDEN / name
    if os.environ.get("RAGTRIAGE_UPDATE_GOLDEN"):
        path.write_text(text)
    want = path.read_text()
    diff = "".join(difflib.unified_diff(want.splitlines(True), text.splitlines(True), "golden", "now"))
    assert text == want, f"the summary differs from {path.name}:\n{diff}"


def test_the_summary_of_a_failed_gate_with_every_kind_of_result(runs) -> None:  # type: ignore[no-untyped-def]
    cmp = compare(runs["2026-11-02-hybrid-rerank"], runs["2026-11-16-rerank-prompt-v2"], k=5)
    policy = GatePolicy(
        (
            MetricRule("R@5", 0.02, "fail"),  # unchanged: pass
            MetricRule("R@10", 0.0, "fail"),  # unchanged, no tolerance at all: pass
            MetricRule("faithfulness", 0.05, "fail"),  # dropped 0.20, significant: fail
            MetricRule("abstention", 0.05, "warn"),  # dropped 0.64: warn only
            MetricRule("relevance", 0.01, "fail"),  # rose: pass
            MetricRule("correctness", 0.01, "fail"),  # dropped 0.016, not significant: pass
            MetricRule("false_refusal", 0.01, "fail"),  # lower is better
            MetricRule("bpref", 0.01, "fail"),  # not in these runs: skipped
        ),
        must_pass_metrics=("R@5", "faithfulness"),
        require_significance=True,
    )
    res = run_gate(cmp, policy)
    _same_as_golden("gate_summary_failed.md", markdown_report(res))
    # The JUnit report CI reads carries each check's reason.
    _same_as_golden("gate_junit_failed.xml", junit_report(res))


def test_the_summary_when_the_judge_changed_and_chunks_left_the_top_k(runs) -> None:  # type: ignore[no-untyped-def]
    base, cand = runs["2026-10-19-hybrid"], runs["2026-10-05-bm25"]
    judge = cand.manifest.judge
    assert judge is not None
    other_judge = dataclasses.replace(
        cand,
        manifest=cand.manifest.model_copy(
            update={"judge": judge.model_copy(update={"model": "claude-haiku-4-5"})}
        ),
    )
    policy = GatePolicy(
        (
            MetricRule("R@5", 0.02, "fail"),  # dropped 0.028, not significant, but significance not required
            MetricRule("faithfulness", 0.05, "fail"),  # judged: not gated across judges
            MetricRule("nDCG@10", 0.5, "warn"),
        ),
        must_pass_metrics=("R@5", "nDCG@10"),
        require_significance=False,
    )
    res = run_gate(compare(base, other_judge, k=5), policy)
    _same_as_golden("gate_summary_judge_changed.md", markdown_report(res))
    _same_as_golden("gate_junit_judge_changed.xml", junit_report(res))


def test_the_summary_of_a_passing_gate(runs) -> None:  # type: ignore[no-untyped-def]
    cmp = compare(runs["2026-10-19-hybrid"], runs["2026-11-02-hybrid-rerank"], k=5)
    policy = GatePolicy(
        (MetricRule("R@5", 0.02, "fail"), MetricRule("nDCG@10", 0.02, "fail")), must_pass_metrics=()
    )
    _same_as_golden("gate_summary_passed.md", markdown_report(run_gate(cmp, policy)))
