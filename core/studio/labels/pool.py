"""Pools: per question, every document any chosen saved run showed an agent (retrieved hits and generated
documents), deduplicated by id and by identical text, plus each run's ranked list in pool ids.

Built from the runs' events in the store, so it works the same for runs made here and runs imported from elsewhere.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from statistics import median_low
from typing import Any, Literal, TypeVar

from pydantic import ValidationError

from core.engine.store.sqlite import connect
from core.engine.trace import GeneratedDoc, Retrieval
from core.studio.labels.identity import (
    QuestionRef,
    derive_question,
    generated_id,
    question_hash,
    teaching_ids,
    text_hash,
)
from core.studio.labels.records import FinalLabel, Label

Given = TypeVar("Given", Label, FinalLabel)  # labels, or adjudications

Source = Literal["all", "teaching", "eval"]


@dataclass(frozen=True)
class RunFilter:
    """Which saved runs make the queue: all, a teaching-pack case set or an evaluation's runs, then by method/date."""

    source: Source = "all"
    cases: frozenset[str] = frozenset()  # teaching case ids (``stemi``); empty = every case
    datasets: frozenset[str] = frozenset()  # benchmark datasets; empty = every dataset
    methods: frozenset[str] = frozenset()  # empty = every method
    since: float | None = None
    until: float | None = None
    qhash: str | None = None  # one question only (its hash, see identity.question_hash)


@dataclass(frozen=True)
class Occurrence:
    """Where a pool item was shown: which run and method, at what rank and score, under which id."""

    run_id: str
    method: str
    original_id: str
    generated: bool
    rank: int
    score: float | None = None
    corpus: str = ""
    gap: str = ""


@dataclass
class PoolItem:
    pool_id: str
    ids: list[str]  # every snippet id that carries this text; labels on any of them are labels of this item
    title: str
    text: str
    occurrences: list[Occurrence] = field(default_factory=list)

    @property
    def generated(self) -> bool:
        return all(o.generated for o in self.occurrences)

    @property
    def methods(self) -> list[str]:
        return sorted({o.method for o in self.occurrences})

    def blind_text(self) -> str:
        """The text alone, a retrieved snippet's title as its first sentence, so origin cannot be told apart."""
        if self.title and not self.generated and not self.text.startswith(self.title):
            return f"{self.title}. {self.text}"
        return self.text


@dataclass
class RunRanking:
    run_id: str
    method: str
    started: float
    status: str
    ranked: list[str]  # pool ids of the retrieved hits, first retrieval first, each best first
    generated: list[str]  # pool ids of the documents it generated, in order


@dataclass
class PoolQuestion:
    ref: QuestionRef
    gold: str | None  # the teaching pack's or benchmark's answer: shown only in open mode
    runs: list[RunRanking]
    items: list[PoolItem]
    by_id: dict[str, str]  # any snippet id -> its pool id

    @property
    def question_id(self) -> str:
        return self.ref.question_id

    def item(self, pool_id: str) -> PoolItem:
        return next(i for i in self.items if i.pool_id == pool_id)

    def blind_order(self, annotator: str) -> list[PoolItem]:
        """Shuffled per annotator and question, the same on every reload."""

        def key(item: PoolItem) -> str:
            return hashlib.sha256(f"{annotator}\n{self.question_id}\n{item.pool_id}".encode()).hexdigest()

        return sorted(self.items, key=key)


# -- reading the store --------------------------------------------------------------------------


def _bench(conn: sqlite3.Connection) -> dict[str, tuple[str, str, str]]:
    """run id -> (dataset, qid, gold) for runs an evaluation made."""
    return {
        r["run_id"]: (r["dataset"], r["qid"], r["gold"])
        for r in conn.execute("select run_id, dataset, qid, gold from eval_items where run_id is not null")
    }


def _registered(conn: sqlite3.Connection) -> dict[str, str]:
    return {
        r["qhash"]: r["question_id"]
        for r in conn.execute("select qhash, question_id from label_questions where qhash is not null")
    }


def _keep(run: dict[str, Any], ref: QuestionRef, bench: tuple | None, flt: RunFilter) -> bool:
    if flt.qhash is not None and ref.qhash != flt.qhash:
        return False
    if flt.methods and run["method"] not in flt.methods:
        return False
    if flt.since is not None and run["started"] < flt.since:
        return False
    if flt.until is not None and run["started"] >= flt.until:
        return False
    if flt.source == "teaching":
        case = ref.question_id.removeprefix("teaching/")
        return ref.question_id.startswith("teaching/") and (not flt.cases or case in flt.cases)
    if flt.source == "eval":
        return bench is not None and (not flt.datasets or bench[0] in flt.datasets)
    return True


def collect(db_path: Path | str, flt: RunFilter = RunFilter()) -> list[PoolQuestion]:
    """Every question with a chosen run, its pool and its runs' ranked lists, newest question first."""
    path = Path(db_path)
    if not path.exists():
        return []
    conn = connect(path)
    conn.row_factory = sqlite3.Row
    try:
        bench = _bench(conn)
        registered = _registered(conn)
        bench_ids = {}
        for run in conn.execute(
            "select id, question, options from runs where id in (select run_id from eval_items)"
            if bench
            else "select 1 where 0"
        ):
            dataset, qid, gold = bench[run["id"]]
            bench_ids[question_hash(run["question"], json.loads(run["options"]))] = (f"{dataset}/{qid}", gold)
        groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
        refs: dict[str, QuestionRef] = {}
        for row in conn.execute("select id, method, question, options, started, status from runs order by started"):
            run = dict(row)
            options = json.loads(run["options"] or "{}")
            ref = derive_question(run["question"], options, bench_ids, registered)
            if _keep(run, ref, bench.get(run["id"]), flt):
                groups[ref.question_id].append(run)
                refs.setdefault(ref.question_id, ref)
        questions = [_question(conn, refs[qid], runs, bench_ids) for qid, runs in groups.items()]
    finally:
        conn.close()
    questions.sort(key=lambda q: -max(r.started for r in q.runs))
    return questions


def _question(
    conn: sqlite3.Connection, ref: QuestionRef, runs: list[dict[str, Any]], bench_ids: dict[str, tuple[str, str]]
) -> PoolQuestion:
    gold = (teaching_ids().get(ref.qhash) or bench_ids.get(ref.qhash) or (None, None))[1] if ref.qhash else None
    marks = ",".join("?" * len(runs))
    events = conn.execute(
        f"select run_id, payload, usage from events where kind in ('retrieval', 'generated_doc') "
        f"and run_id in ({marks}) order by run_id, seq",
        [r["id"] for r in runs],
    ).fetchall()
    by_run: dict[str, list[tuple[Retrieval | GeneratedDoc, bool]]] = defaultdict(list)
    for event in events:
        try:
            payload = json.loads(event["payload"])
            model = Retrieval if payload.get("kind") == "retrieval" else GeneratedDoc
            searched = bool(json.loads(event["usage"] or "{}").get("retrievals"))
            by_run[event["run_id"]].append((model.model_validate(payload), searched))
        except (ValueError, ValidationError):
            continue  # a payload from another version that does not parse shows no documents rather than failing
    builder = _PoolBuilder()
    rankings = [builder.add_run(run, by_run.get(run["id"], [])) for run in runs]
    items, by_id = builder.finish(rankings)
    return PoolQuestion(ref, gold, rankings, items, by_id)


class _PoolBuilder:
    """Collects documents by text; an id keeps the first text it was seen with."""

    def __init__(self):
        self.by_text: dict[str, PoolItem] = {}
        self.text_of: dict[str, str] = {}  # snippet id -> text hash

    def _item(self, snippet_id: str, title: str, text: str) -> str:
        key = self.text_of.setdefault(snippet_id, text_hash(text))
        item = self.by_text.setdefault(key, PoolItem(pool_id=snippet_id, ids=[], title=title, text=text))
        if snippet_id not in item.ids:
            item.ids.append(snippet_id)
        return key

    def add_run(self, run: dict[str, Any], payloads: list[tuple[Retrieval | GeneratedDoc, bool]]) -> RunRanking:
        """``payloads``: each event's payload and whether it searched (a retrieval event that searched nothing and
        names only documents already found re-orders them, like MedRGAG's re-scored top k: they move first)."""
        ranked: list[str] = []
        generated: list[str] = []
        for payload, searched in payloads:
            if (
                isinstance(payload, Retrieval)
                and not searched
                and payload.hits
                and all(self.text_of.get(h.snippet_id) in ranked for h in payload.hits)
            ):
                first = list(dict.fromkeys(self.text_of[h.snippet_id] for h in payload.hits))
                ranked = first + [k for k in ranked if k not in first]
            elif isinstance(payload, Retrieval):
                for hit in payload.hits:
                    key = self._item(hit.snippet_id, hit.title, hit.text)
                    if key not in ranked:
                        ranked.append(key)
                        self.by_text[key].occurrences.append(
                            Occurrence(
                                run["id"], run["method"], hit.snippet_id, False, len(ranked), hit.score, hit.corpus
                            )
                        )
            elif payload.text.strip():
                key = self._item(generated_id(payload.text), "", payload.text)
                if key not in generated:
                    generated.append(key)
                    self.by_text[key].occurrences.append(
                        Occurrence(run["id"], run["method"], payload.doc_id, True, len(generated), gap=payload.gap)
                    )
        return RunRanking(run["id"], run["method"], run["started"], run["status"], ranked, generated)

    def finish(self, rankings: list[RunRanking]) -> tuple[list[PoolItem], dict[str, str]]:
        """Names each item and turns the rankings' text keys into pool ids."""
        for item in self.by_text.values():
            # a retrieved id names the item when it has one, so labels exported as qrels use corpus ids
            retrieved = sorted(i for i in item.ids if not i.startswith("gen-"))
            item.pool_id = (retrieved or sorted(item.ids))[0]
        for ranking in rankings:
            ranking.ranked = [self.by_text[k].pool_id for k in ranking.ranked]
            ranking.generated = [self.by_text[k].pool_id for k in ranking.generated]
        by_id = {sid: self.by_text[key].pool_id for sid, key in self.text_of.items()}
        return list(self.by_text.values()), by_id


def ranked_list(run: RunRanking, generated: bool = False) -> list[str]:
    """The run's ranked list in pool ids; with ``generated``, its generated documents follow the retrieved ones."""
    return run.ranked + ([g for g in run.generated if g not in run.ranked] if generated else [])


# -- labels resolved onto pool items --------------------------------------------------------------


def resolve(question: PoolQuestion, rows: list[Given]) -> tuple[dict[str, dict[str, Given]], list[Given]]:
    """pool id -> annotator (``"final"`` for an adjudication) -> their current label (the latest among the item's
    ids), and the labels of this question whose snippet is in no pool."""
    found: dict[str, dict[str, Given]] = defaultdict(dict)
    orphans = []
    for row in rows:
        if row.question_id != question.question_id:
            continue
        pool_id = question.by_id.get(row.snippet_id)
        if pool_id is None:
            orphans.append(row)
            continue
        key = row.annotator if isinstance(row, Label) else "final"
        if key not in found[pool_id] or row.updated > found[pool_id][key].updated:
            found[pool_id][key] = row
    return dict(found), orphans


def consensus(grades: list[int], final: int | None = None) -> int | None:
    """The adjudicated grade, else the most common one (a tie goes to the lower median: the cautious reading)."""
    if final is not None:
        return final
    if not grades:
        return None
    counts = Counter(grades).most_common()
    top = [g for g, n in counts if n == counts[0][1]]
    return top[0] if len(top) == 1 else median_low(sorted(grades))


def day_start(value: datetime) -> float:
    return datetime(value.year, value.month, value.day).timestamp()
