"""Run versus run, paired on the questions both runs answered.

For every metric: the per-question delta (candidate − baseline), the mean delta with a bootstrap CI
(the effect size), a paired randomization test, and Holm's correction across everything tested at
once. Per question: which labeled chunks left or entered the top k, and where a regression sits:

* ``retrieval``   — a labeled chunk left the top k, or a retrieval metric fell;
* ``generation``  — retrieval held (or improved) but faithfulness or correctness fell;
* ``abstention``  — an unanswerable question stopped abstaining, or an answerable one started refusing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import polars as pl

from evalcore.cache import cached_frame, code_version
from evalcore.metrics.catalogue import DEFAULT_MEASURES, EPS, JUDGED, metric_info
from evalcore.metrics.measures import Measure
from evalcore.metrics.retrieval import rank, ranks_as_listed
from evalcore.runs.groups import describe_left_out, same_test_set, shared_questions
from evalcore.runs.load import Run
from evalcore.runs.testset import is_heldout
from evalcore.score import metric_columns, score_run, slice_frame
from evalcore.stats import ALPHA, SMALL_SLICE, bootstrap_ci, holm, paired_randomization_test
from evalcore.words import count


@dataclass(frozen=True)
class Comparison:
    baseline: Run
    candidate: Run
    k: int
    metrics: tuple[str, ...]
    per_question: pl.DataFrame  # qid, status, diagnosis, <m>_base, <m>_cand, <m>_delta, chunks moved
    summary: pl.DataFrame  # metric, n, baseline, candidate, delta, ci_low, ci_high, p, p_holm, ...
    # Runs of two versions of one test set: questions left out because they changed, per reason.
    left_out: dict[str, int] = field(default_factory=dict)
    # Set when the two runs were judged by different judges (model, prompt or schema): the judged
    # metrics then compare the judges, not the systems. Says how to re-judge the baseline.
    judge_change: str | None = None
    # The significance level every verdict of this report is decided at (``with_alpha`` for another).
    alpha: float = ALPHA

    def __post_init__(self) -> None:
        if "verdict" not in self.summary.columns:  # (a report built from a bare summary decides too)
            object.__setattr__(self, "summary", decide(self.summary, self.alpha))

    def with_alpha(self, alpha: float) -> Comparison:
        """The same report with every verdict decided at ``alpha`` (a gate policy's level)."""
        if alpha == self.alpha:
            return self
        return replace(self, alpha=alpha, summary=decide(self.summary.drop(*DECIDED), alpha))

    @property
    def note(self) -> str:
        """Which questions the comparison covers, in words (for every surface that shows its figures)."""
        n = self.per_question.height
        text = f"{count(n, 'question')} both runs answered"
        if self.left_out:
            text += (
                f" in both test set versions ({self.baseline.testset.version} → "
                f"{self.candidate.testset.version}) unchanged; " + describe_left_out(self.left_out)
            )
        return text

    @property
    def n_heldout(self) -> int:
        """Held-out questions among those both runs answered (per-question views hide them by default)."""
        return self.per_question.filter(is_heldout()).height

    def question(self, qid: str) -> dict[str, Any] | None:
        """One question's row of :attr:`per_question` (None if both runs did not answer it)."""
        row = self.per_question.filter(pl.col("qid") == qid)
        return row.row(0, named=True) if row.height else None

    def by_slice(
        self, tag: str, *, metrics: Sequence[str] | None = None, permutations: int = 10_000
    ) -> pl.DataFrame:
        """The summary per value of ``tag``, Holm-corrected across every (slice, metric) tested."""
        chosen = list(metrics or self.metrics)

        def compute() -> pl.DataFrame:
            slices = slice_frame(self.baseline.testset, tag)
            joined = slices.join(self.per_question, on="qid", how="inner")
            return _summarise(joined, chosen, group="slice", permutations=permutations)

        b, c = self.baseline, self.candidate
        if b.source_key is None or c.source_key is None:
            table = compute()
        else:
            # Ten thousand permutations per cell add up (56 cells: over a second), so the table is kept
            # on disk like the scores; the key names every input.
            key = f"{b.source_key}|{c.source_key}|{b.testset.sha256}|{c.testset.sha256}|{self.k}|{chosen}|{tag}|{permutations}|{code_version()}"
            table = cached_frame("by_slice", key, compute)
        comparable = self.summary.select("metric", "comparable")
        return decide(table.join(comparable, on="metric", how="left"), self.alpha)


def incomparable(baseline: Run, candidate: Run) -> str | None:
    """Why two runs cannot be compared question by question (None if they can). Runs of two versions
    of one test set compare on the questions both versions hold unchanged; with none, the same qid
    would mean a different question or different labels."""
    kept, left_out = shared_questions(baseline.testset, candidate.testset)
    if kept:
        return None
    if not same_test_set(baseline.testset, candidate.testset):
        return (
            f"the runs answer different test sets ({baseline.testset.path} and {candidate.testset.path}: "
            "their questions differ, so a qid in one is not the same question in the other); compare "
            "runs of one test set"
        )
    return (
        f"the runs answer two versions of a test set ({baseline.testset.version} and "
        f"{candidate.testset.version}) with no question unchanged between them "
        f"({describe_left_out(left_out) or 'no question in common'}); compare runs of one version"
    )


def _chunk_moves(base: Run, cand: Run, k: int) -> pl.DataFrame:
    rel = base.testset.qrels.filter(pl.col("rel") >= 1).select("qid", "chunk_id")
    # The labeled chunks among each top k: a (qid, chunk id) pair is looked up by one integer (its
    # two hashes combined), and only the rows found are matched on the strings, which drops any
    # pair that merely shares a hash. At 1,000,000 questions the join on two string columns of
    # 5,000,000 rows took 0.5 s a run.
    pair_hash = pl.col("qid").hash(seed=0) ^ pl.col("chunk_id").hash(seed=1)
    rel_hashes = rel.select(pair_hash)["qid"].implode()

    def top(run: Run) -> pl.DataFrame:
        df = run.retrieved
        ranks = ranks_as_listed(df, by_line="line" in df.columns) if df.height else None
        if ranks is not None:  # (as run files list them) the labeled rows ranked k or better, marked
            # in numpy: no copy of the top k rows (20,000,000 rows: 1.0 s of 1.5 s)
            labeled = df.select(pair_hash.is_in(rel_hashes)).to_series().to_numpy()
            found = df.select("qid", "chunk_id")[pl.Series(np.flatnonzero(labeled & (ranks <= k)))]
        else:
            found = (
                rank(df.select("qid", "chunk_id", "score"))
                .filter(pl.col("rank") <= k)
                .select("qid", "chunk_id")
                .collect()  # before the hashes: one plan would hash every row of the run
                .filter(pair_hash.is_in(rel_hashes))
            )
        return (
            found.lazy()
            .join(rel.lazy(), on=["qid", "chunk_id"], how="semi")
            .group_by("qid")
            .agg(pl.col("chunk_id").sort())
            .collect()
        )

    # The two runs side by side (numpy and polars let go of the interpreter): 4.5-5.3 -> 3.9-4.2 s
    # at a million questions (interleaved A/B).
    with ThreadPoolExecutor(2, thread_name_prefix="evalcore-moves") as pool:
        tops = list(pool.map(top, (base, cand)))
    b, c = tops[0].rename({"chunk_id": "b"}), tops[1].rename({"chunk_id": "c"})
    both = b.join(c, on="qid", how="full", coalesce=True).with_columns(
        pl.col("b").fill_null(pl.lit([], dtype=pl.List(pl.String))),
        pl.col("c").fill_null(pl.lit([], dtype=pl.List(pl.String))),
    )
    return both.select(
        "qid",
        left_top_k=pl.col("b").list.set_difference("c").list.sort(),
        entered_top_k=pl.col("c").list.set_difference("b").list.sort(),
    )


def compare(
    baseline: Run,
    candidate: Run,
    *,
    measures: Iterable[Measure | str] = DEFAULT_MEASURES,
    k: int = 5,
    permutations: int = 10_000,
    scores: tuple[pl.DataFrame, pl.DataFrame] | None = None,
) -> Comparison:
    """Compare ``candidate`` against ``baseline`` on the questions both answered.

    ``scores`` (baseline's, candidate's per-question scores) are used as given; without them both runs
    are scored with ``measures``."""
    kept, left_out = shared_questions(baseline.testset, candidate.testset)
    if not kept:
        raise ValueError(incomparable(baseline, candidate))
    sb, sc = scores if scores is not None else (score_run(baseline, measures), score_run(candidate, measures))
    metrics = [m for m in metric_columns(sb) if m in sc.columns]
    base_scores, cand_scores = sb.select("qid", *metrics), sc.select("qid", *metrics)
    if base_scores["qid"].equals(cand_scores["qid"]):
        # One row per question in both, in the same order (two runs of one test set, scored): side
        # by side is the join, without hashing a million qids twice.
        joined = base_scores.hstack(cand_scores.drop("qid").rename({m: f"{m}_cand" for m in metrics}))
    else:
        joined = base_scores.join(cand_scores, on="qid", how="inner", suffix="_cand")
    if left_out:  # two versions: only the questions neither changed
        joined = joined.filter(pl.col("qid").is_in(kept))
    joined = joined.rename({m: f"{m}_base" for m in metrics}).with_columns(
        [(pl.col(f"{m}_cand") - pl.col(f"{m}_base")).alias(f"{m}_delta") for m in metrics]
    )
    moves = _chunk_moves(baseline, candidate, k)
    joined = joined.join(moves, on="qid", how="left").with_columns(
        pl.col("left_top_k").fill_null(pl.lit([], dtype=pl.List(pl.String))),
        pl.col("entered_top_k").fill_null(pl.lit([], dtype=pl.List(pl.String))),
    )
    joined = _diagnose(joined, metrics)
    joined = joined.join(
        baseline.testset.cases.select("qid", "must_pass", "answerable", "split"), on="qid", how="left"
    )
    summary = _summarise(joined, metrics, group=None, permutations=permutations)
    change = judge_change(baseline, candidate)
    summary = summary.drop("slice").with_columns(
        comparable=pl.lit(change is None) | ~pl.col("metric").is_in(list(JUDGED))
    )
    return Comparison(
        baseline=baseline,
        candidate=candidate,
        k=k,
        metrics=tuple(metrics),
        per_question=joined.sort("worst_delta", "qid", nulls_last=True),
        summary=summary,
        left_out=left_out,
        judge_change=change,
    )


def judge_change(baseline: Run, candidate: Run) -> str | None:
    """Why the judged metrics of two runs are not comparable (None if they are, or if a run does
    not say which judge it had): a changed judge is not a changed system."""
    a, b = baseline.judge, candidate.judge
    if a is None or b is None or a == b:
        return None
    return (
        f"the runs were judged by different judges (baseline: {baseline.judge_text()}; candidate: "
        f"{candidate.judge_text()}), so {', '.join(JUDGED)} compare the judges, not the systems. "
        f"Re-judge the baseline with the candidate's judge: evalcore judge {baseline.path} --like {candidate.path}"
    )


def _signed(m: str) -> pl.Expr:
    """The delta of ``m`` turned so that negative is worse (the catalogue's rule)."""
    return metric_info(m).better_expr(pl.col(f"{m}_delta"))


def _diagnose(df: pl.DataFrame, metrics: list[str]) -> pl.DataFrame:
    def role(r: str) -> list[str]:
        return [m for m in metrics if metric_info(m).role == r]

    retrieval, generation, abst = role("retrieval"), role("answer"), role("abstention")

    # Soft scores (relevance, imported ones) wobble between judge calls and rates have no direction:
    # they are reported, but a question's status comes from the metrics that say right or wrong —
    # unless no retrieval or answer metric applies to any question of the pair (a Ragas export
    # without labels or judge output): then its imported scores are all there is, and they decide.
    def applies(m: str) -> bool:
        return df[f"{m}_delta"].null_count() < df.height

    soft = [m for m in role("soft") if metric_info(m).higher_is_better is not None and applies(m)]
    by_soft = not any(applies(m) for m in (*retrieval, *generation))
    key = [*retrieval, *generation, *abst, *(soft if by_soft else [])]

    def worst(ms: list[str]) -> pl.Expr:
        return pl.min_horizontal([_signed(m).fill_null(0.0) for m in ms]) if ms else pl.lit(0.0)

    def best(ms: list[str]) -> pl.Expr:
        return pl.max_horizontal([_signed(m).fill_null(0.0) for m in ms]) if ms else pl.lit(0.0)

    lost_chunk = pl.col("left_top_k").list.len() > 0
    ret_down = (worst(retrieval) < -EPS) | lost_chunk
    gen_down = worst(generation) < -EPS
    abst_down = worst(abst) < -EPS
    soft_down = worst(soft) < -EPS if by_soft else pl.lit(False)
    df = df.with_columns(worst_delta=worst(key), best_delta=best(key))
    status = (
        pl.when((pl.col("worst_delta") < -EPS) | lost_chunk)
        .then(pl.when(pl.col("best_delta") > EPS).then(pl.lit("mixed")).otherwise(pl.lit("regressed")))
        .when(pl.col("best_delta") > EPS)
        .then(pl.lit("improved"))
        .otherwise(pl.lit("unchanged"))
    )
    diagnosis = (
        pl.when(ret_down)
        .then(pl.lit("retrieval"))
        .when(gen_down)
        .then(pl.lit("generation"))
        .when(abst_down)
        .then(pl.lit("abstention"))
        .when(soft_down)
        .then(pl.lit("imported score" if all(m.startswith("ext:") for m in soft) else "soft score"))
        .otherwise(None)
    )
    return df.with_columns(status=status).with_columns(
        diagnosis=pl.when(pl.col("status").is_in(["regressed", "mixed"])).then(diagnosis)
    )


def _summarise(df: pl.DataFrame, metrics: list[str], *, group: str | None, permutations: int) -> pl.DataFrame:
    """One row per (value of the ``group`` column, metric); ``group=None``: the whole frame as one
    slice, "all" (a group_by over a constant column copied every row: 0.3 s at 1,000,000)."""
    rows = []
    parts = [(("all",), df)] if group is None else df.group_by(group, maintain_order=True)
    group = group or "slice"
    for (g,), part in parts:
        for m in metrics:
            pair = part.select(f"{m}_base", f"{m}_cand", f"{m}_delta").drop_nulls()
            d = pair[f"{m}_delta"].to_numpy()
            n = int(d.size)
            info = metric_info(m)
            signed = None if info.higher_is_better is None else (d if info.higher_is_better else -d)
            lo, hi = bootstrap_ci(d, seed=1) if n else (None, None)
            rows.append(
                {
                    group: str(g),
                    "metric": m,
                    "n": n,
                    "baseline": float(pair[f"{m}_base"].mean()) if n else None,  # type: ignore[arg-type]
                    "candidate": float(pair[f"{m}_cand"].mean()) if n else None,  # type: ignore[arg-type]
                    "delta": float(d.mean()) if n else None,
                    "ci_low": lo,
                    "ci_high": hi,
                    "p": paired_randomization_test(d, permutations=permutations, seed=2) if n else None,
                    # By the metric's direction; a rate with none neither improves nor regresses.
                    "better": info.better(float(d.mean())) if n else None,
                    "improved": None if signed is None else int((signed > EPS).sum()),
                    "regressed": None if signed is None else int((signed < -EPS).sum()),
                    "small": n < SMALL_SLICE,
                    "higher_is_better": info.higher_is_better,
                    "direction": info.direction,
                }
            )
    schema = {
        group: pl.String,
        "metric": pl.String,
        "n": pl.Int64,
        "baseline": pl.Float64,
        "candidate": pl.Float64,
        "delta": pl.Float64,
        "ci_low": pl.Float64,
        "ci_high": pl.Float64,
        "p": pl.Float64,
        "better": pl.Float64,
        "improved": pl.Int64,
        "regressed": pl.Int64,
        "small": pl.Boolean,
        "higher_is_better": pl.Boolean,
        "direction": pl.String,
    }
    out = pl.DataFrame(rows, schema=schema)
    tested = out["p"].is_not_null()
    adj = holm(out.filter(tested)["p"].to_numpy())
    p_holm = out["p"].to_list()
    it = iter(adj.tolist())
    p_holm = [next(it) if p is not None else None for p in p_holm]
    return out.with_columns(p_holm=pl.Series(p_holm, dtype=pl.Float64))


# A summary row's verdict, decided here once for every surface (CLI, gate, dashboard, reports):
VERDICTS = ("worse", "better", "moved", "no change", "not comparable", "no data")
DECIDED = ("significant", "verdict")  # the columns :func:`decide` adds


def decide(summary: pl.DataFrame, alpha: float) -> pl.DataFrame:
    """A summary (or by-slice) table with each row's decision: ``significant`` (Holm-corrected p below
    ``alpha``, and comparable) and ``verdict`` — 'worse' or 'better' by the metric's direction, 'moved'
    for a rate with none, 'no change' when not significant, 'not comparable' when the judge changed,
    'no data' when no question has the metric in both runs."""
    if "better" not in summary.columns:  # the delta by the metric's direction (catalogue)
        summary = summary.with_columns(
            better=pl.Series(
                [
                    None if d is None else metric_info(m).better(d)
                    for m, d in zip(
                        summary["metric"],
                        summary["delta"] if "delta" in summary.columns else [None] * summary.height,
                        strict=True,
                    )
                ],
                dtype=pl.Float64,
            )
        )
    comparable = pl.col("comparable") if "comparable" in summary.columns else pl.lit(True)
    significant = pl.col("p_holm").is_not_null() & (pl.col("p_holm") < alpha) & comparable.fill_null(True)
    return summary.with_columns(significant=significant).with_columns(
        verdict=pl.when(~comparable.fill_null(True))
        .then(pl.lit("not comparable"))
        .when(pl.col("n") == 0)
        .then(pl.lit("no data"))
        .when(~pl.col("significant"))
        .then(pl.lit("no change"))
        .when(pl.col("better").is_null())
        .then(pl.lit("moved"))
        .when(pl.col("better") < 0)
        .then(pl.lit("worse"))
        .otherwise(pl.lit("better"))
    )


STATUSES = ("regressed", "mixed", "improved", "unchanged")
# A summary's columns as people read them (the CLI's table, the dashboard's), in order.
SUMMARY_COLUMNS = (
    "metric",
    "n",
    "baseline",
    "candidate",
    "delta",
    "ci_low",
    "ci_high",
    "p_holm",
    "improved",
    "regressed",
)


def filter_questions(
    cmp: Comparison,
    *,
    status: Sequence[str] | None = None,
    tag: tuple[str, str] | None = None,
    must_pass_only: bool = False,
    answerable: bool | None = None,
    include_heldout: bool = False,
) -> pl.DataFrame:
    """The per-question table narrowed as a reviewer asks: by status, one tag value, must-pass,
    answerable or not, and held-out questions left out unless asked for (tuning on them overfits).
    Order stays worst regression first."""
    df = cmp.per_question
    if status:
        df = df.filter(pl.col("status").is_in(list(status)))
    if tag is not None:
        key, value = tag
        ids = cmp.baseline.testset.tags.filter((pl.col("tag") == key) & (pl.col("value") == value)).select(
            "qid"
        )
        df = df.join(ids, on="qid", how="semi")
    if must_pass_only:
        df = df.filter(pl.col("must_pass"))
    if answerable is not None:
        df = df.filter(pl.col("answerable") == answerable)
    if not include_heldout:
        df = df.filter(~is_heldout())
    return df
