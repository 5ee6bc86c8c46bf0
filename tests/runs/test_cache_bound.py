"""The parse cache stays under its bound: the entries used least recently go first, an entry being
written is never touched, and a load after pruning gives the same run (parsed again)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import polars as pl
import pytest

import evalcore.cache as cache
from evalcore import load_runs, score_run


def _entry(tmp_path: Path, name: str, rows: int, used: float) -> Path:
    source = tmp_path / f"{name}.jsonl"
    source.write_text(name)
    cache.write_frames(source, "results", {"f": pl.DataFrame({"x": list(range(rows))})})
    folder = cache.cache_dir() / "results" / cache.file_key(source)
    os.utime(folder / "meta.json", (used, used))
    return source


def _size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def test_the_entries_used_least_recently_go_until_the_cache_is_under_its_bound(tmp_path: Path) -> None:
    now = time.time()
    old = _entry(tmp_path, "old", 100_000, now - 3000)
    middle = _entry(tmp_path, "middle", 100_000, now - 2000)
    recent = _entry(tmp_path, "recent", 100_000, now - 1000)
    one = _size(cache.cache_dir())
    assert cache.prune(limit=one) == 0, "under its bound: nothing goes"
    # Reading "old" now makes it the most recently used: "middle" is the one to go.
    assert cache.read_frames(old, "results", ("f",)) is not None
    removed = cache.prune(limit=int(one * 0.9))
    assert removed > 0 and _size(cache.cache_dir()) <= 0.8 * one * 0.9
    assert cache.read_frames(middle, "results", ("f",)) is None
    kept = cache.read_frames(old, "results", ("f",))
    assert kept is not None and kept[0]["f"]["x"].sum() == sum(range(100_000))
    assert cache.read_frames(recent, "results", ("f",)) is not None


def test_an_entry_being_written_is_left_alone(tmp_path: Path) -> None:
    half = cache.cache_dir() / "results" / ("a" * 32)
    half.mkdir(parents=True)
    assert cache.prune(limit=0) == 0 and half.exists(), "made a moment ago, no file in it yet"
    (half / "f.arrow").write_bytes(b"x" * 10_000)  # no meta.json yet: a writer is at work
    assert cache.prune(limit=0) == 0 and half.exists()
    long_ago = time.time() - 7200  # ... unless abandoned over an hour ago (a killed writer)
    os.utime(half / "f.arrow", (long_ago, long_ago))
    os.utime(half, (long_ago, long_ago))
    assert cache.prune(limit=0) == 10_000 and not half.exists()


def test_a_buckets_mirror_is_not_the_caches_to_prune() -> None:
    mirrored = cache.cache_dir() / "remote" / "127.0.0.1" / "team" / "run-a" / "results.jsonl"
    mirrored.parent.mkdir(parents=True)
    mirrored.write_text("{}")
    long_ago = time.time() - 7200
    os.utime(mirrored, (long_ago, long_ago))
    assert cache.prune(limit=0) == 0 and mirrored.exists()


def test_a_tiny_bound_only_costs_parsing_again(runs_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGTRIAGE_CACHE_MAX_GB", "0.000001")  # 1 kB: every entry goes
    monkeypatch.setattr(cache, "PRUNE_EVERY", 0.0)
    first = load_runs(runs_copy)
    cache.flush_writes()
    cache.prune()
    assert _size(cache.cache_dir()) <= 1000
    again = load_runs(runs_copy)
    assert set(again.runs) == set(first.runs) and not again.errors
    for rid, run in again.runs.items():
        assert score_run(run).equals(score_run(first.runs[rid]))


def test_a_bound_that_is_not_a_number_is_said_and_the_default_used(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("RAGTRIAGE_CACHE_MAX_GB", "lots")
    assert cache.max_bytes() == int(cache.DEFAULT_MAX_GB * 1e9)
    assert "RAGTRIAGE_CACHE_MAX_GB='lots' is not a number" in caplog.text


def test_only_entries_it_wrote_are_pruned_from_a_shared_cache_folder(tmp_path: Path) -> None:
    other = cache.cache_dir() / "pip" / "big.bin"  # RAGTRIAGE_CACHE_DIR pointed at ~/.cache
    other.parent.mkdir(parents=True)
    other.write_bytes(b"x" * 10_000)
    long_ago = time.time() - 7200
    os.utime(other, (long_ago, long_ago))
    _entry(tmp_path, "ours", 1000, long_ago)
    assert cache.prune(limit=0) > 0
    assert other.exists() and not list((cache.cache_dir() / "results").iterdir())


def test_a_remembered_file_hash_is_marked_used(tmp_path: Path) -> None:
    source = tmp_path / "results.jsonl"
    source.write_text("{}")
    sha = cache.content_sha256(source)
    (where,) = (cache.cache_dir() / "sha256").iterdir()
    long_ago = time.time() - 7200
    os.utime(where, (long_ago, long_ago))
    assert cache.remembered_sha256(source) == sha
    assert where.stat().st_mtime > long_ago + 3600, "a hash in use is not the first to go"


@pytest.mark.parametrize("raw", ["inf", "nan"])
def test_a_bound_that_is_not_finite_is_said_too(
    raw: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("RAGTRIAGE_CACHE_MAX_GB", raw)
    assert cache.max_bytes() == int(cache.DEFAULT_MAX_GB * 1e9)
    assert "is not a number of GB" in caplog.text
