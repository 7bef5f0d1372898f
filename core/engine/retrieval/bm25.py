"""BM25 scoring: statistics from rank-bm25's ``BM25Okapi``, kept as a sparse term-by-snippet weight matrix.

``BM25Okapi`` holds one Python dict per snippet and scores a query with a Python loop over every
snippet (about 0.2 s for three terms over 300k snippets), and a pickle of it is as slow to load.
So the index is built with ``BM25Okapi`` once and its per-(term, snippet) contributions are stored
as a CSR matrix in an ``.npz`` file: loading is one read, and a query is the sum of a few rows.
Scores are identical to ``BM25Okapi.get_scores`` (a test checks that).

Several corpora are scored as one collection (``Collection``): a term's idf comes from its document
frequency over all of them, as if they were one index. Each corpus's own idf would make scores
incomparable across corpora — a word rare in a small corpus outscores the same word in a large one —
and a merged ranking would be drowned by whichever corpus weights the question's words highest
(thousands of short HPO definitions did: 70% of BM25's top 5 for the teaching cases). Length
normalisation stays per corpus (each corpus's average length), since the stored weights fold it in.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
from rank_bm25 import BM25Okapi
from scipy import sparse

from core.engine.retrieval.progress import Progress, no_progress

TOKENIZER = "lowercase alphanumeric words of up to 40 characters, without English stop words"
_WORD = re.compile(r"[a-z0-9]+")
_MAX_WORD = 40  # longer runs are sequences or identifiers, and would bloat the stored vocabulary


@cache
def _stop_words() -> frozenset[str]:
    # Imported on first use: scikit-learn takes seconds to import, and only this list is needed from it.
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return ENGLISH_STOP_WORDS


def tokenize(text: str) -> list[str]:
    # Interned, so the build's per-snippet dicts share one string per term.
    stop = _stop_words()
    return [sys.intern(w) for w in _WORD.findall(text.lower()) if len(w) <= _MAX_WORD and w not in stop]


@dataclass(frozen=True)
class BM25Params:
    k1: float = 1.5
    b: float = 0.75
    epsilon: float = 0.25  # rank-bm25's floor for negative idf, as a fraction of the mean idf


def okapi_idf(documents: int, frequencies: np.ndarray, epsilon: float) -> np.ndarray:
    """rank-bm25's idf: log((N - n + 0.5) / (n + 0.5)) for a term in n of N documents; a negative one (a term in
    more than half of them) becomes epsilon times the mean idf."""
    idf = np.log((documents - frequencies + 0.5) / (frequencies + 0.5))
    return np.where(idf < 0, epsilon * idf.mean(), idf) if idf.size else idf


class BM25Index:
    FILE = "bm25.npz"

    def __init__(self, vocabulary: np.ndarray, weights: sparse.csr_matrix, epsilon: float = BM25Params.epsilon):
        _stop_words()  # paid when the index opens, not by the first query
        self.weights = weights  # terms x snippets
        self.term_ids = {term: i for i, term in enumerate(vocabulary.tolist())}
        self.vocabulary = vocabulary
        self.epsilon = epsilon
        self.frequencies = np.diff(weights.indptr)  # documents holding each term: its row's stored entries
        self.idf = okapi_idf(self.size, self.frequencies, epsilon)  # what the stored weights were multiplied by

    @property
    def size(self) -> int:
        return self.weights.shape[1]

    @classmethod
    def build(
        cls, texts: list[str], params: BM25Params = BM25Params(), progress: Progress = no_progress, stage: str = "bm25"
    ) -> BM25Index:
        tokenized = []
        for i, text in enumerate(texts):
            tokenized.append(tokenize(text))
            if i % 5000 == 0:
                progress(stage, i, len(texts))
        okapi = BM25Okapi(tokenized, k1=params.k1, b=params.b, epsilon=params.epsilon)
        del tokenized
        vocabulary = np.array(sorted(okapi.idf), dtype=str)
        term_ids = {term: i for i, term in enumerate(vocabulary.tolist())}
        nnz = sum(len(freqs) for freqs in okapi.doc_freqs)
        rows, cols, freqs = np.empty(nnz, np.int32), np.empty(nnz, np.int32), np.empty(nnz, np.float32)
        at = 0
        for doc, doc_freqs in enumerate(okapi.doc_freqs):
            n = len(doc_freqs)
            rows[at : at + n] = [term_ids[t] for t in doc_freqs]
            freqs[at : at + n] = list(doc_freqs.values())
            cols[at : at + n] = doc
            at += n
        idf = np.array([okapi.idf[t] for t in vocabulary.tolist()], dtype=np.float64)
        length_norm = params.k1 * (1 - params.b + params.b * np.asarray(okapi.doc_len, np.float64) / okapi.avgdl)
        data = idf[rows] * freqs * (params.k1 + 1) / (freqs + length_norm[cols])
        weights = sparse.csr_matrix((data.astype(np.float32), (rows, cols)), shape=(len(vocabulary), len(texts)))
        progress(stage, len(texts), len(texts))
        return cls(vocabulary, weights, params.epsilon)

    def scores(self, query: str, idf: dict[str, float] | None = None) -> np.ndarray:
        """BM25 score of every snippet for the query (a repeated query word counts again, as in rank-bm25); ``idf``
        gives each term's weight in place of this corpus's own (a collection's)."""
        terms = [t for t in tokenize(query) if t in self.term_ids]
        if not terms:
            return np.zeros(self.size, dtype=np.float32)
        ids = [self.term_ids[t] for t in terms]
        if idf is None:
            return np.asarray(self.weights[ids].sum(axis=0), dtype=np.float32).ravel()
        wanted, own = np.array([idf[t] for t in terms]), self.idf[ids]
        # a term with idf 0 here was stored with weight 0, so there is nothing to rescale
        scale = np.divide(wanted, own, out=np.zeros_like(wanted), where=own != 0)
        return np.asarray(self.weights[ids].T @ scale, dtype=np.float32).ravel()

    def save(self, folder: Path) -> None:
        w = self.weights
        np.savez(
            folder / self.FILE,
            vocabulary=self.vocabulary,
            data=w.data,
            indices=w.indices,
            indptr=w.indptr,
            shape=np.array(w.shape),
        )

    @classmethod
    def load(cls, folder: Path, epsilon: float = BM25Params.epsilon) -> BM25Index:
        with np.load(folder / cls.FILE) as f:
            weights = sparse.csr_matrix((f["data"], f["indices"], f["indptr"]), shape=tuple(f["shape"]))
            return cls(f["vocabulary"], weights, epsilon)


class Collection:
    """Several indexes scored as one: each term's idf from its document frequency over all of them."""

    def __init__(self, indexes: Sequence[BM25Index]):
        self.indexes = list(indexes)
        self.idf: dict[str, float] = {}
        if len(self.indexes) == 1:  # its own idf is the collection's
            return
        terms, where = np.unique(np.concatenate([ix.vocabulary for ix in self.indexes]), return_inverse=True)
        frequencies = np.bincount(where, weights=np.concatenate([ix.frequencies for ix in self.indexes]))
        idf = okapi_idf(sum(ix.size for ix in self.indexes), frequencies, self.indexes[0].epsilon)
        self.idf = dict(zip(terms.tolist(), idf.tolist(), strict=True))

    def scores(self, query: str) -> list[np.ndarray]:
        """Each index's BM25 scores for the query, on the collection's idf (one index: its own scores)."""
        if len(self.indexes) == 1:
            return [self.indexes[0].scores(query)]
        idf = {t: self.idf[t] for t in tokenize(query) if t in self.idf}
        return [ix.scores(query, idf) for ix in self.indexes]
