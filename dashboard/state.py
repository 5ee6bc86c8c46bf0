"""Deep links: every view's state lives in the URL, read once per change into page-prefixed keys.

A page declares its parameters; :func:`seed` copies valid URL values into ``st.session_state`` when
the URL differs from what the page last wrote (a fresh link, a shared URL, the back button), and
returns the values it had to reject so the page can say so. :func:`publish` writes the current view
back to the URL. Values are only ever ids and names checked against what is loaded: a link cannot
name a file, so it cannot make the app read outside the runs folder.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st


@dataclass(frozen=True)
class Param:
    name: str  # URL name
    key: str  # session-state / widget key
    parse: Callable[[str], Any] = str
    valid: Callable[[Any], bool | str] = lambda v: True  # True, or False / why not in words
    many: bool = False  # a list (repeated URL parameter)
    expect: str | None = None  # what a valid value is, in words ("a whole number from 1 to 100")


def seed(page: str, params: Sequence[Param]) -> list[str]:
    """Seed widget keys from the URL if it changed since this page last published; return complaints."""
    raw = {k: st.query_params.get_all(k) for k in st.query_params}
    last = st.session_state.get(f"_url_{page}")
    if last == raw:
        return []
    values, complaints = parse(params, raw)
    by_name = {p.name: p for p in params}
    for name, value in values.items():
        st.session_state[by_name[name].key] = value
    st.session_state[f"_url_{page}"] = raw
    return complaints


def parse(params: Sequence[Param], raw: Mapping[str, list[str]]) -> tuple[dict[str, Any], list[str]]:
    """The valid values a URL gives (by parameter name) and a complaint for each value rejected."""
    out: dict[str, Any] = {}
    complaints = []
    for p in params:
        values = raw.get(p.name)
        if not values:
            continue
        try:
            parsed = [p.parse(v) for v in values]
        except ValueError:
            complaints.append(
                f"'{p.name}={values[0]}' in the link is not {p.expect or 'a valid value'}; it was ignored."
            )
            continue
        verdicts = [(v, p.valid(v)) for v in parsed]
        bad = [v for v, ok in verdicts if ok is not True]
        for v, ok in verdicts:
            if ok is True:
                continue
            # A validity check may say why a value cannot be used (a run of another test set).
            reason = ok if isinstance(ok, str) and ok else None
            complaints.append(
                f"'{p.name}={v}' in the link "
                + (reason or (f"is not {p.expect}" if p.expect else "does not exist in this runs folder"))
                + "; it was ignored."
            )
        if bad:
            parsed = [v for v, ok in verdicts if ok is True]
            if not parsed:
                continue
        out[p.name] = parsed if p.many else parsed[0]
    return out, complaints


def publish(page: str, values: dict[str, Any]) -> None:
    """Write the view to the URL (None / empty values are left out), with the frame's own values (the
    test set, when the folder holds several)."""
    clean: dict[str, str | list[str]] = {}
    for k, v in {**st.session_state.get("_frame_query", {}), **values}.items():
        if v is None or v == [] or v is False:
            continue
        clean[k] = (
            [str(x) for x in v]
            if isinstance(v, list | tuple)
            else str(v).lower()
            if isinstance(v, bool)
            else str(v)
        )
    raw = {k: (v if isinstance(v, list) else [v]) for k, v in clean.items()}
    if {k: st.query_params.get_all(k) for k in st.query_params} != raw:
        st.query_params.from_dict(clean)
    st.session_state[f"_url_{page}"] = raw
    st.session_state["_url_frame"] = raw  # the frame's test-set picker reads the URL only when it changes


DEFAULTED = "_defaulted"  # widget key -> the default it was given (see forget_defaults)


def default(key: str, value: Any) -> None:
    """Give a widget key its first value without fighting a value already seeded from the URL."""
    if key not in st.session_state:
        st.session_state[key] = value
        st.session_state.setdefault(DEFAULTED, {})[key] = value


def forget_defaults() -> None:
    """Take back the defaults given and still held, and read every page's link again on the next run:
    for when what the defaults were drawn from changed (a run turned out broken), so the next run
    gives the defaults it would have given had it never loaded. A value the reader picked stays."""
    for key, value in st.session_state.pop(DEFAULTED, {}).items():
        if key in st.session_state and st.session_state[key] == value:
            del st.session_state[key]
    for key in [k for k in st.session_state if str(k).startswith("_url_")]:
        del st.session_state[key]
