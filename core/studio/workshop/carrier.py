"""Which snippet carried the answer? For the workshop's reveal: the document whose words support the final answer
and its rationale the most, by the evidence linker's links (a supported claim counts twice a partly supported one,
each weighted by the linker's score); where the linker finds no support, the documents the answer cites, in order.
Participants predict it before the reveal, so it is named from the run alone, with no model."""

from __future__ import annotations

from dataclasses import dataclass

from core.engine.trace import Run
from core.studio.evidence import link_run

WEIGHT = {"supported": 2.0, "partly": 1.0}
ANSWERING = ("answer", "rationale")  # the claims that are the answer, not an agent's findings on the way


@dataclass(frozen=True)
class Carrier:
    doc_id: str
    title: str
    how: str  # "linked": the linker found its words behind the answer; "cited": the answer cites it, no more known
    claims: tuple[str, ...] = ()  # the answer's sentences it supports, best first
    weight: float = 0.0


def carriers(run: Run) -> list[Carrier]:
    """The documents behind the answer, the one that carried it first; empty when the run used none."""
    emap = link_run(run)
    answering = {c.id: c for c in emap.claims if c.origin in ANSWERING}
    weights: dict[str, float] = {}
    claims: dict[str, list[tuple[float, str]]] = {}
    for link in emap.links:
        if link.claim_id in answering and link.level in WEIGHT:
            weight = WEIGHT[link.level] * max(link.score, 0.01)
            weights[link.snippet_id] = weights.get(link.snippet_id, 0.0) + weight
            claims.setdefault(link.snippet_id, []).append((weight, answering[link.claim_id].text))
    title = {d.id: d.title or d.id for d in emap.documents.values()}
    if weights:
        ranked = sorted(weights, key=lambda i: -weights[i])
        return [
            Carrier(i, title.get(i, i), "linked", tuple(t for _, t in sorted(claims[i], reverse=True)), weights[i])
            for i in ranked
        ]
    cited = run.answer.cited if run.answer else []
    return [Carrier(i, title.get(i, i), "cited") for i in dict.fromkeys(cited) if i in title]
