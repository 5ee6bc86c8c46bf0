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
    assert "2 question(s)" in judged and "failed hv-001: could not reach the API" in judged
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
