"""Personal data in logged text, flagged and redacted before a question may enter a test set (the
guide: "Remove personal data before they enter the set").

Found by pattern: e-mail addresses, card-like numbers (13-19 digits passing the Luhn check), IBANs
and other account-like numbers (8 or more digits in a run), phone numbers (9 or more digits with
the usual separators), and names introduced as such ("my name is Ada Lovelace", "regards, Ada").
Names elsewhere need a named-entity detector: when ``presidio_analyzer`` is installed its PERSON
entities are used as well, and :data:`NAME_DETECTOR` says which is in use. Patterns err towards
flagging: a person sees every redaction before accepting it.

>>> redact("Mail ada@example.com or call +44 20 7946 0958 about card 4111 1111 1111 1111").text
'Mail [EMAIL] or call [PHONE] about card [CARD]'
>>> redact("Error HV-3021 after 30 days on plan 2, since 2026-11-19").findings
[]
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b")
DIGITS = re.compile(r"(?<![\w-])\+?\(?\d[\d ().-]{6,}\d(?![\w-])")
DATE = re.compile(r"\d{4}[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}[-./]\d{1,2}[-./]\d{2,4}")
NAMED = re.compile(
    r"(?:\b[Mm]y name is|\b[Tt]his is|\b[Rr]egards,|\b[Tt]hanks,|\b[Cc]heers,)\s+([A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)"
)


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _presidio() -> Any:
    try:
        from presidio_analyzer import AnalyzerEngine
    except ImportError:
        return None
    try:
        return AnalyzerEngine()
    except Exception:
        return None


_ENGINE: Any = None
NAME_DETECTOR = "names introduced as such (install presidio-analyzer to find names anywhere)"


@dataclass(frozen=True)
class Finding:
    kind: str  # email, card, account, phone, name
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Redaction:
    original: str
    text: str
    findings: list[Finding] = field(default_factory=list)

    @property
    def kinds(self) -> list[str]:
        return sorted({f.kind for f in self.findings})


def find(text: str, *, names: bool = True) -> list[Finding]:
    """Every personal-data span in ``text``, non-overlapping, in order."""
    spans: list[Finding] = []

    def add(kind: str, start: int, end: int) -> None:
        if any(s.start < end and start < s.end for s in spans):
            return
        spans.append(Finding(kind, start, end, text[start:end]))

    for m in EMAIL.finditer(text):
        add("email", m.start(), m.end())
    for m in IBAN.finditer(text):
        add("account", m.start(), m.end())
    for m in DIGITS.finditer(text):
        raw = m.group(0)
        if DATE.fullmatch(raw.strip()):
            continue  # 2026-11-19, 2026.11.19: a date, not a person's number
        digits = re.sub(r"\D", "", raw)
        if 13 <= len(digits) <= 19 and re.fullmatch(r"[\d -]+", raw) and _luhn(digits):
            add("card", m.start(), m.end())
        elif 9 <= len(digits) <= 15 and re.search(r"[ ()+.-]", raw):  # E.164: at most 15 digits
            add("phone", m.start(), m.end())
        elif len(digits) >= 8:
            add("account", m.start(), m.end())
    if names:
        for m in NAMED.finditer(text):
            add("name", m.start(1), m.end(1))
        engine = _engine()
        if engine is not None:
            for r in engine.analyze(text=text, entities=["PERSON"], language="en"):
                add("name", r.start, r.end)
    return sorted(spans, key=lambda f: f.start)


def _engine() -> Any:
    global _ENGINE, NAME_DETECTOR
    if _ENGINE is None:
        _ENGINE = _presidio() or False
        if _ENGINE:
            NAME_DETECTOR = "presidio-analyzer (PERSON entities) and names introduced as such"
    return _ENGINE or None


def redact(text: str) -> Redaction:
    """``text`` with each finding replaced by ``[KIND]``."""
    findings = find(text)
    out, last = [], 0
    for f in findings:
        out.append(text[last : f.start])
        out.append(f"[{f.kind.upper()}]")
        last = f.end
    out.append(text[last:])
    return Redaction(text, "".join(out), findings)
