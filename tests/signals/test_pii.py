"""Personal data flagged and redacted; ordinary product text left alone."""

from __future__ import annotations

import pytest

from evalcore.signals.pii import find, redact


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("write to jane.doe+vault@example.co.uk", "email"),
        ("my card is 4111-1111-1111-1111", "card"),
        ("call +44 20 7946 0958 today", "phone"),
        ("call (415) 555-0132", "phone"),
        ("IBAN DE89 3704 0044 0532 0130 00", "account"),
        ("account 40012345 is locked", "account"),
        ("My name is Grace Hopper", "name"),
        ("Thanks, Linus", "name"),
    ],
)
def test_flagged(text: str, kind: str) -> None:
    assert [f.kind for f in find(text)] == [kind]
    assert f"[{kind.upper()}]" in redact(text).text


@pytest.mark.parametrize(
    "text",
    [
        "What does error HV-3021 mean?",
        "key_rotation_days accepts 30 to 365",
        "agent 2026.11.3 on port 8443",
        "Is the Team plan 1 TB per seat?",
        "I'm getting HV-1020 since Monday",
    ],
)
def test_product_text_is_not_flagged(text: str) -> None:
    assert find(text) == []


def test_a_card_like_number_failing_luhn_is_an_account_number_not_a_card() -> None:
    assert [f.kind for f in find("ref 4111 1111 1111 1112")] == ["account"]


def test_every_finding_in_one_text_is_kept_and_an_overlap_only_once() -> None:
    """Two addresses and a phone number in one message are three findings, in order; a number inside
    an e-mail address is part of the address, not an account number beside it."""
    text = "mail ada@example.com or ops12345678@example.org, or call +44 20 7946 0958"
    got = [(f.kind, f.text) for f in find(text)]
    assert got == [
        ("email", "ada@example.com"),
        ("email", "ops12345678@example.org"),
        ("phone", "+44 20 7946 0958"),
    ]
    red = redact(text)
    assert red.text == "mail [EMAIL] or [EMAIL], or call [PHONE]"
    assert red.kinds == ["email", "phone"] and red.original == text


@pytest.mark.parametrize(
    ("digits", "valid"),
    [
        ("4111111111111111", True),
        ("4111111111111112", False),
        ("5500005555555559", True),
        ("79927398713", True),
    ],
)
def test_the_luhn_check(digits: str, valid: bool) -> None:
    from evalcore.signals.pii import _luhn

    assert _luhn(digits) is valid
