"""What is measured and how: the metric catalogue (names, directions, default sets), the retrieval
measures (trec_eval's conventions, compiled per-question loop), the generation measures computed from
stored judge output, and quote matching. Never imports :mod:`evalcore.runs`: it works on frames."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalcore.faces import face

_API = {
    "HEADLINE": "catalogue",
    "metric_info": "catalogue",
    "span": "quotes",
}
__all__ = [
    "HEADLINE",
    "metric_info",
    "span",
]
__getattr__, __dir__ = face(__name__, _API)

if TYPE_CHECKING:
    from evalcore.metrics.catalogue import HEADLINE, metric_info
    from evalcore.metrics.quotes import span
