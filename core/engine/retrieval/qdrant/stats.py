"""What the collection knows of each corpus besides its snippets: its record and its BM25 statistics.

The record says what was ingested from where (the same fingerprint as the in-process index's manifest), how far an
ingest got, and the corpus's snippet count, total length and mean idf. Document frequencies live in buckets of words
(``core.engine.retrieval.qdrant.sparse.bucket_of``), so a query reads only the buckets of its own words; ``Statistics``
keeps those it has read, as a corpus does not change once ingested (a new ingest is a new fingerprint).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel

from core.engine.retrieval.bm25 import BM25Params
from core.engine.retrieval.qdrant.layout import KIND, STATS_OF, df_id, record_id
from core.engine.retrieval.qdrant.sparse import NeedsMean, bucket_of, mean_idf, scope_idf
from core.engine.retrieval.qdrant.store import Point, Store

_KEPT_BUCKETS = 4096  # of about 512 words each: the buckets of the words queries use most stay in memory
State = Literal["counted", "ingesting", "ready"]


class CorpusRecord(BaseModel):
    corpus: str
    path: str
    files: list[str]
    fingerprint: str
    model: str
    embed_precision: str
    tokenizer: str
    bm25: BM25Params
    state: State
    snippets: int  # after long passages are chunked
    tokens: int  # all snippets' lengths in words, for the average BM25 normalises by
    buckets: int
    mean_idf: float
    taken: list[str]  # the corpus's own ids that look like a chunk's, which no chunk may take
    done: int = 0  # snippets written, in corpus order
    split_passages: int = 0
    skipped_count: int = 0
    skipped: list[tuple[str, int, str]] = []  # the first ones, as (file, line, reason)
    renamed_count: int = 0
    renamed: list[tuple[str, int, str]] = []
    meta: dict = {}
    ingest_seconds: float | None = None
    built_at: str | None = None

    @property
    def average_length(self) -> float:
        return self.tokens / self.snippets

    def point(self) -> Point:
        return Point(record_id(self.corpus), {STATS_OF: self.corpus, KIND: "record", **self.model_dump(mode="json")})


def read_record(store: Store, corpus: str) -> CorpusRecord | None:
    found = store.retrieve([record_id(corpus)])
    return CorpusRecord.model_validate(found[0].payload) if found else None


def frequency_points(corpus: str, buckets: dict[int, dict[str, int]]) -> list[Point]:
    return [Point(df_id(corpus, b), {STATS_OF: corpus, KIND: "df", "df": df}) for b, df in buckets.items()]


class Statistics:
    """Idf over any set of ingested corpora, from their records and the frequency buckets a query needs."""

    def __init__(self, store: Store, records: dict[str, CorpusRecord]):
        self.store = store
        self.records = records
        self._lock = threading.Lock()
        self._buckets: OrderedDict[tuple[str, int], dict[str, int]] = OrderedDict()
        self._mean = lru_cache(maxsize=64)(self._scope_mean)

    def idf(self, terms: set[str], scope: list[str]) -> dict[str, float]:
        """Each term's idf over the corpora of ``scope`` as one collection (terms in none of them are left out)."""
        records = [self.records[name] for name in scope]
        buckets = self._fetch({(r.corpus, bucket_of(t, r.buckets)) for r in records for t in terms})
        frequencies = {t: sum(buckets[r.corpus, bucket_of(t, r.buckets)].get(t, 0) for r in records) for t in terms}
        snippets = sum(r.snippets for r in records)
        try:
            return scope_idf(frequencies, snippets, None, records[0].bm25.epsilon)
        except NeedsMean:
            return scope_idf(frequencies, snippets, self._mean(tuple(scope)), records[0].bm25.epsilon)

    def _fetch(self, wanted: set[tuple[str, int]]) -> dict[tuple[str, int], dict[str, int]]:
        with self._lock:
            have = {key: self._buckets[key] for key in wanted if key in self._buckets}
        if missing := sorted(wanted - have.keys()):
            by_id = {df_id(corpus, b): (corpus, b) for corpus, b in missing}
            found = {by_id[r.id]: r.payload.get("df", {}) for r in self.store.retrieve(list(by_id))}
            have |= {key: found.get(key, {}) for key in missing}  # a bucket no word fell into is not stored
        with self._lock:
            for key, df in have.items():
                self._buckets[key] = df
                self._buckets.move_to_end(key)
            while len(self._buckets) > _KEPT_BUCKETS:
                self._buckets.popitem(last=False)
        return have

    def _scope_mean(self, scope: tuple[str, ...]) -> float:
        """The mean idf over the scope's whole vocabulary (its own for one corpus; else every bucket is read once)."""
        if len(scope) == 1:
            return self.records[scope[0]].mean_idf
        merged: dict[str, int] = {}
        for name in scope:
            for record in self.store.scroll({STATS_OF: name, KIND: "df"}):
                for term, n in record.payload["df"].items():
                    merged[term] = merged.get(term, 0) + n
        return mean_idf(sum(self.records[name].snippets for name in scope), merged.values())
