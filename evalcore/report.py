"""A comparison as a file that travels: one self-contained HTML page (opens offline, no server, no
remote script) or Markdown for a pull-request comment.

Both render one :class:`~evalcore.comparison.Comparison` — its verdicts are its own; this module only
shows them — with the forest plot (HTML), the summary, each slice's significant deltas, the judges
and test set versions, and the most regressed questions side by side: question, reference answer,
both answers, the chunks each run retrieved (labeled ones marked) and the judge's claims. Every text
that comes from a run or test-set file is escaped (:mod:`evalcore.escape`), as on the dashboard.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import polars as pl

from evalcore._version import __version__
from evalcore.charts import VERDICT_COLOURS, forest
from evalcore.comparison import Comparison, filter_questions
from evalcore.escape import html_text, md_escape
from evalcore.question import QuestionDetail, question_detail
from evalcore.words import count

TOP = 10  # regressed questions shown by default
_SKIP_TAGS = ("split", "answerable", "must_pass")


def regressed(cmp: Comparison, top: int = TOP, *, include_heldout: bool = False) -> pl.DataFrame:
    """The most regressed questions (regressed or mixed, worst first): what every report lists.
    Held-out questions are left out unless asked, as on the dashboard and in ``evalcore compare``."""
    return filter_questions(cmp, status=["regressed", "mixed"], include_heldout=include_heldout).head(top)


def regressed_markdown(worst: pl.DataFrame) -> list[str]:
    """Markdown lines of the most regressed questions' table (the gate's summary uses it too)."""
    if not worst.height:
        return []
    lines = [
        "",
        f"**Most regressed questions** ({worst.height} shown):",
        "",
        "| question | diagnosis | worst Δ | labeled chunks that left the top k |",
        "|---|---|---:|---|",
    ]
    for r in worst.iter_rows(named=True):
        left = ", ".join(f"`{_code(c)}`" for c in r["left_top_k"]) or "–"
        lines.append(
            f"| `{_code(r['qid'])}` | {md_escape(r['diagnosis']) or '–'} | {_num(r['worst_delta'], 3)} | {left} |"
        )
    return lines


def slice_tags(cmp: Comparison, by: Sequence[str] | None = None) -> list[str]:
    """The tags a report breaks the comparison down by: those asked for, else every tag of the test
    set but the split, answerability and must-pass flags."""
    known = [t for t in cmp.baseline.testset.tag_names() if t not in _SKIP_TAGS]
    return [t for t in (by or known) if t in known]


def _slices(cmp: Comparison, tags: Sequence[str]) -> dict[str, pl.DataFrame]:
    """Per tag, the slices' rows with a verdict other than no change (what a reader acts on)."""
    out = {}
    for tag in tags:
        table = cmp.by_slice(tag)
        out[tag] = table.filter(pl.col("verdict").is_in(["worse", "better", "moved", "not comparable"]))
    return out


def _judges(cmp: Comparison) -> list[tuple[str, str, str]]:
    return [
        ("baseline", cmp.baseline.label, cmp.baseline.judge_text()),
        ("candidate", cmp.candidate.label, cmp.candidate.judge_text()),
    ]


# --------------------------------------------------------------------------- markdown


def markdown(
    cmp: Comparison, *, by: Sequence[str] | None = None, top: int = TOP, include_heldout: bool = False
) -> str:
    """The comparison as Markdown for a pull-request comment or a chat thread."""
    b, c = cmp.baseline, cmp.candidate
    lines = [
        f"## {md_escape(c.label)} vs {md_escape(b.label)}",
        "",
        f"Baseline **{md_escape(b.label)}** (`{_code(b.run_id)}`) → candidate **{md_escape(c.label)}** "
        f"(`{_code(c.run_id)}`), test set `{_code(b.testset.version)}`"
        + (f" → `{_code(c.testset.version)}`" if c.testset.version != b.testset.version else "")
        + f", on the {md_escape(cmp.note)}. Paired randomization test, Holm-corrected, α = {cmp.alpha:g}.",
        "",
        "Judges: " + "; ".join(f"{who} {md_escape(judge)}" for who, _, judge in _judges(cmp)) + ".",
        "",
    ]
    if cmp.judge_change:
        lines += [f"**Not comparable:** {md_escape(cmp.judge_change)}", ""]
    for verdict in ("worse", "better", "moved"):
        rows = cmp.summary.filter(pl.col("verdict") == verdict)
        if rows.height:
            lines.append(
                f"**{_VERDICT_WORDS[verdict]}:** " + "; ".join(_move(r) for r in rows.iter_rows(named=True))
            )
    if not cmp.summary.filter(pl.col("significant").fill_null(False)).height:
        lines.append("**No metric moved significantly.**")
    lines += [
        "",
        "| metric | n | baseline | candidate | Δ (95% CI) | p (Holm) | verdict |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for r in cmp.summary.filter(pl.col("n") > 0).iter_rows(named=True):
        lines.append(
            f"| {md_escape(r['metric'])} | {r['n']} | {_num(r['baseline'])} | {_num(r['candidate'])} | "
            f"{_delta(r)} | {_num(r['p_holm'], 3)} | {r['verdict']} |"
        )
    for tag, rows in _slices(cmp, slice_tags(cmp, by)).items():
        if not rows.height:
            continue
        lines += ["", f"**By {md_escape(tag)}** (significant after Holm across every slice and metric):", ""]
        lines += ["| slice | metric | n | Δ (95% CI) | verdict |", "|---|---|---:|---:|---|"]
        for r in rows.iter_rows(named=True):
            lines.append(
                f"| {md_escape(str(r['slice']))} | {md_escape(r['metric'])} | {r['n']} | {_delta(r)} | {r['verdict']} |"
            )
    lines += regressed_markdown(regressed(cmp, top, include_heldout=include_heldout))
    lines += ["", f"<sub>ragtriage {__version__} · {datetime.now(UTC):%Y-%m-%d %H:%M} UTC</sub>"]
    return "\n".join(lines) + "\n"


_VERDICT_WORDS = {
    "worse": "Significantly worse",
    "better": "Significantly better",
    "moved": "Moved (no better direction)",
}


def _move(r: dict[str, Any]) -> str:
    return f"{md_escape(r['metric'])} {_delta(r)}"


def _delta(r: dict[str, Any]) -> str:
    if r.get("delta") is None:
        return "–"
    return f"{r['delta']:+.3f} [{r['ci_low']:+.3f}, {r['ci_high']:+.3f}]"


def _num(v: float | None, digits: int = 3) -> str:
    return "–" if v is None else f"{v:.{digits}f}"


def _code(text: str) -> str:
    """Text inside a Markdown code span: a backtick cannot close it early."""
    return text.replace("`", "ˋ")


# --------------------------------------------------------------------------- HTML


def html(
    cmp: Comparison, *, by: Sequence[str] | None = None, top: int = TOP, include_heldout: bool = False
) -> str:
    """The comparison as one self-contained HTML page: styles and plotly's code inline (about 4.5 MB),
    no request to any server when it opens."""
    b, c = cmp.baseline, cmp.candidate
    chart = forest(cmp.summary).to_html(
        full_html=False, include_plotlyjs=True, config={"displayModeBar": False, "responsive": True}
    )
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        # No remote anything: a page opened from a mail or a chat thread fetches nothing.
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; img-src data:; font-src data:\">",
        f"<title>{html_text(b.label)} → {html_text(c.label)} · ragtriage</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{html_text(b.label)} <span class=vs>→</span> {html_text(c.label)}</h1>",
        f"<p class=meta>Baseline <b>{html_text(b.label)}</b> (<code>{html_text(b.run_id)}</code>) → candidate "
        f"<b>{html_text(c.label)}</b> (<code>{html_text(c.run_id)}</code>) · test set "
        f"<code>{html_text(b.testset.version)}</code>"
        + (
            f" → <code>{html_text(c.testset.version)}</code>"
            if c.testset.version != b.testset.version
            else ""
        )
        + f" · on the {html_text(cmp.note)} · top k = {cmp.k} · paired randomization test, Holm-corrected, "
        f"α = {cmp.alpha:g}</p>",
        "<p class=meta>Judges: "
        + "; ".join(f"{who} <b>{html_text(judge)}</b>" for who, _, judge in _judges(cmp))
        + "</p>",
    ]
    if cmp.judge_change:
        parts.append(f"<p class='box not'>Not comparable: {html_text(cmp.judge_change)}</p>")
    for verdict in ("worse", "better", "moved"):
        rows = cmp.summary.filter(pl.col("verdict") == verdict)
        if rows.height:
            moves = "; ".join(
                f"{html_text(r['metric'])} {html_text(_delta(r))}" for r in rows.iter_rows(named=True)
            )
            parts.append(
                f"<p class='box {verdict.replace(' ', '-')}'><b>{_VERDICT_WORDS[verdict]}:</b> {moves}</p>"
            )
    if not cmp.summary.filter(pl.col("significant").fill_null(False)).height:
        parts.append("<p class='box no-change'>No metric moved significantly.</p>")
    parts += ["<h2>Each metric's change</h2>", f"<div class=chart id=forest>{chart}</div>"]
    parts += [
        "<h2>Summary</h2>",
        "<p class=meta>Both runs' means are taken over the same questions: those both answered that "
        "the metric applies to (n). A run's own mean in the dashboard covers all its questions, so it "
        "can differ from the figure here.</p>",
        _summary_table(cmp),
        _glossary(cmp),
    ]
    slices = _slices(cmp, slice_tags(cmp, by))
    if slices:
        parts.append("<h2>By slice</h2>")
        for tag, rows in slices.items():
            parts.append(f"<h3>By {html_text(tag)}</h3>")
            values = (
                cmp.candidate.testset.tags.filter(pl.col("tag") == tag)["value"].unique().sort().to_list()
            )
            shown = ", ".join(values[:12]) + (f" and {len(values) - 12} more" if len(values) > 12 else "")
            parts.append(
                _slice_table(rows)
                if rows.height
                else f"<p class=meta>No {html_text(tag)} ({html_text(shown)}) moved significantly "
                "(Holm across every slice and metric).</p>"
            )
    worst = regressed(cmp, top, include_heldout=include_heldout)
    parts.append(f"<h2>Most regressed questions ({worst.height} shown)</h2>")
    if worst.height:
        parts.append(
            "<p class=meta>Worst first: the questions that lost most, not a sample of all of them — "
            "the summary above is what changed on the whole.</p>"
        )
    if not worst.height:
        parts.append("<p class=meta>No question regressed.</p>")
    for r in worst.iter_rows(named=True):
        parts.append(_question(cmp, r))
    parts.append(
        f"<p class=foot>ragtriage {html_text(__version__)} · written {datetime.now(UTC):%Y-%m-%d %H:%M} UTC · "
        "every text from the run files is shown as written, never as markup</p></body></html>"
    )
    return "\n".join(parts) + "\n"


def _summary_table(cmp: Comparison) -> str:
    rows = [
        "<table><thead><tr><th>metric</th><th>n</th><th>baseline</th><th>candidate</th>"
        "<th>Δ (95% CI)</th><th>p (Holm)</th><th>verdict</th></tr></thead><tbody>"
    ]
    for r in cmp.summary.filter(pl.col("n") > 0).iter_rows(named=True):
        rows.append(
            f"<tr><td>{html_text(r['metric'])}</td><td class=n>{r['n']}</td><td class=n>{_num(r['baseline'])}</td>"
            f"<td class=n>{_num(r['candidate'])}</td><td class=n>{html_text(_delta(r))}</td>"
            f"<td class=n>{_num(r['p_holm'], 3)}</td>{_verdict_cell(r['verdict'])}</tr>"
        )
    return "\n".join([*rows, "</tbody></table>"])


def _slice_table(rows: pl.DataFrame) -> str:
    out = [
        "<table><thead><tr><th>slice</th><th>metric</th><th>n</th><th>Δ (95% CI)</th><th>verdict</th></tr>"
        "</thead><tbody>"
    ]
    for r in rows.iter_rows(named=True):
        out.append(
            f"<tr><td>{html_text(r['slice'])}</td><td>{html_text(r['metric'])}</td><td class=n>{r['n']}</td>"
            f"<td class=n>{html_text(_delta(r))}</td>{_verdict_cell(r['verdict'])}</tr>"
        )
    return "\n".join([*out, "</tbody></table>"])


# What a regressed question's diagnosis means, in words (the comparison's diagnosis column).
DIAGNOSIS_WORDS = {
    "retrieval": "retrieval: a labeled chunk left the top k",
    "generation": "the answer got worse with the same chunks",
    "abstention": "abstention: answered what it should have declined, or the reverse",
    "soft score": "a softer score (relevance, judged context) fell",
    "imported score": "an imported score fell",
}

GLOSSARY = (
    (
        "Δ (95% CI)",
        "the mean change per question (candidate − baseline) and the range it lies in with "
        "95% confidence (bootstrap); a range that crosses 0 is no evidence of a change",
    ),
    (
        "n",
        "the questions a metric applies to in both runs: retrieval metrics need labeled chunks, "
        "abstention an unanswerable question, faithfulness an answer with claims",
    ),
    (
        "p (Holm)",
        "how likely a change this large is by chance alone (paired randomization test), "
        "raised to allow for testing many metrics at once (Holm); below α it is significant",
    ),
    ("worse / better", "a significant change in the direction the metric counts as worse or better"),
    (
        "held-out",
        "questions kept out of sight while the system is tuned, so that tuning cannot fit them; they "
        "count in the means, and the question lists leave them out unless asked",
    ),
    (
        "grade",
        "how relevant a person labeled a chunk for the question: 0 not relevant, 1 relevant, 2 or more "
        "highly relevant",
    ),
    (
        "SUPPORTED, not counted",
        "the judge said the documents support the claim, but the quote it gave is not in the chunks "
        "the answer was given, so faithfulness counts the claim as not supported",
    ),
    (
        "moved",
        "a significant change of a rate with no better direction (no_answer: fewer non-answers "
        "is good where the answer was known and bad where it was not — read it with abstention and "
        "false_refusal)",
    ),
)


def _glossary(cmp: Comparison) -> str:
    """What the words and metrics of the report mean, in a fold (the catalogue's descriptions)."""
    from evalcore.metrics import metric_info

    rows = [f"<dt>{html_text(term)}</dt><dd>{html_text(text)}</dd>" for term, text in GLOSSARY]
    for m in cmp.summary.filter(pl.col("n") > 0)["metric"].to_list():
        try:
            info = metric_info(m)
        except (KeyError, ValueError):
            continue
        rows.append(
            f"<dt>{html_text(m)}</dt><dd>{html_text(info.plain or info.description)}"
            f"<br><small>definition: {html_text(info.description)}</small></dd>"
        )
    return (
        "<details class=gloss open><summary>What these words and metrics mean</summary><dl>"
        + "".join(rows)
        + "</dl></details>"
    )


def _verdict_cell(verdict: str) -> str:
    colour = VERDICT_COLOURS.get(verdict, "#7F7F7F")
    return f"<td><span class=dot style='background:{colour}'></span>{html_text(verdict)}</td>"


def _question(cmp: Comparison, row: dict[str, Any]) -> str:
    qid = row["qid"]
    left = question_detail(cmp.baseline, qid, k=cmp.k)
    right = question_detail(cmp.candidate, qid, k=cmp.k)
    either = right or left
    case = either.case if either is not None else {}
    head = (
        f"<section class=q><h3><code>{html_text(qid)}</code> · {html_text(row['status'])} · worst change "
        f"{_num(row['worst_delta'])}"
        + (
            f" · {html_text(DIAGNOSIS_WORDS.get(row['diagnosis'], row['diagnosis']))}"
            if row.get("diagnosis")
            else ""
        )
        + "</h3>"
        f"<p class=question>{html_text(case.get('question'))}</p>"
    )
    if case.get("reference_answer"):
        head += f"<p class=meta>Reference answer: {html_text(case['reference_answer'])}</p>"
    if row.get("left_top_k"):
        head += (
            "<p class=meta>Labeled chunks that left the top k: "
            + ", ".join(f"<code>{html_text(c)}</code>" for c in row["left_top_k"])
            + "</p>"
        )
    cols = "".join(
        f"<div class=side><h4>{who}: {html_text(run.label)}</h4>{_side(d, cmp.k)}</div>"
        for who, run, d in (("Baseline", cmp.baseline, left), ("Candidate", cmp.candidate, right))
    )
    return head + f"<div class=pair>{cols}</div></section>"


def _side(d: QuestionDetail | None, k: int) -> str:
    if d is None:
        return "<p class=meta>This run did not answer the question.</p>"
    out = ["<p class=label>Answer</p>"]
    if d.answer is None or not d.answer.strip():
        out.append("<p class=meta>(no answer)</p>")
    else:
        out.append(f"<div class=text>{html_text(d.answer)}</div>")
    if d.claims.height:
        out.append(f"<p class=label>Judge claims ({d.claims.height})</p><ul class=claims>")
        for c in d.claims.iter_rows(named=True):
            verdict = str(c.get("verdict") or "").replace("_", " ")
            quote = c.get("quote")
            found = c.get("quote_found")
            if verdict == "SUPPORTED" and found is False:  # as faithfulness counts it
                verdict = "SUPPORTED, not counted"
            out.append(
                f"<li><span class='v {html_text(verdict.lower().replace(' ', '-').replace(',', ''))}'>{html_text(verdict)}</span> "
                f"{html_text(c.get('claim'))}"
                + (
                    f"<div class=quote>“{html_text(quote)}”"
                    + (
                        " <i>(this quote is not in the chunks the answer was given: the claim counts as "
                        "not supported)</i>"
                        if found is False
                        else ""
                    )
                    + "</div>"
                    if quote
                    else ""
                )
                + "</li>"
            )
        out.append("</ul>")
    top = d.chunks.filter(pl.col("rank") <= k)
    out.append(f"<p class=label>Top {k} chunks</p><ol class=chunks>")
    for ch in top.iter_rows(named=True):
        grade = ch.get("grade")
        mark = (
            f"<span class=lab>labeled relevant · grade {grade}</span> "
            if grade is not None and grade >= 1
            else ""
        )
        out.append(
            f"<li>{mark}<code>{html_text(ch['chunk_id'])}</code> <span class=meta>retriever score "
            f"{_num(ch.get('score'))}</span><div class=text>{html_text(ch.get('text') or '')}</div></li>"
        )
    out.append("</ol>")
    if d.missing_labeled:
        out.append(
            "<p class=meta>Labeled, not in the top k: "
            + ", ".join(f"<code>{html_text(m)}</code>" for m in d.missing_labeled)
            + "</p>"
        )
    if d.tie_at_cutoff:
        out.append(f"<p class=meta>{html_text(d.tie_at_cutoff)}</p>")
    return "".join(out)


_CSS = """
body{font:15px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:1200px;
padding:0 1rem;color:#1f2328}
h1{font-size:1.7rem;margin-bottom:.2rem}h1 .vs{color:#888;font-weight:400}
h2{margin-top:2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
.meta{color:#555;font-size:.9rem}.foot{color:#888;font-size:.8rem;margin-top:3rem}
code{background:#f3f3f3;padding:0 .25rem;border-radius:3px}
.box{padding:.6rem .9rem;border-radius:6px}.box.worse{background:#fbe9e1}.box.better{background:#e0f4ee}
.box.moved{background:#e1edf7}.box.no-change,.box.not{background:#f1f1f1}
table{border-collapse:collapse;font-size:.9rem;margin:.5rem 0}th,td{border-bottom:1px solid #e5e5e5;
padding:.25rem .6rem;text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}
.dot{display:inline-block;width:.7rem;height:.7rem;border-radius:50%;margin-right:.35rem}
section.q{border:1px solid #e2e2e2;border-radius:8px;padding:.4rem 1rem 1rem;margin:1rem 0}
.question{font-size:1.05rem;font-weight:600}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:1rem}@media(max-width:800px){.pair{grid-template-columns:1fr}}
.label{font-weight:600;margin:.6rem 0 .2rem}.text{white-space:pre-wrap;background:#fafafa;border-radius:4px;
padding:.3rem .5rem;font-size:.88rem}
.claims,.chunks{padding-left:1.2rem}.quote{color:#555;font-style:italic;font-size:.85rem}
.v{font-size:.75rem;font-weight:700;padding:0 .3rem;border-radius:3px;background:#eee}
.v.supported{background:#e0f4ee}.v.not-supported,.v.contradicted{background:#fbe9e1}
.lab{font-size:.75rem;background:#fff3cd;padding:0 .3rem;border-radius:3px}
.gloss{margin:.6rem 0;font-size:.9rem}.gloss dt{font-weight:600;margin-top:.3rem}.gloss dd{margin:0 0 0 1rem;color:#444}
"""


def write(path: str, text: str) -> None:
    """Write a report, UTF-8."""
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def describe(cmp: Comparison, worst: int) -> str:
    """One line saying what a written report holds (for the CLI)."""
    moved = cmp.summary.filter(pl.col("significant").fill_null(False)).height
    return f"{count(moved, 'metric')} moved significantly; {count(worst, 'regressed question')} shown"
