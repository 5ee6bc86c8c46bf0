from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helpers import SAMPLE


def pytest_sessionstart(session: pytest.Session) -> None:
    """Compile the retrieval kernel once, up front: on a fresh machine numba needs several seconds,
    which would otherwise land inside whichever test (or dashboard server) first scores a run. The
    compiled code is cached on disk, so servers started by the browser tests load it."""
    from evalcore.metrics.retrieval import kernel

    kernel()


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGTRIAGE_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture
def runs_copy(tmp_path: Path) -> Path:
    """A private copy of sample_runs/ that a test may break."""
    dst = tmp_path / "runs"
    shutil.copytree(SAMPLE, dst)
    return dst
