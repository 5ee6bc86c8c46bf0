from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGTRIAGE_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture
def runs_copy(tmp_path: Path) -> Path:
    """A private copy of sample_runs/ that a test may break."""
    dst = tmp_path / "runs"
    shutil.copytree(SAMPLE, dst)
    return dst


def case(qid: str, relevant: dict[str, int] | None = None, **kw: Any) -> dict[str, Any]:
    return {"qid": qid, "question": f"question {qid}?", "relevant": relevant or {},
            "tags": {"type": "lookup", "topic": "t", "source": "real"}, **kw}


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path
