"""The dashboard for a team (AppTest): with ``[auth]`` in the secrets every page asks for sign-in
first; a signed-in address gets the role the access file gives it and sees only what that role may
do; the labeler is the signed-in person; re-judging past the budget is refused before any request;
admins read the audit log. Without ``[auth]``, local mode as before, said in the sidebar. And a run
added to the folder shows on the next page load."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from evalcore.access import Identity
from evalcore.store import Store
from helpers import ROOT, SAMPLE
from tests.dashboard.test_pages import texts as page_texts

RUN = "2026-11-16-rerank-prompt-v2"
ACCESS = """
[people]
"ana@example.com" = "admin"
"ben@example.com" = "operator"
"cy@example.com" = "labeler"

[domains]
"example.com" = "viewer"

[budget]
person = 0.05
"""
AUTH = {
    "redirect_uri": "http://localhost:8501/oauth2callback",
    "cookie_secret": "a-test-cookie-secret",
    "client_id": "ragtriage",
    "client_secret": "not-a-real-secret",
    "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration",
}


@pytest.fixture
def team(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A team's configuration: the access file and a store of its own."""
    access = tmp_path / "access.toml"
    access.write_text(ACCESS, encoding="utf-8")
    monkeypatch.setenv("RAGTRIAGE_ACCESS", str(access))
    monkeypatch.setenv("RAGTRIAGE_RUNS", str(SAMPLE))
    store = tmp_path / "store.sqlite"
    monkeypatch.setenv("RAGTRIAGE_STORE", str(store))
    return store


def texts(at: AppTest) -> str:
    return (
        page_texts(at)
        + "\n"
        + "\n".join(x.value for x in at.success)
        + "\n"
        + "\n".join(c.value for c in at.sidebar.caption)
    ).replace("**", "")


def page(path: str | None, email: str | None, *, sign_in: bool = True, **params: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    if sign_in:
        at.secrets["auth"] = AUTH
        at.user = {"is_logged_in": email is not None, **({"email": email, "name": email} if email else {})}
    if path:
        at.switch_page(path)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, at.exception
    return at


def test_without_auth_it_is_local_mode_as_before(team: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAGTRIAGE_ACCESS")  # one person's install: no access file, no [auth]
    at = page("pages/4_Calibration.py", None, sign_in=False)
    assert "Local mode: no sign-in, every role" in texts(at)
    assert at.button(key="cal_create") is not None  # every role: sessions can be created


def test_an_access_file_without_sign_in_fails_closed(team: Path) -> None:
    """A team's access file with [auth] missing (a typo in secrets.toml) must not open every page to
    everyone as local mode."""
    at = page(None, None, sign_in=False)
    assert "names who may use this ragtriage, but sign-in is not configured" in texts(at)
    assert not at.dataframe and "Local mode" not in texts(at)


def test_an_address_the_provider_has_not_verified_is_nobodys(team: Path) -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    at.secrets["auth"] = AUTH
    at.user = {"is_logged_in": True, "email": "ana@example.com", "email_verified": False}
    at.run()
    assert "ana@example.com is not admitted" in texts(at) and not at.dataframe


def test_with_auth_every_page_asks_for_sign_in_before_showing_runs(team: Path) -> None:
    for path in (None, "pages/2_Compare.py", "pages/7_Audit.py"):
        at = page(path, None)
        assert [b.label for b in at.button] == ["Sign in"]
        assert not at.dataframe and RUN not in texts(at)


def test_an_address_the_access_file_does_not_admit_is_told_so(team: Path) -> None:
    at = page(None, "zed@elsewhere.org")
    assert "zed@elsewhere.org is not admitted to this ragtriage" in texts(at)
    assert [b.label for b in at.button] == ["Sign out"] and not at.dataframe


def test_a_viewer_browses_but_cannot_label_rejudge_or_see_held_out(team: Path) -> None:
    at = page("pages/2_Compare.py", "eve@example.com", base="2026-11-02-hybrid-rerank", cand=RUN)
    shown = texts(at)
    assert "eve@example.com · viewer" in shown
    assert not [e for e in at.expander if "Re-judge" in e.label], "no re-judging offered to a viewer"
    assert not [b for b in at.button if b.key == "cmp_rejudge"]
    assert not [t for t in at.toggle if t.key == "cmp_held"], "held-out questions are for admins"
    assert "Audit" not in [p.label for p in at.sidebar.get("page_link")]
    at = page("pages/4_Calibration.py", "eve@example.com")
    assert "an admin creates them" in texts(at) and not [b for b in at.button if b.key == "cal_create"]


def answerable_dev_question() -> str:
    from evalcore import load_run

    cases = load_run(SAMPLE / RUN).testset.cases
    return str(cases.filter((cases["split"] == "dev") & cases["answerable"])["qid"][0])


def test_a_held_out_link_opens_for_an_admin_and_not_for_a_viewer(team: Path) -> None:
    from evalcore import load_run

    cases = load_run(SAMPLE / RUN).testset.cases
    held = cases.filter(cases["split"] == "heldout")["qid"][0]
    viewer = page("pages/3_Question.py", "eve@example.com", qid=held)
    assert f"'qid={held}'" in texts(viewer) and "only admins see held-out questions" in texts(viewer)
    assert viewer.selectbox(key="q_qid").value is None
    admin = page("pages/3_Question.py", "ana@example.com", qid=held)
    assert admin.selectbox(key="q_qid").value == held
    assert "This is a held-out question" in texts(admin)


def test_the_labeler_is_the_signed_in_person_and_labels_are_theirs(team: Path) -> None:
    admin = page("pages/4_Calibration.py", "ana@example.com")
    admin.selectbox(key="cal_new_run").select(RUN)
    admin.number_input(key="cal_new_n").set_value(10)
    admin.text_input(key="cal_new_name").input("team-week").run()
    admin.button(key="cal_create").click().run()
    assert not admin.exception, admin.exception
    at = page("pages/4_Calibration.py", "cy@example.com")
    assert not [t for t in at.text_input if t.key == "cal_labeler"], "no name field when signed in"
    assert "Labeling as cy@example.com" in texts(at)
    at.button(key="cal_pick_0").click().run()
    at.button(key="cal_submit").click().run()
    assert not at.exception, at.exception
    assert "cy@example.com: 1 of 10 labeled" in at.get("progress")[0].proto.text
    with Store(team) as s:
        session = s.find_session("team-week")
        assert session is not None and session.created_by == "ana@example.com"
        (label,) = s.labels(session.id)
        assert label.labeler == "cy@example.com"
        log = s.audit_log()
    assert [(r.actor, r.action) for r in log] == [
        ("ana@example.com", "create_session"),
        ("cy@example.com", "label"),
    ]
    # The admin closes the session: it takes no more labels.
    admin = page("pages/4_Calibration.py", "ana@example.com")
    admin.button(key="cal_close").click().run()
    at = page("pages/4_Calibration.py", "cy@example.com")
    assert "closed by an admin: it takes no more labels" in texts(at)


def test_an_operator_past_the_budget_is_refused_before_any_request(
    team: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-budget")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")  # a request would fail loudly
    with Store(team, actor=Identity("ben@example.com", "operator")) as s:
        s.reserve(0.049, "rejudge", "run earlier")  # the person's $0.05 is almost spent
    at = page("pages/3_Question.py", "ben@example.com", qid=answerable_dev_question(), run=RUN)
    go = at.button(key="q_rejudge")
    go.click().run()
    shown = re.sub(r"\\(.)", r"\1", "\n".join(e.value for e in at.error))
    assert (
        "refused before any request" in shown
        and "ben@example.com has $0.00 left of a $0.05 daily budget" in shown
    )
    with Store(team) as s:
        assert s.revisions(RUN) == []  # no revision, no request


def test_admins_read_the_audit_log_and_others_are_refused(team: Path) -> None:
    with Store(team, actor=Identity("ben@example.com", "operator")) as s:
        s.new_revision(RUN, "sha", ("m", "p", "s"), note="from the CLI")
    admin = page("pages/7_Audit.py", "ana@example.com")
    log = admin.dataframe[-1].value
    assert list(log["who"]) == ["ben@example.com"] and list(log["action"]) == ["revision"]
    assert "Audit" in [p.label for p in admin.sidebar.get("page_link")]
    other = page("pages/7_Audit.py", "ben@example.com")
    assert "The audit log is for admins: ben@example.com is an operator (admin needed" in texts(other)
    assert not other.dataframe


def test_a_run_added_to_the_folder_shows_on_the_next_page_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    shutil.copy(SAMPLE / "testset.jsonl", folder)
    for run in ("2026-10-05-bm25", "2026-10-19-hybrid"):
        shutil.copytree(SAMPLE / run, folder / run)
    monkeypatch.setenv("RAGTRIAGE_RUNS", str(folder))
    at = page(None, None, sign_in=False)
    assert "2 runs" in texts(at) or "2 runs" in texts(at)
    shutil.copytree(SAMPLE / RUN, folder / RUN)
    at.run()  # the next page load of the same session
    assert (
        "3 runs" in texts(at) and len(next(d.value for d in at.dataframe if "run_id" in d.value.columns)) == 3
    )
    shutil.rmtree(folder / "2026-10-05-bm25")
    fresh = page(None, None, sign_in=False)  # a new tab
    assert "2 runs" in texts(fresh)
