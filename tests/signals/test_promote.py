"""Promoting a logged question, and accepted candidates written into a new test-set version."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evalcore import read_testset
from evalcore.errors import InputError
from evalcore.signals.pii import redact
from evalcore.signals.promote import case_for, promote
from evalcore.store import Store
from evalcore.testset.review import write_accepted
from helpers import SAMPLE


def test_promote_refuses_personal_data_and_writes_a_new_version(tmp_path: Path) -> None:
    shutil.copy(SAMPLE / "testset.jsonl", tmp_path / "testset.jsonl")
    ts = read_testset(tmp_path / "testset.jsonl")
    store = Store(tmp_path / "store.sqlite")
    asked = "My email is ada@example.com — how long does Team keep snapshots?"
    raw = case_for("c-000042", question=asked, relevant={"billing/plans#03": 2}, reference_answer="90 days.",
                   type_="lookup", topic="billing")  # fmt: skip
    with pytest.raises(ValueError, match="personal data is still in the case"):
        promote(store, ts.sha256, raw, by="ann", original=asked)
    clean = redact(asked).text
    assert clean == "My email is [EMAIL] — how long does Team keep snapshots?"
    case = case_for("c-000042", question=clean, relevant={"billing/plans#03": 2}, reference_answer="90 days.",
                    type_="lookup", topic="billing")  # fmt: skip
    promote(store, ts.sha256, case, by="ann", original=asked)
    with pytest.raises(ValueError, match="already accepted"):
        promote(store, ts.sha256, case, by="bob", original=asked)
    unanswerable = case_for("c-000043", question="Do you have a Linux GUI?", relevant=None, reference_answer=None,
                            type_="unanswerable", topic="agent")  # fmt: skip
    promote(store, ts.sha256, unanswerable, by="ann", original="Do you have a Linux GUI?")
    before = (tmp_path / "testset.jsonl").read_bytes()
    out, sha, added = write_accepted(store, tmp_path / "testset.jsonl", by="ann")
    assert added == 2 and out.name == "testset.reviewed.jsonl"
    assert (tmp_path / "testset.jsonl").read_bytes() == before  # the old version untouched
    new = read_testset(out)
    assert new.sha256 == sha and new.cases.height == ts.cases.height + 2
    row = new.cases.filter(new.cases["qid"] == "prod-c-000042").row(0, named=True)
    assert row["source"] == "real" and row["answerable"] and "[EMAIL]" in row["question"]
    tags = dict(new.tags.filter(new.tags["qid"] == "prod-c-000042").select("tag", "value").iter_rows())
    assert tags["conversation_id"] == "c-000042"
    assert not new.cases.filter(new.cases["qid"] == "prod-c-000043")["answerable"][0]
    # written once: nothing accepted is left to write again
    assert {c.status for c in store.candidates()} == {"written"}
    with pytest.raises(InputError, match="no accepted candidate"):
        write_accepted(store, tmp_path / "testset.jsonl")
    # nowhere is the unredacted question kept
    assert b"ada@example.com" not in (tmp_path / "store.sqlite").read_bytes()
