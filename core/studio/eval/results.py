"""Benchmark bookkeeping in the studio's SQLite file (table ``eval_items``): what makes an evaluation resumable."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

from core.engine.store import RunStore
from core.engine.store.sqlite import database, transaction
from core.engine.trace import Run
from core.studio.eval.mirage import BenchItem

Key = tuple[str, str, str]  # (dataset, question id, asked key)
COSTS = ("calls", "retrievals", "prompt_tokens", "completion_tokens", "seconds")  # a result's costs: its run's totals

# A run that failed for a reason outside the method (endpoint down, timeout) is tried again on resume;
# one whose reply never parsed is the method's result and is kept.
FINAL_ERRORS = ("LLMParseError",)


@dataclass(frozen=True)
class ItemResult:
    """One question's result for one configuration: a row of ``eval_items`` (its columns in the table's order), and
    the arm that asked for it once an evaluation reports it."""

    config: str
    method: str
    dataset: str
    qid: str
    run_id: str
    model: str
    params: str  # the knobs, as JSON
    corpus: str  # the corpus names, as JSON
    gold: str
    predicted: str | None  # None when the run chose no option (it ended in error)
    correct: int  # 1 or 0
    status: str  # the run's: "ok", "error", ...
    error_type: str
    calls: int
    retrievals: int
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    finished: float | None
    asked: str  # the question as asked (``BenchItem.asked``)
    preset: str  # the ablation preset it was run for, "" for a method's own knobs
    arm: str = ""  # not stored: the arm (method or preset) an evaluation reports it under

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> ItemResult:
        return cls(**{f.name: row[f.name] for f in fields(cls) if f.name in row})

    def as_dict(self) -> dict[str, Any]:
        """The columns, then the arm (the items file's columns)."""
        return asdict(self)

    def stored(self) -> dict[str, Any]:
        """The table's columns."""
        return {k: v for k, v in asdict(self).items() if k != "arm"}


def config_key(method: str, params: dict[str, Any], backend: str, corpus: list[str], retrieval: str = "") -> str:
    """Results are only reused for the same method, knobs, backend (``LLM.backend``), corpus and retrieval scoring
    (``retrieval``, for methods that retrieve)."""
    # stored as "model": the embedded backend is the model name alone, so keys made before endpoints counted hold
    fields = {"method": method, "params": params, "model": backend, "corpus": sorted(corpus)}
    if retrieval:  # absent from keys made before the scoring changed, and from methods that never retrieve
        fields["retrieval"] = retrieval
    blob = json.dumps(fields, sort_keys=True)
    return f"{method}-{hashlib.sha256(blob.encode()).hexdigest()[:12]}"


class EvalResults:
    """Thread-safe; its own connection to the store's file, so evaluation threads never share one."""

    def __init__(self, store: RunStore):
        self.db = database(store.path)
        self.table = self.db.table("eval_items")
        self._lock = threading.Lock()

    def finished(self, config: str) -> set[Key]:
        """The questions, as asked, with a final result for this configuration."""
        marks = ", ".join("?" for _ in FINAL_ERRORS)
        with self._lock:
            rows = self.db.query(
                f"select dataset, qid, asked from eval_items where config = ? and "
                f"(status = 'ok' or error_type in ({marks}))",
                [config, *FINAL_ERRORS],
            )
            return {(r["dataset"], r["qid"], r["asked"]) for r in rows}

    def record(self, config: str, item: BenchItem, run: Run, preset: str = "") -> ItemResult:
        error = next((e.payload for e in reversed(run.events) if e.kind == "error"), None)
        predicted = run.answer.choice if run.answer else None
        row = ItemResult(
            config=config,
            method=run.method,
            dataset=item.dataset,
            qid=item.qid,
            run_id=run.id,
            model=run.model,
            params=json.dumps(run.params, sort_keys=True),
            corpus=json.dumps(run.corpus),
            gold=item.answer,
            predicted=predicted,
            correct=int(run.status == "ok" and predicted == item.answer),
            status=run.status,
            error_type=error.error_type if error else "",
            **run.totals.model_dump(include=set(COSTS)),
            finished=run.finished,
            asked=item.asked,
            preset=preset,
        )
        with self._lock, transaction(self.db.conn):
            self.table.upsert(row.stored(), pk=("config", "dataset", "qid", "asked"))
        return row

    def rows(self, config: str, keys: set[Key]) -> list[ItemResult]:
        with self._lock:
            found = list(self.table.rows_where("config = ?", [config]))
        return [ItemResult.from_row(r) for r in found if (r["dataset"], r["qid"], r["asked"]) in keys]


def evaluated_datasets(store: RunStore) -> list[str]:
    """The datasets some benchmark has results for, in name order."""
    with store.reading() as db:
        return [row[0] for row in db.execute("select distinct dataset from eval_items order by dataset")]
