"""The provider x method matrix: every method, through the runner the command line uses (``core.engine.runner.execute``),
against each backend family's fake server, with the real client and real parsing and small knobs (one round, two
experts, a few documents) so the whole matrix takes seconds.

It uses only the client's public surface (``LLM``, ``Endpoint``, ``execute``), and what a checkout lacks it leaves
out (a profile name, a knob), so ``benchmarks/provider_matrix.py`` runs the same matrix against an earlier checkout.
"""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass, field
from typing import Any

from core.engine.llm import LLM, Endpoint
from core.engine.methods import get, registry
from core.engine.question import Question
from core.engine.runner import execute
from core.engine.trace import Run
from tests.fakes import ListRetriever, make_hits
from tests.providers.fakes import FAMILIES, FakeServer, refusal_message

METHODS = tuple(registry())
QUESTION = Question(
    text="Which hormone lowers blood glucose?",
    options={"A": "Insulin", "B": "Glucagon", "C": "Cortisol", "D": "Adrenaline"},
)
# Fewer rounds and documents than the papers', the same paths: every agent of every method speaks at least once.
KNOBS: dict[str, dict[str, Any]] = {
    "medrag": {"k": 4},
    "imedrag": {"rounds": 1, "queries": 2, "k": 3},
    "discuss": {"n_experts": 2, "turns": 1, "k": 4},
    "sema": {"k": 4, "m": 2, "t_max": 2},
    "medrgag": {"per_source_k": 4, "n_retrieved": 2, "n_points": 2, "n_generated": 2, "n_selected": 2},
    "mass": {"k": 3},
}
API_KEY = "sk-contract-9f8e7d6c5b4a3210fedcba98"  # a key shaped like a real one, so a leak would be found by value


def retriever() -> ListRetriever:
    """Two small corpora (MedRGAG pools each separately)."""
    return ListRetriever(make_hits(4, "textbooks") + make_hits(4, "statpearls"))


def client(server: FakeServer, *, provider: str | None = "", api_key: str = API_KEY, **endpoint: Any) -> LLM:
    """The real client pointed at ``server``, named as its family (``provider=""``), as another (a name), or left
    to detect it (None); no response cache, so every call reaches the server, and a memory of its own where the
    client keeps one, so one test's refusals do not steer another's."""
    fields = {f.name for f in dataclasses.fields(Endpoint)}
    settings = {
        "base_url": server.url,
        "model": server.model,
        "api_key": api_key,
        "max_retries": 0,
        "timeout": 30.0,
        **endpoint,
    }
    if "provider" in fields and provider is not None:
        settings["provider"] = provider or server.family
    extra: dict[str, Any] = {}
    if "memory" in inspect.signature(LLM).parameters:
        from core.engine.llm.ladder import Memory

        extra["memory"] = Memory()
    return LLM(Endpoint(**{k: v for k, v in settings.items() if k in fields}), cache_mode="off", **extra)


def knobs(method: str) -> dict[str, Any]:
    declared = get(method).params.model_fields
    return {k: v for k, v in KNOBS.get(method, {}).items() if k in declared}


def run(method: str, llm: LLM, **kw: Any) -> Run:
    return execute(method, QUESTION, knobs(method), llm=llm, retriever=retriever(), **kw)


def agent_messages(run: Run) -> list[Any]:
    return [e.payload for e in run.events if e.payload.kind == "agent_message"]


def short_lists(run: Run) -> list[str]:
    """Each agent's lists written shorter than asked, in the trace's words (none from a client that kept none)."""
    found = (
        f"{e.agent}: {s.text}"
        for e in run.events
        if e.payload.kind == "agent_message"
        for s in getattr(e.payload, "shortfalls", [])
    )
    return list(dict.fromkeys(found))


def error_of(run: Run) -> str:
    return next((e.payload.message for e in run.events if e.payload.kind == "error"), "")


@dataclass
class Outcome:
    family: str
    method: str
    status: str
    calls: int  # agent messages in the trace
    requests: int  # requests the server received (refused ones included)
    refused: int
    modes: list[str] = field(default_factory=list)
    error: str = ""  # what the run's error event says
    refusal: str = ""  # what the server said when it first refused a request of the run
    short: list[str] = field(default_factory=list)  # lists the model wrote short, which the run used as written


def run_family(name: str, methods: tuple[str, ...] = METHODS) -> tuple[list[Outcome], dict[str, Any] | None]:
    """Every method against one family's fake, one client for all (as one studio session would use it); the
    outcomes, and the first structured request the server accepted (what this client sends that family)."""
    with FAMILIES[name]() as server:
        llm = client(server)
        outcomes = []
        for method in methods:
            seen, refused = len(server.requests), len(server.refused)
            result = run(method, llm)
            modes = sorted({m.mode for m in agent_messages(result) if getattr(m, "mode", None)})
            refusals = [refusal_message(body) for body in server.refused[refused:]]
            outcomes.append(
                Outcome(
                    name,
                    method,
                    result.status,
                    len(agent_messages(result)),
                    len(server.requests) - seen,
                    len(server.refused) - refused,
                    modes,
                    error_of(result),
                    next(iter(refusals), ""),
                    short_lists(result),
                )
            )
        structured = [r for r in server.answered if "response_format" in r or "JSON schema" in str(r["messages"])]
        return outcomes, next(iter(structured or server.answered), None)
