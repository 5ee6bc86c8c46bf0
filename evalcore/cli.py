"""The ``evalcore`` command line. Exit codes: 0 ok / gate passed, 1 gate failed or invalid input found
by ``validate``, 2 bad input or usage."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path
from typing import Any

import polars as pl

from evalcore._version import __version__
from evalcore.errors import InputError, Problem, SetupError, redact
from evalcore.store.audit import OverBudget
from evalcore.words import agree, count

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def _err(msg: str) -> int:
    print(f"evalcore: error: {_shown(msg)}", file=sys.stderr)
    return EXIT_USAGE


def _store(target: Any) -> Any:
    """The store, opened as whoever runs the command (:func:`evalcore.access.cli_identity`: the
    local user, or ``$RAGTRIAGE_USER`` under an access file) with the access file's daily budget."""
    from evalcore.access import access_path, cli_identity, load_access
    from evalcore.store import Store

    return Store(target, actor=cli_identity(), budget=load_access(access_path()).budget)


def _print_problems(problems: list[Problem], stream: Any = None) -> None:
    stream = stream or sys.stderr
    for p in problems:
        print(_shown(str(p)), file=stream)


def _runs_env() -> str:
    """The runs location (:func:`evalcore.runs.remote.runs_location`: ``$RAGTRIAGE_RUNS``, a folder
    or a bucket URL read from its mirror, else the bundled sample runs)."""
    from evalcore.runs.remote import is_remote, resolve, runs_location

    where = runs_location()
    if is_remote(where):
        loc = resolve(where)
        _LOCATED.append(loc)
        return str(loc.root)
    return where


def _load_one(path: str) -> Any:
    """A run folder, or ``RUNS_DIR:RUN_ID``/a run id inside ``$RAGTRIAGE_RUNS``."""
    from evalcore.runs.load import discover_runs, load_runs, read_run

    p = Path(path)
    if p.is_dir() and (p / "run.json").exists():
        return read_run(p)
    if p.is_dir():
        inside = [f.relative_to(p).as_posix() for f in discover_runs(p)][:5]
        raise InputError(
            [
                Problem(
                    path,
                    "is a folder without run.json, not a run folder",
                    hint=(
                        f"pass one of the run folders in it ({', '.join(inside)})"
                        if inside
                        else "a run folder holds run.json and results.jsonl; `evalcore validate DIR` checks a folder"
                    ),
                )
            ]
        )
    folder = Path(_runs_env())
    if folder.is_dir():
        lr = load_runs(folder)
        if path in lr.runs:
            return lr.runs[path]
    raise InputError(
        [
            Problem(
                path,
                f"not a run folder (no run.json) and not a run id in {folder}",
                hint="pass the folder that holds run.json",
            )
        ]
    )


def _table(df: pl.DataFrame, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(df.to_dicts(), indent=1, default=str)
    if fmt == "csv":  # CSV has no lists: a list cell (the chunks that left the top k) is joined by spaces
        lists = [c for c, t in df.schema.items() if isinstance(t, pl.List)]
        joined = df.with_columns([pl.col(c).cast(pl.List(pl.String)).list.join(" ") for c in lists])
        return joined.write_csv().rstrip("\n")  # print() ends the last line
    with pl.Config(
        tbl_rows=-1,
        tbl_cols=-1,
        tbl_width_chars=200,
        fmt_str_lengths=60,
        tbl_hide_dataframe_shape=True,
        tbl_hide_column_data_types=True,
        float_precision=4,
    ):
        return str(df)


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
        return _err(f"{p} does not exist")
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
            _print_problems(problems.items, sys.stdout)
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
    _print_problems(problems.items, sys.stdout)
    n_err, n_warn = len(problems.errors), len(problems.warnings)
    print(
        f"{'OK' if not n_err else 'FAILED'}: {what or 'nothing loaded'}; {count(n_err, 'error')}, {count(n_warn, 'warning')}"
    )
    return EXIT_FAIL if n_err else EXIT_OK


def _judged(run: Any, args: argparse.Namespace) -> Any:
    """The run under the judge revision ``--judge`` names (``recorded``: the run file's own)."""
    from evalcore.judge.revision import RECORDED, coverage, judged_by, judged_verdicts

    which = getattr(args, "judge", None) or RECORDED
    if which == RECORDED:
        return run

    with _store(args.store) as store:
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
    with _store(target) as store:
        found = standing(store, run)
    return found.lines() + ([found.unmeasured] if found.unmeasured else [])


def cmd_judge(args: argparse.Namespace) -> int:
    from evalcore.judge.client import JudgeConfig, cost, count_tokens, estimate, items_for
    from evalcore.judge.rerun import config_like, rerun

    run = _load_one(args.run)
    qids = list(args.qids) if args.qids else None
    if args.where:
        tag, _, value = args.where.partition("=")
        tagged = run.testset.tags.filter((pl.col("tag") == tag) & (pl.col("value") == value))["qid"].to_list()
        if not tagged:
            return _err(f"no question has {tag}={value}; tags: {', '.join(run.testset.tag_names())}")
        qids = [q for q in (qids or tagged) if q in set(tagged)]
    model = args.model
    if args.like:
        try:
            with _store(args.store) as store:  # judged here before: its newest revision's judge
                model = config_like(store, _load_one(args.like)).model
        except ValueError as exc:
            return _err(str(exc))
    config = JudgeConfig(
        **({"model": model} if model else {}),
        concurrency=args.concurrency,
        batch_poll=args.poll,
        timeout=args.timeout,
    )
    with _store(args.store) as store:
        items = items_for(run, qids)
        if not items:
            return _err("no question to judge (check --qids / --where)")
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

    run = _load_one(args.run)
    sha = run.results_sha256()
    if args.diff:
        from evalcore.judge.revision import diff, judged_by

        a, b = args.diff
        with _store(args.store) as store:
            changed = diff(judged_by(store, run, a), judged_by(store, run, b))
        print(
            f"{run.run_id}: verdicts of {a} → {b}, {count(changed.height, 'question')} {agree(changed.height, 'differs', 'differ')}"
        )
        if changed.height:
            print(_table(changed, args.format if args.format != "table" else "table"))
        return EXIT_OK
    with _store(args.store) as store:
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


def cmd_audit(args: argparse.Namespace) -> int:
    """The store's audit log: who did what, when (an admin's read)."""
    with _store(args.store) as store:
        rows = store.audit_log(actor=args.actor, action=args.action, since=args.since)
        where = store.path
    df = pl.DataFrame(
        [
            {"id": r.id, "when": r.created[:19], "who": r.actor, "role": r.role, "action": r.action,
             "target": r.target, "detail": json.dumps(r.detail, ensure_ascii=False, sort_keys=True)}
            for r in rows
        ],
        schema={"id": pl.Int64, "when": pl.String, "who": pl.String, "role": pl.String, "action": pl.String,
                "target": pl.String, "detail": pl.String},
    )  # fmt: skip
    if args.format == "table":
        print(f"{count(df.height, 'audit row')} in {where}")
        if not df.height:
            return EXIT_OK
    print(_table(df, args.format))
    return EXIT_OK


def _session(store: Any, which: str) -> Any:
    found = store.find_session(which)
    if found is None:
        names = ", ".join(f"{x.id} ({x.name})" for x in store.sessions()) or "none yet"
        msg = f"no calibration session {which!r} in {store.path} (sessions: {names})"
        raise ValueError(msg)
    return found


def cmd_calibrate_create(args: argparse.Namespace) -> int:
    from evalcore.calibration.sessions import SessionSpec, candidates, create, preview
    from evalcore.judge.revision import judged_by

    run = _load_one(args.run)
    spec = SessionSpec(
        name=args.name,
        target=args.target,
        n=args.n,
        sampling=args.sampling,
        labels_per_item=args.labels_per_item,
        seed=args.seed,
    )
    with _store(args.store) as store:
        cands = candidates(judged_by(store, run, args.judge), spec.target)
        print(f"{run.run_id} under judge {args.judge}: {preview(cands, spec)}")
        if args.dry_run:
            print("dry run: no session created")
            return EXIT_OK
        sid = create(store, run, args.judge, spec)
        session = store.find_session(sid)
        assert session is not None
    print(
        f"session {sid} ({session.name}): {count(session.items, 'item')}, {count(session.labels_per_item, 'label')} each, "
        f"sampled {session.sampling}; label it on the dashboard's Calibration page"
    )
    return EXIT_OK


def cmd_calibrate_status(args: argparse.Namespace) -> int:

    with _store(args.store) as store:
        if not args.session:
            sessions = store.sessions()
            if not sessions:
                print(f"no calibration session in {store.path}; `evalcore calibrate create` makes one")
            for x in sessions:
                print(
                    f"{x.id:>4}  {x.name}  {x.run_id} (judge {x.judge})  {x.target}, {x.sampling}: "
                    f"{x.labels} of {count(x.items * x.labels_per_item, 'label')}"
                )
            return EXIT_OK
        x = _session(store, args.session)
        labels = store.labels(x.id)
        full = store.full_items(x.id)
    per: dict[str, int] = {}
    for lb in labels:
        per[lb.labeler] = per.get(lb.labeler, 0) + 1
    print(
        f"session {x.id} ({x.name}): {x.items} {x.target}, {count(x.labels_per_item, 'label')} each; "
        f"{count(len(labels), 'label')}, {count(len(full), 'item')} complete"
    )
    for who, n in sorted(per.items()):
        print(f"  {who}: {n}")
    return EXIT_OK


def cmd_calibrate_export(args: argparse.Namespace) -> int:
    from evalcore.calibration.report import export_labels

    with _store(args.store) as store:
        sys.stdout.write(
            export_labels(store, _session(store, args.session), args.format, history=args.history)
        )
    return EXIT_OK


def cmd_calibrate_import(args: argparse.Namespace) -> int:
    from evalcore.calibration.report import import_labels

    path = Path(args.file)
    if not path.is_file():
        return _err(f"{path}: no such file")
    fmt = "jsonl" if path.suffix.lower() in (".jsonl", ".json") else "csv"
    with _store(args.store) as store:
        session = _session(store, args.session)
        stored, problems = import_labels(store, session, path.read_text(encoding="utf-8-sig"), fmt, str(path))
    for p in problems:
        print(p, file=sys.stderr)
    print(
        f"{count(stored, 'label')} imported into session {session.name}; {count(len(problems), 'line')} refused"
    )
    return EXIT_FAIL if problems else EXIT_OK


def cmd_agreement(args: argparse.Namespace) -> int:
    from evalcore.calibration.report import session_report
    from evalcore.runs.load import load_runs

    with _store(args.store) as store:
        session = _session(store, args.session)
        tags: dict[str, dict[str, str]] = {}
        if args.by:
            folder = args.runs or _runs_env()
            runs = load_runs(folder).runs
            run = runs.get(session.run_id)
            if run is None:
                return _err(f"run {session.run_id} is not in {folder}; pass --runs FOLDER for --by")
            for qid, tag, value in run.testset.tags.select("qid", "tag", "value").iter_rows():
                tags.setdefault(qid, {})[tag] = value
        rep = session_report(
            store, session, judge=args.judge, by=args.by, tags=tags, resamples=args.resamples
        )
    a = rep.overall

    def row(name: str, x: Any) -> dict[str, Any]:
        return {"slice": name, "items": x.items, "percent": x.percent.value, "kappa": x.kappa.value,
                "ac1": x.ac1.value, "ac1_low": x.ac1.low, "ac1_high": x.ac1.high,
                "unsupported_recall": x.recall_unsupported.value, "unsupported_precision": x.precision_unsupported.value}  # fmt: skip

    if args.format == "json":
        print(
            json.dumps(
                {
                    "session": session.name,
                    "judge": rep.judge,
                    "verdict": rep.verdict(),
                    "overall": row("all", a)
                    | {
                        "human_alpha": a.human_alpha.value if a.human_alpha else None,
                        "confusion": a.confusion,
                        "categories": a.categories,
                    },
                    "by": [row(k, v) for k, v in rep.by.items()],
                    "disagreements": rep.disagreements,
                },
                default=str,
                indent=2,
            )
        )
        return EXIT_OK
    print(f"session {session.name}: {session.run_id} ({session.target}), judge {rep.judge}")
    print(rep.verdict())
    lines = [
        ("percent agreement", a.percent),
        ("Cohen's kappa", a.kappa),
        ("Gwet's AC1", a.ac1),
        ("unsupported: judge precision", a.precision_unsupported),
        ("unsupported: judge recall", a.recall_unsupported),
    ]
    if a.human_alpha is not None:
        lines.insert(0, ("labelers: Krippendorff's alpha", a.human_alpha))
    for (x, y), k in a.pair_kappa.items():
        lines.insert(1, (f"labelers: kappa {x} / {y}", k))
    for name, e in lines:
        print(f"  {name:<34} {e!s:<22} n={e.n}, {count(e.answers, 'answer')}")
    print(f"  confusion (rows: people; columns: judge) {' / '.join(a.categories)}")
    for cat, counts in zip(a.categories, a.confusion, strict=True):
        print(f"    {cat:<16} {'  '.join(f'{c:>4}' for c in counts)}")
    if rep.unmatched:
        print(
            f"  {count(rep.unmatched, 'item')} the judge gave no verdict on (a claim it does not make) {agree(rep.unmatched, 'is', 'are')} left out"
        )
    for slice_name, part in rep.by.items():
        print(f"  {slice_name}: {count(part.items, 'item')}, AC1 {part.ac1}, percent {part.percent}")
    print(f"{count(len(rep.disagreements), 'disagreement')}; the dashboard's Calibration page lists them")
    return EXIT_OK


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
        return _err(f"--by {args.by!r} is not a tag of this test set; its tags: {', '.join(ts.tag_names())}")
    cov = coverage(ts, min_topic=args.min_topic)
    runs = [_load_one(r) for r in (args.run, args.against) if r]
    for run in runs:
        if run.testset.sha256 != ts.sha256:
            return _err(
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
                return _err(
                    f"--need {spec!r}: power is reported for {', '.join(DEFAULT_METRICS)}, not {metric!r}"
                )
            if slice_ != "all" and slice_ not in slices:
                return _err(f"--need {spec!r}: {slice_!r} is not a value of tag {args.by!r} (or 'all')")
            targets.append(needed(power, metric, delta, slice_))
    elif args.need:
        return _err("--need needs --run: the spread comes from a run's scores")
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
        print(_table(table, "table"))
    summary = overlap_summary(ov)
    if not summary.is_empty():
        print("\nquestion words found in the labeled chunk (overlap; high flatters keyword retrieval)")
        print(_table(summary, "table"))
        top = most_overlapping(ov, 5)
        if not top.is_empty():
            print("most overlapping synthetic questions (review these first)")
            print(_table(top.select("qid", "overlap", "question"), "table"))
    if power is not None:
        print(f"\nsmallest detectable change (paired, alpha 0.05, power 0.8; spread {how}), by {args.by}")
        wide = power.pivot(on="metric", index="slice", values="mde")
        print(_table(wide, "table"))
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
        print(_table(table, args.format))
    return EXIT_OK


def cmd_testset_remap(args: argparse.Namespace) -> int:
    from evalcore.testset.remap import read_chunks, remap
    from evalcore.testset.write import read_cases, write_version

    if args.corpus:  # the chunks a run retrieved, placed in their documents
        from evalcore.testset.remap import chunks_located

        run = _load_one(args.chunks)
        table, unplaced = chunks_located(run.retrieved, args.corpus)
        print(f"{count(table.height, 'chunk')} retrieved by {run.manifest.run_id} placed in {args.corpus}"
              + (f"; {len(unplaced)} could not be placed (no text, or not in its document)" if unplaced else ""))  # fmt: skip
    else:
        table = read_chunks(args.chunks)
    result = remap(read_cases(args.testset), table, min_share=args.min_share)
    sha = write_version(result.cases, args.out, source=args.testset)
    counts = result.counts()
    print(f"wrote {args.out} (version {sha[:12]}): " + ", ".join(f"{n} {k}" for k, n in counts.items()))
    lost = result.unmapped
    if not lost.is_empty():
        print(f"{count(lost.height, 'question')} whose labels did not all carry over (kept, listed here):")
        print(_table(lost, "table"))
    return EXIT_OK


def cmd_signals(args: argparse.Namespace) -> int:
    from evalcore.signals.alerts import (
        detect,
        history_note,
        keyword_found_nothing,
        low_top_scores,
        no_answer_series,
    )
    from evalcore.signals.logs import read_log

    target = Path(args.log)
    files = sorted(target.glob("*.jsonl")) if target.is_dir() else [target]
    if not files:
        return _err(f"{target} holds no .jsonl log")
    if not target.exists():
        return _err(f"{target} does not exist")
    status = EXIT_OK
    report = []
    for path in files:
        log = read_log(path)
        _print_problems(log.problems)
        df = log.interactions
        series = no_answer_series(df, args.every)
        alerts = detect(series)
        low, threshold = low_top_scores(df)

        logged = {c for c in ("thumb", "keyword_hits") if df.height and df[c].null_count() < df.height}
        thumbs = (
            {"up": int((df["thumb"] == "up").sum()), "down": int((df["thumb"] == "down").sum())}
            if "thumb" in logged
            else None
        )
        keyword = keyword_found_nothing(df).height if "keyword_hits" in logged else None
        note = history_note(series) if df.height else None
        report.append(
            {
                "log": str(path),
                "questions": df.height,
                "bad_lines": log.bad_lines,
                "alerts": [a.__dict__ | {"message": a.message()} for a in alerts],
                "history": note,
                "no_answer": series.to_dicts(),
                "low_top_score": {"threshold": threshold, "questions": low.height},
                "keyword_found_nothing": keyword,
                "thumbs": thumbs,
            }
        )
        if alerts or not df.height:
            status = EXIT_FAIL if args.fail_on_alert else status
        if args.format == "json":
            continue
        print(f"{path}: {count(df.height, 'question')} read, {count(log.bad_lines, 'bad line')} left out")
        if not df.height:
            print("  no usable question: an empty log usually means logging broke")
            continue
        rate = float(df.select(pl.col("abstained").mean()).item() or 0.0)
        print(
            f"  no-answer rate {rate:.1%} overall; "
            + (f"thumbs up {thumbs['up']}, down {thumbs['down']}; " if thumbs else "thumbs: not logged; ")
            + (
                f"weakest retrievals (top score <= {threshold:.3g}): {low.height}; "
                if threshold is not None
                else "weakest retrievals: too few scored questions; "
            )
            + (
                f"keyword search found nothing: {keyword}"
                if keyword is not None
                else "keyword_hits: not logged"
            )
        )
        for a in alerts:
            print(f"  ALERT {a.message()}")
        if not alerts:
            print(
                f"  no alert: {note}"
                if note
                else "  no alert: the no-answer rate moved within its usual noise"
            )
    if args.format == "json":
        print(json.dumps(report[0] if len(report) == 1 else report, indent=1, default=str))
    return status


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
        return _err("no chunk with text to write questions from")
    config = JudgeConfig()
    if args.model:
        config = replace(config, model=args.model)
    if args.concurrency:
        config = replace(config, concurrency=args.concurrency)
    config = replace(config, timeout=args.timeout)
    planned = plan(chunks, args.n, multi=args.multi_chunk, unanswerable=args.unanswerable, seed=args.seed)
    with _store(args.store) as store:
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
    with _store(args.store) as store:
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
    table = pl.DataFrame(rows, schema={"id": pl.Int64, "origin": pl.String, "status": pl.String,
                                       "overlap": pl.Float64, "question": pl.String})  # fmt: skip
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
        print(_table(table, "table"))
    return EXIT_OK


def cmd_testset_write(args: argparse.Namespace) -> int:
    from evalcore.testset.review import write_accepted

    with _store(args.store) as store:
        out, sha, added = write_accepted(store, args.testset, args.out, by=os.environ.get("USER"))
    print(
        f"wrote {out} (version {sha[:12]}): {args.testset} plus {count(added, 'accepted case')}; the old file is untouched"
    )
    return EXIT_OK


def cmd_probe(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from evalcore.calibration.probes import PROBES, plan, probe
    from evalcore.judge.client import JudgeConfig

    names = [p.strip() for p in args.probe.split(",") if p.strip()] if args.probe else list(PROBES)
    unknown = [p for p in names if p not in PROBES]
    if unknown:
        return _err(f"unknown probe(s) {', '.join(unknown)}: choose from {', '.join(PROBES)}")
    run = _load_one(args.run)
    config = JudgeConfig()
    if args.model:
        config = replace(config, model=args.model)
    config = replace(config, concurrency=args.concurrency, timeout=args.timeout)
    with _store(args.store) as store:
        print(plan(run, store, config, names, args.n))
        if args.dry_run:
            print("dry run: nothing was sent")
            return EXIT_OK
        try:
            results = probe(run, store, config, probes=names, n=args.n, seed=args.seed)
        except SetupError as exc:
            return _err(str(exc))
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


def cmd_metrics(args: argparse.Namespace) -> int:
    from evalcore.score import metric_columns, score_run, summarize

    run = _judged(_load_one(args.run), args)
    measures = args.measures or None
    embed = None
    if args.embedder:
        from evalcore.metrics.embedding import embedder

        embed = embedder(args.embedder)
        if "answer_questions" not in run.results.columns:
            return _err(
                "relevance_ragas needs questions the judge wrote from each answer: score a judge "
                "revision (--judge latest), not the run file's recorded judge output"
            )
    scores = score_run(run, *([measures] if measures else []), embedder=embed)
    metrics = metric_columns(scores)
    if args.per_question:
        print(_table(scores, args.format))
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
        print(_table(shown, "table"))
        _not_applicable(table)
        if embed is not None:
            print(
                f"relevance_ragas: RAGAS answer relevance with the embedder {args.embedder}; "
                "relevance: the judge's own 0-1 score"
            )
        for line in _standing(run, args):
            print(line)
    else:
        print(_table(table, args.format))
    return EXIT_OK


def _not_applicable(table: pl.DataFrame) -> None:
    """Name the metrics left out of a table because they apply to no question (n = 0 everywhere)."""
    from evalcore.score import split_applicable

    _, gone = split_applicable(table)
    if gone:
        print(f"not applicable (no question they apply to), left out: {', '.join(gone)}")


def cmd_compare(args: argparse.Namespace) -> int:
    from evalcore.comparison import SUMMARY_COLUMNS, compare, filter_questions

    base, cand = _judged(_load_one(args.baseline), args), _judged(_load_one(args.candidate), args)
    cmp = compare(
        base, cand, measures=args.measures or _default_measures(), k=args.k, permutations=args.permutations
    )
    if args.format != "table":
        out = cmp.summary if not args.per_question else cmp.per_question
        print(_table(out if args.by is None else cmp.by_slice(args.by), args.format))
        return EXIT_OK
    print(
        f"baseline  {base.label} ({base.run_id})\ncandidate {cand.label} ({cand.run_id})\n"
        f"on the {cmp.note}; paired randomization test, Holm-corrected"
    )
    if cmp.judge_change:  # said before the numbers, and on every judged row of the table
        print(f"NOT COMPARABLE: {cmp.judge_change}")
    summ = cmp.by_slice(args.by, permutations=args.permutations) if args.by else cmp.summary
    cols = ["slice"] if args.by else []
    if "comparable" not in summ.columns:
        summ = summ.join(cmp.summary.select("metric", "comparable"), on="metric", how="left")
    shown = summ.filter(pl.col("n") > 0).select(*cols, *SUMMARY_COLUMNS, "comparable")
    # A rate with no better direction neither improves nor regresses: "–", not null.
    shown = shown.with_columns([pl.col(c).cast(pl.String).fill_null("–") for c in ("improved", "regressed")])
    if cmp.judge_change:
        # A judged metric's delta, CI and p compare two judges, not two systems: not shown as a result.
        blank = ("delta", "ci_low", "ci_high", "p_holm", "improved", "regressed")
        shown = shown.with_columns(
            [pl.when(pl.col("comparable"))
             .then((pl.col(c).round(4) if shown.schema[c].is_float() else pl.col(c)).cast(pl.String))
             .otherwise(pl.lit("–")).alias(c)
             for c in blank],
            note=pl.when(pl.col("comparable")).then(pl.lit("")).otherwise(pl.lit("not comparable: judge changed")),
        )  # fmt: skip
    print(_table(shown.drop("comparable"), "table"))
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
            _table(
                worst.select(
                    "qid", "status", "diagnosis", "worst_delta", left=pl.col("left_top_k").list.join(" ")
                ),
                "table",
            )
        )
    return EXIT_OK


def _default_measures() -> list[str]:
    from evalcore.metrics.catalogue import DEFAULT_MEASURES

    return list(DEFAULT_MEASURES)


def cmd_gate(args: argparse.Namespace) -> int:
    from evalcore.comparison import compare
    from evalcore.gate import GatePolicy, junit_report, markdown_report, run_gate, write_per_question

    policy = GatePolicy.from_toml(args.config) if args.config else GatePolicy.default()
    base, cand = _judged(_load_one(args.baseline), args), _judged(_load_one(args.candidate), args)
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
    from evalcore.runs.importers import import_ragas, import_ragchecker, import_trec

    ts = Path(args.testset) if args.testset else Path(args.out) / "testset.jsonl"
    existed = ts.exists()
    if args.source == "trec":
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


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="evalcore", description="Score, compare and gate RAG evaluation runs.")
    p.add_argument("--version", action="version", version=f"evalcore {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("schema", help="print the JSON Schema of every file format")
    s.set_defaults(func=cmd_schema)

    s = sub.add_parser("validate", help="check a runs folder, a run folder or a test set; exit 1 on errors")
    s.add_argument("path")
    s.set_defaults(func=cmd_validate)

    fmt = {"choices": ["table", "json", "csv"], "default": "table"}
    judge_help = "whose judge verdicts to score with: 'recorded' (the run file's), 'latest' or a revision id"
    store_help = "the store (default $RAGTRIAGE_STORE, else ~/.local/share/ragtriage/store.sqlite)"
    s = sub.add_parser("metrics", help="means of every metric for one run, with 95%% CIs")
    s.add_argument("run", help="run folder (or a run id under $RAGTRIAGE_RUNS, default sample_runs)")
    s.add_argument(
        "--by", help="slice by a tag: type, topic, source, split, must_pass, answerable or any tag"
    )
    s.add_argument(
        "-m", "--measure", dest="measures", action="append", help="retrieval measure, e.g. nDCG@10 (repeat)"
    )
    s.add_argument("--format", **fmt)  # type: ignore[arg-type]
    s.add_argument("--per-question", action="store_true", help="one row per question instead of means")
    s.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples for the CIs")
    s.add_argument("--judge", default="recorded", help=judge_help)
    s.add_argument("--store", help=store_help)
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
    s.add_argument("--format", **fmt)  # type: ignore[arg-type]
    s.add_argument("--per-question", action="store_true", help="with --format json/csv: per-question rows")
    s.add_argument("--permutations", type=int, default=10_000)
    s.add_argument("--top", type=int, default=15, help="how many regressed questions to list")
    s.add_argument("--judge", default="recorded", help=judge_help + " (both runs)")
    s.add_argument("--store", help=store_help)
    s.add_argument(
        "--include-heldout",
        action="store_true",
        help="list held-out questions among the most regressed too (the counts always include them)",
    )
    s.set_defaults(func=cmd_compare)

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
    s.add_argument("--judge", default="recorded", help=judge_help + " (both runs)")
    s.add_argument("--store", help=store_help)
    s.add_argument("--config", help="TOML policy (see docs/ci-gate.md)")
    s.add_argument("--summary", help="append a markdown summary here (e.g. $GITHUB_STEP_SUMMARY)")
    s.add_argument("--junit", help="write JUnit XML here")
    s.add_argument("--per-question", help="write per-question results here (.csv or .json)")
    s.add_argument("--permutations", type=int, default=10_000)
    s.set_defaults(func=cmd_gate)

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
    s.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        help="seconds a request may take before it is retried (then failed, with its reason; default 60)",
    )
    s.add_argument("--store", help=store_help)
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
    s.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        help="seconds a request may take before it is retried (then failed, with its reason; default 60)",
    )
    s.add_argument("--store", help=store_help)
    s.set_defaults(func=cmd_probe)

    s = sub.add_parser("revisions", help="list a run's judge revisions, or --diff two of them")
    s.add_argument("run", help="run folder")
    s.add_argument("--store", help=store_help)
    s.add_argument(
        "--diff",
        nargs=2,
        metavar=("A", "B"),
        help="per question: claims added/removed, verdicts flipped, scores",
    )
    s.add_argument("--format", **fmt)  # type: ignore[arg-type]
    s.set_defaults(func=cmd_revisions)

    s = sub.add_parser(
        "audit", help="who did what in the store: labels, revisions, batches, sessions, spending"
    )
    s.add_argument("--store", help=store_help)
    s.add_argument("--actor", help="only this person's writes (an e-mail address)")
    s.add_argument("--action", help="only this action (label, revision, batch, create_session, reserve, …)")
    s.add_argument("--since", help="only writes at or after this time (ISO 8601, UTC: 2026-12-01)")
    s.add_argument("--format", **fmt)  # type: ignore[arg-type]
    s.set_defaults(func=cmd_audit)

    s = sub.add_parser("calibrate", help="labeling sessions that measure the judge against people")
    csub = s.add_subparsers(dest="action", required=True)
    c = csub.add_parser("create", help="a session from a run as a judge revision saw it")
    c.add_argument("run", help="run folder")
    c.add_argument("--name", required=True, help="the session's name")
    c.add_argument("--target", choices=["claims", "answers"], default="claims", help="what people label")
    c.add_argument("--n", type=int, default=150, help="items to sample (default 150)")
    c.add_argument(
        "--sampling", default="uniform", help="'uniform', 'stratified:TAG' or 'low-scores' (default uniform)"
    )
    c.add_argument("--labels-per-item", type=int, default=2, help="labels each item gets (default 2)")
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--judge", default="recorded", help=judge_help)
    c.add_argument("--dry-run", action="store_true", help="show what the sample would buy; create nothing")
    c.add_argument("--store", help=store_help)
    c.set_defaults(func=cmd_calibrate_create)
    c = csub.add_parser("status", help="sessions, or one session's progress per labeler")
    c.add_argument("session", nargs="?", help="a session's name or id (default: list them)")
    c.add_argument("--store", help=store_help)
    c.set_defaults(func=cmd_calibrate_status)
    c = csub.add_parser("export", help="a session's labels as CSV or JSON Lines, to stdout")
    c.add_argument("session")
    c.add_argument("--format", choices=["csv", "jsonl"], default="csv")
    c.add_argument("--history", action="store_true", help="every version of each label, not only the latest")
    c.add_argument("--store", help=store_help)
    c.set_defaults(func=cmd_calibrate_export)
    c = csub.add_parser("import", help="labels made elsewhere (labeler, qid, claim_idx, label, rationale)")
    c.add_argument("session")
    c.add_argument("file", help="a .csv (with a header) or .jsonl file")
    c.add_argument("--store", help=store_help)
    c.set_defaults(func=cmd_calibrate_import)

    s = sub.add_parser(
        "agreement", help="a session's agreement: people with each other, the judge with people"
    )
    s.add_argument("session", help="a session's name or id")
    s.add_argument(
        "--judge", help="another judge revision to measure on the same labels (default: the session's)"
    )
    s.add_argument("--by", help="per value of this tag")
    s.add_argument("--runs", help="the runs folder holding the session's run (for --by tags)")
    s.add_argument("--format", choices=["table", "json"], default="table")
    s.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples for the CIs")
    s.add_argument("--store", help=store_help)
    s.set_defaults(func=cmd_agreement)

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

    s = sub.add_parser(
        "signals", help="a production log: bad lines, the no-answer rate and its alerts, weak retrievals"
    )
    s.add_argument("log", help="the log (JSON Lines; docs/signals.md), or a folder of them")
    s.add_argument(
        "--every", default="1d", choices=["1h", "6h", "1d", "1w"], help="the period of the no-answer rate"
    )
    s.add_argument(
        "--fail-on-alert",
        action="store_true",
        help="exit 1 on an alert or an empty log (for a scheduled job)",
    )
    s.add_argument("--format", choices=["table", "json"], default="table")
    s.set_defaults(func=cmd_signals)
    t = tsub.add_parser("queue", help="candidates waiting for review (synthetic, promoted) and their status")
    t.add_argument("testset")
    t.add_argument("--store", help=store_help)
    t.add_argument("--format", choices=["table", "json"], default="table")
    t.set_defaults(func=cmd_testset_queue)
    t = tsub.add_parser("write", help="accepted candidates appended to a new version of the test set")
    t.add_argument("testset")
    t.add_argument(
        "--out", help="the new file (default <name>.reviewed.jsonl beside it; never an existing one)"
    )
    t.add_argument("--store", help=store_help)
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
    s.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        help="seconds a request may take before it is retried (then failed, with its reason; default 60)",
    )
    s.add_argument("--store", help=store_help)
    s.set_defaults(func=cmd_synth)
    s = sub.add_parser("import", help="convert TREC or Ragas files into a ragtriage test set + run")
    isub = s.add_subparsers(dest="source", required=True)
    out_help = (
        "the runs folder to import into: the test set goes to OUT/testset.jsonl, the run to OUT/RUN_ID/"
    )
    t = isub.add_parser("trec", help="TREC qrels + a TREC run (qid Q0 docno rank score tag)")
    t.add_argument("--qrels", required=True, help="qrels: qid iter docno rel")
    t.add_argument("--run", required=True, help="run: qid Q0 docno rank score tag")
    t.add_argument("--out", required=True, help=out_help)
    t.add_argument("--run-id", help="the run's folder name and id (default: the run's tag)")
    testset_help = (
        "add the run to this existing test set instead of writing OUT/testset.jsonl "
        "(TREC queries matched by qid, Ragas rows by question text)"
    )
    t.add_argument("--testset", help=testset_help)
    t.set_defaults(func=cmd_import)
    r = isub.add_parser("ragas", help="a Ragas export: CSV, JSON or JSON Lines (Ragas 0.1 column names too)")
    r.add_argument("file", help="the export: .csv, .json or .jsonl")
    r.add_argument("--out", required=True, help=out_help)
    r.add_argument("--run-id", help="the run's folder name and id (default: the file's name)")
    r.add_argument("--testset", help=testset_help)
    r.set_defaults(func=cmd_import)
    c = isub.add_parser(
        "ragchecker",
        help="RAGChecker's checking output (checking_outputs.json): its claims as judge output, its metrics as ext:",
    )
    c.add_argument("file", help="the checker's output JSON")
    c.add_argument("--out", required=True, help=out_help)
    c.add_argument("--run-id", help="the run's folder name and id (default: the file's name)")
    c.add_argument("--testset", help=testset_help)
    c.set_defaults(func=cmd_import)
    return p


_LOCATED: list[Any] = []  # runs locations in object storage this command mirrored (for messages)


def _shown(text: str) -> str:
    """A message with mirrored paths written as the bucket URLs they came from, secrets masked."""
    for loc in _LOCATED:
        text = loc.display(text)
    return redact(text)


class _Shown:
    """Standard output with mirrored paths written as the bucket URLs they came from."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def write(self, text: str) -> int:
        for loc in _LOCATED:  # (paths only: the data printed is not masked, nor changed)
            text = loc.display(text)
        return int(self.inner.write(text))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _mirror_urls(args: argparse.Namespace) -> None:
    """Every run, folder or test set given as an ``s3://``/``gs://``/``az://`` URL is read from its
    mirror (:mod:`evalcore.runs.remote`): the same URLs work for every verb."""
    from evalcore.runs.remote import is_remote, resolve

    def local(value: Any, name: str) -> Any:
        if isinstance(value, list):
            return [local(v, name) for v in value]
        if not is_remote(value):
            return value
        if name in ("out", "summary", "junit"):
            msg = f"--{name} {redact(value)}: ragtriage never writes to a bucket; write locally, then upload"
            raise SetupError(msg)
        loc = resolve(value)
        _LOCATED.append(loc)
        for p in loc.problems:
            print(_shown(str(p)), file=sys.stderr)
        return str(loc.root)

    for name, value in vars(args).items():
        if name not in ("func", "store"):
            setattr(args, name, local(value, name))


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _LOCATED.clear()
    try:
        _mirror_urls(args)
        if _LOCATED:  # what the command prints names the bucket's URLs, not the mirror's paths
            sys.stdout = _Shown(sys.stdout)
        return int(args.func(args))
    except InputError as exc:
        _print_problems(exc.problems)
        return EXIT_USAGE
    except BrokenPipeError:  # `evalcore ... | head` (before OSError's kin below)
        return EXIT_OK
    except (ValueError, FileExistsError, FileNotFoundError, SetupError, PermissionError, OverBudget) as exc:
        return _err(str(exc))
    finally:
        if isinstance(sys.stdout, _Shown):
            sys.stdout.flush()
            sys.stdout = sys.stdout.inner


if __name__ == "__main__":
    sys.exit(main())
