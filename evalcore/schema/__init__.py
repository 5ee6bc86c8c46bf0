"""The file formats, as strict pydantic models.

These models are the contract between a RAG pipeline, evalcore and the dashboard. They are the
source of the JSON Schema printed by ``evalcore schema`` and documented in ``docs/run-format.md``.
They validate shape at the boundary; rows are then carried by polars, not by model instances.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    ValidationInfo,
    field_validator,
    model_validator,
)

SCHEMA_VERSION = 1

NonEmptyStr = Annotated[str, Field(min_length=1)]


def _finite(value: float | None, what: str) -> float | None:
    if value is not None and not math.isfinite(value):
        msg = f"{what} must be a finite number, got {value!r}"
        raise ValueError(msg)
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# --------------------------------------------------------------------------- test set


class EvidenceSpan(_Strict):
    """A labeled span in a source document. Survives rechunking, unlike a chunk id."""

    doc_id: NonEmptyStr
    start: StrictInt = Field(ge=0, description="character offset where the span starts (inclusive)")
    end: StrictInt = Field(ge=0, description="character offset where the span ends (exclusive)")
    quote: str | None = Field(default=None, description="the text of the span, to check offsets against")
    grade: StrictInt = Field(default=1, ge=1, description="graded relevance of the span")

    @model_validator(mode="after")
    def _ordered(self) -> EvidenceSpan:
        if self.end <= self.start:
            msg = f"end ({self.end}) must be greater than start ({self.start})"
            raise ValueError(msg)
        return self


class Tags(BaseModel):
    """Tags of a test case. ``type``, ``topic`` and ``source`` are required; any other key is allowed
    with a string or a list of strings as value (a question may belong to several slices)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    type: NonEmptyStr = Field(description="question type: lookup, comparison, multi-hop, identifier, ...")
    topic: NonEmptyStr
    source: Literal["real", "synthetic"]

    @model_validator(mode="after")
    def _extra_values(self) -> Tags:
        for key, value in (self.model_extra or {}).items():
            ok = isinstance(value, str) or (
                isinstance(value, list) and all(isinstance(v, str) for v in value)
            )
            if not ok:
                msg = f"tag '{key}' must be a string or a list of strings, got {value!r}"
                raise ValueError(msg)
        return self


class TestCase(_Strict):
    """One line of the test set (JSON Lines)."""

    __test__ = False  # not a pytest class

    qid: NonEmptyStr
    question: NonEmptyStr
    relevant: dict[NonEmptyStr, Annotated[StrictInt, Field(ge=0)]] = Field(
        default_factory=dict,
        description=(
            "chunk id -> graded relevance (0 = judged not relevant, 1+ = relevant). "
            "No grade >= 1 means the corpus cannot answer the question."
        ),
    )
    evidence: list[EvidenceSpan] = Field(default_factory=list)
    reference_answer: str | None = None
    tags: Tags
    split: Literal["dev", "heldout"] = "dev"
    must_pass: StrictBool = False
    answerable: StrictBool | None = Field(
        default=None,
        description=(
            "Can the corpus answer the question? Left out, it follows from `relevant` (a grade >= 1). "
            "Set true for an answerable question whose chunks are not labeled yet: its answer is "
            "scored, its retrieval is not (there is nothing to score it against)."
        ),
    )

    @field_validator("answerable")
    @classmethod
    def _answerable_agrees_with_labels(cls, value: bool | None, info: ValidationInfo) -> bool | None:
        if value is False and any(g >= 1 for g in (info.data.get("relevant") or {}).values()):
            msg = "false, but relevant lists a chunk with grade >= 1 (drop answerable, or the label)"
            raise ValueError(msg)
        return value


# --------------------------------------------------------------------------- run manifest


class TestSetRef(_Strict):
    __test__ = False

    path: NonEmptyStr = Field(description="path of the test set, relative to the run folder")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="sha256 of the test set file's bytes")


class JudgeConfig(BaseModel):
    """How the stored judge output was produced. Extra keys are kept."""

    model_config = ConfigDict(extra="allow", frozen=True)

    model: str | None = None
    prompt_version: str | None = None
    prompt_sha256: str | None = None
    schema_sha256: str | None = None


class RunManifest(_Strict):
    """``run.json``: what was run, on which test set, with which system and judge."""

    schema_version: Literal[1] = 1
    run_id: Annotated[str, Field(min_length=1, pattern=r"^[A-Za-z0-9._-]+$")]
    label: str | None = None
    created: datetime
    test_set: TestSetRef
    system: dict[str, Any] = Field(
        default_factory=dict,
        description="the system's configuration: chunker, embedding model, index, fusion, prompt, generator",
    )
    judge: JudgeConfig | None = None
    context_k: StrictInt | None = Field(
        default=None,
        ge=1,
        description=(
            "how many of the top retrieved chunks (in rank order) the generator was given; a judge's quote "
            "counts only if it is in one of them. Left out: every retrieved chunk."
        ),
    )
    library_version: str | None = None
    notes: str | None = None
    external_metrics: dict[str, str] = Field(
        default_factory=dict,
        description="name -> where it came from, for scores computed outside evalcore (e.g. a Ragas import)",
    )


class Chunk(_Strict):
    """One line of the optional ``chunks.jsonl``: the index build's chunk table."""

    chunk_id: NonEmptyStr
    doc_id: NonEmptyStr
    start: StrictInt = Field(ge=0)
    end: StrictInt = Field(ge=0)
    text: str


# --------------------------------------------------------------------------- run results


class RetrievedChunk(_Strict):
    chunk_id: NonEmptyStr
    score: float
    doc_id: str | None = None
    text: str | None = None
    rank: StrictInt | None = Field(default=None, description="ignored: ranks come from score, then chunk id")

    @field_validator("score")
    @classmethod
    def _score_finite(cls, v: float) -> float:
        _finite(v, "score")
        return v


Verdict = Literal["SUPPORTED", "NOT_SUPPORTED"]
VERDICTS: tuple[str, ...] = get_args(Verdict)
Correctness = Literal["correct", "partially_correct", "incorrect"]
# What each correctness verdict is worth: the one place its labels are listed with their meaning.
CORRECTNESS_SCORE: dict[str, float] = dict(zip(get_args(Correctness), (1.0, 0.5, 0.0), strict=True))


class Claim(_Strict):
    claim: NonEmptyStr
    verdict: Verdict
    quote: str | None = None
    chunk_id: str | None = None


class Judgment(_Strict):
    """Stored judge output for one answer. Scores are computed from it in code."""

    claims: list[Claim] | None = Field(
        default=None, description="faithfulness claims; [] means the answer makes no factual claim"
    )
    correctness: Correctness | None = Field(default=None, description="verdict against the reference answer")
    relevance: float | None = Field(
        default=None, ge=0.0, le=1.0, description="does the answer address the question"
    )
    model: str | None = None
    message_id: str | None = None
    request_id: str | None = None

    @field_validator("relevance")
    @classmethod
    def _relevance_finite(cls, v: float | None) -> float | None:
        return _finite(v, "relevance")


class Tokens(_Strict):
    # at most what a 64-bit integer holds: the tables keep counts as Int64
    input: StrictInt | None = Field(default=None, ge=0, le=2**63 - 1)
    output: StrictInt | None = Field(default=None, ge=0, le=2**63 - 1)


class ResultRecord(_Strict):
    """One line of ``results.jsonl``: what the system did for one question."""

    qid: NonEmptyStr
    retrieved: list[RetrievedChunk] = Field(default_factory=list)
    answer: str | None = None
    abstained: StrictBool | None = Field(
        default=None, description="did the system decline to answer; inferred from the answer text if absent"
    )
    judge: Judgment | None = None
    latency_ms: float | None = Field(default=None, ge=0)
    tokens: Tokens | None = None
    cost_usd: float | None = Field(default=None, ge=0)
    error: str | None = None
    external_scores: dict[str, float | None] = Field(
        default_factory=dict, description="scores computed elsewhere (e.g. Ragas), kept but marked external"
    )

    @field_validator("latency_ms", "cost_usd")
    @classmethod
    def _finite_numbers(cls, v: float | None) -> float | None:
        return _finite(v, "value")

    @field_validator("external_scores")
    @classmethod
    def _finite_external(cls, v: dict[str, float | None]) -> dict[str, float | None]:
        for key, value in v.items():
            _finite(value, f"external score '{key}'")
        return v


# --------------------------------------------------------------------------- production logs


class LogChunk(BaseModel):
    """A chunk the production system retrieved. Unknown keys are kept out of the way, not refused."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    chunk_id: NonEmptyStr
    score: float | None = None
    source: str | None = Field(default=None, description="which retriever found it: keyword, vector, ...")
    doc_id: str | None = None
    text: str | None = None


class Feedback(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    thumb: Literal["up", "down"] | None = None
    reason: str | None = None


class Behaviour(BaseModel):
    """What the user did next; each left out when the product does not record it."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    rephrased: StrictBool | None = Field(
        default=None, description="asked the same thing again in other words"
    )
    opened_source: StrictBool | None = Field(default=None, description="opened a cited source")
    copied: StrictBool | None = Field(default=None, description="copied the answer")
    asked_for_person: StrictBool | None = Field(default=None, description="asked for a human")


class LogRecord(BaseModel):
    """One line of a production log (JSON Lines): one question answered in production. Keys this
    format does not name are ignored, so a log written for other tools can be read as it is."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    conversation_id: NonEmptyStr
    time: datetime = Field(description="when the question was asked (ISO 8601; UTC when no offset)")
    question: NonEmptyStr
    retrieved: list[LogChunk] = Field(default_factory=list)
    answer: str | None = None
    abstained: StrictBool | None = Field(
        default=None, description="did the system decline; inferred from the answer text if absent"
    )
    keyword_hits: StrictInt | None = Field(
        default=None,
        ge=0,
        description="results of the keyword retriever alone (0: keyword search found nothing)",
    )
    feedback: Feedback | None = None
    behaviour: Behaviour | None = None


def json_schemas() -> dict[str, Any]:
    """JSON Schemas of every file, keyed by file name."""
    return {
        "testset.jsonl (one object per line)": TestCase.model_json_schema(),
        "run.json": RunManifest.model_json_schema(),
        "results.jsonl (one object per line)": ResultRecord.model_json_schema(),
        "chunks.jsonl (one object per line, optional)": Chunk.model_json_schema(),
        "production log (one object per line)": LogRecord.model_json_schema(),
    }
