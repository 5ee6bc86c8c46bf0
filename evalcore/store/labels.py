"""Calibration sessions in the store: their items, the slots that carry the labels-per-item quota,
and people's labels — append-only, each committed as it is submitted.

A label needs a slot. An item gets exactly ``labels_per_item`` slots when its session is created;
a labeler claims one the first time they label the item (``UNIQUE (item_id, labeler)``: one per
labeler), and the foreign key from ``labels`` to ``(item_id, labeler)`` of the slots means no label
exists without one. So two labelers in two browsers at once can never push an item past its quota,
and one labeler's second label of an item is a new *version* of their label, the first one kept.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from evalcore.access import Forbidden
from evalcore.store.audit import AuditStore

if TYPE_CHECKING:
    from evalcore.store.db import DB

ANSWER_ITEM = -1  # claim_idx of an item that is a whole answer (correctness), not one claim


class QuotaFull(Exception):
    """The item already has its labels from other labelers."""


class SessionClosed(Exception):
    """The session was closed by an admin: it takes no more labels."""


@dataclass(frozen=True)
class SessionRow:
    id: int
    name: str
    run_id: str
    results_sha256: str
    judge: str  # "recorded" or a judge revision id
    judge_key: str  # that judge's model|prompt|schema (judge_key()): which judge the labels measure
    target: str  # "claims" or "answers"
    sampling: str  # e.g. "uniform", "stratified:topic", "low-scores"
    seed: int
    labels_per_item: int
    rubric: str
    rubric_version: str
    created: str
    items: int = 0
    labels: int = 0  # current labels (latest version per labeler and item)
    created_by: str | None = None
    closed: str | None = None  # when an admin closed it (it takes no more labels)


@dataclass(frozen=True)
class ItemRow:
    id: int
    session_id: int
    qid: str
    claim_idx: int  # ANSWER_ITEM for an answer
    stratum: str
    weight: float  # inverse inclusion probability: estimates stay unbiased under oversampling
    payload: dict[str, Any]  # what the labeler sees: question, answer, claim, quote, chunks
    judge_label: str | None  # hidden from labelers until they have submitted theirs


@dataclass(frozen=True)
class LabelRow:
    item_id: int
    labeler: str
    version: int
    label: str
    rationale: str | None
    created: str
    source: str  # "page" or "import"


def _now() -> str:
    return datetime.now(UTC).isoformat()


class LabelStore(AuditStore):
    _db: DB

    def create_session(self, session: dict[str, Any], items: list[dict[str, Any]]) -> int:
        """A session and its items (with their slots), in one transaction. ``session`` holds the
        SessionRow fields but id/created/counts; each item ``qid, claim_idx, stratum, weight,
        payload, judge_label``."""
        self._guard("create_session")
        k = int(session["labels_per_item"])
        with self._db.transaction() as tx:
            sid = int(
                tx.rows(
                    "INSERT INTO calibration_sessions (name, run_id, results_sha256, judge, judge_key, target, "
                    "sampling, seed, labels_per_item, rubric, rubric_version, created, created_by) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "RETURNING id",
                    (
                        session["name"],
                        session["run_id"],
                        session["results_sha256"],
                        session["judge"],
                        session.get("judge_key", ""),
                        session["target"],
                        session["sampling"],
                        int(session["seed"]),
                        k,
                        session["rubric"],
                        session["rubric_version"],
                        _now(),
                        self.actor.email,
                    ),
                )[0][0]
            )
            self._audit(
                tx,
                "create_session",
                f"session {session['name']}",
                {"run": session["run_id"], "items": len(items), "labels_per_item": k},
            )
            for it in items:
                iid = int(
                    tx.rows(
                        "INSERT INTO calibration_items (session_id, qid, claim_idx, stratum, weight, payload, "
                        "judge_label) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
                        (
                            sid,
                            it["qid"],
                            int(it["claim_idx"]),
                            it["stratum"],
                            float(it["weight"]),
                            json.dumps(it["payload"], ensure_ascii=False),
                            it.get("judge_label"),
                        ),
                    )[0][0]
                )
                for slot in range(1, k + 1):
                    tx.run("INSERT INTO label_slots (item_id, slot) VALUES (?, ?)", (iid, slot))
        return sid

    def sessions(self) -> list[SessionRow]:
        rows = self._db.rows(
            "SELECT s.id, s.name, s.run_id, s.results_sha256, s.judge, s.judge_key, s.target, s.sampling, s.seed, "
            "s.labels_per_item, s.rubric, s.rubric_version, s.created, "
            "(SELECT COUNT(*) FROM calibration_items i WHERE i.session_id = s.id), "
            "(SELECT COUNT(*) FROM label_slots l JOIN calibration_items i ON i.id = l.item_id "
            " WHERE i.session_id = s.id AND l.labeler IS NOT NULL AND EXISTS "
            " (SELECT 1 FROM labels x WHERE x.item_id = l.item_id AND x.labeler = l.labeler)), "
            "s.created_by, s.closed FROM calibration_sessions s ORDER BY s.id"
        )
        out = []
        for (
            sid,
            name,
            run,
            sha,
            judge,
            judge_key,
            target,
            sampling,
            seed,
            k,
            rubric,
            rv,
            created,
            n_items,
            n_labels,
            by,
            closed,
        ) in rows:
            out.append(
                SessionRow(
                    int(sid), name, run, sha, judge, judge_key, target, sampling, int(seed), int(k), rubric, rv, created,
                    int(n_items), int(n_labels), by, closed,
                )
            )  # fmt: skip
        return out

    def close_session(self, session_id: int) -> None:
        """An admin closes a session: it takes no more labels (its labels and report stay)."""
        self._guard("close_session")
        with self._db.transaction() as tx:
            got = tx.rows("SELECT name, closed FROM calibration_sessions WHERE id = ?", (session_id,))
            if not got:
                msg = f"no calibration session {session_id}"
                raise ValueError(msg)
            if got[0][1]:
                return
            tx.run("UPDATE calibration_sessions SET closed = ? WHERE id = ?", (_now(), session_id))
            self._audit(tx, "close_session", f"session {got[0][0]}")

    def find_session(self, which: str | int) -> SessionRow | None:
        """A session by id or name."""
        for s in self.sessions():
            if str(s.id) == str(which) or s.name == str(which):
                return s
        return None

    def items(self, session_id: int) -> list[ItemRow]:
        rows = self._db.rows(
            "SELECT id, session_id, qid, claim_idx, stratum, weight, payload, judge_label "
            "FROM calibration_items WHERE session_id = ? ORDER BY id",
            (session_id,),
        )
        return [
            ItemRow(int(i), int(s), q, int(c), st, float(w), json.loads(p), j)
            for i, s, q, c, st, w, p, j in rows
        ]

    def labels(self, session_id: int, *, history: bool = False) -> list[LabelRow]:
        """The session's labels: each labeler's latest per item (every version with ``history``).

        Blind per identity: a signed-in actor who is not an admin gets another person's label of
        an item only once they have labeled that item themselves (the page cannot leak what the
        store does not hand it)."""
        blind = not self.actor.may("see_labels")
        rows = self._db.rows(
            "SELECT x.item_id, x.labeler, x.version, x.label, x.rationale, x.created, x.source FROM labels x "
            "JOIN calibration_items i ON i.id = x.item_id WHERE i.session_id = ?"
            + (
                " AND (x.labeler = ? OR EXISTS (SELECT 1 FROM labels m WHERE m.item_id = x.item_id AND m.labeler = ?))"
                if blind
                else ""
            )
            + " ORDER BY x.item_id, x.labeler, x.version",
            (session_id, self.actor.email, self.actor.email) if blind else (session_id,),
        )
        out = [LabelRow(int(a), b, int(c), d, e, f, g) for a, b, c, d, e, f, g in rows]
        if history:
            return out
        latest: dict[tuple[int, str], LabelRow] = {}
        for r in out:
            latest[(r.item_id, r.labeler)] = r
        return list(latest.values())

    def full_items(self, session_id: int) -> set[int]:
        """Items whose every slot is held."""
        rows = self._db.rows(
            "SELECT l.item_id FROM label_slots l JOIN calibration_items i ON i.id = l.item_id "
            "WHERE i.session_id = ? GROUP BY l.item_id HAVING COUNT(l.labeler) = COUNT(*)",
            (session_id,),
        )
        return {int(r[0]) for r in rows}

    def labels_stamp(self) -> int:
        """Changes whenever a label is added anywhere in the store (a cache key)."""
        return int(self._db.rows("SELECT COALESCE(MAX(id), 0) FROM labels")[0][0])

    def held_by(self, session_id: int, labeler: str) -> set[int]:
        """Items this labeler holds a slot of (has labeled)."""
        rows = self._db.rows(
            "SELECT l.item_id FROM label_slots l JOIN calibration_items i ON i.id = l.item_id "
            "WHERE i.session_id = ? AND l.labeler = ?",
            (session_id, labeler),
        )
        return {int(r[0]) for r in rows}

    def submit_label(
        self, item_id: int, labeler: str, label: str, rationale: str | None = None, source: str = "page"
    ) -> int:
        """Commit ``labeler``'s label of an item now; its version (1 for the first). Claims a slot the
        first time; :class:`QuotaFull` when the other labelers hold every slot."""
        self._guard("label")
        labeler = labeler.strip()
        if not labeler:
            msg = "a label needs the labeler's name"
            raise ValueError(msg)
        if (
            not self.actor.local
            and labeler != self.actor.email
            and not (source == "import" and self.actor.may("import_labels"))
        ):
            msg = f"{self.actor.email} may label only as themselves, not as {labeler!r}"
            raise Forbidden(msg)
        for _ in range(20):  # a slot or a version taken at the same instant by another writer: again
            try:
                with self._db.transaction() as tx:
                    closed = tx.rows(
                        "SELECT s.closed, s.name FROM calibration_sessions s JOIN calibration_items i "
                        "ON i.session_id = s.id WHERE i.id = ?",
                        (item_id,),
                    )
                    if closed and closed[0][0]:
                        raise SessionClosed(f"session {closed[0][1]} was closed; it takes no more labels")
                    held = tx.rows(
                        "SELECT slot FROM label_slots WHERE item_id = ? AND labeler = ?", (item_id, labeler)
                    )
                    if not held:
                        got = tx.rows(
                            "UPDATE label_slots SET labeler = ?, claimed = ? WHERE item_id = ? AND labeler IS NULL "
                            "AND slot = (SELECT MIN(slot) FROM label_slots WHERE item_id = ? AND labeler IS NULL) "
                            "RETURNING slot",
                            (labeler, _now(), item_id, item_id),
                        )
                        if not got:
                            free = tx.rows(
                                "SELECT COUNT(*) FROM label_slots WHERE item_id = ? AND labeler IS NULL",
                                (item_id,),
                            )[0][0]
                            if not free:
                                raise QuotaFull(f"item {item_id} already has its labels")
                            raise _Again
                    version = int(
                        tx.rows(
                            "SELECT COALESCE(MAX(version), 0) + 1 FROM labels WHERE item_id = ? AND labeler = ?",
                            (item_id, labeler),
                        )[0][0]
                    )
                    tx.run(
                        "INSERT INTO labels (item_id, labeler, version, label, rationale, created, source) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (item_id, labeler, version, label, rationale or None, _now(), source),
                    )
                    self._audit(
                        tx,
                        "label",
                        f"item {item_id}",
                        {"labeler": labeler, "label": label, "version": version, "source": source},
                    )
                    return version
            except _Again:
                continue
            except self._db.integrity_errors:
                continue
        msg = f"could not store the label of item {item_id}: the store stayed busy"
        raise RuntimeError(msg)

    # ---- bias probes: a judge's verdict flip rate under one change to its input

    def add_probe(self, result: dict[str, Any]) -> int:
        """Keep one probe's result (``run_id, results_sha256, judge_key, probe, n, flips, rate, low,
        high, detail``); its id. Results are only added, never replaced."""
        self._guard("probe")
        with self._db.transaction() as tx:
            pid = self._insert_probe(tx, result)
            self._audit(
                tx, "probe", f"run {result['run_id']}", {"probe": result["probe"], "n": int(result["n"])}
            )
        return pid

    def _insert_probe(self, tx: DB, result: dict[str, Any]) -> int:
        rows = tx.rows(
            "INSERT INTO probe_results (run_id, results_sha256, judge_key, probe, n, flips, rate, low, high, "
            "detail, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            (
                result["run_id"],
                result["results_sha256"],
                result["judge_key"],
                result["probe"],
                int(result["n"]),
                int(result["flips"]),
                float(result["rate"]),
                float(result["low"]),
                float(result["high"]),
                json.dumps(result.get("detail", {}), ensure_ascii=False),
                _now(),
            ),
        )
        return int(rows[0][0])

    def probes(self, run_id: str | None = None) -> list[dict[str, Any]]:
        """Kept probe results, oldest first (of one run, if given)."""
        sql = (
            "SELECT id, run_id, results_sha256, judge_key, probe, n, flips, rate, low, high, detail, created "
            "FROM probe_results" + (" WHERE run_id = ?" if run_id else "") + " ORDER BY id"
        )
        keys = ("id", "run_id", "results_sha256", "judge_key", "probe", "n", "flips", "rate", "low", "high")
        out = []
        for row in self._db.rows(sql, (run_id,) if run_id else ()):
            rec = dict(zip(keys, row[:10], strict=True))
            rec["detail"], rec["created"] = json.loads(row[10]), row[11]
            out.append(rec)
        return out


def judge_key(judge: tuple[str, str, str] | None) -> str:
    """A judge (model, prompt, schema) as one string; '' for a judge a run does not name."""
    return "|".join(judge) if judge else ""


class _Again(Exception):
    pass
