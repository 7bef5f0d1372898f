"""Streamed, resumable ingest of a MedRAG-format corpus into a Qdrant collection.

Two passes over the files, neither holding the corpus in memory (only its ids, as the reader does). The first reads
every line, chunks long passages and counts words: the BM25 statistics (document frequencies, average length) that
the second needs before it can write a single sparse vector. The second reads again and writes the snippets in
batches, each with its dense vector (from the embedder, or from today's index of the same corpus) and its BM25 vector;
after each batch the corpus's record says how many snippets are in, so an ingest that stops (a crash, Ctrl-C, a
machine taken back) starts again from there. A line that cannot be used is named by file and line and skipped
alone, as the in-process index does; the same corpus, model and parameters give the same snippets, ids and rows.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections import Counter
from dataclasses import dataclass
from typing import Literal

import numpy as np

from core.engine.retrieval.bm25 import TOKENIZER, tokenize
from core.engine.retrieval.chunking import Chunker, may_collide
from core.engine.retrieval.corpus import CorpusError, CorpusSource, LoadReport, Snippet, iter_corpus
from core.engine.retrieval.corpus_index import CorpusIndex, IndexParams, fingerprint
from core.engine.retrieval.dense import Embedder
from core.engine.retrieval.progress import Progress, no_progress
from core.engine.retrieval.qdrant.layout import CORPUS, STATS_OF, point_id, record_id
from core.engine.retrieval.qdrant.sparse import bucket_count, document_vector, in_buckets, mean_idf
from core.engine.retrieval.qdrant.stats import CorpusRecord, frequency_points, read_record
from core.engine.retrieval.qdrant.store import Point, Store

_KEPT_PROBLEMS = 200  # skipped lines listed in the record, as in the in-process manifest; the count is always exact
_STATS_BATCH = 256
DEFAULT_PARAMS = IndexParams()


class VectorSource(ABC):
    """Where the snippets' dense vectors come from; ``model`` goes into the corpus's fingerprint."""

    model: str
    precision: str
    dim: int
    source: str  # said on the command line

    @abstractmethod
    def vectors(self, first_row: int, snippets: list[Snippet]) -> np.ndarray: ...


class Embedded(VectorSource):
    """The embedder, a batch at a time (on the GPU when the embedder was made for one)."""

    source = "the embedder"

    def __init__(self, embedder: Embedder):
        self.embedder = embedder
        self.model, self.precision, self.dim = embedder.name, embedder.precision, embedder.dim

    def vectors(self, first_row: int, snippets: list[Snippet]) -> np.ndarray:
        return self.embedder.encode([s.contents for s in snippets], batch=len(snippets))


class FromIndex(VectorSource):
    """The vectors of today's index of the same corpus, row by row: a corpus moves to Qdrant without being embedded
    again. The index must have been built from the same files, model and chunking (its fingerprint says so), and each
    batch's ids are checked against its rows."""

    source = "the in-process index"

    def __init__(self, index: CorpusIndex):
        self.index = index
        self.model, self.precision = index.manifest["model"], index.manifest.get("embed_precision", "float32")
        self.dim = index.dense.d

    def vectors(self, first_row: int, snippets: list[Snippet]) -> np.ndarray:
        rows = list(range(first_row, first_row + len(snippets)))
        stored = self.index.snippets(rows)
        if wrong := [s.id for row, s in zip(rows, snippets, strict=True) if stored[row].id != s.id][:3]:
            raise CorpusError(
                f"{self.index.folder}: the index's rows do not hold snippets {', '.join(wrong)}; "
                f"rebuild it, or ingest with the embedder"
            )
        return self.index.dense.reconstruct_n(first_row, len(snippets))


@dataclass(frozen=True)
class Ingested:
    record: CorpusRecord
    how: Literal["up to date", "ingested", "resumed"]
    seconds: float


def ingest(
    store: Store,
    source: CorpusSource,
    vectors: VectorSource,
    *,
    params: IndexParams = DEFAULT_PARAMS,
    batch: int = 256,
    strict: bool = False,
    rebuild: bool = False,
    progress: Progress = no_progress,
) -> Ingested:
    """Bring the corpus's snippets into the store's collection: nothing when they are there already, the rest when an
    earlier ingest stopped partway, everything (the old snippets dropped first) when the corpus changed."""
    started = time.perf_counter()
    wanted = fingerprint(source, vectors.model, params)
    store.ensure(vectors.dim)
    record = read_record(store, source.name)
    if record is not None and record.fingerprint == wanted and record.state == "ready" and not rebuild:
        return Ingested(record, "up to date", 0.0)
    resumed = record is not None and record.fingerprint == wanted and not rebuild
    if not resumed:
        store.delete({CORPUS: source.name})
        store.delete({STATS_OF: source.name})
        record = _count(store, source, vectors, wanted, params, strict, progress)
    record = _write(store, source, record, vectors, params, batch, strict, progress, started)
    return Ingested(record, "resumed" if resumed else "ingested", round(time.perf_counter() - started, 1))


def _chunks(source: CorpusSource, chunker: Chunker, report: LoadReport, strict: bool, progress: Progress):
    for snippet in iter_corpus(source, report, strict=strict, progress=progress):
        yield snippet, chunker.split(snippet)


def _count(
    store: Store,
    source: CorpusSource,
    vectors: VectorSource,
    fp: str,
    params: IndexParams,
    strict: bool,
    progress: Progress,
) -> CorpusRecord:
    """The first pass: BM25 statistics, the lines skipped, and the ids that chunks must not take."""
    report, chunker = LoadReport(), Chunker(params.chunks)
    frequencies: Counter[str] = Counter()
    snippets = tokens = 0
    taken = []
    for snippet, chunks in _chunks(source, chunker, report, strict, progress):
        if may_collide(snippet.id):
            taken.append(snippet.id)
        for chunk in chunks:
            words = tokenize(chunk.contents)
            frequencies.update(set(words))
            tokens += len(words)
            snippets += 1
    if not snippets:
        raise CorpusError(f"{source.path}: no usable snippets" + (f" ({report.summary()})" if report.skipped else ""))
    buckets = bucket_count(len(frequencies))
    stats = frequency_points(source.name, in_buckets(frequencies, buckets))
    for start in range(0, len(stats), _STATS_BATCH):
        store.upsert(stats[start : start + _STATS_BATCH])
    record = CorpusRecord(
        corpus=source.name,
        path=str(source.path),
        files=[str(f) for f in source.files],
        fingerprint=fp,
        model=vectors.model,
        embed_precision=vectors.precision,
        tokenizer=TOKENIZER,
        bm25=params.bm25,
        state="counted",
        snippets=snippets,
        tokens=tokens,
        buckets=buckets,
        mean_idf=mean_idf(snippets, frequencies.values()),
        taken=taken,
        split_passages=chunker.split_passages,
        skipped_count=len(report.skipped),
        skipped=[(p.file, p.line, p.reason) for p in report.skipped[:_KEPT_PROBLEMS]],
        renamed_count=len(report.renamed),
        renamed=[(p.file, p.line, p.reason) for p in report.renamed[:_KEPT_PROBLEMS]],
        meta=source.meta,
    )
    store.upsert([record.point()])
    return record


def _write(
    store: Store,
    source: CorpusSource,
    record: CorpusRecord,
    vectors: VectorSource,
    params: IndexParams,
    batch: int,
    strict: bool,
    progress: Progress,
    started: float,
) -> CorpusRecord:
    """The second pass: every snippet from ``record.done`` on, a batch at a time, the record updated after each."""
    stage = f"ingest {source.name}"
    earlier = record.ingest_seconds or 0.0
    done = record.done
    progress(stage, done, record.snippets)

    def flush(rows: list[tuple[int, Snippet]]) -> None:
        nonlocal done
        dense = vectors.vectors(rows[0][0], [s for _, s in rows])
        store.upsert(
            [
                Point(
                    point_id(source.name, s.id),
                    {CORPUS: source.name, "id": s.id, "title": s.title, "text": s.text, "row": row},
                    dense=dense[i],
                    sparse=document_vector(tokenize(s.contents), record.average_length, params.bm25),
                )
                for i, (row, s) in enumerate(rows)
            ]
        )
        done = rows[-1][0] + 1
        store.set_payload(
            record_id(source.name),
            {"state": "ingesting", "done": done, "ingest_seconds": round(earlier + time.perf_counter() - started, 1)},
        )
        progress(stage, done, record.snippets)

    pending: list[tuple[int, Snippet]] = []
    row = 0
    for _, chunks in _chunks(source, Chunker(params.chunks, set(record.taken)), LoadReport(), strict, no_progress):
        for chunk in chunks:
            if row >= done:
                pending.append((row, chunk))
            row += 1
            if len(pending) == batch:
                flush(pending)
                pending = []
    if pending:
        flush(pending)
    if row != record.snippets:
        raise CorpusError(
            f"{source.path}: the files changed during the ingest ({row} snippets now, "
            f"{record.snippets} counted); ingest again"
        )
    progress(f"index {source.name}", 0, 1)
    store.finish()
    progress(f"index {source.name}", 1, 1)
    final = {
        "state": "ready",
        "done": done,
        "ingest_seconds": round(earlier + time.perf_counter() - started, 1),
        "built_at": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    store.set_payload(record_id(source.name), final)
    return record.model_copy(update=final)
