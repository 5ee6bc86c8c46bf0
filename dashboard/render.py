"""Rendering run content safely. Questions, chunks, answers and claims are untrusted text: they are
escaped for markdown (so neither HTML nor markdown syntax in them does anything) and never passed
with ``unsafe_allow_html``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import polars as pl
import streamlit as st

from dashboard.tables import Grid
from evalcore.charts import forest as forest  # (re-exported: one owner, evalcore.charts)
from evalcore.charts import series_colour as series_colour  # (re-exported, as forest)
from evalcore.charts import trend_chart as trend_chart  # (re-exported, as forest)
from evalcore.escape import md_escape as md_escape
from evalcore.escape import plot_text as plot_text
from evalcore.escape import plot_texts as plot_texts
from evalcore.metrics import span
from evalcore.question import QuestionDetail
from evalcore.words import agree as agree  # (re-exported for the pages: pages import dashboard only)
from evalcore.words import count as count


def reference_md(case: dict[str, Any]) -> str:
    """The reference answer line: escaped, or why there is none (an unanswerable question has none by
    design; a TREC query or an unlabeled import has none at all)."""
    if case.get("reference_answer"):
        return "**Reference answer:** " + md_escape(case["reference_answer"])
    why = "unanswerable" if not case.get("answerable", True) else "the test set gives none"
    return f"**Reference answer:** :gray[(none — {why})]"


def md_code(text: str | None) -> str:
    """An inline code span showing ``text`` literally (backticks inside are replaced, not interpreted)."""
    return "`" + (text or "").replace("`", "'").replace("\n", " ") + "`"


def highlighted(text: str | None, quotes: Iterable[str | None]) -> str:
    """Markdown of ``text`` with every quote highlighted where it occurs (the quotes module's exact or
    strict fuzzy match, inside this one text); all of it escaped."""
    if text is None:
        return ""
    spans = sorted((m.start, m.end) for m in (span(text, q) for q in quotes) if m is not None)
    out, at = [], 0
    for a, b in spans:
        a = max(a, at)
        if b <= a:
            continue
        out.append(f"{md_escape(text[at:a])}:orange-background[{md_escape(text[a:b])}]")
        at = b
    return "".join(out) + md_escape(text[at:])


def chunk_card(row: dict[str, Any], *, quotes: dict[str, list[str]], k: int) -> None:
    """One retrieved chunk: rank, id, score, its label (grade), whether the generator saw it, its text
    with the judge's quotes highlighted."""
    grade = row["grade"]
    mark = (
        f":green-badge[labeled · grade {grade}]"
        if grade and grade >= 1
        else ":gray-badge[judged not relevant]"
        if grade == 0
        else ":gray-badge[unlabeled]"
    )
    cut = "" if row["in_top_k"] else f" :gray[(below top {k})]"
    if not row["in_context"]:
        cut += " :gray[(not given to the generator)]"
    with st.container(border=True):
        st.markdown(f"**#{row['rank']}** · {md_code(row['chunk_id'])} · score {row['score']:.4g} {mark}{cut}")
        body = highlighted(row["text"] or "", quotes.get(row["chunk_id"], []))
        st.markdown(body or ":gray[(no text stored)]")


MORE_CHUNKS = 100  # chunks below the top k drawn at most, on request


def chunk_list(d: QuestionDetail, *, quotes: dict[str, list[str]] | None = None, k: int, key: str) -> None:
    """The top ``k`` ranked chunks, labeled ones marked with their grade, the judge's quotes
    highlighted; the chunks below the top k only on request (a TREC run retrieves 1,000)."""
    quotes = quotes or {}
    rows = d.chunks.to_dicts()
    top = [r for r in rows if r["in_top_k"]]
    for row in top:
        chunk_card(row, quotes=quotes, k=k)
    rest = len(rows) - len(top)
    if rest and st.toggle(f"Show the {count(rest, 'chunk')} below the top {k}", key=key):
        for row in rows[len(top) : len(top) + MORE_CHUNKS]:
            chunk_card(row, quotes=quotes, k=k)
        if rest > MORE_CHUNKS:
            st.caption(f"The first {MORE_CHUNKS} of {rest} shown; raise Top k to see further down.")
    if d.missing_labeled:
        st.warning(
            "Labeled chunks missing from the top "
            + str(k)
            + ": "
            + ", ".join(md_code(c) for c in d.missing_labeled),
            icon=":material/search_off:",
        )


def chunks_side_by_side(left: QuestionDetail, right: QuestionDetail, *, k: int, key: str) -> None:
    """Two runs' ranked chunks in rows by rank, so rank 3 sits beside rank 3; below the top k on request."""
    lq, rq = quotes_by_chunk(left), quotes_by_chunk(right)
    lrows, rrows = left.chunks.to_dicts(), right.chunks.to_dicts()
    depth = max(len(lrows), len(rrows))
    shown = min(k, depth)
    if depth > k and st.toggle(
        f"Show the chunks below the top {k} (down to rank {min(depth, k + MORE_CHUNKS)})", key=key
    ):
        shown = min(depth, k + MORE_CHUNKS)
    for i in range(shown):
        a, b = st.columns(2)
        for col, rows, quotes in ((a, lrows, lq), (b, rrows, rq)):
            with col:
                if i < len(rows):
                    chunk_card(rows[i], quotes=quotes, k=k)
                elif i == len(rows):
                    st.caption(f"(nothing retrieved at rank {i + 1})")
    a, b = st.columns(2)
    for col, d in ((a, left), (b, right)):
        if d.missing_labeled:
            col.warning(
                f"Labeled chunks missing from the top {k}: "
                + ", ".join(md_code(c) for c in d.missing_labeled),
                icon=":material/search_off:",
            )


def scroll_into_view(anchor: str) -> None:
    """Scroll the page to the element with id ``anchor`` (a heading's fixed anchor, never run text):
    Streamlit has no scroll API, so a static script does it once, when this is drawn."""
    import json

    st.html(
        "<script>setTimeout(() => {const e = window.parent.document.getElementById("
        + json.dumps(anchor)
        + "); if (e) e.scrollIntoView({behavior: 'smooth', block: 'start'});}, 400);</script>",
        unsafe_allow_javascript=True,
    )


def claim_list(d: QuestionDetail) -> None:
    """The judge's claims with verdict and quote; a SUPPORTED claim whose quote is not in the context
    is flagged (it does not count as supported)."""
    if d.claims.height == 0:
        st.caption("No claims stored for this answer (not judged, or no factual claim: faithfulness n/a).")
        return
    for row in d.claims.iter_rows(named=True):
        if row["verdict"] == "SUPPORTED" and row["quote_match"] == "fuzzy":
            badge = ":green-badge[SUPPORTED · quote matched approximately]"
        elif row["verdict"] == "SUPPORTED" and row["quote_found"]:
            badge = ":green-badge[SUPPORTED]"
        elif row["verdict"] == "SUPPORTED":
            badge = ":orange-badge[SUPPORTED · quote not in context]"
        else:
            badge = ":red-badge[NOT SUPPORTED]"
        quote = f"  \n:gray[quote:] {md_escape(row['quote'])}" if row["quote"] else ""
        st.markdown(f"{badge} {md_escape(row['claim'])}{quote}")


def quotes_by_chunk(d: QuestionDetail) -> dict[str, list[str]]:
    """Each found quote under the chunk it was found in (which need not be the chunk the judge named)."""
    out: dict[str, list[str]] = {}
    for row in d.claims.filter(pl.col("quote_found")).iter_rows(named=True):
        out.setdefault(row["quote_chunk"], []).append(row["quote"])
    return out


def heatmap(
    grid: Grid, *, colorscale: Any, row_height: int, hover: str, colorbar: dict[str, Any] | None = None
) -> Any:
    """A slice × metric heatmap of a :class:`~dashboard.tables.Grid`, its labels escaped for plotly,
    each cell's text drawn in it, metric names on top."""
    import plotly.graph_objects as go

    x, y = plot_texts(grid.metrics), plot_texts(grid.slices)
    fig = go.Figure(
        go.Heatmap(
            z=grid.z,
            x=x,
            y=y,
            zmin=grid.zmin,
            zmax=grid.zmax,
            colorscale=colorscale,
            text=grid.text,
            texttemplate="%{text}",
            textfont={"size": 11, "color": "#111827"},
            hovertemplate=hover,
            xgap=1,
            ygap=1,
            **({"colorbar": colorbar} if colorbar else {}),
        )
    )
    if grid.neutral is not None and any(v is not None for row in grid.neutral for v in row):
        fig.add_trace(
            go.Heatmap(
                z=grid.neutral,
                x=x,
                y=y,
                zmin=0.0,
                zmax=1.0,
                colorscale=[[0.0, "#e5e7eb"], [1.0, "#e5e7eb"]],
                showscale=False,
                text=grid.text,
                texttemplate="%{text}",
                textfont={"size": 11, "color": "#111827"},
                hovertemplate="%{y} · %{x}: no better direction<extra></extra>",
                xgap=1,
                ygap=1,
            )
        )
    # Long metric names (imported ``ext:answer_relevancy``) overlap side by side: slant them.
    slant = len(grid.metrics) > 6 or max((len(m) for m in grid.metrics), default=0) > 14
    fig.update_layout(
        height=120 + row_height * len(grid.slices) + (60 if slant else 0),
        margin={"t": 90 if slant else 10, "b": 10},
        yaxis_autorange="reversed",
        xaxis={"side": "top", "tickangle": -35 if slant else 0},
    )
    return fig


PAGE_ROWS = 1_000  # rows a table sends to the browser at a time; the rest stay on the server


def paged(table: pl.DataFrame, key: str, *, show: int | None = None, rows: int | None = None) -> pl.DataFrame:
    """The page of ``table`` to send to the browser: all of it up to ``rows`` rows, else one page
    of ``rows`` with a page picker and "rows 1–1,000 of 1,000,000" — a million-row table never
    leaves the server whole (the browser would take minutes and gigabytes). ``show``: a row index
    that must be on the page (a question opened by a link), which moves the picker to its page."""
    rows = rows or PAGE_ROWS
    if table.height <= rows:
        return table
    pages = -(-table.height // rows)
    if show is not None and 0 <= show < table.height and st.session_state.get(f"_{key}_show") != show:
        st.session_state[key] = show // rows + 1  # once per newly opened row; the picker is free after
    st.session_state[f"_{key}_show"] = show
    left, right = st.columns([1, 4])
    page = left.number_input(
        "Page", min_value=1, max_value=pages, step=1, key=key, help=f"{rows:,} rows a page; filter to narrow."
    )
    start = (int(page) - 1) * rows
    end = min(start + rows, table.height)
    right.caption(f"Rows {start + 1:,}–{end:,} of {table.height:,} (page {int(page):,} of {pages:,}).")
    return table.slice(start, rows)
