"""Stages: each method's own pipeline (for its map) and the vocabulary every method shares (for comparing).

A method declares its pipeline as a tuple of ``Stage`` in its spec, in the order the paper draws it. An event
belongs to the first stage whose stage-name prefix, agent and kind fit it. Every event also has a *common* stage,
one of ``COMMON``: typed steps by their kind (a query is querying wherever it happens), an agent's message by
the method stage it belongs to. Compare lines methods up by common stage.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.trace import Event

COMMON: dict[str, str] = {
    "understand": "Understand the question",
    "query": "Query",
    "retrieve": "Retrieve / generate",
    "judge": "Judge the evidence",
    "answer": "Answer",
}
_BY_KIND = {
    "query": "query",
    "retrieval": "retrieve",
    "generated_doc": "retrieve",
    "verdict": "judge",
    "sufficiency": "judge",
    "report": "judge",
    "answer": "answer",
    "error": "answer",
}
END_STAGES = ("final answer", "cancelled", "failed")  # the runner's own closing events, for every method


@dataclass(frozen=True)
class Stage:
    label: str  # the node's name on the map, e.g. "E-Agent judges the evidence"
    common: str  # one of COMMON
    match: tuple[str, ...]  # prefixes of the event stage names that belong here
    agents: tuple[str, ...] = ()  # only these agents (empty: any)
    kinds: tuple[str, ...] = ()  # only these event kinds (empty: any)
    loop_to: str = ""  # an earlier stage's label this one can send the run back to
    loop_label: str = ""  # when it does, e.g. "not sufficient: m follow-up queries"
    branch: bool = False  # an alternative to the stage before it (a fallback), not the next step
    many: str = ""  # runs several times at once, e.g. "× n experts"

    def fits(self, event: Event) -> bool:
        return (
            any(event.stage.startswith(m) for m in self.match)
            and (not self.agents or event.agent in self.agents)
            and (not self.kinds or event.kind in self.kinds)
        )


def stage_of(stages: tuple[Stage, ...], event: Event) -> Stage | None:
    """The first stage that fits, one naming the event's agent before one open to any agent."""
    fitting = [s for s in stages if s.fits(event)]
    return next((s for s in fitting if s.agents), fitting[0] if fitting else None)


def common_stage(stages: tuple[Stage, ...], event: Event) -> str:
    """The shared step an event belongs to: by its kind when typed, else by its method stage."""
    if event.kind in _BY_KIND and event.kind != "error":
        return _BY_KIND[event.kind]
    stage = stage_of(stages, event)
    if stage is not None:
        return stage.common
    return "answer" if event.stage in END_STAGES or event.kind == "error" else "understand"


def by_common_stage(stages: tuple[Stage, ...], events: list[Event]) -> dict[str, list[Event]]:
    """The events under each common stage, in ``COMMON`` order (every key present)."""
    grouped: dict[str, list[Event]] = {key: [] for key in COMMON}
    for event in events:
        grouped[common_stage(stages, event)].append(event)
    return grouped


def current_stage(stages: tuple[Stage, ...], events: list[Event], working: list[tuple[str, str]] = ()) -> Stage | None:
    """The stage a run is in: that of an agent writing now (stage name, agent), else that of its last event."""
    for stage_name, agent in working:
        probe = Event(run_id="", seq=0, stage=stage_name, agent=agent, payload={"kind": "agent_message", "text": ""})
        if (found := stage_of(stages, probe)) is not None:
            return found
    for event in reversed(events):
        if (found := stage_of(stages, event)) is not None:
            return found
    return None
