"""Two `evalcore judge` processes on one run at once, on SQLite and PostgreSQL: each judgment is
leased in the store, so each question is paid for once (the issue's case sent 292 requests for 146
questions)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from mock_api import mock_api

from evalcore.store import Store
from helpers import SAMPLE

ROOT = Path(__file__).resolve().parents[2]


def _judge(run: Path, store: str, env: dict[str, str], *more: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "evalcore.cli",
            "judge",
            str(run),
            "--store",
            store,
            "--model",
            "claude-test-1",
            *more,
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )


def test_two_judge_processes_on_one_run_pay_for_each_question_once(store_target: str) -> None:
    """The issue's case: two `evalcore judge` on the same run at once sent 292 requests for 146
    questions. With leases, each question is asked once; each process gets every verdict."""
    run = SAMPLE / "2026-11-16-rerank-prompt-v2"
    with mock_api(latency=0.25) as api:
        env = {**os.environ, "ANTHROPIC_API_KEY": "sk-ant-test-lease", "ANTHROPIC_BASE_URL": api.url}
        procs = [_judge(run, store_target, env) for _ in range(2)]
        outs = [p.communicate(timeout=240) for p in procs]
    for p, (out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, out + err
    judged = sum(api.requests.values())
    assert judged == 146, f"{judged} requests for 146 questions"
    assert max(api.requests.values()) == 1
    with Store(store_target) as s:
        revs = s.revisions("2026-11-16-rerank-prompt-v2")
        assert [r.verdicts for r in revs] == [146, 146] and all(r.failed == 0 for r in revs)
        # Together they paid for 146 judgments; each says how many it took from the other's.
        paid = [sum(1 for v in s.verdicts(r.id) if not v.cached) for r in revs]
        assert sum(paid) == 146


def test_a_rerun_that_cannot_start_reserves_nothing(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """No API key: said before any of the budget is reserved or a revision made."""
    import pytest

    from evalcore import load_run
    from evalcore.access import Budget
    from evalcore.errors import SetupError
    from evalcore.judge.rerun import rerun

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with Store(tmp_path / "store.sqlite", budget=Budget(person=1.0)) as store:
        with pytest.raises(SetupError, match="no API key"):
            rerun(load_run(SAMPLE / "2026-11-16-rerank-prompt-v2"), store, qids=["hv-002"])
        assert store.spent_today() == {} and store.revisions("2026-11-16-rerank-prompt-v2") == []


def test_the_cli_asks_the_role_before_the_key_and_says_what_the_budget_has_left(
    tmp_path: Path, monkeypatch, capsys
) -> None:  # type: ignore[no-untyped-def]
    from evalcore.cli import main

    access = tmp_path / "access.toml"
    access.write_text(
        '[people]\n"ben@example.com" = "operator"\n[domains]\n"example.com" = "viewer"\n[budget]\nperson = 1.0\n'
    )
    monkeypatch.setenv("RAGTRIAGE_ACCESS", str(access))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    args = [
        "judge",
        str(SAMPLE / "2026-11-16-rerank-prompt-v2"),
        "--qids",
        "hv-002",
        "--store",
        str(tmp_path / "s.db"),
    ]
    monkeypatch.setenv("RAGTRIAGE_USER", "cy@example.com")
    assert main(args) == 2
    assert (
        "cy@example.com is a viewer here and may not re-judge" in capsys.readouterr().err
    )  # not "no API key"
    monkeypatch.setenv("RAGTRIAGE_USER", "ben@example.com")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-budget-line")
    with mock_api() as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
        assert main([*args, "--model", "claude-test-1"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"budget left today: ben@example\.com \$0\.\d\d of \$1\.00", out)
    assert "score it: evalcore metrics" in out
