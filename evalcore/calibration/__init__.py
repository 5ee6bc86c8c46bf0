"""Judge calibration: labeling sessions (what people label, sampled how), agreement between people
and between the judge and people, with confidence intervals, and judge-corrected scores.

Labels live in the store (:mod:`evalcore.store.labels`), never in run files.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalcore.faces import face

_API = {
    "PROBES": "probes",
    "plan": "probes",
    "probe": "probes",
    "SessionReport": "report",
    "Standing": "report",
    "export_labels": "report",
    "import_labels": "report",
    "session_report": "report",
    "standing": "report",
    "RUBRICS": "sessions",
    "SessionSpec": "sessions",
    "TARGETS": "sessions",
    "candidates": "sessions",
    "create": "sessions",
    "order_for": "sessions",
    "preview": "sessions",
}
__all__ = [
    "PROBES",
    "RUBRICS",
    "TARGETS",
    "SessionReport",
    "SessionSpec",
    "Standing",
    "candidates",
    "create",
    "export_labels",
    "import_labels",
    "order_for",
    "plan",
    "preview",
    "probe",
    "session_report",
    "standing",
]
__getattr__, __dir__ = face(__name__, _API)

if TYPE_CHECKING:
    from evalcore.calibration.probes import PROBES, plan, probe
    from evalcore.calibration.report import (
        SessionReport,
        Standing,
        export_labels,
        import_labels,
        session_report,
        standing,
    )
    from evalcore.calibration.sessions import (
        RUBRICS,
        TARGETS,
        SessionSpec,
        candidates,
        create,
        order_for,
        preview,
    )
