"""Who may do what: the one place that decides it. Pages, the CLI and the store's write paths ask
:func:`require` / :meth:`Identity.may`; nothing else compares roles.

A team's deployment names its people in a small TOML file (``$RAGTRIAGE_ACCESS``, else
``access.toml`` beside ``.streamlit/secrets.toml`` of the dashboard — see docs/deploy.md)::

    [people]                      # an address: its role
    "ana@example.com" = "admin"
    "ben@example.com" = "operator"

    [domains]                     # everyone signed in with an address of the domain
    "example.com" = "viewer"

    [budget]                      # dollars a day (UTC), from the judge's own estimate before spending
    person = 5.0
    deployment = 40.0

Roles are cumulative: each may do what the ones before it may.

- ``viewer`` browses every page;
- ``labeler`` also labels in calibration sessions;
- ``operator`` also spends: re-judges, bias probes, synthetic questions, promoting logged questions;
- ``admin`` also creates and closes calibration sessions, reviews and writes test-set versions,
  sees held-out questions on per-question views, and reads the audit log.

Without sign-in (the single-user path: no ``[auth]`` in the dashboard's secrets, or the CLI on one's
own machine with no access file) the one person at the keyboard is the *local* identity with every
role; the sidebar says so.
"""

from __future__ import annotations

import getpass
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from evalcore.errors import SetupError
from evalcore.words import agree

ROLES = ("viewer", "labeler", "operator", "admin")

# Each action and the least role that may do it. Add an action here, never a role check elsewhere.
ACTIONS: dict[str, str] = {
    "browse": "viewer",
    "label": "labeler",
    "rejudge": "operator",  # judge reruns, from a page or the CLI (also a production log's review sample)
    "probe": "operator",  # bias probes (they ask the judge)
    "synthesize": "operator",  # synthetic questions (they ask a model)
    "promote": "operator",  # a logged production question queued as a test case
    "create_session": "admin",
    "close_session": "admin",
    "review": "admin",  # accept or discard a candidate test case
    "write_testset": "admin",  # write a new test-set version from the accepted candidates
    "see_heldout": "admin",  # held-out questions on per-question views
    "see_labels": "admin",  # every person's labels, also on items one has not labeled (reports)
    "import_labels": "admin",  # labels imported under other people's names
    "audit": "admin",  # read the audit log
}

# What each action is called in a refusal ("... may not <this>").
DOING = {
    "browse": "open this ragtriage",
    "label": "label calibration items",
    "rejudge": "re-judge (it spends money on the judge)",
    "probe": "run bias probes (they spend money on the judge)",
    "synthesize": "write synthetic questions (it spends money on a model)",
    "promote": "promote logged questions to test cases",
    "create_session": "create calibration sessions",
    "close_session": "close calibration sessions",
    "review": "accept or discard candidate test cases",
    "write_testset": "write test-set versions",
    "see_heldout": "see held-out questions",
    "see_labels": "see other people's labels before labeling the item",
    "import_labels": "import labels under other people's names",
    "audit": "read the audit log",
}


def article(role: str) -> str:
    """``a viewer``, ``an admin``: a role with its article, for messages."""
    return ("an " if role[:1] in "aeiou" else "a ") + role


class Forbidden(PermissionError):
    """The identity's role does not allow the action (the message says which role would)."""


@dataclass(frozen=True)
class Identity:
    """Who is acting: a signed-in person (their e-mail address), or the local user of a single-user
    install (``local``: every role, nobody signed in)."""

    email: str
    role: str
    name: str = ""
    local: bool = False

    def may(self, action: str) -> bool:
        need = ACTIONS.get(action)
        if need is None:
            msg = f"unknown action {action!r}; known: {', '.join(ACTIONS)}"
            raise ValueError(msg)
        return ROLES.index(self.role) >= ROLES.index(need)

    def __str__(self) -> str:
        return self.email


def local_identity() -> Identity:
    """The single-user path: whoever runs the process, with every role."""
    try:
        user = getpass.getuser()
    except Exception:  # no login name in a container
        user = "local"
    return Identity(email=f"{user}@local", role="admin", name=user, local=True)


def require(identity: Identity, action: str) -> None:
    """Raise :class:`Forbidden` unless ``identity`` may do ``action``."""
    if not identity.may(action):
        need = ACTIONS[action]
        msg = (
            f"{identity.email} is {article(identity.role)} here and may not {DOING[action]}: that needs the "
            f"{need} role (ask an admin to change the access file)"
        )
        raise Forbidden(msg)


@dataclass(frozen=True)
class Budget:
    """Dollars a day (UTC) a person and the whole deployment may spend on the judge and other model
    calls; None: no limit."""

    person: float | None = None
    deployment: float | None = None


@dataclass(frozen=True)
class Access:
    """The access file, read: addresses and domains to roles, and the daily budget."""

    people: dict[str, str] = field(default_factory=dict)
    domains: dict[str, str] = field(default_factory=dict)
    budget: Budget = Budget()
    source: str = ""  # the file it was read from, for messages

    def role_of(self, email: str) -> str | None:
        """The role of an address: its own entry, else its domain's (the longest match, so
        ``eng.example.com`` can differ from ``example.com``); None: not admitted."""
        email = email.strip().lower()
        if email in self.people:
            return self.people[email]
        domain = email.rpartition("@")[2]
        parts = domain.split(".")
        for i in range(len(parts) - 1):
            role = self.domains.get(".".join(parts[i:]))
            if role is not None:
                return role
        return None

    def identity(self, email: str, name: str = "") -> Identity | None:
        """A signed-in person's identity, or None when the access file does not admit them."""
        role = self.role_of(email)
        return None if role is None else Identity(email=email.strip().lower(), role=role, name=name)


def default_access_file() -> Path:
    """Where the access file is looked for when ``RAGTRIAGE_ACCESS`` is not set: beside the
    dashboard's secrets, in the folder the server (or the command) was started from."""
    return Path.cwd() / ".streamlit" / "access.toml"


def access_path() -> Path | None:
    """``$RAGTRIAGE_ACCESS``, else :func:`default_access_file` when it exists, else None (no access
    file: the single-user path)."""
    env = os.environ.get("RAGTRIAGE_ACCESS")
    if env:
        return Path(env)
    default = default_access_file()
    return default if default.is_file() else None


def load_access(path: Path | None) -> Access:
    """The access file at ``path`` (None: nobody is named, no budget). Every mistake names the file,
    the entry and the fix."""
    if path is None:
        return Access()
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        msg = f"{path}: the access file does not exist (RAGTRIAGE_ACCESS names it); create it or unset the variable"
        raise SetupError(msg) from exc
    except tomllib.TOMLDecodeError as exc:
        msg = f"{path}: not valid TOML ({exc}); see docs/deploy.md for the format"
        raise SetupError(msg) from exc
    unknown = set(raw) - {"people", "domains", "budget"}
    if unknown:
        msg = f"{path}: unknown {agree(len(unknown), 'table', 'tables')} {', '.join(sorted(unknown))}; the file has [people], [domains] and [budget]"
        raise SetupError(msg)

    def roles(table: str) -> dict[str, str]:
        got = raw.get(table, {})
        if not isinstance(got, dict):
            msg = f'{path}: [{table}] must be a table of "address" = "role"'
            raise SetupError(msg)
        out = {}
        for who, role in got.items():
            if role not in ROLES:
                msg = f"{path}: [{table}] {who!r} = {role!r}: the role must be one of {', '.join(ROLES)}"
                raise SetupError(msg)
            who = str(who).strip().lower().lstrip("@")
            if table == "people" and "@" not in who:
                msg = f"{path}: [people] {who!r} is not an e-mail address; put a whole domain under [domains]"
                raise SetupError(msg)
            out[who] = role
        return out

    budget = raw.get("budget", {})
    limits: dict[str, float | None] = {}
    for name in ("person", "deployment"):
        value = budget.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float) or value < 0):
            msg = f"{path}: [budget] {name} = {value!r}: a number of dollars a day, 0 or more"
            raise SetupError(msg)
        limits[name] = None if value is None else float(value)
    extra = set(budget) - {"person", "deployment"}
    if extra:
        msg = (
            f"{path}: [budget] has {', '.join(sorted(extra))}; it takes person and deployment (dollars a day)"
        )
        raise SetupError(msg)
    return Access(
        people=roles("people"),
        domains=roles("domains"),
        budget=Budget(**limits),
        source=str(path),
    )


def cli_identity() -> Identity:
    """Who runs a CLI command. With no access file: the local identity (every role). With one: the
    address in ``$RAGTRIAGE_USER`` and the role the file gives it — a team's CI or operator acts
    under a name the audit log records."""
    path = access_path()
    if path is None:
        return local_identity()
    access = load_access(path)
    email = os.environ.get("RAGTRIAGE_USER", "").strip()
    if not email:
        msg = (
            f"{path} (RAGTRIAGE_ACCESS) names who may do what: set RAGTRIAGE_USER to your address so the "
            "store knows who is acting"
        )
        raise SetupError(msg)
    who = access.identity(email)
    if who is None:
        msg = f"{email} (RAGTRIAGE_USER) is not admitted by {path}: ask an admin to add it"
        raise SetupError(msg)
    return who
