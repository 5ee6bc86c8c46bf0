"""Commands on test sets: health, versions, remapping, the review queue and synthetic questions."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from typing import Any

import polars as pl

from evalcore.cli.common import (
    EXIT_FAIL,
    EXIT_OK,
    STORE_HELP,
    add_timeout,
    load_run_arg,
    open_store,
    render_table,
    usage_error,
)
from evalcore.words import count


def _need(spec: str) -> tuple[str, float, str]:
    """``METRIC:CHANGE[:SLICE]`` of ``--need``, e.g. ``R@5:-0.02:billing``."""
    parts = spec.split(":")
    if len(parts) not in (2, 3):
        msg = f"--need {spec!r}: expected METRIC:CHANGE[:SLICE], e.g. R@5:-0.02:billing"
        raise ValueError(msg)
    try:
        delta = float(parts[1])
    except ValueError:
        delta = math.nan
    if not -1 < delta < 1 or delta == 0:
        msg = (
            f"--need {spec!r}: the change must be a number between -1 and 1, not 0 (-0.02 is a 2-point drop)"
        )
        raise ValueError(msg)
    return parts[0], delta, parts[2] if len(parts) == 3 else "all"


def cmd_testset_stats(args: argparse.Namespace) -> int:
    from evalcore.runs.testset import read_testset
    from evalcore.score import score_run
    from evalcore.testset.coverage import coverage
    from evalcore.testset.overlap import chunk_texts, most_overlapping, overlap_summary, overlap_table
    from evalcore.testset.power import DEFAULT_METRICS, needed, power_table
    from evalcore.testset.remap import read_chunks

    ts = read_testset(args.testset)
    assert ts is not None
    if args.by not in ts.tag_names():
        return usage_error(
            f"--by {args.by!r} is not a tag of this test set; its tags: {', '.join(ts.tag_names())}"
        )
    cov = coverage(ts, min_topic=args.min_topic)
    runs = [load_run_arg(r) for r in (args.run, args.against) if r]
    for run in runs:
        if run.testset.sha256 != ts.sha256:
            return usage_error(
                f"run {run.manifest.run_id} answered another version of the test set "
                f"({run.testset.sha256[:12]}, not {ts.sha256[:12]}): pass a run of this version"
            )
    frames = [r.retrieved for r in runs] + ([read_chunks(args.chunks)] if args.chunks else [])
    ov = overlap_table(ts, chunk_texts(frames))
    power = how = None
    targets = []
    if runs:
        scores = score_run(runs[0])
        other = score_run(runs[1]) if len(runs) > 1 else None
        power, how = power_table(ts, scores, by=args.by, other=other)
        slices = set(power["slice"].to_list()) | set(
            ts.tags.filter(pl.col("tag") == args.by)["value"].to_list()
        )
        for spec in args.need or []:
            metric, delta, slice_ = _need(spec)
            if metric not in DEFAULT_METRICS:
                return usage_error(
                    f"--need {spec!r}: power is reported for {', '.join(DEFAULT_METRICS)}, not {metric!r}"
                )
            if slice_ != "all" and slice_ not in slices:
                return usage_error(
                    f"--need {spec!r}: {slice_!r} is not a value of tag {args.by!r} (or 'all')"
                )
            targets.append(needed(power, metric, delta, slice_))
    elif args.need:
        return usage_error("--need needs --run: the spread comes from a run's scores")
    if args.format == "json":
        out = cov.as_dict() | {
            "overlap": {
                "summary": overlap_summary(ov).to_dicts(),
                "most_overlapping": most_overlapping(ov).to_dicts(),
            },
            "power": None if power is None else {"by": args.by, "spread": how, "table": power.to_dicts()},
            "needed": [t.__dict__ | {"sentence": t.sentence()} for t in targets],
        }
        print(json.dumps(out, indent=1, default=str))
        return EXIT_OK
    print(f"{ts.path}  version {ts.version}  {cov.questions} questions")
    print(
        f"  answerable {cov.answerable} (no labeled chunk yet: {cov.unlabeled}), unanswerable {cov.unanswerable}, "
        f"must-pass {cov.must_pass}, held-out {cov.heldout}"
    )
    print(
        f"  reference answers {cov.with_reference}, evidence spans {cov.with_evidence}, labeled chunks per "
        f"question {cov.labeled_chunks or '-'}"
    )
    for name, table in cov.slices.items():
        print(f"\nby {name}")
        print(render_table(table, "table"))
    summary = overlap_summary(ov)
    if not summary.is_empty():
        print("\nquestion words found in the labeled chunk (overlap; high flatters keyword retrieval)")
        print(render_table(summary, "table"))
        top = most_overlapping(ov, 5)
        if not top.is_empty():
            print("most overlapping synthetic questions (review these first)")
            print(render_table(top.select("qid", "overlap", "question"), "table"))
    if power is not None:
        print(f"\nsmallest detectable change (paired, alpha 0.05, power 0.8; spread {how}), by {args.by}")
        wide = power.pivot(on="metric", index="slice", values="mde")
        print(render_table(wide, "table"))
        for t in targets:
            print(t.sentence())
    else:
        print(
            "\n(pass --run RUN for the power of each slice, --against RUN2 to measure the spread from two runs)"
        )
    if cov.warnings:
        print("\nwarnings")
        for w in cov.warnings:
            print(f"  - {w}")
    return EXIT_OK


def cmd_testset_diff(args: argparse.Namespace) -> int:
    from evalcore.runs.testset import read_testset
    from evalcore.testset.versions import diff, diff_counts

    old, new = read_testset(args.old), read_testset(args.new)
    assert old is not None and new is not None
    table = diff(old, new)
    if args.format == "json":
        print(
            json.dumps(
                {
                    "old": old.sha256,
                    "new": new.sha256,
                    "counts": diff_counts(table),
                    "changes": table.to_dicts(),
                },
                indent=1,
            )
        )
        return EXIT_OK
    counts = diff_counts(table)
    summary = sys.stdout if args.format == "table" else sys.stderr  # CSV on stdout stays CSV
    print(f"{old.path} ({old.version}) -> {new.path} ({new.version})", file=summary)
    print("  " + ", ".join(f"{n} {c}" for c, n in counts.items()), file=summary)
    if not table.is_empty() or args.format == "csv":
        print(render_table(table, args.format))
    return EXIT_OK


def cmd_testset_remap(args: argparse.Namespace) -> int:
    from evalcore.testset.remap import read_chunks, remap
    from evalcore.testset.write import read_cases, write_version

    if args.corpus:  # the chunks a run retrieved, placed in their documents
        from evalcore.testset.remap import chunks_located

        run = load_run_arg(args.chunks)
        table, unplaced = chunks_located(run.retrieved, args.corpus)
        print(
            f"{count(table.height, 'chunk')} retrieved by {run.manifest.run_id} placed in {args.corpus}"
            + (f"; {len(unplaced)} could not be placed (no text, or not in its document)" if unplaced else "")
        )  # FORMAT: skip
    else:
        table = read_chunks(args.chunks)
    result = remap(read_cases(args.testset), table, min_share=args.min_share)
    sha = write_version(result.cases, args.out, source=args.testset)
    counts = result.counts()
    print(f"wrote {args.out} (version {sha[:12]}): " + ", ".join(f"{n} {k}" for k, n in counts.items()))
    lost = result.unmapped
    if not lost.is_empty():
        print(f"{count(lost.height, 'question')} whose labels did not all carry over (kept, listed here):")
        print(render_table(lost, "table"))
    return EXIT_OK


def cmd_synth(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from evalcore.judge.client import JudgeConfig
    from evalcore.runs.testset import read_testset
    from evalcore.testset.remap import read_chunks
    from evalcore.testset.synth import chunks_from_corpus, chunks_from_table, estimate, plan, synthesize

    ts = read_testset(args.testset)
    assert ts is not None
    chunks = chunks_from_corpus(args.corpus) if args.corpus else chunks_from_table(read_chunks(args.chunks))
    if not chunks:
        return usage_error("no chunk with text to write questions from")
    config = JudgeConfig()
    if args.model:
        config = replace(config, model=args.model)
    if args.concurrency:
        config = replace(config, concurrency=args.concurrency)
    config = replace(config, timeout=args.timeout or config.timeout)
    planned = plan(chunks, args.n, multi=args.multi_chunk, unanswerable=args.unanswerable, seed=args.seed)
    with open_store(args.store) as store:
        print(estimate(planned, config, store))
        if args.dry_run:
            return EXIT_OK
        got = synthesize(store, ts.sha256, planned, config)
    print(
        f"{count(got.queued, 'question')} queued for review ({got.cached} from the cache) for {ts.path.name} "
        f"version {ts.version}; none is in the test set until a person accepts it (the Test set page's "
        f"Review view, then `evalcore testset write {args.testset}`)"
    )
    for f in got.failed:
        print(f"  failed: {f}", file=sys.stderr)
    return EXIT_OK if not got.failed else EXIT_FAIL


def cmd_testset_queue(args: argparse.Namespace) -> int:
    from evalcore.runs.testset import read_testset

    ts = read_testset(args.testset)
    assert ts is not None
    with open_store(args.store) as store:
        cands = store.candidates(testset=ts.sha256)
    rows = [
        {
            "id": c.id,
            "origin": c.origin,
            "status": c.status,
            "overlap": c.overlap,
            "question": c.final["question"],
        }
        for c in cands
    ]
    table = pl.DataFrame(
        rows,
        schema={
            "id": pl.Int64,
            "origin": pl.String,
            "status": pl.String,
            "overlap": pl.Float64,
            "question": pl.String,
        },
    )  # FORMAT: skip
    if args.format == "json":
        print(json.dumps(rows, indent=1))
        return EXIT_OK
    counts = dict(table.group_by("status").len().iter_rows()) if rows else {}
    said = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    print(
        f"{ts.path.name} version {ts.version}: {count(len(rows), 'candidate')}"
        + (f" ({said})" if said else "")
    )
    if rows:
        print(render_table(table, "table"))
    return EXIT_OK


def cmd_testset_write(args: argparse.Namespace) -> int:
    from evalcore.testset.review import write_accepted

    with open_store(args.store) as store:
        out, sha, added = write_accepted(store, args.testset, args.out, by=os.environ.get("USER"))
    print(
        f"wrote {out} (version {sha[:12]}): {args.testset} plus {count(added, 'accepted case')}; the old file is untouched"
    )
    return EXIT_OK


def add_parsers(sub: Any) -> None:
    """This group's subcommands."""
    s = sub.add_parser(
        "testset", help="a test set's coverage and power, what changed, and labels for a new chunking"
    )
    tsub = s.add_subparsers(dest="testset_cmd", required=True, metavar="{stats,diff,remap,queue,write}")
    t = tsub.add_parser(
        "stats", help="coverage, thin slices, synthetic overlap and (with --run) power per slice"
    )
    t.add_argument("testset", help="the test set (.jsonl)")
    t.add_argument(
        "--run", help="a run of this test set: its spread gives each slice's smallest detectable change"
    )
    t.add_argument(
        "--against", help="a second run: the spread of the two runs' differences instead of an estimate"
    )
    t.add_argument("--by", default="topic", help="the tag power is reported per (default topic)")
    t.add_argument(
        "--need",
        action="append",
        metavar="METRIC:CHANGE[:SLICE]",
        help="questions needed to detect this change, e.g. R@5:-0.02:billing (repeatable; needs --run)",
    )
    t.add_argument(
        "--chunks", help="a chunk table (chunks.jsonl with text) to measure question/chunk overlap"
    )
    t.add_argument(
        "--min-topic", type=int, default=10, help="warn about topics with fewer questions (default 10)"
    )
    t.add_argument("--format", choices=["table", "json"], default="table")
    t.set_defaults(func=cmd_testset_stats)
    t = tsub.add_parser("diff", help="questions added, removed, relabeled or edited between two versions")
    t.add_argument("old")
    t.add_argument("new")
    t.add_argument("--format", choices=["table", "json", "csv"], default="table")
    t.set_defaults(func=cmd_testset_diff)
    t = tsub.add_parser("remap", help="evidence spans to the chunk ids of a new chunking, as a new version")
    t.add_argument("testset")
    t.add_argument(
        "--chunks",
        required=True,
        help="the new chunk table (chunks.jsonl), or a run folder (holding one, or with --corpus: its retrieved chunks)",
    )
    t.add_argument("--corpus", help="documents.jsonl: place the chunks a run retrieved in their documents")
    t.add_argument("--out", required=True, help="the new version's file (never an existing one)")
    t.add_argument(
        "--min-share",
        type=float,
        default=0.25,
        help="share of a span a chunk must hold to take its label (default 0.25)",
    )
    t.set_defaults(func=cmd_testset_remap)
    t = tsub.add_parser("queue", help="candidates waiting for review (synthetic, promoted) and their status")
    t.add_argument("testset")
    t.add_argument("--store", help=STORE_HELP)
    t.add_argument("--format", choices=["table", "json"], default="table")
    t.set_defaults(func=cmd_testset_queue)
    t = tsub.add_parser("write", help="accepted candidates appended to a new version of the test set")
    t.add_argument("testset")
    t.add_argument(
        "--out", help="the new file (default <name>.reviewed.jsonl beside it; never an existing one)"
    )
    t.add_argument("--store", help=STORE_HELP)
    t.set_defaults(func=cmd_testset_write)

    s = sub.add_parser("synth", help="synthetic questions from chunks by the judge model, queued for review")
    src = s.add_mutually_exclusive_group(required=True)
    src.add_argument("--corpus", help="documents.jsonl (doc_id, text): cut into paragraphs")
    src.add_argument("--chunks", help="a chunk table (chunks.jsonl with text), or a run folder holding one")
    s.add_argument(
        "--testset", required=True, help="the test set the questions are for (they wait in its queue)"
    )
    s.add_argument("--n", type=int, default=20, help="questions to write (default 20)")
    s.add_argument("--multi-chunk", type=float, default=0.2, help="share needing two chunks (default 0.2)")
    s.add_argument(
        "--unanswerable", type=float, default=0.1, help="share the chunks do not answer (default 0.1)"
    )
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--model", help="the model (default: the judge's pinned model)")
    s.add_argument("--concurrency", type=int)
    s.add_argument("--dry-run", action="store_true", help="print the estimate and stop")
    add_timeout(s)
    s.add_argument("--store", help=STORE_HELP)
    s.set_defaults(func=cmd_synth)
