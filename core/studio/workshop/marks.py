"""The reveal's teaching marks: for a teaching-pack case, where a run met the case's key, near-miss and outdated
passages (the retrieval, the rank), and whether its answer cited them."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from core.engine.trace import Retrieval, Run
from core.studio.teaching import ROLES, Role, TeachingCase, TeachingPassage, load_passages, tally


@lru_cache(maxsize=1)
def _passages() -> dict[str, TeachingPassage]:
    return {p.id: p for p in load_passages()}


@dataclass(frozen=True)
class PassageMark:
    passage_id: str
    role: Role
    title: str
    met_at: int | None  # the event (seq) whose retrieval first returned it
    rank: int | None  # its best rank in any retrieval
    cited: bool
    superseded_by: str | None = None  # an outdated passage: what replaced it

    @property
    def met(self) -> bool:
        return self.met_at is not None


def teaching_marks(run: Run, case: TeachingCase) -> list[PassageMark]:
    """Every passage of the case, key first, with where the run met it."""
    passages = _passages()
    met_at: dict[str, int] = {}
    best: dict[str, int] = {}
    for event in run.events:
        if isinstance(event.payload, Retrieval):
            for hit in event.payload.hits:
                met_at.setdefault(hit.snippet_id, event.seq)
                best[hit.snippet_id] = min(best.get(hit.snippet_id, hit.rank), hit.rank)
    cited = set(run.answer.cited) if run.answer else set()
    marks = []
    for role in ROLES:
        for pid in case.passage_ids(role):
            passage = passages.get(pid)
            marks.append(
                PassageMark(
                    passage_id=pid,
                    role=role,
                    title=passage.title if passage else pid,
                    met_at=met_at.get(pid),
                    rank=best.get(pid),
                    cited=pid in cited,
                    superseded_by=passage.superseded_by if passage else None,
                )
            )
    return marks


NO_RETRIEVAL = "retrieved nothing, so it met none of the case's passages"


def retrieved(run: Run) -> bool:
    return any(isinstance(e.payload, Retrieval) for e in run.events)


def marks_line(run: Run, case: TeachingCase) -> str:
    """One line, e.g. 'met 2 of 4 key passages, cited the outdated one' (the trace view's own tally); for a run
    that did not retrieve (CoT), that it did not, rather than a count of passages it could never have met."""
    if not retrieved(run):
        return NO_RETRIEVAL
    met = [m.passage_id for m in teaching_marks(run, case) if m.met]
    return tally(case, met, list(run.answer.cited) if run.answer else []).line()
