"""A million questions: reading, scoring and comparing runs of 1,000,000 questions x 20 chunks.

    python benchmarks/bench_million.py                     # 1,000,000 questions, JSON Lines and Parquet
    python benchmarks/bench_million.py --questions 200000  # smaller, same steps
    python benchmarks/bench_million.py --browser           # also Overview and Compare in Chromium

Generates two runs (bench_dashboard.generate, chunks as ids and scores, an answer and judge claims
per question; the test set is 1,000,000 lines) and measures each step in a fresh process, as a user
meets it — nothing read before, an empty cache folder:

* reading and validating one run (``load_runs``): MB/s of results.jsonl, and peak memory against the
  parsed frames' size — the run's tables and its test set's, as the bytes their buffers hold
  (target: >= 150 MB/s, peak <= 2x the frames);
* ``evalcore metrics RUN`` end to end (target < 10 s);
* ``compare()`` of the two runs once both are scored: paired tests and bootstrap CIs (target < 5 s);
* with ``--browser``: Overview's first view (empty cache) and warm reload (targets 15 s and 2 s),
  and Compare's (its question table sent a page at a time).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_dashboard import generate  # noqa: E402

STEP = r"""
import json, os, sys, time
t0 = time.perf_counter()
from evalcore import load_runs, score_run, compare
from evalcore.cache import flush_writes
folder, what = sys.argv[1], sys.argv[2]
t1 = time.perf_counter()
lr = load_runs(folder)
assert not lr.errors, lr.errors[:3]
runs = list(lr.runs.values())
read = time.perf_counter() - t1
out = {"read": read}
if what == "compare":
    for r in runs:
        score_run(r)
    # The cache's background writes (two runs as parsed: ~5 GB) done first: compare() timed alone,
    # not against the writer for the two cores.
    flush_writes()
    import evalcore.comparison as comparison
    spent = [0.0]
    summarise = comparison._summarise
    def timed(*a, **k):  # the paired tests and bootstrap intervals, one call per slice
        s = time.perf_counter()
        got = summarise(*a, **k)
        spent[0] += time.perf_counter() - s
        return got
    comparison._summarise = timed
    t2 = time.perf_counter()
    cmp = compare(runs[0], runs[1])
    cmp.summary
    out["compare"] = time.perf_counter() - t2
    out["stats"] = spent[0]
    out["pairs"] = cmp.n_pairs if hasattr(cmp, "n_pairs") else None
flush_writes()
# This process's own peak (VmHWM): ru_maxrss keeps the benchmark's own peak across fork and exec.
sys.path.insert(0, sys.argv[3])
from bench_dashboard import peak_rss_mb
out["peak_mb"] = peak_rss_mb(os.getpid())
import polars as pl
def buffers(df):  # the buffers the frame holds: polars' estimated_size counts a string as its
    # characters, not the 16-byte view each one takes (20M short chunk ids: 160 MB estimated, 320 MB held)
    for col in df.to_arrow(compat_level=pl.CompatLevel.newest()).columns:
        for chunk in col.chunks:  # (an array's buffers include its children's)
            yield from (b for b in chunk.buffers() if b is not None)
held = {}  # by address: a buffer two frames share (the qids exploded from the results) counts once
for ts in {id(r.testset): r.testset for r in runs}.values():
    for f in (ts.cases, ts.qrels, ts.tags, ts.evidence):
        held.update((b.address, b.size) for b in buffers(f))
for r in runs:
    for f in (r.results, r.retrieved, r.claims, r.external):
        held.update((b.address, b.size) for b in buffers(f))
frames = sum(held.values())
out["frames_mb"] = frames / 1e6
print(json.dumps(out))
"""


def step(folder: Path, what: str, env: dict[str, str]) -> dict[str, float]:
    got = subprocess.run(
        [sys.executable, "-c", STEP, str(folder), what, str(HERE)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(got.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--questions", type=int, default=1_000_000)
    ap.add_argument("--browser", action="store_true")
    args = ap.parse_args()
    n = args.questions
    data = HERE / ".data" / f"million-{n}"
    t = time.perf_counter()
    generate(data, 2, n, depth=20, fmt="jsonl", text=False)
    print(f"data: {data} ({time.perf_counter() - t:.0f} s to generate)", flush=True)
    pq = HERE / ".data" / f"million-{n}-parquet"
    if not (pq / "done").exists():
        import polars as pl

        # "done" last, by this step itself (copying it from the JSON Lines folder first marked a
        # conversion stopped half way as whole)
        shutil.copytree(data, pq, dirs_exist_ok=True, ignore=shutil.ignore_patterns("results.jsonl", "done"))
        for run in ("run-00", "run-01"):
            pl.read_ndjson(data / run / "results.jsonl").write_parquet(pq / run / "results.parquet")
        (pq / "done").touch()
    cache = Path(tempfile.mkdtemp(prefix="ragtriage-bench-million-"))
    env = {**os.environ, "RAGTRIAGE_CACHE_DIR": str(cache)}
    one = Path(tempfile.mkdtemp(prefix="ragtriage-bench-one-"))
    rows = []
    try:
        for name, src in (("JSON Lines", data), ("Parquet", pq)):
            # One run alone for the read, so the MB/s is one file's.
            shutil.rmtree(one, ignore_errors=True)
            one.mkdir()
            shutil.copy(src / "testset.jsonl", one / "testset.jsonl")
            shutil.copytree(src / "run-01", one / "run-01")
            size = sum(p.stat().st_size for p in (one / "run-01").glob("results.*")) / 1e6
            shutil.rmtree(cache, ignore_errors=True)
            got = step(one, "read", env)
            rows.append(
                (
                    f"read + validate one run ({name}, {size:,.0f} MB), empty cache",
                    got["read"],
                    f"{size / got['read']:,.0f} MB/s; peak {got['peak_mb']:,.0f} MB = "
                    f"{got['peak_mb'] / got['frames_mb']:.1f}x the frames ({got['frames_mb']:,.0f} MB)",
                )
            )
            print(rows[-1], flush=True)
            shutil.rmtree(cache, ignore_errors=True)
            t0 = time.perf_counter()
            subprocess.run(
                ["evalcore", "metrics", str(one / "run-01")], env=env, check=True, capture_output=True
            )
            rows.append(
                (f"evalcore metrics RUN ({name}), empty cache", time.perf_counter() - t0, "target < 10 s")
            )
            print(rows[-1], flush=True)
            t0 = time.perf_counter()  # the same command again: the parse and the scores are cached
            subprocess.run(
                ["evalcore", "metrics", str(one / "run-01")], env=env, check=True, capture_output=True
            )
            rows.append((f"evalcore metrics RUN ({name}), again", time.perf_counter() - t0, "target < 10 s"))
            print(rows[-1], flush=True)
        shutil.rmtree(cache, ignore_errors=True)
        got = step(data, "compare", env)
        rows.append(
            (
                f"compare() of two scored runs ({n:,} pairs)",
                got["compare"],
                f"paired tests + bootstrap {got['stats']:.2f} s of it; target < 5 s",
            )
        )
        print(rows[-1], flush=True)
        if args.browser:
            rows += browser(data, cache)
    finally:
        shutil.rmtree(one, ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)
    from machine import describe

    print(describe())
    print(f"\n{n:,} questions x 20 chunks, 2 cores; each step a fresh process\n")
    print("| step | seconds | note |\n|---|---|---|")
    for what, secs, note in rows:
        print(f"| {what} | {secs:.2f} | {note} |")


def browser(folder: Path, cache: Path) -> list[tuple[str, float, str]]:
    sys.path.insert(0, str(HERE.parent / "tests" / "e2e"))
    from playwright.sync_api import sync_playwright
    from server import CHROMIUM, CHROMIUM_ARGS, dashboard, wait_rendered

    os.environ["RAGTRIAGE_CACHE_DIR"] = str(cache)
    out = []
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for name, path, first_target in (
            ("Overview", "/", 15),
            ("Compare", "/Compare?base=run-00&cand=run-01", 15),
        ):
            shutil.rmtree(cache, ignore_errors=True)
            with dashboard(folder, timeout=600) as url:
                page = b.new_page(viewport={"width": 1400, "height": 1000})
                t0 = time.perf_counter()
                page.goto(url + path)
                wait_rendered(page, timeout_ms=900_000)
                first = time.perf_counter() - t0
                t0 = time.perf_counter()
                page.reload()
                wait_rendered(page, timeout_ms=900_000)
                warm = time.perf_counter() - t0
                page.screenshot(path=str(HERE / ".data" / f"million-{name.lower()}.png"), full_page=False)
                page.close()
            out.append((f"{name} in Chromium, first view (empty cache)", first, f"target {first_target} s"))
            out.append((f"{name} in Chromium, warm reload", warm, "target 2 s"))
            print(out[-2], out[-1], flush=True)
        b.close()
    return out


if __name__ == "__main__":
    main()
