"""The Qdrant search backend: rankings from Qdrant's engine, fused and shaped into hits by the same retriever.

A query's BM25 vector carries the idf of its words over the corpora of its scope (``Statistics``); the dense query
is the embedder's vector. Both rankings of a set of corpora go to Qdrant as one batch, filtered by corpus and by the
excluded ids; ties are ordered as the in-process index orders them (corpus, then row). The hits' texts come from
the payloads, and every retriever's score of a hit from its stored vectors, so a snippet found by one retriever
carries the other's score too, as in the in-process index.
"""

from __future__ import annotations

import numpy as np

from core.engine.retrieval.backend import Key, Request, Search, SearchBackend
from core.engine.retrieval.bm25 import tokenize
from core.engine.retrieval.corpus import Snippet
from core.engine.retrieval.fusion import merge_by_score
from core.engine.retrieval.qdrant.layout import CORPUS, DENSE, SPARSE, point_id
from core.engine.retrieval.qdrant.sparse import query_vector
from core.engine.retrieval.qdrant.stats import CorpusRecord, Statistics
from core.engine.retrieval.qdrant.store import Query, Store


class QdrantBackend(SearchBackend):
    def __init__(self, store: Store, records: list[CorpusRecord]):
        self.store = store
        self.label = store.label
        self.records = {r.corpus: r for r in records}
        self.corpora = list(self.records)
        self.statistics = Statistics(store, self.records)

    def start(self, request: Request) -> Search:
        terms = tokenize(request.text)
        sparse = {}
        if "bm25" in request.retrievers:
            sparse = {
                tuple(scope): query_vector(terms, self.statistics.idf(set(terms), scope)) for scope in request.scopes
            }
        names = [name for scope in request.scopes for name in scope]
        excluded = [point_id(name, snippet_id) for name in names for snippet_id in sorted(request.exclude)]
        return _QdrantSearch(self, names, request.vector, request.retrievers, sparse, excluded)


class _QdrantSearch(Search):
    def __init__(
        self,
        backend: QdrantBackend,
        names: list[str],
        vector: np.ndarray | None,
        retrievers: tuple[str, ...],
        sparse: dict[tuple[str, ...], tuple[list[int], list[float]]],
        excluded: list[str],
    ):
        self.store = backend.store
        self.names = names
        self.vector = vector
        self.retrievers = retrievers
        self.sparse = sparse
        self.scope_of = {name: scope for scope in sparse for name in scope}
        self.excluded = excluded
        self._rankings: dict[tuple[tuple[str, ...], int], dict[str, list[tuple[Key, float]]]] = {}

    def top(self, retriever: str, names: list[str], n: int) -> list[tuple[Key, float]]:
        key = (tuple(names), n)
        if key not in self._rankings:  # every retriever of the query in one round trip
            self._rankings[key] = self._rank(names, n)
        return self._rankings[key][retriever]

    def _rank(self, names: list[str], n: int) -> dict[str, list[tuple[Key, float]]]:
        queries: list[tuple[str, Query]] = []
        if "dense" in self.retrievers:
            queries.append(("dense", Query(DENSE, self.vector, names, n, self.excluded)))
        for scope, vector in self.sparse.items():
            if (group := [name for name in names if name in scope]) and vector[0]:
                queries.append(("bm25", Query(SPARSE, vector, group, n, self.excluded)))
        answers = self.store.query([q for _, q in queries], [CORPUS, "row"]) if queries else []
        order = {name: i for i, name in enumerate(names)}
        lists: dict[str, list[list[tuple[Key, float]]]] = {r: [] for r in self.retrievers}
        for (retriever, _), found in zip(queries, answers, strict=True):
            if retriever == "bm25":  # as the in-process index: only snippets that share a word with the query
                found = [f for f in found if f.score > 0]
            found = sorted(found, key=lambda f: (-f.score, order[f.payload[CORPUS]], f.payload["row"]))
            lists[retriever].append([((f.payload[CORPUS], f.id), _f32(f.score)) for f in found])
        return {r: merge_by_score(per_scope, n) for r, per_scope in lists.items()}

    def found(self, keys: list[Key]) -> dict[Key, tuple[Snippet, dict[str, float]]]:
        records = {r.id: r for r in self.store.retrieve([pid for _, pid in keys], vectors=True)}
        out = {}
        for name, pid in keys:
            record = records[pid]
            scores = {}
            if self.sparse:
                indices, values = self.sparse[self.scope_of[name]]
                stored = record.sparse or {}
                scores["bm25"] = _f32(sum(v * stored.get(i, 0.0) for i, v in zip(indices, values, strict=True)))
            if self.vector is not None:
                scores["dense"] = _f32(record.dense @ self.vector)
            p = record.payload
            out[name, pid] = (Snippet(p["id"], p.get("title", ""), p["text"]), scores)
        return out

    def keys_of(self, ids: list[str]) -> list[Key]:
        wanted = [(name, point_id(name, snippet_id)) for name in self.names for snippet_id in ids]
        present = {r.id for r in self.store.retrieve([pid for _, pid in wanted])}
        return [key for key in wanted if key[1] in present]


def _f32(score: float) -> float:
    """Scores in single precision, as the engines and the in-process index compute them (the local mode and the
    sums here work in double, whose last digits would only differ in noise)."""
    return float(np.float32(score))
