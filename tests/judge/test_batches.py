"""Large reruns through the Message Batches API, against the local mock speaking it: the whole
lifecycle (submit, poll, results streamed into the store), expired and failed requests resubmitted,
invalid ones not, an interrupted rerun that picks its batch up again instead of paying twice, and the
estimate at batch prices with tokens counted by the API."""

from __future__ import annotations

from pathlib import Path

import pytest
from mock_api import mock_api

from evalcore import RunWriter, load_run
from evalcore.judge.client import JudgeConfig, count_tokens, estimate, items_for
from evalcore.judge.rerun import rerun
from evalcore.store import Store
from helpers import case, write_jsonl

CHUNK = "Snapshots on the Team plan are kept for 90 days. The Team plan costs $12 per seat."
ANSWER = "Snapshots on the Team plan are kept for 90 days."
QUESTIONS = {
    "q-ok": "How long are Team snapshots kept?",
    "q-ok2": "How long do Team snapshots stay?",
    "q-expire": "[expire] How long are snapshots kept?",
    "q-invalid": "[invalid] How long?",
    "q-overloaded": "[overloaded] How long?",
}
BEHAVIOUR = {"[expire]": "expire", "[invalid]": "invalid", "[overloaded]": "overloaded"}
CONFIG = JudgeConfig(model="claude-test-1", timeout=2, max_retries=0, batch_poll=0.01, batch_resubmits=1)


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    ts = write_jsonl(
        tmp_path / "testset.jsonl",
        [case(qid, {"c1": 1}, question=q, reference_answer="90 days") for qid, q in QUESTIONS.items()],
    )
    with RunWriter(tmp_path / "run", testset=ts, system={"prompt": "v1"}) as w:
        for qid in QUESTIONS:
            w.add(qid, retrieved=[{"chunk_id": "c1", "score": 1.0, "text": CHUNK}], answer=ANSWER)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-batches")
    with mock_api(BEHAVIOUR) as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
        yield api, load_run(tmp_path / "run"), Store(tmp_path / "store.sqlite")


def test_a_batch_lifecycle_with_expired_and_failed_requests(env) -> None:  # type: ignore[no-untyped-def]
    api, run, store = env
    api.batch_polls = 3  # "in progress" three times, then ended
    events: list[tuple[str, str]] = []
    report = rerun(run, store, CONFIG, batch=True, on_batch=lambda b, e: events.append((b, e)))
    by = {v.qid: v for v in report.verdicts}
    assert by["q-ok"].ok and by["q-ok"].message_id and by["q-ok"].output
    assert by["q-expire"].ok, "expired the first time, judged when resubmitted"
    assert not by["q-invalid"].ok and "invalid_request_error" in (by["q-invalid"].reason or "")
    assert not by["q-overloaded"].ok and "overloaded_error" in (by["q-overloaded"].reason or "")
    # Two batches: everything, then only what expired or failed on the API's side.
    assert list(api.batches) == ["msgbatch_mock_001", "msgbatch_mock_002"]
    second = {api.question_of(r["params"]) for r in api.batches["msgbatch_mock_002"]["requests"]}
    assert second == {QUESTIONS["q-expire"], QUESTIONS["q-overloaded"]}, "an invalid request is not resent"
    assert (
        sum(api.requests.values()) == 7 and api.batches["msgbatch_mock_001"]["polls"] == 5
    )  # 3 in progress, ended, results
    assert events == [
        ("msgbatch_mock_001", "submitted"),
        ("msgbatch_mock_001", "ended"),
        ("msgbatch_mock_002", "submitted"),
        ("msgbatch_mock_002", "ended"),
    ]
    assert store.open_batches() == [], "both collected"
    # The verdicts are in the store like any rerun's: cached next time, nothing asked again.
    again = rerun(run, store, CONFIG, batch=True, qids=["q-ok", "q-ok2", "q-expire"])
    assert again.cached == 3 and len(api.batches) == 2


class Interrupted(Exception):
    pass


def test_an_interrupted_batch_rerun_picks_its_batch_up_again(env) -> None:  # type: ignore[no-untyped-def]
    api, run, store = env
    qids = ["q-ok", "q-ok2"]

    def stop(batch_id: str, event: str) -> None:
        if event == "submitted":
            raise Interrupted  # Ctrl-C, a closed tab: after the API accepted the batch

    with pytest.raises(Interrupted):
        rerun(run, store, CONFIG, batch=True, qids=qids, on_batch=stop)
    (pending,) = store.open_batches()
    assert pending.id == "msgbatch_mock_001" and set(pending.requests.values()) == set(qids)
    events: list[str] = []
    report = rerun(run, store, CONFIG, batch=True, qids=qids, on_batch=lambda b, e: events.append(f"{b} {e}"))
    assert events == ["msgbatch_mock_001 resumed"], "nothing submitted twice"
    assert len(api.batches) == 1 and sum(api.requests.values()) == 2
    assert report.cached == 2 and all(v.ok for v in report.verdicts)
    # The interrupted rerun's revision holds the batch's verdicts too: nothing was lost.
    first = store.revisions(run.run_id)[0]
    assert first.verdicts == 2 and store.open_batches() == []


def test_large_reruns_go_through_batches_at_batch_prices(env) -> None:  # type: ignore[no-untyped-def]
    api, run, store = env
    config = JudgeConfig(model="claude-test-1", batch_above=2, batch_poll=0.01)
    items = items_for(run, ["q-ok", "q-ok2", "q-expire"])
    direct = estimate(items, config, store, batch=False)
    batched = estimate(items, config, store)  # 3 to judge > batch_above: batches
    assert batched.batch and not direct.batch
    assert batched.dollars == pytest.approx(direct.dollars / 2)
    assert "through Message Batches at batch prices" in str(batched)
    counted = count_tokens(items, config)
    assert api.counted == 3 and set(counted) == {"q-ok", "q-ok2", "q-expire"}
    exact = estimate(items, config, store, counted=counted)
    assert exact.counted and exact.input_tokens == sum(counted.values())
    assert "input tokens counted by the API" in str(exact)
    assert sum(api.requests.values()) == 0, "estimating judges nothing"
    rerun(run, store, config, qids=["q-ok", "q-ok2", "q-expire"])
    assert len(api.batches) >= 1, "more than batch_above questions: a batch"
    rerun(run, store, config, qids=["q-invalid"])  # one question: asked directly
    assert "[invalid] How long?" in {api.question_of(b) for b in api.bodies}


def test_the_cli_judges_through_a_batch(env, capsys) -> None:  # type: ignore[no-untyped-def]
    from evalcore.cli import main

    api, run, store = env
    args = ["judge", str(run.path), "--store", str(store.path), "--qids", "q-ok", "q-expire", "--batch"]
    assert main([*args, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "input tokens counted by the API" in out and "through Message Batches at batch prices" in out
    assert api.batches == {} and api.counted == 2
    assert main([*args, "--poll", "0.01"]) == 0
    captured = capsys.readouterr()
    assert "batch msgbatch_mock_001 submitted (Message Batches, results within 24 h)" in captured.err
    assert "2 judged, 0 from the cache, 0 failed" in captured.out and "batch prices)" in captured.out


def test_two_batch_reruns_started_together_submit_each_question_once(env) -> None:  # type: ignore[no-untyped-def]
    """Two reruns reach the submission at the same instant (one event loop, two processes' worth of
    store connections): the one that leased the judgments submits them, the other waits for their
    verdicts. Without the leases both submitted everything."""
    import asyncio
    from dataclasses import replace

    from evalcore.judge.batches import judge_in_batches
    from evalcore.judge.client import make_client

    api, run, store = env
    qids = ["q-ok", "q-ok2"]
    items = items_for(run, qids)
    config = replace(CONFIG, lease_poll=0.01)
    other = Store(store.path)  # another server's connection to the same store

    async def both() -> list[list]:  # type: ignore[type-arg]
        clients = [make_client(config), make_client(config)]
        try:
            return await asyncio.gather(
                *(
                    judge_in_batches(items, config, s, s.new_revision(run.run_id, "sha", config.judge), c)
                    for s, c in zip((store, other), clients, strict=True)
                )
            )
        finally:
            for c in clients:
                await c.close()

    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:  # a thread of its own: an earlier test's loop may be running here
        got = pool.submit(asyncio.run, both()).result()
    assert sorted(api.batch_attempts.values()) == [1, 1] and len(api.batches) == 1
    assert [sorted(v.qid for v in out) for out in got] == [qids, qids]
    assert all(v.ok for out in got for v in out)
    other.close()
