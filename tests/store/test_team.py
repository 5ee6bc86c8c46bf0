"""The store as a team's: it refuses what a role may not do (whatever a page showed), records who
did every write in an append-only audit log, keeps labeling blind per person, holds daily budgets
across servers, and never pays twice for a judgment two processes ask for at once — on SQLite and
PostgreSQL."""

from __future__ import annotations

import threading

import pytest

from evalcore.access import Budget, Forbidden, Identity
from evalcore.store import OverBudget, Store

ADMIN = Identity("ana@example.com", "admin")
OPERATOR = Identity("ben@example.com", "operator")
LABELER = Identity("cy@example.com", "labeler")
LABELER2 = Identity("dee@example.com", "labeler")
VIEWER = Identity("eve@example.com", "viewer")

SESSION = {
    "name": "team-s1",
    "run_id": "run-1",
    "results_sha256": "sha",
    "judge": "recorded",
    "target": "claims",
    "sampling": "uniform",
    "seed": 1,
    "rubric": "Is the claim stated in the chunks?",
    "rubric_version": "rubric-v1",
    "labels_per_item": 2,
}
ITEMS = [
    {"qid": f"q{i}", "claim_idx": 0, "stratum": "all", "weight": 1.0, "payload": {"claim": f"c{i}"}}
    for i in range(3)
]


def test_each_write_is_refused_to_a_role_that_may_not_do_it(store_target: str) -> None:
    with Store(store_target) as s:
        viewer, labeler, operator = s.acting_as(VIEWER), s.acting_as(LABELER), s.acting_as(OPERATOR)
        with pytest.raises(Forbidden, match=r"eve@example\.com is a viewer here and may not re-judge"):
            viewer.new_revision("run-1", "sha", ("m", "p", "s"))
        with pytest.raises(Forbidden, match="may not create calibration sessions"):
            operator.create_session(SESSION, ITEMS)
        sid = s.acting_as(ADMIN).create_session(SESSION, ITEMS)
        item = s.items(sid)[0].id
        with pytest.raises(Forbidden, match="may not label"):
            viewer.submit_label(item, VIEWER.email, "SUPPORTED")
        # A forged request: a labeler submitting under someone else's name.
        with pytest.raises(Forbidden, match="may label only as themselves"):
            labeler.submit_label(item, LABELER2.email, "SUPPORTED")
        with pytest.raises(Forbidden, match="may not promote"):
            labeler.add_candidate("ts", "production", "conv-1", {"qid": "p1"})
        cid = operator.add_candidate("ts", "production", "conv-1", {"qid": "p1"})
        with pytest.raises(Forbidden, match="may not accept or discard"):
            operator.decide(cid, "accepted")
        with pytest.raises(Forbidden, match="may not close"):
            labeler.close_session(sid)
        with pytest.raises(Forbidden, match="may not read the audit log"):
            operator.audit_log()
        assert operator.new_revision("run-1", "sha", ("m", "p", "s")) > 0
        assert s.revisions("run-1")[-1].created_by == OPERATOR.email


def test_every_write_is_in_the_audit_log_with_its_author(store_target: str) -> None:
    with Store(store_target) as s:
        admin = s.acting_as(ADMIN)
        sid = admin.create_session(SESSION, ITEMS)
        item = s.items(sid)[0].id
        s.acting_as(LABELER).submit_label(item, LABELER.email, "SUPPORTED", "the quote is there")
        rev = s.acting_as(OPERATOR).new_revision(
            "run-1", "sha", ("m", "p", "s"), note="after the prompt change"
        )
        s.acting_as(OPERATOR).add_batch("msgbatch_1", rev, {"k1": "q1"})
        cid = s.acting_as(OPERATOR).add_candidate("ts", "production", "conv-1", {"qid": "p1"})
        admin.decide(cid, "accepted", by="someone-typed")
        admin.close_session(sid)
        log = admin.audit_log()
        assert [(r.actor, r.role, r.action) for r in log] == [
            (ADMIN.email, "admin", "create_session"),
            (LABELER.email, "labeler", "label"),
            (OPERATOR.email, "operator", "revision"),
            (OPERATOR.email, "operator", "batch"),
            (OPERATOR.email, "operator", "promote"),
            (ADMIN.email, "admin", "accepted"),
            (ADMIN.email, "admin", "close_session"),
        ]
        assert log[1].detail == {
            "label": "SUPPORTED",
            "labeler": LABELER.email,
            "source": "page",
            "version": 1,
        }
        assert log[2].target == "run run-1" and log[2].detail["note"] == "after the prompt change"
        # Signed in, the decider is who is signed in, not a typed name.
        assert s.candidate(cid).decided_by == ADMIN.email  # type: ignore[union-attr]
        assert [r.action for r in admin.audit_log(actor=LABELER.email)] == ["label"]
        # A closed session takes no more labels.
        from evalcore.store.labels import SessionClosed

        with pytest.raises(SessionClosed, match="team-s1 was closed"):
            s.acting_as(LABELER2).submit_label(item, LABELER2.email, "SUPPORTED")


def test_nobody_sees_another_persons_label_before_labeling_the_item(store_target: str) -> None:
    with Store(store_target) as s:
        sid = s.acting_as(ADMIN).create_session(SESSION, ITEMS)
        first, second, _ = (i.id for i in s.items(sid))
        cy, dee = s.acting_as(LABELER), s.acting_as(LABELER2)
        cy.submit_label(first, LABELER.email, "SUPPORTED")
        cy.submit_label(second, LABELER.email, "NOT_SUPPORTED")
        assert {(lb.item_id, lb.labeler) for lb in dee.labels(sid)} == set()  # blind
        dee.submit_label(first, LABELER2.email, "NOT_SUPPORTED")
        # Now Dee sees Cy's label of the item she labeled, and not of the other one.
        assert {(lb.item_id, lb.labeler) for lb in dee.labels(sid)} == {
            (first, LABELER.email),
            (first, LABELER2.email),
        }
        assert len(s.acting_as(ADMIN).labels(sid)) == 3  # the admin's report sees every label


def test_a_budget_is_held_across_servers_and_says_who_spent_it(store_target: str) -> None:
    budget = Budget(person=1.0, deployment=1.5)
    with Store(store_target, budget=budget) as s:
        ben = s.acting_as(OPERATOR)
        ben.reserve(0.8, "rejudge", "run r1")
        with pytest.raises(OverBudget) as err:
            ben.reserve(0.3, "rejudge", "run r1")
        assert "ben@example.com has $0.20 left of a $1.00 daily budget (spent $0.80 today)" in str(err.value)
        # Twelve servers (connections) reserving $0.10 at once for one person: exactly what fits.
        ok: list[int] = []

        def one() -> None:
            with Store(store_target, actor=Identity("fay@example.com", "operator"), budget=budget) as mine:
                try:
                    mine.reserve(0.1, "rejudge", "run r2")
                    ok.append(1)
                except OverBudget:
                    pass

        threads = [threading.Thread(target=one) for _ in range(12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(ok) == 7  # the deployment's $1.50 less Ben's $0.80: seven dimes, never eight
        spent = s.spent_today()
        assert spent["fay@example.com"] == pytest.approx(0.7)
        with pytest.raises(
            OverBudget,
            match=r"deployment has \$0.00 left of \$1.50 today \(spent by: ben@example.com \$0.80, fay@example.com \$0.70\)",
        ):
            ben.reserve(0.01, "rejudge", "run r3")
        # A settled reservation counts what the requests cost, not the estimate.
        s2 = Store(store_target, actor=Identity("gil@example.com", "operator"), budget=Budget(person=5.0))
        rid = s2.reserve(2.0, "rejudge", "run r4")
        s2.settle(rid, 0.25)
        assert s2.spent_today()["gil@example.com"] == pytest.approx(0.25)
        s2.close()


def test_a_lease_is_held_by_one_process_until_it_expires(store_target: str) -> None:
    with Store(store_target) as a, Store(store_target) as b:
        assert a.take_lease("k", "proc-a", 60)
        assert not b.take_lease("k", "proc-b", 60)  # judged by a now
        a.release_lease("k", "proc-a")
        assert b.take_lease("k", "proc-b", 0.0)  # b holds it, but its lease has already expired
        assert a.take_lease("k", "proc-a", 60)  # a killed holder's lease is taken over
