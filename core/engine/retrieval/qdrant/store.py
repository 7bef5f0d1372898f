"""The few operations the Qdrant backend and its ingest need from a collection, on either way of reaching Qdrant.

``ClientStore`` is ``qdrant-client``: a server or cluster (``http(s)://``) and the client's local mode (a folder),
the same code. ``core.engine.retrieval.qdrant.edge.EdgeStore`` is Qdrant's engine in this process (``qdrant-edge-py``).
"""

from __future__ import annotations

import contextlib
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from core.engine.retrieval.corpus import CorpusError
from core.engine.retrieval.qdrant.layout import COLLECTION, CORPUS, DENSE, SPARSE
from core.engine.retrieval.qdrant.sparse import SparseVector

REACH_SECONDS = 5.0  # a Qdrant server on a working network answers its root in milliseconds


class SearchUnavailable(CorpusError):
    """The Qdrant collection cannot be reached or used (the message names where it was looked for)."""


@dataclass(frozen=True)
class CollectionOptions:
    """How the collection is made. A cluster honours all of them; Edge the vector and index ones; the client's local
    mode (a brute-force store for small corpora) none."""

    shards: int = 1
    replicas: int = 1
    on_disk: bool = False  # original vectors memory-mapped from disk instead of held in RAM
    quantization: Literal["none", "int8", "binary"] = "none"  # a compressed copy in RAM for the graph search
    hnsw_m: int = 16
    hnsw_ef_construct: int = 100
    hnsw_ef: int = 128  # search-time candidates, as the in-process HNSW's efSearch


DEFAULT_OPTIONS = CollectionOptions()


@dataclass(frozen=True)
class Point:
    id: str
    payload: dict
    dense: np.ndarray | None = None
    sparse: SparseVector | None = None


@dataclass(frozen=True)
class Query:
    using: str  # DENSE or SPARSE
    vector: np.ndarray | SparseVector
    corpora: list[str]
    limit: int
    exclude: list[str] = field(default_factory=list)  # point ids


@dataclass(frozen=True)
class Found:
    id: str
    score: float
    payload: dict


@dataclass(frozen=True)
class Record:
    id: str
    payload: dict
    dense: np.ndarray | None = None
    sparse: dict[int, float] | None = None


class Store(ABC):
    label: str
    options: CollectionOptions = DEFAULT_OPTIONS

    @abstractmethod
    def ensure(self, dim: int) -> None:
        """Create the collection (named dense and sparse vectors, a corpus index) unless it exists."""

    @abstractmethod
    def upsert(self, points: list[Point]) -> None: ...

    @abstractmethod
    def set_payload(self, point_id: str, payload: dict) -> None:
        """Set these fields of one point, keeping its others."""

    @abstractmethod
    def query(self, queries: list[Query], fields: list[str]) -> list[list[Found]]:
        """Each query's best points, best first, in one batch; ``fields`` of their payloads."""

    @abstractmethod
    def retrieve(self, ids: list[str], vectors: bool = False) -> list[Record]:
        """The points of these ids that exist, with their payloads (and vectors)."""

    @abstractmethod
    def scroll(self, match: dict[str, str]) -> Iterator[Record]:
        """Every point whose payload has these values (payload only)."""

    @abstractmethod
    def delete(self, match: dict[str, str]) -> None:
        """Every point whose payload has these values."""

    def finish(self) -> None:
        """After an ingest: whatever makes the new points searchable at full speed (a server does it by itself)."""

    def close(self) -> None:
        """Release the collection (a folder opened in local mode or Edge is locked while open)."""


class ClientStore(Store):
    """A collection through ``qdrant-client``: ``location`` is a server's URL or a folder for the local mode."""

    def __init__(
        self,
        location: str,
        api_key: str | None = None,
        options: CollectionOptions = DEFAULT_OPTIONS,
        collection: str = COLLECTION,
    ):
        from qdrant_client import QdrantClient

        self.remote = remote = location.startswith(("http://", "https://"))
        self.label = f"Qdrant at {location}" if remote else f"Qdrant local mode in {location}"
        if remote:
            self._reach(location, api_key)
        try:
            self.client = (
                QdrantClient(url=location, api_key=api_key, timeout=60) if remote else QdrantClient(path=location)
            )
        except RuntimeError as exc:  # the local mode's folder is open in another process
            raise SearchUnavailable(f"{self.label}: {exc}") from None
        self.collection = collection
        self.options = options
        # The local mode is plain Python objects; one call at a time. A server takes concurrent calls.
        self._lock = contextlib.nullcontext() if remote else threading.Lock()
        self._exists = False

    def _reach(self, location: str, api_key: str | None) -> None:
        """One request with a short timeout before the client is made: a server that does not answer is said at
        once, where the client would wait out its call timeout, and its version check (a thread of its own) would
        print a library warning first."""
        import httpx

        try:
            httpx.get(location, headers={"api-key": api_key} if api_key else None, timeout=REACH_SECONDS)
        except httpx.HTTPError as exc:  # any answer at all, even a refusal, means the server is there
            raise SearchUnavailable(
                f"{self.label}: no answer within {REACH_SECONDS:g} s ({exc or type(exc).__name__})"
            ) from None

    @contextlib.contextmanager
    def _calling(self) -> Iterator[None]:
        """One call at a time in the local mode; a server that cannot be reached or refuses is said by name."""
        from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

        with self._lock:
            try:
                yield
            except (ResponseHandlingException, UnexpectedResponse) as exc:
                raise SearchUnavailable(f"{self.label}: {exc}") from None

    def exists(self) -> bool:
        if not self._exists:
            with self._calling():
                self._exists = self.client.collection_exists(self.collection)
        return self._exists

    def ensure(self, dim: int) -> None:
        from qdrant_client import models as m

        if self.exists():
            return
        with self._calling():
            o = self.options
            quantization = {
                "none": None,
                "int8": m.ScalarQuantization(
                    scalar=m.ScalarQuantizationConfig(type=m.ScalarType.INT8, always_ram=True)
                ),
                "binary": m.BinaryQuantization(binary=m.BinaryQuantizationConfig(always_ram=True)),
            }[o.quantization]
            self.client.create_collection(
                self.collection,
                vectors_config={DENSE: m.VectorParams(size=dim, distance=m.Distance.DOT, on_disk=o.on_disk)},
                sparse_vectors_config={SPARSE: m.SparseVectorParams(index=m.SparseIndexParams(on_disk=o.on_disk))},
                shard_number=o.shards,
                replication_factor=o.replicas,
                hnsw_config=m.HnswConfigDiff(m=o.hnsw_m, ef_construct=o.hnsw_ef_construct),
                quantization_config=quantization,
            )
            if self.remote:  # the local mode has no payload indexes (it scans)
                self.client.create_payload_index(
                    self.collection, CORPUS, m.KeywordIndexParams(type=m.KeywordIndexType.KEYWORD, is_tenant=True)
                )
            self._exists = True

    def upsert(self, points: list[Point]) -> None:
        from qdrant_client import models as m

        structs = [m.PointStruct(id=p.id, payload=p.payload, vector=_client_vectors(p)) for p in points]
        with self._calling():
            self.client.upsert(self.collection, structs, wait=True)

    def set_payload(self, point_id: str, payload: dict) -> None:
        with self._calling():
            self.client.set_payload(self.collection, payload, points=[point_id], wait=True)

    def query(self, queries: list[Query], fields: list[str]) -> list[list[Found]]:
        from qdrant_client import models as m

        requests = [
            m.QueryRequest(
                query=_client_query(q.vector),
                using=q.using,
                filter=_client_filter(q),
                limit=q.limit,
                with_payload=fields,
                params=m.SearchParams(hnsw_ef=self.options.hnsw_ef),
            )
            for q in queries
        ]
        with self._calling():
            answers = self.client.query_batch_points(self.collection, requests)
        return [[Found(str(p.id), p.score, p.payload or {}) for p in a.points] for a in answers]

    def retrieve(self, ids: list[str], vectors: bool = False) -> list[Record]:
        if not ids or not self.exists():
            return []
        with self._calling():
            records = self.client.retrieve(self.collection, ids, with_payload=True, with_vectors=vectors)
        return [record_from(str(r.id), r.payload, r.vector if vectors else None) for r in records]

    def scroll(self, match: dict[str, str]) -> Iterator[Record]:
        if not self.exists():
            return
        offset = None
        while True:
            with self._calling():
                records, offset = self.client.scroll(
                    self.collection,
                    scroll_filter=_match_filter(match),
                    limit=256,
                    offset=offset,
                    with_payload=True,
                    with_vectors=False,
                )
            yield from (Record(str(r.id), r.payload or {}) for r in records)
            if offset is None:
                return

    def delete(self, match: dict[str, str]) -> None:
        from qdrant_client import models as m

        if not self.exists():
            return
        with self._calling():
            self.client.delete(self.collection, m.FilterSelector(filter=_match_filter(match)), wait=True)

    def close(self) -> None:
        self.client.close()


def _client_vectors(p: Point) -> dict:
    from qdrant_client import models as m

    vectors: dict = {}
    if p.dense is not None:
        vectors[DENSE] = p.dense.tolist()
    if p.sparse is not None and p.sparse[0]:  # a snippet with no indexed word has no sparse vector
        vectors[SPARSE] = m.SparseVector(indices=p.sparse[0], values=p.sparse[1])
    return vectors


def _client_query(vector):
    from qdrant_client import models as m

    if isinstance(vector, tuple):
        return m.SparseVector(indices=vector[0], values=vector[1])
    return vector.tolist()


def _client_filter(q: Query):
    from qdrant_client import models as m

    must_not = [m.HasIdCondition(has_id=q.exclude)] if q.exclude else None
    return m.Filter(must=[m.FieldCondition(key=CORPUS, match=m.MatchAny(any=q.corpora))], must_not=must_not)


def _match_filter(match: dict[str, str]):
    from qdrant_client import models as m

    return m.Filter(must=[m.FieldCondition(key=k, match=m.MatchValue(value=v)) for k, v in match.items()])


def record_from(point_id: str, payload: dict | None, vectors) -> Record:
    """A record with its dense vector as an array and its sparse one as {dimension: weight} (either may be absent)."""
    if not vectors:
        return Record(point_id, payload or {})
    dense = vectors.get(DENSE)
    sparse = vectors.get(SPARSE)
    return Record(
        point_id,
        payload or {},
        None if dense is None else np.asarray(dense, dtype=np.float32),
        None if sparse is None else dict(zip(sparse.indices, sparse.values, strict=True)),
    )
