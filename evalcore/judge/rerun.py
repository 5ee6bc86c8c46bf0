"""A rerun: a run's questions judged into a new revision of the store — one request per question,
or through the Message Batches API (:mod:`evalcore.judge.batches`) for large ones."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from evalcore.judge.batches import judge_in_batches
from evalcore.judge.client import (
    Item,
    JudgeConfig,
    cost,
    estimate,
    items_for,
    judge_items,
    make_client,
    run_sync,
)
from evalcore.runs.load import Run
from evalcore.store import Store, Verdict


@dataclass
class RerunReport:
    revision_id: int
    verdicts: list[Verdict]
    batched: bool = False  # through the Message Batches API (at batch prices)

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


def rerun(
    run: Run,
    store: Store,
    config: JudgeConfig | None = None,
    *,
    qids: Iterable[str] | None = None,
    transport: Any = None,
    api_key: str | None = None,
    on_verdict: Callable[[Verdict], None] | None = None,
    batch: bool | None = None,
    on_batch: Callable[[str, str], None] | None = None,
    reserve: float | None = None,
) -> RerunReport:
    """Judge ``run``'s questions (all, or ``qids``) into a new revision of the store. Running it again
    after an interruption costs only what was not judged: the rest comes from the cache (or, for a
    batch still running, from that batch).

    ``batch``: through the Message Batches API (True), one request per question (False), or the
    batches when more than ``config.batch_above`` questions are not in the cache (None).
    ``reserve``: the dollars the caller showed before spending (default: the local estimate), which
    the daily budget is asked for."""
    config = config or JudgeConfig()
    return judge_into_revision(
        items_for(run, qids), run.run_id, run.results_sha256(), store, config,
        transport=transport, api_key=api_key, on_verdict=on_verdict, batch=batch, on_batch=on_batch,
        reserve=reserve,
    )  # fmt: skip


def judge_into_revision(
    items: list[Item],
    run_id: str,
    results_sha256: str,
    store: Store,
    config: JudgeConfig,
    *,
    transport: Any = None,
    api_key: str | None = None,
    on_verdict: Callable[[Verdict], None] | None = None,
    batch: bool | None = None,
    on_batch: Callable[[str, str], None] | None = None,
    reserve: float | None = None,
) -> RerunReport:
    """Judge ``items`` into a new revision attached to ``run_id`` and its results' sha256 — a run, or
    anything judged like one (a production log's sample)."""
    store.require("rejudge")  # the role first: a viewer is not sent to find an API key they may not use
    est = estimate(items, config, store, batch=batch)
    todo = est.questions - est.cached
    # No key: said before anything is reserved or recorded.
    client = make_client(config, transport=transport, api_key=api_key) if todo else None
    # The budget, from the same estimate the judge shows before spending: a rerun that would pass it
    # is refused before any request (and before a revision is made).
    try:
        reservation = (
            store.reserve(
                est.dollars if reserve is None else reserve,
                "rejudge",
                f"run {run_id}",
                {"questions": todo, "model": config.model},
            )
            if todo
            else None
        )
    except BaseException:
        if client is not None:
            run_sync(client.close())
        raise
    batched = est.batch
    try:
        rev = store.new_revision(run_id, results_sha256, config.judge)
    except BaseException:
        if reservation is not None:
            store.settle(reservation, 0.0)
        if client is not None:
            run_sync(client.close())
        raise

    async def go() -> list[Verdict]:
        try:
            if batched:
                return await judge_in_batches(items, config, store, rev, client, on_verdict, on_batch)
            return await judge_items(items, config, store, rev, client, on_verdict)
        finally:
            if client is not None:
                await client.close()

    try:
        report = RerunReport(rev, run_sync(go()), batched)
    except BaseException:
        if reservation is not None:  # interrupted: what was paid is in the verdicts stored so far
            store.settle(reservation, _paid(store.verdicts(rev), config, batched))
        raise
    if reservation is not None:
        store.settle(reservation, _paid(report.verdicts, config, batched))
    return report


def _paid(verdicts: list[Verdict], config: JudgeConfig, batched: bool) -> float:
    """What these verdicts' requests cost (those taken from the cache cost nothing)."""
    paid = [v for v in verdicts if not v.cached]
    tokens_in = sum(v.input_tokens or 0 for v in paid)
    tokens_out = sum(v.output_tokens or 0 for v in paid)
    return cost(config, tokens_in, tokens_out, batched=batched)


def config_like(store: Store, other: Run, config: JudgeConfig | None = None) -> JudgeConfig:
    """``config`` with the judge ``other`` was judged by — its newest revision's in the store, else
    the one its run file records — so that a run judged with it compares with ``other``.
    ``ValueError`` says why that cannot be done: ``other`` names no judge, or was judged with a
    prompt or schema this evalcore does not have (only the model can be taken over)."""
    from dataclasses import replace

    from evalcore.judge.prompt import prompt_hash, schema_hash

    revs = store.revisions(other.run_id, other.results_sha256())
    like = revs[-1].judge if revs else other.judge
    if like is None:
        msg = f"{other.path} does not record its judge (run.json 'judge'); name the model instead"
        raise ValueError(msg)
    model, prompt, schema = like
    if prompt not in (prompt_hash(), "") or schema not in (schema_hash(), ""):
        msg = (
            f"{other.path} was judged with another prompt or schema ({other.judge_text()}) than this "
            "version of evalcore has; re-judge both runs with this one to compare them"
        )
        raise ValueError(msg)
    return replace(config or JudgeConfig(), model=model)
