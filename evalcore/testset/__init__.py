"""Building, checking and growing a test set: coverage and its gaps, statistical power per slice,
how much synthetic questions borrow from their source chunk, versions and what changed between
two, labels carried to a new chunking, and new versions written beside the old file, never over it.

Reading a test set is :mod:`evalcore.runs.testset`'s job; this package only works on one read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalcore.faces import face

# Also a submodule's name: bound here, after importing it (see evalcore.faces).
from evalcore.testset.coverage import coverage

_API = {
    "SynthResult": "synth",
    "chunks_from_corpus": "synth",
    "synthesize": "synth",
    "synth_estimate": "synth:estimate",
    "synth_plan": "synth:plan",
    "Coverage": "coverage",
    "HIGH": "overlap",
    "chunk_texts": "overlap",
    "most_overlapping": "overlap",
    "overlap_summary": "overlap",
    "overlap_table": "overlap",
    "DEFAULT_METRICS": "power",
    "SliceTarget": "power",
    "needed": "power",
    "power_table": "power",
    "accepted": "review",
    "write_accepted": "review",
    "answered_versions": "versions",
    "diff": "versions",
    "diff_counts": "versions",
}
__all__ = [
    "DEFAULT_METRICS",
    "HIGH",
    "Coverage",
    "SliceTarget",
    "SynthResult",
    "accepted",
    "answered_versions",
    "chunk_texts",
    "chunks_from_corpus",
    "coverage",
    "diff",
    "diff_counts",
    "most_overlapping",
    "needed",
    "overlap_summary",
    "overlap_table",
    "power_table",
    "synth_estimate",
    "synth_plan",
    "synthesize",
    "write_accepted",
]
__getattr__, __dir__ = face(__name__, _API)

if TYPE_CHECKING:
    from evalcore.testset.coverage import Coverage
    from evalcore.testset.overlap import HIGH, chunk_texts, most_overlapping, overlap_summary, overlap_table
    from evalcore.testset.power import DEFAULT_METRICS, SliceTarget, needed, power_table
    from evalcore.testset.review import accepted, write_accepted
    from evalcore.testset.synth import SynthResult, chunks_from_corpus, synthesize
    from evalcore.testset.synth import estimate as synth_estimate
    from evalcore.testset.synth import plan as synth_plan
    from evalcore.testset.versions import answered_versions, diff, diff_counts
