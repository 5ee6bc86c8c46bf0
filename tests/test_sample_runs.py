"""The embedded sample runs: deterministic, committed as generated, and covering what the tool shows."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl

from evalcore import read_testset
from helpers import ROOT, SAMPLE


def test_generator_reproduces_the_committed_files_byte_for_byte(tmp_path: Path) -> None:
    out = tmp_path / "regen"
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "make_sample_runs.py"), "--out", str(out)],
        check=True,
        capture_output=True,
    )
    committed = sorted(p.relative_to(SAMPLE) for p in SAMPLE.rglob("*") if p.is_file())
    assert sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file()) == committed
    for rel in committed:
        assert (out / rel).read_bytes() == (SAMPLE / rel).read_bytes(), rel


def test_test_set_covers_every_question_type_source_split_and_must_pass() -> None:
    ts = read_testset(SAMPLE / "testset.jsonl")
    cases = ts.cases
    assert 130 <= cases.height <= 170
    assert {"lookup", "comparison", "multi-hop", "identifier"} <= set(cases["type"])
    assert set(cases["source"]) == {"real", "synthetic"}
    unanswerable = (~cases["answerable"]).mean()
    assert 0.10 <= unanswerable <= 0.20  # type: ignore[operator]
    assert cases.filter(pl.col("split") == "heldout").height >= 15
    assert cases.filter(pl.col("must_pass") & ~pl.col("answerable")).height >= 2
    assert ts.evidence.height >= cases.filter(pl.col("answerable")).height
    assert cases["topic"].n_unique() >= 5
