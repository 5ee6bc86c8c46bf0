"""The shapes pages lay out: heatmap grids, the Compare tables, the Question picker. Pages only place
these on the screen; the numbers in them come from evalcore (means, CIs, deltas, directions)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import polars as pl

from evalcore.comparison import STATUSES, SUMMARY_COLUMNS, Comparison, filter_questions
from evalcore.metrics import HEADLINE, metric_info
from evalcore.question import question_choices
from evalcore.runs import HELDOUT, Run, RunEntry, is_heldout
from evalcore.score import split_applicable
from evalcore.stats import ALPHA, SMALL_SLICE

__all__ = [
    "HEADLINE",
    "HELDOUT",
    "STATUSES",
    "Bars",
    "Grid",
    "bar_chart",
    "case_row",
    "chart_defaults",
    "compare_page",
    "compare_questions",
    "compare_summary",
    "delta_grid",
    "delta_table",
    "describe_moves",
    "diff_text",
    "filter_questions",
    "headline",
    "history_table",
    "judge_text",
    "judges_note",
    "mean_grid",
    "metric_source",
    "most_regressed",
    "moves_by_change",
    "present",
    "question_history",
    "question_metrics",
    "question_options",
    "shown",
    "significant_moves",
    "system_shown",
    "trend_series",
    "why_not_applicable",
    "with_sources",
]

SIGNIFICANT = ALPHA  # Holm-corrected p below this is marked ★ (evalcore.stats owns the level)
SMALL = SMALL_SLICE  # a slice with fewer questions is marked †


@dataclass(frozen=True)
class Grid:
    """A slice × metric heatmap: values, the text in each cell, and the colour limits."""

    z: list[tuple[Any, ...]]
    text: list[tuple[Any, ...]]
    slices: list[str]
    metrics: list[str]
    zmin: float
    zmax: float
    # Cells of metrics with no better direction (no_answer): drawn grey, apart from the colour scale.
    neutral: list[tuple[Any, ...]] | None = None


def _cells(
    table: pl.DataFrame, metrics: list[str], value: str, text: list[str]
) -> tuple[pl.DataFrame, pl.DataFrame]:
    cell = table.with_columns(text=pl.Series(text, dtype=pl.String))
    z = cell.pivot(on="metric", index="slice", values=value).sort("slice")
    t = cell.pivot(on="metric", index="slice", values="text").sort("slice")
    for m in metrics:  # a metric with no value in any slice still gets its column
        if m not in z.columns:
            z = z.with_columns(pl.lit(None, dtype=pl.Float64).alias(m))
            t = t.with_columns(pl.lit(None, dtype=pl.String).alias(m))
    return z, t


def mean_grid(table: pl.DataFrame, metrics: list[str], ceilings: pl.DataFrame | None = None) -> Grid:
    """One run: each cell the mean, its 95% CI and n († for a slice under 30 questions); blank where
    the metric applies to no question of the slice (n = 0).

    The colour is how good the mean is, by the catalogue: the mean as a share of the highest mean the
    slice allows (``ceilings``: P@5 reaches 1.0 only where every question has five labeled chunks),
    turned for a lower-is-better metric (false_refusal) so that darker is always better. A metric
    with no better direction (no_answer) is drawn grey, off the scale."""
    if ceilings is not None and ceilings.height:
        table = table.join(ceilings, on=["slice", "metric"], how="left")
    else:
        table = table.with_columns(ceiling=pl.lit(None, dtype=pl.Float64))
    texts: list[str] = []
    good: list[float | None] = []
    grey: list[float | None] = []
    for r in table.iter_rows(named=True):
        ceiling = r["ceiling"] if r["ceiling"] else 1.0
        if not r["n"] or r["mean"] is None:
            texts.append("")
            good.append(None)
            grey.append(None)
            continue
        texts.append(
            f"{r['mean']:.3f}{' †' if r['small'] else ''}<br>{r['ci_low']:.2f}–{r['ci_high']:.2f}<br>n={r['n']}"
            + (f"<br>max {ceiling:.2f}" if ceiling < 1.0 else "")
        )
        direction = metric_info(r["metric"]).higher_is_better
        share = min(1.0, max(0.0, r["mean"] / ceiling))
        good.append(None if direction is None else share if direction else 1.0 - share)
        grey.append(0.5 if direction is None else None)
    cells = table.with_columns(
        text=pl.Series(texts, dtype=pl.String),
        good=pl.Series(good, dtype=pl.Float64),
        grey=pl.Series(grey, dtype=pl.Float64),
    )

    def pivot(value: str) -> pl.DataFrame:
        out = cells.pivot(on="metric", index="slice", values=value).sort("slice")
        for m in metrics:  # a metric with no value in any slice still gets its column
            if m not in out.columns:
                out = out.with_columns(pl.lit(None, dtype=cells.schema[value]).alias(m))
        return out

    z, t, g = pivot("good"), pivot("text"), pivot("grey")
    return Grid(
        z.select(metrics).rows(),
        t.select(metrics).rows(),
        z["slice"].to_list(),
        metrics,
        0.0,
        1.0,
        neutral=g.select(metrics).rows(),
    )


@dataclass(frozen=True)
class Bars:
    """One metric per slice as bars: heights (0 where there is no data), the label over each bar,
    CI whiskers, colours (grey for no data) and hatching (small slices)."""

    slices: list[str]
    heights: list[float]
    labels: list[str]
    err_plus: list[float | None]
    err_minus: list[float | None]
    colours: list[str]
    patterns: list[str]


def bar_chart(table: pl.DataFrame, metric: str) -> Bars:
    rows = only_metrics(table, [metric]).sort("slice").to_dicts()
    has = [bool(r["n"]) and r["mean"] is not None for r in rows]
    return Bars(
        slices=[str(r["slice"]) for r in rows],
        heights=[r["mean"] if ok else 0.0 for r, ok in zip(rows, has, strict=True)],
        labels=[
            f"{r['mean']:.3f} · n={r['n']}" if ok else "no data (n=0)"
            for r, ok in zip(rows, has, strict=True)
        ],
        err_plus=[r["ci_high"] - r["mean"] if ok else None for r, ok in zip(rows, has, strict=True)],
        err_minus=[r["mean"] - r["ci_low"] if ok else None for r, ok in zip(rows, has, strict=True)],
        colours=["#6aa5e0" if ok else "#d1d5db" for ok in has],
        patterns=["/" if r["small"] and ok else "" for r, ok in zip(rows, has, strict=True)],
    )


def delta_grid(table: pl.DataFrame, metrics: list[str]) -> Grid:
    """Two runs: each cell the mean paired delta, ★ when significant after Holm, † for a small slice;
    coloured by improvement (the catalogue's ``better``), so a lower-is-better metric that fell is blue."""
    text = [
        f"{r['delta']:+.3f}{'★' if r['significant'] else ''}{' †' if r['small'] else ''}<br>n={r['n']}"
        if r["delta"] is not None
        else ""
        for r in table.iter_rows(named=True)
    ]
    z, t = _cells(table, metrics, "better", text)
    lim = max(0.05, float(table["better"].abs().max() or 0))  # type: ignore[arg-type]
    return Grid(z.select(metrics).rows(), t.select(metrics).rows(), z["slice"].to_list(), metrics, -lim, lim)


def _significance() -> pl.Expr:
    """A summary row's verdict (the comparison decides it) marked: '★ worse', '★ better', '★ moved', or ''."""
    return pl.when(pl.col("significant")).then(pl.lit("★ ") + pl.col("verdict")).otherwise(pl.lit(""))


ORDER = {"worse": 0, "better": 1, "moved": 2}  # significant regressions first, then improvements


def compare_summary(cmp: Comparison) -> pl.DataFrame:
    """The per-metric summary as the Compare page shows it: significant regressions first (worst
    first), then significant improvements, then the rest; ``sig`` says which in words."""
    order = pl.col("verdict").replace_strict(ORDER, default=3, return_dtype=pl.Int64)
    applicable_rows, _ = split_applicable(cmp.summary)  # a metric no question has is named, not shown
    return (
        (
            applicable_rows.with_columns(sig=_significance(), _order=order)
            .with_row_index("_pos")
            .sort("_order", pl.col("better").fill_null(0.0), "_pos")
        )
        .pipe(shown, {"improved": "d", "regressed": "d"})
        .with_columns(
            sig=pl.when(pl.col("comparable")).then(pl.col("sig")).otherwise(pl.lit("judge changed"))
        )
        .select("sig", *SUMMARY_COLUMNS, "direction")
        .select("metric", pl.exclude("metric"))
    )


def headline(metrics: list[str] | tuple[str, ...]) -> list[str]:
    """The catalogue's headline metrics among ``metrics``, in the catalogue's order."""
    return [m for m in HEADLINE if m in metrics]


def chart_defaults(available: list[str] | tuple[str, ...]) -> list[str]:
    """The metrics a chart starts with: the headline ones a run has, else (an imported run with no
    labels, no judge output) its imported scores, else the first few it has."""
    return headline(available) or [m for m in available if m.startswith("ext:")][:5] or list(available[:3])


def significant_moves(cmp: Comparison) -> pl.DataFrame:
    """The metrics that moved significantly (the comparison's verdicts), regressions first, worst first;
    with ``change`` in words: 'worse', 'better', or 'moved' for a rate with no direction. Judged
    metrics of runs judged by different judges are left out (the caller shows ``cmp.judge_change``)."""
    return (
        # (a judged metric of two runs judged by different judges compares the judges: never a move)
        cmp.summary.filter(pl.col("significant"))
        .with_columns(change=pl.col("verdict"))
        .sort(pl.col("better").fill_null(0.0), "metric")
        .select("metric", "change", "n", "baseline", "candidate", "delta", "ci_low", "ci_high", "p_holm")
    )


def describe_moves(moves: pl.DataFrame) -> str:
    """The significant movements in one line of plain text, e.g.
    ``abstention -0.636 [-0.758, -0.515] (worse)`` (the mean paired delta and its 95% CI)."""
    return "; ".join(
        f"{r['metric']} {r['delta']:+.3f} [{r['ci_low']:+.3f}, {r['ci_high']:+.3f}] ({r['change']})"
        for r in moves.iter_rows(named=True)
    )


def moves_by_change(moves: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """:func:`significant_moves` split into 'worse', 'better' and 'moved' (empty ones left out)."""
    parts = {c: moves.filter(pl.col("change") == c) for c in ("worse", "better", "moved")}
    return {c: part for c, part in parts.items() if part.height}


def trend_series(trend: pl.DataFrame, metrics: list[str]) -> list[tuple[str, pl.DataFrame]]:
    """Each chosen metric's points across runs, only runs where it applies (n > 0); metrics with no
    point at all are left out (the page then says so instead of drawing an empty axis)."""
    out = []
    for m in metrics:
        part = trend.filter((pl.col("metric") == m) & (pl.col("n") > 0))
        if part.height:
            out.append((m, part))
    return out


def with_sources(run: Run, table: pl.DataFrame) -> pl.DataFrame:
    """A run's summary as the Overview shows it, for someone who has not met the metrics: each
    metric with what it measures in everyday words, its mean and 95% CI, n, a note on a small sample,
    and — when any was imported — who computed it (evalcore, or the tool it came from)."""
    out = table.with_columns(
        plain=pl.col("metric").map_elements(lambda m: metric_info(m).plain, return_dtype=pl.String),
        note=pl.when(pl.col("small"))
        .then(pl.lit(f"few questions (under {SMALL}): a wide interval"))
        .otherwise(pl.lit("")),
    )
    cols = ["metric", "plain", "mean", "ci_low", "ci_high", "n", "note"]
    if any(m.startswith("ext:") for m in table["metric"]):
        out = out.with_columns(
            source=pl.col("metric").map_elements(lambda m: metric_source(run, m), return_dtype=pl.String)
        )
        cols.append("source")
    if not out["note"].str.len_chars().sum():
        cols.remove("note")
    return out.select(cols)


def present(table: pl.DataFrame) -> tuple[pl.DataFrame, list[str]]:
    """A summary without the metrics that apply to no question of the run, and their names
    (:func:`evalcore.score.split_applicable`)."""
    return split_applicable(table)


def why_not_applicable(metrics: list[str]) -> str:
    """'R@5, P@5 (need an answerable question with labeled chunks); abstention (needs …)' — each
    metric left out, grouped by what it needs (the catalogue's words)."""
    by_need: dict[str, list[str]] = {}
    for m in metrics:
        by_need.setdefault(metric_info(m).needs, []).append(m)
    return "; ".join(
        f"{', '.join(ms)} ({'need' if len(ms) > 1 else 'needs'} {need})" for need, ms in by_need.items()
    )


def metric_source(run: Run, metric: str) -> str:
    """Who computed a metric: 'evalcore', or the tool an imported score came from ('ragas (imported)')."""
    if not metric.startswith("ext:"):
        return "evalcore"
    return f"{run.manifest.external_metrics.get(metric[4:], 'external')} (imported)"


def diff_text(change: dict[str, Any], a: str, b: str) -> str:
    """One question's revision diff in words (plain text; the page escapes it)."""
    lines = [
        f"From {a} to {b}: faithfulness {_num(change['faithfulness_a'])} → {_num(change['faithfulness_b'])}; "
        f"quotes the check rejected {change['quotes_rejected_a']} → {change['quotes_rejected_b']}."
    ]
    lines += [f"+ {c}" for c in change["claims_added"]]
    lines += [f"− {c}" for c in change["claims_removed"]]
    lines += [f"flipped: {c}" for c in change["verdicts_flipped"]]
    return "\n".join(lines)


def _num(v: float | None) -> str:
    return NA if v is None else f"{v:.3f}"


def judges_note(runs: list[RunEntry]) -> str | None:
    """When the runs of a trend were judged by more than one judge: which runs had which, since the
    judged metrics then move with the judge as well as the system. None when one judge (or unknown)."""
    by: dict[str, list[str]] = {}
    for r in runs:
        if r.judge is not None:
            by.setdefault(r.judge_text(), []).append(r.run_id)
    if len(by) < 2:
        return None
    parts = "; ".join(f"{judge}: {', '.join(ids)}" for judge, ids in by.items())
    return f"These runs were judged by {len(by)} judges ({parts}): faithfulness, correctness and relevance move with the judge too."


def system_shown(run: Run) -> pl.DataFrame:
    """A run's system configuration as setting/value rows, without the keys it leaves unset (null):
    what it *is*, readable without knowing JSON (a nested value is written compactly)."""
    rows = [
        (k.replace("_", " "), v if isinstance(v, str) else json.dumps(v, ensure_ascii=False))
        for k, v in run.manifest.system.items()
        if v is not None
    ]
    return pl.DataFrame(rows, schema={"setting": pl.String, "value": pl.String}, orient="row")


def judge_text(run: RunEntry) -> str | None:
    """The run's judge as one line (model · prompt version), or None when the run names none."""
    judge = run.manifest.judge
    if judge is None:
        return None
    parts = [judge.model, f"prompt {judge.prompt_version}" if judge.prompt_version else None]
    return " · ".join(p for p in parts if p) or None


NA = "–"  # what a table shows where a value does not apply (never "None")


def _text(col: str, fmt: str) -> pl.Expr:
    """A column as the table shows it: each value formatted, '–' where there is none."""
    return pl.col(col).map_elements(lambda v: format(v, fmt), return_dtype=pl.String).fill_null(NA).alias(col)


def _delta_text(col: str) -> pl.Expr:
    """A delta as the table shows it: signed to 3 places, or '–' where the metric does not apply to
    the question in one of the runs."""
    return _text(col, "+.3f")


def shown(df: pl.DataFrame, formats: dict[str, str]) -> pl.DataFrame:
    """``df`` with the columns in ``formats`` as text ('.3f', '+.3f', 'd', ...), '–' for missing
    values: for tables where a blank would read as 'None'."""
    return df.with_columns([_text(c, f) for c, f in formats.items() if c in df.columns])


def compare_questions(cmp: Comparison, table: pl.DataFrame) -> pl.DataFrame:
    """The filtered per-question table: the question text beside its id, status and diagnosis (blank
    when none), the worst delta and the headline deltas (numbers, null where a metric does not apply:
    the CSV download; :func:`compare_page` writes the page the browser is sent)."""
    questions = cmp.baseline.testset.cases.select("qid", "question", "type", "topic")
    # The headline metrics and imported scores that apply to some question of the pair: a column of
    # nothing but '–' tells a reader nothing.
    pq = cmp.per_question
    applies = [m for m in cmp.metrics if pq[f"{m}_delta"].null_count() < pq.height]
    key = [m for m in headline(cmp.metrics) if m in applies] + [m for m in applies if m.startswith("ext:")][
        :3
    ]
    return table.join(questions, on="qid", how="left").select(
        "qid",
        "question",
        "status",
        pl.col("diagnosis").fill_null(""),
        "worst_delta",
        *[f"{m}_delta" for m in key],
        left_top_k=pl.col("left_top_k").list.join(" "),
        entered_top_k=pl.col("entered_top_k").list.join(" "),
        type="type",
        topic="topic",
        must_pass="must_pass",
    )


def compare_page(page: pl.DataFrame) -> pl.DataFrame:
    """A page of :func:`compare_questions` as the table shows it: each headline delta signed to 3
    places, '–' where the metric does not apply. Only the page is written out: formatting a million
    rows' deltas took seconds on every rerun."""
    return page.with_columns(
        [_delta_text(c) for c in page.columns if c.endswith("_delta") and c != "worst_delta"]
    )


def question_metrics(cmp: Comparison, row: dict[str, Any]) -> pl.DataFrame:
    """One question's metrics in both runs and the delta, a row per metric ('–' where one does not
    apply)."""
    return shown(
        pl.DataFrame(
            {
                "metric": list(cmp.metrics),
                "baseline": [row[f"{m}_base"] for m in cmp.metrics],
                "candidate": [row[f"{m}_cand"] for m in cmp.metrics],
                "delta": [row[f"{m}_delta"] for m in cmp.metrics],
            },
            schema={
                "metric": pl.String,
                "baseline": pl.Float64,
                "candidate": pl.Float64,
                "delta": pl.Float64,
            },
        ),
        {"baseline": ".3f", "candidate": ".3f", "delta": "+.3f"},
    )


def question_options(
    cases: pl.DataFrame, *, search: str, include_heldout: bool, selected: str | None, limit: int
) -> tuple[list[tuple[str, str]], int]:
    """The picker's ``(qid, question)`` options — held-out ones only when asked for, narrowed by a
    case-insensitive search of qid and text, at most ``limit`` (plus the open question) — and how many
    questions matched in all."""
    choices = question_choices(cases, include_heldout=include_heldout, keep=selected)
    needle = search.strip().lower()
    if needle:
        hit = pl.col("qid").str.to_lowercase().str.contains(needle, literal=True) | pl.col(
            "question"
        ).str.to_lowercase().str.contains(needle, literal=True)
        choices = choices.filter(hit | (pl.col("qid") == (selected or "")))
    options = choices.sort("qid").select("qid", "question").head(limit).rows()
    if selected and selected not in {q for q, _ in options}:
        open_one = cases.filter(pl.col("qid") == selected).select("qid", "question")
        if open_one.height:
            options.insert(0, open_one.row(0))
    matched = choices.filter(pl.col("qid") != (selected or "")).height if needle else choices.height
    return options, matched


def most_regressed(cmp: Comparison, limit: int = 10) -> pl.DataFrame:
    """The questions that regressed most between two runs (held-out ones left out), with their text:
    where the Question page starts when nothing is picked yet."""
    table = filter_questions(cmp, status=["regressed", "mixed"])
    return (
        table.join(cmp.candidate.testset.cases.select("qid", "question"), on="qid", how="left")
        .head(limit)
        .select(
            "qid",
            "question",
            "status",
            diagnosis=pl.col("diagnosis").fill_null(""),
            worst_delta="worst_delta",
        )
    )


def question_history(history: pl.DataFrame) -> tuple[pl.DataFrame, list[str]]:
    """One question's metrics across runs, without the metrics that apply to no run of it (retrieval
    on an unanswerable question would be columns of None), and the metrics worth charting."""
    kept = history.select([c for c in history.columns if history[c].null_count() < history.height])
    charted = [m for m in (*HEADLINE, "RR@10") if m in kept.columns] or [
        c for c in kept.columns if c.startswith("ext:")
    ][:5]
    return kept, charted


def history_table(history: pl.DataFrame) -> pl.DataFrame:
    """The across-runs table as shown: each metric to 3 places (counts whole), '–' where it does not
    apply in a run."""
    formats = {
        c: ("d" if dtype.is_integer() else ".3f")
        for c, dtype in history.schema.items()
        if c not in ("run_id", "label", "created") and dtype.is_numeric()
    }
    return shown(history, formats)


def case_row(cases: pl.DataFrame, qid: str) -> dict[str, Any]:
    """One test case as a dict (the caller knows the qid exists)."""
    return cases.filter(pl.col("qid") == qid).row(0, named=True)


def tag_choices(tags: pl.DataFrame) -> list[str]:
    """The ``tag:value`` choices of a question filter, sorted: every tag value of the test set but
    the built-in flags the filter has its own controls for (one pass over a million rows of tags)."""
    return (
        tags.filter(~pl.col("tag").is_in(["split", "answerable", "must_pass"]))
        .select(pl.format("{}:{}", "tag", "value").alias("choice"))
        .unique()
        .sort("choice")["choice"]
        .to_list()
    )


def tag_pair(value: str | None) -> tuple[str, str] | None:
    """A ``tag:value`` picker choice as the (tag, value) pair the question filter takes."""
    if not value:
        return None
    tag, _, tag_value = value.partition(":")
    return tag, tag_value


def manifest_row(run: RunEntry, questions: int | None) -> dict[str, Any]:
    """The manifest as one flat dict for tables (system config flattened with dots); ``questions``:
    how many the run answered, None while not known (shown as "…")."""
    flat: dict[str, Any] = {
        "run_id": run.run_id,
        "label": run.label,
        # As a person reads a time (UTC, to the minute); the ISO form stays in run.json.
        "created": run.manifest.created.strftime("%Y-%m-%d %H:%M"),
        "test_set": run.testset.version,
        "questions": "…" if questions is None else str(questions),
        "judge": judge_text(run) or NA,
    }
    for key, value in run.manifest.system.items():
        # As text: one run's 5 and another's "auto" (or an unset value) share a column.
        flat[f"system.{key}"] = (
            NA if value is None else value if isinstance(value, str) else json.dumps(value)
        )
    return flat


def only_metrics(table: pl.DataFrame, metrics: list[str]) -> pl.DataFrame:
    """The rows of a per-slice table for these metrics."""
    return table.filter(pl.col("metric").is_in(metrics))


def delta_table(table: pl.DataFrame) -> pl.DataFrame:
    """Breakdown's per-slice delta table as a reader reads it: the cells where a metric applies, the
    significance in words, counts '–' for a metric with no better direction."""
    return (
        applicable(table)
        .sort("slice", maintain_order=True)
        .with_columns(sig=_significance())
        .pipe(shown, {"improved": "d", "regressed": "d"})
        .select("slice", "sig", *SUMMARY_COLUMNS, "small", "direction")
        .select("slice", "metric", pl.exclude("slice", "metric"))
    )


def applicable(table: pl.DataFrame) -> pl.DataFrame:
    """A per-slice table without the cells where a metric applies to no question (n = 0: retrieval on
    unanswerable questions), which would be rows of blanks; charts still show them as '–'."""
    return table.filter(pl.col("n") > 0)


def heldout_qids(cases: pl.DataFrame) -> set[str]:
    """The held-out questions of a test set's cases (hidden from readers who may not see them)."""
    return set(cases.filter(is_heldout())["qid"].to_list())
