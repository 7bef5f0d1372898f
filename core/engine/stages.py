"""Stages: each method's own pipeline (for its map) and the vocabulary every method shares (for comparing).

A method declares the stage names its events carry once, as the constants of a ``StageNames`` class (a name with a
turn or round in it as a ``Numbered`` template), and its pipeline as a tuple of ``Stage`` in its spec, in the order
the paper draws it, each matching some of those names. An event belongs to the first stage whose name, agent and
kind fit it. Every event also has a *common* stage, one of ``COMMON``: typed steps by their kind (a query is querying
wherever it happens), an agent's message by the method stage it belongs to. Compare lines methods up by common stage.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.engine.trace import Event

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


@dataclass(frozen=True)
class Numbered:
    """A stage name with a turn or round number in it, e.g. ``Numbered("brainstorm turn {n}")``."""

    template: str  # holds ``{n}`` once

    def __call__(self, n: int) -> str:
        return self.template.format(n=n)

    def names(self, stage: str) -> bool:
        head, _, tail = self.template.partition("{n}")
        number = stage.removeprefix(head).removesuffix(tail)
        return stage == f"{head}{number}{tail}" and number.isdigit()


StageName = str | Numbered


def names(name: StageName, stage: str) -> bool:
    """Whether the declared ``name`` is the event stage name ``stage``."""
    return name.names(stage) if isinstance(name, Numbered) else name == stage


class StageNames:
    """A method's stage names: subclass it with one upper-case constant per name its events carry."""

    @classmethod
    def declared(cls) -> dict[str, StageName]:
        """Every constant, by its attribute name (inherited ones included)."""
        return {
            key: value
            for klass in reversed(cls.__mro__)
            for key, value in vars(klass).items()
            if key.isupper() and isinstance(value, str | Numbered)
        }


class Runner(StageNames):
    """The runner's own closing events, for every method, and the store's for a run that stopped unfinished."""

    FINAL_ANSWER = "final answer"
    CANCELLED = "cancelled"
    FAILED = "failed"
    INTERRUPTED = "interrupted"


RETRIEVAL = "retrieval"  # a method's one retrieval of the question, by whichever method does one
END_STAGES = (Runner.FINAL_ANSWER, Runner.CANCELLED, Runner.FAILED)


@dataclass(frozen=True)
class Stage:
    label: str  # the node's name on the map, e.g. "E-Agent judges the evidence"
    common: str  # one of COMMON
    match: tuple[StageName, ...]  # the method's stage names whose events belong here
    agents: tuple[str, ...] = ()  # only these agents (empty: any)
    kinds: tuple[str, ...] = ()  # only these event kinds (empty: any)
    loop_to: str = ""  # an earlier stage's label this one can send the run back to
    loop_label: str = ""  # when it does, e.g. "not sufficient: m follow-up queries"
    branch: bool = False  # an alternative to the stage before it (a fallback), not the next step
    many: str = ""  # runs several times at once, e.g. "× n experts"

    def fits(self, event: Event) -> bool:
        return (
            any(names(m, event.stage) for m in self.match)
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
