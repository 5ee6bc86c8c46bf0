"""The tool's own database: judge revisions and batches (and, later, human labels). Never inside a
runs folder.

SQLite in WAL mode, at ``--store PATH`` / ``$RAGTRIAGE_STORE`` or ``$XDG_DATA_HOME/ragtriage/store.sqlite``
(default ``~/.local/share/ragtriage/store.sqlite``); or PostgreSQL, for a team whose dashboards run
on several machines, with a ``postgresql://`` URL in the same places. The schema is versioned and
migrated forward when a store is opened. Append-only: a rerun adds a revision; every
verdict is committed as it arrives, so an interrupted rerun loses at most what was in flight, and the
next one finds the rest in the cache (the content address of each judgment).

A revision belongs to a run by its id *and* its results file's sha256: a moved folder keeps its
revisions, an edited results file is not confused with the old one.
"""

from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evalcore.access import Budget, Identity, local_identity
from evalcore.errors import SetupError
from evalcore.store.audit import AuditRow, OverBudget, holder_id
from evalcore.store.candidates import Candidate, CandidateStore
from evalcore.store.db import Postgres, connect, is_url
from evalcore.store.labels import ItemRow, LabelRow, LabelStore, QuotaFull, SessionClosed, SessionRow
from evalcore.store.summaries import SummaryStore

__all__ = [
    "AuditRow",
    "Candidate",
    "ItemRow",
    "LabelRow",
    "OpenBatch",
    "OverBudget",
    "QuotaFull",
    "Revision",
    "SessionClosed",
    "SessionRow",
    "Store",
    "Verdict",
    "default_path",
    "holder_id",
]

SCHEMA_VERSION = 6

# Each version's statements, applied in order to a store that is older ("migrated forward on open").
# ``{id}`` is the database's auto-numbered primary key. Never edit a released version: add one.
MIGRATIONS: dict[int, list[str]] = {
    1: [
        """CREATE TABLE IF NOT EXISTS revisions (
            id {id},
            run_id TEXT NOT NULL,
            results_sha256 TEXT NOT NULL,
            model TEXT NOT NULL,
            prompt_hash TEXT NOT NULL,
            schema_hash TEXT NOT NULL,
            created TEXT NOT NULL,
            note TEXT
        )""",
        """CREATE TABLE IF NOT EXISTS verdicts (
            id {id},
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
    ],
    # Message Batches: a batch is recorded the moment the API accepts it, with the question each
    # request judges, so an interrupted rerun picks it up again instead of paying for it twice.
    2: [
        """CREATE TABLE batches (
            id TEXT PRIMARY KEY,
            revision_id INTEGER NOT NULL REFERENCES revisions(id),
            submitted TEXT NOT NULL,
            requests INTEGER NOT NULL,
            ended TEXT
        )""",
        """CREATE TABLE batch_requests (
            batch_id TEXT NOT NULL REFERENCES batches(id),
            custom_id TEXT NOT NULL,
            qid TEXT NOT NULL,
            PRIMARY KEY (batch_id, custom_id)
        )""",
        """CREATE INDEX batch_requests_by_key ON batch_requests (custom_id)""",
    ],
    # Calibration: labeling sessions, their items, and people's labels. A label needs a slot, and an
    # item has exactly labels_per_item slots, each held by one labeler at most once — so the quota
    # and "one labeler, one label per item" hold in the database, whatever the browsers do. Labels
    # are appended: a labeler's later label of an item is a new version, the old one kept.
    3: [
        """CREATE TABLE calibration_sessions (
            id {id},
            name TEXT NOT NULL UNIQUE,
            run_id TEXT NOT NULL,
            results_sha256 TEXT NOT NULL,
            judge TEXT NOT NULL,
            judge_key TEXT NOT NULL,
            target TEXT NOT NULL,
            sampling TEXT NOT NULL,
            seed INTEGER NOT NULL,
            labels_per_item INTEGER NOT NULL CHECK (labels_per_item >= 1),
            rubric TEXT NOT NULL,
            rubric_version TEXT NOT NULL,
            created TEXT NOT NULL
        )""",
        """CREATE TABLE calibration_items (
            id {id},
            session_id INTEGER NOT NULL REFERENCES calibration_sessions(id),
            qid TEXT NOT NULL,
            claim_idx INTEGER NOT NULL,
            stratum TEXT NOT NULL,
            weight REAL NOT NULL,
            payload TEXT NOT NULL,
            judge_label TEXT,
            UNIQUE (session_id, qid, claim_idx)
        )""",
        """CREATE TABLE label_slots (
            item_id INTEGER NOT NULL REFERENCES calibration_items(id),
            slot INTEGER NOT NULL,
            labeler TEXT,
            claimed TEXT,
            PRIMARY KEY (item_id, slot),
            UNIQUE (item_id, labeler)
        )""",
        """CREATE TABLE labels (
            id {id},
            item_id INTEGER NOT NULL,
            labeler TEXT NOT NULL,
            version INTEGER NOT NULL,
            label TEXT NOT NULL,
            rationale TEXT,
            created TEXT NOT NULL,
            source TEXT NOT NULL,
            UNIQUE (item_id, labeler, version),
            FOREIGN KEY (item_id, labeler) REFERENCES label_slots (item_id, labeler)
        )""",
        """CREATE TABLE probe_results (
            id {id},
            run_id TEXT NOT NULL,
            results_sha256 TEXT NOT NULL,
            judge_key TEXT NOT NULL,
            probe TEXT NOT NULL,
            n INTEGER NOT NULL,
            flips INTEGER NOT NULL,
            rate REAL NOT NULL,
            low REAL NOT NULL,
            high REAL NOT NULL,
            detail TEXT NOT NULL,
            created TEXT NOT NULL
        )""",
    ],
    # Test-set candidates: synthetic questions and promoted production questions wait here for a
    # person; decisions are appended (the latest in force), so nothing a reviewer did is lost.
    4: [
        """CREATE TABLE candidates (
            id {id},
            testset TEXT NOT NULL,
            origin TEXT NOT NULL,
            ref TEXT NOT NULL,
            case_json TEXT NOT NULL,
            overlap REAL,
            detail TEXT NOT NULL,
            cache_key TEXT,
            created TEXT NOT NULL
        )""",
        """CREATE INDEX candidates_by_testset ON candidates (testset, origin)""",
        """CREATE INDEX candidates_by_key ON candidates (cache_key)""",
        """CREATE TABLE candidate_decisions (
            id {id},
            candidate_id INTEGER NOT NULL REFERENCES candidates(id),
            decision TEXT NOT NULL,
            case_json TEXT,
            decided_by TEXT,
            note TEXT,
            created TEXT NOT NULL
        )""",
        """CREATE INDEX decisions_by_candidate ON candidate_decisions (candidate_id)""",
    ],
    # A team: who made each revision and session, sessions closed by an admin, the append-only
    # audit log of every write, the daily spend against budgets, and leases on judgments in flight
    # (evalcore.store.audit).
    5: [
        "ALTER TABLE revisions ADD COLUMN created_by TEXT",
        "ALTER TABLE calibration_sessions ADD COLUMN created_by TEXT",
        "ALTER TABLE calibration_sessions ADD COLUMN closed TEXT",
        """CREATE TABLE audit (
            id {id},
            created TEXT NOT NULL,
            actor TEXT NOT NULL,
            role TEXT NOT NULL,
            action TEXT NOT NULL,
            target TEXT NOT NULL,
            detail TEXT NOT NULL
        )""",
        """CREATE INDEX audit_by_actor ON audit (actor, created)""",
        """CREATE TABLE spend (
            id {id},
            day TEXT NOT NULL,
            actor TEXT NOT NULL,
            dollars REAL NOT NULL,
            action TEXT NOT NULL,
            target TEXT NOT NULL,
            created TEXT NOT NULL
        )""",
        """CREATE INDEX spend_by_day ON spend (day, actor)""",
        """CREATE TABLE leases (
            key TEXT PRIMARY KEY,
            holder TEXT NOT NULL,
            expires DOUBLE PRECISION NOT NULL
        )""",
    ],
    6: [
        # Per-hour summaries of production log partitions (day=YYYY-MM-DD/...), so a day already
        # read is not read again (evalcore.signals.volume); replaced when a partition's files change.
        """CREATE TABLE log_summaries (
            source TEXT NOT NULL,
            part TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            hour TEXT NOT NULL,
            questions BIGINT NOT NULL,
            no_answer BIGINT NOT NULL,
            up BIGINT NOT NULL,
            down BIGINT NOT NULL,
            keyword_zero BIGINT NOT NULL,
            PRIMARY KEY (source, part, hour)
        )""",
    ],
}


def default_path() -> str | Path:
    """``$RAGTRIAGE_STORE`` (a file or a ``postgresql://`` URL), else the user data directory's file."""
    env = os.environ.get("RAGTRIAGE_STORE")
    if env:
        return env if is_url(env) else Path(env)
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
    created_by: str | None = None  # who asked for it (None: before the store recorded it)

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


class Store(LabelStore, CandidateStore, SummaryStore):
    """The store, on SQLite (a path) or PostgreSQL (a ``postgresql://`` URL). Safe to share between
    threads; several processes — several dashboards — may write at once.

    ``actor``: who is acting (default: the local identity, every role); each write path checks that
    they may, and records them in the audit log. ``budget``: the daily limits on spending."""

    def __init__(
        self,
        target: str | Path | None = None,
        *,
        actor: Identity | None = None,
        budget: Budget | None = None,
    ) -> None:
        target = default_path() if target is None else target
        self.actor = actor or local_identity()
        self.budget = budget or Budget()
        self._db = connect(target if is_url(target) else Path(target))
        self.path = self._db.where  # where it is, for messages (a URL without its password)
        self._migrate()

    def acting_as(self, actor: Identity, budget: Budget | None = None) -> Store:
        """This store (the same connection) acting as ``actor``: a dashboard opens the store once
        and hands each signed-in person a view of it as themselves."""
        view = copy.copy(self)
        view.actor = actor
        view.budget = self.budget if budget is None else budget
        return view

    def _migrate(self) -> None:
        db = self._db
        with db.transaction() as tx:
            if isinstance(db, Postgres):  # one migrator at a time; SQLite's BEGIN IMMEDIATE already is
                tx.rows("SELECT pg_advisory_xact_lock(7270001)")
            tx.run("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            row = tx.rows("SELECT value FROM meta WHERE key = 'schema_version'")
            version = int(row[0][0]) if row else 0
            if version > SCHEMA_VERSION:
                msg = (
                    f"{self.path} was written by a newer ragtriage (store schema {version}, this one "
                    f"knows {SCHEMA_VERSION}); upgrade ragtriage"
                )
                raise SetupError(msg)
            for v in range(version + 1, SCHEMA_VERSION + 1):
                for stmt in MIGRATIONS[v]:
                    tx.run(stmt.replace("{id}", db.id_column))
            tx.run(
                "INSERT INTO meta (key, value) VALUES ('schema_version', ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (str(SCHEMA_VERSION),),
            )

    @property
    def schema_version(self) -> int:
        return int(self._db.rows("SELECT value FROM meta WHERE key = 'schema_version'")[0][0])

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
        """A new revision of ``run_id``'s verdicts by ``judge`` (model, prompt hash, schema hash),
        made by the store's actor (who must be allowed to re-judge)."""
        self._guard("rejudge")
        model, prompt, schema = judge
        with self._db.transaction() as tx:
            rid = int(
                tx.rows(
                    "INSERT INTO revisions (run_id, results_sha256, model, prompt_hash, schema_hash, created, note, "
                    "created_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                    (run_id, results_sha256, model, prompt, schema, _now(), note, self.actor.email),
                )[0][0]
            )
            self._audit(tx, "revision", f"run {run_id}", {"revision": rid, "model": model, "note": note})
        return rid

    def revisions(self, run_id: str, results_sha256: str | None = None) -> list[Revision]:
        """A run's revisions, oldest first, with how many verdicts each holds and how many failed."""
        sql = (
            "SELECT r.id, r.run_id, r.results_sha256, r.model, r.prompt_hash, r.schema_hash, r.created, "
            "COUNT(v.id), COALESCE(SUM(1 - v.ok), 0), r.created_by FROM revisions r LEFT JOIN verdicts v "
            "ON v.revision_id = r.id WHERE r.run_id = ?"
            + (" AND r.results_sha256 = ?" if results_sha256 else "")
            + " GROUP BY r.id ORDER BY r.id"
        )
        args = (run_id, results_sha256) if results_sha256 else (run_id,)
        return [_revision(row) for row in self._db.rows(sql, args)]

    def newest_revision_id(self) -> int:
        """The id of the newest revision in the store (0 if none): a cache key that changes whenever
        a rerun adds verdicts."""
        return int(self._db.rows("SELECT MAX(id) FROM revisions")[0][0] or 0)

    def revision(self, revision_id: int) -> Revision | None:
        rows = self._db.rows(
            "SELECT r.id, r.run_id, r.results_sha256, r.model, r.prompt_hash, r.schema_hash, r.created, "
            "COUNT(v.id), COALESCE(SUM(1 - v.ok), 0), r.created_by FROM revisions r LEFT JOIN verdicts v ON "
            "v.revision_id = r.id WHERE r.id = ? GROUP BY r.id",
            (revision_id,),
        )
        return _revision(rows[0]) if rows else None

    # ---- verdicts

    def add(self, revision_id: int, v: Verdict) -> None:
        """Commit one verdict now (a crash later loses nothing already judged)."""
        self._db.run(
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
        rows = self._db.rows(
            "SELECT qid, cache_key, ok, reason, output, message_id, request_id, stop_reason, input_tokens, "
            "output_tokens FROM verdicts WHERE cache_key = ? AND ok = 1 ORDER BY id DESC LIMIT 1",
            (cache_key,),
        )
        return _verdict(rows[0]) if rows else None

    def verdicts(self, revision_id: int) -> list[Verdict]:
        rows = self._db.rows(
            "SELECT qid, cache_key, ok, reason, output, message_id, request_id, stop_reason, input_tokens, "
            "output_tokens, cached FROM verdicts WHERE revision_id = ? ORDER BY qid",
            (revision_id,),
        )
        return [_verdict(r) for r in rows]

    # ---- Message Batches

    def add_batch(self, batch_id: str, revision_id: int, requests: dict[str, str]) -> None:
        """Record a batch the API accepted, with the question of each request (custom id -> qid), in
        one transaction: done before anything else, so a rerun interrupted while the batch runs
        finds it again instead of submitting it twice."""
        self._guard("rejudge")
        with self._db.transaction() as tx:
            tx.run(
                "INSERT INTO batches (id, revision_id, submitted, requests) VALUES (?, ?, ?, ?)",
                (batch_id, revision_id, _now(), len(requests)),
            )
            self._audit(
                tx, "batch", f"revision {revision_id}", {"batch": batch_id, "requests": len(requests)}
            )
            for cid, qid in requests.items():
                tx.run(
                    "INSERT INTO batch_requests (batch_id, custom_id, qid) VALUES (?, ?, ?)",
                    (batch_id, cid, qid),
                )

    def open_batches(self, custom_ids: list[str] | None = None) -> list[OpenBatch]:
        """Batches submitted and not yet collected (those holding any of ``custom_ids``), oldest first."""
        rows = self._db.rows(
            "SELECT b.id, b.revision_id, r.custom_id, r.qid FROM batches b JOIN batch_requests r "
            "ON r.batch_id = b.id WHERE b.ended IS NULL ORDER BY b.submitted, b.id"
        )
        out: dict[str, OpenBatch] = {}
        for bid, rev, cid, qid in rows:
            out.setdefault(bid, OpenBatch(bid, int(rev), {})).requests[cid] = qid
        wanted = None if custom_ids is None else set(custom_ids)
        return [b for b in out.values() if wanted is None or wanted & set(b.requests)]

    def end_batch(self, batch_id: str) -> None:
        """The batch's results are all in the store."""
        self._db.run("UPDATE batches SET ended = ? WHERE id = ?", (_now(), batch_id))


@dataclass(frozen=True)
class OpenBatch:
    """A Message Batch submitted and not yet collected: its id, the revision its verdicts go to, and
    the question behind each request (custom id = the judgment's content address)."""

    id: str
    revision_id: int
    requests: dict[str, str]  # custom id -> qid


def _revision(row: tuple[Any, ...]) -> Revision:
    rid, run_id, sha, model, prompt, schema, created, n, failed, by = row
    return Revision(int(rid), run_id, sha, model, prompt, schema, created, int(n), int(failed), by)


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
