"""The store on both databases (SQLite and a real PostgreSQL server the tests start): revisions
are never lost or overwritten, writers at once lose nothing, batches are remembered until
collected, and an old store is migrated forward when opened."""

from __future__ import annotations

import threading

import pytest

from evalcore.errors import SetupError
from evalcore.store import MIGRATIONS, SCHEMA_VERSION, Store, Verdict
from evalcore.store.db import connect

JUDGE = ("claude-test-1", "p" * 64, "s" * 64)


def verdict(qid: str, key: str, ok: bool = True) -> Verdict:
    out = {
        "claims": [],
        "correctness": {"verdict": "correct", "reason": "r"},
        "relevance": {"score": 1, "reason": "r"},
    }
    return Verdict(
        qid, key, ok, reason=None if ok else "timed out", output=out if ok else None, message_id="m"
    )


def test_revisions_are_appended_never_overwritten(store_target: str) -> None:
    with Store(store_target) as s:
        a = s.new_revision("run-1", "sha-a", JUDGE)
        s.add(a, verdict("q1", "k1"))
        s.add(a, verdict("q2", "k2", ok=False))
        b = s.new_revision("run-1", "sha-a", JUDGE)
        s.add(b, verdict("q1", "k1b"))
        s.new_revision("run-1", "sha-b", JUDGE)  # the results file was edited: another version
    with Store(store_target) as s:  # reopened: everything is still there
        revs = s.revisions("run-1", "sha-a")
        assert [(r.id, r.verdicts, r.failed) for r in revs] == [(a, 2, 1), (b, 1, 0)]
        assert len(s.revisions("run-1")) == 3
        assert revs[0].judge == JUDGE
        got = {v.qid: v for v in s.verdicts(a)}
        assert got["q1"].ok and got["q1"].output and got["q1"].output["correctness"]["verdict"] == "correct"
        assert not got["q2"].ok and got["q2"].reason == "timed out" and got["q2"].output is None
        # The cache holds successful judgments only, newest first.
        assert s.cached("k1") is not None and s.cached("k2") is None
        with pytest.raises(Exception, match=r"(?i)unique"):  # one verdict per question and revision
            s.add(a, verdict("q1", "k1"))
        assert s.newest_revision_id() == max(r.id for r in s.revisions("run-1"))


def test_writers_at_once_lose_nothing(store_target: str) -> None:
    """Four writers (four connections, as four dashboards or CLI runs) commit verdicts one by one."""
    with Store(store_target) as s:
        revs = [s.new_revision(f"run-{i}", "sha", JUDGE) for i in range(4)]
    errors: list[BaseException] = []

    def write(rev: int) -> None:
        try:
            with Store(store_target) as mine:
                for q in range(50):
                    mine.add(rev, verdict(f"q{q}", f"k{rev}-{q}"))
        except BaseException as exc:  # reported below, not lost in a thread
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(r,)) for r in revs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    with Store(store_target) as s:
        assert [len(s.verdicts(r)) for r in revs] == [50, 50, 50, 50]


def test_a_batch_is_remembered_until_collected(store_target: str) -> None:
    with Store(store_target) as s:
        rev = s.new_revision("run-1", "sha", JUDGE)
        s.add_batch("msgbatch_1", rev, {"k1": "q1", "k2": "q2"})
    with Store(store_target) as s:  # an interrupted rerun, started again
        (b,) = s.open_batches(["k2", "k9"])
        assert (b.id, b.revision_id, b.requests) == ("msgbatch_1", rev, {"k1": "q1", "k2": "q2"})
        assert s.open_batches(["k9"]) == []
        s.end_batch("msgbatch_1")
        assert s.open_batches() == []


def test_an_old_store_is_migrated_forward_and_a_newer_one_refused(store_target: str) -> None:
    db = connect(store_target)  # a store as the first release left it: schema 1, one verdict
    with db.transaction() as tx:
        tx.run("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        for stmt in MIGRATIONS[1]:
            tx.run(stmt.replace("{id}", db.id_column))
        tx.run("INSERT INTO meta (key, value) VALUES ('schema_version', '1')")
        tx.run(
            "INSERT INTO revisions (run_id, results_sha256, model, prompt_hash, schema_hash, created) "
            "VALUES ('run-1', 'sha', 'm', 'p', 's', 'then')"
        )
    db.close()
    with Store(store_target) as s:
        assert s.schema_version == SCHEMA_VERSION
        assert [r.run_id for r in s.revisions("run-1")] == ["run-1"], "kept"
        assert s.open_batches() == [], "the new tables exist"
    db = connect(store_target)
    db.run("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    db.close()
    with pytest.raises(SetupError, match=r"written by a newer ragtriage \(store schema 99"):
        Store(store_target)


def test_a_store_that_cannot_be_reached_says_where(pg_url: str) -> None:
    bad = pg_url.replace("postgres@", "postgres:secret-pw@").rsplit("/", 1)[0] + "/no_such_db"
    with pytest.raises(SetupError) as err:
        Store(bad)
    assert "could not open the store postgresql://postgres:***@" in str(err.value)
    assert "secret-pw" not in str(err.value)
