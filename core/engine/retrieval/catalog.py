"""The two doors the command line, the setup and the UI use: open a retriever over corpora (building
what is missing), and describe corpora with their sizes and index status without building anything."""

from __future__ import annotations

from pathlib import Path

from core.engine.retrieval.corpus import CorpusError, corpus_sources
from core.engine.retrieval.corpus_index import IndexParams
from core.engine.retrieval.default_corpus import default_corpus_paths, ensure_default_corpus
from core.engine.retrieval.dense import Embedder, default_embedder, query_threads_only
from core.engine.retrieval.hybrid import HybridRetriever
from core.engine.retrieval.info import CorpusInfo
from core.engine.retrieval.location import Build, InProcess, Qdrant, search_location
from core.engine.retrieval.progress import Progress, as_progress

__all__ = ["CorpusInfo", "describe_corpora", "human_bytes", "open_retriever"]


def ensured_default_paths(progress: Progress | None = None) -> list[Path]:
    found = ensure_default_corpus(progress)
    if not found:
        raise CorpusError("the default corpus could not be generated; give corpus paths instead")
    return found


def open_retriever(
    paths: list[Path] | None = None,
    *,
    progress: bool | Progress = False,
    strict: bool = False,
    cache_dir: Path | None = None,
    rebuild: bool = False,
    embedder: Embedder | None = None,
    params: IndexParams | None = None,
    location: InProcess | Qdrant | None = None,
) -> HybridRetriever:
    """A hybrid retriever over the given corpus files or folders (None: the default corpus).

    ``location``: where retrieval runs (default: ``MEDRAG_SEARCH_URL``, see ``core.engine.retrieval.location``). In process,
    indexes are loaded from ``cache_dir`` (default ``core.engine.paths.index_dir()``) or built there first; in Qdrant,
    corpora not yet in its collection are ingested first.
    ``progress``: True for tqdm bars, or a ``progress(stage, done, total)`` callback.
    ``strict``: stop at the first unusable line instead of skipping it. Raises ``CorpusError``.
    """
    report = as_progress(progress)
    sources = corpus_sources(paths if paths else ensured_default_paths(report))
    embedder = embedder or default_embedder()
    build = Build(progress=report, strict=strict, rebuild=rebuild, cache_dir=cache_dir, params=params or IndexParams())
    retriever = (location or search_location()).open(sources, embedder, build)
    query_threads_only()
    return retriever


def human_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def describe_corpora(
    paths: list[Path] | None = None,
    *,
    cache_dir: Path | None = None,
    embedder_name: str = Embedder.name,
    params: IndexParams | None = None,
    location: InProcess | Qdrant | None = None,
) -> list[CorpusInfo]:
    """Sizes and index status of corpora (None: the default corpus as it is now), for the Settings screen."""
    if paths is None:
        paths = default_corpus_paths()
    where = location or search_location()
    return [
        where.describe(source, cache_dir, embedder_name, params or IndexParams()) for source in corpus_sources(paths)
    ]
