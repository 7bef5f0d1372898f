"""Runs one method on one question: creates the run, streams its events to the store and to any
listener, and always ends it with an ``answer`` or an ``error`` event."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError

from core.engine.llm import LLM, LLMCancelled
from core.engine.methods import get
from core.engine.methods.contract import RunCancelled, RunContext, Sink, StreamSink
from core.engine.question import Question
from core.engine.retrieval.retriever import Retriever
from core.engine.stages import Runner
from core.engine.store import RunStore
from core.engine.trace import Error, Run


def new_run(
    method: str,
    question: Question,
    params: dict[str, Any],
    *,
    llm: LLM,
    retriever: Retriever | None,
    parent_id: str | None = None,
) -> Run:
    spec = get(method)
    checked = spec.params(**params)  # raises ValidationError for a bad knob, before anything is sent
    if checked.answer_format is None:  # automatic: the run keeps the format that answered, so a re-run repeats it
        checked = checked.model_copy(update={"answer_format": llm.answer_format})
    return Run(
        method=method,
        params=checked.model_dump(),
        question=question.text,
        options=question.options,
        model=llm.model_name,
        corpus=list(retriever.corpora) if retriever and spec.uses_retrieval else [],
        parent_id=parent_id,
    )


def execute(
    method: str,
    question: Question,
    params: dict[str, Any] | None = None,
    *,
    llm: LLM,
    retriever: Retriever | None = None,
    store: RunStore | None = None,
    sinks: Iterable[Sink] = (),
    exclude: Iterable[str] = (),
    parent_id: str | None = None,
    ctx_hook=None,
    stream_sinks: Iterable[StreamSink] = (),
    cancel: threading.Event | None = None,
    pin: Iterable[str] = (),
) -> Run:
    """Never raises for a failure inside the method: the run ends with status ``error`` and keeps its trace.

    ``ctx_hook`` receives the context before the method starts (the UI keeps it to cancel the run); setting
    ``cancel`` (shared by several runs, e.g. on Ctrl-C) or the context's ``cancel_event`` ends the run as
    ``cancelled`` within about a second. ``stream_sinks`` see every reply as it is written.
    """
    spec = get(method)
    run = new_run(method, question, params or {}, llm=llm, retriever=retriever, parent_id=parent_id)
    all_sinks = ([store.append_event] if store else []) + list(sinks)
    if store:
        store.create_run(run)
    ctx = RunContext(
        run,
        llm,
        retriever if spec.uses_retrieval else None,
        all_sinks,
        exclude=exclude,
        stream_sinks=stream_sinks,
        cancel=cancel,
        pin=pin,
    )
    if ctx_hook:
        ctx_hook(ctx)
    # The last event carries what calls that failed without a reply cost, so the run's totals count them.
    try:
        answer = spec.run(question, spec.params(**run.params), ctx)
        ctx.emit(Runner.FINAL_ANSWER, "Answer", answer, ctx.failed_usage)
        run.answer, run.status = answer, "ok"
    except (RunCancelled, LLMCancelled):
        ctx.emit(
            Runner.CANCELLED,
            spec.label,
            Error(
                message="the run was stopped before it finished; the trace is kept up to that point",
                error_type="cancelled",
            ),
            ctx.failed_usage,
        )
        run.status = "cancelled"
    except Exception as exc:  # the run boundary: any failure becomes an error event, the trace is kept
        ctx.emit(
            Runner.FAILED, spec.label, Error(message=_describe(exc), error_type=type(exc).__name__), ctx.failed_usage
        )
        run.status = "error"
    run.finished = time.time()
    run.totals = run.compute_totals()
    if store:
        store.finish_run(run)
    return run


def _describe(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(e["msg"] for e in exc.errors()[:3])
    return str(exc) or type(exc).__name__
