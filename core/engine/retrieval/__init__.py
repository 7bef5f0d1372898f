"""Retrieval: MedRAG-format corpora, hybrid BM25 + dense search with indexes saved on disk.

``open_retriever(paths)`` gives a ``HybridRetriever`` (the methods' ``Retriever``) over today's in-process index or a
Qdrant collection, as ``MEDRAG_SEARCH_URL`` says (``core.engine.retrieval.location``);
``describe_corpora(paths)`` lists corpora with sizes and index status; the default corpus (HPO
definitions and the teaching pack) comes from ``default_corpus.ensure_default_corpus()``.
"""

from core.engine.retrieval.catalog import CorpusInfo, describe_corpora, open_retriever
from core.engine.retrieval.corpus import CorpusError, LoadReport
from core.engine.retrieval.hybrid import MODES, HybridRetriever, Reranker

__all__ = [
    "MODES",
    "CorpusError",
    "CorpusInfo",
    "HybridRetriever",
    "LoadReport",
    "Reranker",
    "describe_corpora",
    "open_retriever",
]
