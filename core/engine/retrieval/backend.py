"""The seam under the retriever: where the snippets of the searched corpora are ranked and fetched.

``HybridRetriever`` does what methods see: fusion by reciprocal rank, source-balanced search, ``exclude`` and
``pin``, and the ``Hit``. A search backend does what depends on where the corpora live: each retriever's ranking of
some corpora, and the snippets those rankings name with every retriever's score. Today's in-process index
(``core.engine.retrieval.in_process``) is one backend; Qdrant (``core.engine.retrieval.qdrant``) is another.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from core.engine.retrieval.corpus import Snippet

if TYPE_CHECKING:
    from core.engine.retrieval.corpus_index import CorpusIndex

Key = tuple[str, Hashable]  # (corpus name, the backend's handle of one snippet in it)


@dataclass(frozen=True)
class Request:
    """One query as a backend begins it."""

    text: str
    vector: np.ndarray | None  # the dense query, when a retriever needs it
    retrievers: tuple[str, ...]  # "bm25", "dense", or both
    scopes: list[list[str]]  # BM25 scores each scope's corpora with one idf over that scope
    exclude: frozenset[str]  # snippet ids that no ranking returns


class Search(ABC):
    """One query's work in a backend (its text, vector, idf scopes and excluded ids are fixed when it starts)."""

    @abstractmethod
    def top(self, retriever: str, names: list[str], n: int) -> list[tuple[Key, float]]:
        """The n best snippets of the corpora ``names`` under one retriever ("bm25" or "dense"), ranked as one list,
        best first. BM25 ranks only snippets that share a word with the query."""

    @abstractmethod
    def found(self, keys: list[Key]) -> dict[Key, tuple[Snippet, dict[str, float]]]:
        """Each key's snippet and its score under every retriever of the query (BM25 on its scope's idf; dense when
        the query has a vector)."""

    @abstractmethod
    def keys_of(self, ids: list[str]) -> list[Key]:
        """Where snippet ids are in the searched corpora (an id in several corpora is listed once per corpus)."""


class SearchBackend(ABC):
    """Where corpora are searched. ``label`` says where, for the screens and the command line."""

    corpora: list[str]
    label: str

    @property
    def indexes(self) -> dict[str, CorpusIndex]:
        """Corpus indexes held in this process (the in-process backend's); an engine elsewhere holds none here."""
        return {}

    @abstractmethod
    def start(self, request: Request) -> Search:
        """Begin one query over the corpora of its scopes."""
