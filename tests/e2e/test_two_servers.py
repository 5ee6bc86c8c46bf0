"""The issue's whole team, end to end in Chromium: a real OpenID provider, PostgreSQL, a local
S3-compatible server holding the sample runs, a local Messages API, and two dashboard servers over
them. Four people sign in at once on the two servers: two labelers label one session from different
servers, a viewer can neither label nor re-judge, an operator re-judges within the daily budget and
is refused past it. Every label and revision carries its author; no label is lost and no item passes
its quota."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import ExitStack

import pg
import pytest
import s3
from server import dashboard, free_port, wait_rendered

from evalcore.access import Identity
from evalcore.calibration.sessions import SessionSpec, create
from evalcore.store import Store
from helpers import SAMPLE
from tests.judge.mock_api import mock_api

RUN = "2026-11-16-rerank-prompt-v2"
ACCESS = """
[people]
"ana@example.com" = "admin"
"ben@example.com" = "operator"
"cy@example.com" = "labeler"
"dee@example.com" = "labeler"

[domains]
"example.com" = "viewer"

[budget]
person = 0.012      # one question's re-judge (about $0.008 estimated) fits; fourteen more do not
"""
PEOPLE = {
    name: {"email": f"{name}@example.com", "name": name.title()}
    for name in ("ana", "ben", "cy", "dee", "eve")
}
LABELS_EACH = 3


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    why = pg.missing() or s3.missing()
    if why:
        pytest.skip(why)
    try:
        from oidc_provider_mock import User, run_server_in_thread
    except ImportError:
        pytest.skip("oidc-provider-mock is not installed (pip install -e '.[test]')")
    tmp = tmp_path_factory.mktemp("team-e2e")
    with ExitStack() as stack:
        pg_url = pg.fresh_database(stack.enter_context(pg.server()))
        endpoint = stack.enter_context(s3.server())
        s3.upload(endpoint, SAMPLE, "team", "runs")
        provider = stack.enter_context(
            run_server_in_thread(user_claims=[User(sub=k, claims=v) for k, v in PEOPLE.items()])
        )
        judge_api = stack.enter_context(mock_api())
        access = tmp / "access.toml"
        access.write_text(ACCESS, encoding="utf-8")
        # The admin opens a session from their side of the store: 6 claims, one label each.
        with Store(pg_url, actor=Identity("ana@example.com", "admin")) as store:
            from evalcore import load_run

            create(
                store,
                load_run(SAMPLE / RUN),
                "recorded",
                SessionSpec(name="team-week", n=6, labels_per_item=1),
            )
        servers = {}
        for name in ("A", "B"):
            port = free_port()
            secrets = tmp / f"secrets-{name}.toml"
            secrets.write_text(
                "[auth]\n"
                f'redirect_uri = "http://localhost:{port}/oauth2callback"\n'
                'cookie_secret = "team-e2e-cookie-secret-0123456789"\n'
                'client_id = "ragtriage-team"\n'
                'client_secret = "team-client-secret"\n'
                f'server_metadata_url = "http://localhost:{provider.server_port}/.well-known/openid-configuration"\n',
                encoding="utf-8",
            )
            env = {
                "RAGTRIAGE_RUNS": "s3://team/runs",
                "RAGTRIAGE_STORE": pg_url,
                "RAGTRIAGE_ACCESS": str(access),
                "RAGTRIAGE_CACHE_DIR": str(tmp / f"cache-{name}"),
                "ANTHROPIC_API_KEY": "sk-ant-team-e2e-key-0123456789",
                "ANTHROPIC_BASE_URL": judge_api.url,
                **s3.environment(endpoint),
            }
            servers[name] = stack.enter_context(
                dashboard(
                    env=env, options=[f"--secrets.files={secrets}"], port=port, host="localhost", timeout=120
                )
            )
        yield {"servers": servers, "store": pg_url, "api": judge_api}


def signed_in(browser, url: str, who: str):  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": 1500, "height": 1300})
    page = context.new_page()
    page.goto(url)
    wait_rendered(page, 90_000)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_selector("input[name='sub']", timeout=30_000)
    page.fill("input[name='sub']", who)
    page.get_by_role("button", name="Authorize").click()
    page.wait_for_url(f"{url}/**", timeout=30_000)
    wait_rendered(page, 90_000)
    assert f"{who}@example.com ·" in page.locator("[data-testid='stSidebar']").inner_text()
    return context, page


def main_text(page) -> str:  # type: ignore[no-untyped-def]
    return str(page.locator("[data-testid='stMain']").inner_text())


def open_page(page, url: str) -> None:  # type: ignore[no-untyped-def]
    page.goto(url)
    wait_rendered(page, 90_000)


def label_one(page) -> None:  # type: ignore[no-untyped-def]
    page.locator(".st-key-cal_pick_0 button").click()
    wait_rendered(page)
    page.locator(".st-key-cal_submit button").click()
    page.wait_for_selector("text=Saved: you said", timeout=30_000)
    wait_rendered(page)


def test_a_team_on_two_servers(team: dict, browser) -> None:  # type: ignore[no-untyped-def]
    a, b = team["servers"]["A"], team["servers"]["B"]
    contexts = []
    try:
        cy_ctx, cy = signed_in(browser, a, "cy")
        dee_ctx, dee = signed_in(browser, b, "dee")
        eve_ctx, eve = signed_in(browser, b, "eve")
        ben_ctx, ben = signed_in(browser, a, "ben")
        contexts += [cy_ctx, dee_ctx, eve_ctx, ben_ctx]
        assert "s3://team/runs" in cy.locator("[data-testid='stSidebar']").inner_text()

        # Two labelers on two servers, turn about, on one session of one label per item.
        for page, url in ((cy, a), (dee, b)):
            open_page(page, f"{url}/Calibration?session=team-week")
            assert "Labeling as" in main_text(page) and "Your name" not in main_text(page)
        for _ in range(LABELS_EACH):
            label_one(cy)
            label_one(dee)
        # Every item has its label now: a fresh load says so (the pages as they were rendered after
        # each save may show an item the other person took meanwhile).
        open_page(dee, f"{b}/Calibration?session=team-week")
        assert "Nothing left for you in this session" in main_text(dee)

        # The viewer browses but can neither label nor re-judge.
        open_page(eve, f"{b}/Calibration?session=team-week")
        assert "Labeling needs the labeler role (you are a viewer)" in main_text(eve)
        assert eve.locator(".st-key-cal_submit").count() == 0
        open_page(eve, f"{b}/Compare?base=2026-11-02-hybrid-rerank&cand={RUN}")
        assert "Re-judge" not in main_text(eve), "no re-judging offered to a viewer"
        assert eve.locator(".st-key-cmp_rejudge").count() == 0

        # The operator re-judges one question within the budget, then is refused past it.
        from evalcore import load_run

        cases = load_run(SAMPLE / RUN).testset.cases
        qid = cases.filter((cases["split"] == "dev") & cases["answerable"])["qid"][0]
        open_page(ben, f"{a}/Question?qid={qid}&run={RUN}")
        ben.get_by_text("Re-judge this question").click()
        button = ben.locator(".st-key-q_rejudge button")
        button.wait_for(state="visible", timeout=60_000)  # (the expander opened, under load too)
        assert button.is_enabled(), main_text(ben)[-1500:]
        button.click()
        wait_rendered(ben, 90_000)
        with Store(team["store"]) as store:  # the verdict is committed as it arrives
            deadline = time.monotonic() + 60
            while [r.verdicts for r in store.revisions(RUN)] != [1] and time.monotonic() < deadline:
                time.sleep(0.2)
            assert [r.verdicts for r in store.revisions(RUN)] == [1], (
                "the operator's re-judge is in the store; the page says: " + main_text(ben)[-1500:]
            )
        wait_rendered(ben, 90_000)
        sent = sum(team["api"].requests.values())
        assert sent == 1
        open_page(ben, f"{a}/Compare?base=2026-11-02-hybrid-rerank&cand={RUN}")
        ben.get_by_text("Re-judge the").first.click()
        wait_rendered(ben)
        ben.locator(".st-key-cmp_rejudge button").click()
        ben.wait_for_selector("text=refused before any request", timeout=60_000)
        assert "ben@example.com has $0.00 left of a $0.01 daily budget" in main_text(ben) or (
            "left of a $0.01 daily budget" in main_text(ben)
        )
        assert sum(team["api"].requests.values()) == sent, "nothing was sent past the budget"
    finally:
        for c in contexts:
            c.close()

    with Store(team["store"]) as store:
        session = store.find_session("team-week")
        assert session is not None
        labels = store.labels(session.id, history=True)
        by = sorted(lb.labeler for lb in labels)
        assert by == ["cy@example.com"] * LABELS_EACH + ["dee@example.com"] * LABELS_EACH  # none lost
        per_item = [lb.item_id for lb in labels]
        assert len(per_item) == len(set(per_item)) == 6, "one label per item: the quota held"
        revisions = store.revisions(RUN)
        assert [r.created_by for r in revisions] == ["ben@example.com"]
        log = store.audit_log()
        assert {(r.actor, r.action) for r in log} >= {
            ("ana@example.com", "create_session"),
            ("cy@example.com", "label"),
            ("dee@example.com", "label"),
            ("ben@example.com", "reserve"),
            ("ben@example.com", "revision"),
        }
        spent = store.spent_today()
        assert spent["ben@example.com"] <= 0.012 and set(spent) == {"ben@example.com"}
        print(json.dumps({"labels": len(labels), "revisions": len(revisions), "spent": spent}))
