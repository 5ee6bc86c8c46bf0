"""A runs folder in object storage against the same folder on disk: what listing costs on each page
load, what the first view costs with nothing mirrored yet.

    python benchmarks/bench_remote.py                      # 20 runs x 10,000 questions, JSON Lines
    python benchmarks/bench_remote.py --runs 5 --questions 2000 --first-views 1

The bucket is a local S3-compatible server (moto in server mode, as the tests use) on this machine,
so the figures are the client's work and moto's (a Python server: slower than S3 itself), not a
network's. Measured, median of each:

* **listing, unchanged bucket**: what each page load pays after the 5 s listing cache expires (the
  bucket listed, every object compared with its mirrored copy, nothing downloaded), against the
  folder's fingerprint on disk;
* **mirror from empty**: the first sync of a server that has never seen the bucket (every object
  downloaded), with its throughput;
* **first view**: Overview drawn in Chromium by a fresh server on an empty cache folder (the mirror
  included), from the bucket and from disk.
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
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
sys.path.insert(0, str(HERE))


def folder_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def first_view(runs: str) -> float:
    from playwright.sync_api import sync_playwright
    from server import CHROMIUM, CHROMIUM_ARGS, dashboard, wait_rendered

    cache = tempfile.mkdtemp(prefix="ragtriage-bench-remote-")
    os.environ["RAGTRIAGE_CACHE_DIR"] = cache
    os.environ["RAGTRIAGE_RUNS"] = runs
    try:
        with dashboard(timeout=120) as url, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1500, "height": 1000})
            t = time.perf_counter()
            page.goto(url + "/")
            wait_rendered(page, 300_000)
            page.get_by_text("Headline metrics").wait_for(timeout=300_000)
            took = time.perf_counter() - t
            browser.close()
        return took
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--questions", type=int, default=10_000)
    ap.add_argument("--first-views", type=int, default=3)
    args = ap.parse_args()
    import logging

    logging.disable(logging.WARNING)
    import s3
    from bench_dashboard import generate

    from dashboard.data import fingerprint
    from evalcore.runs import remote

    folder = HERE / ".data" / f"dash-{args.runs}x{args.questions}-jsonl"
    generate(folder, args.runs, args.questions, fmt="jsonl")
    size = folder_size(folder)
    rows: list[tuple[str, str, str]] = []
    with s3.server() as endpoint:
        os.environ.update(s3.environment(endpoint))
        t = time.perf_counter()
        s3.upload(endpoint, folder, "bench", "runs")
        print(
            f"data: {folder} ({size / 1e6:.0f} MB, {args.runs} runs), uploaded in {time.perf_counter() - t:.0f} s"
        )
        url = "s3://bench/runs"

        mirror_times = []
        for _ in range(3):
            cache = tempfile.mkdtemp(prefix="ragtriage-bench-mirror-")
            os.environ["RAGTRIAGE_CACHE_DIR"] = cache
            remote._SYNCED.clear()
            t = time.perf_counter()
            loc = remote.resolve(url)
            mirror_times.append(time.perf_counter() - t)
            assert loc.downloaded == loc.listed
        mirror = statistics.median(mirror_times)
        listing = []
        for _ in range(11):
            remote._SYNCED.clear()
            t = time.perf_counter()
            again = remote.resolve(url)
            listing.append(time.perf_counter() - t)
            assert again.downloaded == 0
        disk = []
        for _ in range(11):
            t = time.perf_counter()
            fingerprint(folder)
            disk.append(time.perf_counter() - t)
        shutil.rmtree(os.environ["RAGTRIAGE_CACHE_DIR"], ignore_errors=True)
        rows.append(
            (
                "listing, unchanged (each page load past 5 s)",
                f"{statistics.median(listing) * 1000:.0f} ms",
                f"{statistics.median(disk) * 1000:.1f} ms",
            )
        )
        rows.append(
            ("mirror from empty (every object)", f"{mirror:.2f} s ({size / 1e6 / mirror:.0f} MB/s)", "-")
        )
        if args.first_views:
            from_bucket = [first_view(url) for _ in range(args.first_views)]
            from_disk = [first_view(str(folder)) for _ in range(args.first_views)]
            rows.append(
                (
                    "Overview first view (fresh server, empty cache)",
                    f"{statistics.median(from_bucket):.2f} s",
                    f"{statistics.median(from_disk):.2f} s",
                )
            )
    print(f"{'':48}{'s3:// (local moto)':>24}{'local disk':>14}")
    for name, bucket, local in rows:
        print(f"{name:48}{bucket:>24}{local:>14}")


if __name__ == "__main__":
    main()
