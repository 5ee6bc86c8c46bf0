"""A planted store password and API key never come out: not in what the CLI prints on its success or
failure paths, not in the store, the parse cache or the run folder. (The dashboard's side is in
tests/dashboard/test_team_pages.py.)"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pg
import pytest

from helpers import ROOT, SAMPLE

PASSWORD = "planted-Pa55word-7f3a"
API_KEY = "sk-ant-api03-planted-key-0123456789"
RUN = "2026-11-16-rerank-prompt-v2"


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "evalcore.cli", *args], env=env, capture_output=True, text=True, cwd=ROOT
    )


def with_password(url: str) -> str:
    return url.replace("postgresql://postgres@", f"postgresql://postgres:{PASSWORD}@")


def files_holding(folder: Path, needle: bytes) -> list[str]:
    return [str(p) for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes()]


def test_a_store_password_and_an_api_key_never_leave_the_cli(tmp_path: Path, pg_url: str) -> None:
    runs = tmp_path / "runs"
    shutil.copytree(SAMPLE, runs)
    cache = tmp_path / "cache"
    env = {
        **os.environ,
        "RAGTRIAGE_CACHE_DIR": str(cache),
        "ANTHROPIC_API_KEY": API_KEY,
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",  # nothing listens: every request fails
        "RAGTRIAGE_STORE": str(tmp_path / "store.sqlite"),
    }
    store = with_password(pg.fresh_database(pg_url))  # trust auth: the password is sent, and accepted
    down = f"postgresql://app:{PASSWORD}@127.0.0.1:9/nowhere"  # a store that cannot be reached
    outputs = []
    for args in (
        ["revisions", str(runs / RUN), "--store", store],  # the case
        ["revisions", str(runs / RUN), "--store", down],
        [
            "judge",
            str(runs / RUN),
            "--store",
            store,
            "--qids",
            "hv-001",
            "hv-002",
            "--model",
            "claude-test-1",
        ],
        ["judge", str(runs / RUN), "--store", down, "--qids", "hv-001"],
        ["calibrate", "status", "--store", down],
        ["audit", "--store", store],
        ["metrics", str(runs / RUN), "--judge", "latest", "--store", store],
    ):
        out = cli(*args, env=env)
        outputs.append((args[0], out.returncode, out.stdout + out.stderr))
    codes = {name: code for name, code, _ in outputs}
    assert codes["audit"] == 0 and codes["judge"] == 2
    judged = outputs[2][2]
    assert "2 questions" in judged and "failed hv-001: could not reach the API" in judged
    for name, _, text in outputs:
        assert PASSWORD not in text, f"{name} printed the store's password:\n{text}"
        assert API_KEY not in text and API_KEY[:20] not in text, f"{name} printed the API key:\n{text}"
    revisions = outputs[0][2]
    assert "postgresql://postgres:***@127.0.0.1" in revisions  # the store is still named, masked
    assert "could not open the store postgresql://app:***@127.0.0.1:9/nowhere" in outputs[1][2]
    # Nothing was written with either of them in it.
    for folder in (runs, cache, tmp_path):
        for needle in (PASSWORD.encode(), API_KEY.encode()):
            assert files_holding(folder, needle) == []


def page_text(at: object) -> str:
    """Every text the page shows, alerts and captions included (markdown escapes removed)."""
    import re

    parts = []
    for kind in ("markdown", "caption", "error", "warning", "info", "success", "exception", "text"):
        parts += [str(getattr(e, "value", "")) for e in getattr(at, kind)]
    parts += [str(c.value) for c in at.sidebar.caption]  # type: ignore[attr-defined]
    return re.sub(r"\\(.)", r"\1", "\n".join(parts))


def test_the_pages_never_show_or_keep_a_password_or_an_api_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from evalcore import load_run

    st.cache_data.clear()  # (a store another test's app opened is not this one's)
    st.cache_resource.clear()
    caplog.set_level(logging.DEBUG)
    runs = tmp_path / "runs"
    shutil.copytree(SAMPLE, runs)
    cache = tmp_path / "cache"
    monkeypatch.setenv("RAGTRIAGE_RUNS", str(runs))
    monkeypatch.setenv("RAGTRIAGE_CACHE_DIR", str(cache))
    # A store that cannot be opened, its password in the URL: the page says so, masked.
    monkeypatch.setenv("RAGTRIAGE_STORE", f"postgresql://app:{PASSWORD}@127.0.0.1:9/nowhere")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    at.run()
    assert not at.exception, at.exception
    shown = page_text(at)
    assert "could not open the store postgresql://app:***@127.0.0.1:9/nowhere" in shown
    assert PASSWORD not in shown
    # A re-judge whose every request fails, with a key in the environment: the failure is shown with
    # its reason, never the key.
    store = tmp_path / "store.sqlite"
    monkeypatch.setenv("RAGTRIAGE_STORE", str(store))
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    cases = load_run(runs / RUN).testset.cases
    qid = cases.filter((cases["split"] == "dev") & cases["answerable"])["qid"][0]
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page("pages/3_Question.py")
    at.query_params["qid"] = qid
    at.query_params["run"] = RUN
    at.run()
    at.button(key="q_rejudge").click().run()
    assert not at.exception, at.exception
    shown = page_text(at)
    assert "could not reach the API" in shown
    assert API_KEY not in shown and PASSWORD not in shown
    assert API_KEY not in caplog.text and PASSWORD not in caplog.text
    for folder in (runs, cache, tmp_path):
        for needle in (PASSWORD.encode(), API_KEY.encode()):
            assert files_holding(folder, needle) == []
