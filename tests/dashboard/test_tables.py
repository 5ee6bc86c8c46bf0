"""The shapes pages draw: what a reader sees in the Breakdown heatmap's cells and colours."""

from __future__ import annotations

import polars as pl
import pytest

from dashboard import tables
from evalcore import load_runs, score_run, summarize
from evalcore.score import ceilings
from helpers import SAMPLE


def _grid(metrics: list[str]) -> tables.Grid:
    run = list(load_runs(SAMPLE).runs.values())[-1]
    table = summarize(score_run(run), run.testset, by="type", metrics=metrics)
    return tables.mean_grid(table, metrics, ceilings(run.testset, metrics, "type"))


def _cell(grid: tables.Grid, slice_: str, metric: str, what: str = "z") -> object:
    rows = {"z": grid.z, "text": grid.text, "neutral": grid.neutral}[what]
    assert rows is not None
    return rows[grid.slices.index(slice_)][grid.metrics.index(metric)]


def test_heatmap_colour_follows_direction_and_the_best_possible_mean() -> None:
    grid = _grid(["R@5", "P@5", "judged@10", "false_refusal", "no_answer", "abstention"])
    # false_refusal 0.000 is the best a system can do: darkest, not palest.
    assert _cell(grid, "lookup", "false_refusal") == 1.0
    # P@5 cannot reach 1 where questions have fewer than five labeled chunks: coloured against its
    # ceiling, and the ceiling is written in the cell.
    assert _cell(grid, "identifier", "P@5") == pytest.approx(1.0)
    assert "max 0.20" in str(_cell(grid, "identifier", "P@5", "text"))
    # judged@10 with one or two labeled chunks per question: 0.1 is the best possible, so it is dark.
    assert _cell(grid, "identifier", "judged@10") == pytest.approx(1.0)
    assert "max 0.10" in str(_cell(grid, "identifier", "judged@10", "text"))
    # no_answer has no better direction: grey, off the colour scale.
    assert _cell(grid, "lookup", "no_answer") is None and _cell(grid, "lookup", "no_answer", "neutral") == 0.5
    # A metric that applies to no question of a slice is blank, not "–" and not 0.
    assert _cell(grid, "unanswerable", "R@5") is None and _cell(grid, "unanswerable", "R@5", "text") in (
        None,
        "",
    )
    assert _cell(grid, "lookup", "abstention", "text") in (None, "")


def test_compare_questions_never_shows_none() -> None:
    from evalcore import compare

    runs = load_runs(SAMPLE).runs
    ids = list(runs)
    cmp = compare(runs[ids[-2]], runs[ids[-1]], permutations=200)
    numbers = tables.compare_questions(cmp, cmp.per_question)
    assert numbers["R@5_delta"].dtype == pl.Float64, "the CSV download holds numbers"
    view = tables.compare_page(numbers)
    deltas = [c for c in view.columns if c.endswith("_delta") and c != "worst_delta"]
    assert view.select(pl.any_horizontal(pl.col(deltas).is_null())).to_series().sum() == 0
    assert "–" in view["abstention_delta"].to_list(), "an answerable question has no abstention delta"
    assert view["diagnosis"].null_count() == 0


def test_the_tag_filter_offers_each_tag_value_once_without_the_built_in_flags() -> None:
    tags = pl.DataFrame(
        {
            "qid": ["a", "a", "b", "b", "c"],
            "tag": ["topic", "split", "topic", "lang", "topic"],
            "value": ["x", "dev", "y", "de", "x"],
        }
    )
    assert tables.tag_choices(tags) == ["lang:de", "topic:x", "topic:y"]


def test_a_re_judge_estimate_is_kept_under_a_key_no_other_list_of_questions_shares() -> None:
    from dashboard.data import qids_digest

    assert qids_digest(["a\nb"]) != qids_digest(["a", "b"]) != qids_digest(["b", "a"])
    assert qids_digest(["a", "b"]) == qids_digest(["a", "b"])
