"""Large reruns through the Message Batches API: half the price, results within 24 hours.

1. Questions the cache holds are taken from it, as in a direct rerun.
2. A batch an earlier, interrupted rerun submitted for any of the remaining questions is picked up
   again (the store remembers every batch the moment the API accepts it), never submitted twice.
3. The rest is submitted — one request per judgment, its custom id the judgment's content address —
   and the batch id recorded in the store before anything else happens. Each judgment is leased in
   the store first (the lease renewed at every poll while the batch runs), so a second process
   batching the same questions at once waits for their verdicts instead of submitting them again.
4. The batch is polled until it ends; then its results are read as they stream in and each verdict
   is committed to the store as it arrives.
5. Requests that expired, were canceled, or failed on the API's side (overloaded, rate limited, an
   internal error) are submitted again, up to ``batch_resubmits`` times; what still fails then is a
   failed judgment with its reason. A request the API rejects as invalid is not resubmitted.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from evalcore.judge.client import Item, JudgeConfig, request, verdict_from
from evalcore.store import Store, Verdict, holder_id
from evalcore.words import count

# The API's error types worth asking again: they say nothing about the request itself.
RETRYABLE = {"overloaded_error", "rate_limit_error", "api_error", "timeout_error"}


async def judge_in_batches(
    items: list[Item],
    config: JudgeConfig,
    store: Store,
    revision_id: int,
    client: Any,
    on_verdict: Callable[[Verdict], None] | None = None,
    on_batch: Callable[[str, str], None] | None = None,
) -> list[Verdict]:
    """Judge ``items`` into revision ``revision_id`` through Message Batches (see the module doc).
    ``on_batch(batch_id, event)`` is told "submitted", "resumed" and "ended" for each batch."""
    out: list[Verdict] = []
    keys = {i.qid: i.key(config.model) for i in items}

    def from_cache() -> list[Item]:
        """Take what the cache holds into this revision; the items still to judge."""
        todo = []
        for item in items:
            if any(v.qid == item.qid for v in out):
                continue
            hit = store.cached(keys[item.qid])
            if hit is None:
                todo.append(item)
                continue
            v = Verdict(**{**hit.__dict__, "qid": item.qid, "cached": True})
            store.add(revision_id, v)
            out.append(v)
            if on_verdict is not None:
                on_verdict(v)
        return todo

    def commit(v: Verdict, rev: int) -> None:
        store.add(rev, v)
        if rev == revision_id:
            out.append(v)
            if on_verdict is not None:
                on_verdict(v)

    # Another process batching the same questions at once holds their leases (renewed at every poll
    # while its batch runs): they are waited for, never submitted twice. A lease that lapsed is a
    # process that died; its batch, if it had submitted one, is picked up below.
    holder = holder_id()
    lease = 3 * config.batch_poll + 60.0
    while True:
        todo = from_cache()
        if not todo:
            break
        wanted = {keys[i.qid]: i for i in todo}  # identical judgments are asked once
        mine = {k: i for k, i in wanted.items() if store.take_lease(k, holder, lease)}
        if not mine:  # all being judged elsewhere right now
            await asyncio.sleep(min(config.batch_poll, 5.0))
            continue

        def renew(held: dict[str, Item] = mine) -> None:
            for k in held:
                store.take_lease(k, holder, lease)

        try:
            # An interrupted rerun's batches first: their results land in the revision they were
            # made for, and from there (the cache) in this one.
            for batch in store.open_batches(list(mine)):
                if on_batch is not None:
                    on_batch(batch.id, "resumed")
                await _collect(
                    client, config, store, batch.id, batch.revision_id, batch.requests, commit, True, renew
                )
            left = {keys[i.qid] for i in from_cache()}
            by_key = {k: i for k, i in mine.items() if k in left}
            for attempt in range(config.batch_resubmits + 1):
                if not by_key:
                    break
                requests = [{"custom_id": k, "params": request(config, i)} for k, i in by_key.items()]
                batch = await client.messages.batches.create(requests=requests)
                store.add_batch(
                    batch.id, revision_id, {k: i.qid for k, i in by_key.items()}
                )  # before anything else
                if on_batch is not None:
                    on_batch(batch.id, "submitted")
                final = attempt == config.batch_resubmits
                retry = await _collect(
                    client, config, store, batch.id, revision_id, {k: i.qid for k, i in by_key.items()}, commit,
                    final, renew,
                )  # fmt: skip
                by_key = {k: by_key[k] for k in retry}
                if on_batch is not None:
                    on_batch(batch.id, "ended")
        finally:
            for k in mine:
                store.release_lease(k, holder)
        # (a judgment that failed for good is in ``out`` now: the next round does not ask for it)
    from_cache()  # questions that shared a judgment with another are served now
    return out


async def _collect(
    client: Any,
    config: JudgeConfig,
    store: Store,
    batch_id: str,
    revision_id: int,
    requests: dict[str, str],
    commit: Callable[[Verdict, int], None],
    final: bool,
    renew: Callable[[], None] | None = None,
) -> list[str]:
    """Wait for the batch to end (``renew``-ing this process's leases at every poll), then commit
    each result as it streams in; the custom ids worth submitting again (none when ``final``: then
    they are failures with their reason)."""
    while True:
        batch = await client.messages.batches.retrieve(batch_id)
        if batch.processing_status == "ended":
            break
        if renew is not None:
            renew()
        await asyncio.sleep(config.batch_poll)
    retry: list[str] = []
    seen: set[str] = set()
    # Collected before, by a rerun interrupted while reading the results: not added twice.
    done = {v.qid for v in store.verdicts(revision_id)}
    async for r in await client.messages.batches.results(batch_id):
        qid = requests.get(r.custom_id)
        if qid is None:  # not one of ours
            continue
        seen.add(r.custom_id)
        if qid in done:
            continue
        res = r.result
        if res.type == "succeeded":
            commit(verdict_from(qid, r.custom_id, res.message, config), revision_id)
            continue
        if res.type == "errored":
            kind = res.error.error.type
            why = f"the batch request failed: {kind}: {res.error.error.message}"
            if kind not in RETRYABLE:
                commit(Verdict(qid, r.custom_id, False, reason=why), revision_id)
                continue
        else:  # expired (not processed within 24 h) or canceled
            why = f"the batch request {res.type} ({count(config.batch_resubmits, 'resubmission')})"
        if final:
            commit(Verdict(qid, r.custom_id, False, reason=why), revision_id)
        else:
            retry.append(r.custom_id)
    for cid in sorted(set(requests) - seen - {c for c, q in requests.items() if q in done}):
        # the API returned no result for it: ask again
        if final:
            commit(Verdict(requests[cid], cid, False, reason="the batch returned no result"), revision_id)
        else:
            retry.append(cid)
    store.end_batch(batch_id)
    return retry
