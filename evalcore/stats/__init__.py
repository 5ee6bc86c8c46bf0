"""Statistics on per-question metric vectors: resampling (bootstrap CIs, paired randomization tests,
Holm's correction). Imports no other evalcore module."""

from evalcore.stats.resampling import (
    ALPHA,
    BOOTSTRAP_EXACT_MAX,
    RANDOMIZATION_EXACT_MAX,
    SMALL_SLICE,
    bootstrap_ci,
    holm,
    paired_randomization_test,
)

__all__ = [
    "ALPHA",
    "BOOTSTRAP_EXACT_MAX",
    "RANDOMIZATION_EXACT_MAX",
    "SMALL_SLICE",
    "bootstrap_ci",
    "holm",
    "paired_randomization_test",
]
