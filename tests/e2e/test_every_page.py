"""Every page, at 1400 and 800 pixels wide, on the five folders a user brings on the first day: the
sample runs, a TREC import (no answers), a Ragas import (no labels), a folder mixing two test sets,
and an empty folder. No page shows Streamlit's Deploy button or developer menu, a traceback, an empty
box where something was meant to be, or an action that cannot apply (judging runs without answers).
A screenshot of each lands in the pytest temp folder for a person to look at."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from server import ROOT, dashboard, wait_rendered

from evalcore.cli import main
from helpers import mixed_runs_folder, write_ragas_exports, write_trec

PAGES = ["/", "/Breakdown", "/Compare", "/Question", "/Calibration", "/Test_set", "/Signals"]

# Empty things a page must not draw: a table with only its header, a bordered box with nothing in
# it, an empty JSON object.
EMPTY = """() => {
  const out = [];
  for (const g of document.querySelectorAll('[data-testid="stDataFrame"] [role="grid"]')) {
    if (Number(g.getAttribute('aria-rowcount') || '2') <= 1) out.push('a table with no row');
  }
  for (const b of document.querySelectorAll('[data-testid="stVerticalBlockBorderWrapper"]')) {
    if (b.getBoundingClientRect().height > 0 && !b.innerText.trim() && !b.querySelector('canvas,svg,img,input'))
      out.push('an empty bordered box');
  }
  for (const j of document.querySelectorAll('[data-testid="stJson"]')) {
    if (j.innerText.replace(/\\s/g, '') === '{}') out.push('an empty JSON object');
  }
  return out;
}"""


def _folders(tmp: Path) -> dict[str, tuple[Path, bool]]:
    """name -> (runs folder, whether its runs have answers to judge)."""
    sample = tmp / "sample"
    shutil.copytree(ROOT / "sample_runs", sample)
    src = tmp / "src"
    src.mkdir()
    qp, rp = write_trec(src)
    trec = tmp / "trec"
    assert (
        main(["import", "trec", "--qrels", str(qp), "--run", str(rp), "--out", str(trec), "--run-id", "bm25"])
        == 0
    )
    ragas = tmp / "ragas"
    export = write_ragas_exports(src)["support-bot"]
    assert main(["import", "ragas", str(export), "--out", str(ragas), "--run-id", "support-bot"]) == 0
    mixed = mixed_runs_folder(tmp / "mixed")
    empty = tmp / "empty"
    empty.mkdir()
    return {
        "sample": (sample, True),
        "trec": (trec, False),
        "ragas": (ragas, True),
        "mixed": (mixed, True),
        "empty": (empty, False),
    }


def test_every_page_on_five_folders_at_two_widths(browser, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    shots = tmp_path / "screenshots"
    shots.mkdir()
    seen: list[str] = []
    for name, (folder, answers) in _folders(tmp_path).items():
        with dashboard(folder) as url:
            for width in (1400, 800):
                context = browser.new_context(viewport={"width": width, "height": 1000})
                page = context.new_page()
                for path in PAGES:
                    where = f"{name} {path} at {width}px"
                    page.goto(url + path)
                    wait_rendered(page, timeout_ms=60_000)
                    page.screenshot(path=str(shots / f"{name}-{path.strip('/') or 'Overview'}-{width}.png"))
                    assert page.get_by_role("button", name="Deploy").count() == 0, where
                    assert page.locator('[data-testid="stAppDeployButton"]').count() == 0, where
                    assert page.locator('[data-testid="stException"]').count() == 0, where
                    assert page.evaluate(EMPTY) == [], where
                    if not answers:
                        body = page.locator("body").inner_text()
                        assert "Re-judge" not in body and "New labeling session" not in body, where
                    seen.append(where)
                context.close()
    assert len(seen) == 5 * 2 * len(PAGES)
    print(f"screenshots: {shots}")


@pytest.mark.parametrize("width", [1400, 800])
def test_the_main_menu_is_a_viewers(browser, width: int) -> None:  # type: ignore[no-untyped-def]
    """Viewer mode: the main menu holds no developer entries (Rerun/Clear cache/Settings stay for
    everyone; 'Developer options' and 'Deploy' do not appear)."""
    with dashboard() as url:
        context = browser.new_context(viewport={"width": width, "height": 900})
        page = context.new_page()
        page.goto(url + "/")
        wait_rendered(page)
        menu = page.locator('[data-testid="stMainMenu"]')
        if menu.count():
            menu.click()
            text = page.locator("body").inner_text()
            assert "Developer options" not in text and "Deploy" not in text
            assert "Clear cache" not in text
        context.close()
