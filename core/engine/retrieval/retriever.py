"""What methods need from retrieval: the ``Retriever`` protocol, implemented by ``core.engine.retrieval.hybrid.HybridRetriever``
and named by the method contract (``core.engine.methods.contract.RunContext``), so retrieval never imports the methods."""

from __future__ import annotations

from typing import Protocol

from core.engine.trace import Hit


class Retriever(Protocol):
    """A search over the configured corpora, and a similarity on the scale its balanced search re-scores with."""

    corpora: list[str]

    def search(
        self,
        query: str,
        k: int,
        *,
        corpora: list[str] | None = None,
        balanced: bool = False,
        exclude: frozenset[str] = frozenset(),
        pin: frozenset[str] = frozenset(),
        per_corpus: int | None = None,
    ) -> list[Hit]: ...

    def similarity(self, query: str, texts: list[str]) -> list[float]:
        """How well each text matches the query, on the scale a balanced search re-scores its pool with."""
        ...
