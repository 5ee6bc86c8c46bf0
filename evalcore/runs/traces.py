"""Traces teams already have, read as questions answered: OpenTelemetry spans that follow the
OpenInference semantic conventions (what Phoenix and Arize export, and OpenLLMetry-style pipelines
emit), as OTLP JSON (one ``ExportTraceServiceRequest`` a file, or a JSON Lines file of them, as the
collector's file exporter writes) or as Phoenix's span export (JSON Lines or Parquet of its spans
frame); and Langfuse's trace export (JSON: a list of traces, or ``{"data": [...]}``, with their
observations and scores).

One trace is one question answered:

* the **root span** (the one with no parent in the trace) gives the question (``input.value``), the
  answer (``output.value``), the time (its start), the latency (its duration) and the conversation
  (``session.id``, else the trace id);
* the first **RETRIEVER** span gives the retrieved chunks, in rank order, from
  ``retrieval.documents.N.document.{id,content,score}`` (a chunk with no id gets one from its text);
* an **LLM** span gives the answer when the root has none (``output.value``, else its first output
  message), the model and the token counts;
* **user feedback**: a span attribute ``feedback`` or ``user.feedback`` (``up``/``down``, 1/0,
  true/false) and ``feedback.reason``; in Langfuse, a score named like feedback or thumbs (1 up, 0
  down; its comment the reason).

A trace that cannot give a question is reported by its trace and span ids, with what is missing, and
left out; the others are read.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evalcore.errors import Problems
from evalcore.paths import literal
from evalcore.runs.writer import chunk_id_for

RETRIEVER, LLM = "RETRIEVER", "LLM"
KIND = "openinference.span.kind"
FEEDBACK_KEYS = ("feedback", "user.feedback")
FEEDBACK_SCORES = ("feedback", "user-feedback", "user_feedback", "thumbs", "thumb", "user-rating")


@dataclass
class Span:
    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start_ns: int
    end_ns: int
    attrs: dict[str, Any] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        return str(self.attrs.get(KIND) or "").upper()


@dataclass
class Interaction:
    """One question answered, as a production log record (docs/signals.md) holds it."""

    trace_id: str
    time: datetime
    question: str
    conversation_id: str
    answer: str | None = None
    retrieved: list[dict[str, Any]] = field(default_factory=list)
    feedback: dict[str, Any] | None = None
    model: str | None = None
    latency_ms: float | None = None
    tokens: dict[str, int] | None = None

    def log_record(self) -> dict[str, Any]:
        rec: dict[str, Any] = {
            "conversation_id": self.conversation_id,
            "time": self.time.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "question": self.question,
            "retrieved": self.retrieved,
        }
        if self.answer is not None:
            rec["answer"] = self.answer
        if self.feedback is not None:
            rec["feedback"] = self.feedback
        return rec


# ---- reading files ----------------------------------------------------------------------------


def read_traces(paths: list[str | Path] | str | Path) -> tuple[list[Interaction], Problems]:
    """Every trace in the files (OTLP JSON or JSON Lines, Phoenix spans as JSON Lines or Parquet,
    Langfuse JSON), as interactions in time order; what could not be read, in ``Problems``."""
    problems = Problems()
    out: list[Interaction] = []
    for p in [paths] if isinstance(paths, (str, Path)) else paths:
        path = Path(p)
        if not path.is_file():
            problems.error(
                path, "no such file", hint="give an OTLP JSON, Phoenix spans or Langfuse export file"
            )
            continue
        spans: list[Span] = []
        langfuse: list[dict[str, Any]] = []
        for value, line in _values(path, problems):
            if isinstance(value, dict) and "resourceSpans" in value:
                spans.extend(_otlp_spans(value))
            elif _is_langfuse(value):
                items = value.get("data", value) if isinstance(value, dict) else value
                langfuse.extend(items if isinstance(items, list) else [items])
            elif isinstance(value, dict) and ("context.span_id" in value or "context" in value):
                spans.append(_phoenix_span(value))
            else:
                problems.error(
                    path,
                    "not a trace export",
                    line=line,
                    expected="OTLP JSON (resourceSpans), Phoenix spans (context.span_id) or Langfuse traces "
                    "(observations)",
                    hint="export traces as OTLP JSON or from Phoenix/Langfuse; or write runs with "
                    "evalcore.RunWriter (docs/run-format.md)",
                )
                break
        out.extend(_from_spans(spans, path, problems))
        out.extend(_from_langfuse(langfuse, path, problems))
    out.sort(key=lambda i: (i.time, i.trace_id))
    return out, problems


def _values(path: Path, problems: Problems) -> Iterator[tuple[Any, int | None]]:
    if path.suffix == ".parquet":
        import polars as pl

        for row in pl.read_parquet(literal(path)).iter_rows(named=True):
            yield row, None
        return
    text = path.read_text(encoding="utf-8")
    try:
        yield json.loads(text), None
        return
    except json.JSONDecodeError:
        pass
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield json.loads(line), n
        except json.JSONDecodeError as exc:
            problems.error(path, f"not JSON: {exc.msg}", line=n, hint="each line must be one JSON value")


def _is_langfuse(value: Any) -> bool:
    items = value.get("data") if isinstance(value, dict) and "data" in value else value
    if isinstance(items, dict):
        items = [items]
    return (
        isinstance(items, list)
        and bool(items)
        and all(isinstance(t, dict) and "observations" in t for t in items)
    )


# ---- OTLP JSON and Phoenix spans -----------------------------------------------------------------


def _id(raw: Any) -> str:
    """A trace or span id as hex: OTLP/JSON writes hex, protobuf's JSON mapping base64."""
    s = str(raw or "")
    if not s:
        return ""
    if all(c in "0123456789abcdefABCDEF" for c in s) and len(s) in (16, 32):
        return s.lower()
    try:
        return base64.b64decode(s, validate=True).hex()
    except (binascii.Error, ValueError):
        return s


def _any_value(v: dict[str, Any]) -> Any:
    if "stringValue" in v:
        return v["stringValue"]
    if "intValue" in v:
        return int(v["intValue"])
    if "doubleValue" in v:
        return float(v["doubleValue"])
    if "boolValue" in v:
        return bool(v["boolValue"])
    if "arrayValue" in v:
        return [_any_value(x) for x in v["arrayValue"].get("values", [])]
    if "kvlistValue" in v:
        return {kv["key"]: _any_value(kv.get("value", {})) for kv in v["kvlistValue"].get("values", [])}
    return None


def _otlp_spans(request: dict[str, Any]) -> Iterator[Span]:
    for rs in request.get("resourceSpans", []):
        for ss in rs.get("scopeSpans", rs.get("instrumentationLibrarySpans", [])):
            for s in ss.get("spans", []):
                attrs = {a["key"]: _any_value(a.get("value", {})) for a in s.get("attributes", [])}
                yield Span(
                    _id(s.get("traceId")),
                    _id(s.get("spanId")),
                    _id(s.get("parentSpanId")) or None,
                    str(s.get("name", "")),
                    int(s.get("startTimeUnixNano", 0)),
                    int(s.get("endTimeUnixNano", 0)),
                    attrs,
                )


def _ns(v: Any) -> int:
    if v is None:
        return 0
    if isinstance(v, datetime):
        return int(v.replace(tzinfo=v.tzinfo or UTC).timestamp() * 1e9)
    if isinstance(v, (int, float)):
        return int(v)
    return int(datetime.fromisoformat(str(v).replace("Z", "+00:00")).timestamp() * 1e9)


def _phoenix_span(row: dict[str, Any]) -> Span:
    """A row of Phoenix's spans frame: ``context.trace_id``, ``context.span_id``, ``parent_id``,
    ``span_kind``, ``start_time``, ``end_time`` and ``attributes.<name>`` columns (or one nested
    ``attributes``); ``attributes.retrieval.documents`` as a list of ``{document.id, ...}``."""
    ctx: dict[str, Any] = row["context"] if isinstance(row.get("context"), dict) else {}
    attrs: dict[str, Any] = (
        dict(row.get("attributes") or {}) if isinstance(row.get("attributes"), dict) else {}
    )
    for k, v in row.items():
        if k.startswith("attributes.") and v is not None:
            attrs[k.removeprefix("attributes.")] = v
    docs = attrs.pop("retrieval.documents", None)
    for i, d in enumerate(docs or []):
        for k, v in (d or {}).items():
            attrs[f"retrieval.documents.{i}.{k}"] = v
    if row.get("span_kind") and KIND not in attrs:
        attrs[KIND] = row["span_kind"]
    return Span(
        _id(row.get("context.trace_id") or ctx.get("trace_id")),
        _id(row.get("context.span_id") or ctx.get("span_id")),
        _id(row.get("parent_id")) or None,
        str(row.get("name", "")),
        _ns(row.get("start_time")),
        _ns(row.get("end_time")),
        attrs,
    )


def _documents(span: Span) -> list[dict[str, Any]]:
    """retrieval.documents.N.document.* in N's order, as retrieved chunks with their rank's score."""
    by_index: dict[int, dict[str, Any]] = {}
    prefix = "retrieval.documents."
    for k, v in span.attrs.items():
        if not k.startswith(prefix):
            continue
        idx, _, rest = k[len(prefix) :].partition(".")
        if idx.isdigit():
            by_index.setdefault(int(idx), {})[rest.removeprefix("document.")] = v
    out = []
    for n in sorted(by_index):
        d = by_index[n]
        text = str(d.get("content") or "")
        score = d.get("score")
        rec: dict[str, Any] = {
            "chunk_id": str(d["id"]) if d.get("id") not in (None, "") else chunk_id_for(text),
            "score": float(score) if isinstance(score, (int, float)) else float(len(by_index) - n),
        }
        if text:
            rec["text"] = text
        out.append(rec)
    return out


def _text_of(value: Any) -> str | None:
    """input.value / output.value: text, or JSON whose question or answer is under a usual key."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            return value
        if not isinstance(parsed, (dict, list)):
            return value
        value = parsed
    if isinstance(value, dict):
        for key in ("question", "query", "input", "answer", "output", "content", "text", "response"):
            if isinstance(value.get(key), str):
                return str(value[key])
        return None
    return str(value) if not isinstance(value, list) else None


def _feedback(value: Any, reason: Any = None) -> dict[str, Any] | None:
    if value is None:
        return None
    text = str(value).strip().lower()
    if text in ("up", "1", "1.0", "true", "thumbs_up", "positive", "good"):
        thumb = "up"
    elif text in ("down", "0", "0.0", "-1", "false", "thumbs_down", "negative", "bad"):
        thumb = "down"
    else:
        return None
    return {"thumb": thumb, **({"reason": str(reason)} if reason else {})}


def _from_spans(spans: list[Span], path: Path, problems: Problems) -> list[Interaction]:
    traces: dict[str, list[Span]] = {}
    for s in spans:
        traces.setdefault(s.trace_id, []).append(s)
    out = []
    for tid, group in traces.items():
        ids = {s.span_id for s in group}
        roots = sorted(
            (s for s in group if not s.parent_id or s.parent_id not in ids), key=lambda s: s.start_ns
        )
        if not roots:
            problems.error(path, f"trace {tid}: no root span (every span names a parent)")
            continue
        root = roots[0]
        ordered = sorted(group, key=lambda s: s.start_ns)
        question = _text_of(root.attrs.get("input.value"))
        if not question:
            problems.error(
                path,
                f"trace {tid} span {root.span_id} ({root.name!r}): the root span has no input.value "
                "(the question); the trace is left out",
                field="input.value",
                hint="record the question as the root span's input.value (OpenInference)",
            )
            continue
        retrievers = [s for s in ordered if s.kind == RETRIEVER]
        retrieved: list[dict[str, Any]] = []
        if retrievers:
            retrieved = _documents(retrievers[0])
            if not retrieved:
                problems.warning(
                    path,
                    f"trace {tid} span {retrievers[0].span_id} ({retrievers[0].name!r}): a RETRIEVER span with "
                    "no retrieval.documents; the question is read with no retrieved chunks",
                    field="retrieval.documents",
                )
        llms = [s for s in ordered if s.kind == LLM]
        answer = _text_of(root.attrs.get("output.value"))
        if answer is None and llms:
            last = llms[-1]
            answer = _text_of(last.attrs.get("output.value")) or last.attrs.get(
                "llm.output_messages.0.message.content"
            )
        feedback = None
        for s in ordered:
            for key in FEEDBACK_KEYS:
                if key in s.attrs:
                    feedback = _feedback(s.attrs[key], s.attrs.get("feedback.reason")) or feedback
        model = next((str(s.attrs["llm.model_name"]) for s in llms if s.attrs.get("llm.model_name")), None)
        tokens = None
        if llms and "llm.token_count.prompt" in llms[-1].attrs:
            tokens = {
                "input": int(llms[-1].attrs.get("llm.token_count.prompt") or 0),
                "output": int(llms[-1].attrs.get("llm.token_count.completion") or 0),
            }
        out.append(
            Interaction(
                trace_id=tid,
                time=datetime.fromtimestamp(root.start_ns / 1e9, UTC),
                question=question,
                conversation_id=str(root.attrs.get("session.id") or tid),
                answer=None if answer is None else str(answer),
                retrieved=retrieved,
                feedback=feedback,
                model=model,
                latency_ms=(root.end_ns - root.start_ns) / 1e6 if root.end_ns >= root.start_ns else None,
                tokens=tokens,
            )
        )
    return out


# ---- Langfuse --------------------------------------------------------------------------------------


def _lf_docs(output: Any) -> list[dict[str, Any]] | None:
    """A retrieval observation's output: a list of documents (LangChain's page_content/metadata,
    or content/text/id/score), or ``{"documents": [...]}``."""
    if isinstance(output, dict):
        output = output.get("documents") or output.get("output") or output.get("results")
    if not isinstance(output, list):
        return None
    out = []
    for n, d in enumerate(output):
        if isinstance(d, str):
            d = {"content": d}
        if not isinstance(d, dict):
            return None
        meta: dict[str, Any] = d["metadata"] if isinstance(d.get("metadata"), dict) else {}
        text = str(d.get("page_content") or d.get("content") or d.get("text") or "")
        cid = d.get("id") or d.get("chunk_id") or meta.get("chunk_id") or meta.get("id")
        score = d.get("score", meta.get("score"))
        rec: dict[str, Any] = {
            "chunk_id": str(cid) if cid else chunk_id_for(text),
            "score": float(score) if isinstance(score, (int, float)) else float(len(output) - n),
        }
        if text:
            rec["text"] = text
        if meta.get("source") or meta.get("doc_id"):
            rec["doc_id"] = str(meta.get("doc_id") or meta.get("source"))
        out.append(rec)
    return out


def _from_langfuse(traces: list[dict[str, Any]], path: Path, problems: Problems) -> list[Interaction]:
    out = []
    for t in traces:
        tid = str(t.get("id", ""))
        question = _text_of(t.get("input"))
        obs = sorted(t.get("observations") or [], key=lambda o: str(o.get("startTime", "")))
        if not question:
            problems.error(
                path,
                f"trace {tid}: no input (the question); the trace is left out",
                field="input",
                hint="set the trace's input to the user's question",
            )
            continue
        retrieved: list[dict[str, Any]] = []
        for o in obs:
            kind = str(o.get("type", "")).upper()
            if kind == "RETRIEVER" or "retriev" in str(o.get("name", "")).lower():
                docs = _lf_docs(o.get("output"))
                if docs is None:
                    problems.warning(
                        path,
                        f"trace {tid} observation {o.get('id')} ({o.get('name')!r}): a retrieval with no "
                        "list of documents as its output; read with no retrieved chunks",
                        field="output",
                    )
                else:
                    retrieved = docs
                break
        gens = [o for o in obs if str(o.get("type", "")).upper() == "GENERATION"]
        answer = _text_of(t.get("output"))
        if answer is None and gens:
            answer = _text_of(gens[-1].get("output"))
        feedback = None
        for s in t.get("scores") or []:
            if str(s.get("name", "")).lower() in FEEDBACK_SCORES:
                feedback = _feedback(s.get("value", s.get("stringValue")), s.get("comment"))
        usage = (gens[-1].get("usage") or {}) if gens else {}
        ts = t.get("timestamp") or (obs[0].get("startTime") if obs else None)
        if ts is None:
            problems.error(path, f"trace {tid}: no timestamp; the trace is left out", field="timestamp")
            continue
        out.append(
            Interaction(
                trace_id=tid,
                time=datetime.fromtimestamp(_ns(ts) / 1e9, UTC),
                question=question,
                conversation_id=str(t.get("sessionId") or tid),
                answer=answer,
                retrieved=retrieved,
                feedback=feedback,
                model=str(gens[-1]["model"]) if gens and gens[-1].get("model") else None,
                latency_ms=float(t["latency"]) * 1000 if isinstance(t.get("latency"), (int, float)) else None,
                tokens={"input": int(usage.get("input") or 0), "output": int(usage.get("output") or 0)}
                if usage
                else None,
            )
        )
    return out
