"""Labeling in a real browser, keyboard first: number keys pick, Enter submits and advances, arrows
move, ? shows the keys, and none of them fire while typing the rationale. Two labelers in two tabs
at once: nothing lost, no item past its quota."""

from __future__ import annotations

from pathlib import Path

import pytest
from server import ROOT, dashboard, wait_rendered

from evalcore.calibration.sessions import SessionSpec, create
from evalcore.runs.load import load_runs
from evalcore.store import Store

RUN = "2026-11-16-rerank-prompt-v2"


@pytest.fixture
def session_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "store.sqlite"
    monkeypatch.setenv("RAGTRIAGE_STORE", str(path))
    with Store(path) as s:
        create(
            s,
            load_runs(ROOT / "sample_runs").runs[RUN],
            "recorded",
            SessionSpec(name="kb", n=6, labels_per_item=2),
        )
    return path


def progress(page) -> str:  # type: ignore[no-untyped-def]
    return page.locator("[data-testid='stProgress']").inner_text()


def blur(page) -> None:  # type: ignore[no-untyped-def]
    """Leave any field, as a labeler clicking the page would."""
    page.evaluate("document.activeElement && document.activeElement.blur()")


def press(page, key: str) -> None:  # type: ignore[no-untyped-def]
    page.keyboard.press(key)
    page.wait_for_timeout(150)
    wait_rendered(page)


def test_label_with_the_keyboard_in_two_tabs_at_once(page, session_store: Path) -> None:  # type: ignore[no-untyped-def]
    with dashboard() as url:
        ann = page
        bob = page.context.new_page()
        for tab, who in ((ann, "ann"), (bob, "bob")):
            tab.goto(f"{url}/Calibration?session=kb&labeler={who}")
            wait_rendered(tab)
            assert f"{who}: 0 of 6 labeled" in progress(tab)
        blur(ann)
        press(ann, "2")
        picked = ann.locator(".st-key-cal_pick_1 button")
        assert picked.get_attribute("data-testid") == "stBaseButton-primary", "2 picks NOT_SUPPORTED"
        # typing in the rationale is typing: '3' lands in the box, the pick stays
        box = ann.get_by_label("Rationale (optional, encouraged)")
        box.click()
        box.type("page 3 says otherwise")
        blur(ann)
        wait_rendered(ann)
        assert (
            ann.locator(".st-key-cal_pick_2 button").get_attribute("data-testid") == "stBaseButton-secondary"
        )
        assert box.input_value() == "page 3 says otherwise"
        press(ann, "Enter")
        body = ann.locator("body").inner_text()
        assert "Saved: you said NOT_SUPPORTED; the judge said" in body
        assert "ann: 1 of 6 labeled" in progress(ann)
        press(ann, "?")
        assert "submit the label and go to the next item" in ann.locator("body").inner_text()
        press(ann, "ArrowLeft")
        assert "Your label: NOT_SUPPORTED (version 1)" in ann.locator("body").inner_text()
        press(ann, "ArrowRight")
        # now both label the rest at once, alternating key presses
        for _ in range(8):
            for tab in (ann, bob):
                if "Nothing left for you" in tab.locator("body").inner_text():
                    continue
                blur(tab)
                press(tab, "1")
                press(tab, "Enter")
        for tab, who in ((ann, "ann"), (bob, "bob")):
            assert "Nothing left for you in this session: 6 labeled" in tab.locator("body").inner_text(), who
        assert page.locator("[data-testid='stException']").count() == 0
    with Store(session_store) as s:
        session = s.find_session("kb")
        assert session is not None
        labels = s.labels(session.id)
        history = s.labels(session.id, history=True)
    assert len(labels) == 12 and {lb.labeler for lb in labels} == {"ann", "bob"}
    per_item: dict[int, int] = {}
    for lb in labels:
        per_item[lb.item_id] = per_item.get(lb.item_id, 0) + 1
    assert set(per_item.values()) == {2}
    first = next(lb for lb in history if lb.rationale)
    assert (first.labeler, first.label, first.rationale) == ("ann", "NOT_SUPPORTED", "page 3 says otherwise")
