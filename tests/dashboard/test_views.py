"""Each page's view object reads and writes its URL: defaults written once, left out of links, bad values
named in a complaint instead of breaking the page."""

from __future__ import annotations

from dashboard.views import BreakdownView, CompareView, QuestionView


def test_a_compare_link_round_trips_and_holds_only_what_differs_from_the_defaults() -> None:
    view = CompareView(base="a", cand="b", k=10, status=["improved"], heldout=True, qid="q1")
    query = view.to_query_params()
    assert query == {"base": "a", "cand": "b", "k": 10, "status": ["improved"], "heldout": True, "qid": "q1"}
    back, complaints = CompareView.from_query_params(
        {
            k: [str(x) for x in v]
            if isinstance(v, list)
            else [str(v).lower() if isinstance(v, bool) else str(v)]
            for k, v in query.items()
        }
    )
    assert back == view and complaints == []
    defaults = CompareView(base="a", cand="b")
    assert defaults.to_query_params() == {"base": "a", "cand": "b"}, "the runs are always in the link"
    assert defaults.k == 5 and defaults.status == ["regressed", "mixed"]


def test_bad_link_values_fall_back_to_defaults_with_a_complaint() -> None:
    view, complaints = CompareView.from_query_params(
        {"k": ["many"], "status": ["regressed", "nonsense"], "base": ["gone"]},
        {"base": lambda v: v == "kept", "status": lambda v: v in ("regressed", "improved")},
    )
    assert view.k == 5 and view.status == ["regressed"] and view.base is None
    assert any("'k=many'" in c and "not a valid value" in c for c in complaints)
    assert any("'status=nonsense'" in c for c in complaints) and any("'base=gone'" in c for c in complaints)


def test_other_pages_views_drop_their_defaults() -> None:
    assert BreakdownView(run="r", by="type", chart="heatmap").to_query_params() == {"run": "r"}
    assert BreakdownView(run="r", by="topic", chart="bars", bar="R@5").to_query_params() == {
        "run": "r",
        "by": "topic",
        "chart": "bars",
        "bar": "R@5",
    }
    assert QuestionView(qid="q", k=5).to_query_params() == {"qid": "q"}
