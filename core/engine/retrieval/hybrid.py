"""Hybrid search over several corpora: BM25 and dense rankings fused by reciprocal rank.

Each retriever ranks every selected corpus; its per-corpus lists are merged by raw score into one
list (as MedRAG does), and the two lists are fused with RRF (k=60). BM25 scores the selected corpora as one
collection (one idf over all of them), so its raw scores are comparable across corpora; MedRAG merges scores
of separate indexes, which over a small corpus beside a large one lets one corpus fill the list. Every hit
carries its score and rank under each retriever. Source-balanced search (MedRGAG) takes an equal share of k from each
corpus (its own fused top k/n, or ``per_corpus`` of each when given), pools them and re-scores the pool with a
rerank hook, dense cosine similarity by default, keeping the k best: MedRGAG pools the top 32 of every corpus and
keeps 5. ``similarity`` scores any texts (generated ones too) the way that default re-scores the pool.
Where the rankings come from is a search backend (``core.engine.retrieval.backend``): today's in-process index, or Qdrant.
Safe to call from many threads at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from core.engine.retrieval.backend import Key, Request, Search, SearchBackend
from core.engine.retrieval.chunking import ChunkParams
from core.engine.retrieval.corpus_index import CorpusIndex
from core.engine.retrieval.dense import Embedder
from core.engine.retrieval.fusion import RRF_K, rrf
from core.engine.retrieval.in_process import InProcessBackend
from core.engine.trace import Hit

Mode = Literal["hybrid", "bm25", "dense"]
Idf = Literal["collection", "per corpus"]
# What a benchmark result's key records about how snippets were found: a change here makes old results not count.
SCORING = (
    "hybrid: BM25 with one idf over the corpora searched + dense, fused by RRF k=60; passages over "
    f"{ChunkParams().size} characters indexed in chunks overlapping by {ChunkParams().overlap}"
)
MODES: tuple[str, ...] = ("hybrid", "bm25", "dense")
Reranker = Callable[[str, list[Hit]], Sequence[float]]


def dense_rerank(query: str, hits: list[Hit]) -> list[float]:
    """Re-score by cosine similarity between query and snippet embeddings (computed for every hit)."""
    return [hit.scores["dense"] for hit in hits]


@dataclass
class _Query:
    text: str
    retrievers: tuple[str, ...]
    vector: np.ndarray | None
    search: Search


class HybridRetriever:
    """Implements ``core.engine.retrieval.retriever.Retriever`` over the corpora of a search backend (a list of in-process corpus
    indexes is taken as today's backend)."""

    def __init__(
        self,
        backend: SearchBackend | Sequence[CorpusIndex],
        embedder: Embedder,
        *,
        rrf_k: int = RRF_K,
        depth: int = 100,
        reranker: Reranker = dense_rerank,
        bm25_idf: Idf = "collection",
    ):
        # A list of corpus indexes is today's in-process backend, as a retriever has always been built.
        self.backend = backend if isinstance(backend, SearchBackend) else InProcessBackend(list(backend))
        self.corpora: list[str] = list(self.backend.corpora)
        self.embedder = embedder
        self.rrf_k = rrf_k
        self.depth = depth  # how deep each retriever's ranking goes before fusion
        self.reranker = reranker
        self.bm25_idf = bm25_idf  # "per corpus": each index's own idf, MedRAG's merge (the benchmark's baseline)

    @property
    def indexes(self) -> dict[str, CorpusIndex]:
        """The corpus indexes held in this process (none when the backend is an engine elsewhere)."""
        return self.backend.indexes

    def search(
        self,
        query: str,
        k: int,
        *,
        corpora: list[str] | None = None,
        balanced: bool = False,
        exclude: frozenset[str] = frozenset(),
        mode: Mode = "hybrid",
        pin: frozenset[str] = frozenset(),
        per_corpus: int | None = None,
    ) -> list[Hit]:
        """The k best snippets; ``exclude`` holds snippet ids that never come back, ``pin`` ids that always do, at
        the top (marked ``pinned``), with the rest filling the k."""
        query = query.strip()
        if not query:
            raise ValueError("the query is empty")
        if mode not in MODES:
            raise ValueError(f"unknown retrieval mode {mode!r}; one of: {', '.join(MODES)}")
        if both := frozenset(pin) & frozenset(exclude):
            raise ValueError(f"snippet {', '.join(sorted(both))} cannot be both pinned and dropped")
        if k <= 0:
            return []
        names = self._select(corpora)
        retrievers = ("bm25", "dense") if mode == "hybrid" else (mode,)
        vector = self.embedder.encode_query(query) if "dense" in retrievers or balanced else None
        scopes = [names] if self.bm25_idf == "collection" else [[name] for name in names]
        request = Request(query, vector, retrievers, scopes, frozenset(exclude))
        q = _Query(query, retrievers, vector, self.backend.start(request))
        if not balanced:
            found = self._fused(q, names, k)
        else:
            share = per_corpus or -(-k // len(names))  # each corpus contributes ceil(k / corpora) unless told
            pool = [hit for name in names for hit in self._fused(q, [name], share)]
            found = self._rerank(query, pool, k)
        return self._pinned(q, names, found, frozenset(pin), k) if pin else found

    def similarity(self, query: str, texts: list[str]) -> list[float]:
        """Cosine similarity of each text to the query under the dense embedder (texts need not be in an index)."""
        if not texts:
            return []
        return (self.embedder.encode(texts) @ self.embedder.encode_query(query.strip())).tolist()

    def _pinned(self, q: _Query, names: list[str], found: list[Hit], pin: frozenset[str], k: int) -> list[Hit]:
        """Pinned snippets first (with their fused rank's scores when they made the list, else their retrievers'
        scores alone), then the others; an id in none of the searched corpora is refused by name."""
        ranked = [h for h in found if h.snippet_id in pin]
        missing = sorted(pin - {h.snippet_id for h in ranked})
        extra = {
            h.snippet_id: h for h in reversed(self._hits(q, [(key, 0.0) for key in q.search.keys_of(missing)], {}))
        }
        if unknown := [i for i in missing if i not in extra]:
            raise ValueError(f"pinned snippet {', '.join(unknown)} is not in the corpora searched ({', '.join(names)})")
        first = ranked + [extra[i] for i in missing]
        rest = [h for h in found if h.snippet_id not in pin][: max(k - len(first), 0)]
        return [
            h.model_copy(update={"rank": rank, "pinned": h.snippet_id in pin})
            for rank, h in enumerate(first + rest, start=1)
        ]

    def _select(self, corpora: list[str] | None) -> list[str]:
        if not corpora:
            return self.corpora
        unknown = [c for c in corpora if c not in self.corpora]
        if unknown:
            raise ValueError(f"unknown corpus {', '.join(map(repr, unknown))}; open corpora: {', '.join(self.corpora)}")
        return [c for c in self.corpora if c in corpora]

    def _fused(self, q: _Query, names: list[str], k: int) -> list[Hit]:
        rankings = {r: q.search.top(r, names, max(k, self.depth)) for r in q.retrievers}
        if len(rankings) == 1:
            fused = next(iter(rankings.values()))
        else:
            fused = rrf({r: [key for key, _ in ranking] for r, ranking in rankings.items()}, self.rrf_k)
        return self._hits(q, fused[:k], rankings)

    def _hits(self, q: _Query, top: list[tuple[Key, float]], rankings: dict[str, list[tuple[Key, float]]]) -> list[Hit]:
        rank_of = {r: {key: i for i, (key, _) in enumerate(ranking, start=1)} for r, ranking in rankings.items()}
        found = q.search.found([key for key, _ in top])
        hits = []
        for rank, (key, score) in enumerate(top, start=1):
            snippet, scores = found[key]
            ranks = {r: ranks[key] for r, ranks in rank_of.items() if key in ranks}
            hits.append(
                Hit(
                    snippet_id=snippet.id,
                    corpus=key[0],
                    title=snippet.title,
                    text=snippet.text,
                    rank=rank,
                    score=score,
                    scores=scores,
                    ranks=ranks,
                )
            )
        return hits

    def _rerank(self, query: str, pool: list[Hit], k: int) -> list[Hit]:
        new_scores = [float(s) for s in self.reranker(query, pool)]
        order = sorted(range(len(pool)), key=lambda i: -new_scores[i])[:k]
        reranked = []
        for rank, i in enumerate(order, start=1):
            scores = {**pool[i].scores, "fused": pool[i].score, "rerank": new_scores[i]}
            reranked.append(pool[i].model_copy(update={"rank": rank, "score": new_scores[i], "scores": scores}))
        return reranked
