"""Where retrieval runs, chosen by one setting, ``MEDRAG_SEARCH_URL``:

- empty (the default): today's in-process index, each corpus's BM25 + FAISS files on this machine;
- a folder: Qdrant through its client's local mode in that folder (one process at a time; test-sized corpora);
- ``http://`` or ``https://``: a Qdrant server or cluster, through the same client code. A server that asks for an
  API key gets ``MEDRAG_SEARCH_API_KEY``, which is never shown or written anywhere.

Either way the methods get the same ``HybridRetriever``; opening corpora builds (or ingests) what is missing.
"""

from __future__ import annotations

import atexit
import threading
from dataclasses import dataclass
from pathlib import Path

from core.engine.retrieval.corpus import CorpusError, CorpusSource, LineProblem, count_lines
from core.engine.retrieval.corpus_index import (
    CorpusIndex,
    IndexParams,
    fingerprint,
    folder_bytes,
    index_folder,
    read_manifest,
)
from core.engine.retrieval.dense import Embedder
from core.engine.retrieval.hybrid import HybridRetriever
from core.engine.retrieval.info import CorpusInfo
from core.engine.retrieval.progress import Progress
from core.engine.settings import settings, variable

SEARCH_URL = variable("search_url")


def search_location() -> InProcess | Qdrant:
    value = settings().search_url
    return Qdrant(qdrant_place(value)) if value else InProcess()


def qdrant_place(value: str) -> str:
    """A checked ``MEDRAG_SEARCH_URL`` or ``--url``: a server's URL as given, a folder made absolute."""
    return value if value.startswith(("http://", "https://")) else str(Path(value).expanduser().resolve())


def search_api_key() -> str | None:
    """The search server's key, for the client that sends it (never shown or written)."""
    return settings().secret("MEDRAG_SEARCH_API_KEY") or None


@dataclass(frozen=True)
class Build:
    """How a location opens corpora: what it builds (or ingests) when an index is missing or out of date."""

    progress: Progress
    strict: bool  # stop at the first unusable line instead of skipping it
    rebuild: bool  # build again even when an up-to-date index is there
    cache_dir: Path | None  # where in-process indexes live (None: the studio's index folder)
    params: IndexParams


@dataclass(frozen=True)
class InProcess:
    label = "in-process index (BM25 + FAISS on this machine)"

    def check(self) -> None:
        """Nothing to reach: the indexes are files here."""

    def open(self, sources: list[CorpusSource], embedder: Embedder, build: Build) -> HybridRetriever:
        indexes = [
            CorpusIndex.open(
                s,
                embedder,
                cache_dir=build.cache_dir,
                params=build.params,
                strict=build.strict,
                progress=build.progress,
                rebuild=build.rebuild,
            )
            for s in sources
        ]
        return HybridRetriever(indexes, embedder)

    def describe(
        self, source: CorpusSource, cache_dir: Path | None, embedder_name: str, params: IndexParams
    ) -> CorpusInfo:
        folder = index_folder(source, cache_dir)
        manifest = read_manifest(folder) or {}
        built = manifest.get("fingerprint") == fingerprint(source, embedder_name, params)
        return CorpusInfo.of(
            source,
            manifest if built else None,
            stale=bool(manifest) and not built,
            snippets=manifest["snippets"] if built else count_lines(source),
            index_bytes=folder_bytes(folder),
        )


_stores: dict[str, object] = {}
_stores_lock = threading.Lock()


@dataclass(frozen=True)
class Qdrant:
    location: str  # a server's URL or a folder for the client's local mode

    @property
    def label(self) -> str:
        return self.store().label

    def check(self) -> None:
        """Reach the server (or open the folder); ``SearchUnavailable`` says why not."""
        self.store().exists()

    def store(self):
        """One client per location in this process (the local mode locks its folder against a second one)."""
        from core.engine.retrieval.qdrant.store import ClientStore

        with _stores_lock:
            if self.location not in _stores:
                store = _stores[self.location] = ClientStore(self.location, api_key=search_api_key())
                atexit.register(store.close)  # before the interpreter tears down what the client closes with
            return _stores[self.location]

    def open(self, sources: list[CorpusSource], embedder: Embedder, build: Build) -> HybridRetriever:
        """Ingest what the collection lacks (``build.cache_dir`` is the in-process indexes' and plays no part)."""
        from core.engine.retrieval.qdrant.backend import QdrantBackend
        from core.engine.retrieval.qdrant.ingest import Embedded, ingest

        store = self.store()
        records = [
            ingest(
                store,
                s,
                Embedded(embedder),
                params=build.params,
                strict=build.strict,
                rebuild=build.rebuild,
                progress=build.progress,
            ).record
            for s in sources
        ]
        for record in records:
            if build.strict and (record.skipped_count or record.renamed_count):
                first = LineProblem(*(record.skipped or record.renamed)[0])
                raise CorpusError(
                    f"{first} (the corpus was ingested leniently: {record.skipped_count} lines skipped, "
                    f"{record.renamed_count} repeated ids renamed; fix them, or load without strict)"
                )
        return HybridRetriever(QdrantBackend(store, records), embedder)

    def describe(
        self, source: CorpusSource, cache_dir: Path | None, embedder_name: str, params: IndexParams
    ) -> CorpusInfo:
        from core.engine.retrieval.qdrant.stats import read_record

        record = read_record(self.store(), source.name)
        current = record is not None and record.fingerprint == fingerprint(source, embedder_name, params)
        built = current and record.state == "ready"
        return CorpusInfo.of(
            source,
            record.model_dump() | {"index_type": "Qdrant (HNSW + sparse BM25)", "build_seconds": record.ingest_seconds}
            if built
            else None,
            stale=record is not None and not current,
            snippets=record.snippets if current else count_lines(source),
            ingested=record.done if current and not built else None,
        )
