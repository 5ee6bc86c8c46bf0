"""One view object per page: what the page shows, as a frozen dataclass that reads and writes its URL.

Each field is a URL parameter of the same name, bound to one widget key, with its default written once
here. :meth:`View.from_query_params` parses a URL (pure, testable without Streamlit);
:meth:`View.to_query_params` writes a view back, leaving out values equal to their defaults, so a link
holds only what differs. Values are ids and names checked against what is loaded: a link cannot name
a file, so it cannot make the app read outside the runs folder.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

import streamlit as st

from dashboard import state
from evalcore.judge import LATEST, RECORDED

Valid = Mapping[str, Callable[[Any], bool | str]]

# Compare's question filter shows these statuses until the reader picks others.
DEFAULT_STATUSES = ("regressed", "mixed")
DEFAULT_K = 5
K_RANGE = (1, 100)
K_EXPECT = f"a whole number from {K_RANGE[0]} to {K_RANGE[1]}"


def _param(
    key: str,
    default: Any = None,
    *,
    parse: Callable[[str], Any] = str,
    many: bool = False,
    always: bool = False,
    expect: str | None = None,
) -> Any:
    """A view field: its widget key, default, how a URL value parses, whether it repeats, whether it
    is written to the URL even at its default (the runs a comparison is about), and what a valid value
    is in words (for the message when a link holds another; run ids need none)."""
    meta = {"key": key, "parse": parse, "many": many, "always": always, "expect": expect}
    if many:
        return field(default_factory=lambda: list(default or ()), metadata=meta)
    return field(default=default, metadata=meta)


def _flag(v: str) -> bool:
    return v == "true"


@dataclass(frozen=True)
class View:
    page: ClassVar[str]

    @classmethod
    def params(cls, valid: Valid | None = None) -> list[state.Param]:
        valid = valid or {}
        return [
            state.Param(
                f.name,
                f.metadata["key"],
                parse=f.metadata["parse"],
                many=f.metadata["many"],
                valid=valid.get(f.name, lambda v: True),
                expect=f.metadata["expect"],
            )
            for f in dataclasses.fields(cls)
        ]

    @classmethod
    def from_query_params(
        cls, query: Mapping[str, list[str]], valid: Valid | None = None
    ) -> tuple[Self, list[str]]:
        """The view a URL asks for (defaults where it says nothing or something invalid) and what had to
        be rejected, in words a reader understands."""
        values, complaints = state.parse(cls.params(valid), query)
        return cls(**values), complaints

    def to_query_params(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
            if value is None or value == [] or (value == default and not f.metadata["always"]):
                continue
            out[f.name] = value
        return out

    # ---- Streamlit side: seed widget keys from the URL, read the view back, publish it.

    @classmethod
    def seed(cls, valid: Valid | None = None, **defaults: Any) -> list[str]:
        """Copy valid URL values into the widget keys (when the URL changed since this page last wrote
        it); give every other key its default. ``defaults`` are those known only at run time (the
        newest run). Returns the complaints to show."""
        complaints = state.seed(cls.page, cls.params(valid))
        for f in dataclasses.fields(cls):
            value = defaults.get(
                f.name, f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
            )
            if value is not None and value != []:
                state.default(f.metadata["key"], value)
        return complaints

    @classmethod
    def from_state(cls, **overrides: Any) -> Self:
        """The view the widgets hold now (``overrides`` for values a page derived itself)."""
        values = {f.name: st.session_state.get(f.metadata["key"]) for f in dataclasses.fields(cls)}
        values = {k: v for k, v in values.items() if v is not None}
        return cls(**{**values, **overrides})

    def publish(self) -> None:
        state.publish(self.page, self.to_query_params())


@dataclass(frozen=True)
class OverviewView(View):
    page: ClassVar[str] = "home"
    run: str | None = _param("home_run")
    vs: str | None = _param("home_vs")


@dataclass(frozen=True)
class BreakdownView(View):
    page: ClassVar[str] = "breakdown"
    run: str | None = _param("bd_run")
    vs: str | None = _param("bd_vs")
    by: str = _param("bd_by", "type", expect="a tag of this test set")
    metric: list[str] = _param("bd_metrics", many=True)  # empty: every metric
    chart: str = _param("bd_chart", "heatmap", expect="'heatmap' or 'bars'")
    bar: str | None = _param("bd_focus")


@dataclass(frozen=True)
class CompareView(View):
    page: ClassVar[str] = "compare"
    base: str | None = _param("cmp_base", always=True)
    cand: str | None = _param("cmp_cand", always=True)
    k: int = _param("cmp_k", DEFAULT_K, parse=int, expect=K_EXPECT)
    status: list[str] = _param(
        "cmp_status", DEFAULT_STATUSES, many=True, expect="one of regressed, mixed, improved, unchanged"
    )
    tag: str | None = _param("cmp_tag", expect="a tag:value of this test set")
    must_pass: bool = _param("cmp_must", False, parse=_flag)
    answerable: str | None = _param("cmp_ans", expect="'yes' or 'no'")
    heldout: bool = _param("cmp_held", False, parse=_flag)
    qid: str | None = _param("cmp_qid")
    judge: str = _param("cmp_judge", RECORDED, expect=f"'{RECORDED}' or '{LATEST}'")


@dataclass(frozen=True)
class QuestionView(View):
    page: ClassVar[str] = "question"
    qid: str | None = _param("q_qid")
    k: int = _param("q_k", DEFAULT_K, parse=int, expect=K_EXPECT)
    heldout: bool = _param("q_held", False, parse=_flag)
    run: str | None = _param("q_run")
    judge: str = _param("q_judge", RECORDED, expect=f"'{RECORDED}', '{LATEST}' or a judge revision id")


@dataclass(frozen=True)
class CalibrationView(View):
    page: ClassVar[str] = "calibration"
    session: str | None = _param("cal_session")
    labeler: str | None = _param("cal_labeler")
    mode: str = _param("cal_mode", "Label", expect="'Label' or 'Agreement'")
    judge: str | None = _param("cal_judge", expect="a judge revision id of the session's run")
    by: str | None = _param("cal_by", expect="a tag of this test set")


TESTSET_MODES = ("Coverage", "Power", "Overlap", "Versions", "Review")


@dataclass(frozen=True)
class TestSetView(View):
    __test__ = False
    page: ClassVar[str] = "testset"
    mode: str = _param("ts_mode", "Coverage", expect="'Coverage', 'Power', 'Overlap', 'Versions' or 'Review'")
    run: str | None = _param("ts_run")
    against: str | None = _param("ts_against")
    by: str = _param("ts_by", "topic", expect="a tag of this test set")
    metric: str = _param("ts_metric", "R@5")
    change: float = _param("ts_change", -0.02, parse=float, expect="a number such as -0.02 (a 2-point drop)")
    slice: str = _param("ts_slice", "all")
    old: str | None = _param("ts_old")
    new: str | None = _param("ts_new")


SIGNALS_MODES = ("Monitor", "Review", "Promote")


@dataclass(frozen=True)
class SignalsView(View):
    page: ClassVar[str] = "signals"
    log: str | None = _param("sig_log")
    mode: str = _param("sig_mode", "Monitor", expect="'Monitor', 'Review' or 'Promote'")
    every: str = _param("sig_every", "1d", expect="'1h', '6h', '1d' or '1w'")
    line: int | None = _param("sig_line", parse=int, expect="a line number of the log")
