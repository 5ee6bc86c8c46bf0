"""Importing a production log: evalcore.signals.read_log against what a user would otherwise write —
pandas ``read_json(lines=True)`` and a plain Python ``json.loads`` loop — on a log of N lines made by
repeating the sample log (a fresh file each run: no cache involved).

    python benchmarks/bench_signals.py                 # 1,000,000 lines
    python benchmarks/bench_signals.py --lines 200000

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=1_000_000)
    args = ap.parse_args()
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
