"""Judging at volume: a rerun of 10,000 questions through the Message Batches API against the same
rerun sent one request per question — the real SDK code path, against the local Messages API mock
(tests/judge/mock_api.py, in its own process) with a fixed latency per request.

    python benchmarks/bench_batches.py                       # 10,000 questions, 200 ms a request
    python benchmarks/bench_batches.py --questions 2000

Prints wall time, HTTP requests and the estimated cost of each. The batch's processing time on the
real API (up to 24 h, usually minutes) is the mock's "in progress" polls here, so the batch row measures
this side's work: building the requests, one upload, polling, streaming the results into the store.
Targets: the batch rerun sends at most 1 request per 100 questions (plus polls), costs half, and
takes no longer than the direct one at concurrency 16.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_judge import Requests, items, start_mock  # noqa: E402

from evalcore.judge.batches import judge_in_batches  # noqa: E402
from evalcore.judge.client import JudgeConfig, estimate, judge_items, make_client  # noqa: E402
from evalcore.store import Store  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--questions", type=int, default=10_000)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--concurrency", type=int, default=16)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ragtriage-bench-batches-"))
    todo = items(args.questions)
    config = JudgeConfig(
        model="claude-bench", concurrency=args.concurrency, timeout=30, max_retries=2, batch_poll=0.5
    )
    os.environ.setdefault("ANTHROPIC_API_KEY", "sk-bench-not-a-key")
    server, os.environ["ANTHROPIC_BASE_URL"] = start_mock(args.latency)
    rows = []
    try:
        for mode in ("direct", "batches"):
            requests = Requests()

            async def count(request: object, requests: Requests = requests) -> None:
                requests.count += 1

            with Store(work / f"{mode}.sqlite") as store:
                cost = estimate(todo, config, store, batch=mode == "batches").dollars

                async def go(store: Store = store, mode: str = mode) -> int:
                    client = make_client(config)
                    client._client.event_hooks["request"].append(count)
                    try:
                        rev = store.new_revision("bench", "sha", config.judge)
                        judge = judge_in_batches if mode == "batches" else judge_items
                        return sum(v.ok for v in await judge(todo, config, store, rev, client))
                    finally:
                        await client.close()

                t = time.perf_counter()
                ok = asyncio.run(go())
                rows.append((mode, time.perf_counter() - t, requests.count, ok, cost))
    finally:
        server.terminate()
        shutil.rmtree(work, ignore_errors=True)
    (_, t_direct, _, _, c_direct), (_, t_batch, r_batch, ok_batch, c_batch) = rows
    print(
        f"{args.questions:,} questions, {args.latency * 1000:.0f} ms a request, concurrency {args.concurrency}, "
        f"batch polled every {config.batch_poll:g} s"
    )
    print(f"{'':<28}{'wall':>9}{'requests':>10}{'judged':>9}{'estimate':>11}")
    for mode, secs, reqs, ok, cost in rows:
        print(f"{mode:<28}{secs:>8.1f}s{reqs:>10,}{ok:>9,}{'$' + format(cost, ',.2f'):>11}")
    checks = [
        (f"requests <= 1 per 100 questions + polls ({r_batch})", r_batch <= args.questions / 100 + 20),
        (
            f"batch estimate half of direct (${c_batch:.2f} vs ${c_direct:.2f})",
            abs(c_batch - c_direct / 2) < 0.01,
        ),
        (f"batch wall time <= direct ({t_batch:.1f} s vs {t_direct:.1f} s)", t_batch <= t_direct),
        (f"every question judged ({ok_batch:,})", ok_batch == args.questions),
    ]
    for what, met in checks:
        print(f"{'yes' if met else 'NO ':<4} {what}")


if __name__ == "__main__":
    main()
