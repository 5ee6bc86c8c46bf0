"""Candidate test cases waiting for a person: synthetic questions a model wrote, and production
questions a person promoted. They wait in the store, never in the test set; each decision (accept
— possibly edited —, discard, written into a version) is appended, the history kept, the latest
one in force.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from evalcore.store.audit import AuditStore

if TYPE_CHECKING:
    from evalcore.store.db import DB

DECISIONS = ("accepted", "discarded", "written")


@dataclass(frozen=True)
class Candidate:
    id: int
    testset: str  # sha256 of the test-set version it was made for
    origin: str  # "synthetic" or "production"
    ref: str  # the source chunk id(s), or the conversation id
    case: dict[str, Any]  # the proposed test case, as made
    overlap: float | None
    detail: dict[str, Any]  # what the reviewer sees besides the case: source text, redactions, model
    cache_key: str | None
    created: str
    status: str = "pending"  # the latest decision, or pending
    decided_case: dict[str, Any] | None = None  # the case as accepted (edited or not)
    decided_by: str | None = None
    note: str | None = None  # for "written": the version file

    @property
    def final(self) -> dict[str, Any]:
        return self.decided_case or self.case


def _now() -> str:
    return datetime.now(UTC).isoformat()


class CandidateStore(AuditStore):
    _db: DB

    def add_candidate(
        self,
        testset: str,
        origin: str,
        ref: str,
        case: dict[str, Any],
        *,
        overlap: float | None = None,
        detail: dict[str, Any] | None = None,
        cache_key: str | None = None,
        accepted_by: str | None = None,
    ) -> int:
        """A candidate waiting for review; with ``accepted_by``, a person made it (a promoted
        production question) and it is accepted at once, in the same transaction."""
        self._guard("promote" if origin == "production" else "synthesize")
        with self._db.transaction() as tx:
            cid = int(
                tx.rows(
                    "INSERT INTO candidates (testset, origin, ref, case_json, overlap, detail, cache_key, created) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                    (
                        testset,
                        origin,
                        ref,
                        json.dumps(case),
                        overlap,
                        json.dumps(detail or {}),
                        cache_key,
                        _now(),
                    ),
                )[0][0]
            )
            self._audit(tx, "promote" if origin == "production" else "synthesize", f"candidate {cid}",
                        {"testset": testset[:12], "ref": ref})  # fmt: skip
            if accepted_by is not None:
                by = accepted_by if self.actor.local else self.actor.email
                tx.run(
                    "INSERT INTO candidate_decisions (candidate_id, decision, case_json, decided_by, note, created) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (cid, "accepted", json.dumps(case), by, None, _now()),
                )
        return cid

    def candidate_by_key(self, cache_key: str) -> Candidate | None:
        """An earlier generation with the same inputs (never paid for twice)."""
        rows = self._db.rows(
            "SELECT id FROM candidates WHERE cache_key = ? ORDER BY id LIMIT 1", (cache_key,)
        )
        return self.candidate(int(rows[0][0])) if rows else None

    def decide(
        self,
        candidate_id: int,
        decision: str,
        *,
        case: dict[str, Any] | None = None,
        by: str | None = None,
        note: str | None = None,
    ) -> None:
        if decision not in DECISIONS:
            msg = f"decision must be one of {', '.join(DECISIONS)}, not {decision!r}"
            raise ValueError(msg)
        self._guard("write_testset" if decision == "written" else "review")
        by = by if self.actor.local else self.actor.email  # signed in: the decider is who is signed in
        with self._db.transaction() as tx:
            tx.run(
                "INSERT INTO candidate_decisions (candidate_id, decision, case_json, decided_by, note, created) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (candidate_id, decision, json.dumps(case) if case is not None else None, by, note, _now()),
            )
            self._audit(tx, decision, f"candidate {candidate_id}", {"note": note})

    def candidate(self, candidate_id: int) -> Candidate | None:
        got = self.candidates(ids=[candidate_id])
        return got[0] if got else None

    def candidates(
        self,
        *,
        testset: str | None = None,
        origin: str | None = None,
        status: str | None = None,
        ids: list[int] | None = None,
    ) -> list[Candidate]:
        """Candidates with their latest decision, oldest first."""
        where: list[str] = []
        args: list[object] = []
        if testset is not None:
            where.append("c.testset = ?")
            args.append(testset)
        if origin is not None:
            where.append("c.origin = ?")
            args.append(origin)
        if ids is not None:
            where.append(f"c.id IN ({', '.join('?' for _ in ids)})")
            args.extend(ids)
        rows = self._db.rows(
            "SELECT c.id, c.testset, c.origin, c.ref, c.case_json, c.overlap, c.detail, c.cache_key, c.created, "
            "d.decision, d.case_json, d.decided_by, d.note FROM candidates c LEFT JOIN candidate_decisions d "
            "ON d.id = (SELECT MAX(id) FROM candidate_decisions WHERE candidate_id = c.id)"
            + (" WHERE " + " AND ".join(where) if where else "")
            + " ORDER BY c.id",
            args,
        )
        out = [
            Candidate(
                id=int(r[0]),
                testset=r[1],
                origin=r[2],
                ref=r[3],
                case=json.loads(r[4]),
                overlap=r[5],
                detail=json.loads(r[6] or "{}"),
                cache_key=r[7],
                created=r[8],
                status=r[9] or "pending",
                decided_case=json.loads(r[10]) if r[10] else None,
                decided_by=r[11],
                note=r[12],
            )
            for r in rows
        ]
        return [c for c in out if status is None or c.status == status]
