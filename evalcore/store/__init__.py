"""The tool's own database: judge revisions (and, later, human labels). Never inside a runs folder.

SQLite in WAL mode, at ``--store PATH`` / ``$RAGTRIAGE_STORE`` or ``$XDG_DATA_HOME/ragtriage/store.sqlite``
(default ``~/.local/share/ragtriage/store.sqlite``). Append-only: a rerun adds a revision; every
verdict is committed as it arrives, so an interrupted rerun loses at most what was in flight, and the
next one finds the rest in the cache (the content address of each judgment).

A revision belongs to a run by its id *and* its results file's sha256: a moved folder keeps its
revisions, an edited results file is not confused with the old one.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1

_SCHEMA = [
    """CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS revisions (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id TEXT NOT NULL,
        results_sha256 TEXT NOT NULL,
        model TEXT NOT NULL,
        prompt_hash TEXT NOT NULL,
        schema_hash TEXT NOT NULL,
        created TEXT NOT NULL,
        note TEXT
    )""",
    """CREATE TABLE IF NOT EXISTS verdicts (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        revision_id INTEGER NOT NULL REFERENCES revisions(id),
        qid TEXT NOT NULL,
        cache_key TEXT NOT NULL,
        ok INTEGER NOT NULL,
        reason TEXT,
        output TEXT,
        message_id TEXT,
        request_id TEXT,
        stop_reason TEXT,
        input_tokens INTEGER,
        output_tokens INTEGER,
        cached INTEGER NOT NULL DEFAULT 0,
        created TEXT NOT NULL,
        UNIQUE (revision_id, qid)
    )""",
    """CREATE INDEX IF NOT EXISTS verdicts_by_key ON verdicts (cache_key, ok)""",
    """CREATE INDEX IF NOT EXISTS revisions_by_run ON revisions (run_id, results_sha256)""",
]


def default_path() -> Path:
    env = os.environ.get("RAGTRIAGE_STORE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_DATA_HOME")
    return (Path(base) if base else Path.home() / ".local" / "share") / "ragtriage" / "store.sqlite"


@dataclass(frozen=True)
class Revision:
    id: int
    run_id: str
    results_sha256: str
    model: str
    prompt_hash: str
    schema_hash: str
    created: str
    verdicts: int = 0
    failed: int = 0

    @property
    def judge(self) -> tuple[str, str, str]:
        """What makes two revisions' verdicts comparable: model, prompt hash, schema hash."""
        return (self.model, self.prompt_hash, self.schema_hash)


@dataclass(frozen=True)
class Verdict:
    """One question's judgment: the parsed output, or why there is none (never a score by default)."""

    qid: str
    cache_key: str
    ok: bool
    reason: str | None = None  # why it failed
    output: dict[str, Any] | None = None  # the judge's structured output (JudgeOutput as a dict)
    message_id: str | None = None
    request_id: str | None = None
    stop_reason: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached: bool = False  # taken from an earlier identical judgment, not paid for again


class Store:
    """The SQLite store. Safe to share between threads (one connection, a lock); several processes
    may write at once (WAL, a busy timeout)."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, timeout=30, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._migrate()

    def _migrate(self) -> None:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            for stmt in _SCHEMA:
                self._db.execute(stmt)
            row = self._db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            version = int(row[0]) if row else 0
            if version > SCHEMA_VERSION:
                self._db.execute("ROLLBACK")
                msg = f"{self.path} was written by a newer ragtriage (store schema {version}); upgrade ragtriage"
                raise RuntimeError(msg)
            self._db.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)",
                (str(SCHEMA_VERSION),),
            )
            self._db.execute("COMMIT")

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- revisions

    def new_revision(
        self, run_id: str, results_sha256: str, judge: tuple[str, str, str], note: str | None = None
    ) -> int:
        model, prompt, schema = judge
        with self._lock:
            cur = self._db.execute(
                "INSERT INTO revisions (run_id, results_sha256, model, prompt_hash, schema_hash, created, note) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (run_id, results_sha256, model, prompt, schema, _now(), note),
            )
            return int(cur.lastrowid or 0)

    def revisions(self, run_id: str, results_sha256: str | None = None) -> list[Revision]:
        """A run's revisions, oldest first, with how many verdicts each holds and how many failed."""
        sql = (
            "SELECT r.id, r.run_id, r.results_sha256, r.model, r.prompt_hash, r.schema_hash, r.created, "
            "COUNT(v.id), COALESCE(SUM(1 - v.ok), 0) FROM revisions r LEFT JOIN verdicts v ON v.revision_id = r.id "
            "WHERE r.run_id = ?"
            + (" AND r.results_sha256 = ?" if results_sha256 else "")
            + " GROUP BY r.id ORDER BY r.id"
        )
        args = (run_id, results_sha256) if results_sha256 else (run_id,)
        with self._lock:
            rows = self._db.execute(sql, args).fetchall()
        return [Revision(*row) for row in rows]

    def newest_revision_id(self) -> int:
        """The id of the newest revision in the store (0 if none): a cache key that changes whenever
        a rerun adds verdicts."""
        with self._lock:
            row = self._db.execute("SELECT MAX(id) FROM revisions").fetchone()
        return int(row[0] or 0)

    def revision(self, revision_id: int) -> Revision | None:
        with self._lock:
            row = self._db.execute(
                "SELECT r.id, r.run_id, r.results_sha256, r.model, r.prompt_hash, r.schema_hash, r.created, "
                "COUNT(v.id), COALESCE(SUM(1 - v.ok), 0) FROM revisions r LEFT JOIN verdicts v ON "
                "v.revision_id = r.id WHERE r.id = ? GROUP BY r.id",
                (revision_id,),
            ).fetchone()
        return Revision(*row) if row else None

    # ---- verdicts

    def add(self, revision_id: int, v: Verdict) -> None:
        """Commit one verdict now (a crash later loses nothing already judged)."""
        with self._lock:
            self._db.execute(
                "INSERT INTO verdicts (revision_id, qid, cache_key, ok, reason, output, message_id, request_id, "
                "stop_reason, input_tokens, output_tokens, cached, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    revision_id,
                    v.qid,
                    v.cache_key,
                    int(v.ok),
                    v.reason,
                    json.dumps(v.output, ensure_ascii=False) if v.output is not None else None,
                    v.message_id,
                    v.request_id,
                    v.stop_reason,
                    v.input_tokens,
                    v.output_tokens,
                    int(v.cached),
                    _now(),
                ),
            )

    def cached(self, cache_key: str) -> Verdict | None:
        """The newest successful judgment with this content address, in any revision."""
        with self._lock:
            row = self._db.execute(
                "SELECT qid, cache_key, ok, reason, output, message_id, request_id, stop_reason, input_tokens, "
                "output_tokens FROM verdicts WHERE cache_key = ? AND ok = 1 ORDER BY id DESC LIMIT 1",
                (cache_key,),
            ).fetchone()
        return _verdict(row) if row else None

    def verdicts(self, revision_id: int) -> list[Verdict]:
        with self._lock:
            rows = self._db.execute(
                "SELECT qid, cache_key, ok, reason, output, message_id, request_id, stop_reason, input_tokens, "
                "output_tokens, cached FROM verdicts WHERE revision_id = ? ORDER BY qid",
                (revision_id,),
            ).fetchall()
        return [_verdict(r) for r in rows]


def _verdict(row: tuple[Any, ...]) -> Verdict:
    qid, key, ok, reason, output, mid, rid, stop, tin, tout, *rest = row
    return Verdict(
        qid=qid,
        cache_key=key,
        ok=bool(ok),
        reason=reason,
        output=json.loads(output) if output else None,
        message_id=mid,
        request_id=rid,
        stop_reason=stop,
        input_tokens=tin,
        output_tokens=tout,
        cached=bool(rest[0]) if rest else False,
    )


def _now() -> str:
    return datetime.now(UTC).isoformat()
