"""The dashboard at scale, measured in a real browser (Debian's Chromium).

    python benchmarks/bench_dashboard.py                 # 20 runs x 10,000 questions, parquet
    python benchmarks/bench_dashboard.py --format jsonl  # the same runs as results.jsonl (a team's usual files)
    python benchmarks/bench_dashboard.py --format trec   # runs made with `evalcore import trec`: 20 chunks,
                                                         # no text or answers (issue 8's first-view folder)
    python benchmarks/bench_dashboard.py --questions 2000
    python benchmarks/bench_dashboard.py --format trec --first-views 5   # more first views per page

Generates the runs (parquet, 10 retrieved chunks with text, an answer and judge claims per question),
then for each page measures the time from navigation to a fully rendered page — script finished, no
skeleton left — three ways: "first view" (a fresh server and an empty disk cache: the runs are parsed
and scored for the first time), "cold" (a fresh server, so nothing in memory, with the disk caches
that earlier sessions leave: parsed runs, scores, slice tests) and "warm" (a reload); and the
server's peak resident memory. Targets: warm <= 1.5 s, cold <= 5 s, peak <= 2 GB.
For scale: TruLens' leaderboard takes 20-30 s at 10k records; promptfoo's viewer failed to render 10k.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "e2e"))
from server import CHROMIUM, CHROMIUM_ARGS, dashboard, wait_rendered  # noqa: E402

TYPES = ["lookup", "comparison", "multi-hop", "identifier", "unanswerable"]
TOPICS = ["billing", "security", "restore", "backups", "cli", "errors", "integrations", "agent"]
WORDS = [
    "snapshot",
    "retention",
    "vault",
    "agent",
    "restore",
    "policy",
    "storage",
    "bucket",
    "token",
    "seat",
    "plan",
    "device",
    "error",
    "schedule",
    "window",
    "encryption",
    "key",
    "rotation",
    "bandwidth",
    "compression",
    "chunk",
    "target",
    "quota",
]


def generate(
    folder: Path, n_runs: int, n_q: int, depth: int = 10, fmt: str = "parquet", *, text: bool = True
) -> None:
    """``n_runs`` runs of ``n_q`` questions x ``depth`` chunks; ``text=False``: chunks without their
    text (a retrieval log's runs: ids and scores, as a TREC import gives)."""
    if (folder / "done").exists():
        return
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    qids = [f"q{i:05d}" for i in range(n_q)]
    n_chunks = n_q * 3
    chunk_text = [" ".join(rng.choice(WORDS, size=30)) + f" (chunk {i})" for i in range(n_chunks)]
    unans = rng.random(n_q) < 0.15
    rel_chunk = rng.integers(0, n_chunks, size=n_q)
    with (folder / "testset.jsonl").open("w") as fh:
        for i, q in enumerate(qids):
            fh.write(
                json.dumps(
                    {
                        "qid": q,
                        "question": f"How does the {WORDS[i % len(WORDS)]} setting work (case {i})?",
                        "relevant": {} if unans[i] else {f"c{rel_chunk[i]}": 2},
                        "reference_answer": None if unans[i] else chunk_text[rel_chunk[i]][:80],
                        "tags": {
                            "type": "unanswerable" if unans[i] else TYPES[i % 4],
                            "topic": TOPICS[i % len(TOPICS)],
                            "source": "synthetic" if i % 3 == 0 else "real",
                        },
                        "split": "heldout" if i % 5 == 0 else "dev",
                        "must_pass": i % 97 == 0,
                    }
                )
                + "\n"
            )
    sha = hashlib.sha256((folder / "testset.jsonl").read_bytes()).hexdigest()
    start = datetime(2026, 6, 1, tzinfo=UTC)
    texts = pl.Series("text", chunk_text)
    qcol = np.repeat(np.arange(n_q), depth)
    for r in range(n_runs):
        # Built column-wise (a 10,000-question run in about a second, so a folder of 200 runs is
        # minutes, not hours): `depth` chunks per question, the labeled one at a random rank when
        # the run finds it, scores descending; one chunk id appears once per question.
        quality = 0.55 + 0.4 * r / max(1, n_runs - 1)
        hit = (rng.random(n_q) < quality) & ~unans
        ids = rng.integers(0, n_chunks, size=(n_q, depth))
        pos = rng.integers(0, depth, size=n_q)
        ids[hit, pos[hit]] = rel_chunk[hit]
        scores = -np.sort(-rng.random((n_q, depth)), axis=1)
        flat = pl.DataFrame({"q": qcol, "c": ids.ravel(), "score": scores.ravel()})
        flat = flat.unique(["q", "c"], keep="first", maintain_order=True)
        flat = flat.with_columns(
            chunk_id="c" + pl.col("c").cast(pl.String),
            doc_id="d" + (pl.col("c") // 5).cast(pl.String),
            text=texts.gather(flat["c"]),
        )
        fields = ["chunk_id", "doc_id", "score", *(["text"] if text else [])]
        top = flat.group_by("q", maintain_order=True).agg(
            retrieved=pl.struct(fields), first=pl.col("c").first()
        )
        first_text = texts.gather(top["first"])
        refuse = unans & (rng.random(n_q) < 0.8)
        claim = pl.struct(
            claim=first_text.str.slice(0, 60),
            verdict=pl.when(pl.Series(hit)).then(pl.lit("SUPPORTED")).otherwise(pl.lit("NOT_SUPPORTED")),
            quote=pl.when(pl.Series(hit)).then(first_text.str.slice(0, 60)),
            chunk_id="c" + top["first"].cast(pl.String),
        )
        runs = pl.DataFrame({"qid": qids}).with_columns(
            retrieved=top["retrieved"],
            answer=pl.when(pl.Series(refuse))
            .then(pl.lit("I don't know."))
            .otherwise(first_text.str.slice(0, 120)),
            judge=pl.struct(
                claims=pl.concat_list([claim, claim, claim]),
                correctness=pl.when(pl.Series(hit)).then(pl.lit("correct")).otherwise(pl.lit("incorrect")),
                relevance=pl.Series(rng.random(n_q)),
            ),
            latency_ms=pl.Series(rng.random(n_q) * 2000),
        )
        run_dir = folder / f"run-{r:02d}"
        run_dir.mkdir(exist_ok=True)
        if fmt == "jsonl":
            runs.write_ndjson(run_dir / "results.jsonl")
        else:
            runs.write_parquet(run_dir / "results.parquet")
        (run_dir / "run.json").write_text(
            json.dumps(
                {
                    "run_id": f"run-{r:02d}",
                    "label": f"Variant {r}",
                    "created": (start + timedelta(days=r)).isoformat(),
                    "test_set": {"path": "../testset.jsonl", "sha256": sha},
                    "system": {"variant": r},
                }
            )
        )
    (folder / "done").write_text("")


def generate_trec(folder: Path, n_runs: int, n_q: int, depth: int = 20) -> None:
    """TREC files turned into runs the way a user does it (bench_load.py makes the same folder)."""
    if (folder / "done").exists():
        return
    from bench_load import build_folder, make_trec

    trec = folder / "trec"
    trec.mkdir(parents=True, exist_ok=True)
    qrels, runs = make_trec(trec, n_q, depth, n_runs)
    build_folder(folder / "runs", qrels, runs, prefix="run-", start=datetime(2026, 6, 1, tzinfo=UTC))
    (folder / "done").write_text("")


# Single loads on this kind of machine vary by ±20%: "cold" is the median of COLD_STARTS fresh
# servers, "warm" the median of WARM_RELOADS reloads on each of them.
COLD_STARTS = 3
WARM_RELOADS = 5

FLOOR_APP = """\
import plotly.graph_objects as go
import polars as pl
import streamlit as st

st.set_page_config(layout="wide")
st.dataframe(pl.DataFrame({"a": [1, 2]}))
st.plotly_chart(go.Figure(go.Scatter(x=[1, 2], y=[1, 2])))
"""


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--questions", type=int, default=10_000)
    ap.add_argument("--format", choices=["parquet", "jsonl", "trec"], default="parquet")
    ap.add_argument(
        "--first-views",
        type=int,
        default=3,
        help="first views per page (each a fresh server on an emptied cache folder); the median is reported",
    )
    args = ap.parse_args()
    folder = (
        HERE
        / ".data"
        / f"dash-{args.runs}x{args.questions}{'' if args.format == 'parquet' else '-' + args.format}"
    )
    t = time.perf_counter()
    if args.format == "trec":
        generate_trec(folder, args.runs, args.questions)
    else:
        generate(folder, args.runs, args.questions, fmt=args.format)
    print(f"data: {folder} ({time.perf_counter() - t:.0f} s to generate)")
    if args.format == "trec":
        folder = folder / "runs"
    base, cand = f"run-{args.runs - 2:02d}", f"run-{args.runs - 1:02d}"
    pages = [
        ("overview", "/"),
        ("breakdown (1 run, by topic)", f"/Breakdown?run={cand}&by=topic"),
        ("breakdown (2 runs, deltas)", f"/Breakdown?run={cand}&vs={base}&by=type"),
        (f"compare ({args.questions:,} pairs)", f"/Compare?base={base}&cand={cand}"),
        ("drill-down", f"/Compare?base={base}&cand={cand}&qid=q00042"),
        ("question (all runs)", "/Question?qid=q00042"),
    ]
    import os
    import shutil
    import tempfile

    from playwright.sync_api import sync_playwright

    cache = Path(tempfile.mkdtemp(prefix="ragtriage-bench-cache-"))
    os.environ["RAGTRIAGE_CACHE_DIR"] = str(cache)  # the servers inherit it
    # The floor: the same measurement of a page with no data at all — one 2-row table and one
    # 2-point plotly chart, the libraries every page loads. No page can be faster than this.
    floor_app = cache.parent / f"{cache.name}-floor.py"
    floor_app.write_text(FLOOR_APP)
    floor_name = "floor (no data: Streamlit, 1 table, 1 plotly chart)"
    samples: dict[str, dict[str, list[float]]] = {
        name: {"first": [], "cold": [], "warm": []} for name in [*(n for n, _ in pages), floor_name]
    }
    peak = 0.0
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for _ in range(COLD_STARTS):
            with dashboard(None, timeout=120, script=floor_app) as url:
                page = browser.new_page(viewport={"width": 1500, "height": 1200})
                t0 = time.perf_counter()
                page.goto(url)
                wait_rendered(page)
                samples[floor_name]["cold"].append(time.perf_counter() - t0)
                for _ in range(WARM_RELOADS):
                    t0 = time.perf_counter()
                    page.reload()
                    wait_rendered(page)
                    samples[floor_name]["warm"].append(time.perf_counter() - t0)
                page.close()
        samples[floor_name]["first"] = samples[floor_name]["cold"]
        for phase in ("first", "prime", "cold"):
            if phase == "first":
                shutil.rmtree(cache, ignore_errors=True)
            if phase == "prime":
                # Visit every page once, untimed, as a user's earlier sessions would have: the disk
                # caches (parsed runs, scores, slice tests) then hold what every page needs.
                with dashboard(folder, timeout=120) as url:
                    page = browser.new_page(viewport={"width": 1500, "height": 1200})
                    for _, path in pages:
                        page.goto(url + path)
                        wait_rendered(page, timeout_ms=300_000)
                    page.close()
                continue
            for name, path in pages:
                for _ in range(args.first_views if phase == "first" else COLD_STARTS):
                    if phase == "first":
                        shutil.rmtree(cache, ignore_errors=True)  # nothing this tool ever computed
                    with dashboard(folder, timeout=120) as url:  # a fresh server: no in-process cache
                        page = browser.new_page(viewport={"width": 1500, "height": 1200})
                        t0 = time.perf_counter()
                        page.goto(url + path)
                        wait_rendered(page, timeout_ms=300_000)
                        samples[name][phase].append(time.perf_counter() - t0)
                        if phase == "cold":
                            for _ in range(WARM_RELOADS):
                                t0 = time.perf_counter()
                                page.reload()
                                wait_rendered(page, timeout_ms=300_000)
                                samples[name]["warm"].append(time.perf_counter() - t0)
                        page.close()
                        peak = max(peak, peak_rss_mb(url.pid))
        browser.close()
    shutil.rmtree(cache, ignore_errors=True)
    size = sum(p.stat().st_size for p in folder.rglob("results.*")) / 1e6
    args.format = "jsonl" if args.format == "trec" else args.format
    print(
        f"\n{args.runs} runs x {args.questions:,} questions ({size:,.0f} MB of results.{args.format}), Chromium, "
        "seconds from navigation to a fully rendered page"
    )
    print(
        f"first view: fresh server and empty disk cache (runs never scored before; median of {args.first_views});"
    )
    print(
        f"cold: fresh server, disk caches as earlier sessions left them (median of {COLD_STARTS} servers); warm:"
    )
    print(
        f"reload (median of {COLD_STARTS} x {WARM_RELOADS}). Targets: first view <= 6 s (none over 10 s), cold <= 5 s, warm <= 1.5 s.\n"
    )
    print(
        f"| {'page':<52} | {'first view':>10} | {'range':>11} | {'cold':>6} | {'range':>11} | {'warm':>6} "
        f"| {'range':>11} | targets |"
    )
    print("|" + "|".join("-" * w for w in (54, 12, 13, 8, 13, 8, 13)) + "|---------|")
    floor_app.unlink(missing_ok=True)
    for name, got in samples.items():
        r = {k: statistics.median(v) for k, v in got.items()}
        ok = (
            "ok"
            if r["first"] <= 6 and max(got["first"]) <= 10 and r["cold"] <= 5 and r["warm"] <= 1.5
            else "MISSED"
        )
        if name == floor_name:
            ok = "–"
        spread = {k: f"{min(v):.2f}–{max(v):.2f}" for k, v in got.items()}
        print(
            f"| {name:<52} | {r['first']:>10.2f} | {spread['first']:>11} | {r['cold']:>6.2f} | {spread['cold']:>11} | {r['warm']:>6.2f} "
            f"| {spread['warm']:>11} | {ok:<7} |"
        )
    print(f"\nserver peak memory (max over all page servers): {peak:,.0f} MB (target <= 2,048 MB)")
    print(
        "peers: TruLens leaderboard 20-30 s at 10k records; promptfoo's viewer failed to render 10k results"
    )


if __name__ == "__main__":
    main()
