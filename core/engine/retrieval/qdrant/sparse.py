"""BM25 as Qdrant sparse vectors, scored as the in-process index scores it (rank-bm25's Okapi BM25).

A snippet's vector holds, for each of its words, the term-frequency part of BM25,
tf·(k1+1) / (tf + k1·(1 − b + b·length/average length)), with its own corpus's average length. A query's vector holds
each of its words' idf, counted again when the query repeats a word. Their dot product, which Qdrant computes, is the
BM25 score. The idf comes from here, per query, from document frequencies over the corpora the query searches (the
in-process index's one idf over the corpora searched), not from Qdrant's IDF modifier, which counts the whole
collection with another formula. Words are the project's own tokens (``core.engine.retrieval.bm25.tokenize``); a word's
dimension is its CRC-32, as Qdrant's own BM25 hashes tokens, so two words with one hash share a dimension
(``colliding_pairs`` counts them in a vocabulary).
"""

from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Iterable

import numpy as np

from core.engine.retrieval.bm25 import BM25Params

SparseVector = tuple[list[int], list[float]]
OKAPI = BM25Params()  # rank-bm25's defaults, as the in-process index


def term_id(term: str) -> int:
    return zlib.crc32(term.encode("utf-8"))


def _summed(weights: Iterable[tuple[int, float]]) -> SparseVector:
    by_id: dict[int, float] = {}
    for i, w in weights:
        by_id[i] = by_id.get(i, 0.0) + w
    ids = sorted(by_id)
    return ids, [by_id[i] for i in ids]


def document_vector(tokens: list[str], average_length: float, params: BM25Params = OKAPI) -> SparseVector:
    norm = params.k1 * (1 - params.b + params.b * len(tokens) / average_length)
    return _summed((term_id(t), tf * (params.k1 + 1) / (tf + norm)) for t, tf in Counter(tokens).items())


def query_vector(tokens: list[str], idf: dict[str, float]) -> SparseVector:
    """Each query word's idf (a word absent from the corpora searched adds nothing, as in the in-process index)."""
    return _summed((term_id(t), idf[t]) for t in tokens if t in idf)


def bucket_of(term: str, buckets: int) -> int:
    return term_id(term) % buckets


def bucket_count(vocabulary: int, per_bucket: int = 512) -> int:
    """Buckets of document frequencies for a vocabulary: a power of two with about ``per_bucket`` words in each, so a
    query reads a few small payloads."""
    return 1 << max(0, int(np.ceil(np.log2(max(vocabulary, 1) / per_bucket))))


def in_buckets(frequencies: Counter, buckets: int) -> dict[int, dict[str, int]]:
    out: dict[int, dict[str, int]] = {}
    for term, n in frequencies.items():
        out.setdefault(bucket_of(term, buckets), {})[term] = n
    return out


def _raw_idf(snippets: int, frequencies: np.ndarray) -> np.ndarray:
    return np.log((snippets - frequencies + 0.5) / (frequencies + 0.5))


def mean_idf(snippets: int, frequencies: Iterable[int]) -> float:
    """The mean idf over a whole vocabulary: rank-bm25 floors a negative idf at epsilon times it."""
    raw = _raw_idf(snippets, np.fromiter(frequencies, np.float64))
    return float(raw.mean()) if raw.size else 0.0


def scope_idf(
    frequencies: dict[str, int], snippets: int, mean: float | None, epsilon: float = BM25Params.epsilon
) -> dict[str, float]:
    """Okapi idf (``core.engine.retrieval.bm25.okapi_idf``) of words with their document frequencies over the corpora
    searched. ``mean`` is the mean idf over those corpora's whole vocabulary, needed only when a word is in more than
    half the snippets; without it such a word raises ``NeedsMean``."""
    found = {t: n for t, n in frequencies.items() if n > 0}
    raw = _raw_idf(snippets, np.array(list(found.values()), dtype=np.float64))
    if (raw < 0).any():
        if mean is None:
            raise NeedsMean
        raw = np.where(raw < 0, epsilon * mean, raw)
    return dict(zip(found, raw.tolist(), strict=True))


class NeedsMean(Exception):
    """A query word is in more than half the snippets searched: its idf is the floor, a fraction of the mean."""


def colliding_pairs(vocabulary: Iterable[str]) -> int:
    """Pairs of words that share a sparse dimension."""
    counts = Counter(term_id(t) for t in vocabulary)
    return sum(n * (n - 1) // 2 for n in counts.values())
