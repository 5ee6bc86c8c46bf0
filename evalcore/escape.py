"""Showing untrusted text literally: questions, chunks, answers, claims, tag values, run labels and
metric names of imported scores all come from files a user did not write. One owner for each target:
markdown (the dashboard's ``st.markdown``, a pull-request comment), HTML (a report file), plotly
labels. Nothing here is ever rendered as markup.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~:$=&])")


def md_escape(text: str | None) -> str:
    """Text shown literally by markdown (``st.markdown``, GitHub): every markdown and HTML-significant
    character backslash-escaped (CommonMark reads ``\\<`` as a literal ``<``), line breaks kept.

    >>> md_escape("<script>alert(1)</script> **x**")
    '\\\\<script\\\\>alert\\\\(1\\\\)\\\\</script\\\\> \\\\*\\\\*x\\\\*\\\\*'
    """
    if not text:
        return ""
    return _MD_SPECIAL.sub(r"\\\1", text).replace("\n", "  \n")


def html_text(text: object) -> str:
    """Text shown literally in an HTML page, attribute values included (quotes escaped too).

    >>> html_text('<img src=x onerror="alert(1)">')
    '&lt;img src=x onerror=&quot;alert(1)&quot;&gt;'
    """
    return html.escape("" if text is None else str(text), quote=True)


def plot_text(text: str) -> str:
    """Text shown literally by plotly, which reads a subset of HTML in labels, titles and hover text
    (``<a href>`` becomes a clickable link, ``<b>`` bold). Tag values, metric names from imported
    scores and run labels come from run files, so they are entity-escaped; plotly decodes
    ``&lt;``, ``&gt;`` and ``&amp;`` back to the characters.

    >>> plot_text('<a href="https://x">x</a> & y')
    '&lt;a href="https://x"&gt;x&lt;/a&gt; &amp; y'
    """
    return html.escape(text, quote=False)


def plot_texts(values: Iterable[object]) -> list[str]:
    """:func:`plot_text` of each value."""
    return [plot_text(str(v)) for v in values]
