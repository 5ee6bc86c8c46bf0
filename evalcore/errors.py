"""Problems found in input files, reported with file, line, field, what was expected and what was found.

Loading never raises on a bad *record*: it collects :class:`Problem` objects so that one broken run
cannot stop the others from loading. A caller that wants an exception for a single file uses
:class:`InputError`, which carries the same problems.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input file.

    ``line`` is 1-based (``None`` for whole-file problems); ``field`` is a dotted path inside the
    record (``retrieved[3].score``).
    """

    path: str
    message: str
    line: int | None = None
    field: str | None = None
    expected: str | None = None
    found: str | None = None
    hint: str | None = None
    severity: Severity = "error"

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        parts = [f"{where}: {self.severity}: "]
        if self.field:
            parts.append(f"field '{self.field}': ")
        parts.append(self.message)
        if self.expected is not None:
            parts.append(f"; expected {self.expected}")
        if self.found is not None:
            parts.append(f", found {self.found}")
        if self.hint:
            parts.append(f". Fix: {self.hint}")
        return "".join(parts)

    def to_dict(self) -> dict[str, object]:
        return {
            "path": self.path,
            "line": self.line,
            "field": self.field,
            "severity": self.severity,
            "message": self.message,
            "expected": self.expected,
            "found": self.found,
            "hint": self.hint,
        }


@dataclass
class Problems:
    """An ordered collection of problems with helpers used while reading a file."""

    items: list[Problem] = field(default_factory=list)

    def add(self, problem: Problem) -> None:
        self.items.append(problem)

    def error(self, path: str | Path, message: str, **kw: object) -> None:
        self.items.append(Problem(str(path), message, **kw))  # type: ignore[arg-type]

    def warning(self, path: str | Path, message: str, **kw: object) -> None:
        self.items.append(Problem(str(path), message, severity="warning", **kw))  # type: ignore[arg-type]

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.items if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.items if p.severity == "warning"]

    def __bool__(self) -> bool:
        return bool(self.items)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)


class InputError(ValueError):
    """Raised when a file cannot be used; ``problems`` lists every reason found."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        shown = "\n".join(f"  {p}" for p in problems[:20])
        more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
        super().__init__(
            f"problems in the input ({len(problems)}):\n{shown}{more}"
        )  # (errors imports nothing)


def short(value: object, limit: int = 60) -> str:
    """A value as it should appear in an error message: repr, cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class SetupError(Exception):
    """Something the user must set up before a command can run (an API key); the message says how."""


# (the password runs to the last @ before the host: a raw @ in it is masked whole)
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^\s:/@]*):(?P<secret>[^\s/]+)@")
_SECRET_PARAM = re.compile(
    r"(?P<name>(?:password|passwd|pwd|token|access_token|secret|api_key|apikey|key|sig|signature|"
    r"x-amz-signature|x-amz-credential|x-amz-security-token|x-goog-signature|sv|se)=)(?P<value>[^&\s#]+)",
    re.IGNORECASE,
)
_API_KEY = re.compile(r"\bsk-[A-Za-z0-9_-]{8,}")


def redact(text: str) -> str:
    """``text`` with every secret it could carry masked: a URL's password (``postgresql://u:***@h``),
    a token or signature in a query string (``?token=***``), and anything shaped like an API key
    (``sk-…``). Every message that names a store, a bucket or a URL goes through it.

    >>> redact("could not open postgresql://app:s3cret@db:5432/rt?sslpassword=x&sslmode=require")
    'could not open postgresql://app:***@db:5432/rt?sslpassword=***&sslmode=require'
    >>> redact("postgresql://app:p@ss@db/rt")
    'postgresql://app:***@db/rt'
    >>> redact("s3://bucket/runs?X-Amz-Signature=abc123 with key sk-ant-api03-abcdefgh")
    's3://bucket/runs?X-Amz-Signature=*** with key sk-***'
    """
    text = _USERINFO.sub(lambda m: f"{m['scheme']}{m['user']}:***@", text)
    text = _SECRET_PARAM.sub(lambda m: f"{m['name']}***", text)
    return _API_KEY.sub("sk-***", text)
