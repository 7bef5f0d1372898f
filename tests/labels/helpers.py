"""Saved runs for label tests: real RunStore rows with retrieval and generated-document events."""

from __future__ import annotations

import time

from core.engine.store import RunStore
from core.engine.trace import Answer, Event, GeneratedDoc, Hit, Retrieval, Run, Usage

QUESTION = "Which drug treats disease 1?"
OPTIONS = {"A": "aspirin", "B": "metformin"}


def hit(sid: str, text: str | None = None, rank: int = 1) -> Hit:
    return Hit(
        snippet_id=sid,
        corpus="teaching",
        title=f"Doc {sid}",
        text=text or f"text of {sid}",
        rank=rank,
        score=1.0 / rank,
    )


def save_run(
    store: RunStore,
    method: str,
    hits: list[Hit],
    generated: list[str] = (),
    *,
    question: str = QUESTION,
    options: dict[str, str] | None = None,
    rounds: list[list[Hit]] = (),
    rescored: list[Hit] = (),
) -> Run:
    """A finished run whose trace retrieved ``hits`` (then each of ``rounds``), re-scored ``rescored`` of them
    without searching (as MedRGAG does), and generated ``generated``."""
    run = Run(method=method, question=question, options=OPTIONS if options is None else options, status="ok")
    store.create_run(run)
    events = [Retrieval(query=question, hits=[h.model_copy(update={"rank": i}) for i, h in enumerate(hits, 1)])]
    events += [Retrieval(query=f"follow-up {n}", hits=r, round=n) for n, r in enumerate(rounds, 2)]
    searches = len(events)
    if rescored:
        events.append(Retrieval(query=question, hits=list(rescored), retriever="re-scored top k"))
    events += [GeneratedDoc(doc_id=f"gen-{i}", text=text, gap=f"gap {i}") for i, text in enumerate(generated, 1)]
    events.append(Answer(choice="A", text="aspirin"))
    for seq, payload in enumerate(events):
        usage = Usage(retrievals=1) if seq < searches else Usage()
        store.append_event(Event(run_id=run.id, seq=seq, stage="s", agent="a", payload=payload, usage=usage))
    run.finished, run.answer = time.time(), events[-1]
    store.finish_run(run)
    return run
