"""Commands that score runs: one run's metrics, a comparison of two, and the CI gate."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import polars as pl

from evalcore.cli.common import (
    EXIT_OK,
    FORMAT,
    JUDGE_HELP,
    STORE_HELP,
    load_run_arg,
    open_store,
    render_table,
    usage_error,
)


def _judged(run: Any, args: argparse.Namespace) -> Any:
    """The run under the judge revision ``--judge`` names (``recorded``: the run file's own)."""
    from evalcore.judge.revision import RECORDED, coverage, judged_by, judged_verdicts

    which = getattr(args, "judge", None) or RECORDED
    if which == RECORDED:
        return run

    with open_store(args.store) as store:
        judged = judged_by(store, run, which)
        verdicts = judged_verdicts(store, run, which) or []
    # Each judged figure's n is in the table; why the other questions are missing, here (stderr:
    # JSON and CSV output stay clean).
    sys.stderr.write(f"{run.run_id}, judge {which} ({judged.judge_text()}): {coverage(run, verdicts)}\n")
    return judged


def _standing(run: Any, args: argparse.Namespace) -> list[str]:
    """What the calibration sessions say about the judge of ``run``'s verdicts: measured (and the
    corrected scores) or the flag that it is not. Nothing when there is no store yet."""
    from evalcore.calibration.report import standing
    from evalcore.store import default_path
    from evalcore.store.db import is_url

    target = args.store or default_path()
    if not is_url(target) and not Path(target).exists():
        return []
    with open_store(target) as store:
        found = standing(store, run)
    return found.lines() + ([found.unmeasured] if found.unmeasured else [])


def cmd_metrics(args: argparse.Namespace) -> int:
    from evalcore.score import metric_columns, score_run, summarize

    run = _judged(load_run_arg(args.run), args)
    measures = args.measures or None
    embed = None
    if args.embedder:
        from evalcore.metrics.embedding import embedder

        embed = embedder(args.embedder)
        if "answer_questions" not in run.results.columns:
            return usage_error(
                "relevance_ragas needs questions the judge wrote from each answer: score a judge "
                "revision (--judge latest), not the run file's recorded judge output"
            )
    scores = score_run(run, *([measures] if measures else []), embedder=embed)
    metrics = metric_columns(scores)
    if args.per_question:
        print(render_table(scores, args.format))
        return EXIT_OK
    table = summarize(scores, run.testset, by=args.by, metrics=metrics, resamples=args.resamples)
    if args.format == "table":
        print(
            f"{run.label} ({run.run_id}) — test set {run.testset.version}, {scores.height} questions"
            + (f", by {args.by}" if args.by else "")
        )
        shown = (
            table.filter(pl.col("n") > 0)
            .with_columns(
                ci=pl.format("[{}, {}]", pl.col("ci_low").round(3), pl.col("ci_high").round(3)),
                note=pl.when(pl.col("small")).then(pl.lit("small slice")).otherwise(pl.lit("")),
            )
            .select("slice", "metric", "n", "mean", "ci", "note")
        )
        if args.by is None:
            shown = shown.drop("slice")
        print(render_table(shown, "table"))
        _not_applicable(table)
        if embed is not None:
            print(
                f"relevance_ragas: RAGAS answer relevance with the embedder {args.embedder}; "
                "relevance: the judge's own 0-1 score"
            )
        for line in _standing(run, args):
            print(line)
    else:
        print(render_table(table, args.format))
    return EXIT_OK


def _not_applicable(table: pl.DataFrame) -> None:
    """Name the metrics left out of a table because they apply to no question (n = 0 everywhere)."""
    from evalcore.score import split_applicable

    _, gone = split_applicable(table)
    if gone:
        print(f"not applicable (no question they apply to), left out: {', '.join(gone)}")


def cmd_compare(args: argparse.Namespace) -> int:
    from evalcore.comparison import SUMMARY_COLUMNS, compare, filter_questions

    base, cand = _judged(load_run_arg(args.baseline), args), _judged(load_run_arg(args.candidate), args)
    cmp = compare(
        base, cand, measures=args.measures or _default_measures(), k=args.k, permutations=args.permutations
    )
    if args.format != "table":
        out = cmp.summary if not args.per_question else cmp.per_question
        print(render_table(out if args.by is None else cmp.by_slice(args.by), args.format))
        return EXIT_OK
    print(
        f"baseline  {base.label} ({base.run_id})\ncandidate {cand.label} ({cand.run_id})\n"
        f"on the {cmp.note}; paired randomization test, Holm-corrected"
    )
    if cmp.judge_change:  # said before the numbers, and on every judged row of the table
        print(f"NOT COMPARABLE: {cmp.judge_change}")
    summ = cmp.by_slice(args.by, permutations=args.permutations) if args.by else cmp.summary
    cols = ["slice"] if args.by else []
    shown = summ.filter(pl.col("n") > 0).select(*cols, *SUMMARY_COLUMNS, "verdict", "comparable")
    # A rate with no better direction neither improves nor regresses: "–", not null.
    shown = shown.with_columns([pl.col(c).cast(pl.String).fill_null("–") for c in ("improved", "regressed")])
    if cmp.judge_change:
        # A judged metric's delta, CI and p compare two judges, not two systems: not shown as a result.
        blank = ("delta", "ci_low", "ci_high", "p_holm", "improved", "regressed")
        shown = shown.with_columns(
            [
                pl.when(pl.col("comparable"))
                .then((pl.col(c).round(4) if shown.schema[c].is_float() else pl.col(c)).cast(pl.String))
                .otherwise(pl.lit("–"))
                .alias(c)
                for c in blank
            ]
        )
    print(render_table(shown.drop("comparable"), "table"))
    _not_applicable(summ)
    for line in _standing(cand, args):
        print(line)
    # One rule with the dashboard: aggregates (the table above, these counts) include held-out
    # questions; the list of questions to look at leaves them out unless asked (tuning on them overfits).
    counts = cmp.per_question.group_by("status").len().sort("status")
    held = cmp.n_heldout
    print(
        "questions: "
        + ", ".join(f"{r['status']} {r['len']}" for r in counts.iter_rows(named=True))
        + (f" (all {cmp.per_question.height}, {held} of them held-out)" if held else "")
    )
    worst = filter_questions(cmp, status=["regressed", "mixed"], include_heldout=args.include_heldout).head(
        args.top
    )
    if worst.height:
        hidden = (
            ""
            if args.include_heldout or not held
            else "; held-out questions not listed: add --include-heldout"
        )
        print(f"\nmost regressed (top {worst.height}{hidden}):")
        print(
            render_table(
                worst.select(
                    "qid", "status", "diagnosis", "worst_delta", left=pl.col("left_top_k").list.join(" ")
                ),
                "table",
            )
        )
    return EXIT_OK


def cmd_report(args: argparse.Namespace) -> int:
    from evalcore.comparison import compare
    from evalcore.report import describe, html, markdown, regressed, write

    base, cand = _judged(load_run_arg(args.baseline), args), _judged(load_run_arg(args.candidate), args)
    cmp = compare(base, cand, measures=args.measures or _default_measures(), k=args.k)
    kw = {"by": args.by or None, "top": args.top, "include_heldout": args.include_heldout}
    text = html(cmp, **kw) if args.format == "html" else markdown(cmp, **kw)
    if args.out in (None, "-"):
        sys.stdout.write(text)
        return EXIT_OK
    try:
        write(args.out, text)
    except OSError as exc:
        return usage_error(
            f"{args.out}: cannot write the report ({exc.strerror or exc}). Fix: pick a writable path"
        )
    shown = regressed(cmp, args.top, include_heldout=args.include_heldout).height
    size = len(text.encode())
    shown_size = f"{size / 1e6:.1f} MB" if size >= 100_000 else f"{size / 1e3:.1f} kB"
    print(f"wrote {args.out} ({args.format}, {shown_size}): {describe(cmp, shown)}")
    return EXIT_OK


def _default_measures() -> list[str]:
    from evalcore.metrics.catalogue import DEFAULT_MEASURES

    return list(DEFAULT_MEASURES)


def cmd_gate(args: argparse.Namespace) -> int:
    from evalcore.comparison import compare
    from evalcore.gate import GatePolicy, junit_report, markdown_report, run_gate, write_per_question

    policy = GatePolicy.from_toml(args.config) if args.config else GatePolicy.default()
    base, cand = _judged(load_run_arg(args.baseline), args), _judged(load_run_arg(args.candidate), args)
    measures = list(dict.fromkeys([*_default_measures(), *policy.measures]))
    cmp = compare(base, cand, measures=measures, k=policy.k, permutations=args.permutations)
    res = run_gate(cmp, policy, allow_judge_change=args.allow_judge_change)
    md = markdown_report(res)
    if args.summary:
        Path(args.summary).parent.mkdir(parents=True, exist_ok=True)
        with open(args.summary, "a", encoding="utf-8") as fh:  # append: $GITHUB_STEP_SUMMARY is shared
            fh.write(md)
    if args.junit:
        Path(args.junit).write_text(junit_report(res), encoding="utf-8")
    if args.per_question:
        write_per_question(res, args.per_question)
    print(md)
    return res.exit_code


def add_parsers(sub: Any) -> None:
    """This group's subcommands."""
    s = sub.add_parser("metrics", help="means of every metric for one run, with 95%% CIs")
    s.add_argument("run", help="run folder (or a run id under $RAGTRIAGE_RUNS, default sample_runs)")
    s.add_argument(
        "--by", help="slice by a tag: type, topic, source, split, must_pass, answerable or any tag"
    )
    s.add_argument(
        "-m", "--measure", dest="measures", action="append", help="retrieval measure, e.g. nDCG@10 (repeat)"
    )
    s.add_argument("--format", **FORMAT)
    s.add_argument("--per-question", action="store_true", help="one row per question instead of means")
    s.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples for the CIs")
    s.add_argument("--judge", default="recorded", help=JUDGE_HELP)
    s.add_argument("--store", help=STORE_HELP)
    s.add_argument(
        "--embedder",
        help="also report relevance_ragas (RAGAS answer relevance) with this embedder: "
        "'sentence-transformers:MODEL' or 'module:function' (texts -> vectors); needs --judge REV",
    )
    s.set_defaults(func=cmd_metrics)

    s = sub.add_parser(
        "compare", help="candidate vs baseline: deltas, CIs, paired tests, regressed questions"
    )
    s.add_argument("baseline")
    s.add_argument("candidate")
    s.add_argument("--by", help="summarise per value of this tag")
    s.add_argument("-m", "--measure", dest="measures", action="append")
    s.add_argument("-k", type=int, default=5, help="top k whose labeled chunks are tracked (default 5)")
    s.add_argument("--format", **FORMAT)
    s.add_argument("--per-question", action="store_true", help="with --format json/csv: per-question rows")
    s.add_argument("--permutations", type=int, default=10_000)
    s.add_argument("--top", type=int, default=15, help="how many regressed questions to list")
    s.add_argument("--judge", default="recorded", help=JUDGE_HELP + " (both runs)")
    s.add_argument("--store", help=STORE_HELP)
    s.add_argument(
        "--include-heldout",
        action="store_true",
        help="list held-out questions among the most regressed too (the counts always include them)",
    )
    s.set_defaults(func=cmd_compare)

    s = sub.add_parser(
        "report",
        help="a comparison as one file to share: self-contained HTML (opens offline) or Markdown",
        description="Write BASELINE vs CANDIDATE as one page: the forest plot of every metric's change, "
        "the summary, each slice's significant deltas, the judges and test set versions, and the most "
        "regressed questions side by side with their answers, chunks and claims. HTML opens in a browser "
        "with no server and no network; Markdown fits a pull-request comment.",
    )
    s.add_argument("baseline")
    s.add_argument("candidate")
    s.add_argument("--out", "-o", help="the file to write (default: standard output)")
    s.add_argument("--format", choices=["html", "markdown"], default="html")
    s.add_argument("--by", action="append", help="a tag to break down by (repeat; default: every tag)")
    s.add_argument("-m", "--measure", dest="measures", action="append")
    s.add_argument("-k", type=int, default=5, help="top k whose labeled chunks are tracked (default 5)")
    s.add_argument("--top", type=int, default=10, help="how many regressed questions to show (default 10)")
    s.add_argument("--judge", default="recorded", help=JUDGE_HELP + " (both runs)")
    s.add_argument("--store", help=STORE_HELP)
    s.add_argument(
        "--include-heldout", action="store_true", help="show held-out questions among the regressed"
    )
    s.set_defaults(func=cmd_report)

    s = sub.add_parser(
        "gate", help="fail CI when the candidate regresses (exit 0 pass, 1 regression, 2 bad input)"
    )
    s.add_argument("--baseline", required=True)
    s.add_argument("--candidate", required=True)
    s.add_argument(
        "--allow-judge-change",
        action="store_true",
        help="gate faithfulness, correctness and relevance even when the runs' judges differ",
    )
    s.add_argument("--judge", default="recorded", help=JUDGE_HELP + " (both runs)")
    s.add_argument("--store", help=STORE_HELP)
    s.add_argument("--config", help="TOML policy (see docs/ci-gate.md)")
    s.add_argument("--summary", help="append a markdown summary here (e.g. $GITHUB_STEP_SUMMARY)")
    s.add_argument("--junit", help="write JUnit XML here")
    s.add_argument("--per-question", help="write per-question results here (.csv or .json)")
    s.add_argument("--permutations", type=int, default=10_000)
    s.set_defaults(func=cmd_gate)
