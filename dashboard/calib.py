"""The Calibration page's state and store access: sessions, the labeler's next item, submitting a
label (a callback, so Enter submits and advances in one rerun), and the agreement report.

Blind labeling is kept here, not in the page: :func:`shown` gives the page what a labeler may see
of an item — never the judge's verdict or another labeler's label until the labeler has labeled it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import polars as pl
import streamlit as st

from dashboard.data import Key, entries, load_run_cached, store
from evalcore.access import Forbidden
from evalcore.calibration import (
    RUBRICS,
    TARGETS,
    SessionReport,
    SessionSpec,
    candidates,
    create,
    order_for,
    preview,
    session_report,
)
from evalcore.judge import RECORDED, judged_by
from evalcore.store import ItemRow, LabelRow, QuotaFull, SessionClosed, SessionRow

KEYS = (
    ("1 – 4", "pick a label"),
    ("Enter", "submit the label and go to the next item"),
    ("← / →", "previous / next item (your labeled ones stay open to change)"),
    ("?", "show or hide these keys"),
)

# Keyboard first. A static script (no run text in it) clicks the page's buttons by their widget
# keys; it ignores keys typed in the rationale box or any other field, and anything with a modifier.
SHORTCUTS_JS = """
<script>
(function () {
  const doc = window.parent.document;
  if (doc.__ragtriageCalibrationKeys) return;
  doc.__ragtriageCalibrationKeys = true;
  const click = (key) => {
    const el = doc.querySelector('.st-key-' + key + ' button');
    if (el && !el.disabled) { el.click(); return true; }
    return false;
  };
  doc.addEventListener('keydown', (e) => {
    const t = e.target;
    if (t && (t.tagName === 'TEXTAREA' || t.tagName === 'INPUT' || t.isContentEditable)) return;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (!doc.querySelector('.st-key-cal_submit')) return;  // only while labeling
    let key = null;
    if (['1', '2', '3', '4'].includes(e.key)) key = 'cal_pick_' + (Number(e.key) - 1);
    else if (e.key === 'Enter') key = 'cal_submit';
    else if (e.key === 'ArrowLeft') key = 'cal_prev';
    else if (e.key === 'ArrowRight') key = 'cal_next';
    else if (e.key === '?') key = 'cal_keys';
    if (key && click(key)) e.preventDefault();
  }, true);
})();
</script>
"""


def keys_table() -> pl.DataFrame:
    return pl.DataFrame({"key": [k for k, _ in KEYS], "does": [d for _, d in KEYS]})


def sessions(test_run_ids: list[str]) -> list[SessionRow]:
    """The store's sessions on runs of this test set, and reviews of production logs, newest first."""
    return [
        s for s in reversed(store().sessions()) if s.run_id in test_run_ids or s.run_id.startswith("log:")
    ]


def judges_of(folder: str, run_id: str, key: Key) -> list[str]:
    """What a session on ``run_id`` can be made from: the run file's verdicts and each revision."""
    run = load_run_cached(folder, run_id, key)
    revs = store().revisions(run.run_id, run.results_sha256())
    return [RECORDED, *[str(r.id) for r in reversed(revs) if r.verdicts > r.failed]]


@st.cache_data(show_spinner=False, max_entries=32)
def _candidates(
    folder: str, run_id: str, judge: str, target: str, key: Key, stamp: int
) -> list[dict[str, Any]]:
    run = load_run_cached(folder, run_id, key)
    return candidates(judged_by(store(), run, judge), target)


def session_preview(folder: str, run_id: str, judge: str, spec: SessionSpec, key: Key) -> str:
    cands = _candidates(folder, run_id, judge, spec.target, key, store().newest_revision_id())
    if not cands:
        return "This run has nothing of that kind judged under that judge: pick another run, judge or target."
    return preview(cands, spec)


def create_session(folder: str, run_id: str, judge: str, spec: SessionSpec, key: Key) -> int:
    return create(store(), load_run_cached(folder, run_id, key), judge, spec)


def rubric(target: str) -> str:
    return RUBRICS[target]


def labels_for(target: str) -> tuple[str, ...]:
    return TARGETS[target]


@dataclass(frozen=True)
class Place:
    """Where a labeler is in a session."""

    item: ItemRow | None  # the item on screen (None: nothing left for them)
    done: int  # items they labeled
    total: int  # items they can label in all
    mine: LabelRow | None  # their current label of this item (then the verdict may be shown)
    others: list[LabelRow]  # other people's labels of it (shown only when ``mine``)
    prev: int | None
    next: int | None


def place(session: SessionRow, labeler: str) -> Place:
    """The item on screen for ``labeler``: the one they moved to with ←/→, else their next unlabeled."""
    s = store()
    items = {i.id: i for i in s.items(session.id)}
    mine_ids = s.held_by(session.id, labeler)
    full = s.full_items(session.id)
    order = [i for i in order_for(labeler, list(items), session.id) if i in mine_ids or i not in full]
    at = st.session_state.get("cal_at")
    if at not in order:
        at = next((i for i in order if i not in mine_ids), None)
    labels = [lb for lb in s.labels(session.id) if lb.item_id == at] if at is not None else []
    mine = next((lb for lb in labels if lb.labeler == labeler), None)
    pos = order.index(at) if at is not None else len(order)
    return Place(
        item=items.get(at) if at is not None else None,
        done=len(mine_ids),
        total=len(order),
        mine=mine,
        others=[lb for lb in labels if lb.labeler != labeler] if mine else [],
        prev=order[pos - 1] if pos > 0 else None,
        next=order[pos + 1] if pos + 1 < len(order) else None,
    )


def close(session: SessionRow) -> None:
    """An admin's button: the session takes no more labels."""
    try:
        store().close_session(session.id)
    except PermissionError as exc:  # (the role was lowered while the page was open)
        st.session_state["cal_msg"] = str(exc)


def go(item_id: int | None) -> None:
    st.session_state["cal_at"] = item_id
    st.session_state.pop("cal_pick", None)


def pick(label: str) -> None:
    st.session_state["cal_pick"] = label


def submit(item: ItemRow, labeler: str) -> None:
    """Enter's callback: store the picked label (a new version if the labeler had one), keep what to
    reveal about it, and move on to the labeler's next unlabeled item."""
    label = st.session_state.get("cal_pick")
    if not label:
        st.session_state["cal_msg"] = "Pick a label first (keys 1 – 4)."
        return
    rationale = (st.session_state.get("cal_rationale") or "").strip() or None
    try:
        store().submit_label(item.id, labeler, label, rationale)
    except (SessionClosed, Forbidden) as exc:
        st.session_state["cal_msg"] = str(exc)
        return
    except QuotaFull:
        st.session_state["cal_msg"] = (
            "Another labeler just took this item's last label slot; it was not counted twice. Here is another item."
        )
        go(None)
        return
    st.session_state["cal_last"] = {"item": item.id, "label": label, "judge": item.judge_label}
    st.session_state["cal_rationale"] = ""
    go(None)


@st.cache_data(show_spinner="Measuring agreement…", max_entries=32)
def _report(
    session_id: int,
    judge: str | None,
    by: str | None,
    tags: Any,
    labels_stamp: int,
    revs_stamp: int,
    reader: str,
) -> SessionReport:
    # ``reader``: labels are read blind per person (the store hands a labeler only what they may
    # see), so one reader's report is never served to another.
    session = store().find_session(session_id)
    assert session is not None
    return session_report(
        store(), session, judge=judge, by=by, tags={q: dict(t) for q, t in tags}, resamples=1000
    )


def report(session: SessionRow, judge: str | None, by: str | None, folder: str, key: Key) -> SessionReport:
    tags: dict[str, dict[str, str]] = {}
    run = entries(folder, key).get(session.run_id)
    if by and run is not None:
        for qid, tag, value in run.testset.tags.select("qid", "tag", "value").iter_rows():
            tags.setdefault(qid, {})[tag] = value
    frozen = tuple(sorted((q, tuple(sorted(t.items()))) for q, t in tags.items()))
    s = store()
    reader = f"{s.actor.email}|{s.actor.may('see_labels')}"
    return _report(session.id, judge, by, frozen, s.labels_stamp(), s.newest_revision_id(), reader)


def revisions_for(session: SessionRow) -> list[str]:
    """Judge revisions of the session's run file that can be measured on its labels."""
    return [
        str(r.id)
        for r in store().revisions(session.run_id, session.results_sha256)
        if str(r.id) != session.judge and r.verdicts > r.failed
    ]


def item(item_id: int, session: SessionRow) -> ItemRow | None:
    return next((i for i in store().items(session.id) if i.id == item_id), None)


def tags_of(folder: str, run_id: str, key: Key) -> list[str]:
    run = entries(folder, key).get(run_id)
    return sorted(set(run.testset.tags["tag"].to_list())) if run is not None else []


# ---- bias probes


def probe_names() -> tuple[str, ...]:
    from evalcore.calibration import PROBES

    return PROBES


def probe_plan(folder: str, run_id: str, probes: list[str], n: int, key: Key) -> str:
    from evalcore.calibration import plan
    from evalcore.judge import JudgeConfig

    return plan(load_run_cached(folder, run_id, key), store(), JudgeConfig(), probes, n)


def run_probes(
    folder: str, run_id: str, probes: list[str], n: int, key: Key, api_key: str | None, on_verdict: Any
) -> list[Any]:
    """Run the probes (the key, if typed, is passed to the client and kept nowhere)."""
    from evalcore.calibration import probe

    return probe(
        load_run_cached(folder, run_id, key),
        store(),
        probes=probes,
        n=n,
        api_key=api_key,
        on_verdict=on_verdict,
    )


def probe_table(run_ids: list[str]) -> Any:
    """Kept probe results of these runs, newest first, as a table."""
    import polars as pl

    rows = [r for rid in run_ids for r in store().probes(rid)]
    rows.sort(key=lambda r: -r["id"])
    return pl.DataFrame(
        {
            "when": [r["created"][:19].replace("T", " ") for r in rows],
            "run": [r["run_id"] for r in rows],
            "judge": [r["judge_key"].split("|")[0] for r in rows],
            "probe": [r["probe"] for r in rows],
            "flipped": [f"{r['flips']} of {r['n']}" for r in rows],
            "rate": [r["rate"] for r in rows],
            "95% CI low": [r["low"] for r in rows],
            "95% CI high": [r["high"] for r in rows],
            "beyond noise floor": [
                "–"
                if r["detail"].get("beyond_noise") is None
                else ("yes" if r["detail"]["beyond_noise"] else "no")
                for r in rows
            ],
            "p": [r["detail"].get("p") for r in rows],
        },
        schema_overrides={"p": pl.Float64},
    )


# ---- the agreement view's tables (the page only lays them out)


def statistics_table(rep: SessionReport, target: str) -> pl.DataFrame:
    """Each statistic with its 95% CI and what it was computed on; people among themselves first."""
    a = rep.overall
    rows = [("percent agreement", a.percent), ("Cohen's κ", a.kappa), ("Gwet's AC1", a.ac1)]
    if target == "claims":
        rows += [
            ("NOT_SUPPORTED: judge precision", a.precision_unsupported),
            ("NOT_SUPPORTED: judge recall", a.recall_unsupported),
        ]
    people = [(f"labelers: κ {x} / {y}", k) for (x, y), k in a.pair_kappa.items()]
    if a.human_alpha is not None:
        people.insert(0, ("labelers: Krippendorff's α", a.human_alpha))
    rows = people + rows
    return pl.DataFrame(
        {
            "statistic": [r[0] for r in rows],
            "value": [r[1].value for r in rows],
            "95% CI low": [r[1].low for r in rows],
            "95% CI high": [r[1].high for r in rows],
            "items": [r[1].n for r in rows],
            "answers": [r[1].answers for r in rows],
        }
    )


def confusion_table(rep: SessionReport) -> pl.DataFrame:
    a = rep.overall
    return pl.DataFrame(
        {"people": a.categories, **{c: [row[j] for row in a.confusion] for j, c in enumerate(a.categories)}}
    )


def slices_table(rep: SessionReport) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "slice": list(rep.by),
            "items": [x.items for x in rep.by.values()],
            "AC1": [x.ac1.value for x in rep.by.values()],
            "AC1 low": [x.ac1.low for x in rep.by.values()],
            "AC1 high": [x.ac1.high for x in rep.by.values()],
            "percent": [x.percent.value for x in rep.by.values()],
        }
    )


def disagreements_table(rep: SessionReport) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "qid": [d["qid"] for d in rep.disagreements],
            "claim": [d["claim"] or "(the answer)" for d in rep.disagreements],
            "judge": [d["judge"] or "–" for d in rep.disagreements],
            "people": [", ".join(f"{k}: {v}" for k, v in d["people"].items()) for d in rep.disagreements],
            "why": [d["why"] for d in rep.disagreements],
        },
        schema={
            "qid": pl.String,
            "claim": pl.String,
            "judge": pl.String,
            "people": pl.String,
            "why": pl.String,
        },
    )


def judges_side_by_side(mine: SessionReport, other: SessionReport, target: str) -> pl.DataFrame:
    """Two judges measured on the same human labels: each judge-vs-people statistic for both."""
    a, b = mine.overall, other.overall
    names = ["items", "percent agreement", "Cohen's κ", "Gwet's AC1"]
    pairs = [(a.items, b.items), (a.percent, b.percent), (a.kappa, b.kappa), (a.ac1, b.ac1)]
    if target == "claims":
        names += ["NOT_SUPPORTED: judge precision", "NOT_SUPPORTED: judge recall"]
        pairs += [
            (a.precision_unsupported, b.precision_unsupported),
            (a.recall_unsupported, b.recall_unsupported),
        ]
    return pl.DataFrame(
        {
            "statistic": names,
            f"the session's judge ({mine.judge})": [str(x) for x, _ in pairs],
            f"revision {other.judge}": [str(y) for _, y in pairs],
        }
    )


def export(session: SessionRow, fmt: str) -> str:
    from evalcore.calibration import export_labels

    return export_labels(store(), session, fmt, history=True)


def import_file(session: SessionRow, name: str, raw: bytes) -> tuple[int, list[str]]:
    """Labels made elsewhere, from an uploaded CSV or JSON Lines file; (stored, problems per line)."""
    from evalcore.calibration import import_labels

    fmt = "jsonl" if name.lower().endswith((".jsonl", ".json")) else "csv"
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return 0, [f"{name}: not UTF-8 text; save it as UTF-8 CSV or JSON Lines"]
    return import_labels(store(), session, text, fmt, name)
