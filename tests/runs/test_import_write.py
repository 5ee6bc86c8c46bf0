"""Importers and the RunWriter: files from other tools become runs that score the same."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from evalcore import RunWriter, load_run, read_testset, score_run
from evalcore.cli import main
from evalcore.metrics.retrieval import evaluate
from evalcore.runs.trec import read_trec
from helpers import SAMPLE, write_trec


def test_trec_import_scores_like_the_trec_files(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    qp, rp = write_trec(tmp_path)
    assert main(["import", "trec", "--qrels", str(qp), "--run", str(rp), "--out", str(tmp_path / "out")]) == 0
    run = load_run(tmp_path / "out" / "myrun")
    files = read_trec(qp, rp)
    direct = evaluate(files.run, files.qrels, ["AP", "nDCG@10"])
    answerable = set(files.qrels.filter(pl.col("rel") >= 1)["qid"])
    ours = (
        score_run(run, ["AP", "nDCG@10"])
        .filter(pl.col("qid").is_in(answerable))
        .select("qid", "AP", "nDCG@10")
    )
    from polars.testing import assert_frame_equal

    assert_frame_equal(
        ours.sort("qid"), direct.filter(pl.col("qid").is_in(answerable)).sort("qid"), abs_tol=1e-12
    )
    # A TREC run carries no answer: the answer-side rates are not applicable, not 0.000.
    full = score_run(run)
    assert full["false_refusal"].null_count() == full.height and full["no_answer"].null_count() == full.height
    # Never overwrites what exists: the same run id again is refused, naming the way out.
    assert main(["import", "trec", "--qrels", str(qp), "--run", str(rp), "--out", str(tmp_path / "out")]) == 2
    assert "already exists; runs are never overwritten — pass another --run-id" in capsys.readouterr().err
    # A second run of the same qrels imports into the same folder: the identical test set is reused.
    before = (tmp_path / "out" / "testset.jsonl").read_bytes()
    args = ["import", "trec", "--qrels", str(qp), "--run", str(rp), "--out", str(tmp_path / "out")]
    assert main([*args, "--run-id", "second"]) == 0
    assert "(already there, reused)" in capsys.readouterr().out
    assert (tmp_path / "out" / "testset.jsonl").read_bytes() == before
    assert load_run(tmp_path / "out" / "second").testset.sha256 == run.testset.sha256


def test_import_into_a_folder_with_another_test_set_says_how_to_go_on(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    qp, rp = write_trec(tmp_path)
    out = tmp_path / "out"
    assert main(["import", "trec", "--qrels", str(qp), "--run", str(rp), "--out", str(out)]) == 0
    other = tmp_path / "other.qrels"
    other.write_text(qp.read_text().replace(" 1\n", " 2\n", 1))
    capsys.readouterr()
    args = ["import", "trec", "--qrels", str(other), "--run", str(rp), "--out", str(out), "--run-id", "b"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "holds other questions than the qrels other.qrels; nothing was overwritten" in err
    assert "all 80 of its questions are in it: to add this run to that test set" in err
    assert f"pass --testset {out / 'testset.jsonl'}" in err and not (out / "b").exists()
    # The way forward it names works: the run joins the existing test set.
    assert main([*args, "--testset", str(out / "testset.jsonl")]) == 0
    assert load_run(out / "b").testset.path == (out / "testset.jsonl").resolve()


def test_ragas_0_1_jsonl_export_imports_and_joins_an_existing_test_set(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    rows = [
        {"question": "What is the Team plan's retention?", "contexts": ["Snapshots: 90 days."],
         "answer": "90 days.", "ground_truth": "90 days", "faithfulness": 1.0},
        {"question": "Tape support?", "contexts": ["Nothing."], "answer": "No.",
         "ground_truth": "No", "faithfulness": 0.5},
    ]  # fmt: skip
    export = tmp_path / "old.jsonl"
    export.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["import", "ragas", str(export), "--out", str(tmp_path / "out"), "--run-id", "a"]) == 0
    run = load_run(tmp_path / "out" / "a")
    assert run.testset.cases["question"].to_list() == [r["question"] for r in rows]
    assert run.testset.cases["reference_answer"].to_list() == ["90 days", "No"]
    assert score_run(run)["ext:faithfulness"].to_list() == [1.0, 0.5]
    # The same questions answered again, in another order: --testset matches them by text.
    export2 = tmp_path / "new.jsonl"
    export2.write_text("".join(json.dumps({**r, "answer": "?"}) + "\n" for r in reversed(rows)))
    ts = tmp_path / "out" / "testset.jsonl"
    args = ["import", "ragas", str(export2), "--out", str(tmp_path / "out"), "--run-id", "b"]
    assert main([*args, "--testset", str(ts)]) == 0
    answers = dict(load_run(tmp_path / "out" / "b").results.select("qid", "answer").iter_rows())
    assert set(answers) == set(run.results["qid"])


def test_a_file_that_is_not_a_ragas_export_gets_one_message(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    csv = tmp_path / "wrong.csv"
    pl.DataFrame({"prompt": [f"q{i}" for i in range(50)], "output": ["a"] * 50}).write_csv(csv)
    assert main(["import", "ragas", str(csv), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "missing columns user_input, retrieved_contexts" in err[0]
    assert "user_input (Ragas 0.1: question)" in err[0] and "found columns output, prompt" in err[0]


def test_imported_run_folders_follow_the_umask(tmp_path: Path) -> None:
    import os

    old = os.umask(0o022)
    try:
        with RunWriter(tmp_path / "r", testset=SAMPLE / "testset.jsonl") as w:
            w.add("hv-001", answer="x")
    finally:
        os.umask(old)
    assert (tmp_path / "r").stat().st_mode & 0o777 == 0o755


def test_ragas_csv_import_keeps_metrics_as_external_scores(tmp_path: Path) -> None:
    csv = tmp_path / "ragas.csv"
    pl.DataFrame(
        {
            "user_input": ["What is the Team plan's retention?", "Tape support?"],
            "retrieved_contexts": [
                str(["The Team plan keeps snapshots for 90 days.", "Other text."]),
                str(["Nothing."]),
            ],
            "response": ["90 days.", "I don't know."],
            "reference": ["90 days", "Not documented"],
            "reference_contexts": [str(["The Team plan keeps snapshots for 90 days."]), "[]"],
            "faithfulness": [1.0, None],
            "context_precision": [1.0, 0.0],
        }
    ).write_csv(csv)
    folder = tmp_path / "out"
    assert main(["import", "ragas", str(csv), "--out", str(folder), "--run-id", "ragas-run"]) == 0
    run = load_run(folder / "ragas-run")
    scores = score_run(run).sort("qid")
    assert scores["ext:faithfulness"].to_list() == [1.0, None]
    assert scores["ext:context_precision"].to_list() == [1.0, 0.0]
    assert scores["R@5"][0] == 1.0, "reference contexts became labels via the text hash"
    assert scores["abstention"][1] == 1.0, "an unanswerable sample that abstained"
    assert run.manifest.external_metrics == {"context_precision": "ragas", "faithfulness": "ragas"}


def test_an_answerable_question_without_labels_scores_its_answer_but_not_its_retrieval(
    tmp_path: Path,
) -> None:
    from evalcore import summarize
    from helpers import case, write_jsonl

    ts = write_jsonl(
        tmp_path / "testset.jsonl",
        [
            case("labeled", {"c1": 1}),
            case("unlabeled", answerable=True),  # answerable, chunks not labeled yet
            case("unanswerable"),
        ],
    )
    with RunWriter(tmp_path / "run", testset=ts) as w:
        for qid in ("labeled", "unlabeled", "unanswerable"):
            w.add(
                qid,
                retrieved=[{"chunk_id": "c2", "score": 2.0}, {"chunk_id": "c1", "score": 1.0}],
                answer="I don't know." if qid == "unlabeled" else "An answer.",
                judge={"claims": [], "correctness": "incorrect"},
            )
    run = load_run(tmp_path / "run")
    scores = {r["qid"]: r for r in score_run(run).iter_rows(named=True)}
    assert scores["labeled"]["RR@10"] == 0.5
    assert scores["unlabeled"]["RR@10"] is None, "no labels: unscored, not 0"
    assert scores["unlabeled"]["false_refusal"] == 1.0 and scores["unlabeled"]["abstention"] is None
    assert scores["unlabeled"]["correctness"] == 0.0, "its answer is still judged"
    assert scores["unanswerable"]["abstention"] == 0.0 and scores["unanswerable"]["RR@10"] is None
    means = {r["metric"]: r for r in summarize(score_run(run), run.testset).iter_rows(named=True)}
    assert means["RR@10"]["n"] == 1 and means["RR@10"]["mean"] == 0.5
    assert means["false_refusal"]["n"] == 2


def test_ragas_export_without_reference_contexts_keeps_questions_answerable(tmp_path: Path) -> None:
    csv = tmp_path / "ragas.csv"
    pl.DataFrame(
        {
            "user_input": ["What is the Team plan's retention?", "Tape support?"],
            "retrieved_contexts": [str(["The Team plan keeps snapshots for 90 days."]), str(["Nothing."])],
            "response": ["90 days.", "I don't know."],
            "reference": ["90 days", "Not documented"],
            "faithfulness": [1.0, 0.0],
        }
    ).write_csv(csv)
    assert main(["import", "ragas", str(csv), "--out", str(tmp_path / "out"), "--run-id", "r"]) == 0
    run = load_run(tmp_path / "out" / "r")
    assert run.testset.cases["answerable"].to_list() == [True, True]
    scores = score_run(run).sort("qid")
    assert scores["R@5"].to_list() == [None, None], "no labels: retrieval unscored, not 0"
    assert scores["abstention"].to_list() == [None, None], "not scored as unanswerable questions"
    assert scores["false_refusal"].to_list() == [0.0, 1.0]
    assert "no reference_contexts" in (run.manifest.notes or "")


def test_run_writer_validates_each_record_and_never_overwrites(tmp_path: Path) -> None:
    ts = SAMPLE / "testset.jsonl"
    w = RunWriter(tmp_path / "r1", testset=ts)
    with pytest.raises(ValueError, match=r"field 'retrieved\[0\].score'"):
        w.add("hv-001", retrieved=[{"chunk_id": "a", "score": float("nan")}])
    w.add("hv-001", retrieved=[{"chunk_id": "a", "score": 1.0}], answer="x")
    with pytest.raises(ValueError, match="already added"):
        w.add("hv-001")
    assert not (tmp_path / "r1").exists(), "nothing appears before close"
    w.close()
    manifest = json.loads((tmp_path / "r1" / "run.json").read_text())
    assert manifest["test_set"]["path"].endswith("testset.jsonl")
    with pytest.raises(FileExistsError):
        RunWriter(tmp_path / "r1", testset=ts)


def test_a_crashed_pipeline_leaves_no_half_run(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), RunWriter(tmp_path / "r2", testset=SAMPLE / "testset.jsonl") as w:
        w.add("hv-001", answer="x")
        raise RuntimeError("pipeline died")
    assert list(tmp_path.iterdir()) == []


def test_run_writer_takes_a_whole_frame_checked_by_the_loaders_rules(tmp_path: Path) -> None:
    ts = SAMPLE / "testset.jsonl"
    base = load_run(SAMPLE / "2026-11-02-hybrid-rerank")
    frame = (
        base.retrieved.group_by("qid", maintain_order=True)
        .agg(retrieved=pl.struct("chunk_id", "score", "text"))
        .join(base.results.select("qid", "answer"), on="qid")
    )
    with RunWriter(tmp_path / "framed", testset=ts) as w:
        w.add_frame(frame)
    written = load_run(tmp_path / "framed")
    ret = ["qid", "R@5", "nDCG@10", "AP", "judged@10"]
    assert score_run(written).select(ret).equals(score_run(base).select(ret)), "same rankings, same scores"
    assert written.results["answer"].equals(base.results["answer"])
    bad = frame.with_columns(
        retrieved=pl.col("retrieved").list.eval(pl.element().struct.with_fields(score=pl.lit(float("nan"))))
    )
    with (
        pytest.raises(ValueError, match=r"retrieved\[0\].score"),
        RunWriter(tmp_path / "bad", testset=ts) as w,
    ):
        w.add_frame(bad)
    w2 = RunWriter(tmp_path / "twice", testset=ts)
    w2.add_frame(frame.head(3))
    with pytest.raises(ValueError, match="already added"):
        w2.add_frame(frame.head(1))


def test_an_unrelated_export_into_a_taken_folder_is_told_to_keep_apart(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """--testset would fail for questions the test set lacks: the message does not suggest it."""
    from helpers import write_ragas_exports

    exports = write_ragas_exports(tmp_path)
    out = tmp_path / "runs"
    assert main(["import", "ragas", str(exports["support-bot"]), "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["import", "ragas", str(exports["hr-policies"]), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert (
        "3 of its 3 questions are not in it: to keep the two test sets apart, import into another --out"
        in err
    )
    assert "--testset" not in err
    # Forced anyway, every row whose question is missing is listed, with the CSV's own line numbers.
    assert (
        main(
            [
                "import",
                "ragas",
                str(exports["hr-policies"]),
                "--out",
                str(out),
                "--testset",
                str(out / "testset.jsonl"),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "hr-policies.csv:2: error: field 'user_input': this question is not in the test set" in err
    assert err.count("this question is not in the test set") == 3


def test_a_ragas_score_that_is_not_a_number_is_an_error_not_a_dropped_score(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    csv = tmp_path / "bad.csv"
    pl.DataFrame(
        {
            "user_input": ["Q1?", "Q2?", "Q3?"],
            "retrieved_contexts": [str(["a"]), "['unterminated", str(["c"])],
            "response": ["a", "b", "c"],
            "faithfulness": ["1.0", "abc", "NaN"],
        }
    ).write_csv(csv)
    assert main(["import", "ragas", str(csv), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "bad.csv:3: error: field 'retrieved_contexts': cannot read the list of contexts" in err
    csv.write_text(csv.read_text().replace("['unterminated", "['b']"))
    assert main(["import", "ragas", str(csv), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert (
        "bad.csv:3: error: field 'faithfulness': a score that is not a number" in err and "found abc" in err
    )


@pytest.mark.parametrize(
    ("content", "where", "says"),
    [
        # cut off inside a quoted field (a partial download, a crashed export)
        (
            b'question,answer,contexts,ground_truth\n"What?","It is","[""a""]","x"\n"Why?","Because',
            ":3: error: field 'answer': the row ends inside a quoted field",
            "export the file again, whole",
        ),
        # cut off between fields
        (
            b'question,answer,contexts,ground_truth\n"What?","It is","[""a""]","x"\n"Why?","Because"\n',
            ":3: error: field 'contexts': the row has 2 of the header's 4 fields",
            "delete this last, partial row",
        ),
        # saved by Excel as cp1252
        (
            'question,answer,contexts,ground_truth\n"Café?","It is","[""a""]","x"\n'.encode("cp1252"),
            ":2: error: not UTF-8 text: byte 0xe9 at column 5",
            "save it as UTF-8",
        ),
    ],
    ids=["cut-in-field", "cut-between-fields", "cp1252"],
)
def test_a_broken_ragas_csv_is_named_with_line_field_and_fix(
    tmp_path: Path, capsys, content: bytes, where: str, says: str
) -> None:  # type: ignore[no-untyped-def]
    from evalcore.cli import main

    export = tmp_path / "ragas.csv"
    export.write_bytes(content)
    assert main(["import", "ragas", str(export), "--out", str(tmp_path / "runs")]) == 2
    err = capsys.readouterr().err
    assert f"{export}{where}" in err and says in err and "Traceback" not in err
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").rglob("run.json"))


RAGCHECKER = (
    Path(__file__).parents[1] / "data" / "ragchecker" / "checking_outputs.json"
)  # shaped like its examples/


def test_ragchecker_output_imports_with_its_claims_and_metrics(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """RAGChecker's checking output: questions, responses, retrieved contexts and ground truth become
    a test set and a run; its claims are the run's judge output (faithfulness as it defines it:
    claims a retrieved chunk entails) and its metrics stay apart as ext: scores."""
    assert main(["import", "ragchecker", str(RAGCHECKER), "--out", str(tmp_path / "runs")]) == 0
    run = load_run(tmp_path / "runs" / "checking_outputs")
    assert run.manifest.judge is not None and run.manifest.judge.model == "ragchecker"
    claims = run.claims.filter(pl.col("qid") == "rc-0").sort("claim_idx")
    assert claims["claim"].to_list() == ["Nile is longest river in the world", "Nile flows into the Pacific"]
    assert claims["verdict"].to_list() == ["SUPPORTED", "NOT_SUPPORTED"]
    scores = score_run(run).sort("qid")
    assert scores["faithfulness"].to_list() == [0.5, 1.0]
    assert scores["ext:faithfulness"].to_list() == scores["faithfulness"].to_list()  # the same definition
    assert scores["ext:hallucination"].to_list() == [0.5, 0.0]
    ts = read_testset(tmp_path / "runs" / "testset.jsonl")
    assert (
        ts is not None
        and ts.cases.filter(pl.col("qid") == "rc-1")["reference_answer"][0] == "Blue represents peace."
    )
    # Given to the Ragas importer, the file is recognised and pointed at the right one.
    capsys.readouterr()
    assert main(["import", "ragas", str(RAGCHECKER), "--out", str(tmp_path / "other")]) == 2
    assert "this is RAGChecker's output: evalcore import ragchecker FILE --out DIR" in capsys.readouterr().err


def test_a_file_from_another_tool_is_pointed_at_run_writer(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    other = tmp_path / "phoenix_spans.json"
    other.write_text(json.dumps({"spans": [{"name": "retriever"}]}))
    assert main(["import", "ragchecker", str(other), "--out", str(tmp_path / "runs")]) == 2
    err = capsys.readouterr().err
    assert "not a RAGChecker output" in err and "evalcore.RunWriter (docs/run-format.md)" in err
    assert main(["import", "ragas", str(other), "--out", str(tmp_path / "runs")]) == 2
    assert "evalcore.RunWriter (docs/run-format.md)" in capsys.readouterr().err
