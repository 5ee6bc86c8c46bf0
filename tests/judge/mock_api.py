"""A local HTTP server on 127.0.0.1 that speaks enough of the Anthropic Messages API for the real SDK:
``POST /v1/messages`` answers with a message whose text is the judge's JSON output.

What it answers depends on the question in the request (``behaviour`` maps a marker in the question
text to a behaviour), so one server serves a whole rerun with a mix of outcomes:

* ``ok``        — a judge that reads the chunks: a claim per answer sentence, SUPPORTED with that
                  sentence as the quote when a chunk holds it, else NOT_SUPPORTED;
* ``fooled``    — a judge that did what an injected instruction said: every claim SUPPORTED, quoting
                  the answer itself (which is in no chunk);
* ``429`` / ``529`` — rate limited / overloaded for the first request of that question, then ``ok``;
* ``slow``      — answers after ``slow_seconds`` (longer than the client's timeout);
* ``max_tokens`` — output cut off mid-JSON, ``stop_reason: max_tokens``;
* ``refusal``   — ``stop_reason: refusal`` with no JSON;
* ``malformed`` — JSON that does not match the schema.

It also speaks ``POST /v1/messages/count_tokens`` and the Message Batches API: ``POST
/v1/messages/batches`` takes a batch, ``GET .../batches/{id}`` reports it in progress for
``batch_polls`` polls and then ended, ``GET .../batches/{id}/results`` streams one JSON line per
request. In a batch, ``expire`` expires the first time (then ``ok``), ``invalid`` is an
``invalid_request_error`` every time, ``overloaded`` an ``overloaded_error`` every time; the
others answer as above.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_TAGGED = re.compile(r"<(question|reference|answer)>(.*?)</\1>", re.S)
_CHUNK = re.compile(r'<chunk id="([^"]*)">(.*?)</chunk>', re.S)


class MockAPI:
    def __init__(
        self, behaviour: dict[str, str] | None = None, slow_seconds: float = 3.0, latency: float = 0.0
    ) -> None:
        self.behaviour = behaviour or {}
        self.slow_seconds = slow_seconds
        self.latency = latency  # seconds every answer takes (the benchmark's fixed latency)
        self.requests: Counter[str] = Counter()  # question -> requests received
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self.url = ""
        self.batch_polls = 1  # polls a batch is "in_progress" before it ends
        self.batches: dict[str, dict[str, Any]] = {}  # id -> {"requests": [...], "polls": n}
        self.counted = 0  # count_tokens requests
        self.batch_attempts: Counter[str] = Counter()  # question -> batches it was submitted in
        # Scripted judges for the bias probes (all off: the fair judge above).
        self.reads_first: int | None = None  # reads only the first N chunks (position bias)
        self.verbose_above: int | None = None  # calls any answer longer than this correct (verbosity)
        self.injectable = False  # does what an injected instruction says (answer or chunk)
        self.confused_above: int | None = None  # with more chunks than this, supports nothing (distractors)
        self.noise = 0.0  # flips each claim's verdict with this chance, per call (test-retest noise)
        self._calls: Counter[str] = Counter()  # input -> calls, so the noise is the same on every run
        self.synth_requests = 0  # question-writing requests (synthetic questions)

    @staticmethod
    def write_question(user: str) -> dict[str, Any]:
        """A scripted question writer (synthetic questions): it copies the chunk's own words, as the
        guide warns real ones do; a chunk holding BADQUOTE gets a quote that is not in it."""
        kind = re.search(r"KIND: (\w+)", user).group(1)  # type: ignore[union-attr]
        chunks = _CHUNK.findall(user)
        first = [(cid, text.split(". ")[0].rstrip(".") + ".") for cid, text in chunks]
        if kind == "unanswerable":
            return {
                "question": "Can it back up my smart fridge?",
                "answer": None,
                "quotes": [],
                "type": "unanswerable",
            }
        quotes = [{"chunk_id": cid, "quote": "words that are not there" if "BADQUOTE" in text else f}
                  for (cid, text), (_, f) in zip(chunks, first, strict=True)]  # fmt: skip
        if kind == "multi":
            q = f"How do {first[0][1].rstrip('.').lower()} and {first[-1][1].rstrip('.').lower()} compare?"
            return {
                "question": q,
                "answer": " ".join(f for _, f in first),
                "quotes": quotes,
                "type": "comparison",
            }
        return {"question": f"What about {first[0][1].rstrip('.').lower()}?", "answer": first[0][1],
                "quotes": quotes, "type": "lookup"}  # fmt: skip

    @staticmethod
    def question_of(params: dict[str, Any]) -> str:
        return dict(_TAGGED.findall(params["messages"][0]["content"])).get("question", "")

    def batch_object(self, bid: str, ended: bool) -> dict[str, Any]:
        n = len(self.batches[bid]["requests"])
        return {
            "id": bid,
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": {
                "processing": 0 if ended else n,
                "succeeded": n if ended else 0,
                "errored": 0,
                "canceled": 0,
                "expired": 0,
            },
            "created_at": "2026-12-03T00:00:00Z",
            "expires_at": "2026-12-04T00:00:00Z",
            "ended_at": "2026-12-03T00:01:00Z" if ended else None,
            "cancel_initiated_at": None,
            "archived_at": None,
            "results_url": f"{self.url}/v1/messages/batches/{bid}/results" if ended else None,
        }

    def batch_result(self, bid: str, req: dict[str, Any]) -> dict[str, Any]:
        params = req["params"]
        question = self.question_of(params)
        what = self.what(question)
        with self._lock:
            self.requests[question] += 1
            n = sum(self.requests.values())
        first = self.batch_attempts[question] == 1
        if what == "expire" and first:
            return {"custom_id": req["custom_id"], "result": {"type": "expired"}}
        if what in ("invalid", "overloaded"):
            kind = "invalid_request_error" if what == "invalid" else "overloaded_error"
            err = {"type": "error", "error": {"type": kind, "message": f"mock {kind}"}}
            return {"custom_id": req["custom_id"], "result": {"type": "errored", "error": err}}
        out = json.dumps(self.judge(params["messages"][0]["content"], fooled=what == "fooled"))
        return {
            "custom_id": req["custom_id"],
            "result": {"type": "succeeded", "message": _message(params, out, "end_turn", n)},
        }

    def what(self, question: str) -> str:
        for marker, behaviour in self.behaviour.items():
            if marker in question:
                return behaviour
        return "ok"

    def judge(self, user: str, fooled: bool) -> dict[str, Any]:
        tagged = {k: v for k, v in _TAGGED.findall(user)}
        chunks = _CHUNK.findall(user)
        answer = tagged.get("answer", "")
        if self.injectable and (
            "ignore previous instructions" in answer.lower() or any("GRADING RUBRIC" in t for _, t in chunks)
        ):
            fooled = True
        confused = self.confused_above is not None and len(chunks) > self.confused_above
        if self.reads_first is not None:
            chunks = chunks[: self.reads_first]
        if confused:
            chunks = []
        out = self._judge(tagged, chunks, answer, fooled)
        if self.verbose_above is not None and len(answer) > self.verbose_above:
            out["correctness"]["verdict"] = "correct"
        if self.noise:
            import hashlib

            with self._lock:
                self._calls[user] += 1
                call = self._calls[user]
            for c in out["claims"]:
                h = hashlib.sha256(f"{user}|{c['claim']}|{call}".encode()).digest()
                if int.from_bytes(h[:4], "big") / 2**32 < self.noise:
                    c["verdict"] = "NOT_SUPPORTED" if c["verdict"] == "SUPPORTED" else "SUPPORTED"
        return out

    def _judge(
        self, tagged: dict[str, str], chunks: list[tuple[str, str]], answer: str, fooled: bool
    ) -> dict[str, Any]:
        claims = []
        for sentence in [s.strip() for s in re.split(r"(?<=\.)\s+", answer) if s.strip()]:
            found = next((cid for cid, text in chunks if sentence.rstrip(".") in text), None)
            if fooled:
                claims.append(
                    {
                        "claim": sentence,
                        "verdict": "SUPPORTED",
                        "quote": sentence,
                        "chunk_id": chunks[0][0] if chunks else None,
                    }
                )
            elif found:
                claims.append(
                    {
                        "claim": sentence,
                        "verdict": "SUPPORTED",
                        "quote": sentence.rstrip("."),
                        "chunk_id": found,
                    }
                )
            else:
                claims.append(
                    {"claim": sentence, "verdict": "NOT_SUPPORTED", "quote": None, "chunk_id": None}
                )
        ref = tagged.get("reference")
        correct = ref is not None and ref.strip(".").lower() in answer.lower()
        # Context: a chunk is relevant when it holds a reference statement (or, without a
        # reference, a word of the question); a statement is covered by the chunk holding it.
        statements = [s.strip() for s in re.split(r"(?<=\.)\s+", ref or "") if s.strip()]
        question = tagged.get("question", "").lower()

        def covers(text: str, statement: str) -> bool:
            return statement.rstrip(".").lower() in text.lower()

        return {
            "chunks": [
                {
                    "chunk_id": cid,
                    "relevant": any(covers(text, st) for st in statements)
                    if statements
                    else any(w in text.lower() for w in question.split() if len(w) > 4),
                }
                for cid, text in chunks
            ],
            # A judge that reads the answer back as questions: one per answer sentence.
            "questions_from_answer": [
                f"What about this: {s.strip()}?" for s in re.split(r"(?<=\.)\s+", answer) if s.strip()
            ][:3],
            "reference_statements": [
                {"statement": st, "chunk_id": next((cid for cid, text in chunks if covers(text, st)), None)}
                for st in statements
            ],
            "claims": claims,
            "correctness": {
                "verdict": "correct" if correct else "incorrect",
                "reason": "compared with the reference",
            },
            "relevance": {"score": 0.9 if answer else 0.0, "reason": "addresses the question"},
        }


def _message(body: dict[str, Any], text: str, stop: str, n: int) -> dict[str, Any]:
    return {
        "id": f"msg_mock_{n:05d}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "mock"),
        "content": [{"type": "text", "text": text}],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 100 + len(json.dumps(body)) // 4, "output_tokens": max(1, len(text) // 4)},
    }


def _handler(api: MockAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the real API: a connection per request costs
        # Headers and body go out as two writes; with Nagle's algorithm the body waits for the
        # client's delayed ACK of the headers (up to 40 ms a response) — a stall of this mock's,
        # not of the API it stands for.
        disable_nagle_algorithm = True

        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
            raw = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(raw)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(raw)

        def do_GET(self) -> None:
            m = re.fullmatch(r"/v1/messages/batches/([^/]+)(/results)?", self.path.split("?")[0])
            batch = api.batches.get(m.group(1)) if m else None
            if m is None or batch is None:
                self._send(404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}})
                return
            bid = m.group(1)
            if m.group(2):  # the results, as JSON Lines
                lines = [json.dumps(api.batch_result(bid, r)) for r in batch["requests"]]
                raw = ("\n".join(lines) + "\n").encode()
                self.send_response(200)
                self.send_header("content-type", "application/binary")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)
                return
            with api._lock:
                batch["polls"] += 1
                ended = batch["polls"] > api.batch_polls
            self._send(200, api.batch_object(bid, ended))

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))))
            path = self.path.split("?")[0]
            if path == "/v1/messages/count_tokens":
                with api._lock:
                    api.counted += 1
                self._send(200, {"input_tokens": 100 + len(json.dumps(body)) // 4})
                return
            if path == "/v1/messages/batches":
                with api._lock:
                    bid = f"msgbatch_mock_{len(api.batches) + 1:03d}"
                    api.batches[bid] = {"requests": body["requests"], "polls": 0}
                    for r in body["requests"]:
                        api.batch_attempts[api.question_of(r["params"])] += 1
                self._send(200, api.batch_object(bid, False))
                return
            user = body["messages"][0]["content"]
            if str(body.get("system", "")).startswith("You write test questions"):
                with api._lock:
                    api.synth_requests += 1
                    n = api.synth_requests
                    api.bodies.append(body)
                self._send(200, _message(body, json.dumps(api.write_question(user)), "end_turn", n))
                return
            question = dict(_TAGGED.findall(user)).get("question", "")
            with api._lock:
                api.requests[question] += 1
                attempt = api.requests[question]
                n = sum(api.requests.values())
                api.bodies.append(body)
                api.headers.append({k.lower(): v for k, v in self.headers.items()})
            what = api.what(question)
            rid = {"request-id": f"req_mock_{n:05d}"}
            if what in ("429", "529") and attempt == 1:
                kind = "rate_limit_error" if what == "429" else "overloaded_error"
                self._send(
                    int(what),
                    {"type": "error", "error": {"type": kind, "message": kind}},
                    {**rid, "retry-after-ms": "10"},
                )
                return
            if what == "slow":
                time.sleep(api.slow_seconds)
            elif api.latency:
                time.sleep(api.latency)
            out = json.dumps(api.judge(user, fooled=what == "fooled"))
            if what == "max_tokens":
                self._send(200, _message(body, out[: len(out) // 2], "max_tokens", n), rid)
            elif what == "refusal":
                self._send(200, _message(body, "I can't help with that.", "refusal", n), rid)
            elif what == "malformed":
                self._send(200, _message(body, json.dumps({"claims": "none"}), "end_turn", n), rid)
            else:
                self._send(200, _message(body, out, "end_turn", n), rid)

    return Handler


@contextmanager
def mock_api(
    behaviour: dict[str, str] | None = None, slow_seconds: float = 3.0, latency: float = 0.0
) -> Iterator[MockAPI]:
    """A running mock on a free port; ``api.url`` is its base URL (for ``ANTHROPIC_BASE_URL``)."""
    api = MockAPI(behaviour, slow_seconds, latency)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(api))
    server.daemon_threads = True
    api.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield api
    finally:
        server.shutdown()
        server.server_close()


if __name__ == "__main__":  # a mock in its own process (the benchmark: no GIL shared with the client)
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--latency", type=float, default=0.0)
    a = ap.parse_args()
    with mock_api(latency=a.latency) as running:
        print(running.url, flush=True)
        threading.Event().wait()
