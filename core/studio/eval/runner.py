"""Runs arms (methods or ablation presets) over benchmark questions, several at once, skipping those already
finished for the same question as asked."""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace

from core.engine.estimate import estimate
from core.engine.llm import LLM
from core.engine.methods.contract import RunContext
from core.engine.retrieval.retriever import Retriever
from core.engine.runner import execute
from core.engine.store import RunStore
from core.studio.eval.mirage import BenchItem
from core.studio.eval.plan import Arm, EvalPlan
from core.studio.eval.progress import EvalProgress
from core.studio.eval.results import EvalResults, ItemResult

Progress = Callable[[ItemResult], None]  # called with each finished item's result


@dataclass
class EvalOutcome:
    rows: list[ItemResult]  # every planned (arm, question), finished now or before, under its arm
    ran: int
    skipped: int
    cancelled: bool = False


def evaluate(
    plan: EvalPlan,
    *,
    llm: LLM,
    retriever: Retriever | None,
    store: RunStore,
    concurrency: int = 2,
    progress: Progress | None = None,
    on_start: Callable[[int, int], None] | None = None,
    stop: threading.Event | None = None,
    report_only: bool = False,
    watch: EvalProgress | None = None,
) -> EvalOutcome:
    """Every run is stored; ``stop`` (or Ctrl-C) cancels the runs in flight, which are not counted as done.
    ``report_only`` runs nothing: the rows are what earlier evaluations finished.

    Questions run in order, every arm on a question before the next question, so that a stopped evaluation
    leaves the arms compared on the same questions. Arms with the same configuration (a preset equal to its
    method's defaults) share each run. ``on_start(pending, skipped)`` is called once the finished items are
    known, before any run starts; ``watch`` follows the counts per arm.
    """
    results = EvalResults(store)
    arms = plan.arms
    configs = plan.configs(llm, retriever)
    keys = {item.key for item in plan.items}
    done = {config: results.finished(config) & keys for config in set(configs.values())}
    sharing: dict[str, list[Arm]] = defaultdict(list)
    for arm in arms:
        sharing[configs[arm.name]].append(arm)
    pending: list[tuple[Arm, BenchItem]] = []
    if not report_only:
        pending = [
            (group[0], item) for item in plan.items for config, group in sharing.items() if item.key not in done[config]
        ]
    skipped = sum(len(done[configs[arm.name]]) for arm in arms)
    if watch:
        for arm in arms:
            watch.plan(
                arm.name,
                arm.label,
                len(plan.items),
                len(done[configs[arm.name]]),
                expected.seconds if (expected := estimate(store, arm.method, llm.model_name, llm.backend)) else None,
            )
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

    def one(arm: Arm, item: BenchItem) -> ItemResult | None:
        if stop.is_set():
            return None
        run = execute(arm.method, item.question, arm.params, llm=llm, retriever=retriever, store=store, ctx_hook=track)
        if run.status == "cancelled":
            return None
        return replace(results.record(configs[arm.name], item, run, arm.preset), arm=arm.name)

    ran = 0
    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        futures: set[Future] = {pool.submit(one, arm, item) for arm, item in pending}
        try:
            while futures:
                finished, futures = wait(futures, timeout=0.5, return_when=FIRST_COMPLETED)
                for future in finished:
                    if future.cancelled():
                        continue
                    row = future.result()
                    if row is not None:
                        ran += 1
                        if watch:
                            for arm in sharing[row.config]:
                                watch.record(arm.name, row)
                        if progress:
                            progress(row)
                if stop.is_set():
                    _cancel(futures, live, lock)
        except KeyboardInterrupt:
            stop.set()
            _cancel(futures, live, lock)
    if watch:
        watch.end()
    return EvalOutcome(rows=_rows(results, plan, configs), ran=ran, skipped=skipped, cancelled=stop.is_set())


def _rows(results: EvalResults, plan: EvalPlan, configs: dict[str, str]) -> list[ItemResult]:
    keys = {item.key for item in plan.items}
    found = {config: results.rows(config, keys) for config in set(configs.values())}
    return [replace(row, arm=arm.name) for arm in plan.arms for row in found[configs[arm.name]]]


def finished_rows(plan: EvalPlan, store: RunStore, configs: dict[str, str]) -> list[ItemResult]:
    """What earlier evaluations finished of this plan (``configs`` from ``EvalPlan.config_keys``), as ``evaluate``
    returns it; nothing is opened or run."""
    return _rows(EvalResults(store), plan, configs)


def _cancel(futures: set[Future], live: set[RunContext], lock: threading.Lock) -> None:
    for future in futures:
        future.cancel()
    with lock:
        for ctx in live:
            ctx.cancel_event.set()
