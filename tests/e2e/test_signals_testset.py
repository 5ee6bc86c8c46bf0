"""The Signals and Test set pages in a real browser: the planted incident alerted and charted, a
logged question's e-mail address redacted before promotion, and a slice's power in words."""

from __future__ import annotations

import shutil
from pathlib import Path

from server import ROOT, dashboard, wait_rendered


def test_signals_and_test_set_pages(page, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    runs = tmp_path / "runs"
    shutil.copytree(ROOT / "sample_runs", runs)
    monkeypatch.setenv("RAGTRIAGE_STORE", str(tmp_path / "store.sqlite"))
    line = next(
        i
        for i, t in enumerate((runs / "logs" / "production.jsonl").read_text().splitlines(), start=1)
        if "@example.com" in t
    )
    with dashboard(runs) as url:
        page.goto(f"{url}/Signals")
        wait_rendered(page)
        alert = page.locator("[data-testid='stAlertContentError']").first.inner_text()
        assert "2026-11-19: the no-answer rate rose to 42%" in alert
        assert page.locator("[data-testid='stPlotlyChart']").count() == 2
        page.screenshot(path=str(tmp_path / "signals.png"))

        page.goto(f"{url}/Signals?mode=Promote&line={line}")
        wait_rendered(page)
        assert (
            "Personal data found: email"
            in page.locator("[data-testid='stAlertContentWarning']").first.inner_text()
        )
        box = page.locator(f".st-key-sig_q_{line} textarea").input_value()
        assert "[EMAIL]" in box and "@example.com" not in box

        page.goto(f"{url}/Test_set?mode=Power&slice=billing&change=-0.02")
        wait_rendered(page)
        info = page.locator("[data-testid='stAlertContentInfo']").first.inner_text()
        assert "to see a 2-point drop in R@5 on billing you need about" in info and "you have 25" in info
