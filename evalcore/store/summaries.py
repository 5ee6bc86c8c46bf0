"""Per-hour summaries of production log partitions, kept in the store so a day already read is not
read again (:mod:`evalcore.signals.volume`). Derived data: a partition whose files changed has its
rows replaced; nothing a person made lives here."""

from __future__ import annotations

from typing import Any

COLUMNS = ("hour", "questions", "no_answer", "up", "down", "keyword_zero")


class SummaryStore:
    _db: Any

    def log_summary(self, source: str, part: str) -> tuple[str, list[tuple[Any, ...]]] | None:
        """(fingerprint, rows of :data:`COLUMNS`) kept for a partition, or None."""
        rows = self._db.rows(
            "SELECT fingerprint, hour, questions, no_answer, up, down, keyword_zero FROM log_summaries "
            "WHERE source = ? AND part = ? ORDER BY hour",
            (source, part),
        )
        if not rows:
            return None
        return str(rows[0][0]), [tuple(r[1:]) for r in rows]

    def log_summary_parts(self, source: str) -> list[str]:
        """The partitions the store holds summaries of, for ``source`` (some perhaps summarised elsewhere:
        a warehouse that wrote them with :meth:`put_log_summary`)."""
        return [
            str(r[0])
            for r in self._db.rows(
                "SELECT DISTINCT part FROM log_summaries WHERE source = ? ORDER BY part", (source,)
            )
        ]

    def put_log_summary(self, source: str, part: str, fingerprint: str, rows: list[tuple[Any, ...]]) -> None:
        """Replace a partition's summary (one transaction: a reader sees the old rows or the new)."""
        with self._db.transaction() as tx:
            tx.run("DELETE FROM log_summaries WHERE source = ? AND part = ?", (source, part))
            for r in rows:
                tx.run(
                    "INSERT INTO log_summaries (source, part, fingerprint, hour, questions, no_answer, up, down, "
                    "keyword_zero) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (source, part, fingerprint, *r),
                )
            if not rows:  # an empty partition is remembered too, so it is not read again
                tx.run(
                    "INSERT INTO log_summaries (source, part, fingerprint, hour, questions, no_answer, up, down, "
                    "keyword_zero) VALUES (?, ?, ?, '', 0, 0, 0, 0, 0)",
                    (source, part, fingerprint),
                )
