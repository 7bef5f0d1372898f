"""The trace contract between methods, screens, the store and replay.

A run is an ordered list of typed events. Every event kind and its payload is
defined here and nowhere else; screens dispatch on ``event.kind``.
"""

from __future__ import annotations

import time
import uuid
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, Field


class Usage(BaseModel):
    """Cost of one step: LLM calls and retrievals it made, tokens, wall seconds."""

    calls: int = 0
    retrievals: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    cached: bool = False

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            calls=self.calls + other.calls,
            retrievals=self.retrievals + other.retrievals,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            seconds=self.seconds + other.seconds,
            cached=self.cached and other.cached,
        )

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class Hit(BaseModel):
    """One retrieved snippet. ``scores``/``ranks`` are per retriever (bm25, dense, ...)."""

    snippet_id: str
    corpus: str
    title: str = ""
    text: str
    rank: int
    score: float
    scores: dict[str, float] = Field(default_factory=dict)
    ranks: dict[str, int] = Field(default_factory=dict)
    pinned: bool = False  # forced into the results by a what-if re-run


class Shortfall(BaseModel):
    """A list the model wrote shorter than it was asked (three follow-up queries asked, one written): the run goes
    on with what it wrote, and the trace says so."""

    field: str  # the reply's field, e.g. "queries"
    noun: str  # what its items are, in words: "follow-up queries"
    asked: int
    wrote: int

    @property
    def text(self) -> str:
        return f"asked for {self.asked} {self.noun}, the model wrote {self.wrote}"


# ---- payloads, one per event kind -------------------------------------------------


class AgentMessage(BaseModel):
    kind: Literal["agent_message"] = "agent_message"
    role: str = "assistant"  # expert, summarizer, recruiter, arbiter, reader, ...
    text: str
    data: dict[str, Any] | None = None  # the parsed structured reply, when one was asked
    turn: int | None = None
    # The snippets this call read (ids, in the order read) and how many it was given: a reading budget can leave
    # some of the retrieved ones unread. None when the call read no snippets (or the run predates the field).
    read: list[str] | None = None
    offered: int | None = None
    cut: bool = False  # the call's token budget ended the reply before the model did (it stops mid-sentence)
    # How the backend took the call: the structured-output mode that answered ("text" for a call with no schema; None
    # in runs from before it was kept), what could not be sent as asked, and what a reasoning model showed of its
    # reasoning. ``unseeded``: a sampled call the backend could not seed, so a re-run draws it afresh.
    mode: str | None = None
    notes: list[str] = Field(default_factory=list)
    reasoning: str = ""
    unseeded: bool = False
    shortfalls: list[Shortfall] = Field(default_factory=list)  # lists it wrote shorter than asked, still used


class Query(BaseModel):
    kind: Literal["query"] = "query"
    text: str
    purpose: str = ""  # e.g. "initial", "follow-up for gap: ..."
    round: int | None = None


class Retrieval(BaseModel):
    kind: Literal["retrieval"] = "retrieval"
    query: str
    hits: list[Hit]
    retriever: str = "hybrid"
    round: int | None = None


class GeneratedDoc(BaseModel):
    kind: Literal["generated_doc"] = "generated_doc"
    doc_id: str
    text: str
    gap: str = ""  # the missing knowledge it fills


class VerdictItem(BaseModel):
    doc_id: str  # a snippet id or a generated doc id
    keep: bool
    reason: str = ""


class Verdict(BaseModel):
    kind: Literal["verdict"] = "verdict"
    items: list[VerdictItem] = Field(default_factory=list)
    accepted: bool | None = None  # overall decision, when the method makes one
    reason: str = ""


class Sufficiency(BaseModel):
    kind: Literal["sufficiency"] = "sufficiency"
    round: int
    sufficient: bool
    gaps: list[str] = Field(default_factory=list)
    follow_up_queries: list[str] = Field(default_factory=list)
    new_hits: int = 0


class Report(BaseModel):
    kind: Literal["report"] = "report"
    supporting: list[str] = Field(default_factory=list)
    refuting: list[str] = Field(default_factory=list)
    conflicts: list[str] = Field(default_factory=list)
    summary: str = ""


class Answer(BaseModel):
    kind: Literal["answer"] = "answer"
    choice: str | None = None  # option letter for multiple choice
    text: str = ""
    rationale: str = ""
    cited: list[str] = Field(default_factory=list)  # snippet / generated doc ids, never copied text
    note: str = ""  # e.g. "CoT fallback: verifier rejected the snippets"
    answer_format: str = ""  # the final reply's order ("reasoning first", ...); empty in runs saved before it was kept


class Error(BaseModel):
    kind: Literal["error"] = "error"
    message: str
    error_type: str = ""


Payload = Annotated[
    Union[AgentMessage, Query, Retrieval, GeneratedDoc, Verdict, Sufficiency, Report, Answer, Error],
    Field(discriminator="kind"),
]
EVENT_KINDS: tuple[str, ...] = (
    "agent_message",
    "query",
    "retrieval",
    "generated_doc",
    "verdict",
    "sufficiency",
    "report",
    "answer",
    "error",
)


class Event(BaseModel):
    run_id: str
    seq: int
    stage: str  # e.g. "brainstorm turn 2", "sufficiency round 1"
    agent: str  # e.g. "Cardiologist", "Summarizer", "Arbiter"
    payload: Payload
    usage: Usage = Field(default_factory=Usage)
    time: float = Field(default_factory=time.time)

    @property
    def kind(self) -> str:
        return self.payload.kind


class Partial(BaseModel):
    """A reply being written, as it streams: ``text`` is the whole reply so far. Not an event and never stored;
    ``done`` marks the last one of a call (the call's event, if any, follows)."""

    run_id: str
    stage: str
    agent: str
    role: str
    text: str
    started: float
    done: bool = False


def wall_seconds(events: list[Event]) -> float:
    """Wall time the costly steps span, from the first one's start (its end less its duration) to the last one's
    end: less than their summed seconds when a method made the calls concurrently."""
    costly = [e for e in events if e.usage.calls or e.usage.retrievals]
    if not costly:
        return 0.0
    return round(max(e.time for e in costly) - min(e.time - e.usage.seconds for e in costly), 3)


class Totals(Usage):
    """Usage summed over a run; ``seconds`` is the run's wall time, not the sum of steps; ``cached``: every call it
    made was served from the response cache (a repeat of a run asked before)."""


class Run(BaseModel):
    id: str = Field(default_factory=lambda: uuid.uuid4().hex[:12])
    method: str
    params: dict[str, Any] = Field(default_factory=dict)
    question: str
    options: dict[str, str] = Field(default_factory=dict)
    model: str = ""
    corpus: list[str] = Field(default_factory=list)
    started: float = Field(default_factory=time.time)
    finished: float | None = None
    # interrupted: the process running it died (found so when a store opens); like error, it has no answer
    status: Literal["running", "ok", "error", "cancelled", "interrupted"] = "running"
    answer: Answer | None = None
    totals: Totals = Field(default_factory=Totals)
    parent_id: str | None = None  # what-if re-runs link to the run they vary
    events: list[Event] = Field(default_factory=list)

    def compute_totals(self) -> Totals:
        summed = sum((e.usage for e in self.events), Usage())
        end = self.finished or time.time()
        repeat = summed.calls > 0 and all(e.usage.cached for e in self.events if e.usage.calls)
        return Totals(**{**summed.model_dump(), "seconds": round(end - self.started, 3), "cached": repeat})
