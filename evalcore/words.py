"""Count words that agree with their numbers: "1 run", "2 runs", never "1 run(s)".

One owner for every message the CLI and the dashboard print with a count in it.
"""

from __future__ import annotations


def plural(noun: str) -> str:
    """``noun``'s plural: its last word takes an -s (-es after s, x, z, ch, sh; -ies after a
    consonant and y).

    >>> plural("held-out question"), plural("match"), plural("query"), plural("key")
    ('held-out questions', 'matches', 'queries', 'keys')
    """
    if noun.endswith(("s", "x", "z", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and len(noun) > 1 and noun[-2] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + "s"


def count(n: int | float, noun: str, many: str | None = None) -> str:
    """``n`` and ``noun``, agreeing: ``count(1, "run")`` is "1 run", ``count(2, "run")`` "2 runs"
    (``many`` for an irregular plural). Thousands are separated.

    >>> count(1, "run"), count(0, "question"), count(12000, "label"), count(2, "person", "people")
    ('1 run', '0 questions', '12,000 labels', '2 people')
    """
    word = noun if n == 1 else (many or plural(noun))
    return f"{n:,} {word}" if isinstance(n, int) else f"{n:g} {word}"


def agree(n: int | float, one: str, other: str) -> str:
    """The verb (or any word) that goes with ``n``: ``agree(1, "has", "have")`` is "has"."""
    return one if n == 1 else other
