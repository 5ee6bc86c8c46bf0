"""The frame every page shares: page config, the runs folder, the sidebar, problems with runs.

Each page calls :func:`setup` first, so a deep link opened on a freshly started server renders the
whole frame even though Streamlit runs that page's file without ``app.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from dashboard.data import Key, load, runs_folder
from dashboard.render import md_code, md_escape
from evalcore import LoadResult

PAGES = [
    ("app.py", "Overview", ":material/dashboard:"),
    ("pages/1_Breakdown.py", "Breakdown", ":material/grid_view:"),
    ("pages/2_Compare.py", "Compare", ":material/compare_arrows:"),
    ("pages/3_Question.py", "Question", ":material/help:"),
]


@dataclass(frozen=True)
class Frame:
    folder: Path
    result: LoadResult
    key: Key

    @property
    def fkey(self) -> str:
        return str(self.folder)

    @property
    def run_ids(self) -> list[str]:
        return list(self.result.runs)

    def label(self, run_id: str) -> str:
        run = self.result.runs.get(run_id)
        return f"{run.label} · {run_id}" if run and run.label != run_id else run_id


def setup(title: str, icon: str) -> Frame:
    st.set_page_config(page_title=f"{title} · ragtriage", page_icon=icon, layout="wide")
    folder = runs_folder()
    result, key = load(folder)
    with st.sidebar:
        for path, label, page_icon in PAGES:
            st.page_link(path, label=label, icon=page_icon)
        st.divider()
        st.caption(f"Runs folder: {md_code(str(folder))}")
        st.caption(f"{len(result.runs)} run(s) loaded")
        errors = [p for p in result.problems if p.severity == "error"]
        if errors:
            st.error(
                f"{len(errors)} problem(s) keep some runs from loading — see Overview.",
                icon=":material/error:",
            )
    st.title(title)
    return Frame(folder=folder, result=result, key=key)


def show_problems(frame: Frame) -> None:
    problems = frame.result.problems
    if not problems:
        return
    errors = [p for p in problems if p.severity == "error"]
    with st.expander(
        f"{len(problems)} problem(s) with runs in this folder — the other runs still load",
        expanded=bool(errors),
        icon=":material/report:",
    ):
        for p in problems:
            # st.error/st.warning render markdown: escape, since file content can appear in messages.
            (st.error if p.severity == "error" else st.warning)(md_escape(str(p)))


def need_runs(frame: Frame, n: int = 1) -> None:
    if len(frame.result.runs) < n:
        st.info(
            f"This view needs at least {n} run(s); {len(frame.result.runs)} loaded from "
            f"{md_code(str(frame.folder))}. Point the dashboard at your runs with "
            "`streamlit run app.py -- --runs DIR`."
        )
        show_problems(frame)
        st.stop()


def complain(messages: list[str]) -> None:
    for m in messages:
        st.warning(md_escape(m), icon=":material/link_off:")


def link_to_question(qid: str) -> None:
    """A link to the Question page for ``qid`` (works from every page, and in a new tab)."""
    from urllib.parse import urlencode

    # A page link's label is markdown, and a qid is the test set's text.
    text = md_escape(f"Open {qid} across every run")
    try:
        st.page_link("pages/3_Question.py", label=text, icon=":material/history:", query_params={"qid": qid})
    except st.errors.StreamlitPageNotFoundError:
        st.markdown(f"[{text}](Question?{urlencode({'qid': qid})})")
