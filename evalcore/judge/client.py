"""Asking the judge: the Anthropic SDK's ``AsyncAnthropic`` with structured output (the JSON Schema
of :class:`~evalcore.judge.prompt.JudgeOutput`, validated by pydantic), bounded concurrency, the SDK's
retries (429, 529 overloaded, timeouts and connection errors, with backoff that honours
``retry-after``), a request timeout, and the store's cache in front of every request.

A judgment fails — with its reason, never a score — on an API error that outlasts the retries, a
``max_tokens`` or ``refusal`` stop, or output that does not match the schema. Every verdict, failed or
not, carries what the API said about it: message id, request id, stop reason and token usage.

Large reruns go through the Message Batches API (:mod:`evalcore.judge.batches`).
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from evalcore.errors import SetupError
from evalcore.judge.prompt import SYSTEM, JudgeOutput, cache_key, prompt_hash, schema_hash, user_message
from evalcore.metrics.generation import context_chunks
from evalcore.runs.load import Run
from evalcore.store import Store, Verdict, holder_id
from evalcore.words import count

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
    # Message Batches: reruns with more than this many questions to judge go through the Batches
    # API (half price, results within 24 h) unless told otherwise; polled every batch_poll seconds;
    # expired or API-failed requests are submitted again up to batch_resubmits times.
    batch_above: int = 500
    batch_poll: float = 30.0
    batch_resubmits: int = 2
    batch_discount: float = 0.5  # batch prices relative to the prices above
    # Another process judging the same question (its lease in the store): how often to look for
    # its verdict, in seconds.
    lease_poll: float = 0.25

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


def make_client(config: JudgeConfig, *, transport: Any = None, api_key: str | None = None) -> Any:
    """An ``AsyncAnthropic`` client (``ANTHROPIC_API_KEY`` and ``ANTHROPIC_BASE_URL`` as in the SDK).
    ``transport`` is for tests: an httpx2 transport, e.g. a mock speaking the Messages API."""
    import anthropic
    import httpx2

    key = api_key or os.environ.get("ANTHROPIC_API_KEY")
    if not key:
        msg = "no API key: set ANTHROPIC_API_KEY (it is read from the environment, never stored)"
        raise SetupError(msg)
    http = httpx2.AsyncClient(transport=transport, timeout=config.timeout)
    return anthropic.AsyncAnthropic(
        api_key=key, max_retries=config.max_retries, timeout=config.timeout, http_client=http
    )


def structured_output(model: type[Any]) -> dict[str, Any]:
    """The ``output_config`` that asks for JSON matching a pydantic model (the SDK's transform of its
    JSON Schema, as ``messages.parse`` sends it) — for any model of ours the judge's client asks."""
    import anthropic

    return {
        "format": {"type": "json_schema", "schema": anthropic.transform_schema(model.model_json_schema())}
    }


@functools.cache
def output_config() -> dict[str, Any]:
    """Structured output: the JSON Schema of :class:`JudgeOutput`, as the SDK's ``messages.parse``
    sends it (``anthropic.transform_schema``), built once — ``parse`` builds a pydantic TypeAdapter
    on every call, which was most of the client's time per request — and shared with batches."""
    return structured_output(JudgeOutput)


def request(config: JudgeConfig, item: Item) -> dict[str, Any]:
    """The Messages API request that judges ``item`` (the same for a single call and in a batch)."""
    content = user_message(item.question, item.reference, item.answer, item.chunks)
    return {
        "model": config.model,
        "max_tokens": config.max_tokens,
        "system": SYSTEM,
        "messages": [{"role": "user", "content": content}],
        "output_config": output_config(),
    }


def verdict_from(qid: str, key: str, msg: Any, config: JudgeConfig, request_id: str | None = None) -> Verdict:
    """A message's verdict: its parsed output, or — for a ``max_tokens`` or ``refusal`` stop, or
    output that does not match the schema — a failure with its reason. Either way with what the API
    said: message id, request id, stop reason, token usage."""
    from pydantic import ValidationError

    base: dict[str, Any] = {
        "message_id": msg.id,
        "request_id": request_id,
        "stop_reason": msg.stop_reason,
        "input_tokens": msg.usage.input_tokens,
        "output_tokens": msg.usage.output_tokens,
    }
    if msg.stop_reason == "max_tokens":
        why = f"the judge's output was cut off at max_tokens ({config.max_tokens})"
        return Verdict(qid, key, False, reason=why, **base)
    if msg.stop_reason == "refusal":
        return Verdict(qid, key, False, reason="the judge refused to answer", **base)
    text = "".join(getattr(c, "text", "") for c in msg.content if c.type == "text")
    if not text.strip():
        return Verdict(qid, key, False, reason="the judge gave no structured output", **base)
    try:
        out = JudgeOutput.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        why = f"the judge's output did not match the schema ({where}: {first['msg']})"
        return Verdict(qid, key, False, reason=why, **base)
    return Verdict(qid, key, True, output=out.model_dump(), **base)


async def call(
    client: Any, config: JudgeConfig, params: dict[str, Any]
) -> tuple[Any, str | None, str | None]:
    """One Messages API request with the SDK's retries: ``(message, request id, None)``, or
    ``(None, request id, why it failed)`` when an error outlasted the retries. Shared by the judge and
    by whatever else asks the judge model (synthetic questions)."""
    import anthropic

    try:
        msg = await client.messages.create(**params)
    except anthropic.APIStatusError as exc:
        return (
            None,
            exc.request_id,
            f"API error {exc.status_code} after {config.max_retries} retries: {_short(exc.message)}",
        )
    except anthropic.APITimeoutError:
        return None, None, f"timed out ({config.timeout:g} s, {config.max_retries} retries)"
    except anthropic.APIConnectionError as exc:
        return None, None, f"could not reach the API: {_short(str(exc))}"
    return msg, getattr(msg, "_request_id", None), None


async def ask_judge(client: Any, config: JudgeConfig, item: Item, key: str) -> Verdict:
    msg, request_id, failed = await call(client, config, request(config, item))
    if failed is not None:
        return Verdict(item.qid, key, False, reason=failed, request_id=request_id)
    return verdict_from(item.qid, key, msg, config, request_id)


def _short(text: str, n: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


@dataclass(frozen=True)
class Estimate:
    """What a rerun would cost before it is asked for: questions, how many the cache already holds,
    input tokens (counted by the API's ``messages.count_tokens`` when ``counted``, else a local
    estimate: characters / 4), output tokens (assumed: 300 a question) and dollars at the configured
    prices — half of them through the Message Batches API (``batch``)."""

    questions: int
    cached: int
    input_tokens: int
    output_tokens: int
    dollars: float
    batch: bool = False
    counted: bool = False

    def __str__(self) -> str:
        todo = self.questions - self.cached
        how = "input tokens counted by the API" if self.counted else "local estimate: characters / 4"
        via = "; through Message Batches at batch prices" if self.batch else ""
        return (
            f"{count(self.questions, 'question')}: {self.cached} in the cache (free), {todo} to judge; about "
            f"{self.input_tokens:,} input and {self.output_tokens:,} output tokens, ${self.dollars:.2f} "
            f"({how}; prices from the judge configuration{via})"
        )


OUTPUT_TOKENS_GUESS = 300


def cost(config: JudgeConfig, tokens_in: int, tokens_out: int, *, batched: bool = False) -> float:
    """Dollars for these tokens at the configured prices (the batch discount through Message
    Batches): the one formula behind every estimate, budget and receipt."""
    dollars = tokens_in / 1e6 * config.price_in + tokens_out / 1e6 * config.price_out
    return dollars * (config.batch_discount if batched else 1.0)


def estimate(
    items: list[Item],
    config: JudgeConfig,
    store: Store,
    *,
    batch: bool | None = None,
    counted: dict[str, int] | None = None,
) -> Estimate:
    """The cost of judging ``items``; ``counted`` (qid -> input tokens, from :func:`count_tokens`)
    replaces the local estimate; ``batch`` as in :func:`rerun`."""
    todo = [i for i in items if store.cached(i.key(config.model)) is None]
    if counted is not None and all(i.qid in counted for i in todo):
        tokens_in = sum(counted[i.qid] for i in todo)
    else:
        counted = None
        tokens_in = sum(
            (len(SYSTEM) + len(user_message(i.question, i.reference, i.answer, i.chunks))) // 4 for i in todo
        )
    tokens_out = OUTPUT_TOKENS_GUESS * len(todo)
    batched = use_batches(len(todo), config, batch)
    dollars = cost(config, tokens_in, tokens_out, batched=batched)
    return Estimate(
        len(items), len(items) - len(todo), tokens_in, tokens_out, dollars, batched, counted is not None
    )


def count_tokens(
    items: list[Item], config: JudgeConfig, *, transport: Any = None, api_key: str | None = None
) -> dict[str, int]:
    """Each item's input tokens as the API counts them (``messages.count_tokens``: free, not a
    judgment), at most ``config.concurrency`` at once."""
    client = make_client(config, transport=transport, api_key=api_key)
    sem = asyncio.Semaphore(config.concurrency)

    async def one(item: Item) -> tuple[str, int]:
        params = request(config, item)
        params.pop("max_tokens")
        async with sem:
            got = await client.messages.count_tokens(**params)
        return item.qid, int(got.input_tokens)

    async def go() -> dict[str, int]:
        try:
            return dict(await asyncio.gather(*(one(i) for i in items)))
        finally:
            await client.close()

    return dict(run_sync(go())) if items else {}


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
    holder = holder_id()
    # A lease outlives a request and its retries; a killed holder's lease expires and is taken over.
    lease = config.timeout * (config.max_retries + 1) + 30.0

    async def one(item: Item) -> None:
        key = item.key(config.model)
        v: Verdict | None = None
        while v is None:
            hit = store.cached(key)
            if hit is not None:
                v = Verdict(**{**hit.__dict__, "qid": item.qid, "cached": True})
                store.add(revision_id, v)
                break
            # The lease is taken only once a request slot is free, so it covers one request and its
            # retries, never the time spent queued behind others.
            async with sem:
                if store.take_lease(key, holder, lease):
                    try:
                        if store.cached(key) is None:  # (else judged by the holder that just let go)
                            v = await ask_judge(client, config, item, key)
                            store.add(revision_id, v)
                    finally:
                        store.release_lease(key, holder)
                    continue
            # Another process is asking the judge this very question: wait for its verdict (or for
            # its lease to expire, if it died) rather than paying for it twice.
            await asyncio.sleep(config.lease_poll)
        out.append(v)
        if on_verdict is not None:
            on_verdict(v)

    await asyncio.gather(*(one(i) for i in items))
    return out


def use_batches(todo: int, config: JudgeConfig, batch: bool | None = None) -> bool:
    """Whether a rerun with ``todo`` questions to judge goes through the Message Batches API."""
    return bool(todo) and (batch if batch is not None else todo > config.batch_above)


def run_sync(coro: Any) -> Any:
    """Run a coroutine to its end from synchronous code — also where an event loop is already running
    in this thread (a notebook, a browser-automation session): then on a thread of its own."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1, thread_name_prefix="evalcore-judge") as pool:
        return pool.submit(asyncio.run, coro).result()
