"""Per-question scores are cached on disk; the cache never serves scores of a changed run."""

from __future__ import annotations

import json
from pathlib import Path

from evalcore import load_runs, score_run

RUN = "2026-11-02-hybrid-rerank"


def test_cached_scores_equal_fresh_ones(runs_copy: Path) -> None:
    run = load_runs(runs_copy).runs[RUN]
    first = score_run(run)
    assert score_run(run).equals(first)
    assert score_run(run, cache=False).equals(first)


def test_editing_a_run_file_invalidates_its_cached_scores(runs_copy: Path) -> None:
    run = load_runs(runs_copy).runs[RUN]
    before = score_run(run).filter(score_run(run)["qid"] == "hv-017")["abstention"].item()
    path = runs_copy / RUN / "results.jsonl"
    recs = [json.loads(x) for x in path.read_text().splitlines()]
    for rec in recs:
        if rec["qid"] == "hv-017":
            rec["abstained"] = not bool(before)
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    after_run = load_runs(runs_copy).runs[RUN]
    after = score_run(after_run).filter(score_run(after_run)["qid"] == "hv-017")["abstention"].item()
    assert after == 1.0 - before
