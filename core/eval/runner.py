"""Runs methods over benchmark questions, several at once, skipping those already finished."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from core.eval.mirage import BenchItem
from core.eval.results import EvalResults, config_key
from core.llm import LLM
from core.methods import get
from core.methods.base import Retriever, RunContext
from core.runner import execute
from core.store import RunStore

Progress = Callable[[dict[str, Any]], None]  # called with each finished item's row


@dataclass
class EvalPlan:
    methods: list[str]
    items: list[BenchItem]
    params: dict[str, dict[str, Any]] = field(default_factory=dict)  # method -> knobs (defaults otherwise)

    def configs(self, llm: LLM, retriever: Retriever | None) -> dict[str, str]:
        """Each method's configuration key; bad method names or knobs fail here, before any question runs."""
        keys = {}
        for method in self.methods:
            spec = get(method)
            knobs = spec.params(**self.params.get(method, {})).model_dump()
            corpus = list(retriever.corpora) if retriever is not None and spec.uses_retrieval else []
            keys[method] = config_key(method, knobs, llm.backend, corpus)
        return keys


@dataclass
class EvalOutcome:
    rows: list[dict[str, Any]]  # every planned (method, question), finished now or before
    ran: int
    skipped: int
    cancelled: bool = False


def evaluate(plan: EvalPlan, *, llm: LLM, retriever: Retriever | None, store: RunStore, concurrency: int = 2,
             progress: Progress | None = None, on_start: Callable[[int, int], None] | None = None,
             stop: threading.Event | None = None, report_only: bool = False) -> EvalOutcome:
    """Every run is stored; ``stop`` (or Ctrl-C) cancels the runs in flight, which are not counted as done.
    ``report_only`` runs nothing: the rows are what earlier evaluations finished.

    ``on_start(pending, skipped)`` is called once the finished items are known, before any run starts.
    """
    results = EvalResults(store)
    configs = plan.configs(llm, retriever)
    keys = {(item.dataset, item.qid) for item in plan.items}
    pending, skipped = [], 0
    for method in plan.methods:
        done = results.finished(configs[method]) & keys
        skipped += len(done)
        if not report_only:
            pending += [(method, item) for item in plan.items if (item.dataset, item.qid) not in done]
    if on_start:
        on_start(len(pending), skipped)
    stop = stop or threading.Event()
    _ = llm.cache  # opened here, once: threads that open it together race on creating its table
    live: set[RunContext] = set()
    lock = threading.Lock()

    def track(ctx: RunContext) -> None:
        with lock:
            live.add(ctx)
        if stop.is_set():
            ctx.cancel_event.set()

    def one(method: str, item: BenchItem) -> dict[str, Any] | None:
        if stop.is_set():
            return None
        run = execute(method, item.question, plan.params.get(method, {}), llm=llm, retriever=retriever, store=store,
                      ctx_hook=track)
        if run.status == "cancelled":
            return None
        return results.record(configs[method], item.dataset, item.qid, item.answer, run)

    ran = 0
    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        futures: set[Future] = {pool.submit(one, method, item) for method, item in pending}
        try:
            while futures:
                finished, futures = wait(futures, timeout=0.5, return_when=FIRST_COMPLETED)
                for future in finished:
                    if future.cancelled():
                        continue
                    row = future.result()
                    if row is not None:
                        ran += 1
                        if progress:
                            progress(row)
                if stop.is_set():
                    _cancel(futures, live, lock)
        except KeyboardInterrupt:
            stop.set()
            _cancel(futures, live, lock)
    rows = {configs[m]: results.rows(configs[m], keys) for m in plan.methods}
    return EvalOutcome(rows=[r for m in plan.methods for r in rows[configs[m]]], ran=ran, skipped=skipped,
                       cancelled=stop.is_set())


def _cancel(futures: set[Future], live: set[RunContext], lock: threading.Lock) -> None:
    for future in futures:
        future.cancel()
    with lock:
        for ctx in live:
            ctx.cancel_event.set()
