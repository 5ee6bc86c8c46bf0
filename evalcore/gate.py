"""The CI gate: fail a build when a candidate run regresses against a baseline.

Policy (a TOML file; every key optional)::

    [gate]
    require_significance = false   # a drop must also be significant (Holm-corrected p < alpha) to fail
    alpha = 0.05
    k = 5                          # the top k whose labeled chunks are tracked per question
    must_pass_metrics = ["R@5", "nDCG@10", "correctness", "faithfulness", "abstention", "false_refusal"]

    [metrics."R@5"]
    max_drop = 0.02                # absolute drop of the mean tolerated
    severity = "fail"              # or "warn": reported, never fails the build

Retrieval metrics are gated by default (cheap, deterministic); generation metrics are tracked with a
wider tolerance and only warn, since judge scores are noisy. A must-pass question that regresses on
any must-pass metric — or an unanswerable must-pass question that stops abstaining — fails the build.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from xml.sax.saxutils import quoteattr

import polars as pl

from evalcore.comparison import Comparison
from evalcore.metrics.catalogue import EPS, metric_info, retrieval_only
from evalcore.report import regressed_markdown
from evalcore.stats import ALPHA
from evalcore.words import agree

DEFAULT_TOLERANCES: dict[str, tuple[float, str]] = {
    "R@5": (0.02, "fail"),
    "R@10": (0.02, "fail"),
    "nDCG@10": (0.02, "fail"),
    "RR@10": (0.03, "fail"),
    "faithfulness": (0.05, "warn"),
    "correctness": (0.05, "warn"),
    "abstention": (0.10, "warn"),
    "false_refusal": (0.05, "warn"),
}
DEFAULT_MUST_PASS = ("R@5", "nDCG@10", "correctness", "faithfulness", "abstention", "false_refusal")


@dataclass(frozen=True)
class MetricRule:
    metric: str
    max_drop: float
    severity: Literal["fail", "warn"] = "fail"


@dataclass(frozen=True)
class GatePolicy:
    rules: tuple[MetricRule, ...]
    must_pass_metrics: tuple[str, ...] = DEFAULT_MUST_PASS
    require_significance: bool = False
    alpha: float = ALPHA
    k: int = 5

    @property
    def measures(self) -> list[str]:
        """Retrieval measures the comparison must compute for this policy."""
        return retrieval_only([r.metric for r in self.rules] + list(self.must_pass_metrics))

    @classmethod
    def default(cls) -> GatePolicy:
        return cls(tuple(MetricRule(m, d, s) for m, (d, s) in DEFAULT_TOLERANCES.items()))  # type: ignore[arg-type]

    @classmethod
    def from_toml(cls, path: str | Path) -> GatePolicy:
        """Read a policy; raise ``ValueError`` naming the file and key for anything wrong."""
        path = Path(path)
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            msg = f"{path}: not valid TOML: {exc}"
            raise ValueError(msg) from None
        gate = data.get("gate", {})
        unknown = set(data) - {"gate", "metrics"}
        unknown |= {
            f"gate.{k}" for k in set(gate) - {"require_significance", "alpha", "k", "must_pass_metrics"}
        }
        if unknown:
            msg = f"{path}: unknown {agree(len(unknown), 'key', 'keys')} {', '.join(sorted(unknown))}; see docs/ci-gate.md"
            raise ValueError(msg)
        base = cls.default()
        rules = {r.metric: r for r in base.rules}
        for name, spec in data.get("metrics", {}).items():
            _check_metric(path, f"metrics.{name}", name)
            if not isinstance(spec, dict) or set(spec) - {"max_drop", "severity"}:
                msg = f'{path}: [metrics."{name}"] takes max_drop and severity'
                raise ValueError(msg)
            drop = spec.get("max_drop", rules[name].max_drop if name in rules else 0.0)
            sev = spec.get("severity", "fail")
            if not isinstance(drop, int | float) or drop < 0:
                msg = f"{path}: metrics.{name}.max_drop must be a number >= 0, found {drop!r}"
                raise ValueError(msg)
            if sev not in ("fail", "warn"):
                msg = f'{path}: metrics.{name}.severity must be "fail" or "warn", found {sev!r}'
                raise ValueError(msg)
            rules[name] = MetricRule(name, float(drop), sev)
        must = tuple(gate.get("must_pass_metrics", base.must_pass_metrics))
        for m in must:
            _check_metric(path, "gate.must_pass_metrics", m)
        return cls(
            rules=tuple(rules.values()),
            must_pass_metrics=must,
            require_significance=bool(gate.get("require_significance", False)),
            alpha=float(gate.get("alpha", ALPHA)),
            k=int(gate.get("k", 5)),
        )


def _check_metric(path: Path, key: str, name: str) -> None:
    try:
        info = metric_info(name)
    except ValueError as exc:
        msg = f"{path}: {key}: {exc}"
        raise ValueError(msg) from None
    if info.higher_is_better is None:
        msg = (
            f"{path}: {key}: {name} has no better direction (a rise or a fall can each be a problem), "
            "so it cannot be gated; gate abstention or false_refusal instead"
        )
        raise ValueError(msg)


@dataclass
class GateResult:
    passed: bool
    checks: list[dict[str, Any]] = field(default_factory=list)  # one per gated metric
    must_pass: list[dict[str, Any]] = field(default_factory=list)  # one per must-pass question
    comparison: Comparison | None = None

    @property
    def incomparable(self) -> bool:
        """A gated metric could not be judged: the runs' judges differ (and that was not allowed)."""
        return any(c["status"] == "incomparable" for c in self.checks)

    @property
    def exit_code(self) -> int:
        """0 pass, 1 a regression, 2 the comparison cannot be trusted as it stands (a changed judge)."""
        return 2 if self.incomparable else 0 if self.passed else 1


def run_gate(cmp: Comparison, policy: GatePolicy, *, allow_judge_change: bool = False) -> GateResult:
    """Apply ``policy`` to a comparison. When the runs' judges differ, the judged metrics are not
    gated (status ``incomparable``, exit 2) unless ``allow_judge_change``."""
    cmp = cmp.with_alpha(policy.alpha)  # the report decides significance, at the policy's level
    summary = {r["metric"]: r for r in cmp.summary.iter_rows(named=True)}
    checks = []
    for rule in policy.rules:
        row = summary.get(rule.metric)
        if cmp.judge_change and metric_info(rule.metric).judged and not allow_judge_change:
            checks.append(
                {
                    "metric": rule.metric,
                    "status": "incomparable",
                    "severity": rule.severity,
                    "reason": "the runs were judged by different judges; re-judge the baseline, or pass "
                    "--allow-judge-change",
                    "max_drop": rule.max_drop,
                }
            )
            continue
        if row is None or row["n"] == 0:
            checks.append(
                {
                    "metric": rule.metric,
                    "status": "skipped",
                    "severity": rule.severity,
                    "reason": "no question has this metric in both runs",
                    "max_drop": rule.max_drop,
                }
            )
            continue
        better = metric_info(rule.metric).better(row["delta"])
        drop = -better if better is not None else 0.0
        over = drop > rule.max_drop + EPS
        significant = bool(row["significant"])
        failed = over and (significant or not policy.require_significance)
        status = "pass" if not failed else ("fail" if rule.severity == "fail" else "warn")
        checks.append(
            {
                "metric": rule.metric,
                "status": status,
                "severity": rule.severity,
                "baseline": row["baseline"],
                "candidate": row["candidate"],
                "delta": row["delta"],
                "drop": drop,
                "max_drop": rule.max_drop,
                "ci_low": row["ci_low"],
                "ci_high": row["ci_high"],
                "p_holm": row["p_holm"],
                "n": row["n"],
                "reason": (
                    f"dropped {drop:.4f} > tolerance {rule.max_drop:.4f}"
                    + ("" if significant or not policy.require_significance else " (not significant)")
                    if over
                    else f"within tolerance {rule.max_drop:.4f}"
                ),
            }
        )
    must = []
    pq = cmp.per_question.filter(pl.col("must_pass"))
    for r in pq.sort("qid").iter_rows(named=True):
        reasons = []
        for m in policy.must_pass_metrics:
            if f"{m}_delta" not in r or r[f"{m}_delta"] is None:
                continue
            if metric_info(m).regressed(r[f"{m}_delta"]):
                reasons.append(f"{m} {r[f'{m}_base']:.3f} → {r[f'{m}_cand']:.3f}")
        if r["left_top_k"]:
            left = r["left_top_k"]
            reasons.append(
                f"{agree(len(left), 'a labeled chunk', 'labeled chunks')} left the top {cmp.k}: {', '.join(left)}"
            )
        if not r["answerable"] and r.get("abstention_base") == 1 and r.get("abstention_cand") == 0:
            reasons.insert(0, "unanswerable question stopped abstaining")
        must.append(
            {
                "qid": r["qid"],
                "status": "fail" if reasons else "pass",
                "reasons": reasons,
                "diagnosis": r["diagnosis"],
            }
        )
    passed = all(c["status"] not in ("fail", "incomparable") for c in checks) and all(
        m["status"] == "pass" for m in must
    )
    return GateResult(passed=passed, checks=checks, must_pass=must, comparison=cmp)


def _fmt(v: Any, digits: int = 4) -> str:
    return "–" if v is None else f"{v:.{digits}f}" if isinstance(v, float) else str(v)


def _passed_anyway(check: dict[str, Any]) -> str:
    """For a check that passed although its metric dropped beyond the tolerance (the drop was not
    significant), why: a reader would otherwise see a pass beside a delta larger than the tolerance."""
    drop = check.get("drop")
    if check["status"] == "pass" and drop is not None and drop > check["max_drop"] + EPS:
        return f" — {check['reason']}"
    return ""


def markdown_report(res: GateResult) -> str:
    """A summary fit for ``$GITHUB_STEP_SUMMARY``."""
    cmp = res.comparison
    assert cmp is not None
    icon = {"pass": "✅", "fail": "❌", "warn": "⚠️", "skipped": "➖", "incomparable": "⛔"}
    lines = [
        f"## RAG eval gate: {'✅ passed' if res.passed else '❌ failed'}",
        "",
        f"Baseline **{cmp.baseline.label}** (`{cmp.baseline.run_id}`) → candidate **{cmp.candidate.label}** "
        f"(`{cmp.candidate.run_id}`), test set `{cmp.baseline.testset.version}`"
        + (f" → `{cmp.candidate.testset.version}`" if cmp.left_out else "")
        + f", on the {cmp.note}.",
        "",
        *([f"**Judge changed:** {cmp.judge_change}", ""] if cmp.judge_change else []),
        "| metric | baseline | candidate | Δ (95% CI) | p (Holm) | tolerance | result |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for c in res.checks:
        ci = f" ({_fmt(c.get('ci_low'))} … {_fmt(c.get('ci_high'))})" if c.get("ci_low") is not None else ""
        lines.append(
            f"| {c['metric']} | {_fmt(c.get('baseline'))} | {_fmt(c.get('candidate'))} | "
            f"{_fmt(c.get('delta'))}{ci} | {_fmt(c.get('p_holm'), 3)} | −{c['max_drop']:.3f} ({c['severity']}) | "
            f"{icon[c['status']]} {c['status']}{_passed_anyway(c)} |"
        )
    failed_must = [m for m in res.must_pass if m["status"] == "fail"]
    lines += [
        "",
        f"**Must-pass questions:** {len(res.must_pass) - len(failed_must)} of {len(res.must_pass)} held.",
    ]
    if failed_must:
        lines += ["", "| question | diagnosis | what regressed |", "|---|---|---|"]
        lines += [
            f"| `{m['qid']}` | {m['diagnosis'] or '–'} | {'; '.join(m['reasons'])} |" for m in failed_must
        ]
    # The same table as `evalcore report --format markdown` (one renderer); every question counts
    # here, held-out ones too: the gate's reader is the CI log, not a tuning session.
    lines += regressed_markdown(
        cmp.per_question.filter(pl.col("status").is_in(["regressed", "mixed"])).head(10)
    )
    return "\n".join(lines) + "\n"


def junit_report(res: GateResult) -> str:
    """JUnit XML: a testcase per gated metric and per must-pass question. A failed check is a
    ``failure``; a warning or a skipped metric ``skipped``; a metric that could not be judged (the
    runs' judges differ) an ``error`` — never a passing testcase."""
    cases = []
    for c in res.checks:
        body = ""
        if c["status"] == "fail":
            body = f"<failure message={quoteattr(c['reason'])}/>"
        elif c["status"] in ("skipped", "warn"):
            body = f"<skipped message={quoteattr(c['status'] + ': ' + c['reason'])}/>"
        elif c["status"] == "incomparable":
            body = f"<error message={quoteattr(c['reason'])}/>"
        cases.append(
            f'  <testcase classname="ragtriage.metrics" name={quoteattr(c["metric"])}>{body}</testcase>'
        )
    for m in res.must_pass:
        body = f"<failure message={quoteattr('; '.join(m['reasons']))}/>" if m["status"] == "fail" else ""
        cases.append(
            f'  <testcase classname="ragtriage.must_pass" name={quoteattr(m["qid"])}>{body}</testcase>'
        )
    failures = sum(c["status"] == "fail" for c in res.checks) + sum(
        m["status"] == "fail" for m in res.must_pass
    )
    skipped = sum(c["status"] in ("skipped", "warn") for c in res.checks)
    errors = sum(c["status"] == "incomparable" for c in res.checks)
    head = (
        f'<testsuite name="ragtriage gate" tests="{len(cases)}" failures="{failures}" '
        f'skipped="{skipped}" errors="{errors}">'
    )
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + head + "\n" + "\n".join(cases) + "\n</testsuite>\n"


def write_per_question(res: GateResult, path: str | Path) -> None:
    """Per-question deltas as CSV or JSON (by the file's suffix) so reviewers can open the regressions."""
    assert res.comparison is not None
    df = res.comparison.per_question
    path = Path(path)
    if path.suffix.lower() == ".json":
        path.write_text(json.dumps(df.to_dicts(), indent=1, default=str) + "\n", encoding="utf-8")
    else:
        df.with_columns(
            pl.col("left_top_k").list.join(" "), pl.col("entered_top_k").list.join(" ")
        ).write_csv(path)


__all__ = [
    "GatePolicy",
    "GateResult",
    "MetricRule",
    "junit_report",
    "markdown_report",
    "run_gate",
    "write_per_question",
]
