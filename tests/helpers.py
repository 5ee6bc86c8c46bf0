"""Helpers shared by the tests (fixtures live in conftest.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"


def case(qid: str, relevant: dict[str, int] | None = None, **kw: Any) -> dict[str, Any]:
    return {"qid": qid, "question": f"question {qid}?", "relevant": relevant or {},
            "tags": {"type": "lookup", "topic": "t", "source": "real"}, **kw}


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path
