"""Sign-in end to end in Chromium: a real OpenID Connect provider on localhost (oidc-provider-mock),
the dashboard configured with ``[auth]`` in a secrets file, and the access file giving each address
its role. Sign in, see one's role, label as oneself; sign out; an address the access file does not
admit is refused."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from server import dashboard, free_port, wait_rendered

from evalcore.store import Store
from helpers import SAMPLE

ACCESS = """
[people]
"ana@example.com" = "admin"
"cy@example.com" = "labeler"

[domains]
"example.com" = "viewer"
"""
PEOPLE = {
    "ana": {"email": "ana@example.com", "name": "Ana"},
    "cy": {"email": "cy@example.com", "name": "Cy"},
    "eve": {"email": "eve@example.com", "name": "Eve"},
    "zed": {"email": "zed@elsewhere.org", "name": "Zed"},
}


@pytest.fixture(scope="module")
def provider() -> Iterator[str]:
    """A real OIDC provider on localhost; yields its issuer URL."""
    try:
        from oidc_provider_mock import User, run_server_in_thread
    except ImportError:
        pytest.skip("oidc-provider-mock is not installed (pip install -e '.[test]')")
    users = [User(sub=sub, claims=claims) for sub, claims in PEOPLE.items()]
    with run_server_in_thread(user_claims=users) as server:
        yield f"http://localhost:{server.server_port}"


@pytest.fixture(scope="module")
def team_server(provider: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The dashboard with sign-in on: yields its URL and its store."""
    tmp = tmp_path_factory.mktemp("team")
    port = free_port()
    secrets = tmp / "secrets.toml"
    secrets.write_text(
        "[auth]\n"
        f'redirect_uri = "http://localhost:{port}/oauth2callback"\n'
        'cookie_secret = "e2e-cookie-secret-0123456789abcdef"\n'
        'client_id = "ragtriage-e2e"\n'
        'client_secret = "e2e-client-secret"\n'
        f'server_metadata_url = "{provider}/.well-known/openid-configuration"\n',
        encoding="utf-8",
    )
    access = tmp / "access.toml"
    access.write_text(ACCESS, encoding="utf-8")
    store = tmp / "store.sqlite"
    env = {"RAGTRIAGE_ACCESS": str(access), "RAGTRIAGE_STORE": str(store)}
    with dashboard(
        SAMPLE, env=env, options=[f"--secrets.files={secrets}"], port=port, host="localhost", timeout=90
    ) as url:
        yield url, store


def sign_in(page, url: str, sub: str) -> None:  # type: ignore[no-untyped-def]
    page.goto(url)
    wait_rendered(page)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_selector("input[name='sub']", timeout=30_000)  # the provider's own page
    page.fill("input[name='sub']", sub)
    page.get_by_role("button", name="Authorize").click()
    page.wait_for_url(f"{url}/**", timeout=30_000)
    wait_rendered(page, 60_000)


def sidebar_text(page) -> str:  # type: ignore[no-untyped-def]
    return str(page.locator("[data-testid='stSidebar']").inner_text())


def test_sign_in_role_and_sign_out(team_server: tuple[str, Path], page) -> None:  # type: ignore[no-untyped-def]
    url, _ = team_server
    page.goto(url)
    wait_rendered(page)
    body = page.locator("[data-testid='stMain']").inner_text()
    assert "Sign in to see this team's evaluation runs" in body
    assert "2026-11-16" not in body, "nothing of the runs before sign-in"
    sign_in(page, url, "eve")
    assert "eve@example.com · viewer" in sidebar_text(page)
    assert "What changed in the latest run" in page.locator("[data-testid='stMain']").inner_text()
    page.get_by_role("button", name="Sign out").click()
    # Streamlit ends the session at the provider too (RP-initiated logout): its page confirms.
    page.get_by_role("button", name="End session").click(timeout=30_000)
    page.goto(url)  # the cookie is gone: the dashboard asks again
    wait_rendered(page)
    assert page.get_by_role("button", name="Sign in").count() == 1


def test_an_address_not_admitted_is_refused(team_server: tuple[str, Path], page) -> None:  # type: ignore[no-untyped-def]
    url, _ = team_server
    sign_in(page, url, "zed")
    main = page.locator("[data-testid='stMain']").inner_text()
    assert "zed@elsewhere.org is not admitted to this ragtriage" in main
    assert "What changed" not in main


def test_a_labeler_labels_as_the_signed_in_person(team_server: tuple[str, Path], browser) -> None:  # type: ignore[no-untyped-def]
    url, store = team_server
    with Store(store) as s:  # an admin's session, made from the CLI's side of the store
        from evalcore import load_run
        from evalcore.calibration.sessions import SessionSpec, create

        run = load_run(SAMPLE / "2026-11-16-rerank-prompt-v2")
        create(s, run, "recorded", SessionSpec(name="e2e-week", target="claims", n=10, sampling="uniform"))
    context = browser.new_context(viewport={"width": 1500, "height": 1200})
    page = context.new_page()
    try:
        sign_in(page, f"{url}", "cy")
        page.goto(f"{url}/Calibration?session=e2e-week")
        wait_rendered(page, 60_000)
        main = page.locator("[data-testid='stMain']").inner_text()
        assert "Labeling as cy@example.com" in main and "Your name" not in main
        page.locator(".st-key-cal_pick_0 button").click()
        wait_rendered(page)
        page.locator(".st-key-cal_submit button").click()
        page.wait_for_selector("text=Saved: you said", timeout=30_000)
    finally:
        context.close()
    with Store(store) as s:
        session = s.find_session("e2e-week")
        assert session is not None
        (label,) = s.labels(session.id)
        assert label.labeler == "cy@example.com"
        assert [(r.actor, r.action) for r in s.audit_log(action="label")] == [("cy@example.com", "label")]
