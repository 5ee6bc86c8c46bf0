"""Runs in object storage, against a local S3-compatible server (moto) the tests start: every verb
reads ``s3://`` URLs as it reads folders, a rewritten object is read again, a bucket that refuses
access and an object deleted between listing and reading get clear errors, the dashboard lists a
bucket and follows it, and the credentials are never printed."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import s3
from streamlit.testing.v1 import AppTest

from evalcore.runs import remote
from helpers import ROOT, SAMPLE

BASE, CAND = "2026-11-02-hybrid-rerank", "2026-11-16-rerank-prompt-v2"


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    why = s3.missing()
    if why:
        pytest.skip(why)
    with s3.server() as url:
        s3.upload(url, SAMPLE, "team", "runs")
        yield url


@pytest.fixture
def env(endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The standard AWS variables for the local server, and an empty cache folder (a fresh mirror)."""
    values = {**s3.environment(endpoint), "RAGTRIAGE_CACHE_DIR": str(tmp_path / "cache")}
    for k, v in values.items():
        monkeypatch.setenv(k, v)
    remote._STORES.clear()
    remote._SYNCED.clear()
    return {**os.environ, **values}


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "evalcore.cli", *args], env=env, capture_output=True, text=True, cwd=ROOT
    )


def test_every_verb_reads_a_bucket_as_it_reads_a_folder(env: dict[str, str]) -> None:
    url = "s3://team/runs"
    checked = cli("validate", url, env=env)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "4 runs" in checked.stdout or "4 runs" in checked.stdout
    for args in (
        ("metrics", "{}/" + CAND, "--by", "topic"),
        ("compare", "{}/" + BASE, "{}/" + CAND),
        ("gate", "--baseline", "{}/" + BASE, "--candidate", "{}/" + CAND),
        ("testset", "stats", "{}/testset.jsonl", "--run", "{}/" + CAND),
        ("judge", "{}/" + CAND, "--dry-run", "--qids", "hv-002", "hv-003"),
        ("revisions", "{}/" + CAND),
        ("validate", "{}/testset.jsonl"),
    ):
        there = cli(*(a.format(url) for a in args), env=env)
        here = cli(*(a.format(str(SAMPLE)) for a in args), env=env)
        assert there.returncode == here.returncode, there.stderr
        # Same figures; only the location named differs.
        assert there.stdout.replace(url, "<runs>") == here.stdout.replace(str(SAMPLE), "<runs>"), args
    assert str(Path(env["RAGTRIAGE_CACHE_DIR"])) not in there.stdout, (
        "messages name the bucket, not the mirror"
    )


def test_a_rewritten_object_is_read_again(env: dict[str, str], endpoint: str) -> None:
    s3.upload(endpoint, SAMPLE / BASE, "team", "rewrite/run")
    s3.upload(endpoint, SAMPLE, "team", "rewrite-ts")  # (its test set, by the manifest's ../testset.jsonl)
    client = s3.client(endpoint)
    client.copy_object(
        Bucket="team", Key="testset.jsonl", CopySource={"Bucket": "team", "Key": "rewrite-ts/testset.jsonl"}
    )
    client.copy_object(
        Bucket="team",
        Key="rewrite/testset.jsonl",
        CopySource={"Bucket": "team", "Key": "rewrite-ts/testset.jsonl"},
    )
    first = cli("metrics", "s3://team/rewrite/run", "--format", "json", env=env)
    assert first.returncode == 0, first.stderr
    # CI rewrites the results in place (same key, new content): the next read sees the new figures.
    client.upload_file(str(SAMPLE / CAND / "results.jsonl"), "team", "rewrite/run/results.jsonl")
    second = cli("metrics", "s3://team/rewrite/run", "--format", "json", env=env)
    assert second.returncode == 0, second.stderr
    assert first.stdout != second.stdout
    local = cli("metrics", str(SAMPLE / CAND), "--format", "json", env=env)
    assert second.stdout.split("\n", 1)[-1] == local.stdout.split("\n", 1)[-1]


def test_a_bucket_that_refuses_access_is_named_with_the_fix(tmp_path: Path) -> None:
    with s3.server(refusing=True) as refusing:
        env = {**os.environ, **s3.environment(refusing), "RAGTRIAGE_CACHE_DIR": str(tmp_path / "c")}
        out = cli("validate", "s3://locked/runs", env=env)
    assert out.returncode == 2
    assert "access to s3://locked/runs was refused (403)" in out.stderr
    assert "credentials in the environment" in out.stderr
    assert s3.SECRET not in out.stdout + out.stderr and "Traceback" not in out.stderr


def test_a_missing_bucket_says_so(env: dict[str, str]) -> None:
    out = cli("metrics", "s3://no-such-bucket/runs/x", env=env)
    assert out.returncode == 2 and "s3://no-such-bucket/runs/x: no such bucket" in out.stderr


def test_an_object_deleted_between_listing_and_reading(
    env: dict[str, str], endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    s3.upload(endpoint, SAMPLE, "team", "racy")
    real = remote._listing

    def listing_then_delete(store, prefix, url):  # type: ignore[no-untyped-def]
        got = real(store, prefix, url)
        s3.client(endpoint).delete_object(Bucket="team", Key=f"racy/{BASE}/results.jsonl")
        return got

    monkeypatch.setattr(remote, "_listing", listing_then_delete)
    loc = remote.resolve("s3://team/racy")
    (problem,) = loc.problems
    assert str(problem).startswith(f"s3://team/racy/{BASE}/results.jsonl: warning: was listed, then deleted")
    from evalcore import load_runs

    lr = load_runs(loc.root)
    assert BASE not in lr.runs and len(lr.runs) == 3  # the others load
    assert any(BASE in loc.display(str(p)) and "s3://team/racy" in loc.display(str(p)) for p in lr.problems)


def test_the_dashboard_lists_a_bucket_and_follows_it(
    env: dict[str, str], endpoint: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import dashboard.data

    partial = tmp_path / "partial"
    partial.mkdir()
    shutil.copy(SAMPLE / "testset.jsonl", partial)
    for run in ("2026-10-05-bm25", "2026-10-19-hybrid"):
        shutil.copytree(SAMPLE / run, partial / run)
    s3.upload(endpoint, partial, "team", "live")
    monkeypatch.setenv("RAGTRIAGE_RUNS", "s3://team/live")
    monkeypatch.setattr(dashboard.data, "LISTING_TTL", 0.0)  # (a listing each page load, not every 5 s)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    at.run()
    assert not at.exception, at.exception
    captions = [c.value for c in at.sidebar.caption]
    assert "Runs folder: `s3://team/live`" in captions and "2 runs" in captions
    s3.upload(endpoint, SAMPLE / CAND, "team", f"live/{CAND}")  # CI writes a new run
    at.run()
    assert "3 runs" in [c.value for c in at.sidebar.caption]
    assert len(next(d.value for d in at.dataframe if "run_id" in d.value.columns)) == 3


def test_the_dashboard_says_when_the_bucket_refuses_access(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    why = s3.missing()
    if why:
        pytest.skip(why)
    with s3.server(refusing=True) as refusing:
        for k, v in {**s3.environment(refusing), "RAGTRIAGE_CACHE_DIR": str(tmp_path / "c")}.items():
            monkeypatch.setenv(k, v)
        remote._STORES.clear()
        remote._SYNCED.clear()
        monkeypatch.setenv("RAGTRIAGE_RUNS", "s3://locked/runs")
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
        at.run()
    assert not at.exception, at.exception
    (error,) = at.error
    shown = re.sub(r"\\(.)", r"\1", error.value)
    assert "access to s3://locked/runs was refused (403): the credentials in the environment" in shown
    assert s3.SECRET not in shown


def test_the_dashboard_and_the_cli_default_to_the_same_runs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """One owner for where the runs are: --runs, else $RAGTRIAGE_RUNS, else the bundled sample runs —
    the same from any working folder (the CLI took sample_runs/ relative to the current folder)."""
    import dashboard.data

    monkeypatch.delenv("RAGTRIAGE_RUNS", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.argv", ["app.py"])
    assert remote.runs_location() == str(SAMPLE) == dashboard.data.runs_location()
    monkeypatch.setenv("RAGTRIAGE_RUNS", "s3://team/runs")
    assert remote.runs_location() == "s3://team/runs" == dashboard.data.runs_location()
    monkeypatch.setattr("sys.argv", ["app.py", "--runs", "elsewhere"])
    assert dashboard.data.runs_location() == str(tmp_path / "elsewhere")


def test_a_status_is_read_from_the_error_not_from_digits_in_a_request_id() -> None:
    """A missing bucket once read as a credentials problem: its error's request id held "401"."""
    missing = Exception("Error performing list request: Received NoSuchBucket; RequestId: 9f401c2e")
    assert "no such bucket" in remote._why(missing, "s3://b/runs")
    refused = Exception("Client error with status 403 Forbidden: <Code>AccessDenied</Code>")
    assert "was refused (403)" in remote._why(refused, "s3://b/runs")
    assert "(401)" in remote._why(Exception("Client error with status 401 Unauthorized"), "s3://b/runs")
    assert remote._why(Exception("connection reset; id 401"), "s3://b/runs").startswith("could not read")
