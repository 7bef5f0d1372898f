"""BM25 scoring: statistics from rank-bm25's ``BM25Okapi``, kept as a sparse term-by-snippet weight matrix.

``BM25Okapi`` holds one Python dict per snippet and scores a query with a Python loop over every
snippet (about 0.2 s for three terms over 300k snippets), and a pickle of it is as slow to load.
So the index is built with ``BM25Okapi`` once and its per-(term, snippet) contributions are stored
as a CSR matrix in an ``.npz`` file: loading is one read, and a query is the sum of a few rows.
Scores are identical to ``BM25Okapi.get_scores`` (a test checks that).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
from rank_bm25 import BM25Okapi
from scipy import sparse

from core.retrieval.progress import Progress, no_progress

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


class BM25Index:
    FILE = "bm25.npz"

    def __init__(self, vocabulary: np.ndarray, weights: sparse.csr_matrix):
        _stop_words()  # paid when the index opens, not by the first query
        self.weights = weights  # terms x snippets
        self.term_ids = {term: i for i, term in enumerate(vocabulary.tolist())}
        self.vocabulary = vocabulary

    @property
    def size(self) -> int:
        return self.weights.shape[1]

    @classmethod
    def build(cls, texts: list[str], params: BM25Params = BM25Params(), progress: Progress = no_progress,
              stage: str = "bm25") -> BM25Index:
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
            rows[at:at + n] = [term_ids[t] for t in doc_freqs]
            freqs[at:at + n] = list(doc_freqs.values())
            cols[at:at + n] = doc
            at += n
        idf = np.array([okapi.idf[t] for t in vocabulary.tolist()], dtype=np.float64)
        length_norm = params.k1 * (1 - params.b + params.b * np.asarray(okapi.doc_len, np.float64) / okapi.avgdl)
        data = idf[rows] * freqs * (params.k1 + 1) / (freqs + length_norm[cols])
        weights = sparse.csr_matrix((data.astype(np.float32), (rows, cols)), shape=(len(vocabulary), len(texts)))
        progress(stage, len(texts), len(texts))
        return cls(vocabulary, weights)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every snippet for the query (a repeated query word counts again, as in rank-bm25)."""
        ids = [self.term_ids[t] for t in tokenize(query) if t in self.term_ids]
        if not ids:
            return np.zeros(self.size, dtype=np.float32)
        return np.asarray(self.weights[ids].sum(axis=0), dtype=np.float32).ravel()

    def save(self, folder: Path) -> None:
        w = self.weights
        np.savez(folder / self.FILE, vocabulary=self.vocabulary, data=w.data, indices=w.indices, indptr=w.indptr,
                 shape=np.array(w.shape))

    @classmethod
    def load(cls, folder: Path) -> BM25Index:
        with np.load(folder / cls.FILE) as f:
            weights = sparse.csr_matrix((f["data"], f["indices"], f["indptr"]), shape=tuple(f["shape"]))
            return cls(f["vocabulary"], weights)
