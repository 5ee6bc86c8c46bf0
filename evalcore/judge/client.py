"""Asking the judge: the Anthropic SDK's ``AsyncAnthropic.messages.parse`` with bounded concurrency,
the SDK's retries (429, 529 overloaded, timeouts and connection errors, with backoff that honours
``retry-after``), a request timeout, and the store's cache in front of every request.

A judgment fails — with its reason, never a score — on an API error that outlasts the retries, a
``max_tokens`` or ``refusal`` stop, or output that does not match the schema. Every verdict, failed or
not, carries what the API said about it: message id, request id, stop reason and token usage.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from evalcore.errors import SetupError
from evalcore.judge.prompt import SYSTEM, JudgeOutput, cache_key, prompt_hash, schema_hash, user_message
from evalcore.metrics.generation import context_chunks
from evalcore.runs.load import Run
from evalcore.store import Store, Verdict

# Pinned: a judge's model changes only when the configuration says so (and then its verdicts are
# not comparable with the old ones).
DEFAULT_MODEL = "claude-sonnet-4-5-20250929"


@dataclass(frozen=True)
class JudgeConfig:
    model: str = DEFAULT_MODEL
    max_tokens: int = 4096
    concurrency: int = 16
    timeout: float = 60.0  # seconds per request
    max_retries: int = 4  # the SDK's, with exponential backoff and retry-after
    # Dollars per million tokens (input, output), for estimates before spending; set them for your
    # model and contract. The default is the list price of the default model when this was written.
    price_in: float = 3.0
    price_out: float = 15.0

    @property
    def judge(self) -> tuple[str, str, str]:
        """Model, prompt hash and schema hash: what makes verdicts comparable."""
        return (self.model, prompt_hash(), schema_hash())


@dataclass(frozen=True)
class Item:
    """One question to judge: what the generator was given and what it answered."""

    qid: str
    question: str
    reference: str | None
    answer: str | None
    chunks: list[tuple[str, str]] = field(default_factory=list)  # (chunk id, text) in rank order

    def key(self, model: str) -> str:
        return cache_key(model, self.question, self.reference, self.answer, self.chunks)


def items_for(run: Run, qids: Iterable[str] | None = None) -> list[Item]:
    """The questions of ``run`` to judge (all, or ``qids``): question and reference from the run's
    test set, its answer, and the chunks the generator was given (``context_k``)."""
    wanted = None if qids is None else set(qids)
    results, retrieved = run.results.select("qid", "answer"), run.retrieved
    if wanted is not None:  # a few questions of a large run: rank only their chunks
        results = results.filter(pl.col("qid").is_in(list(wanted)))
        retrieved = retrieved.filter(pl.col("qid").is_in(list(wanted)))
    cases = run.testset.cases.select("qid", "question", "reference_answer")
    ctx = context_chunks(retrieved, run.manifest.context_k)
    chunks: dict[str, list[tuple[str, str]]] = {}
    for qid, cid, text in ctx.sort("qid", "rank").select("qid", "chunk_id", "text").iter_rows():
        chunks.setdefault(qid, []).append((cid, text or ""))
    # An answer is what is judged: a question without one (a retrieval-only run, a failed
    # generation) has nothing to send, and is not paid for.
    results = results.filter(pl.col("answer").is_not_null() & (pl.col("answer").str.strip_chars() != ""))
    rows = results.join(cases, on="qid", how="left").sort("qid").iter_rows(named=True)
    return [
        Item(r["qid"], r["question"], r["reference_answer"], r["answer"], chunks.get(r["qid"], []))
        for r in rows
    ]


# The raw body of the response a task's request got: the SDK parses it for us, but when parsing
# fails (output cut off by max_tokens, a refusal) the verdict still records what the API said.
_LAST_BODY: contextvars.ContextVar[bytes | None] = contextvars.ContextVar("_LAST_BODY", default=None)


async def _remember_body(response: Any) -> None:
    if response.status_code == 200 and response.request.url.path.endswith("/messages"):
        await response.aread()
        _LAST_BODY.set(response.content)  # parsed only if the SDK's parse fails


def _last_body() -> dict[str, Any]:
    raw = _LAST_BODY.get()
    try:
        body = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def make_client(config: JudgeConfig, *, transport: Any = None, api_key: str | None = None) -> Any:
    """An ``AsyncAnthropic`` client (``ANTHROPIC_API_KEY`` and ``ANTHROPIC_BASE_URL`` as in the SDK).
    ``transport`` is for tests: an httpx2 transport, e.g. a mock speaking the Messages API."""
    import anthropic
    import httpx2

    key = api_key or os.environ.get("ANTHROPIC_API_KEY")
    if not key:
        msg = "no API key: set ANTHROPIC_API_KEY (it is read from the environment, never stored)"
        raise SetupError(msg)
    http = httpx2.AsyncClient(
        transport=transport, timeout=config.timeout, event_hooks={"response": [_remember_body]}
    )
    return anthropic.AsyncAnthropic(
        api_key=key, max_retries=config.max_retries, timeout=config.timeout, http_client=http
    )


async def _ask(client: Any, config: JudgeConfig, item: Item, key: str) -> Verdict:
    import anthropic
    from pydantic import ValidationError

    _LAST_BODY.set(None)
    try:
        msg = await client.messages.parse(
            model=config.model,
            max_tokens=config.max_tokens,
            system=SYSTEM,
            messages=[
                {
                    "role": "user",
                    "content": user_message(item.question, item.reference, item.answer, item.chunks),
                }
            ],
            output_format=JudgeOutput,
        )
    except anthropic.APIStatusError as exc:
        reason = f"API error {exc.status_code} after {config.max_retries} retries: {_short(exc.message)}"
        return Verdict(item.qid, key, False, reason=reason, request_id=exc.request_id)
    except anthropic.APITimeoutError:
        return Verdict(
            item.qid, key, False, reason=f"timed out ({config.timeout:g} s, {config.max_retries} retries)"
        )
    except anthropic.APIConnectionError as exc:
        return Verdict(item.qid, key, False, reason=f"could not reach the API: {_short(str(exc))}")
    except ValidationError:
        body = _last_body()
        stop = body.get("stop_reason")
        usage = body.get("usage") or {}
        reason = {
            "max_tokens": f"the judge's output was cut off at max_tokens ({config.max_tokens})",
            "refusal": "the judge refused to answer",
        }.get(stop or "", "the judge's output did not match the schema")
        return Verdict(
            item.qid,
            key,
            False,
            reason=reason,
            message_id=body.get("id"),
            stop_reason=stop,
            input_tokens=usage.get("input_tokens"),
            output_tokens=usage.get("output_tokens"),
        )
    base = {
        "message_id": msg.id,
        "request_id": getattr(msg, "_request_id", None),
        "stop_reason": msg.stop_reason,
        "input_tokens": msg.usage.input_tokens,
        "output_tokens": msg.usage.output_tokens,
    }
    if msg.stop_reason in ("max_tokens", "refusal"):
        why = "cut off at max_tokens" if msg.stop_reason == "max_tokens" else "a refusal"
        return Verdict(item.qid, key, False, reason=f"the judge's answer was {why}", **base)
    parsed = next((getattr(c, "parsed_output", None) for c in msg.content if c.type == "text"), None)
    if parsed is None:
        return Verdict(item.qid, key, False, reason="the judge gave no structured output", **base)
    return Verdict(item.qid, key, True, output=parsed.model_dump(), **base)


def _short(text: str, n: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


@dataclass(frozen=True)
class Estimate:
    """What a rerun would cost before it is asked for: questions, how many the cache already holds,
    tokens (a local estimate: characters / 4 plus the instructions; the judge's output assumed at
    300 tokens a question) and dollars at the configured prices."""

    questions: int
    cached: int
    input_tokens: int
    output_tokens: int
    dollars: float

    def __str__(self) -> str:
        todo = self.questions - self.cached
        return (
            f"{self.questions} question(s): {self.cached} in the cache (free), {todo} to judge; about "
            f"{self.input_tokens:,} input and {self.output_tokens:,} output tokens, ${self.dollars:.2f} "
            "(local estimate: characters / 4; prices from the judge configuration)"
        )


OUTPUT_TOKENS_GUESS = 300


def estimate(items: list[Item], config: JudgeConfig, store: Store) -> Estimate:
    todo = [i for i in items if store.cached(i.key(config.model)) is None]
    tokens_in = sum(
        (len(SYSTEM) + len(user_message(i.question, i.reference, i.answer, i.chunks))) // 4 for i in todo
    )
    tokens_out = OUTPUT_TOKENS_GUESS * len(todo)
    dollars = tokens_in / 1e6 * config.price_in + tokens_out / 1e6 * config.price_out
    return Estimate(len(items), len(items) - len(todo), tokens_in, tokens_out, dollars)


@dataclass
class RerunReport:
    revision_id: int
    verdicts: list[Verdict]

    @property
    def judged(self) -> int:
        return sum(1 for v in self.verdicts if v.ok and not v.cached)

    @property
    def cached(self) -> int:
        return sum(1 for v in self.verdicts if v.cached)

    @property
    def failed(self) -> list[Verdict]:
        return [v for v in self.verdicts if not v.ok]

    @property
    def tokens(self) -> tuple[int, int]:
        paid = [v for v in self.verdicts if not v.cached]
        return sum(v.input_tokens or 0 for v in paid), sum(v.output_tokens or 0 for v in paid)


async def judge_items(
    items: list[Item],
    config: JudgeConfig,
    store: Store,
    revision_id: int,
    client: Any,
    on_verdict: Callable[[Verdict], None] | None = None,
) -> list[Verdict]:
    """Judge each item (at most ``config.concurrency`` requests at once), each verdict committed to
    the store as it arrives; an identical earlier judgment is taken from the store, not paid again."""
    sem = asyncio.Semaphore(config.concurrency)
    out: list[Verdict] = []

    async def one(item: Item) -> None:
        key = item.key(config.model)
        hit = store.cached(key)
        if hit is not None:
            v = Verdict(**{**hit.__dict__, "qid": item.qid, "cached": True})
        else:
            async with sem:
                v = await _ask(client, config, item, key)
        store.add(revision_id, v)
        out.append(v)
        if on_verdict is not None:
            on_verdict(v)

    await asyncio.gather(*(one(i) for i in items))
    return out


def rerun(
    run: Run,
    store: Store,
    config: JudgeConfig | None = None,
    *,
    qids: Iterable[str] | None = None,
    transport: Any = None,
    api_key: str | None = None,
    on_verdict: Callable[[Verdict], None] | None = None,
) -> RerunReport:
    """Judge ``run``'s questions (all, or ``qids``) into a new revision of the store. Running it again
    after an interruption costs only what was not judged: the rest comes from the cache."""
    config = config or JudgeConfig()
    items = items_for(run, qids)
    rev = store.new_revision(run.run_id, run.results_sha256(), config.judge)
    needs_client = any(store.cached(i.key(config.model)) is None for i in items)
    client = make_client(config, transport=transport, api_key=api_key) if needs_client else None

    async def go() -> list[Verdict]:
        try:
            return await judge_items(items, config, store, rev, client, on_verdict)
        finally:
            if client is not None:
                await client.close()

    return RerunReport(rev, _run(go()))


def _run(coro: Any) -> Any:
    """Run a coroutine to its end from synchronous code — also where an event loop is already running
    in this thread (a notebook, a browser-automation session): then on a thread of its own."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1, thread_name_prefix="evalcore-judge") as pool:
        return pool.submit(asyncio.run, coro).result()
