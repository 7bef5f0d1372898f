"""The real corpora's snippet vectors embedded on a GPU (``benchmarks/gpu_embed_bench.py``), for benchmarks that
build today's index and Qdrant from the same vectors without embedding 55k snippets on two CPU cores.

They live in ``.cache/bench-qdrant/`` (``vectors_*.npy`` in float16 and ``ids.npy``, "corpus<TAB>row<TAB>id" per
row, as the GPU run wrote them). ``Precomputed`` stands in for the embedder when an index is built: it hands out
the stored vector of each snippet text, and embeds queries (and any text it does not hold) with the real embedder.
"""

from __future__ import annotations

import numpy as np

from core.engine.paths import home
from core.engine.retrieval.chunking import Chunker, may_collide
from core.engine.retrieval.corpus import CorpusSource, LoadReport, Snippet, iter_corpus
from core.engine.retrieval.dense import Embedder, default_embedder

FOLDER = home() / "bench-qdrant"


def chunks(source: CorpusSource) -> list[Snippet]:
    """A corpus's snippets as both backends index them (long passages chunked), in row order."""
    taken = {s.id for s in iter_corpus(source, LoadReport()) if may_collide(s.id)}
    chunker = Chunker(taken=taken)
    return [c for s in iter_corpus(source, LoadReport()) for c in chunker.split(s)]


def gpu_vectors() -> dict[tuple[str, int], np.ndarray]:
    """(corpus, row) -> float32 unit vector, for every snippet the GPU run embedded."""
    ids = np.load(FOLDER / "ids.npy")
    vectors = np.concatenate([np.load(FOLDER / f"vectors_{i}.npy") for i in range(3)]).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)  # float16 storage rounds the unit length
    keys = [(corpus, int(row)) for corpus, row, _ in (line.split("\t", 2) for line in ids.tolist())]
    return dict(zip(keys, vectors, strict=True))


class Precomputed(Embedder):
    """The embedder, except that snippet texts it was given vectors for are not encoded again."""

    def __init__(self, table: dict[str, np.ndarray], real: Embedder | None = None):
        self.real = real or default_embedder()
        super().__init__(device="cpu", bf16=False)
        self.table = table
        self.name = f"{Embedder.name}, snippets embedded on a GPU in float16"
        self._queries: dict[str, np.ndarray] = {}

    @property
    def precision(self) -> str:
        return "float16 (GPU)"

    def encode(self, texts, progress=None, stage="embed", batch=256) -> np.ndarray:
        missing = [t for t in texts if t not in self.table]
        if missing:
            self.table.update(zip(missing, self.real.encode(missing), strict=True))
        return np.stack([self.table[t] for t in texts]) if texts else np.empty((0, self.dim), np.float32)

    def encode_query(self, text: str) -> np.ndarray:
        """The real embedder's vector (float32 on the CPU, as at query time), kept: a benchmark asks again."""
        if text not in self._queries:
            self._queries[text] = self.real.encode_query(text)
        return self._queries[text]


def table_for(sources: list[CorpusSource]) -> dict[str, np.ndarray]:
    """Snippet text -> its GPU vector, for the given corpora (checked row by row against the GPU run's ids)."""
    by_key, ids = gpu_vectors(), np.load(FOLDER / "ids.npy").tolist()
    expected = {(c, int(r)): i for c, r, i in (line.split("\t", 2) for line in ids)}
    table = {}
    for source in sources:
        for row, snippet in enumerate(chunks(source)):
            if expected.get((source.name, row)) != snippet.id:
                raise RuntimeError(f"{source.name} row {row}: the GPU vectors were made for other snippets")
            table[snippet.contents] = by_key[source.name, row]
    return table
