"""Who did what, what they may spend, and who is judging what right now — the parts of the store a
team's deployment leans on.

- **The actor.** A store is opened *as* someone (:class:`~evalcore.access.Identity`; the local
  identity, with every role, on the single-user path). Every write path asks
  :func:`evalcore.access.require` first, so a page that forgot to hide a button, or a forged request,
  is still refused here.
- **The audit log** (``audit``): one row per write — labels, revisions, batches, sessions, candidates
  and their decisions, probes, spending — with the actor, their role, the action, its target and
  details, in the same transaction as the write. Append-only: nothing updates or deletes it.
- **Budgets** (``spend``): a spend is reserved at the estimate before any request, in one
  transaction with the check against the person's and the deployment's daily limits (a lock on
  PostgreSQL; SQLite's write lock), so two servers cannot both pass the last dollar. What the
  requests then cost is settled by an appended correction row.
- **Leases** (``leases``): a judgment being asked for by one process holds its content address; a
  second process waits for that verdict instead of paying for it again. A lease expires, so a
  killed process's questions are taken over.
"""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from evalcore.access import Budget, Identity, local_identity, require

if TYPE_CHECKING:
    from evalcore.store.db import DB

_BUDGET_LOCK = 7270002  # PostgreSQL advisory lock: one budget check-and-spend at a time


class OverBudget(Exception):
    """A spend would pass a daily budget; the message says what is left and who spent it."""


@dataclass(frozen=True)
class AuditRow:
    id: int
    created: str
    actor: str
    role: str
    action: str
    target: str
    detail: dict[str, Any]


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _today() -> str:
    return datetime.now(UTC).date().isoformat()


def holder_id() -> str:
    """This process, as a lease holder: host, pid and a random part (pids are reused)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class AuditStore:
    _db: DB
    actor: Identity = local_identity()
    budget: Budget = Budget()

    # ---- the actor

    def require(self, action: str) -> None:
        """Raise :class:`~evalcore.access.Forbidden` unless the store's actor may ``action`` (for a
        write that begins outside the store, such as a test-set file written before it is recorded)."""
        require(self.actor, action)

    _guard = require

    def _audit(self, tx: DB, action: str, target: str, detail: dict[str, Any] | None = None) -> None:
        tx.run(
            "INSERT INTO audit (created, actor, role, action, target, detail) VALUES (?, ?, ?, ?, ?, ?)",
            (
                _now(),
                self.actor.email,
                self.actor.role,
                action,
                target,
                json.dumps(detail or {}, ensure_ascii=False, sort_keys=True),
            ),
        )

    def audit_log(
        self, *, actor: str | None = None, action: str | None = None, since: str | None = None
    ) -> list[AuditRow]:
        """The audit log, oldest first (an admin's read)."""
        self._guard("audit")
        where, args = [], []
        for col, value in (("actor", actor), ("action", action)):
            if value:
                where.append(f"{col} = ?")
                args.append(value)
        if since:
            where.append("created >= ?")
            args.append(since)
        rows = self._db.rows(
            "SELECT id, created, actor, role, action, target, detail FROM audit"
            + (" WHERE " + " AND ".join(where) if where else "")
            + " ORDER BY id",
            args,
        )
        return [AuditRow(int(i), c, a, r, ac, t, json.loads(d)) for i, c, a, r, ac, t, d in rows]

    # ---- budgets

    def spent_today(self) -> dict[str, float]:
        """Dollars spent today (UTC) by each person (estimates reserved, corrected by what the
        requests cost once they ended)."""
        rows = self._db.rows(
            "SELECT actor, SUM(dollars) FROM spend WHERE day = ? GROUP BY actor ORDER BY actor", (_today(),)
        )
        return {a: float(d or 0.0) for a, d in rows}

    def reserve(self, dollars: float, action: str, target: str, detail: dict[str, Any] | None = None) -> int:
        """Reserve ``dollars`` of today's budget for ``action`` (checked against the actor's role
        too) before any request: :class:`OverBudget` when it would pass the person's or the
        deployment's daily limit. The check and the reservation commit together."""
        self._guard(action)
        limits = self.budget
        with self._db.transaction() as tx:
            if self._db.id_column.startswith("BIGINT"):  # PostgreSQL: serialise budget checks
                tx.rows("SELECT pg_advisory_xact_lock(?)", (_BUDGET_LOCK,))
            rows = tx.rows("SELECT actor, SUM(dollars) FROM spend WHERE day = ? GROUP BY actor", (_today(),))
            by = {a: float(d or 0.0) for a, d in rows}
            mine, everyone = by.get(self.actor.email, 0.0), sum(by.values())
            refusal = _over(limits, mine, everyone, dollars, self.actor.email, by)
            if refusal:
                raise OverBudget(refusal)
            rid = int(
                tx.rows(
                    "INSERT INTO spend (day, actor, dollars, action, target, created) VALUES (?, ?, ?, ?, ?, ?) "
                    "RETURNING id",
                    (_today(), self.actor.email, float(dollars), action, target, _now()),
                )[0][0]
            )
            self._audit(
                tx, "reserve", target, {"dollars": round(dollars, 6), "for": action, **(detail or {})}
            )
        return rid

    def settle(self, reservation: int, dollars: float) -> None:
        """What a reservation's requests actually cost (from their token usage): the difference is
        appended, so today's spend becomes the real figure."""
        with self._db.transaction() as tx:
            got = tx.rows("SELECT dollars, action, target, day FROM spend WHERE id = ?", (reservation,))
            if not got:
                return
            reserved, action, target, day = got[0]
            delta = float(dollars) - float(reserved)
            if abs(delta) < 1e-12:
                return
            tx.run(
                "INSERT INTO spend (day, actor, dollars, action, target, created) VALUES (?, ?, ?, ?, ?, ?)",
                (day, self.actor.email, delta, f"settle:{action}", target, _now()),
            )
            self._audit(
                tx, "settle", target, {"reserved": round(float(reserved), 6), "cost": round(dollars, 6)}
            )

    # ---- leases: a judgment in flight, held by one process

    def take_lease(self, key: str, holder: str, seconds: float) -> bool:
        """Hold ``key`` for ``seconds`` (True), unless another holder's lease on it has not expired."""
        now = time.time()
        rows = self._db.rows(
            "INSERT INTO leases (key, holder, expires) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET "
            "holder = excluded.holder, expires = excluded.expires WHERE leases.expires < ? OR "
            "leases.holder = excluded.holder RETURNING holder",
            (key, holder, now + seconds, now),
        )
        return bool(rows)

    def release_lease(self, key: str, holder: str) -> None:
        self._db.run("DELETE FROM leases WHERE key = ? AND holder = ?", (key, holder))


def _over(
    limits: Budget, mine: float, everyone: float, dollars: float, who: str, by: dict[str, float]
) -> str | None:
    """Why spending ``dollars`` more today is refused (None: it is not)."""
    parts = []
    if limits.person is not None and mine + dollars > limits.person + 1e-9:
        parts.append(
            f"{who} has ${max(0.0, limits.person - mine):.2f} left of a ${limits.person:.2f} daily budget "
            f"(spent ${mine:.2f} today)"
        )
    if limits.deployment is not None and everyone + dollars > limits.deployment + 1e-9:
        spenders = ", ".join(f"{a} ${d:.2f}" for a, d in sorted(by.items(), key=lambda x: -x[1]) if d > 0)
        parts.append(
            f"the deployment has ${max(0.0, limits.deployment - everyone):.2f} left of ${limits.deployment:.2f} "
            f"today (spent by: {spenders or 'nobody yet'})"
        )
    if not parts:
        return None
    return (
        f"refused before any request: this would cost about ${dollars:.2f}, and "
        + "; ".join(parts)
        + ". Judge fewer questions, or ask an admin to raise [budget] in the access file; budgets renew at 00:00 UTC"
    )
