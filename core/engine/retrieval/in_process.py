"""Today's backend: each corpus's index on this machine's disk (BM25 weights, FAISS vectors, SQLite texts), searched
in this process. A snippet's handle is its row in its corpus's index."""

from __future__ import annotations

import threading

import numpy as np

from core.engine.retrieval.backend import Key, Request, Search, SearchBackend
from core.engine.retrieval.bm25 import Collection
from core.engine.retrieval.corpus import Snippet
from core.engine.retrieval.corpus_index import CorpusIndex
from core.engine.retrieval.fusion import merge_by_score


class InProcessBackend(SearchBackend):
    label = "in-process index (BM25 + FAISS on this machine)"

    def __init__(self, indexes: list[CorpusIndex]):
        self._indexes = {index.name: index for index in indexes}
        self.corpora = list(self._indexes)
        self._collections: dict[tuple[str, ...], Collection] = {}
        self._collections_lock = threading.Lock()

    @property
    def indexes(self) -> dict[str, CorpusIndex]:
        return self._indexes

    def start(self, request: Request) -> Search:
        names = [name for scope in request.scopes for name in scope]
        excluded = {name: self.indexes[name].excluded_rows(request.exclude) for name in names}
        bm25 = {}
        if "bm25" in request.retrievers:  # every snippet's score, once per query: rankings and hits read it
            bm25 = {
                name: scores
                for scope in request.scopes
                for name, scores in zip(scope, self._collection(scope).scores(request.text), strict=True)
            }
        return _InProcessSearch(self.indexes, names, request.vector, excluded, bm25)

    def _collection(self, names: list[str]) -> Collection:
        """The selected corpora's BM25 statistics, merged once per selection."""
        with self._collections_lock:
            if (key := tuple(names)) not in self._collections:
                self._collections[key] = Collection([self.indexes[name].bm25 for name in names])
            return self._collections[key]


class _InProcessSearch(Search):
    def __init__(
        self,
        indexes: dict[str, CorpusIndex],
        names: list[str],
        vector: np.ndarray | None,
        excluded: dict[str, np.ndarray],
        bm25: dict[str, np.ndarray],
    ):
        self.indexes = indexes
        self.names = names
        self.vector = vector
        self.excluded = excluded
        self.bm25 = bm25

    def top(self, retriever: str, names: list[str], n: int) -> list[tuple[Key, float]]:
        per_corpus = {
            "bm25": lambda name: self.indexes[name].bm25_top(self.bm25[name], n, self.excluded[name]),
            "dense": lambda name: self.indexes[name].dense_top(self.vector, n, self.excluded[name]),
        }[retriever]
        return merge_by_score([[((name, row), s) for row, s in per_corpus(name)] for name in names], n)

    def found(self, keys: list[Key]) -> dict[Key, tuple[Snippet, dict[str, float]]]:
        rows_by_corpus: dict[str, list[int]] = {}
        for name, row in keys:
            rows_by_corpus.setdefault(name, []).append(row)
        out = {}
        for name, rows in rows_by_corpus.items():
            index = self.indexes[name]
            snippets = index.snippets(rows)
            dense = index.dense_scores(self.vector, rows).tolist() if self.vector is not None else None
            for i, row in enumerate(rows):
                scores = {"bm25": float(self.bm25[name][row])} if self.bm25 else {}
                if dense is not None:
                    scores["dense"] = dense[i]
                out[name, row] = (snippets[row], scores)
        return out

    def keys_of(self, ids: list[str]) -> list[Key]:
        return [(name, row) for name in self.names for row in self.indexes[name].store.rows_of(ids)]
