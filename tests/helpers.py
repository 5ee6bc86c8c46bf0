"""Helpers shared by the tests (fixtures live in conftest.py)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import polars as pl

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"


def case(qid: str, relevant: dict[str, int] | None = None, **kw: Any) -> dict[str, Any]:
    return {
        "qid": qid,
        "question": f"question {qid}?",
        "relevant": relevant or {},
        "tags": {"type": "lookup", "topic": "t", "source": "real"},
        **kw,
    }


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8"
    )
    return path


# Markdown that would load a remote image or hide where a link goes, were run text rendered raw. HTML
# alone would not catch that: Streamlit shows HTML as text anyway, but it renders markdown.
def md_payload(field: str) -> str:
    return f"{field} ![px](https://evil.invalid/{field}.png) [innocent {field}](https://evil.invalid/{field})"


def hostile_markdown_runs(runs: Path, qid: str = "hv-026", run_ids: tuple[str, ...] = ()) -> dict[str, str]:
    """Put :func:`md_payload` in every untrusted field of ``qid`` — question, reference answer, answer,
    retrieved chunk, judge claim and its quote — in the test set and the given runs. Returns them."""
    payloads = {f: md_payload(f) for f in ("question", "reference", "answer", "chunk", "claim")}
    ts = runs / "testset.jsonl"
    cases = [json.loads(x) for x in ts.read_text().splitlines()]
    for c in cases:
        if c["qid"] == qid:
            c["question"], c["reference_answer"] = payloads["question"], payloads["reference"]
    write_jsonl(ts, cases)
    for run_id in run_ids:
        path = runs / run_id / "results.jsonl"
        recs = [json.loads(x) for x in path.read_text().splitlines()]
        for rec in recs:
            if rec["qid"] == qid:
                rec["answer"] = payloads["answer"]
                rec["retrieved"][0]["text"] = payloads["chunk"]
                # A supported claim quoting the link: the quote is highlighted inside the chunk.
                rec["judge"]["claims"] = [
                    {
                        "claim": payloads["claim"],
                        "verdict": "SUPPORTED",
                        "quote": "[innocent chunk](https://evil.invalid/chunk)",
                        "chunk_id": rec["retrieved"][0]["chunk_id"],
                    }
                ]
        write_jsonl(path, recs)
    return payloads


def make_data(seed: int, n_q: int = 300) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A run and qrels with what breaks naive implementations: tied scores across cutoffs, unjudged
    chunks, graded labels, judged-not-relevant labels, short rankings, relevant chunks never retrieved,
    questions with nothing relevant."""
    rnd = random.Random(seed)
    run_rows, qrel_rows = [], []
    for qi in range(n_q):
        qid = f"q{qi}"
        pool = [f"d{rnd.randrange(60):02d}" for _ in range(40)]
        pool = list(dict.fromkeys(pool))
        n_ret = rnd.choice([0, 1, 2, 4, 7, 12, 25, len(pool)])
        for d in pool[:n_ret]:
            score = float(rnd.choice([1, 2, 3])) if rnd.random() < 0.5 else round(rnd.random(), 2)
            run_rows.append((qid, d, score))
        judged = rnd.sample(range(60), rnd.choice([1, 2, 5, 10]))
        for j in judged:
            grade = rnd.choice([0, 0, 1, 1, 2, 3]) if qi % 17 else 0  # some questions: nothing relevant
            qrel_rows.append((qid, f"d{j:02d}", grade))
    run = pl.DataFrame(
        run_rows, schema={"qid": pl.String, "chunk_id": pl.String, "score": pl.Float64}, orient="row"
    )
    qrels = pl.DataFrame(
        qrel_rows, schema={"qid": pl.String, "chunk_id": pl.String, "rel": pl.Int64}, orient="row"
    )
    return run, qrels


def write_trec(tmp: Path, seed: int = 3) -> tuple[Path, Path]:
    run, qrels = make_data(seed, n_q=80)
    qp, rp = tmp / "qrels.txt", tmp / "run.txt"
    qp.write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in qrels.iter_rows()))
    # Arbitrary rank column (trec_eval ignores it) and mixed white space.
    rp.write_text("".join(f"{q}\tQ0  {d} 99 {s} myrun\n" for q, d, s in run.iter_rows()))
    return qp, rp


CUTS = (1, 3, 5, 10, 20)


def oracle(run: pl.DataFrame, qrels: pl.DataFrame, level: int = 1) -> dict[str, dict[str, float]]:
    """pytrec_eval's per-query values (trec_eval's C code) for the measures evalcore names. The test
    that calls it skips (or, under CI, fails) without pytrec_eval: ``pytest.importorskip`` first."""
    import pytrec_eval

    q: dict[str, dict[str, int]] = {}
    for qid, cid, rel in qrels.iter_rows():
        q.setdefault(qid, {})[cid] = rel
    r: dict[str, dict[str, float]] = {}
    for qid, cid, score in run.iter_rows():
        r.setdefault(qid, {})[cid] = score
    ev = pytrec_eval.RelevanceEvaluator(
        q,
        {
            f"P.{','.join(map(str, CUTS))}",
            f"recall.{','.join(map(str, CUTS))}",
            f"ndcg_cut.{','.join(map(str, CUTS))}",
            f"map_cut.{','.join(map(str, CUTS))}",
            "success.1,5,10",
            "recip_rank",
            "map",
            "Rprec",
            "ndcg",
        },
        relevance_level=level,
    )
    return ev.evaluate(r)


# Two unrelated Ragas exports, as two teams' files: both number their questions ragas-00001, ...
RAGAS_EXPORTS = {
    "support-bot": [
        ("How do I reset my password?", "Open Settings, then Security, then Reset password.", 0.9),
        ("Which browsers are supported?", "Chrome, Firefox and Safari, in their two latest versions.", 0.8),
        ("Can I export my invoices?", "Yes: Billing, then Invoices, then Export as CSV.", 0.4),
        ("Is there a mobile app?", "Yes, for iOS and Android.", 1.0),
    ],
    "hr-policies": [
        ("How many vacation days do new employees get?", "25 days a year, prorated in the first year.", 0.7),
        ("Who approves parental leave?", "The HR business partner, after the manager is told.", 0.6),
        ("Can I work from abroad?", "Up to 30 days a year, with the manager's approval.", 0.2),
    ],
}


def write_ragas_exports(folder: Path) -> dict[str, Path]:
    """The two exports of :data:`RAGAS_EXPORTS` as Ragas CSV files; returns name -> path."""
    out = {}
    for name, rows in RAGAS_EXPORTS.items():
        path = folder / f"{name}.csv"
        pl.DataFrame(
            {
                "user_input": [q for q, _, _ in rows],
                "retrieved_contexts": [str([a, f"Unrelated text {i}."]) for i, (_, a, _) in enumerate(rows)],
                "response": [f"{name} answer: {a}" for _, a, _ in rows],
                "reference": [a for _, a, _ in rows],
                "faithfulness": [f for _, _, f in rows],
                "answer_relevancy": [round(1 - f / 2, 2) for _, _, f in rows],
            }
        ).write_csv(path)
        out[name] = path
    return out


def mixed_runs_folder(folder: Path) -> Path:
    """A runs folder holding the two unrelated Ragas exports, each imported into its own sibling folder
    with ``evalcore import ragas`` (run ids ``support-bot`` and ``hr-policies``)."""
    from evalcore.cli import main

    exports = write_ragas_exports(folder.parent)
    for name, path in exports.items():
        assert main(["import", "ragas", str(path), "--out", str(folder / name), "--run-id", name]) == 0
    return folder


def two_testset_versions(runs: Path, run_id: str) -> Path:
    """A copy of sample_runs/ whose run ``run_id`` answered a second version of the test set: one
    question reworded, two relabeled, the rest unchanged."""
    import json

    from evalcore.cache import file_sha256

    cases = [json.loads(x) for x in (runs / "testset.jsonl").read_text().splitlines()]
    cases[0]["question"] += " (reworded)"
    for c in cases[1:3]:
        c["relevant"] = {**c["relevant"], "extra-chunk": 1}
    v2 = runs / "testset-v2.jsonl"
    v2.write_text("".join(json.dumps(c) + "\n" for c in cases))
    manifest = runs / run_id / "run.json"
    obj = json.loads(manifest.read_text())
    obj["test_set"] = {"path": "../testset-v2.jsonl", "sha256": file_sha256(v2)}
    manifest.write_text(json.dumps(obj))
    return runs


def judged_by_another_judge(runs: Path, run_id: str) -> None:
    """Record in ``run_id``'s run.json that another judge (model and prompt) made its verdicts."""
    import json

    manifest = runs / run_id / "run.json"
    obj = json.loads(manifest.read_text())
    obj["judge"] = {"model": "claude-other-judge", "prompt_version": "faithfulness-v4"}
    manifest.write_text(json.dumps(obj))
