"""Commands for calibration sessions: create, status, export/import labels, agreement."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from evalcore.cli.common import (
    EXIT_FAIL,
    EXIT_OK,
    JUDGE_HELP,
    STORE_HELP,
    load_run_arg,
    open_store,
    runs_folder,
    usage_error,
)
from evalcore.words import agree, count


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

    run = load_run_arg(args.run)
    spec = SessionSpec(
        name=args.name,
        target=args.target,
        n=args.n,
        sampling=args.sampling,
        labels_per_item=args.labels_per_item,
        seed=args.seed,
    )
    with open_store(args.store) as store:
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

    with open_store(args.store) as store:
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

    with open_store(args.store) as store:
        sys.stdout.write(
            export_labels(store, _session(store, args.session), args.format, history=args.history)
        )
    return EXIT_OK


def cmd_calibrate_import(args: argparse.Namespace) -> int:
    from evalcore.calibration.report import import_labels

    path = Path(args.file)
    if not path.is_file():
        return usage_error(f"{path}: no such file")
    FORMAT = "jsonl" if path.suffix.lower() in (".jsonl", ".json") else "csv"
    with open_store(args.store) as store:
        session = _session(store, args.session)
        stored, problems = import_labels(
            store, session, path.read_text(encoding="utf-8-sig"), FORMAT, str(path)
        )
    for p in problems:
        print(p, file=sys.stderr)
    print(
        f"{count(stored, 'label')} imported into session {session.name}; {count(len(problems), 'line')} refused"
    )
    return EXIT_FAIL if problems else EXIT_OK


def cmd_agreement(args: argparse.Namespace) -> int:
    from evalcore.calibration.report import session_report
    from evalcore.runs.load import load_runs

    with open_store(args.store) as store:
        session = _session(store, args.session)
        tags: dict[str, dict[str, str]] = {}
        if args.by:
            folder = args.runs or runs_folder()
            runs = load_runs(folder).runs
            run = runs.get(session.run_id)
            if run is None:
                return usage_error(f"run {session.run_id} is not in {folder}; pass --runs FOLDER for --by")
            for qid, tag, value in run.testset.tags.select("qid", "tag", "value").iter_rows():
                tags.setdefault(qid, {})[tag] = value
        rep = session_report(
            store, session, judge=args.judge, by=args.by, tags=tags, resamples=args.resamples
        )
    a = rep.overall

    def row(name: str, x: Any) -> dict[str, Any]:
        return {
            "slice": name,
            "items": x.items,
            "percent": x.percent.value,
            "kappa": x.kappa.value,
            "ac1": x.ac1.value,
            "ac1_low": x.ac1.low,
            "ac1_high": x.ac1.high,
            "unsupported_recall": x.recall_unsupported.value,
            "unsupported_precision": x.precision_unsupported.value,
        }  # FORMAT: skip

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


def add_parsers(sub: Any) -> None:
    """This group's subcommands."""
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
    c.add_argument("--judge", default="recorded", help=JUDGE_HELP)
    c.add_argument("--dry-run", action="store_true", help="show what the sample would buy; create nothing")
    c.add_argument("--store", help=STORE_HELP)
    c.set_defaults(func=cmd_calibrate_create)
    c = csub.add_parser("status", help="sessions, or one session's progress per labeler")
    c.add_argument("session", nargs="?", help="a session's name or id (default: list them)")
    c.add_argument("--store", help=STORE_HELP)
    c.set_defaults(func=cmd_calibrate_status)
    c = csub.add_parser("export", help="a session's labels as CSV or JSON Lines, to stdout")
    c.add_argument("session")
    c.add_argument("--format", choices=["csv", "jsonl"], default="csv")
    c.add_argument("--history", action="store_true", help="every version of each label, not only the latest")
    c.add_argument("--store", help=STORE_HELP)
    c.set_defaults(func=cmd_calibrate_export)
    c = csub.add_parser("import", help="labels made elsewhere (labeler, qid, claim_idx, label, rationale)")
    c.add_argument("session")
    c.add_argument("file", help="a .csv (with a header) or .jsonl file")
    c.add_argument("--store", help=STORE_HELP)
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
    s.add_argument("--store", help=STORE_HELP)
    s.set_defaults(func=cmd_agreement)
