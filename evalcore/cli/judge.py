"""Commands on the LLM judge: re-judging into revisions, bias probes, and the revisions' list."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import polars as pl

from evalcore.cli.common import (
    EXIT_FAIL,
    EXIT_OK,
    FORMAT,
    STORE_HELP,
    add_timeout,
    load_run_arg,
    open_store,
    render_table,
    usage_error,
)
from evalcore.errors import SetupError
from evalcore.words import agree, count


def cmd_judge(args: argparse.Namespace) -> int:
    from evalcore.judge.client import JudgeConfig, cost, count_tokens, estimate, items_for
    from evalcore.judge.rerun import config_like, rerun

    run = load_run_arg(args.run)
    qids = list(args.qids) if args.qids else None
    if args.where:
        tag, _, value = args.where.partition("=")
        tagged = run.testset.tags.filter((pl.col("tag") == tag) & (pl.col("value") == value))["qid"].to_list()
        if not tagged:
            return usage_error(f"no question has {tag}={value}; tags: {', '.join(run.testset.tag_names())}")
        qids = [q for q in (qids or tagged) if q in set(tagged)]
    model = args.model
    if args.like:
        try:
            with open_store(args.store) as store:  # judged here before: its newest revision's judge
                model = config_like(store, load_run_arg(args.like)).model
        except ValueError as exc:
            return usage_error(str(exc))
    config = JudgeConfig(
        **({"model": model} if model else {}),
        concurrency=args.concurrency,
        batch_poll=args.poll,
        timeout=args.timeout or JudgeConfig.timeout,
    )
    with open_store(args.store) as store:
        items = items_for(run, qids)
        if not items:
            return usage_error("no question to judge (check --qids / --where)")
        counted = None
        # A dry run asks the API to count the input tokens (free, no judgment). A real run does not:
        # one count_tokens request per question would double the requests it makes; it says after
        # judging how close the local estimate came to the usage instead.
        if args.dry_run and os.environ.get("ANTHROPIC_API_KEY"):
            todo = [i for i in items if store.cached(i.key(config.model)) is None]
            try:
                counted = count_tokens(todo, config)
            except Exception as exc:  # an estimate is still worth printing: the local one, said so
                sys.stderr.write(f"could not count tokens with the API ({exc}); a local estimate follows\n")
        est = estimate(items, config, store, batch=args.batch, counted=counted)
        print(f"judge {config.model} on {run.run_id}: {est}")
        if args.dry_run:
            print("dry run: nothing was sent")
            return EXIT_OK
        done = [0]

        def progress(v: Any) -> None:
            done[0] += 1
            sys.stderr.write(f"\r{done[0]}/{len(items)} answered by the judge or the cache")
            sys.stderr.flush()

        def batch_event(batch_id: str, event: str) -> None:
            if event == "submitted":
                sys.stderr.write(
                    f"batch {batch_id} submitted (Message Batches, results within 24 h); polling every "
                    f"{config.batch_poll:g} s. Ctrl-C is safe: the same command picks the batch up again\n"
                )
            elif event == "resumed":
                sys.stderr.write(f"batch {batch_id}, submitted by an earlier run, picked up again\n")

        try:
            report = rerun(
                run,
                store,
                config,
                qids=[i.qid for i in items],
                on_verdict=progress,
                batch=args.batch,
                on_batch=batch_event,
                reserve=est.dollars,  # the figure printed above is what the budget is asked for
            )
        except KeyboardInterrupt:
            sys.stderr.write(
                f"\ninterrupted: the {count(done[0], 'verdict')} that arrived are in the store, and any batch "
                "submitted is remembered; run the same command again to judge the rest (what is done "
                "comes from the cache, free)\n"
            )
            return 130
        sys.stderr.write("\n")
        tin, tout = report.tokens
        dollars = cost(config, tin, tout, batched=report.batched)
        print(
            f"revision {report.revision_id}: {report.judged} judged, {report.cached} from the cache, "
            f"{len(report.failed)} failed; {tin:,} input + {tout:,} output tokens (${dollars:.2f}"
            f"{', batch prices' if report.batched else ''})"
        )
        if report.judged and est.input_tokens:
            off = (tin - est.input_tokens) / est.input_tokens
            print(
                f"estimate against usage: {est.input_tokens:,} input tokens estimated, {tin:,} used "
                f"({off:+.0%}); ${est.dollars:.2f} estimated, ${dollars:.2f} spent"
            )
        for v in sorted(report.failed, key=lambda v: v.qid):
            print(f"  failed {v.qid}: {v.reason}")
        flagged = _flagged(run, store, report.revision_id)
        if flagged:
            print(f"judge errors caught by the quote check (SUPPORTED, quote not in the context): {flagged}")
        budget = store.budget
        if budget.person is not None or budget.deployment is not None:  # what the day's budget has left
            spent = store.spent_today()
            mine, everyone = spent.get(store.actor.email, 0.0), sum(spent.values())
            left = [
                f"{store.actor.email} ${budget.person - mine:.2f} of ${budget.person:.2f}"
                if budget.person is not None
                else "",
                f"the deployment ${budget.deployment - everyone:.2f} of ${budget.deployment:.2f}"
                if budget.deployment is not None
                else "",
            ]
            print("budget left today: " + "; ".join(x for x in left if x))
        if report.judged or report.cached:
            print(f"score it: evalcore metrics {args.run} --judge {report.revision_id}")
    return EXIT_FAIL if report.failed else EXIT_OK


def _flagged(run: Any, store: Any, revision_id: int) -> str:
    from evalcore.judge.revision import with_verdicts
    from evalcore.score import score_run

    scores = score_run(with_verdicts(run, store.verdicts(revision_id), revision_id))
    hit = scores.filter(pl.col("unverified_quotes") > 0)
    return ", ".join(f"{q} ({n})" for q, n in hit.select("qid", "unverified_quotes").iter_rows())


def cmd_revisions(args: argparse.Namespace) -> int:

    run = load_run_arg(args.run)
    sha = run.results_sha256()
    if args.diff:
        from evalcore.judge.revision import diff, judged_by

        a, b = args.diff
        with open_store(args.store) as store:
            changed = diff(judged_by(store, run, a), judged_by(store, run, b))
        print(
            f"{run.run_id}: verdicts of {a} → {b}, {count(changed.height, 'question')} {agree(changed.height, 'differs', 'differ')}"
        )
        if changed.height:
            print(render_table(changed, args.format if args.format != "table" else "table"))
        return EXIT_OK
    with open_store(args.store) as store:
        revs = store.revisions(run.run_id)
    print(
        f"{run.run_id}: 'recorded' (the judge output in the run file) and {count(len(revs), 'revision')} in {store.path}"
    )
    for r in revs:
        stale = "" if r.results_sha256 == sha else "  (for an earlier version of the results file)"
        print(
            f"  {r.id:>4}  {r.created[:19]}  {r.model}  prompt {r.prompt_hash[:10]}  schema {r.schema_hash[:10]}"
            f"  {count(r.verdicts, 'verdict')}, {r.failed} failed{stale}"
            + (f"  by {r.created_by}" if r.created_by else "")
        )
    return EXIT_OK


def cmd_probe(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from evalcore.calibration.probes import PROBES, plan, probe
    from evalcore.judge.client import JudgeConfig

    names = [p.strip() for p in args.probe.split(",") if p.strip()] if args.probe else list(PROBES)
    unknown = [p for p in names if p not in PROBES]
    if unknown:
        return usage_error(
            f"unknown {agree(len(unknown), 'probe', 'probes')} {', '.join(unknown)}: choose from {', '.join(PROBES)}"
        )
    run = load_run_arg(args.run)
    config = JudgeConfig()
    if args.model:
        config = replace(config, model=args.model)
    config = replace(config, concurrency=args.concurrency, timeout=args.timeout or config.timeout)
    with open_store(args.store) as store:
        print(plan(run, store, config, names, args.n))
        if args.dry_run:
            print("dry run: nothing was sent")
            return EXIT_OK
        try:
            results = probe(run, store, config, probes=names, n=args.n, seed=args.seed)
        except SetupError as exc:
            return usage_error(str(exc))
    for r in results:
        print(str(r))
        failed = r.detail.get("failed")
        if failed:
            print(f"  {count(failed, 'judgment')} failed and {agree(failed, 'is', 'are')} left out")
        variants = r.detail.get("by_variant", {})
        if len(variants) > 1:
            print("  " + "; ".join(f"{k}: {v['flips']} of {v['n']}" for k, v in variants.items()))
    print(f"kept in {store.path}; the Calibration page lists them")
    return EXIT_OK


def add_parsers(sub: Any) -> None:
    """This group's subcommands."""
    s = sub.add_parser("judge", help="judge a run's answers with the Anthropic API into a new revision")
    s.add_argument("run", help="run folder")
    s.add_argument("--qids", nargs="+", help="only these questions")
    s.add_argument("--where", help="only questions with this tag, e.g. topic=billing")
    s.add_argument("--model", help="the judge model (pinned by default)")
    s.add_argument("--like", help="judge as this other run was judged (its model), so the two compare")
    s.add_argument("--concurrency", type=int, default=16, help="requests at once (default 16)")
    s.add_argument("--dry-run", action="store_true", help="print the estimate and send nothing")
    s.add_argument(
        "--batch",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="through the Message Batches API (half price, results within 24 h); default: when more "
        "than 500 questions are not in the cache",
    )
    s.add_argument("--poll", type=float, default=30.0, help="seconds between polls of a batch (default 30)")
    add_timeout(s)
    s.add_argument("--store", help=STORE_HELP)
    s.set_defaults(func=cmd_judge)

    s = sub.add_parser(
        "probe", help="bias probes: how often the judge's verdict flips under harmless changes"
    )
    s.add_argument("run", help="run folder")
    s.add_argument(
        "--probe",
        help="comma-separated: retest, order, position, verbosity, distractors, injection (default: all; "
        "retest, the noise floor, is always run)",
    )
    s.add_argument("--n", type=int, default=50, help="questions to probe (default 50)")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--model", help="the judge model (pinned by default)")
    s.add_argument("--concurrency", type=int, default=16, help="requests at once (default 16)")
    s.add_argument("--dry-run", action="store_true", help="print what it would send and cost; send nothing")
    add_timeout(s)
    s.add_argument("--store", help=STORE_HELP)
    s.set_defaults(func=cmd_probe)

    s = sub.add_parser("revisions", help="list a run's judge revisions, or --diff two of them")
    s.add_argument("run", help="run folder")
    s.add_argument("--store", help=STORE_HELP)
    s.add_argument(
        "--diff",
        nargs=2,
        metavar=("A", "B"),
        help="per question: claims added/removed, verdicts flipped, scores",
    )
    s.add_argument("--format", **FORMAT)
    s.set_defaults(func=cmd_revisions)
