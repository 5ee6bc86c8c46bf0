"""Every dashboard page under AppTest on the sample runs: it renders, shows evalcore's numbers, and
responds to filters, row selection and links."""

from __future__ import annotations

import json
import os
from pathlib import Path

import polars as pl
import pytest
from streamlit.testing.v1 import AppTest

from dashboard.frame import PREFETCHED
from evalcore import compare, load_runs, score_run, summarize
from helpers import ROOT, SAMPLE

BASE, CAND = "2026-11-02-hybrid-rerank", "2026-11-16-rerank-prompt-v2"


@pytest.fixture(scope="module")
def runs():  # type: ignore[no-untyped-def]
    return load_runs(SAMPLE).runs


def open_page(
    monkeypatch: pytest.MonkeyPatch, page: str | None = None, folder: Path = SAMPLE, **params: str | list[str]
) -> AppTest:
    monkeypatch.setenv("RAGTRIAGE_RUNS", str(folder))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    if page:
        at.switch_page(page)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, at.exception
    return at


def trend_spec(at: AppTest) -> dict:  # type: ignore[type-arg]
    """The plotly spec of Overview's trend across runs (below the forest plot of what changed)."""
    return json.loads(next(c for c in at.get("plotly_chart") if "trend_chart" in c.proto.id).proto.spec)


def texts(at: AppTest) -> str:
    """What a reader sees: the markdown of every text element with escapes removed."""
    import re

    return re.sub(
        r"\\(.)",
        r"\1",
        "\n".join(
            [m.value for m in at.markdown]
            + [s.value for s in at.subheader]
            + [e.value for e in at.error]
            + [w.value for w in at.warning]
            + [c.value for c in at.caption]
            + [i.value for i in at.info]
        ),
    )


# ------------------------------------------------------------------ overview


def runs_table(at: AppTest):  # type: ignore[no-untyped-def]
    """Overview's table of runs (the one with a run_id column)."""
    return next(d.value for d in at.dataframe if "run_id" in d.value.columns)


def test_overview_says_what_each_metric_measures_and_the_system_in_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A product manager reads the headline table without the docs: each metric in everyday words,
    a note instead of a bare "small" tick box, and the run's system as settings, not raw JSON."""
    at = open_page(monkeypatch)
    shown = at.dataframe[0].value.set_index("metric")
    assert shown.loc["R@5", "plain"] == "share of the chunks labeled relevant that are in the top 5 retrieved"
    assert (
        shown.loc["faithfulness", "plain"]
        == "how much of the answer is backed by the chunks the model was given"
    )
    assert "small" not in shown.columns and "source" not in shown.columns, "no column of one value"
    colours = [t["line"]["color"] for t in trend_spec(at)["data"]]
    assert len(colours) >= 4 and len(set(colours)) == len(colours), "each metric of the trend its own colour"
    runs_shown = runs_table(at)
    assert runs_shown["created"].iloc[0] == "2026-10-05 09:30", "a time as a person reads it"
    system = at.dataframe[1].value.set_index("setting")
    assert system.loc["retriever", "value"] == "rerank" and "embedding model" in system.index
    assert not at.json, "no raw JSON on the Overview"


def test_overview_lists_runs_and_headline_metrics_equal_evalcore(
    monkeypatch: pytest.MonkeyPatch, runs
) -> None:  # type: ignore[no-untyped-def]
    at = open_page(monkeypatch)
    assert list(runs_table(at)["run_id"]) == list(runs)
    shown = at.dataframe[0].value.set_index("metric")
    run = runs[CAND]
    for row in summarize(score_run(run), run.testset).iter_rows(named=True):
        if row["n"] == 0:  # applies to no question: named with what it needs, never a row of None
            assert row["metric"] not in shown.index and row["metric"] in texts(at)
            continue
        assert shown.loc[row["metric"], "mean"] == pytest.approx(row["mean"])
        assert shown.loc[row["metric"], "ci_low"] == pytest.approx(row["ci_low"])
    assert at.get("plotly_chart"), "trend chart across runs"


def test_overview_run_from_link_and_unknown_run_message(monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_page(monkeypatch, run="2026-10-05-bm25")
    assert at.selectbox(key="home_run").value == "2026-10-05-bm25"
    at = open_page(monkeypatch, run="no-such-run")
    assert "'run=no-such-run' in the link does not exist" in texts(at)


def test_overview_says_when_answerable_questions_have_no_labels(
    monkeypatch: pytest.MonkeyPatch, runs_copy: Path
) -> None:
    path = runs_copy / "testset.jsonl"
    cases = [json.loads(x) for x in path.read_text().splitlines()]
    for c in cases[:3]:
        c["relevant"], c["answerable"] = {}, True
    path.write_text("".join(json.dumps(c) + "\n" for c in cases))
    at = open_page(monkeypatch, folder=runs_copy)
    assert "3 answerable questions have no labeled chunk yet" in texts(at)
    shown = at.dataframe[0].value.set_index("metric")
    assert shown.loc["R@5", "n"] == 124 - 3 and shown.loc["correctness", "n"] == 124


def test_a_broken_run_is_listed_and_the_others_still_render(
    monkeypatch: pytest.MonkeyPatch, runs_copy: Path
) -> None:
    (runs_copy / "2026-10-05-bm25" / "results.jsonl").write_text('{"qid": "hv-001", "retrieved": [}\n')
    at = open_page(monkeypatch, folder=runs_copy)
    assert "results.jsonl:1: error: malformed JSON" in texts(at)
    assert len(runs_table(at)) == 3, "the runs table lists the three that loaded"
    at = open_page(monkeypatch, "pages/2_Compare.py", folder=runs_copy)
    assert at.dataframe[0].value.shape[0] > 0, "Compare still works on the runs that loaded"


def test_a_page_opened_first_reads_only_its_runs_and_steps_past_a_broken_latest_one(
    monkeypatch: pytest.MonkeyPatch, runs_copy: Path
) -> None:
    from dashboard import data

    latest = CAND  # the newest run: every page's default
    (runs_copy / latest / "results.jsonl").write_text('{"qid": "hv-001", "retrieved": [}\n')
    at = open_page(monkeypatch, "pages/1_Breakdown.py", folder=runs_copy)
    assert at.selectbox(key="bd_run").value == BASE, "the run before the broken one is shown"
    assert not any(latest in o for o in at.selectbox(key="bd_run").options)
    assert any("1 problem keeps some runs from loading" in e.value for e in at.sidebar.error)
    folder, _ = data.load(runs_copy)
    assert list(folder.loaded()) == [BASE], "a page of one run reads that run's file (and the broken one's)"
    at = open_page(monkeypatch, "pages/2_Compare.py", folder=runs_copy, base="2026-10-19-hybrid", cand=BASE)
    assert at.dataframe[0].value.shape[0] > 0
    assert list(folder.loaded()) == ["2026-10-19-hybrid", BASE]
    at = open_page(monkeypatch, folder=runs_copy)
    assert "results.jsonl:1: error: malformed JSON" in texts(at), "Overview lists it with file and line"
    spec = trend_spec(at)
    charted = {x for trace in spec["data"] for x in trace["x"]}
    assert len(charted) == 3 and latest not in charted, "the trend has every run that loads"
    # The trend's pass read the third run without keeping it: a folder of hundreds is not held.
    assert len(folder.loaded()) == 2


def test_overview_after_another_page_still_reads_and_lists_every_run(
    monkeypatch: pytest.MonkeyPatch, runs_copy: Path
) -> None:
    oldest = "2026-10-05-bm25"  # no page but Overview reads it
    (runs_copy / oldest / "results.jsonl").write_text('{"qid": "hv-001", "retrieved": [}\n')
    open_page(monkeypatch, "pages/1_Breakdown.py", folder=runs_copy)
    at = open_page(monkeypatch, folder=runs_copy)
    assert "results.jsonl:1: error: malformed JSON" in texts(at)
    assert len(runs_table(at)) == 3, "the runs table lists the three that loaded"
    spec = trend_spec(at)
    assert oldest not in {x for trace in spec["data"] for x in trace["x"]}


def test_a_run_broken_off_the_questions_line_leaves_the_question_page_when_it_is_shown(
    monkeypatch: pytest.MonkeyPatch, runs_copy: Path
) -> None:
    path = runs_copy / CAND / "results.jsonl"
    lines = path.read_text().splitlines()
    lines[39] = lines[39][:60]  # line 40 cut off; hv-026 is on another line
    path.write_text("\n".join(lines) + "\n")
    at = open_page(monkeypatch, "pages/3_Question.py", folder=runs_copy, qid="hv-026")
    history = at.dataframe[0].value
    assert CAND not in list(history["run_id"]) and len(history) == 3, "the run shown is read whole, and left"
    assert any("1 problem keeps some runs from loading" in e.value for e in at.sidebar.error)
    assert "Retrieved chunks" in texts(at), "the page shows the newest run that loads"


def test_compare_opened_on_a_folder_whose_latest_run_is_broken_compares_the_two_before_it(
    monkeypatch: pytest.MonkeyPatch, runs_copy: Path
) -> None:
    (runs_copy / CAND / "results.jsonl").write_text('{"qid": "hv-001", "retrieved": [}\n')
    at = open_page(monkeypatch, "pages/2_Compare.py", folder=runs_copy)
    assert (at.selectbox(key="cmp_base").value, at.selectbox(key="cmp_cand").value) == (
        "2026-10-19-hybrid",
        BASE,
    )
    assert at.dataframe[0].value.shape[0] > 0
    at = open_page(monkeypatch, "pages/2_Compare.py", folder=runs_copy, base="2026-10-19-hybrid", cand=CAND)
    assert f"'cand={CAND}' in the link is a run whose results have errors (listed on Overview)" in texts(at)


def test_the_test_set_shown_stays_when_its_first_versions_only_run_turns_out_broken(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import shutil

    from helpers import mixed_runs_folder, two_testset_versions

    folder = mixed_runs_folder(tmp_path / "runs")
    shutil.copytree(SAMPLE, folder / "sample", ignore=shutil.ignore_patterns("logs", "corpus"))
    oldest = "2026-10-05-bm25"
    two_testset_versions(folder / "sample", oldest)  # the oldest run alone answered a second version
    (folder / "sample" / oldest / "results.jsonl").write_text('{"qid": "hv-001", "retrieved": [}\n')
    from evalcore.runs.groups import group_runs
    from evalcore.runs.load import RunFolder

    groups = group_runs(RunFolder(folder).entries.values(), folder)
    sample = next(g for g in groups if CAND in g.run_ids)
    assert oldest in sample.run_ids and groups[-1] != sample, "(the case: not the newest group)"
    at = open_page(monkeypatch, "pages/5_Test_set.py", folder=folder, testset=sample.key)
    chosen = at.sidebar.selectbox[0].value
    assert chosen != sample.key and chosen in at.query_params["testset"], "its key moved with the broken run"
    assert at.sidebar.selectbox[0].format_func(chosen).startswith("sample/testset.jsonl"), "the same test set"
    assert "not a test set of this runs folder" not in texts(at)


def test_run_labels_reach_the_trend_chart_escaped_for_plotly(
    monkeypatch: pytest.MonkeyPatch, runs_copy: Path
) -> None:
    # plotly turns <a href> in hover text into a link; a run label is the user's file content.
    label = '<a href="https://evil.invalid/">Evil</a> & co'
    manifest = json.loads((runs_copy / BASE / "run.json").read_text())
    manifest["label"] = label
    (runs_copy / BASE / "run.json").write_text(json.dumps(manifest))
    at = open_page(monkeypatch, folder=runs_copy)
    spec = trend_spec(at)
    texts_shown = {t for trace in spec["data"] for t in trace.get("text", [])}
    assert '&lt;a href="https://evil.invalid/"&gt;Evil&lt;/a&gt; &amp; co' in texts_shown
    assert not any("<a" in t for t in texts_shown)


# ------------------------------------------------------------------ breakdown


def test_breakdown_one_run_equals_evalcore_by_slice(monkeypatch: pytest.MonkeyPatch, runs) -> None:  # type: ignore[no-untyped-def]
    at = open_page(monkeypatch, "pages/1_Breakdown.py", run="2026-10-05-bm25", by="source")
    shown = pl.from_pandas(at.dataframe[0].value)
    run = runs["2026-10-05-bm25"]
    expected = summarize(score_run(run), run.testset, by="source")
    got = {(r["slice"], r["metric"]): r["mean"] for r in shown.iter_rows(named=True)}
    for r in expected.iter_rows(named=True):
        if r["n"] == 0:  # e.g. abstention on real questions: no unanswerable ones there
            assert (r["slice"], r["metric"]) not in got, "a metric that does not apply is no row of blanks"
        else:
            assert got[(r["slice"], r["metric"])] == pytest.approx(r["mean"])
    assert set(shown["slice"]) == {"real", "synthetic"}


def test_breakdown_draws_one_chart_whose_cells_carry_mean_ci_and_n(
    monkeypatch: pytest.MonkeyPatch, runs
) -> None:  # type: ignore[no-untyped-def]
    import json

    run = runs["2026-10-05-bm25"]
    expected = summarize(score_run(run), run.testset, by="source").filter(pl.col("metric") == "R@5")
    at = open_page(monkeypatch, "pages/1_Breakdown.py", run="2026-10-05-bm25", by="source")
    charts = at.get("plotly_chart")
    assert len(charts) == 1, "one chart at a time"
    heat = json.loads(charts[0].proto.spec)["data"][0]
    assert heat["type"] == "heatmap"
    cells = dict(zip(heat["y"], [row[heat["x"].index("R@5")] for row in heat["text"]], strict=True))
    for r in expected.iter_rows(named=True):
        assert cells[r["slice"]] == f"{r['mean']:.3f}<br>{r['ci_low']:.2f}–{r['ci_high']:.2f}<br>n={r['n']}"

    # The bar chart with CIs instead, from a link (and the link survives the switch).
    at = open_page(
        monkeypatch, "pages/1_Breakdown.py", run="2026-10-05-bm25", by="source", chart="bars", bar="R@5"
    )
    charts = at.get("plotly_chart")
    assert len(charts) == 1
    bar = json.loads(charts[0].proto.spec)["data"][0]
    assert bar["type"] == "bar"
    got = dict(zip(bar["x"], bar["y"], strict=True))
    for r in expected.iter_rows(named=True):
        assert got[r["slice"]] == pytest.approx(r["mean"])
    assert at.query_params["chart"] in ("bars", ["bars"]) and at.query_params["bar"] in ("R@5", ["R@5"])
    at.segmented_control(key="bd_chart").set_value("heatmap").run()
    assert json.loads(at.get("plotly_chart")[0].proto.spec)["data"][0]["type"] == "heatmap"
    assert "chart" not in at.query_params
    at.segmented_control(key="bd_chart").set_value(None).run()  # a click on the selected segment
    assert at.segmented_control(key="bd_chart").value == "heatmap", "one chart stays selected"


def test_breakdown_two_runs_shows_deltas_with_holm_p(monkeypatch: pytest.MonkeyPatch, runs) -> None:  # type: ignore[no-untyped-def]
    at = open_page(
        monkeypatch, "pages/1_Breakdown.py", run=CAND, vs=BASE, by="type", metric=["faithfulness", "R@5"]
    )
    shown = pl.from_pandas(at.dataframe[0].value)
    assert set(shown["metric"]) == {"faithfulness", "R@5"}
    expected = compare(runs[BASE], runs[CAND]).by_slice("type", metrics=["faithfulness", "R@5"])
    row = shown.filter((pl.col("slice") == "lookup") & (pl.col("metric") == "faithfulness")).row(
        0, named=True
    )
    exp = expected.filter((pl.col("slice") == "lookup") & (pl.col("metric") == "faithfulness")).row(
        0, named=True
    )
    assert row["delta"] == pytest.approx(exp["delta"])
    # The short caption leads; the statistics behind it are one help icon away.
    assert "each slice's change: blue better, red worse, ★ significant" in texts(at)
    assert any("Holm correction across every cell" in c.proto.help for c in at.caption)


# ------------------------------------------------------------------ compare


def test_compare_summary_equals_evalcore_and_filters_change_the_table(
    monkeypatch: pytest.MonkeyPatch, runs
) -> None:  # type: ignore[no-untyped-def]
    at = open_page(monkeypatch, "pages/2_Compare.py", base=BASE, cand=CAND)
    summary = at.dataframe[0].value.set_index("metric")
    cmp = compare(runs[BASE], runs[CAND])
    for r in cmp.summary.iter_rows(named=True):
        if r["n"] == 0:  # applies to no question of the pair: named, not a row
            assert r["metric"] not in summary.index
            continue
        assert summary.loc[r["metric"], "delta"] == pytest.approx(r["delta"])
    table = at.dataframe[1].value
    assert set(table["status"]) <= {"regressed", "mixed"}, "default filter: what got worse"
    assert list(table["worst_delta"]) == sorted(table["worst_delta"]), "worst regression first"
    n_default = len(table)
    at.multiselect(key="cmp_status").set_value(["improved"]).run()
    assert set(at.dataframe[1].value["status"]) == {"improved"}
    at.multiselect(key="cmp_status").set_value(["regressed", "mixed"]).run()
    at.toggle(key="cmp_must").set_value(True).run()
    must = at.dataframe[1].value
    assert 0 < len(must) < n_default and must["must_pass"].all()


def test_compare_hides_heldout_by_default_with_a_switch(monkeypatch: pytest.MonkeyPatch, runs) -> None:  # type: ignore[no-untyped-def]
    at = open_page(
        monkeypatch,
        "pages/2_Compare.py",
        base=BASE,
        cand=CAND,
        status=["regressed", "mixed", "improved", "unchanged"],
    )
    heldout = set(runs[BASE].testset.cases.filter(pl.col("split") == "heldout")["qid"])
    assert not heldout & set(at.dataframe[1].value["qid"])
    assert "held-out questions hidden" in texts(at)
    at.toggle(key="cmp_held").set_value(True).run()
    assert heldout <= set(at.dataframe[1].value["qid"])


def test_selecting_a_row_opens_the_side_by_side_drill_down(monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_page(monkeypatch, "pages/2_Compare.py", base=BASE, cand=CAND)
    first = at.dataframe[1].value["qid"].iloc[0]
    at.session_state["cmp_table"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    body = texts(at)
    assert f"\n{first}: " in texts(at)
    assert (
        "Baseline" in body and "Candidate" in body and "Judge claims" in body and "Retrieved chunks" in body
    )
    assert at.query_params["qid"] in (first, [first]), "the drill-down is in the URL"


def test_compare_drill_down_marks_labels_and_highlights_quotes(monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_page(monkeypatch, "pages/2_Compare.py", base=BASE, cand=CAND, qid="hv-026")
    body = texts(at)
    assert "labeled · grade 2" in body
    assert ":orange-background[" in body, "the SUPPORTED quote is highlighted inside its chunk"
    assert "NOT SUPPORTED" in body


def test_compare_and_overview_lead_with_a_forest_plot_of_the_verdicts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each metric's paired change with its CI, one colour per verdict, worse first, n in the label:
    the same verdicts as the boxes above it and the table below."""
    at = open_page(monkeypatch, "pages/2_Compare.py", base=BASE, cand=CAND)
    spec = json.loads(next(c for c in at.get("plotly_chart") if "forest" in c.proto.id).proto.spec)
    traces = {t["name"]: t for t in spec["data"]}
    worse = traces["worse (significant)"]
    assert [y.split(" (n=")[0] for y in worse["y"]] == ["abstention", "faithfulness"]
    assert (
        worse["marker"]["symbol"] == "circle"
        and traces["no significant change"]["marker"]["symbol"] == "circle-open"
    )
    assert "relevance (n=146)" in traces["better (significant)"]["y"]
    table = at.dataframe[0].value.set_index("metric")
    assert worse["x"][1] == pytest.approx(table.loc["faithfulness", "delta"])
    assert spec["layout"]["yaxis"]["categoryarray"][:2] == worse["y"], "worse first"
    at = open_page(monkeypatch)
    assert any("forest" in c.proto.id for c in at.get("plotly_chart")), "Overview's what changed has it too"


def test_a_long_question_table_is_sent_a_page_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """A million-question comparison cannot go to the browser whole: the table holds one page, says
    how many rows there are, and a linked question opens on its own page, selected."""
    from dashboard import render

    monkeypatch.setattr(render, "PAGE_ROWS", 20)
    at = open_page(monkeypatch, "pages/2_Compare.py", base=BASE, cand=CAND)
    table = at.dataframe[1].value
    total = int(next(c.value for c in at.caption if "worst regression first" in c.value).split()[0])
    assert total > 40 and len(table) == 20
    assert any(f"Rows 1–20 of {total}" in c.value for c in at.caption)
    second = at.number_input(key="cmp_page").set_value(2).run()
    page2 = second.dataframe[1].value
    assert len(page2) == 20 and not set(page2["qid"]) & set(table["qid"])
    last = at.number_input(key="cmp_page").max
    assert last == -(-total // 20)
    # A question linked from elsewhere, far down the table: its page opens, with its row selected.
    far = str(page2["qid"].iloc[5])
    at = open_page(monkeypatch, "pages/2_Compare.py", base=BASE, cand=CAND, qid=far)
    assert at.number_input(key="cmp_page").value == 2
    assert at.session_state["cmp_table"]["selection"]["rows"] == [5]
    assert f"{far}: " in texts(at)


def test_compare_link_with_unknown_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_page(monkeypatch, "pages/2_Compare.py", base="nope", cand=CAND, qid="hv-999")
    body = texts(at)
    assert "'base=nope' in the link does not exist" in body
    assert "is not answered by both runs" in body


# ------------------------------------------------------------------ question


def test_question_page_shows_every_run(monkeypatch: pytest.MonkeyPatch, runs) -> None:  # type: ignore[no-untyped-def]
    at = open_page(monkeypatch, "pages/3_Question.py", qid="hv-026")
    assert at.subheader[0].value == "Which command starts a snapshot immediately?"
    history = at.dataframe[0].value
    assert list(history["run_id"]) == list(runs)
    assert at.get("button_group"), "a run picker"
    assert "Retrieved chunks" in texts(at)
    assert "R@5" in history.columns and "abstention" not in history.columns, (
        "only what applies to an answerable one"
    )
    from dashboard import data

    assert set(data.load(SAMPLE)[0].loaded()) <= {CAND}, (
        "each run's line for the question is read, not its file (the run shown is read whole for its judge's standing)"
    )
    at = open_page(monkeypatch, "pages/3_Question.py", qid="hv-017")  # unanswerable
    history = at.dataframe[0].value
    assert "abstention" in history.columns and "R@5" not in history.columns
    at = open_page(monkeypatch, "pages/3_Question.py", qid="hv-999")
    assert "'qid=hv-999' in the link does not exist" in texts(at)


def test_question_search_narrows_the_list_and_keeps_the_open_question(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    at = open_page(monkeypatch, "pages/3_Question.py", qid="hv-026")
    box = at.selectbox(key="q_qid")
    assert len(box.options) > 100 and box.value == "hv-026"
    at.text_input(key="q_find").input("snapshot").run()
    box = at.selectbox(key="q_qid")
    assert box.value == "hv-026", "the open question stays selected"
    listed = [o.split(" — ")[0] for o in box.options]
    assert 1 < len(listed) < 100
    assert all("snapshot" in o.lower() for o in box.options if not o.startswith("hv-026"))
    at.text_input(key="q_find").input("no such words anywhere").run()
    assert [o.split(" — ")[0] for o in at.selectbox(key="q_qid").options] == ["hv-026"]
    assert "No question matches the search." in texts(at)


def test_untrusted_text_is_escaped_in_markdown(monkeypatch: pytest.MonkeyPatch, runs_copy: Path) -> None:
    manifest = json.loads((runs_copy / BASE / "run.json").read_text())
    manifest["label"] = "**bold** <img src=x onerror=alert(1)>"
    (runs_copy / BASE / "run.json").write_text(json.dumps(manifest))
    at = open_page(monkeypatch, "pages/2_Compare.py", folder=runs_copy, base=BASE, cand=CAND, qid="hv-026")
    rendered = [m.value for m in at.markdown if "onerror" in m.value]
    assert rendered and all("\\<img" in m and "\\*\\*bold" in m for m in rendered)


def test_a_link_cannot_name_a_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """Links carry ids checked against what is loaded; a path is just an unknown id."""
    at = open_page(
        monkeypatch,
        "pages/2_Compare.py",
        base="../../../../etc/passwd",
        cand="/etc/shadow",
        qid="../testset.jsonl",
    )
    body = texts(at)
    assert "'base=../../../../etc/passwd' in the link does not exist" in body
    assert "'cand=/etc/shadow' in the link does not exist" in body
    assert "root:" not in body


def test_markdown_in_run_text_is_shown_literally_on_every_drill_down(
    monkeypatch: pytest.MonkeyPatch, runs_copy: Path
) -> None:
    """An answer, chunk, claim, quote, question or reference answer holding markdown must not become an
    image (a request to its host) or a link whose text hides where it goes."""
    from helpers import hostile_markdown_runs

    payloads = hostile_markdown_runs(runs_copy, run_ids=(BASE, CAND))
    for page, params in (
        ("pages/2_Compare.py", {"base": BASE, "cand": CAND, "qid": "hv-026"}),
        ("pages/3_Question.py", {"qid": "hv-026", "run": CAND}),
    ):
        at = open_page(monkeypatch, page, folder=runs_copy, **params)
        raw = [
            e.value
            for kind in ("markdown", "subheader", "caption", "warning", "error", "info")
            for e in getattr(at, kind)
        ]
        rendered = "\n".join(str(v) for v in raw)
        assert "](https://evil.invalid" not in rendered and "![" not in rendered, (
            "markdown from run text reached the page unescaped"
        )
        shown = texts(at)
        for field in ("question", "reference", "answer", "claim"):
            assert payloads[field] in shown, f"the {field} is shown as the text it is"
        # The chunk's quoted part sits inside the highlight.
        assert (
            "chunk ![px](https://evil.invalid/chunk.png) :orange-background[[innocent chunk](https://evil.invalid/chunk)]"
            in shown
        )
        assert ":orange-background[" in rendered, "the quote is still highlighted, escaped"


def test_question_picker_hides_heldout_questions_until_asked(monkeypatch: pytest.MonkeyPatch, runs) -> None:  # type: ignore[no-untyped-def]
    heldout = set(runs[BASE].testset.cases.filter(pl.col("split") == "heldout")["qid"])
    assert heldout
    at = open_page(monkeypatch, "pages/3_Question.py")
    offered = set(at.selectbox(key="q_qid").options)
    assert offered and not any(o.split(" — ")[0] in heldout for o in offered), (
        "held-out questions are not offered"
    )
    at.toggle(key="q_held").set_value(True).run()
    offered = {o.split(" — ")[0] for o in at.selectbox(key="q_qid").options}
    assert heldout <= offered
    # A link may still open one (it says so on the page).
    at = open_page(monkeypatch, "pages/3_Question.py", qid=sorted(heldout)[0])
    assert "held-out question" in texts(at)


def test_out_of_range_and_unknown_link_values_each_get_their_message_and_leave_the_url(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    at = open_page(monkeypatch, "pages/2_Compare.py", base=BASE, cand=CAND, k="-5", status="bogus")
    body = texts(at)
    assert "'k=-5' in the link is not a whole number from 1 to 100" in body
    assert "'status=bogus' in the link is not one of regressed, mixed, improved, unchanged" in body
    assert "k" not in at.query_params and "status" not in at.query_params, "invalid values leave the URL"
    at = open_page(monkeypatch, "pages/1_Breakdown.py", metric=["R@5", "old_name"])
    assert "'metric=old_name' in the link is not a metric of this run; it was ignored." in texts(at)
    assert at.query_params["metric"] in ("R@5", ["R@5"]), "the unknown metric left the URL"
    at = open_page(monkeypatch, "pages/1_Breakdown.py", metric="old_name")
    assert at.get("plotly_chart"), "a link with only an unknown metric opens on every metric"
    assert "metric" not in at.query_params


# ------------------------------------------------------------------ folders with several test sets


def test_compare_across_two_versions_of_a_test_set_uses_the_unchanged_questions(
    monkeypatch: pytest.MonkeyPatch, runs_copy: Path
) -> None:
    from helpers import two_testset_versions

    folder = two_testset_versions(runs_copy, CAND)
    lr = load_runs(folder)
    from evalcore.runs.groups import group_runs

    (group,) = group_runs(lr.runs.values(), folder)
    assert len(group.versions) == 2 and CAND in group.run_ids, "two versions, one test set"
    at = open_page(monkeypatch, "pages/2_Compare.py", folder=folder, base=BASE, cand=CAND)
    body = texts(at)
    assert "different test set" not in body
    cmp = compare(lr.runs[BASE], lr.runs[CAND])
    assert cmp.left_out == {"question text changed": 1, "labels changed": 2}
    assert "3 questions left out: 1 question text changed, 2 labels changed" in body
    assert at.dataframe[0].value["n"].max() == cmp.summary["n"].max()


def test_each_page_works_within_one_test_set_of_a_mixed_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from helpers import RAGAS_EXPORTS, mixed_runs_folder

    folder = mixed_runs_folder(tmp_path / "runs")
    # An old-style link naming only the run: the page opens on that run's own test set.
    for name, rows in RAGAS_EXPORTS.items():
        at = open_page(monkeypatch, "pages/3_Question.py", folder=folder, qid="ragas-00001", run=name)
        body = texts(at)
        question, reference, _ = rows[0]
        assert question in body and f"Reference answer:** {reference}" in body
        assert f"{name} answer: {reference}" in body
        others = [r[0][0] for n, r in RAGAS_EXPORTS.items() if n != name]
        assert not any(o in body for o in others), "never another test set's question"
        assert at.sidebar.selectbox[0].value in at.query_params["testset"]
    # The picker lists the chosen test set's questions, the other test set is one click away.
    at = open_page(monkeypatch, "pages/3_Question.py", folder=folder)
    picker = at.selectbox(key="q_qid")
    assert len(picker.options) == len(RAGAS_EXPORTS["hr-policies"])
    at.sidebar.selectbox[0].select_index(0).run()
    assert len(at.selectbox(key="q_qid").options) == len(RAGAS_EXPORTS["support-bot"])


def test_an_imported_run_shows_what_it_has(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from helpers import mixed_runs_folder

    folder = mixed_runs_folder(tmp_path / "runs")
    at = open_page(monkeypatch, folder=folder)
    table = at.dataframe[0].value
    metrics = list(table["metric"])
    # No labels and no judge output: the label metrics are left out, with a note why; the imported
    # Ragas scores are first-class, marked as imported, and charted.
    assert "R@5" not in metrics and "faithfulness" not in metrics
    assert {"ext:faithfulness", "ext:answer_relevancy"} <= set(metrics)
    assert set(table.set_index("metric").loc[["ext:faithfulness"], "source"]) == {"ragas (imported)"}
    assert (
        "so not shown: R@5, R@10, P@5, hit@5, RR@10, nDCG@10, AP, judged@10 (need an answerable question with labeled chunks); faithfulness (needs judge claims about the answer)"
        in texts(at)
    )
    # One run of its test set: no trend of one point (it comes with the second run), and when it
    # comes the imported scores are what it charts.
    assert "Across runs" not in texts(at) and not at.get("plotly_chart")
    from dashboard import tables

    assert tables.chart_defaults(metrics) == ["ext:answer_relevancy", "ext:faithfulness"]


def test_an_empty_or_missing_runs_folder_says_so_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "empty").mkdir()
    at = open_page(monkeypatch, folder=tmp_path / "empty")
    assert len(at.info) == 1 and "No run found in" in at.info[0].value and "--runs DIR" in at.info[0].value
    assert not at.expander, "no problems box on top of the message"
    at = open_page(monkeypatch, folder=tmp_path / "missing")
    assert len(at.error) == 1 and "does not exist" in at.error[0].value


def test_compare_puts_significant_regressions_first_and_never_shows_none(
    monkeypatch: pytest.MonkeyPatch, runs
) -> None:  # type: ignore[no-untyped-def]
    at = open_page(monkeypatch, "pages/2_Compare.py", base=BASE, cand=CAND)
    summary = at.dataframe[0].value
    assert list(summary["sig"][:2]) == ["★ worse", "★ worse"]
    assert list(summary["metric"][:2]) == ["abstention", "faithfulness"], "worst first"
    assert "Significantly worse:** abstention -0.636 [-0.818, -0.455] (worse)" in texts(at)
    questions = at.dataframe[1].value
    assert list(questions.columns[:3]) == ["qid", "question", "status"]
    assert not questions.astype(str).isin(["None", "nan"]).any().any()


def test_a_compare_link_with_qid_selects_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_page(monkeypatch, "pages/2_Compare.py", base=BASE, cand=CAND, qid="hv-004")
    view = at.dataframe[1].value
    selected = at.session_state["cmp_table"]["selection"]["rows"]
    assert [view["qid"].iloc[i] for i in selected] == ["hv-004"]


def test_overview_names_what_changed_in_the_latest_run(monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_page(monkeypatch)
    body = texts(at)
    assert "Significantly worse:** abstention -0.636 [-0.818, -0.455] (worse)" in body
    assert "Paired on the 146 questions both runs answered" in body
    assert "Judge:** claude-opus-4-1 · prompt faithfulness-v3" in body


def test_breakdown_offers_only_what_an_imported_run_has(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from helpers import mixed_runs_folder

    folder = mixed_runs_folder(tmp_path / "runs")
    at = open_page(monkeypatch, "pages/1_Breakdown.py", folder=folder)
    offered = at.multiselect(key="bd_metrics").options
    assert "ext:faithfulness" in offered and "R@5" not in offered
    assert "so not offered: R@5, R@10" in texts(at)


def test_question_page_starts_on_the_most_regressed_questions(monkeypatch: pytest.MonkeyPatch, runs) -> None:  # type: ignore[no-untyped-def]
    at = open_page(monkeypatch, "pages/3_Question.py")
    assert "Regressed most in the latest run" in texts(at)
    start = at.dataframe[0].value
    cmp = compare(runs[BASE], runs[CAND])
    expected = cmp.per_question.filter(
        pl.col("status").is_in(["regressed", "mixed"]) & (pl.col("split") != "heldout")
    )["qid"].head(10)
    assert list(start["qid"]) == expected.to_list()
    assert list(start.columns[:2]) == ["qid", "question"]


def test_a_trec_query_shows_its_top_k_and_the_rest_on_request(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from evalcore.cli import main
    from helpers import write_trec

    qp, rp = write_trec(tmp_path)
    assert (
        main(["import", "trec", "--qrels", str(qp), "--run", str(rp), "--out", str(tmp_path / "runs")]) == 0
    )
    runs = load_runs(tmp_path / "runs").runs
    (run,) = runs.values()
    depth = run.retrieved.group_by("qid").len().sort("len", descending=True)
    qid, n = depth.row(0)
    assert n > 10
    at = open_page(monkeypatch, "pages/3_Question.py", folder=tmp_path / "runs", qid=qid, k="3")
    cards = [m.value for m in at.markdown if m.value.startswith("**#")]
    assert len(cards) == 3, "only the top k are drawn"
    assert "(none — the test set gives none)" in texts(at), "not called unanswerable: it is answerable"
    toggle = at.toggle(key="q_more")
    assert f"Show the {n - 3} chunks below the top 3" in toggle.label
    toggle.set_value(True).run()
    cards = [m.value for m in at.markdown if m.value.startswith("**#")]
    assert len(cards) == n
    # A TREC run carries no answer: its answer-side rates are not applicable (not 0.000).
    at = open_page(monkeypatch, folder=tmp_path / "runs")
    metrics = list(at.dataframe[0].value["metric"])
    assert "false_refusal" not in metrics and "no_answer" not in metrics and "R@5" in metrics


def test_runs_without_answers_are_offered_no_judge(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Two TREC imports (ids and scores, no answers): no Re-judge, no judge-verdicts picker, and a
    Calibration page that says what it needs instead of offering runs it cannot label."""
    from evalcore.cli import main
    from helpers import write_trec

    qp, rp = write_trec(tmp_path)
    (tmp_path / "b").mkdir()
    _, rp2 = write_trec(tmp_path / "b", seed=4)
    out = tmp_path / "runs"
    assert (
        main(["import", "trec", "--qrels", str(qp), "--run", str(rp), "--out", str(out), "--run-id", "bm25"])
        == 0
    )
    testset = str(out / "testset.jsonl")
    assert (
        main(
            [
                "import",
                "trec",
                "--qrels",
                str(qp),
                "--run",
                str(rp2),
                "--out",
                str(out),
                "--run-id",
                "dense",
                "--testset",
                testset,
            ]
        )
        == 0
    )
    at = open_page(monkeypatch, "pages/2_Compare.py", folder=out, base="bm25", cand="dense")
    assert at.dataframe, "the comparison itself is there"
    assert not [e for e in at.expander if "Re-judge" in e.label]
    qid = str(at.dataframe[1].value["qid"].iloc[0])
    at = open_page(monkeypatch, "pages/3_Question.py", folder=out, qid=qid)
    assert not [s for s in at.selectbox if s.label == "Judge verdicts"]
    assert not [e for e in at.expander if "Re-judge" in e.label]
    at = open_page(monkeypatch, "pages/4_Calibration.py", folder=out)
    assert "No run of this test set has answers (2 runs, retrieval only)" in texts(at)
    assert not at.selectbox, "no picker of runs it cannot label"
    # The sample runs have answers: everything is offered there.
    at = open_page(monkeypatch, "pages/3_Question.py", qid="hv-026")
    assert [s for s in at.selectbox if s.label == "Judge verdicts"]
    assert [e for e in at.expander if "Re-judge" in e.label]


@pytest.mark.parametrize(
    ("page", "params"),
    [
        (None, {}),
        ("pages/1_Breakdown.py", {}),
        ("pages/1_Breakdown.py", {"vs": BASE}),
        ("pages/2_Compare.py", {"base": BASE, "cand": CAND, "qid": "hv-017"}),
        ("pages/3_Question.py", {"qid": "hv-017"}),
        ("pages/3_Question.py", {}),
    ],
)
def test_no_table_on_any_page_shows_none(monkeypatch: pytest.MonkeyPatch, page, params) -> None:  # type: ignore[no-untyped-def]
    """A value that does not apply reads '–' (or is left out), never 'None' or 'nan'."""
    at = open_page(monkeypatch, page, **params)
    assert at.dataframe, "the page has tables"
    for df in at.dataframe:
        cells = df.value.astype(str)
        assert not cells.isin(["None", "nan", "NaN", "<NA>"]).any().any(), df.value.head()


def test_compare_of_two_imported_runs_triages_by_their_imported_scores(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A Ragas-only folder: no labels, no judge output. The imported scores are all there is, so
    they decide which questions regressed, and no row of the summary is blank."""
    from evalcore.cli import main
    from helpers import write_ragas_exports

    export = write_ragas_exports(tmp_path)["support-bot"]
    worse = tmp_path / "support-bot-v2.csv"
    df = pl.read_csv(export)
    df.with_columns(faithfulness=pl.col("faithfulness") - pl.Series([0.5, 0.0, 0.3, 0.0])).write_csv(worse)
    runs = tmp_path / "runs"
    assert main(["import", "ragas", str(export), "--out", str(runs), "--run-id", "v1"]) == 0
    assert (
        main(
            [
                "import",
                "ragas",
                str(worse),
                "--out",
                str(runs),
                "--run-id",
                "v2",
                "--testset",
                str(runs / "testset.jsonl"),
            ]
        )
        == 0
    )
    at = open_page(monkeypatch, "pages/2_Compare.py", folder=runs, base="v1", cand="v2")
    summary = at.dataframe[0].value
    assert set(summary["metric"]) == {
        "ext:faithfulness",
        "ext:answer_relevancy",
        "false_refusal",
        "no_answer",
    }
    assert "R@5" not in set(summary["metric"]), "a metric no question has is named, not a row of None"
    assert not summary.astype(str).isin(["None", "nan"]).any().any()
    questions = at.dataframe[1].value
    assert set(questions["qid"]) == {"ragas-00001", "ragas-00003"}, "the two whose imported faithfulness fell"
    assert set(questions["diagnosis"]) == {"imported score"}


def test_a_link_naming_another_test_sets_run_or_question_says_so(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from helpers import mixed_runs_folder

    folder = mixed_runs_folder(tmp_path / "runs")
    at = open_page(monkeypatch, "pages/1_Breakdown.py", folder=folder, run="hr-policies", vs="support-bot")
    assert (
        "'vs=support-bot' in the link is a run of another test set (support-bot/testset.jsonl) than the one "
        "shown: pick it in the sidebar" in texts(at)
    )
    # support-bot has four questions, hr-policies three: ragas-00004 is only support-bot's.
    at = open_page(
        monkeypatch,
        "pages/3_Question.py",
        folder=folder,
        qid="ragas-00004",
        testset=at.sidebar.selectbox[0].value,
    )
    assert (
        "'qid=ragas-00004' in the link is not a question of this test set, but of support-bot/testset.jsonl"
        in texts(at)
    )


def test_a_compare_link_to_a_question_the_filters_hide_says_so(monkeypatch: pytest.MonkeyPatch, runs) -> None:  # type: ignore[no-untyped-def]
    cmp = compare(runs[BASE], runs[CAND], permutations=200)
    unchanged = cmp.per_question.filter((pl.col("status") == "unchanged") & (pl.col("split") == "dev"))[
        "qid"
    ][0]
    at = open_page(monkeypatch, "pages/2_Compare.py", base=BASE, cand=CAND, qid=unchanged)
    assert f"{unchanged} is open below, but the filters above hide its row (status unchanged)" in texts(at)
    assert at.session_state["cmp_qid"] == unchanged


def test_compare_says_when_the_judge_changed(monkeypatch: pytest.MonkeyPatch, runs_copy: Path) -> None:
    from helpers import judged_by_another_judge

    judged_by_another_judge(runs_copy, CAND)
    at = open_page(monkeypatch, "pages/2_Compare.py", folder=runs_copy, base=BASE, cand=CAND)
    assert "The runs were judged by different judges" in texts(at)
    assert f"evalcore judge {runs_copy / BASE} --like {runs_copy / CAND}" in texts(at)
    summary = at.dataframe[0].value.set_index("metric")
    assert summary.loc["faithfulness", "sig"] == "judge changed" and summary.loc["R@5", "sig"] == ""


def test_breakdown_and_the_trend_say_when_judges_differ(
    monkeypatch: pytest.MonkeyPatch, runs_copy: Path
) -> None:
    from helpers import judged_by_another_judge

    judged_by_another_judge(runs_copy, CAND)
    at = open_page(monkeypatch, "pages/1_Breakdown.py", folder=runs_copy, run=CAND, vs=BASE)
    assert "The runs were judged by different judges" in texts(at)
    at = open_page(monkeypatch, folder=runs_copy)
    assert "These runs were judged by 2 judges" in texts(at)
    assert f"claude-other-judge · prompt faithfulness-v4: {CAND}" in texts(at)


def test_the_browsers_warm_up_leaves_nothing_behind_and_moves_nothing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """While the runs load on a tab's first run, a hidden table and chart make the browser fetch their
    code (dashboard.frame); once loaded they are gone, and later runs keep every element in its place
    (a moved element is a new one to the browser: an open expander would close)."""
    (tmp_path / "empty").mkdir()
    at = open_page(monkeypatch, folder=tmp_path / "empty")
    assert not at.dataframe and not at.get("plotly_chart"), "nothing but the message on an empty folder"

    at = open_page(monkeypatch, "pages/3_Question.py", qid="hv-026")
    charts, tables = len(at.get("plotly_chart")), len(at.dataframe)

    def layout(at: AppTest) -> list[str]:
        return [type(node).__name__ for node in at.main]

    before = layout(at)
    assert at.session_state[PREFETCHED]
    at.run()
    assert layout(at) == before
    assert (len(at.get("plotly_chart")), len(at.dataframe)) == (charts, tables)


def test_the_server_does_not_hold_each_finished_page_behind_a_full_garbage_collection() -> None:
    """Streamlit's post-run collection takes 0.5-1 s in this app's process and delays every view's
    last message to the browser; .streamlit/config.toml turns it off (read from where the README's
    command runs)."""
    import subprocess
    import sys

    probe = "from streamlit import config; print(config.get_option('runner.postScriptGC'))"
    shown = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert shown.stdout.strip() == "False"


def test_a_first_view_of_a_folder_runs_no_full_garbage_collection(tmp_path: Path) -> None:
    """With Python's default thresholds the imports and the first load of a folder ran five full
    collections over the process's ~300,000 long-lived objects (0.5 s with the interpreter lock
    held); the dashboard freezes what exists when it is imported and collects young objects less
    often (dashboard/__init__.py). A fresh process, as the server's first view is."""
    import subprocess
    import sys

    probe = f"""
import gc, streamlit, plotly.graph_objects
full = []
gc.callbacks.append(lambda phase, info: full.append(1) if phase == "stop" and info["generation"] == 2 else None)
import dashboard.data, dashboard.frame, dashboard.tables
from evalcore import load_runs
from evalcore.score import score_runs
runs = load_runs({str(ROOT / "sample_runs")!r}).runs
score_runs(runs.values())
print(len(runs), len(full))
"""
    env = {**os.environ, "RAGTRIAGE_CACHE_DIR": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True, env=env
    )
    runs, full = map(int, out.stdout.split())
    assert runs >= 4
    assert full == 0, f"{full} full collection(s) during imports and a first load"


def test_the_warm_up_draws_a_chart_only_for_pages_that_draw_charts_and_once_per_tab() -> None:
    """The hidden warm-up (dashboard.frame): a table always, a chart only when asked (fetching
    Plotly's code costs the browser 1-1.5 s of CPU), and nothing on the tab's later runs."""

    def script(charts: bool) -> None:
        from dashboard.frame import _prefetch_components

        _prefetch_components(charts)

    for charts in (True, False):
        at = AppTest.from_function(script, args=(charts,), default_timeout=30)
        at.run()
        assert (len(at.dataframe), len(at.get("plotly_chart"))) == (1, int(charts))
        at.run()
        assert (len(at.dataframe), len(at.get("plotly_chart"))) == (0, 0), "once per browser tab"


def test_every_page_says_whether_it_draws_charts() -> None:
    """A page without a plotly chart passes ``charts=False`` to setup (else the browser fetches
    Plotly's code for nothing); a page with one does not."""
    for page in [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py"))]:
        text = page.read_text()
        assert ("st.plotly_chart(" in text) != ("charts=False" in text), page.name


def test_overview_leaves_judged_metrics_out_of_what_changed_when_the_judge_changed(
    monkeypatch: pytest.MonkeyPatch, runs_copy: Path
) -> None:
    from helpers import judged_by_another_judge

    judged_by_another_judge(runs_copy, CAND)
    at = open_page(monkeypatch, folder=runs_copy)
    assert any("judged by different judges" in w.value for w in at.warning)
    worse = " ".join(e.value for e in at.error)
    assert "abstention" in worse and "faithfulness" not in worse, "a changed judge is not a changed system"


def test_compare_names_a_rate_that_moved_as_overview_and_the_report_do(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A new user saw "Moved: no_answer" on Overview and in the report, and only a ★ in Compare's table."""
    at = open_page(
        monkeypatch, "pages/2_Compare.py", base="2026-11-02-hybrid-rerank", cand="2026-11-16-rerank-prompt-v2"
    )
    assert any(i.value.startswith("**Moved (no better direction):** no\\_answer") for i in at.info), [
        i.value for i in at.info
    ]
