"""Hundreds of runs: the sidebar, the pickers and Overview's trend, measured in Chromium.

    python benchmarks/bench_runs.py                      # 200 runs x 10,000 questions (parquet)
    python benchmarks/bench_runs.py --runs 50 --questions 2000

Generates the folder (bench_dashboard.generate: 10 chunks with text, an answer and judge claims per
question), then for Overview and for Breakdown (a page with the run picker) measures the time from
navigation to a rendered page three ways, as bench_dashboard.py does: "first view" (a fresh server
on an empty cache folder: no run was ever read or scored), "cold" (a fresh server, the disk caches
earlier sessions left) and "warm" (a reload). On the first view of hundreds of runs, Overview draws
what changed and the trend of the runs scored so far and scores the rest in the background: the
table also gives the time until the trend holds every run, and peak server memory.
Targets (issue 29): warm <= 2 s, first view <= 8 s. A new run added to a scored folder: only it is
scored (the last row).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "e2e"))
from bench_dashboard import generate, peak_rss_mb  # noqa: E402
from server import CHROMIUM, CHROMIUM_ARGS, dashboard, wait_rendered  # noqa: E402

PENDING = "for this chart in the background"  # Overview's caption while runs are being scored
TREND_POINTS = """() => { const all = document.querySelectorAll('.js-plotly-plot');
  const p = all[all.length - 1];
  const line = p && p.data ? p.data.find(t => t.fill !== 'toself') : null;
  return line ? line.x.length : 0; }"""


def wait_for_trend(page, runs: int, timeout_ms: int) -> None:  # type: ignore[no-untyped-def]
    """Until the trend chart holds every run and no caption says more are coming (the caption alone
    can be gone for a moment while the page redraws itself)."""
    page.wait_for_function(
        f"(({TREND_POINTS})() === {runs}) && !document.body.innerText.includes({PENDING!r})",
        timeout=timeout_ms,
    )


def trend_points(page) -> int:  # type: ignore[no-untyped-def]
    """Runs on the trend chart's x axis (its first line, not a CI band; the trend is the page's last
    chart, below the forest plot of what changed)."""
    return int(page.evaluate(TREND_POINTS))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--questions", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3, help="servers per measurement (median reported)")
    args = ap.parse_args()
    folder = HERE / ".data" / f"dash-{args.runs}x{args.questions}"
    t = time.perf_counter()
    generate(folder, args.runs, args.questions)
    print(f"data: {folder} ({time.perf_counter() - t:.0f} s to generate)")
    last = f"run-{args.runs - 1:02d}"
    # Overview last: its first view waits for the whole trend, which leaves the caches a cold start needs.
    pages = [
        ("breakdown (run picker)", f"/Breakdown?run={last}"),
        ("overview (what changed, runs, trend)", "/"),
    ]

    from playwright.sync_api import sync_playwright

    cache = Path(tempfile.mkdtemp(prefix="ragtriage-bench-runs-"))
    os.environ["RAGTRIAGE_CACHE_DIR"] = str(cache)
    got: dict[str, dict[str, list[float]]] = {n: {"first": [], "cold": [], "warm": []} for n, _ in pages}
    complete: list[float] = []
    peak = 0.0
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)

        def visit(path: str, url: str) -> tuple[float, object]:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            t0 = time.perf_counter()
            page.goto(url + path)
            wait_rendered(page, timeout_ms=600_000)
            return time.perf_counter() - t0, page

        # First views: each on an empty cache folder. Overview's also waits for the full trend.
        for name, path in pages:
            for _ in range(args.repeat if path != "/" else 1):
                shutil.rmtree(cache, ignore_errors=True)
                with dashboard(folder, timeout=300) as url:
                    t0 = time.perf_counter()
                    took, page = visit(path, url)
                    got[name]["first"].append(took)
                    if path == "/":
                        wait_for_trend(page, args.runs, 1_800_000)
                        complete.append(time.perf_counter() - t0)
                        points = trend_points(page)
                        print(f"first view: trend complete after {complete[-1]:.1f} s with {points} runs")
                    page.close()  # type: ignore[attr-defined]
                    peak = max(peak, peak_rss_mb(url.pid))
                print(f"{name}: first view {took:.2f} s", flush=True)
        # Cold and warm: fresh servers on the caches the first view left.
        for name, path in pages:
            for _ in range(args.repeat):
                with dashboard(folder, timeout=300) as url:
                    took, page = visit(path, url)
                    got[name]["cold"].append(took)
                    for _ in range(3):
                        t0 = time.perf_counter()
                        page.reload()  # type: ignore[attr-defined]
                        wait_rendered(page, timeout_ms=600_000)
                        got[name]["warm"].append(time.perf_counter() - t0)
                    if path == "/":  # every run's means from the disk cache (plotly draws a moment later)
                        wait_for_trend(page, args.runs, 30_000)
                    page.close()  # type: ignore[attr-defined]
                    peak = max(peak, peak_rss_mb(url.pid))
        # A new run lands in the scored folder (the last one less a question): only it is scored.
        import polars as pl

        new = folder / f"run-{args.runs:02d}"
        new.mkdir()
        (new / "run.json").write_text((folder / last / "run.json").read_text().replace(last, new.name))
        pl.read_parquet(folder / last / "results.parquet").slice(1).write_parquet(new / "results.parquet")
        try:
            with dashboard(folder, timeout=300) as url:
                t0 = time.perf_counter()
                took, page = visit("/", url)
                wait_for_trend(page, args.runs + 1, 600_000)
                new_run = time.perf_counter() - t0
                page.close()  # type: ignore[attr-defined]
        finally:
            shutil.rmtree(new)
        browser.close()
    shutil.rmtree(cache, ignore_errors=True)

    from machine import describe

    print(f"\n{describe()}")
    print(f"{args.runs} runs x {args.questions:,} questions (parquet), Chromium, seconds to a rendered page")
    print("first view: fresh server, empty cache folder; cold: fresh server, caches kept; warm: reload.\n")
    print(f"| {'page':<40} | first view | cold | warm | target |")
    print("|---|---|---|---|---|")
    for name, r in got.items():
        med = {k: statistics.median(v) for k, v in r.items()}
        ok = "ok" if med["first"] <= 8 and med["warm"] <= 2 else "MISSED"
        print(f"| {name:<40} | {med['first']:.2f} | {med['cold']:.2f} | {med['warm']:.2f} | {ok} |")
    print(f"| {'overview: trend holds every run':<40} | {complete[0]:.1f} | – | – | (background) |")
    print(f"| {'overview: a new run added, trend complete':<40} | {new_run:.2f} | – | – | only it scored |")
    print(f"\nserver peak memory: {peak:,.0f} MB")


if __name__ == "__main__":
    main()
