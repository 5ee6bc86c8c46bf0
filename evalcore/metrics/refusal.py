"""When an answer counts as a refusal, for runs that do not say whether the system abstained.

Deliberately narrow: a false "abstained" hides a wrong answer, so only an answer that *opens* with a
clear refusal matches — "I don't know" in the middle of a sentence is not one.

>>> looks_like_refusal("I don't know: the documentation does not cover it.")
True
>>> looks_like_refusal("Snapshots are kept 90 days; I don't know about archives.")
False
"""

from __future__ import annotations

import re

_REFUSAL = re.compile(
    r"^\s*(i\s+(do\s+not|don'?t|don’t)\s+know|i\s+(cannot|can'?t|can’t|am\s+unable\s+to)\s+"
    r"(answer|find|tell)|(the\s+)?(provided\s+)?(context|documentation|documents?)\s+(does|do)\s+not\s+"
    r"(contain|say|mention|cover)|there\s+is\s+no\s+information|no\s+answer)",
    re.IGNORECASE,
)


# The same pattern for polars (Rust regex syntax accepts it as written).
REFUSAL_PATTERN = "(?i)" + _REFUSAL.pattern


def looks_like_refusal(answer: str | None) -> bool:
    """True if ``answer`` opens with a clear refusal ("I don't know", "The documentation does not ...")."""
    return bool(answer) and bool(_REFUSAL.match(answer or ""))
