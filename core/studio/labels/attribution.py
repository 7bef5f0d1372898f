"""Attribution labels: does this snippet support this claim of a run's answer? A person's judgment, given blind (no
linker verdict, no other annotator's label), per (run, claim, snippet), on three grades: supports, partly, no.

The pairs come from the evidence linker's claims (``core.studio.evidence.claims_of``) and documents: each claim with
the documents it or its answer cites, the pairs a clinician checks first. They share the relevance labels' store
(``LabelStore``) and agreement statistics (``agreement``)."""

from __future__ import annotations

from dataclasses import dataclass

from core.engine.trace import Run
from core.studio.evidence import Claim, Document, claims_of, documents_of
from core.studio.labels.agreement import Judged
from core.studio.labels.grades import LabelError

ATTRIBUTION: dict[int, str] = {2: "supports", 1: "partly", 0: "no"}
GRADE_OF = {word: grade for grade, word in ATTRIBUTION.items()}
SUPPORTS = 2  # the grade that counts as support when agreement splits on it


def check_attribution(grade: object) -> int:
    """The grade as 0, 1 or 2 (a word of ``ATTRIBUTION`` is taken too), or a LabelError."""
    if isinstance(grade, str) and grade.strip().casefold() in GRADE_OF:
        return GRADE_OF[grade.strip().casefold()]
    if isinstance(grade, int) and not isinstance(grade, bool) and grade in ATTRIBUTION:
        return grade
    raise LabelError(f"attribution grade {grade!r} is not one of: 2 supports, 1 partly, 0 no")


@dataclass(frozen=True)
class Pair:
    """A claim of a run and a document it might rest on, as an annotator is shown them (nothing of the linker's)."""

    run_id: str
    method: str  # kept out of sight while judging, as the relevance mode hides which method found a snippet
    claim: Claim
    document: Document

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.run_id, self.claim.id, self.document.id)


def pairs_of(run: Run) -> list[Pair]:
    """Every claim, each with the documents it cites, else those the final answer cites (a claim that restates the
    case is asked too: a person says whether a document gives it); never a generated document with its own text."""
    documents = documents_of(run)
    answer_cited = [d for d in documents.values() if d.cited]
    pairs = []
    for claim in claims_of(run):
        own = [documents[i] for i in dict.fromkeys(claim.cited) if i in documents]
        for document in own or answer_cited:
            if document.id != claim.generated_doc:
                pairs.append(Pair(run.id, run.method, claim, document))
    return pairs


@dataclass(frozen=True)
class AttributionLabel:
    run_id: str
    claim_id: str
    snippet_id: str
    annotator: str
    grade: int
    note: str
    claim: str  # the claim's text when it was judged
    updated: float

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.run_id, self.claim_id, self.snippet_id)


def judged(labels: list[AttributionLabel]) -> Judged:
    """(run id, "claim id snippet id") -> annotator -> grade: the shape the agreement statistics read."""
    found: Judged = {}
    for label in labels:
        found.setdefault((label.run_id, f"{label.claim_id} {label.snippet_id}"), {})[label.annotator] = label.grade
    return found
