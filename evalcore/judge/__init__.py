"""The LLM judge: faithfulness claims, answer correctness and answer relevance from the Anthropic API.

``anthropic`` is imported only here, and only when a judgment is requested (it costs about a second).
Verdicts go to the store (:mod:`evalcore.store`), never into run files; a score is computed in code
from a verdict (the faithfulness rule and the quote check live in :mod:`evalcore.metrics`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalcore.faces import face

# Also a submodule's name: bound here, after importing it (see evalcore.faces).
from evalcore.judge.rerun import rerun

_API = {
    "Estimate": "client",
    "JudgeConfig": "client",
    "estimate": "client",
    "items_for": "client",
    "RerunReport": "rerun",
    "config_like": "rerun",
    "LATEST": "revision",
    "RECORDED": "revision",
    "diff": "revision",
    "judged_by": "revision",
}
__all__ = [
    "LATEST",
    "RECORDED",
    "Estimate",
    "JudgeConfig",
    "RerunReport",
    "config_like",
    "diff",
    "estimate",
    "items_for",
    "judged_by",
    "rerun",
]
__getattr__, __dir__ = face(__name__, _API)

if TYPE_CHECKING:
    from evalcore.judge.client import Estimate, JudgeConfig, estimate, items_for
    from evalcore.judge.rerun import RerunReport, config_like
    from evalcore.judge.revision import LATEST, RECORDED, diff, judged_by
