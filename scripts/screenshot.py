"""Take a screenshot of a dashboard page on sample_runs/ (or --runs DIR) with Debian's Chromium.

python scripts/screenshot.py /compare?base=...&cand=... docs/compare.png
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "e2e"))

from server import CHROMIUM, CHROMIUM_ARGS, dashboard, wait_rendered


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("path", help="page path with query string, e.g. / or /compare?base=a&cand=b")
    ap.add_argument("out", type=Path)
    ap.add_argument("--runs", type=Path)
    ap.add_argument("--width", type=int, default=1500)
    ap.add_argument("--height", type=int, default=1100)
    ap.add_argument(
        "--click-row",
        type=int,
        help="click this row (0-based) of the page's second table (Compare's questions)",
    )
    ap.add_argument("--viewport", action="store_true", help="only what the window shows, not the full page")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    with dashboard(args.runs) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": args.width, "height": args.height})
        page.goto(url + args.path)
        wait_rendered(page)
        if args.click_row is not None:
            grid = page.locator("[data-testid='stDataFrame']").nth(1)
            grid.scroll_into_view_if_needed()
            box = grid.bounding_box()
            assert box is not None
            # Rows are drawn on a canvas: click the row's selection cell by position (35 px rows).
            page.mouse.click(box["x"] + 18, box["y"] + 35 + 35 * args.click_row + 17)
            page.wait_for_url("**qid=*", timeout=30_000)
            wait_rendered(page)
        if not args.viewport:
            # Streamlit scrolls its main area inside the page, so a "full page" screenshot stops at
            # the window's height: make the window as tall as what the main area holds.
            tall = page.evaluate(
                "() => Math.max(document.body.scrollHeight, ...Array.from(document.querySelectorAll("
                "\"[data-testid='stMain'], [data-testid='stAppViewContainer']\"), e => e.scrollHeight))"
            )
            if tall > args.height:
                page.set_viewport_size({"width": args.width, "height": int(tall) + 40})
                wait_rendered(page)
        page.wait_for_timeout(1500)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(args.out), full_page=not args.viewport)
        browser.close()
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
