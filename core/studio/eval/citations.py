"""Citation precision and recall of a run's final answer, from the offline evidence linker, as ALCE defines them
over its claims: recall, the share of the answer's claims (its text and its rationale, less the sentences that
only restate the case) that a document the answer cites supports; precision, the share of the answer's citations
that support at least one of its claims, fully or in part. An answer right for the wrong reason shows as high
accuracy beside low citation recall."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from core.engine.store import RunStore
from core.studio.eval.stats import wilson
from core.studio.evidence import EvidenceMap, link_run

ANSWER_ORIGINS = ("answer", "rationale")
CITATION_NOTE = (
    "citation recall = the answer's claims (less those restating the case) a cited snippet supports, over its claims; "
    "citation precision = cited snippets that support one of its claims at least in part, over the snippets cited; "
    "both from the offline linker, pooled over the questions (95% Wilson intervals). An answer citing nothing has "
    "recall 0 and no precision."
)


@dataclass(frozen=True)
class CitationCounts:
    claims: int = 0  # the answer's claims that say something beyond the case
    supported: int = 0  # of those, the ones a cited snippet supports
    cited: int = 0  # snippets the answer cites (that the run holds)
    precise: int = 0  # of those, the ones supporting one of its claims at least in part

    def __add__(self, other: CitationCounts) -> CitationCounts:
        return CitationCounts(
            self.claims + other.claims,
            self.supported + other.supported,
            self.cited + other.cited,
            self.precise + other.precise,
        )


def citation_counts(emap: EvidenceMap) -> CitationCounts:
    claims = [c for c in emap.claims if c.origin in ANSWER_ORIGINS and not c.restates_question]
    ids = {c.id for c in claims}
    cited = [d for d in emap.documents.values() if d.cited]
    by_cited = [ln for ln in emap.links if ln.claim_id in ids and emap.documents[ln.snippet_id].cited]
    supported = {ln.claim_id for ln in by_cited if ln.level == "supported"}
    precise = {ln.snippet_id for ln in by_cited if ln.level != "not_found"}
    return CitationCounts(len(claims), len(supported), len(cited), len(precise))


def citations_of(store: RunStore, run_ids: Iterable[str]) -> dict[str, CitationCounts]:
    """Each finished run's counts (seconds per run: every run is linked); a run not in the store is left out."""
    found = {}
    for run_id in dict.fromkeys(run_ids):
        run = store.find_run(run_id)
        if run is not None and run.status == "ok" and run.answer is not None:
            found[run_id] = citation_counts(link_run(run))
    return found


def citation_columns(counts: CitationCounts | None) -> dict[str, float | None]:
    """A summary line's citation columns: each rate and its interval (None where nothing was counted)."""
    counts = counts or CitationCounts()
    out: dict[str, float | None] = {}
    for name, hits, n in (
        ("citation_precision", counts.precise, counts.cited),
        ("citation_recall", counts.supported, counts.claims),
    ):
        low, high = wilson(hits, n) or (None, None)
        out[name] = round(hits / n, 4) if n else None
        out[f"{name}_low"] = None if low is None else round(low, 4)
        out[f"{name}_high"] = None if high is None else round(high, 4)
    return out
