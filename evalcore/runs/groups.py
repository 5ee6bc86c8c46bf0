"""Which test set each run answered: runs grouped by test set, and the questions two versions share.

A runs folder often holds runs of several test sets (two Ragas exports side by side) and of several
versions of one (a relabeled question, an added one). A qid means something only inside its test set:
``ragas-00001`` of one export is not ``ragas-00001`` of another. So every view picks runs within one
:class:`TestSetGroup`, and a question is named by its group and its qid.

Two test-set files are *versions of one test set* when at least half of the smaller one's questions
appear in the other with the same qid **and** the same question text. Two unrelated exports that both
number their questions ``ragas-00001, …`` share qids but not texts, so they stay apart.

Two runs of different versions compare on the questions whose text, reference answer, answerability
and labels did not change (:func:`shared_questions`); the rest are counted by reason, never silently
dropped.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from evalcore.runs.load import Run, RunEntry
from evalcore.runs.testset import TestSet
from evalcore.words import count

SAME_TEST_SET = 0.5  # share of the smaller version's (qid, text) pairs the other must hold


@dataclass(frozen=True)
class TestSetGroup:
    """Runs that answered one test set (in one or several versions), oldest run first."""

    __test__ = False

    name: str  # the newest version's file, relative to the runs folder where it lies under it
    versions: tuple[str, ...]  # short sha256 of each version, in the order runs first used them
    run_ids: tuple[str, ...]

    @property
    def key(self) -> str:
        """What a link names the group by: its first version (any version of the group also works)."""
        return self.versions[0]

    @property
    def label(self) -> str:
        n = len(self.versions)
        return f"{self.name} · {count(len(self.run_ids), 'run')}" + (f" · {n} versions" if n > 1 else "")


def same_test_set(a: TestSet, b: TestSet) -> bool:
    """Whether two test-set files are versions of one test set (see the module's docstring)."""
    return a.sha256 == b.sha256 or _same_test_set(a, b)


def _same_test_set(a: TestSet, b: TestSet) -> bool:
    pairs_a = a.cases.select("qid", "question")
    pairs_b = b.cases.select("qid", "question")
    shared = pairs_a.join(pairs_b, on=["qid", "question"], how="semi").height
    return shared >= SAME_TEST_SET * min(pairs_a.height, pairs_b.height) and shared > 0


def _display(path: Path, root: Path | None) -> str:
    if root is not None:
        try:
            return Path(os.path.relpath(path.resolve(), root.resolve())).as_posix()
        except ValueError:  # another drive (Windows)
            pass
    return path.name


def group_runs(runs: Iterable[Run | RunEntry], root: str | Path | None = None) -> list[TestSetGroup]:
    """The runs grouped by test set, in the order of each group's newest run (the group with the
    latest run last, like runs). ``root`` (the runs folder) makes names relative to it."""
    ordered = list(runs)
    versions: dict[str, TestSet] = {}
    for run in ordered:
        versions.setdefault(run.testset.sha256, run.testset)
    # Union-find over versions: a handful of test sets, so the pairwise check is cheap.
    parent = {sha: sha for sha in versions}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    shas = list(versions)
    for i, a in enumerate(shas):
        for b in shas[i + 1 :]:
            if find(a) != find(b) and _same_test_set(versions[a], versions[b]):
                parent[find(b)] = find(a)
    members: dict[str, list[Run | RunEntry]] = {}
    for run in ordered:
        members.setdefault(find(run.testset.sha256), []).append(run)
    root_path = Path(root) if root is not None else None
    groups = []
    for group_runs_ in members.values():
        newest = group_runs_[-1].testset
        groups.append(
            TestSetGroup(
                name=_display(newest.path, root_path),
                versions=tuple(dict.fromkeys(r.testset.version for r in group_runs_)),
                run_ids=tuple(r.run_id for r in group_runs_),
            )
        )
    names = [g.name for g in groups]
    # Two groups whose newest files share a name (both outside the root): add the version to tell them apart.
    groups = [
        g if names.count(g.name) == 1 else TestSetGroup(f"{g.name} @ {g.versions[-1]}", g.versions, g.run_ids)
        for g in groups
    ]
    return groups


def find_group(groups: list[TestSetGroup], key: str) -> TestSetGroup | None:
    """The group a link names by any of its versions (a short sha256; a longer prefix also works)."""
    for g in groups:
        if any(v.startswith(key[:12]) and key[:12] for v in g.versions):
            return g
    return None


# --------------------------------------------------------------------------- versions


def _case_key(ts: TestSet) -> pl.DataFrame:
    labels = (
        ts.qrels.sort("qid", "chunk_id")
        .group_by("qid")
        .agg(labels=pl.concat_str("chunk_id", pl.lit("="), pl.col("rel").cast(pl.String)).str.join(" "))
    )
    return ts.cases.select("qid", "question", "reference_answer", "answerable").join(
        labels, on="qid", how="left"
    )


# The reasons a question of one version is left out of a comparison with another, in report order.
LEFT_OUT = (
    "only in the baseline's version",
    "only in the candidate's version",
    "question text changed",
    "labels changed",
    "reference answer changed",
)


def shared_questions(baseline: TestSet, candidate: TestSet) -> tuple[list[str], dict[str, int]]:
    """The qids two test-set versions hold unchanged (same question text, reference answer,
    answerability and labelled chunks with grades), and how many questions were left out per reason."""
    if baseline.sha256 == candidate.sha256:
        return baseline.cases["qid"].to_list(), {}
    if not _same_test_set(baseline, candidate):
        # Not two versions of one test set: a shared qid names different questions.
        return [], {"in another test set (different questions under the same ids)": candidate.cases.height}
    b, c = _case_key(baseline), _case_key(candidate)
    both = b.join(c, on="qid", how="inner", suffix="_c")
    same = lambda col: pl.col(col).eq_missing(pl.col(f"{col}_c"))  # noqa: E731
    reason = (
        pl.when(~same("question"))
        .then(pl.lit(LEFT_OUT[2]))
        .when(~same("labels") | ~same("answerable"))
        .then(pl.lit(LEFT_OUT[3]))
        .when(~same("reference_answer"))
        .then(pl.lit(LEFT_OUT[4]))
    )
    both = both.with_columns(reason=reason)
    counts = {
        LEFT_OUT[0]: b.join(c, on="qid", how="anti").height,
        LEFT_OUT[1]: c.join(b, on="qid", how="anti").height,
    }
    for r in LEFT_OUT[2:]:
        counts[r] = both.filter(pl.col("reason") == r).height
    kept = both.filter(pl.col("reason").is_null())["qid"].sort().to_list()
    return kept, {r: n for r, n in counts.items() if n}


def describe_left_out(left_out: dict[str, int]) -> str:
    """``"3 questions left out: 2 labels changed, 1 only in the candidate's version"``, or ""."""
    if not left_out:
        return ""
    total = sum(left_out.values())
    return f"{count(total, 'question')} left out: " + ", ".join(f"{n} {r}" for r, n in left_out.items())
