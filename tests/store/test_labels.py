"""Labels in the store, on SQLite and PostgreSQL: the labels-per-item quota and "one labeler, one
label per item" hold in the database even with labelers writing at once; a later label is a new
version, the old one kept."""

from __future__ import annotations

import threading

import pytest

from evalcore.store import Store
from evalcore.store.labels import QuotaFull

SESSION = {
    "name": "s1",
    "run_id": "run-1",
    "results_sha256": "sha",
    "judge": "recorded",
    "target": "claims",
    "sampling": "uniform",
    "seed": 1,
    "rubric": "Is the claim stated in the chunks?",
    "rubric_version": "rubric-v1",
}


def items(n: int) -> list[dict]:
    return [
        {"qid": f"q{i:04d}", "claim_idx": 0, "stratum": "all", "weight": 1.0, "payload": {"claim": f"c{i}"}}
        for i in range(n)
    ]


def test_two_labelers_at_once_lose_nothing_and_never_pass_the_quota(store_target: str) -> None:
    with Store(store_target) as s:
        sid = s.create_session({**SESSION, "labels_per_item": 1}, items(500))
        ids = [i.id for i in s.items(sid)]
    got: dict[str, list[int]] = {"ann": [], "bob": []}
    full: dict[str, int] = {"ann": 0, "bob": 0}
    errors: list[BaseException] = []

    def label(who: str, order: list[int]) -> None:
        try:
            with Store(store_target) as mine:  # a connection of its own, as another browser's server
                for iid in order:
                    try:
                        mine.submit_label(iid, who, "SUPPORTED")
                        got[who].append(iid)
                    except QuotaFull:
                        full[who] += 1
        except BaseException as exc:
            errors.append(exc)

    threads = [
        threading.Thread(target=label, args=("ann", ids)),
        threading.Thread(target=label, args=("bob", ids[::-1])),  # they meet in the middle, and cross
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(got["ann"]) + len(got["bob"]) == 500, "every item labeled once"
    assert full["ann"] + full["bob"] == 500, "every refused label was refused for the quota"
    assert not set(got["ann"]) & set(got["bob"]), "no item past its quota of one"
    with Store(store_target) as s:
        labels = s.labels(sid)
        assert len(labels) == 500 and len({lb.item_id for lb in labels}) == 500
        assert s.full_items(sid) == set(ids)


def test_a_later_label_is_a_new_version_and_the_quota_is_per_labeler(store_target: str) -> None:
    with Store(store_target) as s:
        sid = s.create_session({**SESSION, "labels_per_item": 2}, items(3))
        first = s.items(sid)[0].id
        assert s.submit_label(first, "ann", "SUPPORTED", "the chunk says so") == 1
        assert s.submit_label(first, "ann", "NOT_SUPPORTED", "read it again") == 2, "a new version"
        s.submit_label(first, "bob", "NOT_SUPPORTED")
        with pytest.raises(QuotaFull):
            s.submit_label(first, "cy", "SUPPORTED")  # two labelers hold both slots
        latest = {(lb.labeler, lb.label) for lb in s.labels(sid)}
        assert latest == {("ann", "NOT_SUPPORTED"), ("bob", "NOT_SUPPORTED")}
        history = [(lb.labeler, lb.version, lb.rationale) for lb in s.labels(sid, history=True)]
        assert ("ann", 1, "the chunk says so") in history, "the first label is kept"
        assert s.held_by(sid, "ann") == {first}
        # The database itself refuses a label without a slot (not only this code).
        with pytest.raises(s._db.integrity_errors):
            s._db.run(
                "INSERT INTO labels (item_id, labeler, version, label, created, source) VALUES (?, ?, 1, 'SUPPORTED', 'now', 'x')",
                (first, "mallory"),
            )
        (row,) = [x for x in s.sessions() if x.id == sid]
        assert (row.items, row.labels, row.labels_per_item) == (3, 2, 2)
