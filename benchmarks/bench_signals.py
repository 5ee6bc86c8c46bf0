"""Importing a production log: evalcore.signals.read_log against what a user would otherwise write —
pandas ``read_json(lines=True)`` and a plain Python ``json.loads`` loop — on a log of N lines made by
repeating the sample log (a fresh file each run: no cache involved).

    python benchmarks/bench_signals.py                 # 1,000,000 lines
    python benchmarks/bench_signals.py --lines 200000
    python benchmarks/bench_signals.py --volume        # day-partitioned logs: 1M JSON Lines, 10M and
                                                       # 100M Parquet rows (evalcore.signals.volume)

Target (issue 12): a million lines in seconds. Prints one table: seconds and peak memory of each reader
(in its own process, so one's memory does not count against another's), and the clean / 0.1 % broken
lines case for evalcore (bad lines are named and left out; the others give up or need their own code).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs" / "logs" / "production.jsonl"

READERS = {
    "evalcore read_log": "from evalcore.signals.logs import read_log; r = read_log(P); n = r.interactions.height",
    "pandas read_json(lines=True)": "import pandas as pd; n = len(pd.read_json(P, lines=True))",
    "json.loads loop": "import json\nwith open(P) as fh: n = sum(1 for line in fh if json.loads(line))",
}

RUNNER = """
import resource, sys, time
P = sys.argv[1]
t = time.perf_counter()
{code}
dt = time.perf_counter() - t
print(dt, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, n)
"""


def make_log(path: Path, lines: int, broken_every: int = 0) -> None:
    src = SAMPLE.read_text().splitlines()
    with path.open("w") as fh:
        for i in range(lines):
            line = src[i % len(src)]
            if broken_every and i % broken_every == broken_every - 1:
                line = line[:50]
            fh.write(line + "\n")


def run(code: str, path: Path) -> tuple[float, float, int] | str:
    got = subprocess.run(
        [sys.executable, "-c", RUNNER.format(code=code), str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    if got.returncode:
        return (got.stderr.strip().splitlines() or ["failed"])[-1][:60]
    dt, mem, n = got.stdout.split()
    return float(dt), float(mem), int(n)


VOLUME = """
import resource, sys, time
from evalcore.signals.volume import hourly
t = time.perf_counter()
h = hourly(sys.argv[1]).hourly
dt = time.perf_counter() - t
print(dt, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, int(h["questions"].sum()))
"""


def make_parquet_days(root: Path, rows: int, days: int) -> None:
    """``rows`` log rows spread over ``days`` day=… partitions of Parquet (what a log pipeline writes),
    made column by column (no JSON on the way): time, answer, abstained, keyword hits, feedback."""
    import numpy as np
    import polars as pl

    rng = np.random.default_rng(0)
    per = rows // days
    for d in range(days):
        day = (date(2026, 10, 1) + timedelta(days=d)).isoformat()
        folder = root / f"day={day}"
        folder.mkdir(parents=True)
        secs = np.sort(rng.integers(0, 86_400, per))
        declined = rng.random(per) < 0.15
        frame = (
            pl.DataFrame(
                {
                    "conversation_id": pl.int_range(0, per, eager=True).cast(pl.String),
                    "time": pl.Series(
                        (np.datetime64(day) + secs.astype("timedelta64[s]")).astype("datetime64[us]")
                    )
                    .dt.replace_time_zone("UTC")
                    .dt.strftime("%Y-%m-%dT%H:%M:%SZ"),
                    "answer": pl.Series(np.where(declined, "I don't know.", "Open Restore, pick the file.")),
                    "keyword_hits": pl.Series(rng.integers(0, 5, per)),
                    "_thumb": pl.Series(rng.choice(np.array(["up", "down", ""]), per, p=[0.05, 0.02, 0.93])),
                }
            )
            .with_columns(
                feedback=pl.struct(thumb=pl.col("_thumb").replace("", None)),
                question=pl.lit("How do I restore a file?"),
            )
            .drop("_thumb")
        )
        frame.write_parquet(folder / "part-0.parquet", row_group_size=1_000_000)


def volume(scale: float = 1.0) -> None:
    targets = {"1M JSON Lines": (6.0, None), "10M Parquet": (10.0, None), "100M Parquet": (None, 2048.0)}
    print(f"| {'log':<16} | {'rows':>12} | {'MB on disk':>10} | {'seconds':>8} | {'peak MB':>8} | target |")
    print(f"|{'-' * 18}|{'-' * 14}|{'-' * 12}|{'-' * 10}|{'-' * 10}|{'-' * 8}|")
    with tempfile.TemporaryDirectory() as tmp:
        cases = []
        jl = Path(tmp) / "jsonl"
        for d in range(10):  # 1,000,000 lines of the sample log's shape over 10 days
            folder = jl / f"day=2026-11-{d + 1:02d}"
            folder.mkdir(parents=True)
            make_log(folder / "part-0.jsonl", int(100_000 * scale))
        cases.append(("1M JSON Lines", jl))
        p10 = Path(tmp) / "p10"
        make_parquet_days(p10, int(10_000_000 * scale), 10)
        cases.append(("10M Parquet", p10))
        p100 = Path(tmp) / "p100"
        make_parquet_days(p100, int(100_000_000 * scale), 50)
        cases.append(("100M Parquet", p100))
        for name, root in cases:
            size = sum(f.stat().st_size for f in root.rglob("*") if f.is_file()) / 1e6
            got = subprocess.run([sys.executable, "-c", VOLUME, str(root)], capture_output=True, text=True)
            if got.returncode:
                print(
                    f"| {name:<16} | {'':>12} | {size:>10,.0f} | {'fails':>8} | {'':>8} | {got.stderr.strip()[-40:]} |"
                )
                continue
            dt, mem, n = got.stdout.split()
            secs, peak = float(dt), float(mem)
            want_s, want_mb = targets[name]
            ok = (want_s is None or secs <= want_s) and (want_mb is None or peak <= want_mb)
            goal = f"<= {want_s:g} s" if want_s else f"< {want_mb:,.0f} MB"
            print(
                f"| {name:<16} | {int(n):>12,} | {size:>10,.0f} | {secs:>8.2f} | {peak:>8.0f} | {goal} {'yes' if ok else 'NO'} |"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--volume", action="store_true", help="day-partitioned logs (evalcore.signals.volume)")
    ap.add_argument("--scale", type=float, default=1.0, help="--volume: a fraction of the sizes, to try it")
    args = ap.parse_args()
    if args.volume:
        volume(args.scale)
        return
    with tempfile.TemporaryDirectory() as tmp:
        clean, broken = Path(tmp) / "clean.jsonl", Path(tmp) / "broken.jsonl"
        make_log(clean, args.lines)
        make_log(broken, args.lines, broken_every=1000)
        size = os.path.getsize(clean) / 1e6
        print(f"{args.lines:,} lines, {size:,.0f} MB\n")
        print(f"| {'reader':<30} | {'log':<14} | {'seconds':>8} | {'peak MB':>8} | {'rows':>10} |")
        print(f"|{'-' * 32}|{'-' * 16}|{'-' * 10}|{'-' * 10}|{'-' * 12}|")
        for name, code in READERS.items():
            for label, path in (("clean", clean), ("0.1 % broken", broken)):
                got = run(code, path)
                if isinstance(got, str):
                    print(f"| {name:<30} | {label:<14} | {'fails':>8} | {'':>8} | {got[:10]:>10} |")
                else:
                    print(f"| {name:<30} | {label:<14} | {got[0]:>8.2f} | {got[1]:>8.0f} | {got[2]:>10,} |")


if __name__ == "__main__":
    main()
