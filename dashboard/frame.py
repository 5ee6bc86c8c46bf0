"""The frame every page shares: page config, the runs folder, the sidebar, problems with runs.

Each page calls :func:`setup` first, so a deep link opened on a freshly started server renders the
whole frame even though Streamlit runs that page's file without ``app.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import plotly.graph_objects as go
import polars as pl
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from dashboard import auth, data, state
from dashboard.data import Key, load, runs_folder
from dashboard.render import md_code, md_escape
from evalcore import Run
from evalcore.errors import Problem, redact
from evalcore.runs import RunEntry, RunFolder, TestSetGroup, find_group
from evalcore.words import agree, count

PAGES = [
    ("app.py", "Overview", ":material/dashboard:"),
    ("pages/1_Breakdown.py", "Breakdown", ":material/grid_view:"),
    ("pages/2_Compare.py", "Compare", ":material/compare_arrows:"),
    ("pages/3_Question.py", "Question", ":material/help:"),
    ("pages/4_Calibration.py", "Calibration", ":material/balance:"),
    ("pages/5_Test_set.py", "Test set", ":material/checklist:"),
    ("pages/6_Signals.py", "Signals", ":material/monitoring:"),
]
ADMIN_PAGES = [("pages/7_Audit.py", "Audit", ":material/history_edu:")]  # listed for those who may read it


GROUP_KEY = "ts_group"  # the sidebar's test-set picker: one for every page
PICKED_GROUP = "_ts_group_picked"  # the test set chosen, kept across pages (see _seed_group)
PICKED_RUNS = "_ts_group_runs"  # its runs (to follow it when its key moves)


class Runs(Mapping[str, Run]):
    """The frame's runs, each read the first time the page asks for it (a page about two runs of a
    folder of twenty reads two results files). A run whose results turn out to have errors joins the
    folder's problems and the page runs again without it, as if it had never loaded."""

    def __init__(self, frame: Frame) -> None:
        self._frame = frame

    def __getitem__(self, run_id: str) -> Run:
        got = self.load([run_id])
        if run_id not in got:
            raise KeyError(run_id)
        return got[run_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._frame.entries)

    def __len__(self) -> int:
        return len(self._frame.entries)

    def load(self, run_ids: Iterable[str]) -> dict[str, Run]:
        """These runs, read now if they were not yet (several at a time)."""
        wanted = [r for r in dict.fromkeys(run_ids) if r in self._frame.entries]
        rf = self._frame.rf
        unread = [r for r in wanted if r not in rf.loaded()]
        if not unread:
            return rf.load(wanted)
        with st.spinner(
            f"Reading {count(len(unread), 'run')}…" if len(unread) > 1 else f"Reading {unread[0]}…"
        ):
            got = rf.load(wanted)
        self._frame.rerun_if_a_run_failed()
        return got


@dataclass(frozen=True)
class Frame:
    folder: Path  # the folder read (a bucket's mirror for a bucket URL)
    location: str  # the runs location as given: a folder, or s3://bucket/prefix
    rf: RunFolder
    key: Key
    groups: tuple[TestSetGroup, ...] = ()
    group: TestSetGroup | None = None  # the test set every view of the page works within
    complaints: tuple[str, ...] = ()  # link values the frame itself rejected (testset=)
    entries: dict[str, RunEntry] = field(default_factory=dict)  # the folder's runs, results not read

    @property
    def fkey(self) -> str:
        return str(self.folder)

    @property
    def runs(self) -> Runs:
        """The folder's runs by id, each read when first asked for."""
        return Runs(self)

    def rerun_if_a_run_failed(self) -> None:
        """When a run of this page turned out broken since the page began (its results were read for
        the first time), run the page again without it, as if it had never loaded: pickers, defaults
        and the sidebar's counts move to the runs that load, and a link naming it says why it was
        ignored."""
        if set(self.entries) & self.rf.failed:
            state.forget_defaults()
            st.rerun()

    @property
    def problems(self) -> list[Problem]:
        """What is wrong with the folder's runs, as far as read so far (and, for a bucket, objects
        listed and gone before they could be read)."""
        return [*data.bucket_problems(), *self.rf.problems]

    @property
    def run_ids(self) -> list[str]:
        """The runs of the chosen test set, oldest first (every run when the folder holds one test set)."""
        return list(self.group.run_ids) if self.group else list(self.entries)

    @property
    def other_runs(self) -> int:
        """Runs of the folder that answer another test set than the chosen one."""
        return len(self.entries) - len(self.run_ids)

    def run_ok(self, run_id: str) -> bool | str:
        """A link's run: True if it is one of the chosen test set's, else why not (another test set's
        run is named as such, so the reader knows to switch, not that it is missing)."""
        if run_id in self.run_ids:
            return True
        other = next((g for g in self.groups if run_id in g.run_ids), None)
        if other is None:
            if run_id in self.rf.failed:
                return "is a run whose results have errors (listed on Overview)"
            return False
        return f"is a run of another test set ({other.name}) than the one shown: pick it in the sidebar"

    def qid_ok(self, qid: str, known: set[str]) -> bool | str:
        """A link's question: True if the chosen test set has it, else why not."""
        if qid in known:
            return True
        for g in self.groups:
            if g != self.group and qid in set(self.entries[g.run_ids[-1]].testset.cases["qid"].to_list()):
                return (
                    f"is not a question of this test set, but of {g.name}: pick that test set in the "
                    "sidebar (a link with run= picks it for you)"
                )
        return False

    def keep(self, key: str, default: str | None) -> None:
        """A run picker's value stays within the chosen test set (after the reader switched test set)."""
        value = st.session_state.get(key)
        if value is not None and value not in self.run_ids:
            st.session_state[key] = default

    def label(self, run_id: str) -> str:
        run = self.entries.get(run_id)
        return f"{run.label} · {run_id}" if run and run.label != run_id else run_id


def _seed_group(groups: list[TestSetGroup]) -> list[str]:
    """Which test set the link asks for: ``testset=`` (any version's short sha256), else the test set
    of a run it names (links made before there were several test sets keep working), else the one
    already chosen, else the newest run's. Read once per URL change, like the pages' views."""
    raw = {k: st.query_params.get_all(k) for k in st.query_params}
    complaints = []
    if st.session_state.get("_url_frame") != raw:
        st.session_state["_url_frame"] = raw
        chosen = None
        for want in raw.get("testset", []):
            chosen = find_group(groups, want)
            # (the test set chosen before, whose key moved when its first version's only run broke:
            # followed below, not a bad link)
            if chosen is None and want != st.session_state.get(PICKED_GROUP):
                complaints.append(
                    f"'testset={want}' in the link is not a test set of this runs folder; it was ignored."
                )
        if chosen is None:
            named = [v for name in ("run", "base", "cand") for v in raw.get(name, [])]
            chosen = next((g for v in named for g in groups if v in g.run_ids), None)
        if chosen is not None:
            st.session_state[PICKED_GROUP] = chosen.key
    if st.session_state.get(PICKED_GROUP) not in {g.key for g in groups}:
        # A group's key is its first version: when that version's only run turned out broken, the
        # key moved. The choice stays with the group holding the runs chosen before; else the newest.
        before = set(st.session_state.get(PICKED_RUNS, ()))
        same = max(groups, key=lambda g: len(before & set(g.run_ids)))
        st.session_state[PICKED_GROUP] = (same if before & set(same.run_ids) else groups[-1]).key
    st.session_state[PICKED_RUNS] = next(g.run_ids for g in groups if g.key == st.session_state[PICKED_GROUP])
    # Streamlit drops a widget's value when the reader moves to another page (each page's picker is
    # a widget of its own): the choice lives in a key of ours (the picker's on_change writes it)
    # and seeds the picker on every page.
    st.session_state[GROUP_KEY] = st.session_state[PICKED_GROUP]
    return complaints


def _picked_group() -> None:
    st.session_state[PICKED_GROUP] = st.session_state[GROUP_KEY]


PREFETCHED = "_frame_prefetched"


def _prefetch_components(charts: bool) -> DeltaGenerator:
    """On a browser tab's first script run, an empty table (and chart, for a page that draws one) out
    of sight (1 px tall), so the browser fetches and compiles their code — Plotly's alone takes 1-1.5 s
    on a 2-core machine — while the server reads the runs, rather than after the page's script has
    finished (a page without a chart would only pay for it). The caller empties
    the slot once the runs are loaded. The slot itself is there on every run, so the elements after it
    keep their place in the page (a moved element is a new one: an open expander would close)."""
    slot = st.empty()
    if not st.session_state.get(PREFETCHED):
        st.session_state[PREFETCHED] = True
        with slot.container(height=1, border=False):
            st.dataframe(pl.DataFrame({"": [0]}), hide_index=True)
            if charts:
                st.plotly_chart(go.Figure(layout={"height": 10}), config={"staticPlot": True})
    return slot


def setup(title: str, icon: str, *, charts: bool = True, read_all: bool = False) -> Frame:
    """The page's frame; ``charts``: whether the page draws plotly charts (their code is fetched
    while the runs load); ``read_all``: the page needs every run of the folder (Overview), read now,
    the test sets beside the results files (other pages read the runs they show, when they show them)."""
    st.set_page_config(page_title=f"{title} · ragtriage", page_icon=icon, layout="wide")
    who = auth.gate()  # with sign-in on: nothing of the runs shows before it
    st.session_state[auth.WHO] = who
    location = data.runs_location()
    try:
        folder = runs_folder()
        data.store()  # opened once per server; a store that cannot be opened is said here
    except data.SetupError as exc:  # a bucket that cannot be listed, a store that cannot be opened:
        # said (secrets masked), never a traceback
        st.error(md_escape(redact(str(exc))), icon=":material/cloud_off:")
        st.stop()
    with st.sidebar:  # the way around shows while the runs load
        for path, label, page_icon in PAGES + (ADMIN_PAGES if who.may("audit") else []):
            st.page_link(path, label=label, icon=page_icon)
    prefetch = _prefetch_components(charts)
    rf, key = load(folder)
    if read_all:  # (a no-op once every run is read; runs another page read are not read again)
        with st.spinner("Reading the runs…"):
            data.runs(str(folder), None, key)
    entries = data.entries(str(folder), key)
    prefetch.empty()
    groups = data.groups(str(folder), key) if entries else []
    complaints = _seed_group(groups) if groups else []
    group = None
    with st.sidebar:
        st.divider()
        if len(groups) > 1:
            by_key = {g.key: g for g in groups}
            chosen = st.selectbox(
                "Test set",
                list(by_key),
                key=GROUP_KEY,
                on_change=_picked_group,
                format_func=lambda k: by_key[k].label,
                help="Each run answered one test set; a qid means something only inside its test set. "
                "Every page works within the test set chosen here.",
            )
            group = by_key[chosen]
            st.session_state["_frame_query"] = {"testset": group.key}
        else:
            group = groups[0] if groups else None
            st.session_state["_frame_query"] = {}
        st.caption(f"Runs folder: {md_code(location)}")
        st.caption(f"{count(len(entries), 'run')}")
        errors = [p for p in rf.problems if p.severity == "error"]
        if errors and entries:  # with no run at all, the page itself says so
            st.error(
                f"{count(len(errors), 'problem')} {agree(len(errors), 'keeps', 'keep')} some runs from loading — see Overview.",
                icon=":material/error:",
            )
        auth.sidebar(who)
    st.title(title)
    return Frame(
        folder=folder,
        location=location,
        rf=rf,
        key=key,
        entries=entries,
        groups=tuple(groups),
        group=group,
        complaints=tuple(complaints),
    )


def show_problems(frame: Frame) -> None:
    problems = frame.problems
    if not problems:
        return
    errors = [p for p in problems if p.severity == "error"]
    loaded = len(frame.entries)
    with st.expander(
        f"{count(len(problems), 'problem')} with runs in this folder"
        + (f" — {count(loaded, 'run')} loaded" if loaded else " — no run loaded"),
        expanded=bool(errors),
        icon=":material/report:",
    ):
        for p in problems:
            # st.error/st.warning render markdown: escape, since file content can appear in messages.
            (st.error if p.severity == "error" else st.warning)(md_escape(data.shown(str(p))))


POINT_ELSEWHERE = (
    "Point the dashboard at your runs with `streamlit run app.py -- --runs DIR` (or set "
    "`RAGTRIAGE_RUNS=DIR`); a run folder holds `run.json` and `results.jsonl` — see docs/run-format.md."
)


def need_runs(frame: Frame, n: int = 1) -> None:
    """Stop the page with one message when it has fewer than ``n`` runs to show; say why."""
    folder = md_code(frame.location)
    loaded = len(frame.run_ids)
    if not frame.entries:
        if not frame.folder.is_dir():
            st.error(
                f"The runs folder {folder} does not exist. {POINT_ELSEWHERE}", icon=":material/folder_off:"
            )
        elif not any(p.severity == "error" for p in frame.problems):
            st.info(f"No run found in {folder}. {POINT_ELSEWHERE}", icon=":material/folder_open:")
        else:
            st.error(
                f"No run in {folder} could be loaded: the problems are listed below, each with the file, "
                "line and field to fix.",
                icon=":material/error:",
            )
            show_problems(frame)
        st.stop()
    if loaded < n:
        where = "this test set" if frame.other_runs else folder
        st.info(
            f"This view needs at least {n} runs of one test set; {loaded} loaded for {where}."
            + (" Pick another test set in the sidebar." if frame.other_runs else f" {POINT_ELSEWHERE}")
        )
        st.stop()


def complain(messages: list[str], frame: Frame | None = None) -> None:
    for m in [*(frame.complaints if frame else ()), *messages]:
        st.warning(md_escape(m), icon=":material/link_off:")


def link_to_question(qid: str) -> None:
    """A link to the Question page for ``qid`` (works from every page, and in a new tab)."""
    from urllib.parse import urlencode

    # A page link's label is markdown, and a qid is the test set's text.
    text = md_escape(f"Open {qid} across every run")
    try:
        st.page_link(
            "pages/3_Question.py",
            label=text,
            icon=":material/history:",
            query_params={**st.session_state.get("_frame_query", {}), "qid": qid},
        )
    except st.errors.StreamlitPageNotFoundError:
        st.markdown(f"[{text}](Question?{urlencode({'qid': qid})})")


def judge_flag(frame: Frame, run_id: str, judge: str = data.RECORDED) -> None:
    """Under a run's judged scores: when its judge was never measured against people's labels,
    say so and how to measure it (the guide: re-check agreement whenever the judge changes)."""
    unmeasured = data.standing(frame.fkey, run_id, frame.key, judge).unmeasured
    if unmeasured:
        st.caption(":material/balance: " + md_escape(unmeasured[0].upper() + unmeasured[1:]))


REJUDGE_CONFIRM_ABOVE = 1.00  # dollars: a re-judge estimated above this asks to be confirmed


def rejudge_key_field(key: str) -> str | None:
    """The API key for a re-judge: the server's environment's, or one typed here. A typed key is a
    password field kept in this browser session only — never written to disk, logs, the store or
    the URL, never shown back."""
    if data.judge_key_in_env():
        return None
    typed = st.text_input(
        "Anthropic API key",
        type="password",
        key=key,
        help="Kept in this browser session only: never written to disk, logs, the store or the URL.",
    )
    if not typed:
        st.caption(
            "No API key on the server: paste one above, or start the dashboard with ANTHROPIC_API_KEY set."
        )
    return typed or None


def rejudge_panel(
    frame: Frame,
    targets: list[str],
    qids: list[str],
    key: str,
    like: str | None = None,
    label: str = "Re-judge",
) -> bool:
    """Estimate, key, confirmation and button of a re-judge of ``qids`` in the ``targets`` runs
    (with the judge of run ``like``, if named): the estimate per run and in total, a confirmation
    above REJUDGE_CONFIRM_ABOVE, a progress bar while it runs, each failure with its reason.
    True once it ran without failures (the caller shows the new revisions). Shown only to a role
    that may re-judge (the store refuses anyone else anyway), and refused before any request when
    it would pass a daily budget."""
    if not auth.may("rejudge"):
        auth.locked("rejudge", "Re-judging spends money on the judge: it")
        return False
    estimates = [data.judge_estimate(frame.fkey, r, qids, frame.key, like) for r in targets]
    dollars = sum(e.dollars for e in estimates)
    lines = [f"{frame.label(r)}: {e}" for r, e in zip(targets, estimates, strict=True)]
    if len(targets) > 1:
        lines.append(f"together about ${dollars:.2f}")
    st.caption(md_escape(" · ".join(lines)))
    api_key = rejudge_key_field(f"{key}_key")
    confirmed = dollars <= REJUDGE_CONFIRM_ABOVE or st.checkbox(
        f"Spend about ${dollars:.2f}", key=f"{key}_ok"
    )
    total = sum(e.questions for e in estimates)
    if not total:
        st.caption("No recorded answer among these questions: nothing to judge.")
    go = st.button(
        label, key=key, disabled=not total or not confirmed or not (data.judge_key_in_env() or api_key)
    )
    if not go:
        return False
    bar = st.progress(0.0, text="Judging…")
    done = [0]

    def tick(_: object) -> None:
        done[0] += 1
        bar.progress(min(1.0, done[0] / total), text=f"{done[0]}/{total} judged")

    failures = []
    try:
        for r in targets:
            report = data.rejudge(frame.fkey, r, qids, frame.key, api_key, on_verdict=tick, like=like)
            failures += [(r, v) for v in report.failed]
    except (data.SetupError, data.OverBudget, PermissionError) as exc:
        st.error(md_escape(str(exc)), icon=":material/block:")
        return False
    for r, v in failures:
        st.error(md_escape(f"{frame.label(r)} · {v.qid}: {v.reason}"))
    return not failures
