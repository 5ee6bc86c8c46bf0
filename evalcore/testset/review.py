"""From the review queue to a new test-set version: accepted candidates (reviewed synthetic
questions, promoted production questions) appended to the test set as a new file — the old one
untouched — and each marked as written into it, so it is not appended twice."""

from __future__ import annotations

from pathlib import Path

from evalcore.cache import file_sha256
from evalcore.errors import InputError, Problem
from evalcore.store import Store
from evalcore.store.candidates import Candidate
from evalcore.testset.write import default_out, read_cases, write_version


def unique_qid(qid: str, taken: set[str]) -> str:
    """``qid``, or ``qid-2``, ``qid-3``... when the test set has it already."""
    if qid not in taken:
        return qid
    i = 2
    while f"{qid}-{i}" in taken:
        i += 1
    return f"{qid}-{i}"


def accepted(store: Store, testset: Path) -> list[Candidate]:
    """Accepted, not yet written candidates made for this test-set version."""
    return store.candidates(testset=file_sha256(testset), status="accepted")


def write_accepted(
    store: Store, testset: str | Path, out: str | Path | None = None, *, by: str | None = None
) -> tuple[Path, str, int]:
    """Append the accepted candidates to a new version of ``testset`` (``out``, default
    ``<name>.v<N>.jsonl`` beside it); returns the new file, its sha256 and how many were added."""
    store.require("write_testset")  # before the file is written, not after
    testset = Path(testset)
    todo = accepted(store, testset)
    if not todo:
        raise InputError(
            [
                Problem(
                    str(testset), "no accepted candidate to add", hint="accept some in the review queue first"
                )
            ]
        )
    cases = read_cases(testset)
    taken = {c["qid"] for c in cases}
    added = []
    for cand in todo:
        case = dict(cand.final)
        case["qid"] = unique_qid(case["qid"], taken)
        taken.add(case["qid"])
        added.append(case)
    target = Path(out) if out is not None else default_out(testset, "reviewed")
    sha = write_version([*cases, *added], target, source=testset)
    for cand, case in zip(todo, added, strict=True):
        store.decide(cand.id, "written", case=case, by=by, note=str(target))
    return target, sha, len(added)
