"""What a team meets first: a folder of runs never seen before, and an import.

    python benchmarks/bench_load.py                  # 20 runs x 10,000 questions x 20 chunks, JSON Lines
    python benchmarks/bench_load.py --questions 2000

Makes the folder the way a user would — TREC files turned into runs with ``evalcore import trec``
(200,000 run lines per run) — then measures, each the median of 3:

* ``evalcore import trec`` of one run, end to end (a fresh process, as a user runs it);
* ``load_runs`` on the folder with an empty cache (every results.jsonl parsed and validated), with
  the whole-file path and with the line-by-line path it replaced (``--no-slow`` skips that one);
* ``load_runs`` again (everything from the cache) and scoring every run the first time.

Targets (issue 8): load_runs >= 50 MB/s on valid JSON Lines; import <= 1.5 s.
For comparison: trec_eval-style tools read TREC files only; Ragas and Phoenix load through pandas
row objects (not measured here).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def make_trec(folder: Path, n_q: int, depth: int, n_runs: int) -> tuple[Path, list[Path]]:
    rng = np.random.default_rng(0)
    qrels = folder / "qrels.txt"
    with qrels.open("w") as fh:
        for q in range(n_q):
            for j in range(5):
                fh.write(f"q{q:05d} 0 d{rng.integers(0, n_q * 10)}-{j} {rng.integers(0, 3)}\n")
    runs = []
    for r in range(n_runs):
        path = folder / f"run{r:02d}.txt"
        with path.open("w") as fh:
            for q in range(n_q):
                scores = np.sort(rng.random(depth))[::-1]
                for j in range(depth):
                    fh.write(
                        f"q{q:05d} Q0 d{rng.integers(0, n_q * 10)}-{j} {j + 1} {scores[j]:.6f} run{r:02d}\n"
                    )
        runs.append(path)
    return qrels, runs


def import_trec(qrels: Path, run: Path, out: Path, run_id: str) -> None:
    """`evalcore import trec` in a fresh process, as a user runs it."""
    cmd = [
        sys.executable,
        "-m",
        "evalcore.cli",
        "import",
        "trec",
        "--qrels",
        str(qrels),
        "--run",
        str(run),
        "--out",
        str(out),
        "--run-id",
        run_id,
    ]
    subprocess.run(cmd, check=True, capture_output=True)


def build_folder(
    folder: Path, qrels: Path, runs: list[Path], *, prefix: str = "run", start: datetime | None = None
) -> None:
    """The folder a team has: the first run imported with its test set, the others written beside it
    (with ``start``, a week apart from it)."""
    import polars as pl

    from evalcore import RunWriter
    from evalcore.runs.trec import read_trec

    import_trec(qrels, runs[0], folder, f"{prefix}00")
    if start is not None:  # the imported run is the oldest (an import stamps it with the time it ran)
        import json

        manifest = folder / f"{prefix}00" / "run.json"
        obj = json.loads(manifest.read_text())
        obj["created"] = start.isoformat().replace("+00:00", "Z")
        manifest.write_text(json.dumps(obj, indent=2))
    for i in range(1, len(runs)):
        files = read_trec(qrels, runs[i], will_score=False)
        frame = files.run.group_by("qid", maintain_order=True).agg(
            retrieved=pl.struct(pl.col("chunk_id").cast(pl.String), "score")
        )
        name = f"{prefix}{i:02d}"
        created = None if start is None else start + timedelta(days=7 * i)
        with RunWriter(folder / name, testset=folder / "testset.jsonl", created=created) as w:
            w.add_frame(frame)


def timed(fn, repeat: int = 3, before=None) -> tuple[float, float, float]:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        if before is not None:
            before()  # untimed
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), min(times), max(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--questions", type=int, default=10_000)
    ap.add_argument("--depth", type=int, default=20)
    ap.add_argument("--no-slow", action="store_true", help="skip the line-by-line path (it takes minutes)")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ragtriage-bench-load-"))
    cache = work / "cache"
    os.environ["RAGTRIAGE_CACHE_DIR"] = str(cache)
    try:
        qrels, trec_runs = make_trec(work, args.questions, args.depth, args.runs)
        lines = args.questions * args.depth
        folder = work / "runs"

        def import_one(i: int, out: Path) -> None:
            import_trec(qrels, trec_runs[i], out, f"run{i:02d}")

        scratch = work / "scratch"

        def fresh_import() -> None:
            shutil.rmtree(scratch, ignore_errors=True)
            import_one(0, scratch)

        imp = timed(fresh_import)
        build_folder(folder, qrels, trec_runs)
        from evalcore import load_runs, score_runs

        size = sum(p.stat().st_size for p in folder.rglob("results.jsonl")) / 1e6

        from evalcore.cache import flush_writes

        def empty_cache() -> None:
            # The previous load's cache entries are written by a background thread, and served from
            # memory until they are on disk: finish them, then remove them, so that each load below
            # starts from nothing (without this, a load after a quick one read its runs from memory).
            flush_writes()
            shutil.rmtree(cache, ignore_errors=True)

        def first() -> None:
            lr = load_runs(folder)
            assert len(lr.runs) == args.runs and not lr.errors, lr.errors[:3]

        fast = timed(first, before=empty_cache)

        def fresh_process() -> None:
            # What a first view or a CI step meets: a new process, so nothing (the compiled scanner
            # included) is loaded yet. The in-process figure above hid a folder of small files read
            # line by line (46 s) because the import before it had loaded the scanner.
            code = (
                f"from evalcore import load_runs; assert len(load_runs({str(folder)!r}).runs) == {args.runs}"
            )
            subprocess.run([sys.executable, "-c", code], check=True)

        fresh = timed(fresh_process, before=empty_cache)
        slow = None
        if not args.no_slow:
            import evalcore.runs.load as load

            keep = load._results_jsonl_fast
            load._results_jsonl_fast = lambda path: None
            slow = timed(first, repeat=1, before=empty_cache)
            load._results_jsonl_fast = keep
        empty_cache()
        first()
        flush_writes()
        cached = timed(lambda: load_runs(folder))
        runs = list(load_runs(folder).runs.values())
        shutil.rmtree(cache / "scores", ignore_errors=True)

        def score_all() -> None:
            shutil.rmtree(cache / "scores", ignore_errors=True)
            score_runs(runs)

        scoring = timed(score_all, repeat=1)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    from machine import describe

    print(describe())
    print(
        f"\n{args.runs} runs x {args.questions:,} questions x {args.depth} chunks: {size:,.0f} MB of results.jsonl; "
        f"seconds, median (min–max) of 3\n"
    )
    print(f"| {'what':<58} | {'seconds':>8} | {'range':>11} | {'MB/s':>6} | target |")
    print("|" + "-" * 60 + "|" + "-" * 10 + "|" + "-" * 13 + "|" + "-" * 8 + "|--------|")

    def row(name: str, t: tuple[float, float, float] | None, mb: float | None, target: str) -> None:
        if t is None:
            return
        rate = f"{mb / t[0]:>6.0f}" if mb else " " * 6
        print(f"| {name:<58} | {t[0]:>8.2f} | {t[1]:>5.2f}–{t[2]:<5.2f} | {rate} | {target:<6} |")

    ok_imp = "ok" if imp[0] <= 1.5 else "MISSED"
    row(f"evalcore import trec, {lines:,} lines (fresh process)", imp, None, f"≤1.5 {ok_imp}")
    ok_load = "ok" if size / fast[0] >= 50 else "MISSED"
    row("load_runs, empty cache (whole-file path)", fast, size, f"≥50 {ok_load}")
    row("load_runs, empty cache, in a fresh process (import included)", fresh, size, "")
    row("load_runs, empty cache (line-by-line path, before)", slow, size, "")
    row("load_runs, cached", cached, size, "")
    row(f"score_runs, all {args.runs} runs, first time", scoring, None, "")


if __name__ == "__main__":
    main()
