"""What-if re-runs: the same method, knobs and question as a saved run, with snippets dropped from or pinned into
every retrieval; the new run names its parent. ``what_changed`` says how the two runs differ."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from core.engine.live_run import LiveRun
from core.engine.llm import LLM
from core.engine.methods.contract import RunContext, Sink, StreamSink
from core.engine.question import Question
from core.engine.retrieval.retriever import Retriever
from core.engine.runner import execute
from core.engine.store import RunStore
from core.engine.trace import AgentMessage, Retrieval, Run
from core.studio.runfiles import Variation, provenance


def rerun(
    parent: Run,
    variation: Variation,
    *,
    llm: LLM,
    retriever: Retriever | None,
    store: RunStore | None = None,
    sinks: Iterable[Sink] = (),
    ctx_hook: Callable[[RunContext], None] | None = None,
    case_id: str | None = None,
    stream_sinks: Iterable[StreamSink] = (),
    cancel: threading.Event | None = None,
) -> Run:
    """Run ``parent``'s method again with ``variation``; saved (with what it changed) when a store is given."""
    if not variation.drop and not variation.pin:
        raise ValueError("a what-if re-run needs a snippet to drop or to pin")
    question = Question(text=parent.question, options=parent.options)

    def hook(ctx: RunContext) -> None:
        if store is not None:  # kept as soon as the run exists, so History can say what it varies
            provenance.record(
                store,
                ctx.run.id,
                backend=llm.backend,
                corpora=provenance.retriever_corpora(retriever),
                case_id=case_id,
                variation=variation,
            )
        if ctx_hook:
            ctx_hook(ctx)

    return execute(
        parent.method,
        question,
        parent.params,
        llm=llm,
        retriever=retriever,
        store=store,
        sinks=sinks,
        exclude=variation.drop,
        pin=variation.pin,
        parent_id=parent.id,
        ctx_hook=hook,
        stream_sinks=stream_sinks,
        cancel=cancel,
    )


class WhatIfRun(LiveRun):
    """``rerun`` as a job: followed, stopped and found again after a reload like any live run."""

    kind = "what-if run"

    def __init__(
        self,
        parent: Run,
        variation: Variation,
        *,
        llm: LLM,
        retriever: Retriever | None,
        store: RunStore,
        case_id: str | None = None,
        owner: str = "",
    ):
        super().__init__(
            parent.method,
            Question(text=parent.question, options=parent.options),
            parent.params,
            llm=llm,
            retriever=retriever,
            store=store,
            owner=owner,
        )
        self.label = f"{self.spec.label} ({variation.describe()})"
        self.parent, self.variation, self.case_id = parent, variation, case_id

    def _execute(self, **hooks: Any) -> Run:
        return rerun(
            self.parent,
            self.variation,
            llm=self.llm,
            retriever=self.retriever,
            store=self.store,
            case_id=self.case_id,
            **hooks,
        )


def retrieved_ids(run: Run) -> list[str]:
    """Every snippet id the run's retrievals returned, first appearance first."""
    seen: dict[str, None] = {}
    for event in run.events:
        if isinstance(event.payload, Retrieval):
            seen.update((h.snippet_id, None) for h in event.payload.hits)
    return list(seen)


def answer_text(run: Run) -> str:
    if run.answer is None:
        return f"no answer ({run.status})"
    return f"{run.answer.choice}. {run.answer.text}" if run.answer.choice else run.answer.text


@dataclass
class RunDiff:
    answer_before: str
    answer_after: str
    answer_changed: bool
    read_only_before: list[str] = field(default_factory=list)
    read_only_after: list[str] = field(default_factory=list)
    cited_before: list[str] = field(default_factory=list)
    cited_after: list[str] = field(default_factory=list)
    stages_only_before: list[str] = field(default_factory=list)
    stages_only_after: list[str] = field(default_factory=list)
    cost_before: tuple[int, int, float] = (0, 0, 0.0)  # LLM calls, tokens, seconds
    cost_after: tuple[int, int, float] = (0, 0, 0.0)
    # Sampled calls of the re-run that its backend could not seed and that were asked afresh (not replayed): their
    # replies are new draws, so a difference may come from sampling rather than from the snippets.
    unseeded: int = 0

    @property
    def exact(self) -> bool:
        return self.unseeded == 0

    def lines(self) -> list[str]:
        """What changed, one plain sentence each."""
        out = [
            f"Answer changed: {self.answer_before} → {self.answer_after}"
            if self.answer_changed
            else f"Same answer: {self.answer_after}"
        ]
        if self.read_only_before or self.read_only_after:
            out.append(
                f"Snippets retrieved only before: {', '.join(self.read_only_before) or 'none'}; "
                f"only after: {', '.join(self.read_only_after) or 'none'}"
            )
        else:
            out.append("The same snippets were retrieved")
        if self.cited_before != self.cited_after:
            out.append(
                f"Cited before: {', '.join(self.cited_before) or 'none'}; after: "
                f"{', '.join(self.cited_after) or 'none'}"
            )
        if self.stages_only_before or self.stages_only_after:
            out.append(
                f"Stages only before: {', '.join(self.stages_only_before) or 'none'}; only after: "
                f"{', '.join(self.stages_only_after) or 'none'}"
            )
        (c0, t0, s0), (c1, t1, s1) = self.cost_before, self.cost_after
        out.append(f"Cost: {c0} → {c1} LLM calls, {t0:,} → {t1:,} tokens, {s0:.0f} → {s1:.0f} s")
        if not self.exact:
            out.append(
                f"Not an exact re-run: {self.unseeded} sampled call{'s' if self.unseeded > 1 else ''} could "
                "not be seeded on this backend and drew afresh, so a difference may come from sampling, not "
                "from the snippets"
            )
        return out


def what_changed(before: Run, after: Run) -> RunDiff:
    read_before, read_after = retrieved_ids(before), retrieved_ids(after)
    stages_before = list(dict.fromkeys(e.stage for e in before.events))
    stages_after = list(dict.fromkeys(e.stage for e in after.events))

    def choice(run: Run) -> str | None:
        return None if run.answer is None else (run.answer.choice or " ".join(run.answer.text.lower().split()))

    def cost(run: Run) -> tuple[int, int, float]:
        return run.totals.calls, run.totals.tokens, run.totals.seconds

    return RunDiff(
        answer_before=answer_text(before),
        answer_after=answer_text(after),
        answer_changed=choice(before) != choice(after),
        read_only_before=[i for i in read_before if i not in read_after],
        read_only_after=[i for i in read_after if i not in read_before],
        cited_before=list(before.answer.cited) if before.answer else [],
        cited_after=list(after.answer.cited) if after.answer else [],
        stages_only_before=[s for s in stages_before if s not in stages_after],
        stages_only_after=[s for s in stages_after if s not in stages_before],
        cost_before=cost(before),
        cost_after=cost(after),
        unseeded=sum(
            isinstance(e.payload, AgentMessage) and e.payload.unseeded and not e.usage.cached for e in after.events
        ),
    )
