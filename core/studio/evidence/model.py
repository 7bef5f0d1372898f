"""The evidence of a run as data: its claims, the documents it could draw on, and the links between them.

Everything here is derived from a run's own events (``core.studio.evidence.claims`` and ``.linker``); nothing is
stored. Offsets are character offsets into the texts as the trace keeps them (a claim into its source text, a span
into its document's text), so a screen can light up exactly those characters.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from core.studio.pricing import Cost

Level = Literal["supported", "partly", "not_found"]
Source = Literal["retrieved", "generated"]
# Where a claim was said: the final answer (a chosen option's text, or an open answer), its rationale, or one
# agent's findings on the way (SEMA-RAG's arbitration columns, MASS-RAG's views, Discuss-RAG's summary,
# a MedRGAG generated document, read as claims about medicine like any other text).
Origin = Literal["answer", "rationale", "finding"]

LEVELS: tuple[Level, ...] = ("supported", "partly", "not_found")
LEVEL_WORDS: dict[Level, str] = {"supported": "supported", "partly": "partly supported", "not_found": "not found"}


@dataclass(frozen=True)
class Claim:
    """One sentence of a run's text that says something. ``id`` is stable for a run (``c<seq>-<n>``: the event it
    came from and its place there), so a label or a click names it across screens."""

    id: str
    text: str
    origin: Origin
    section: str  # what a reader calls its place: "answer", "rationale", "supporting", "Summarizer's view", ...
    agent: str  # who said it ("Answer", "A-Agent", "Summarizer", "Generator")
    seq: int  # the event it came from
    start: int  # its offsets in that event's text (``source_text``)
    end: int
    cited: tuple[str, ...] = ()  # the ids its own text or its event cites (an arbiter's "[k1, n2]", the answer's ids)
    restates_question: bool = False  # most of its words are the question's: the case, not a fact a document gives
    generated_doc: str = ""  # the generated document it is a sentence of (MedRGAG), which can then not support it


@dataclass(frozen=True)
class Document:
    """A document the run could draw on, as the trace keeps it."""

    id: str
    text: str
    title: str
    source: Source  # retrieved from a corpus, or written by the method (MedRGAG's generated documents)
    corpus: str = ""
    cited: bool = False  # the final answer cites it


@dataclass(frozen=True)
class SupportLink:
    """A claim linked to a document: the span of the document that supports it, how well, and why in words.

    ``why`` is always the offline linker's reason; a judge pass adds ``judge_level``/``judge_why`` beside it,
    never in its place."""

    claim_id: str
    snippet_id: str
    span: tuple[int, int]  # offsets into the document's text; (0, 0) when nothing in it matched
    level: Level
    why: str
    source: Source
    score: float = 0.0  # the linker's combined score, 0..1
    judge_level: Level | None = None
    judge_why: str = ""


@dataclass(frozen=True)
class Agreement:
    """How far the linker agrees with a person's labels of claim × document pairs: precision and recall of
    "supported", each with a 95% Wilson interval, over ``n`` labelled pairs (``per_method``: the same by method)."""

    annotator: str
    n: int
    agree: float  # share of pairs whose "supported or not" the linker and the person agree on
    agree_ci: tuple[float, float]
    precision: float
    precision_ci: tuple[float, float]
    recall: float
    recall_ci: tuple[float, float]
    per_method: dict[str, dict[str, float | int | list[float]]] = field(default_factory=dict)

    def sentence(self) -> str:
        """The figure a screen shows next to the links."""
        lo, hi = self.agree_ci
        return (
            f"The links agree with a person's labels on {self.agree:.0%} of pairs (95% CI {lo:.0%}–{hi:.0%}, "
            f"n={self.n}); of the links marked supported, {self.precision:.0%} were labelled so."
        )


@dataclass(frozen=True)
class JudgeCost:
    """What the optional judge pass spent: one call per claim; a call the response cache answered is not billed."""

    cost: Cost  # tokens billed and their price (``Cost.basis()`` says it in words)
    seconds: float
    claims: int  # claims judged (one call each)

    def words(self) -> str:
        return f"judge pass: {self.claims} claims, {self.cost.basis()}, {self.seconds:.1f} s"


@dataclass
class EvidenceMap:
    """Every claim of a run linked to the documents that support it. Links below "partly" are not kept, except a
    claim's best candidate, so "not found" has something to point at when anything came close."""

    run_id: str
    method: str
    version: str  # the linker's version: a cache of maps is keyed by (run id, version)
    claims: list[Claim]
    documents: dict[str, Document]
    links: list[SupportLink]
    seconds: float = 0.0  # how long linking took
    judge: JudgeCost | None = None

    def links_of(self, claim_id: str) -> list[SupportLink]:
        """A claim's links, best first."""
        return sorted((ln for ln in self.links if ln.claim_id == claim_id), key=lambda ln: -ln.score)

    def claims_for(self, snippet_id: str) -> list[SupportLink]:
        """The links into one document whose level is supported or partly (the claims it supports)."""
        return [ln for ln in self.links if ln.snippet_id == snippet_id and ln.level != "not_found"]

    def level_of(self, claim_id: str) -> Level:
        """A claim's best level over all documents."""
        levels = {ln.level for ln in self.links_of(claim_id)}
        return next((lvl for lvl in LEVELS if lvl in levels), "not_found")

    def cited_unsupporting(self) -> list[str]:
        """Documents the answer cites that support no claim at all (not even partly)."""
        return [d.id for d in self.documents.values() if d.cited and not self.claims_for(d.id)]

    def claim(self, claim_id: str) -> Claim:
        return next(c for c in self.claims if c.id == claim_id)
