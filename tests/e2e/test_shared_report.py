"""A report that travels: `evalcore report` and Compare's download write one HTML page that opens in
Chromium with the network off, shows the forest plot, and shows every hostile text as text."""

from __future__ import annotations

import json
from pathlib import Path

from server import dashboard, wait_rendered
from test_browser import BASE, CAND, PAYLOADS, _hostile_runs

from evalcore.cli import main
from evalcore.escape import html_text


def _regressing_runs(tmp: Path) -> Path:
    """The hostile runs of the page tests, with hv-026's hostile claim unsupported in the candidate:
    a regressed question, so the report shows its texts side by side."""
    runs = _hostile_runs(tmp)
    path = runs / CAND / "results.jsonl"
    recs = [json.loads(x) for x in path.read_text().splitlines()]
    for rec in recs:
        if rec["qid"] == "hv-026":
            rec["judge"]["claims"] = [{"claim": PAYLOADS["claim"], "verdict": "NOT_SUPPORTED"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return runs


def _sources(text: str) -> list[str]:
    """The src/href of every script, link and image tag (script bodies are not parsed as tags)."""
    from html.parser import HTMLParser

    found: list[str] = []

    class Tags(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if tag in ("script", "link", "img", "iframe"):
                found.extend(v or "" for k, v in attrs if k in ("src", "href"))

    Tags().feed(text)
    return found


def _open_offline(browser, url: str):  # type: ignore[no-untyped-def]
    context = browser.new_context(offline=True, viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url))
    page.goto(url)
    page.wait_for_selector("#forest .js-plotly-plot .point", timeout=30_000)
    return context, page, asked


def test_the_html_report_opens_offline_with_its_forest_plot_and_no_markup_from_the_files(
    browser, tmp_path: Path, capsys
) -> None:  # type: ignore[no-untyped-def]
    runs = _regressing_runs(tmp_path)
    out = tmp_path / "report.html"
    assert main(["report", str(runs / BASE), str(runs / CAND), "--out", str(out), "--top", "40"]) == 0
    assert "4 metrics moved significantly" in capsys.readouterr().out
    text = out.read_text()
    assert _sources(text) == [], "no script, style or image from elsewhere"
    for name in ("question", "answer", "chunk", "claim"):
        assert PAYLOADS[name] not in text, f"the {name} went into the page as markup"
        assert html_text(PAYLOADS[name]) in text, f"the {name} is shown as written"
    context, page, asked = _open_offline(browser, out.as_uri())
    try:
        assert [u for u in asked if not u.startswith("file:")] == [], "the page asked the network"
        assert page.locator("#forest .point").count() >= 10, "one point per metric"
        assert page.get_by_text("worse (significant)").first.is_visible()
        assert page.evaluate("window.__pwned") is None, "a hostile text ran as script"
        assert page.get_by_text(PAYLOADS["question"]).first.is_visible(), "the question, literally"
        assert page.get_by_text(PAYLOADS["claim"]).first.is_visible()
    finally:
        context.close()


def test_the_markdown_report_escapes_what_a_pull_request_would_render(tmp_path: Path) -> None:
    runs = _regressing_runs(tmp_path)
    out = tmp_path / "report.md"
    assert (
        main(["report", str(runs / BASE), str(runs / CAND), "--format", "markdown", "--out", str(out)]) == 0
    )
    text = out.read_text()
    assert "**Significantly worse:**" in text and "| metric | n | baseline |" in text
    import re

    # Markup a renderer would act on: a "<" or "](" not escaped (the footer's own <sub> aside).
    assert re.findall(r"(?<!\\)<(?!/?sub>)", text) == [], "HTML from a file would render"
    assert re.findall(r"(?<!\\)\]\(", text) == [], "a link or image from a file would render"
    assert "Label \\<img src\\=z" in text


def test_compare_downloads_the_same_report(page, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    runs = _regressing_runs(tmp_path)
    with dashboard(runs) as url:
        page.goto(f"{url}/Compare?base={BASE}&cand={CAND}")
        wait_rendered(page)
        with page.expect_download() as got:
            page.get_by_role("button", name="Download report (HTML)").click()
        path = tmp_path / got.value.suggested_filename
        got.value.save_as(path)
    assert path.name == f"report-{BASE}-vs-{CAND}.html"
    text = path.read_text()
    assert "id=forest" in text and html_text(PAYLOADS["answer"]) in text
    assert PAYLOADS["answer"] not in text
