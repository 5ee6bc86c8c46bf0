"""How fast this machine is right now, printed above each benchmark's table.

The figures in README.md and docs/scale.md come from a 2-core VM whose speed moves from hour to
hour (a neighbour on the host). On 2026-12-07 the reference below took between 0.37 and 1.45 s
within one hour, and every bench_load row was about twice its README figure of 2026-12-06 —
with the 2026-12-06 code (8c7ebfb, run from a worktree) as slow as today's, so the machine
moved, not the code. A table is comparable with another only next to this line: the best of
three pure-Python loops of 10,000,000 additions (no library involved) and the load average.
"""

from __future__ import annotations

import os
import time

QUIET_REFERENCE_S = 0.37  # the fastest seen on this VM (2026-12-07)


def reference_loop_seconds(repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        total = 0
        for i in range(10_000_000):
            total += i
        best = min(best, time.perf_counter() - start)
    return best


def describe() -> str:
    loop = reference_loop_seconds()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (
        f"machine: {os.cpu_count()} cores, load {load:.2f}; pure-Python reference loop "
        f"{loop:.2f} s ({loop / QUIET_REFERENCE_S:.1f}x the quiet machine's {QUIET_REFERENCE_S} s)"
    )


if __name__ == "__main__":
    print(describe())
