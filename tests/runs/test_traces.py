"""Traces teams already have: spans made by the real OpenTelemetry SDK with the OpenInference
conventions (as Phoenix and Arize export them), encoded as OTLP JSON both ways (the protobuf JSON
mapping's base64 ids, the collector's hex ids in JSON Lines), a Phoenix span export, and a hand-checked
file shaped like a Langfuse export — read as runs for the other pages and as a production log for
Signals (`evalcore import traces`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from google.protobuf.json_format import MessageToDict
from openinference.semconv.trace import DocumentAttributes, OpenInferenceSpanKindValues, SpanAttributes
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from evalcore.cli import main
from evalcore.runs.load import load_runs
from evalcore.runs.traces import read_traces
from evalcore.signals.logs import read_log

DATA = Path(__file__).resolve().parent.parent / "data"
KIND = SpanAttributes.OPENINFERENCE_SPAN_KIND
QUESTIONS = [
    ("How long are deleted files kept?", "Deleted files are kept for 90 days.", None),
    ("Does Harbor Vault encrypt backups?", "Yes, with AES-256.", "down"),
    ("What is the storage limit?", "It is 2 TB per workspace.", None),
]


def _spans() -> list:  # type: ignore[type-arg]
    """Three questions answered by a RAG pipeline instrumented as OpenInference says, and one trace
    whose root span has no input (a health check), made by the OpenTelemetry SDK."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("rag-app")
    for n, (question, answer, thumb) in enumerate(QUESTIONS):
        with tracer.start_as_current_span("rag-query") as root:
            root.set_attribute(KIND, OpenInferenceSpanKindValues.CHAIN.value)
            root.set_attribute(SpanAttributes.INPUT_VALUE, question)
            root.set_attribute(SpanAttributes.SESSION_ID, f"conv-{n}")
            with tracer.start_as_current_span("retrieve") as ret:
                ret.set_attribute(KIND, OpenInferenceSpanKindValues.RETRIEVER.value)
                ret.set_attribute(SpanAttributes.INPUT_VALUE, question)
                for i, (cid, score) in enumerate(
                    [(f"doc{n}-a", 0.9), (f"doc{n}-b", 0.7), (f"doc{n}-c", 0.2)]
                ):
                    prefix = f"{SpanAttributes.RETRIEVAL_DOCUMENTS}.{i}."
                    ret.set_attribute(prefix + DocumentAttributes.DOCUMENT_ID, cid)
                    ret.set_attribute(prefix + DocumentAttributes.DOCUMENT_CONTENT, f"text of {cid}")
                    ret.set_attribute(prefix + DocumentAttributes.DOCUMENT_SCORE, score)
            with tracer.start_as_current_span("llm") as llm:
                llm.set_attribute(KIND, OpenInferenceSpanKindValues.LLM.value)
                llm.set_attribute(SpanAttributes.LLM_MODEL_NAME, "claude-sonnet-4-5")
                llm.set_attribute(SpanAttributes.LLM_TOKEN_COUNT_PROMPT, 900 + n)
                llm.set_attribute(SpanAttributes.LLM_TOKEN_COUNT_COMPLETION, 12)
                llm.set_attribute(SpanAttributes.OUTPUT_VALUE, answer)
            if thumb:
                root.set_attribute("feedback", thumb)
                root.set_attribute("feedback.reason", "wrong cipher")
    with tracer.start_as_current_span("healthcheck") as hc:
        hc.set_attribute(KIND, OpenInferenceSpanKindValues.CHAIN.value)
    return list(exporter.get_finished_spans())


@pytest.fixture(scope="module")
def otlp_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str, str]:
    spans = _spans()
    request = MessageToDict(encode_spans(spans))  # the protobuf JSON mapping: ids in base64
    folder = tmp_path_factory.mktemp("otlp")
    as_proto_json = folder / "traces.json"
    as_proto_json.write_text(json.dumps(request))
    hexed = json.loads(json.dumps(request))  # OTLP/JSON as the collector writes it: ids in hex
    for rs in hexed["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for s in ss["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in s:
                        s[key] = format(
                            int.from_bytes(__import__("base64").b64decode(s[key]), "big"),
                            "032x" if key == "traceId" else "016x",
                        )
    as_lines = folder / "collector.jsonl"
    as_lines.write_text(json.dumps(hexed) + "\n")
    health = next(s for s in spans if s.name == "healthcheck")
    return (
        as_proto_json,
        as_lines,
        format(health.context.trace_id, "032x"),
        format(health.context.span_id, "016x"),
    )


def test_otlp_json_from_the_real_sdk_reads_as_questions_answered(otlp_files) -> None:  # type: ignore[no-untyped-def]
    proto_json, collector_lines, health_trace, health_span = otlp_files
    for path in (proto_json, collector_lines):
        found, problems = read_traces(path)
        assert [i.question for i in found] == [q for q, _, _ in QUESTIONS]
        first = found[0]
        assert [(c["chunk_id"], c["score"]) for c in first.retrieved] == [
            ("doc0-a", 0.9),
            ("doc0-b", 0.7),
            ("doc0-c", 0.2),
        ], "the retriever's documents, in rank order, with its scores"
        assert first.retrieved[0]["text"] == "text of doc0-a"
        assert first.answer == "Deleted files are kept for 90 days." and first.model == "claude-sonnet-4-5"
        assert first.conversation_id == "conv-0" and first.tokens == {"input": 900, "output": 12}
        assert found[1].feedback == {"thumb": "down", "reason": "wrong cipher"} and found[0].feedback is None
        # The span with no question is named by its trace and span ids, in both id encodings.
        [missing] = [p for p in problems.items if "no input.value" in p.message]
        assert f"trace {health_trace} span {health_span} ('healthcheck')" in missing.message


def test_import_traces_writes_a_run_the_pages_load_and_a_log_signals_reads(
    otlp_files, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:  # type: ignore[no-untyped-def]
    proto_json, _, health_trace, _ = otlp_files
    out = tmp_path / "runs"
    assert main(["import", "traces", str(proto_json), "--out", str(out), "--run-id", "prod-nov"]) == 0
    printed = capsys.readouterr()
    assert "read 3 traces" in printed.out and "logs/prod-nov.jsonl" in printed.out
    assert f"trace {health_trace}" in printed.err and "warning" in printed.err
    lr = load_runs(out)
    run = lr.runs["prod-nov"]
    assert run.results.height == 3 and set(run.testset.cases["question"]) == {q for q, _, _ in QUESTIONS}
    assert not [p for p in lr.problems if p.severity == "error"]
    log = read_log(out / "logs" / "prod-nov.jsonl")
    assert log.interactions.height == 3 and not log.problems
    assert main(["signals", str(out / "logs" / "prod-nov.jsonl"), "--format", "json"]) == 0
    signals = json.loads(capsys.readouterr().out)
    assert signals["questions"] == 3 and signals["thumbs"] == {"up": 0, "down": 1}
    # An import never overwrites: the same run id again is refused, naming the file.
    assert main(["import", "traces", str(proto_json), "--out", str(out), "--run-id", "prod-nov"]) == 2


def test_a_phoenix_span_export_reads_the_same(tmp_path: Path) -> None:
    """Phoenix's spans frame (get_spans_dataframe) saved as JSON Lines: flattened attribute columns
    and retrieval.documents as a list of records."""
    rows = [
        {
            "name": "query",
            "span_kind": "CHAIN",
            "parent_id": None,
            "start_time": "2026-11-19T09:00:00+00:00",
            "end_time": "2026-11-19T09:00:02+00:00",
            "context.span_id": "a1a1a1a1a1a1a1a1",
            "context.trace_id": "0123456789abcdef0123456789abcdef",
            "attributes.input.value": '{"query": "Is SSO supported?"}',
            "attributes.output.value": "Yes, SAML and OIDC.",
        },
        {
            "name": "retrieve",
            "span_kind": "RETRIEVER",
            "parent_id": "a1a1a1a1a1a1a1a1",
            "start_time": "2026-11-19T09:00:00.1+00:00",
            "end_time": "2026-11-19T09:00:00.3+00:00",
            "context.span_id": "b2b2b2b2b2b2b2b2",
            "context.trace_id": "0123456789abcdef0123456789abcdef",
            "attributes.retrieval.documents": [
                {"document.id": "sso-1", "document.content": "SSO: SAML, OIDC.", "document.score": 12.5},
                {"document.id": "sso-2", "document.content": "Set up SSO in Admin.", "document.score": 9.0},
            ],
        },
    ]
    path = tmp_path / "spans.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    [one], problems = read_traces(path)
    assert not problems.items
    assert one.question == "Is SSO supported?" and one.answer == "Yes, SAML and OIDC."
    assert [c["chunk_id"] for c in one.retrieved] == ["sso-1", "sso-2"] and one.latency_ms == 2000.0


def test_a_langfuse_export_reads_with_its_feedback_scores(tmp_path: Path) -> None:
    found, problems = read_traces(DATA / "langfuse" / "traces.json")
    assert [i.trace_id for i in found] == ["lf-trace-0001", "lf-trace-0002"]
    first, second = found
    assert first.question == "How long are deleted files kept?" and first.conversation_id == "conv-77"
    assert [(c["chunk_id"], c["score"], c["doc_id"]) for c in first.retrieved] == [
        ("retention-2", 0.91, "retention.md"),
        ("backup-1", 0.42, "backup.md"),
    ]
    assert first.feedback == {"thumb": "down", "reason": "it was 30 days for my plan"}
    assert first.model == "claude-sonnet-4-5" and first.tokens == {"input": 812, "output": 14}
    assert first.latency_ms == pytest.approx(1840.0)
    assert second.answer == "No. A purged file cannot be restored." and second.feedback == {"thumb": "up"}
    assert len(second.retrieved) == 2 and second.retrieved[0]["chunk_id"].startswith("sha1:")
    [left_out] = problems.items
    assert "trace lf-trace-0003: no input" in left_out.message


def test_a_file_that_is_not_a_trace_export_says_what_is_expected(tmp_path: Path) -> None:
    path = tmp_path / "other.json"
    path.write_text('[{"question": "q", "contexts": []}]')
    found, problems = read_traces(path)
    assert not found
    [p] = problems.items
    assert p.message == "not a trace export" and "RunWriter" in (p.hint or "")
