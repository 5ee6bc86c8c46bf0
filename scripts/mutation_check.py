"""Mutation spot check: put one realistic bug at a time into the code and run the tests that guard it.
A mutant the tests do not kill is a hole in the suite (or an equivalent mutant, to be named as such).

    python scripts/mutation_check.py            # every mutant below
    python scripts/mutation_check.py holm rank  # the ones whose names contain these words

The list is the issue 8 spot check (realistic bugs, not random operator swaps) and grows with each bug
found. For a broad random run over the metrics, statistics and gate modules, see docs/testing.md
(mutmut). The source is restored after every mutant, also on Ctrl-C.
"""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]


MUTANTS = [
    Mutant(
        "run text rendered raw (markdown not escaped)",
        "dashboard/render.py",
        'return _MD_SPECIAL.sub(r"\\\\\\1", text).replace("\\n", "  \\n")',
        "return text",
        ("tests/dashboard/test_pages.py::test_markdown_in_run_text_is_shown_literally_on_every_drill_down",),
    ),
    Mutant(
        "holm per metric alone (raw p reported as corrected)",
        "evalcore/comparison.py",
        'adj = holm(out.filter(tested)["p"].to_numpy())',
        'adj = out.filter(tested)["p"].to_numpy()',
        ("tests/verbs/test_gate_rules.py",),
    ),
    Mutant(
        "held-out questions offered by default on the Question page",
        "evalcore/question.py",
        "    if include_heldout:\n        return cases",
        "    if True:\n        return cases",
        ("tests/dashboard/test_pages.py::test_question_picker_hides_heldout_questions_until_asked",),
    ),
    Mutant(
        "rank() breaks ties by chunk id ascending",
        "evalcore/metrics/retrieval.py",
        '.sort(["qid", "score", "chunk_id"], descending=[False, True, True])',
        '.sort(["qid", "score", "chunk_id"], descending=[False, True, False])',
        ("tests/metrics/test_refusal_and_rank.py",),
    ),
    Mutant(
        "a refusal anywhere in the answer counts as abstaining",
        "evalcore/metrics/refusal.py",
        'r"^\\s*(i\\s+',
        'r"(i\\s+',
        ("tests/metrics/test_refusal_and_rank.py",),
    ),
    Mutant(
        "a SUPPORTED claim with no quote counts as supported",
        "evalcore/metrics/generation.py",
        'supported=((pl.col("verdict") == "SUPPORTED") & pl.col("quote_found")).sum(),',
        'supported=((pl.col("verdict") == "SUPPORTED") & (pl.col("quote_found") | pl.col("quote").is_null())).sum(),',
        ("tests/metrics/test_generation.py",),
    ),
    Mutant(
        "bootstrap over many distinct values draws from half the items",
        "evalcore/stats/resampling.py",
        "idx = rng.integers(0, n, size=(b, n))",
        "idx = rng.integers(0, n // 2, size=(b, n))",
        ("tests/stats/test_resampling.py",),
    ),
    Mutant(
        "the gate ignores a metric's severity",
        "evalcore/gate.py",
        'status = "pass" if not failed else ("fail" if rule.severity == "fail" else "warn")',
        'status = "pass" if not failed else "fail"',
        ("tests/verbs/test_gate_rules.py",),
    ),
    Mutant(
        "lower-is-better metrics compared with the raw sign",
        "evalcore/metrics/catalogue.py",
        "        return delta if self.higher_is_better else -delta\n\n    def better_expr",
        "        return delta\n\n    def better_expr",
        ("tests/verbs/test_gate_rules.py",),
    ),
    Mutant(
        "the gate ignores require_significance",
        "evalcore/gate.py",
        "failed = over and (significant or not policy.require_significance)",
        "failed = over",
        ("tests/verbs/test_gate_rules.py",),
    ),
    Mutant(
        "exponential-gain nDCG without the -1",
        "evalcore/metrics/_kernel.py",
        "dcg += (grade[r] if k == NDCG else 2.0 ** grade[r] - 1.0)",
        "dcg += (grade[r] if k == NDCG else 2.0 ** grade[r])",
        ("tests/metrics/test_retrieval_oracle.py",),
    ),
    Mutant(
        "a quote found across the border of two chunks",
        "evalcore/metrics/quotes.py",
        'pairs = q.join(chunks.select("qid", "chunk_id", "rank", "norm"), on="qid", how="inner")',
        'pairs = q.join(chunks.group_by("qid").agg(pl.col("chunk_id").first(), pl.col("rank").min(), '
        'pl.col("norm").str.join(" ")), on="qid", how="inner")',
        ("tests/metrics/test_quotes.py",),
    ),
    Mutant(
        "bpref counts unlabeled chunks as non-relevant",
        "evalcore/metrics/_kernel.py",
        "        if not judged[r]:\n            continue\n        if grade[r] < 0:",
        "        if not judged[r]:\n            nonrel_so_far += 1\n            continue\n        if grade[r] < 0:",
        ("tests/trec/test_all_trec_oracle.py",),
    ),
]


def run(m: Mutant) -> tuple[bool, float]:
    path = ROOT / m.path
    source = path.read_text(encoding="utf-8")
    if source.count(m.old) != 1:
        msg = f"{m.name}: the text to mutate is not in {m.path} exactly once (the code moved: update the mutant)"
        raise SystemExit(msg)
    path.write_text(source.replace(m.old, m.new), encoding="utf-8")
    t = time.perf_counter()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *m.tests],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
    finally:
        path.write_text(source, encoding="utf-8")
    return proc.returncode != 0, time.perf_counter() - t


def main(argv: list[str]) -> int:
    chosen = [m for m in MUTANTS if not argv or any(a.lower() in m.name.lower() for a in argv)]
    survived = []
    print("| mutant | killed | seconds |\n|---|---|---:|")
    for m in chosen:
        killed, secs = run(m)
        print(f"| {m.name} | {'yes' if killed else 'NO — survived'} | {secs:.0f} |", flush=True)
        if not killed:
            survived.append(m.name)
    print(f"\n{len(chosen) - len(survived)} of {len(chosen)} mutants killed")
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
