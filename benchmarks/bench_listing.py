"""What every page load pays to notice a run added to (or removed from) a live folder.

    python benchmarks/bench_listing.py               # 1,000 runs
    python benchmarks/bench_listing.py --runs 200

The dashboard takes the folder's fingerprint (every run and test-set file with its mtime and size)
on each page load, so a run added appears on the next one without a restart. Target (issue 27): at
most 50 ms a page load for 1,000 local runs. Measured, median of 21, against the ways a folder is
commonly listed: ``os.walk`` with ``Path`` objects (what the dashboard did before), and
``Path.rglob("run.json")`` (run discovery, which stats nothing).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def make_folder(root: Path, n: int) -> None:
    (root / "testset.jsonl").write_text('{"qid": "q1", "question": "?", "relevant": {}}\n')
    for i in range(n):
        d = root / f"run-{i:04d}"
        d.mkdir()
        (d / "run.json").write_text("{}")
        (d / "results.jsonl").write_text("{}\n")


def os_walk_paths(folder: Path) -> tuple[tuple[str, int, int], ...]:
    out = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if name.endswith((".json", ".jsonl", ".parquet")):
                p = Path(dirpath) / name
                st = p.stat()
                out.append((str(p.relative_to(folder)), st.st_mtime_ns, st.st_size))
    return tuple(out)


def rglob_manifests(folder: Path) -> list[Path]:
    return sorted(folder.rglob("run.json"))


def median_ms(fn: Callable[[], object], repeat: int = 21) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=1000)
    args = ap.parse_args()
    os.environ.setdefault("STREAMLIT_GLOBAL_SHOW_WARNING_ON_DIRECT_EXECUTION", "false")
    import logging

    logging.disable(logging.WARNING)  # streamlit's "no runtime" notes
    from dashboard.data import fingerprint

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_folder(root, args.runs)
        rows = [
            ("ragtriage fingerprint (each page load)", median_ms(lambda: fingerprint(root))),
            ("os.walk + Path.stat (before)", median_ms(lambda: os_walk_paths(root))),
            ("Path.rglob('run.json'), no stat", median_ms(lambda: rglob_manifests(root))),
        ]
    print(f"listing a local folder of {args.runs:,} runs ({2 * args.runs + 1:,} files), median of 21")
    print(f"{'':44}{'ms':>8}")
    for name, ms in rows:
        print(f"{name:44}{ms:>8.1f}")
    ok = rows[0][1] <= 50 * args.runs / 1000
    print(f"target: <= 50 ms per 1,000 runs -> {'met' if ok else 'NOT met'}")


if __name__ == "__main__":
    main()
