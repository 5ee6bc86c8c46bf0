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
    # Each value gets its own message, saying what a valid one is.
    assert "'k=many' in the link is not a whole number from 1 to 100; it was ignored." in complaints
    assert (
        "'status=nonsense' in the link is not one of regressed, mixed, improved, unchanged; it was ignored."
        in complaints
    )
    assert "'base=gone' in the link does not exist in this runs folder; it was ignored." in complaints
    _, complaints = CompareView.from_query_params({"k": ["-5"]}, {"k": lambda v: 1 <= v <= 100})
    assert complaints == ["'k=-5' in the link is not a whole number from 1 to 100; it was ignored."]


def test_other_pages_views_drop_their_defaults() -> None:
    assert BreakdownView(run="r", by="type", chart="heatmap").to_query_params() == {"run": "r"}
    assert BreakdownView(run="r", by="topic", chart="bars", bar="R@5").to_query_params() == {
        "run": "r",
        "by": "topic",
        "chart": "bars",
        "bar": "R@5",
    }
    assert QuestionView(qid="q", k=5).to_query_params() == {"qid": "q"}
