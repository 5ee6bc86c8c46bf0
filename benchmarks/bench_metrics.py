"""Retrieval metrics at scale: evalcore vs pytrec_eval, ir_measures and ranx (each where installed:
`pip install ranx ir_measures`), side by side.

    python benchmarks/bench_metrics.py                            # 100,000 questions x 100 chunks
    python benchmarks/bench_metrics.py --queries 100000,1000000   # both sizes, one table each
    python benchmarks/bench_metrics.py --queries 10000            # quicker
    python benchmarks/bench_metrics.py --queries 1000000 --tools evalcore,ranx --repeat 1

A tool that runs out of the memory limit (--memory-gb, default 20, of this machine's 24) is reported
so, not waited for.

Each measurement runs in its own process (so peak memory is that tool's alone), three times; the table
shows the median time, the peak resident memory and the largest per-query difference from evalcore.
"compute" starts from data already in the tool's own in-memory form (for evalcore, the frames
`read_trec` returns, whose docnos are already hashed into categorical codes; for pytrec_eval, its
dicts); "end to end" starts from TREC files on disk and includes everything after the imports — for
evalcore that includes loading numba's compiled kernel, which `read_trec` starts on a background
thread while it parses. The run file is written as retrieval systems write one: each question's documents in
rank order (score descending), with many tied scores left in no particular order, and questions in
numeric order (q2 before q10). Targets: evalcore >= 2x faster than pytrec_eval compute, >= 5x end to end, identical
values (<= 1e-12), lower peak memory.

Two more rows per tool run trec_eval's own measure sets end to end: "official" (trec_eval's default
output: num_*, map, gm_map, Rprec, bpref, recip_rank, iprec_at_recall, P) and "all_trec" (every measure
pytrec_eval and `evalcore trec` both compute) — `evalcore trec` as its CLI runs them, pytrec_eval with
the same set. Targets: official >= 5x, all_trec >= 2x.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from evalcore.trec_eval import ALL_TREC, NOT_IMPLEMENTED, OFFICIAL

HERE = Path(__file__).resolve().parent
DATA = HERE / ".data"
OURS = ["P@10", "R@100", "nDCG@10", "AP", "RR"]
TREC = ["P_10", "recall_100", "ndcg_cut_10", "map", "recip_rank"]
# trec_eval's default set, and every all_trec measure both tools compute (per query; the summary-only
# and string ones are left to evalcore).
PYTREC_LACKS = ("rbp", "rbp_resid", "unj")  # trec_eval 10's, not in pytrec_eval's older trec_eval
SETS = {
    "official": [m for m in OFFICIAL if m not in ("runid", "num_q")],
    "all_trec": [
        m for m in ALL_TREC if m not in (*NOT_IMPLEMENTED, *PYTREC_LACKS, "runid", "num_q", "relstring")
    ],
}


def generate(n_q: int, depth: int) -> tuple[Path, Path]:
    DATA.mkdir(exist_ok=True)
    qp, rp = DATA / f"qrels-{n_q}-{depth}.txt", DATA / f"run-{n_q}-{depth}-ranked.txt"
    if qp.exists() and rp.exists():
        return qp, rp
    rng = np.random.default_rng(0)
    # Written under another name and renamed when whole: a generation stopped half way (Ctrl-C, a
    # killed session) once left files of ~15,000 questions that the next run took for 1,000,000.
    qpart, rpart = qp.with_name(qp.name + ".part"), rp.with_name(rp.name + ".part")
    with rpart.open("w") as fr, qpart.open("w") as fq:
        for q in range(n_q):
            docs = rng.choice(5 * depth, size=depth, replace=False)
            scores = np.round(rng.random(depth) * 10, 1)  # coarse scores: many ties
            order = np.lexsort((rng.random(depth), -scores))  # rank order; ties in no particular order
            fr.write("".join(f"q{q} Q0 d{docs[j]} {i + 1} {scores[j]} bench\n" for i, j in enumerate(order)))
            judged = rng.choice(5 * depth, size=20, replace=False)
            grades = rng.choice([0, 0, 1, 2, 3], size=20)
            fq.write("".join(f"q{q} 0 d{d} {g}\n" for d, g in zip(judged, grades, strict=True)))
    rpart.replace(rp)
    qpart.replace(qp)
    return qp, rp


def child(tool: str, mode: str, qp: str, rp: str, out: str) -> None:
    """One measurement; prints JSON {seconds, peak_mb}."""
    if tool == "evalcore" and mode in SETS:
        from evalcore.runs.trec import read_trec
        from evalcore.trec_eval import format_rows, parse_trec_measures, trec_eval

        t = time.perf_counter()  # what `evalcore trec -m <set> QRELS RUN` does after its imports
        _per_q, summary = trec_eval(
            read_trec(qp, rp), parse_trec_measures(SETS[mode]), per_query=False, levels="x86"
        )  # (pytrec_eval's trec_eval counts recall levels as x86-64 builds of trec_eval 9 do)
        text = format_rows(summary)
        secs = time.perf_counter() - t
        Path(out).write_text(text)
    elif tool == "evalcore":
        import polars as pl

        from evalcore.metrics.retrieval import evaluate
        from evalcore.runs.trec import read_trec

        if mode == "compute":
            files = read_trec(qp, rp)
            t = time.perf_counter()
            vals = evaluate(files.run, files.qrels, OURS)
        else:
            t = time.perf_counter()
            files = read_trec(qp, rp)
            vals = evaluate(files.run, files.qrels, OURS)
        secs = time.perf_counter() - t
        vals.rename(dict(zip(OURS, TREC, strict=True))).write_parquet(out)
        del pl
    elif tool == "pytrec_eval":
        import pytrec_eval

        def read() -> tuple[dict, dict]:
            qrels: dict[str, dict[str, int]] = {}
            with open(qp) as fh:
                for line in fh:
                    q, _, d, r = line.split()
                    qrels.setdefault(q, {})[d] = int(r)
            run: dict[str, dict[str, float]] = {}
            with open(rp) as fh:
                for line in fh:
                    q, _, d, _, s, _ = line.split()
                    run.setdefault(q, {})[d] = float(s)
            return qrels, run

        if mode == "compute":
            qrels, run = read()
            t = time.perf_counter()
        else:
            t = time.perf_counter()
            qrels, run = read()
        wanted = (
            set(SETS[mode]) if mode in SETS else {"P.10", "recall.100", "ndcg_cut.10", "map", "recip_rank"}
        )
        ev = pytrec_eval.RelevanceEvaluator(qrels, wanted)
        res = ev.evaluate(run)
        if mode in SETS:  # the means, as trec_eval prints them
            names = next(iter(res.values())).keys()
            means = {m: sum(v[m] for v in res.values()) / len(res) for m in names}
        secs = time.perf_counter() - t
        import polars as pl

        if mode in SETS:
            Path(out).write_text(json.dumps(means))
        else:
            pl.DataFrame([{"qid": q, **{m: v[m] for m in TREC}} for q, v in res.items()]).write_parquet(out)
    elif tool == "ir_measures":
        import ir_measures
        from ir_measures import AP, RR, P, R, nDCG

        measures = [P @ 10, R @ 100, nDCG @ 10, AP, RR]
        if mode == "compute":
            im_qrels = list(ir_measures.read_trec_qrels(qp))
            im_run = list(ir_measures.read_trec_run(rp))
            t = time.perf_counter()
            values = list(ir_measures.iter_calc(measures, im_qrels, im_run))
        else:
            t = time.perf_counter()
            values = list(
                ir_measures.iter_calc(
                    measures, ir_measures.read_trec_qrels(qp), ir_measures.read_trec_run(rp)
                )
            )
        secs = time.perf_counter() - t
        del values
    elif tool == "ranx":
        import ranx

        if mode == "compute":
            qrels, run = ranx.Qrels.from_file(qp, kind="trec"), ranx.Run.from_file(rp, kind="trec")
            t = time.perf_counter()
        else:
            t = time.perf_counter()
            qrels, run = ranx.Qrels.from_file(qp, kind="trec"), ranx.Run.from_file(rp, kind="trec")
        ranx.evaluate(qrels, run, ["precision@10", "recall@100", "ndcg@10", "map", "mrr"], return_mean=False)
        secs = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": secs, "peak_mb": peak}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", default="100000", help="comma-separated sizes, e.g. 100000,1000000")
    ap.add_argument("--memory-gb", type=float, default=20.0, help="each tool's address-space limit")
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--tools",
        default="evalcore,pytrec_eval,ir_measures,ranx",
        help="which tools (evalcore always): at 1,000,000 queries the others ran out of the 20 GB limit",
    )
    ap.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return
    for size in (int(q) for q in str(args.queries).split(",")):
        table(size, args)


def _limited(gb: float) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (int(gb * 2**30), int(gb * 2**30)))


def table(queries: int, args: argparse.Namespace) -> None:
    qp, rp = generate(queries, args.depth)
    wanted = {t.strip() for t in args.tools.split(",")}
    unknown = wanted - {"evalcore", "pytrec_eval", "ir_measures", "ranx"}
    if unknown:
        raise SystemExit(
            f"--tools: unknown {', '.join(sorted(unknown))} (evalcore, pytrec_eval, ir_measures, ranx)"
        )
    tools = ["evalcore"] + (["pytrec_eval"] if "pytrec_eval" in wanted else [])
    for name in ("ir_measures", "ranx"):
        if name not in wanted:
            continue
        try:
            __import__(name)
            tools.append(name)
        except ImportError:
            print(f"({name} not installed: pip install {name})")
    rows = []
    for mode in ("compute", "end to end", "official", "all_trec"):
        for tool in tools:
            if mode in SETS and tool in ("ranx", "ir_measures"):
                continue
            runs: list[dict[str, float]] = []
            out = DATA / f"out-{queries}-{tool}-{mode.replace(' ', '')}.parquet"
            for _ in range(args.repeat):
                p = subprocess.run(
                    [sys.executable, __file__, "--child", tool, mode, str(qp), str(rp), str(out)],
                    capture_output=True,
                    text=True,
                    preexec_fn=lambda: _limited(args.memory_gb),
                )
                if p.returncode != 0:
                    runs = []
                    err = p.stderr.strip()
                    why = f"exit {p.returncode}: " + (err.splitlines() or [""])[-1][:120]
                    oom = ("memoryerror", "cannot allocate", "memory allocation of", "out of memory")
                    if any(w in err.lower() for w in (*oom, "outofmemory", "bad_alloc")):
                        why = f"out of memory: over the {args.memory_gb:g} GB limit ({why})"
                    print(f"{tool} {mode} at {queries:,}: failed, {why}", flush=True)
                    break
                runs.append(json.loads(p.stdout.strip().splitlines()[-1]))
            if not runs:
                rows.append((mode, tool, float("nan"), float("nan"), out))
                continue
            rows.append(
                (
                    mode,
                    tool,
                    statistics.median(r["seconds"] for r in runs),
                    max(r["peak_mb"] for r in runs),
                    out,
                )
            )
            # As it comes (a run at 1,000,000 takes an hour; one stopped early keeps what it measured).
            print(
                f"{tool} {mode} at {queries:,}: {rows[-1][2]:.2f} s, peak {rows[-1][3]:,.0f} MB", flush=True
            )
    import polars as pl

    ref = {
        mode: pl.read_parquet(out).sort("qid")
        for mode, tool, secs, _, out in rows
        if tool == "evalcore" and mode not in SETS and secs == secs  # (a failed one wrote nothing new)
    }
    from machine import describe

    print(describe())
    print(
        f"\n{queries:,} questions x {args.depth} retrieved chunks, graded labels (0-3), tied scores; "
        f"median of {args.repeat} runs, measures {', '.join(TREC)}\n"
    )
    print(
        f"| {'mode':<10} | {'tool':<12} | {'median s':>9} | {'vs evalcore':>11} | {'peak MB':>8} | {'max |diff|':>10} |"
    )
    print("|" + "|".join("-" * w for w in (12, 14, 11, 13, 10, 12)) + "|")
    for mode, tool, secs, peak, out in rows:
        base = next(s for m, t, s, *_ in rows if m == mode and t == "evalcore")
        diff = "–"
        if secs != secs:  # failed: no time, no values
            print(f"| {mode:<10} | {tool:<12} | {'failed':>9} | {'–':>11} | {'–':>8} | {'–':>10} |")
            continue
        if mode in SETS and tool == "pytrec_eval":
            diff = _summary_diff(DATA / f"out-{queries}-evalcore-{mode}.parquet", out)
        elif tool == "pytrec_eval" and out.exists() and mode in ref:
            other = pl.read_parquet(out).sort("qid")
            mine = ref[mode]
            diff = f"{max(float((mine[m] - other[m]).abs().max()) for m in TREC):.1e}"  # type: ignore[arg-type]
        elif tool == "evalcore":
            diff = "0"
        print(
            f"| {mode:<10} | {tool:<12} | {secs:>9.2f} | {secs / base:>10.1f}x | {peak:>8.0f} | {diff:>10} |"
        )


def _summary_diff(ours: Path, theirs: Path) -> str:
    """Largest difference between the "all" values evalcore printed (4 decimals) and pytrec_eval's means
    (gm_* and num_* are left out: pytrec_eval gives per-query values, not trec_eval's summaries)."""
    printed = {}
    for line in ours.read_text().splitlines():
        name, _, value = line.split("\t")
        printed[name.strip()] = value
    means = json.loads(theirs.read_text())
    worst = 0.0
    for name, mean in means.items():
        if name.startswith(("gm_", "num_")) or name not in printed:
            continue
        worst = max(worst, abs(float(printed[name]) - round(mean, 4)))
    return f"{worst:.1e} (4 dp)"


if __name__ == "__main__":
    main()
