"""The dashboard in a real browser (Debian's Chromium): the triage path, deep links on a fresh
server, and hostile run content rendered as text."""

from __future__ import annotations

import json
import shutil
import urllib.parse
from pathlib import Path

import pytest
from server import ROOT, dashboard, wait_rendered

from helpers import hostile_markdown_runs, md_payload

SAMPLE = ROOT / "sample_runs"
BASE, CAND = "2026-11-02-hybrid-rerank", "2026-11-16-rerank-prompt-v2"


def test_home_to_compare_pick_runs_select_a_regressed_question(page) -> None:  # type: ignore[no-untyped-def]
    with dashboard() as url:
        page.goto(url + "/")
        wait_rendered(page)
        assert page.get_by_role("heading", name="Overview").is_visible()
        page.get_by_role("link", name="Compare").click()
        wait_rendered(page)
        for label, option in (
            ("Baseline", f"Hybrid + reranker · {BASE}"),
            ("Candidate", f"Hybrid + reranker, prompt v2 · {CAND}"),
        ):
            page.get_by_role("combobox", name=label).click()
            page.get_by_role("option", name=option, exact=True).click()
            wait_rendered(page)
        grid = page.locator("[data-testid='stDataFrame']").nth(1)
        grid.scroll_into_view_if_needed()  # a click by position must land inside the window
        box = grid.bounding_box()
        assert box is not None
        # Rows are drawn on a canvas: click the first row's selection cell by position.
        page.mouse.click(box["x"] + 18, box["y"] + 35 + 17)
        page.wait_for_url("**qid=*", timeout=30_000)
        wait_rendered(page)
        assert page.get_by_text("Judge claims").count() == 2, "both runs' claim lists"
        assert page.get_by_text("#1 ·").count() == 2, "both ranked lists, from rank 1"
        assert "base=" + BASE in page.url and "cand=" + CAND in page.url
        # Selecting the row brought the side-by-side into view (not only its heading, at the bottom).
        page.wait_for_timeout(1500)
        heading = page.locator("#side-by-side")
        top = heading.evaluate("e => e.getBoundingClientRect().top")
        assert 0 <= top < 300, f"the side-by-side starts at the top of the window (top={top})"
        # The two ranked lists line up: each rank's two cards start at the same height.
        ones = page.get_by_text("#1 ·")
        a, b = ones.nth(0).bounding_box(), ones.nth(1).bounding_box()
        assert a and b and abs(a["y"] - b["y"]) < 2 and b["x"] > a["x"]


def test_deep_link_on_a_freshly_started_server(page) -> None:  # type: ignore[no-untyped-def]
    with dashboard() as url:
        # The very first request this server sees is the deep link.
        page.goto(f"{url}/Compare?base={BASE}&cand={CAND}&qid=hv-026&status=regressed")
        wait_rendered(page)
        assert page.get_by_role(
            "heading", name="hv-026: Which command starts a snapshot immediately?"
        ).is_visible()
        page.wait_for_timeout(1500)
        top = page.locator("#side-by-side").evaluate("e => e.getBoundingClientRect().top")
        assert 0 <= top < 300, f"a link to a question opens scrolled to it (top={top})"
        assert page.get_by_role("link", name="Overview").is_visible(), (
            "the shared frame (navigation) is there"
        )
        assert page.get_by_text("Only administrators can do this, from the web console.").count() >= 1
        page.goto(f"{url}/Question?qid=hv-026")
        wait_rendered(page)
        assert page.get_by_role("heading", name="Which command starts a snapshot immediately?").is_visible()
        page.goto(f"{url}/Compare?base=nope&cand={CAND}")
        wait_rendered(page)
        assert page.get_by_text("in the link does not exist in this runs folder").is_visible()


PAYLOADS = {
    "question": "Why? <script>window.__pwned='question'</script>",
    "chunk": "Chunk <img src=x onerror=\"window.__pwned='chunk'\"> text",
    "answer": "Answer <script>window.__pwned='answer'</script> <img src=y onerror=\"window.__pwned='answer-img'\">",
    "claim": "Claim <img src=c onerror=\"window.__pwned='claim'\"> made",
    # plotly reads <a href> and <b> in labels: a tag value shows up as an axis label on Breakdown.
    "topic": '<a href="https://evil.invalid/">evil</a> <b>bold</b>',
}


MD_QID = "hv-025"

# A question id is the test set's text too; it shows up in the "Open … across every run" page link.
HOSTILE_QID = "hv-027 ![q](https://evil.invalid/q.png)"


def _hostile_runs(tmp: Path) -> Path:
    runs = tmp / "runs"
    shutil.copytree(SAMPLE, runs)
    for path in [runs / "testset.jsonl", *runs.glob("*/results.jsonl")]:
        path.write_text(path.read_text().replace('"qid": "hv-027"', json.dumps({"qid": HOSTILE_QID})[1:-1]))
    ts = runs / "testset.jsonl"
    lines = [json.loads(x) for x in ts.read_text().splitlines()]
    for rec in lines:
        if rec["qid"] == "hv-026":
            rec["question"] = PAYLOADS["question"]
            rec["tags"]["topic"] = PAYLOADS["topic"]
    ts.write_text("".join(json.dumps(r) + "\n" for r in lines))
    for run_id in (BASE, CAND):
        path = runs / run_id / "results.jsonl"
        recs = [json.loads(x) for x in path.read_text().splitlines()]
        for rec in recs:
            if rec["qid"] == "hv-026":
                rec["answer"] = PAYLOADS["answer"]
                rec["retrieved"][0]["text"] = PAYLOADS["chunk"]
                # A supported claim quoting the hostile markup: the quote is highlighted inside the chunk.
                rec["judge"]["claims"] = [
                    {
                        "claim": PAYLOADS["claim"],
                        "verdict": "SUPPORTED",
                        "quote": "<img src=x onerror",
                        "chunk_id": rec["retrieved"][0]["chunk_id"],
                    }
                ]
        path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    manifest = json.loads((runs / BASE / "run.json").read_text())
    # Markdown too: some widgets (the Question page's run switch) render their option labels as markdown.
    manifest["label"] = (
        "Label <img src=z onerror=\"window.__pwned='label'\"> [link](https://evil.invalid/) "
        "![pixel](https://evil.invalid/p.png)"
    )
    (runs / BASE / "run.json").write_text(json.dumps(manifest))
    # Markdown in every untrusted field of another question (HTML alone Streamlit shows as text anyway).
    hostile_markdown_runs(runs, qid=MD_QID, run_ids=(BASE, CAND))
    return runs


def test_script_and_img_payloads_render_as_text_and_run_nothing(page, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    runs = _hostile_runs(tmp_path)
    dialogs: list[str] = []
    requests: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("request", lambda r: requests.append(r.url))
    every = "&status=unchanged&status=improved&status=regressed&status=mixed"
    with dashboard(runs) as url:
        hostile = urllib.parse.quote(HOSTILE_QID)
        for path in (
            f"/Compare?base={BASE}&cand={CAND}&qid=hv-026",
            "/Question?qid=hv-026",
            f"/Compare?base={BASE}&cand={CAND}&qid={hostile}{every}",
            f"/Compare?base={BASE}&cand={CAND}&qid={MD_QID}{every}",
            f"/Question?qid={MD_QID}&run={BASE}",
        ):
            page.goto(url + path)
            wait_rendered(page)
            page.wait_for_timeout(1000)
            assert page.evaluate("window.__pwned") is None, "no payload ran"
            assert page.locator("img[src='x'], img[src='y'], img[src='z'], img[src='c']").count() == 0, (
                "no injected element"
            )
            assert page.locator("img[src*='evil.invalid']").count() == 0, (
                "no image loaded from run text (label, qid)"
            )
            # A bare URL may be linked (as GitHub does), showing the address itself; a link whose text
            # hides where it goes must not be made from run text.
            links = page.eval_on_selector_all(
                "a[href^='https://evil.invalid']", "els => els.map(e => e.textContent)"
            )
            assert all(t.startswith("https://evil.invalid/") for t in links), links
            body = page.inner_text("body")
            named = [u for u in requests if urllib.parse.urlparse(u).hostname == "evil.invalid"]
            assert not named, f"no request to a host that run text names: {named}"
            if MD_QID in path:
                for field in ("question", "reference", "answer", "claim"):
                    assert md_payload(field) in body, f"the {field}'s markdown is shown as text"
                assert "chunk ![px](https://evil.invalid/chunk.png)" in body
                continue
            if "hv-027" in path:
                assert f"Open {HOSTILE_QID} across every run" in body, "the question id is shown as text"
                continue
            assert "Why? <script>window.__pwned='question'</script>" in body, "the question is shown as text"
            if path.startswith("/Compare"):
                assert "Label <img src=z onerror=" in body, "the run label is shown as text"
                assert "Answer <script>window.__pwned='answer'</script>" in body, (
                    "the answer is shown as text"
                )
                assert "Chunk <img src=x onerror=" in body, "the chunk is shown as text"
                assert "Claim <img src=c onerror=" in body, "the claim is shown as text"
        for path in ("/Breakdown?by=topic", "/Breakdown?by=topic&chart=bars&bar=R@5"):
            page.goto(url + path)
            wait_rendered(page)
            page.wait_for_selector("g.xtick text")
            assert page.locator("svg a").count() == 0, "no link made from a tag value"
            labels = page.evaluate("[...document.querySelectorAll('svg text')].map(t => t.textContent)")
            assert PAYLOADS["topic"] in labels, "the tag value is an axis label, shown as text"
    assert dialogs == []


@pytest.mark.parametrize("path", ["/", "/Breakdown?by=topic", "/Question?qid=hv-001"])
def test_every_page_renders_without_an_exception(page, path: str) -> None:  # type: ignore[no-untyped-def]
    with dashboard() as url:
        page.goto(url + path)
        wait_rendered(page)
        assert page.locator("[data-testid='stException']").count() == 0
        # A team's product: no Deploy button, no developer menu (.streamlit/config.toml).
        assert page.locator("[data-testid='stAppDeployButton']").count() == 0
        assert page.get_by_role("button", name="Deploy").count() == 0
        page.locator("[data-testid='stMainMenu']").click()  # the menu a viewer gets: no developer items
        page.wait_for_selector("[data-testid='stMainMenuList']")
        assert page.get_by_text("Clear cache").count() == 0


def test_a_folder_of_two_unrelated_imported_test_sets(page, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Two Ragas exports imported into sibling folders: every Question page shows its own run's
    question, reference and answer (never the other test set's under the same qid)."""
    from helpers import RAGAS_EXPORTS, mixed_runs_folder

    folder = mixed_runs_folder(tmp_path / "runs")
    with dashboard(folder) as url:
        for name, rows in RAGAS_EXPORTS.items():
            page.goto(f"{url}/Question?qid=ragas-00001&run={name}")
            wait_rendered(page)
            question, reference, _ = rows[0]
            assert page.get_by_role("heading", name=question).is_visible()
            assert page.get_by_text(reference, exact=True).first.is_visible()
            assert page.get_by_text(f"{name} answer: {reference}").is_visible()
            for other, other_rows in RAGAS_EXPORTS.items():
                if other != name:
                    assert page.get_by_text(other_rows[0][0]).count() == 0
        # The sidebar names both test sets; picking the other one lists its questions.
        page.goto(f"{url}/Question")
        wait_rendered(page)
        assert page.get_by_text("Test set").first.is_visible()


def test_the_test_set_picked_in_the_sidebar_stays_picked_on_every_page(page, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Streamlit drops a widget's value when the reader opens another page: the sidebar's test-set
    choice must survive that, whichever page it was made on (it flipped from page to page)."""
    from helpers import mixed_runs_folder

    folder = mixed_runs_folder(tmp_path / "runs")
    sidebar = page.locator("[data-testid='stSidebar']")

    def picked() -> str:
        return sidebar.get_by_role("combobox", name="Test set").input_value()

    def open_page(name: str) -> None:
        sidebar.get_by_role("link", name=name).click()
        page.wait_for_url(f"**/{'' if name == 'Overview' else name}*")
        wait_rendered(page)

    with dashboard(folder) as url:
        page.goto(url)
        wait_rendered(page)
        first = picked()
        other = "hr-policies" if "support-bot" in first else "support-bot"
        sidebar.locator("[data-testid='stSelectbox']").click()
        page.get_by_role("option", name=other, exact=False).click()
        wait_rendered(page)
        assert other in picked()
        for name in ("Compare", "Question", "Breakdown", "Overview", "Compare"):
            open_page(name)
            assert other in picked(), name
        sidebar.locator("[data-testid='stSelectbox']").click()  # picked again, on another page
        page.get_by_role("option", name=first).click()
        wait_rendered(page)
        for name in ("Question", "Overview"):
            open_page(name)
            assert other not in picked(), name


def test_a_typed_api_key_is_masked_and_never_reaches_the_url(page, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The Re-judge panel's key field: masked while typed, never shown back, not in the link."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    key = "sk-ant-browser-test-key-0123456789"
    with dashboard() as url:
        page.goto(f"{url}/Question?qid=hv-026")
        wait_rendered(page)
        page.get_by_text("Re-judge this question").click()
        field = page.get_by_label("Anthropic API key", exact=True)
        assert field.get_attribute("type") == "password"
        field.fill(key)
        field.press("Enter")
        wait_rendered(page)
        assert key not in page.url
        assert key not in page.locator("body").inner_text(), "the key is never shown back as text"
        from playwright.sync_api import expect

        expect(page.get_by_role("button", name="Re-judge", exact=True)).to_be_enabled(timeout=30_000)
