from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helpers import SAMPLE


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGTRIAGE_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture
def runs_copy(tmp_path: Path) -> Path:
    """A private copy of sample_runs/ that a test may break."""
    dst = tmp_path / "runs"
    shutil.copytree(SAMPLE, dst)
    return dst
