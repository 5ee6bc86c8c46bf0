"""Who may do what: the access file read as a team writes it, the roles each action needs, and the
mistakes named with the file and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalcore.access import (
    ACTIONS,
    ROLES,
    Forbidden,
    Identity,
    access_path,
    cli_identity,
    load_access,
    local_identity,
    require,
)
from evalcore.errors import SetupError

TEAM = """
[people]
"Ana@Example.com" = "admin"
"ben@example.com" = "operator"
"cy@partner.org" = "labeler"

[domains]
"example.com" = "viewer"
"eng.example.com" = "labeler"

[budget]
person = 2.5
deployment = 10
"""


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "access.toml"
    p.write_text(text, encoding="utf-8")
    return p


def test_addresses_then_the_longest_domain_give_the_role(tmp_path: Path) -> None:
    acc = load_access(write(tmp_path, TEAM))
    assert acc.role_of("ana@example.com") == "admin"  # case folded
    assert acc.role_of("ben@example.com") == "operator"
    assert acc.role_of("dee@example.com") == "viewer"  # the domain
    assert acc.role_of("eve@eng.example.com") == "labeler"  # the longer domain wins
    assert acc.role_of("cy@partner.org") == "labeler"
    assert acc.role_of("zed@partner.org") is None  # not admitted
    assert acc.role_of("x@notexample.com") is None  # a suffix is not a domain
    assert acc.budget.person == 2.5 and acc.budget.deployment == 10.0


@pytest.mark.parametrize(
    ("role", "allowed"),
    [
        ("viewer", {"browse"}),
        ("labeler", {"browse", "label"}),
        ("operator", {"browse", "label", "rejudge", "probe", "synthesize", "promote"}),
        ("admin", set(ACTIONS)),
    ],
)
def test_each_role_may_do_what_the_issue_says_and_no_more(role: str, allowed: set[str]) -> None:
    who = Identity("x@example.com", role)
    assert {a for a in ACTIONS if who.may(a)} == allowed


def test_a_refusal_names_the_person_their_role_and_the_role_needed() -> None:
    with pytest.raises(
        Forbidden, match=r"v@example.com is a viewer here and may not re-judge .* operator role"
    ):
        require(Identity("v@example.com", "viewer"), "rejudge")


def test_the_local_user_has_every_role() -> None:
    me = local_identity()
    assert me.local and all(me.may(a) for a in ACTIONS) and me.role == ROLES[-1]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[people]\n"a@b.com" = "boss"\n',
            r"'boss': the role must be one of viewer, labeler, operator, admin",
        ),
        (
            '[people]\n"example.com" = "viewer"\n',
            r"not an e-mail address; put a whole domain under \[domains\]",
        ),
        ("[roles]\n", r"unknown table roles;"),
        ("[budget]\nperson = -1\n", r"\[budget\] person = -1: a number of dollars a day"),
        ("[budget]\nmonthly = 3\n", r"\[budget\] has monthly"),
        ("[people\n", r"not valid TOML"),
    ],
)
def test_a_mistake_in_the_access_file_names_the_file_and_the_fix(
    tmp_path: Path, text: str, message: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(SetupError, match=message) as err:
        load_access(path)
    assert str(path) in str(err.value)


def test_the_cli_acts_as_ragtriage_user_under_the_access_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RAGTRIAGE_ACCESS", raising=False)
    assert cli_identity().local  # no access file: the single-user path
    path = write(tmp_path, TEAM)
    monkeypatch.setenv("RAGTRIAGE_ACCESS", str(path))
    assert access_path() == path
    monkeypatch.delenv("RAGTRIAGE_USER", raising=False)
    with pytest.raises(SetupError, match="set RAGTRIAGE_USER"):
        cli_identity()
    monkeypatch.setenv("RAGTRIAGE_USER", "ben@example.com")
    assert cli_identity() == Identity("ben@example.com", "operator")
    monkeypatch.setenv("RAGTRIAGE_USER", "zed@partner.org")
    with pytest.raises(SetupError, match=r"zed@partner\.org .* is not admitted"):
        cli_identity()
