"""Every metric a page or report shows has everyday words beside its formula (issue 30: a product
manager read "SUPPORTED claims whose quote is in the context / claims" and learnt nothing)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalcore.metrics import metric_info
from evalcore.metrics.catalogue import DEFAULT_MEASURES, GENERATION_METRICS, RELEVANCE_RAGAS


@pytest.mark.parametrize(
    "name", [*DEFAULT_MEASURES, *GENERATION_METRICS, RELEVANCE_RAGAS.name, "ext:ragas_x"]
)
def test_each_metric_has_plain_words_that_are_not_its_formula(name: str) -> None:
    info = metric_info(name)
    assert info.plain and info.plain != info.description
    assert not any(sym in info.plain for sym in ("|", "/ k", "sum_", "log2")), info.plain


def test_the_words_name_the_cutoff_and_a_relevance_threshold() -> None:
    assert metric_info("R@5").plain == "share of the chunks labeled relevant that are in the top 5 retrieved"
    assert "top 10" in metric_info("nDCG@10").plain and "top 20" in metric_info("P@20").plain
    assert metric_info("P(rel=2)@5").plain.endswith("relevant means graded 2 or higher")
    assert "within the top 10" in metric_info("RR@10").plain and "within" not in metric_info("RR").plain


def test_the_report_reads_without_the_docs() -> None:
    """What a product manager could not read in the first report (issue 30's helper): the title
    ran candidate-first, a diagnosis was a bare word, grades and held-out were undefined, and the
    glossary was folded away."""
    from pathlib import Path

    from evalcore import compare, load_runs
    from evalcore.report import html as report_html

    runs = load_runs(Path(__file__).resolve().parents[2] / "sample_runs").runs
    ids = sorted(runs)
    base, cand = runs[ids[-2]], runs[ids[-1]]
    html = report_html(compare(base, cand))
    assert f"<h1>{base.label} <span class=vs>→</span> {cand.label}</h1>" in html
    assert "· the answer got worse with the same chunks</h3>" in html and "· generation</h3>" not in html
    assert "<details class=gloss open>" in html
    gloss = html[html.index("What these words and metrics mean") :]
    assert (
        "<dt>held-out</dt>" in gloss
        and "<dt>grade</dt>" in gloss
        and "<dt>SUPPORTED, not counted</dt>" in gloss
    )
    assert "No topic (" in html or "<h3>By topic</h3>\n<table>" in html, (
        "an empty slice section names its slices"
    )
    words = metric_info("faithfulness")
    assert f"<dt>faithfulness</dt><dd>{words.plain}<br><small>definition: " in gloss


def test_the_report_command_gives_a_small_file_s_size_in_kilobytes(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    """A markdown report said "(markdown, 0.0 MB)" to a new user."""
    from evalcore.cli import main

    root = Path(__file__).resolve().parents[2] / "sample_runs"
    out = tmp_path / "r.md"
    args = [str(root / "2026-11-02-hybrid-rerank"), str(root / "2026-11-16-rerank-prompt-v2")]
    assert main(["report", *args, "--format", "markdown", "--out", str(out)]) == 0
    assert f"(markdown, {out.stat().st_size / 1e3:.1f} kB)" in capsys.readouterr().out
