"""A collection in Qdrant's own engine, run in this process (``qdrant-edge-py``): one shard in a folder.

It is the engine a Qdrant server runs (segments, HNSW, the sparse inverted index, payload indexes), without the
server: the tests and the benchmarks measure it where no server can run. Points are searchable as soon as they are
written; ``finish`` builds the indexes (a server's optimizer does that by itself, in the background).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from core.engine.retrieval.qdrant.layout import CORPUS, DENSE, SPARSE
from core.engine.retrieval.qdrant.store import (
    DEFAULT_OPTIONS,
    CollectionOptions,
    Found,
    Point,
    Query,
    Record,
    Store,
    record_from,
)


class EdgeStore(Store):
    def __init__(self, folder: Path, options: CollectionOptions = DEFAULT_OPTIONS, search_threads: int = 1):
        self.folder = Path(folder)
        self.options = options
        self.search_threads = search_threads  # one, as the in-process index searches, leaving cores to the LLM
        self.label = f"Qdrant Edge in {self.folder}"
        self.shard = None
        if self.folder.is_dir() and any(self.folder.iterdir()):
            import qdrant_edge as qe

            self.shard = qe.EdgeShard.load(str(self.folder))  # with the settings it was created with

    def ensure(self, dim: int) -> None:
        import qdrant_edge as qe

        if self.shard is not None:
            return
        o = self.options
        quantization = {
            "none": None,
            "int8": qe.ScalarQuantizationConfig(type=qe.ScalarType.Int8, memory=qe.Memory.Pinned),
            "binary": qe.BinaryQuantizationConfig(memory=qe.Memory.Pinned),
        }[o.quantization]
        memory = qe.Memory.Cold if o.on_disk else qe.Memory.Cached
        config = qe.EdgeConfig(
            vectors={DENSE: qe.EdgeVectorParams(size=dim, distance=qe.Distance.Dot, memory=memory)},
            sparse_vectors={SPARSE: qe.EdgeSparseVectorParams()},
            # a segment under 10,000 kB of vectors is searched exhaustively (Qdrant's default threshold)
            hnsw_config=qe.HnswIndexConfig(m=o.hnsw_m, ef_construct=o.hnsw_ef_construct, full_scan_threshold=10_000),
            quantization_config=quantization,
            max_search_threads=self.search_threads,
        )
        self.folder.mkdir(parents=True, exist_ok=True)
        self.shard = qe.EdgeShard.create(str(self.folder), config)
        self.shard.update(qe.UpdateOperation.create_field_index(CORPUS, qe.PayloadSchemaType.Keyword))

    def upsert(self, points: list[Point]) -> None:
        import qdrant_edge as qe

        structs = []
        for p in points:
            vectors: dict = {}
            if p.dense is not None:
                vectors[DENSE] = p.dense.tolist()
            if p.sparse is not None and p.sparse[0]:
                vectors[SPARSE] = qe.SparseVector(p.sparse[0], p.sparse[1])
            structs.append(qe.Point(p.id, vectors, p.payload))
        self.shard.update(qe.UpdateOperation.upsert_points(structs))

    def set_payload(self, point_id: str, payload: dict) -> None:
        import qdrant_edge as qe

        self.shard.update(qe.UpdateOperation.set_payload([point_id], payload))

    def query(self, queries: list[Query], fields: list[str]) -> list[list[Found]]:
        import qdrant_edge as qe

        params = qe.SearchParams(hnsw_ef=self.options.hnsw_ef)
        requests = []
        for q in queries:
            vector = qe.SparseVector(*q.vector) if isinstance(q.vector, tuple) else q.vector.tolist()
            must_not = [qe.HasIdCondition(set(q.exclude))] if q.exclude else None
            where = qe.Filter(must=[qe.FieldCondition(CORPUS, match=qe.MatchAny(list(q.corpora)))], must_not=must_not)
            requests.append(
                qe.QueryRequest(
                    limit=q.limit,
                    query=qe.Query.Nearest(vector, using=q.using),
                    filter=where,
                    with_payload=fields,
                    params=params,
                )
            )
        answers = self.shard.query_batch(qe.QueryBatchRequest(requests))
        return [[Found(str(p.id), p.score, p.payload or {}) for p in answer] for answer in answers]

    def retrieve(self, ids: list[str], vectors: bool = False) -> list[Record]:
        if not ids or self.shard is None:
            return []
        records = self.shard.retrieve(ids, with_payload=True, with_vector=vectors)
        return [record_from(str(r.id), r.payload, r.vector if vectors else None) for r in records]

    def scroll(self, match: dict[str, str]) -> Iterator[Record]:
        import qdrant_edge as qe

        if self.shard is None:
            return
        where = qe.Filter(must=[qe.FieldCondition(k, match=qe.MatchValue(v)) for k, v in match.items()])
        offset = None
        while True:
            records, offset = self.shard.scroll(
                qe.ScrollRequest(offset=offset, limit=256, filter=where, with_payload=True, with_vector=False)
            )
            yield from (Record(str(r.id), r.payload or {}) for r in records)
            if offset is None:
                return

    def delete(self, match: dict[str, str]) -> None:
        import qdrant_edge as qe

        if self.shard is not None:
            where = qe.Filter(must=[qe.FieldCondition(k, match=qe.MatchValue(v)) for k, v in match.items()])
            self.shard.update(qe.UpdateOperation.delete_points_by_filter(where))

    def finish(self) -> None:
        self.shard.flush()
        self.shard.optimize()

    def close(self) -> None:
        if self.shard is not None:
            self.shard.close()
            self.shard = None
