"""Bias probes against scripted judges on the local Messages API mock: each probe detects exactly
the behaviour it exists for, a fair judge flips nothing, and a noisy but fair one flips no more
than its own noise floor. Results are kept in the store; the CLI prints them."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from evalcore.calibration.probes import probe
from evalcore.judge.client import JudgeConfig
from evalcore.runs.load import load_run
from evalcore.runs.writer import RunWriter
from evalcore.store import Store
from tests.helpers import case, write_jsonl
from tests.judge.mock_api import mock_api

KEY = "sk-ant-test-probes"
CONFIG = JudgeConfig(model="claude-test-1", timeout=5, max_retries=1, concurrency=8)
N = 40


def make_run(tmp: Path) -> Path:
    """40 questions, 5 chunks each; the answer's first sentence is stated in one chunk (rank 1 or
    2), its second in none; the answer misses part of the reference (so it is not correct)."""
    cases, rows = [], []
    for q in range(N):
        fact = f"Plan {q} keeps snapshots for {q + 10} days"
        chunks = [{"chunk_id": f"d{q}-{c}", "score": 1.0 - c / 10, "text": f"Filler text {q}-{c} about other settings."} for c in range(5)]  # fmt: skip
        chunks[q % 2]["text"] = f"Retention. {fact}. Set by the admin."
        cases.append(case(f"q{q:02d}", {f"d{q}-{q % 2}": 1}, question=f"How long does plan {q} keep snapshots?", reference_answer=f"{q + 10} days, set by the admin"))  # fmt: skip
        rows.append((f"q{q:02d}", chunks, f"{fact}. It is free of charge on weekends."))
    ts = write_jsonl(tmp / "testset.jsonl", cases)
    with RunWriter(tmp / "run", testset=ts, system={"prompt": "v1"}) as w:
        for qid, chunks, answer in rows:
            w.add(qid, retrieved=chunks, answer=answer)
    return tmp / "run"


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    run = load_run(make_run(tmp_path))
    with mock_api() as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
        yield api, run, Store(tmp_path / "store.sqlite")


def results(api, run, store, model: str = "claude-test-1", **script):  # type: ignore[no-untyped-def]
    """Probe with a scripted judge (a judge of its own model name: the cache never mixes judges)."""
    for k, v in script.items():
        setattr(api, k, v)
    return {r.probe: r for r in probe(run, store, replace(CONFIG, model=model), n=N, seed=1)}


def flagged(res: dict) -> set[str]:  # type: ignore[type-arg]
    return {p for p, r in res.items() if r.beyond_noise}


def test_a_fair_judge_flips_nothing(setup) -> None:  # type: ignore[no-untyped-def]
    api, run, store = setup
    res = results(api, run, store)
    assert {p: r.flips for p, r in res.items()} == dict.fromkeys(res, 0)
    assert res["position"].n >= N and res["retest"].n == N and flagged(res) == set()
    kept = store.probes(run.run_id)
    assert [k["probe"] for k in kept] == [
        "retest",
        "order",
        "position",
        "verbosity",
        "distractors",
        "injection",
    ]
    assert store.revisions(run.run_id) == [], "probe verdicts are not revisions of the run"


def test_a_judge_that_reads_only_the_first_chunks_is_caught_by_position(setup) -> None:  # type: ignore[no-untyped-def]
    api, run, store = setup
    res = results(api, run, store, reads_first=2)
    assert "position" in flagged(res)
    by = res["position"].detail["by_variant"]
    assert by["last"]["flips"] == by["last"]["n"] > 0 and by.get("first", {"flips": 0})["flips"] == 0
    assert flagged(res) == {"position", "order"}  # a shuffle moves the chunk too


def test_a_judge_that_likes_long_answers_is_caught_by_verbosity(setup) -> None:  # type: ignore[no-untyped-def]
    api, run, store = setup
    # this judge calls long answers correct, whatever they say
    res = results(api, run, store, verbose_above=150)
    assert flagged(res) == {"verbosity"} and res["verbosity"].flips == N


def test_an_injectable_judge_is_caught_by_injection_and_distractors_by_theirs(setup) -> None:  # type: ignore[no-untyped-def]
    api, run, store = setup
    res = results(api, run, store, injectable=True)
    assert flagged(res) == {"injection"}
    assert res["injection"].detail["by_variant"]["answer"]["flips"] == N
    res = results(api, run, store, "claude-test-2", injectable=False, confused_above=6)
    assert flagged(res) == {"distractors"}


def test_a_noisy_fair_judge_flips_within_its_noise_floor(setup) -> None:  # type: ignore[no-untyped-def]
    api, run, store = setup
    res = results(api, run, store, noise=0.1)
    assert 0 < res["retest"].rate < 0.5
    assert flagged(res) == set(), {p: str(r) for p, r in res.items()}


def test_the_cli_plans_then_probes_and_keeps_the_results(setup, capsys) -> None:  # type: ignore[no-untyped-def]
    from evalcore.cli import main

    api, run, store = setup
    api.reads_first = 2
    db = str(store.path)
    assert main(["probe", str(run.path), "--probe", "position", "--n", "20", "--dry-run", "--store", db]) == 0
    out = capsys.readouterr().out
    assert "20 questions x probes retest, position: at most 100 requests" in out and "nothing was sent" in out
    assert sum(api.requests.values()) == 0
    assert main(["probe", str(run.path), "--probe", "position", "--n", "20", "--store", db]) == 0
    out = capsys.readouterr().out
    assert "retest: 0 of 20 verdicts flipped" in out
    assert "position: " in out and "more than the noise floor" in out and "last: 20 of 20" in out
    assert [p["probe"] for p in store.probes(run.run_id)] == ["retest", "position"]
    assert main(["probe", str(run.path), "--probe", "size", "--store", db]) == 2
    assert "unknown probe size" in capsys.readouterr().err


def test_probes_reserve_their_most_against_the_budget_and_settle_what_they_cost(setup) -> None:  # type: ignore[no-untyped-def]
    from evalcore.access import Budget, Identity
    from evalcore.store import OverBudget

    api, run, store = setup
    ben = store.acting_as(Identity("ben@example.com", "operator"), Budget(person=0.01))
    with pytest.raises(OverBudget, match=r"refused before any request: this would cost about \$\d+\.\d\d"):
        probe(run, ben, CONFIG, probes=["position"], n=N, seed=1)
    assert sum(api.requests.values()) == 0 and store.revisions(f"probe:{run.run_id}") == []
    rich = store.acting_as(Identity("ben@example.com", "operator"), Budget(person=100.0))
    probe(run, rich, CONFIG, probes=["position"], n=5, seed=1)
    spent = store.spent_today()["ben@example.com"]
    paid = [v for r in store.revisions(f"probe:{run.run_id}") for v in store.verdicts(r.id) if not v.cached]
    assert paid and spent == pytest.approx(
        sum(v.input_tokens or 0 for v in paid) * 3e-6 + sum(v.output_tokens or 0 for v in paid) * 15e-6
    )
