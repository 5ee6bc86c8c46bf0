"""Commands on files: the JSON Schemas, validation, trec_eval as a drop-in, and imports from other tools."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from evalcore.cli.common import (
    EXIT_FAIL,
    EXIT_OK,
    OUT_HELP,
    TESTSET_HELP,
    print_problems,
    usage_error,
)
from evalcore.words import count


def cmd_schema(args: argparse.Namespace) -> int:
    from evalcore.schema import json_schemas

    print(json.dumps(json_schemas(), indent=2))
    return EXIT_OK


def cmd_validate(args: argparse.Namespace) -> int:
    from evalcore.errors import Problems
    from evalcore.runs.load import load_runs, read_run
    from evalcore.runs.testset import read_testset

    p = Path(args.path)
    if not p.exists():
        return usage_error(f"{p} does not exist")
    problems = Problems()
    loaded = 0
    if p.is_file():
        ts = read_testset(p, problems)
        loaded = int(ts is not None)
        what = f"test set {p} ({ts.cases.height} questions, version {ts.version})" if ts else ""
    elif (p / "run.json").exists():
        run = read_run(p, problems)
        loaded = int(run is not None)
        what = f"run {run.run_id} ({run.results.height} results)" if run else ""
    else:
        from evalcore.runs.groups import group_runs
        from evalcore.runs.load import discover_runs

        lr = load_runs(p)
        problems.items = lr.problems
        loaded = len(lr.runs)
        found = discover_runs(p)
        if not found:
            # A CI step pointed at the wrong folder must fail, not pass on nothing.
            print_problems(problems.items, sys.stdout)
            print(f"FAILED: no run folder under {p} (a run folder holds run.json); check the path")
            return EXIT_FAIL
        ok = {r.path.resolve() for r in lr.runs.values()}
        failed = [f for f in found if f.resolve() not in ok]
        groups = group_runs(lr.runs.values(), p)
        what = f"{loaded} of {count(len(found), 'run')} loaded" + (
            f" ({len(groups)} test sets: "
            + "; ".join(f"{g.name}: {', '.join(g.run_ids)}" for g in groups)
            + ")"
            if len(groups) > 1
            else ""
        )
        if failed:
            what += "; failed: " + ", ".join(str(f.relative_to(p)) if f != p else str(f) for f in failed)
    print_problems(problems.items, sys.stdout)
    n_err, n_warn = len(problems.errors), len(problems.warnings)
    print(
        f"{'OK' if not n_err else 'FAILED'}: {what or 'nothing loaded'}; {count(n_err, 'error')}, {count(n_warn, 'warning')}"
    )
    return EXIT_FAIL if n_err else EXIT_OK


def cmd_trec(args: argparse.Namespace) -> int:
    from evalcore.runs.trec import read_trec
    from evalcore.trec_eval import format_rows, parse_trec_measures, trec_eval

    request = parse_trec_measures(args.measure)
    files = read_trec(args.qrels, args.run)
    per_q, summary = trec_eval(
        files,
        request,
        level=args.level,
        complete=args.complete,
        per_query=args.query,
        limit=args.max_docs,
        num_docs=args.num_docs,
        levels="fused" if args.fused_levels else args.levels,
    )
    if request.skipped:
        print(f"evalcore trec: not implemented, left out: {', '.join(request.skipped)}", file=sys.stderr)
    sys.stdout.write(format_rows((per_q if args.query else []) + ([] if args.nosummary else summary)))
    return EXIT_OK


def cmd_import(args: argparse.Namespace) -> int:
    from evalcore.runs.importers import import_ragas, import_ragchecker, import_trace_files, import_trec

    ts = Path(args.testset) if args.testset else Path(args.out) / "testset.jsonl"
    existed = ts.exists()
    if args.source == "traces":
        done = import_trace_files(args.files, args.out, run_id=args.run_id, testset=args.testset)
        print_problems(done.problems)
        folder = done.folder
        print(f"read {count(done.traces, 'trace')}; production log {done.log} (for Signals)")
    elif args.source == "trec":
        folder = import_trec(args.qrels, args.run, args.out, run_id=args.run_id, testset=args.testset)
    elif args.source == "ragchecker":
        folder = import_ragchecker(args.file, args.out, run_id=args.run_id, testset=args.testset)
    else:
        folder = import_ragas(args.file, args.out, run_id=args.run_id, testset=args.testset)
    print(f"wrote {folder}; test set {ts}" + (" (already there, reused)" if existed else " (written)"))
    notes = json.loads((folder / "run.json").read_text(encoding="utf-8")).get("notes")
    if notes:
        print(f"note: {notes}", file=sys.stderr)
    return EXIT_OK


def add_parsers(sub: Any) -> None:
    """This group's subcommands."""
    s = sub.add_parser("schema", help="print the JSON Schema of every file format")
    s.set_defaults(func=cmd_schema)

    s = sub.add_parser("validate", help="check a runs folder, a run folder or a test set; exit 1 on errors")
    s.add_argument("path")
    s.set_defaults(func=cmd_validate)

    s = sub.add_parser(
        "trec", help="drop-in trec_eval: evalcore trec QRELS RUN [-q] [-c] [-l N] [-m MEASURE]"
    )
    s.add_argument("qrels")
    s.add_argument("run")
    s.add_argument("-q", dest="query", action="store_true", help="print per-query values too")
    s.add_argument(
        "-c", dest="complete", action="store_true", help="average over all qrels queries (missing = 0)"
    )
    s.add_argument("-l", dest="level", type=int, default=1, help="relevance level (default 1)")
    s.add_argument(
        "-m",
        dest="measure",
        action="append",
        help="measure, e.g. P.5,10 / iprec_at_recall..1,.2 / utility.2,-1,0,0 / official / all_trec",
    )
    s.add_argument("-n", dest="nosummary", action="store_true", help="no summary (the 'all' rows)")
    s.add_argument(
        "-M", dest="max_docs", type=int, default=0, help="evaluate only the top M documents of each query"
    )
    s.add_argument(
        "-N", dest="num_docs", type=int, default=0, help="documents in the collection (for utility)"
    )
    s.add_argument(
        "--levels",
        choices=["round", "x86", "fused"],
        default="round",
        help="how iprec_at_recall and 11pt_avg count a recall level's documents: round (trec_eval 10, "
        "the default), x86 (trec_eval 9 on x86-64, and pytrec_eval), fused (trec_eval 9 on arm64, "
        "whose outputs its test/ folder holds)",
    )
    s.add_argument("--fused-levels", action="store_true", help=argparse.SUPPRESS)  # = --levels fused
    s.set_defaults(func=cmd_trec)

    s = sub.add_parser("import", help="convert TREC or Ragas files into a ragtriage test set + run")
    isub = s.add_subparsers(dest="source", required=True)
    t = isub.add_parser("trec", help="TREC qrels + a TREC run (qid Q0 docno rank score tag)")
    t.add_argument("--qrels", required=True, help="qrels: qid iter docno rel")
    t.add_argument("--run", required=True, help="run: qid Q0 docno rank score tag")
    t.add_argument("--out", required=True, help=OUT_HELP)
    t.add_argument("--run-id", help="the run's folder name and id (default: the run's tag)")
    t.add_argument("--testset", help=TESTSET_HELP)
    t.set_defaults(func=cmd_import)
    r = isub.add_parser("ragas", help="a Ragas export: CSV, JSON or JSON Lines (Ragas 0.1 column names too)")
    r.add_argument("file", help="the export: .csv, .json or .jsonl")
    r.add_argument("--out", required=True, help=OUT_HELP)
    r.add_argument("--run-id", help="the run's folder name and id (default: the file's name)")
    r.add_argument("--testset", help=TESTSET_HELP)
    r.set_defaults(func=cmd_import)
    c = isub.add_parser(
        "ragchecker",
        help="RAGChecker's checking output (checking_outputs.json): its claims as judge output, its metrics as ext:",
    )
    c.add_argument("file", help="the checker's output JSON")
    c.add_argument("--out", required=True, help=OUT_HELP)
    c.add_argument("--run-id", help="the run's folder name and id (default: the file's name)")
    c.add_argument("--testset", help=TESTSET_HELP)
    c.set_defaults(func=cmd_import)
    c = isub.add_parser(
        "traces",
        help="traces: OTLP JSON with OpenInference attributes (Phoenix, Arize, OpenLLMetry), Phoenix span "
        "exports, Langfuse exports; a run plus a production log (OUT/logs/RUN_ID.jsonl) for Signals",
    )
    c.add_argument("files", nargs="+", help="trace files (.json, .jsonl, .parquet)")
    c.add_argument("--out", required=True, help=OUT_HELP)
    c.add_argument("--run-id", help="the run's folder name and id (default: the first file's name)")
    c.add_argument("--testset", help=TESTSET_HELP)
    c.set_defaults(func=cmd_import)
