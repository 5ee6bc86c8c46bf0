from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pg
import pytest

from helpers import SAMPLE

# Oracles and tools some tests need. Where they are missing those tests skip, saying why; under CI
# (CI=true) a missing one is a failure instead, so a green CI never hides tests that did not run.
REQUIRED_IN_CI = {
    "pytrec_eval": "pip install -e '.[test]'",
    "playwright": "pip install -e '.[test]'",
    "hypothesis": "pip install -e '.[test]'",
    "psycopg": "pip install -e '.[test]'",
    "authlib": "pip install -e '.[test]'",
    "oidc_provider_mock": "pip install -e '.[test]'",
    "moto": "pip install -e '.[test]'",
    "obstore": "pip install -e '.[test]'",
}


def pytest_sessionstart(session: pytest.Session) -> None:
    """Before any test: an empty cache folder of the session's own (no test reads or writes the real
    ~/.cache/ragtriage, module-scoped fixtures included), the dependencies CI must have, and the
    retrieval kernel compiled once (numba needs several seconds on a fresh machine, which would
    otherwise land inside whichever test or dashboard server first scores a run)."""
    os.environ["RAGTRIAGE_CACHE_DIR"] = tempfile.mkdtemp(prefix="ragtriage-test-cache-")
    # Nor the user's store of judge revisions.
    os.environ["RAGTRIAGE_STORE"] = str(
        Path(tempfile.mkdtemp(prefix="ragtriage-test-store-")) / "store.sqlite"
    )
    if os.environ.get("CI") == "true":
        import importlib.util

        missing = [f"{m} ({fix})" for m, fix in REQUIRED_IN_CI.items() if importlib.util.find_spec(m) is None]
        if not Path("/usr/bin/chromium").exists():
            missing.append("chromium (apt-get install chromium; .ci/run does)")
        if pg.bindir() is None:
            missing.append("postgresql (apt-get install postgresql; .ci/run does)")
        if missing:
            msg = "CI=true and these are missing, so their tests would be skipped: " + ", ".join(missing)
            raise pytest.UsageError(msg)
    from evalcore.runs.jsonl import _warm_scanner

    _warm_scanner()  # loaded, so the tests of the compiled reader use it (lifting lists included)
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


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """A PostgreSQL server of the session's own (see tests/pg.py)."""
    why = pg.missing()
    if why:
        pytest.skip(why)
    with pg.server() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def store_target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a test's store lives: the same store tests run on both databases."""
    if request.param == "sqlite":
        return str(tmp_path / "store.sqlite")
    return pg.fresh_database(request.getfixturevalue("pg_url"))
