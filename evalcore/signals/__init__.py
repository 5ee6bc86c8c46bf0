"""Production signals: logs of what the system did for real users (docs/signals.md), the rates to
watch and their alerts, a sample for review under the judge's rubric, and promoting a logged
question to a test case with personal data redacted first."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalcore.faces import face

# Also a submodule's name: bound here, after importing it (see evalcore.faces).
from evalcore.signals.promote import promote

_API = {
    "Alert": "alerts",
    "daily_counts": "alerts",
    "detect": "alerts",
    "feedback_reasons": "alerts",
    "history_note": "alerts",
    "keyword_found_nothing": "alerts",
    "low_top_scores": "alerts",
    "no_answer_series": "alerts",
    "Log": "logs",
    "read_log": "logs",
    "NAME_DETECTOR": "pii",
    "Redaction": "pii",
    "redact": "pii",
    "case_for": "promote",
    "create_review": "review",
}
__all__ = [
    "NAME_DETECTOR",
    "Alert",
    "Log",
    "Redaction",
    "case_for",
    "create_review",
    "daily_counts",
    "detect",
    "feedback_reasons",
    "history_note",
    "keyword_found_nothing",
    "low_top_scores",
    "no_answer_series",
    "promote",
    "read_log",
    "redact",
]
__getattr__, __dir__ = face(__name__, _API)

if TYPE_CHECKING:
    from evalcore.signals.alerts import (
        Alert,
        daily_counts,
        detect,
        feedback_reasons,
        history_note,
        keyword_found_nothing,
        low_top_scores,
        no_answer_series,
    )
    from evalcore.signals.logs import Log, read_log
    from evalcore.signals.pii import NAME_DETECTOR, Redaction, redact
    from evalcore.signals.promote import case_for
    from evalcore.signals.review import create_review
