"""The two doors the command line, the setup and the UI use: open a retriever over corpora (building
what is missing), and describe corpora with their sizes and index status without building anything."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.retrieval.corpus import CorpusError, CorpusSource, corpus_sources, count_lines
from core.retrieval.corpus_index import CorpusIndex, IndexParams, fingerprint, folder_bytes, index_folder, read_manifest
from core.retrieval.default_corpus import default_corpus_paths, ensure_default_corpus
from core.retrieval.dense import Embedder, default_embedder, query_threads_only
from core.retrieval.hybrid import HybridRetriever
from core.retrieval.progress import Progress, as_progress


def _default_paths(progress: Progress | None = None) -> list[Path]:
    found = ensure_default_corpus(progress)
    if not found:
        raise CorpusError("the default corpus could not be generated; give corpus paths instead")
    return found


def open_retriever(paths: list[Path] | None = None, *, progress: bool | Progress = False, strict: bool = False,
                   cache_dir: Path | None = None, rebuild: bool = False, embedder: Embedder | None = None,
                   params: IndexParams | None = None) -> HybridRetriever:
    """A hybrid retriever over the given corpus files or folders (None: the default corpus).

    Indexes are loaded from ``cache_dir`` (default ``core.paths.index_dir()``) or built there first.
    ``progress``: True for tqdm bars, or a ``progress(stage, done, total)`` callback.
    ``strict``: stop at the first unusable line instead of skipping it. Raises ``CorpusError``.
    """
    report = as_progress(progress)
    sources = corpus_sources(paths if paths else _default_paths(report))
    embedder = embedder or default_embedder()
    indexes = [CorpusIndex.open(s, embedder, cache_dir=cache_dir, params=params or IndexParams(), strict=strict,
                                progress=report, rebuild=rebuild) for s in sources]
    query_threads_only()
    return HybridRetriever(indexes, embedder)


def human_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


@dataclass(frozen=True)
class CorpusInfo:
    name: str
    path: Path
    snippets: int  # indexed snippets when built, otherwise non-blank lines
    built: bool  # an index for exactly these files, model and parameters exists
    stale: bool  # an index exists but the corpus (or model, or parameters) changed since
    corpus_bytes: int
    index_bytes: int
    skipped_lines: int
    renamed_ids: int
    split_passages: int = 0  # passages longer than a chunk, indexed as several
    index_type: str = ""
    build_seconds: float | None = None
    embed_precision: str = ""  # the snippets' vectors: float32, or bfloat16 where the CPU computes it natively
    description: str = ""
    license: str = ""
    attribution: str = ""


def describe_corpora(paths: list[Path] | None = None, *, cache_dir: Path | None = None,
                     embedder_name: str = Embedder.name, params: IndexParams | None = None) -> list[CorpusInfo]:
    """Sizes and index status of corpora (None: the default corpus as it is now), for the Settings screen."""
    if paths is None:
        paths = default_corpus_paths()
    return [_describe(source, cache_dir, embedder_name, params or IndexParams()) for source in corpus_sources(paths)]


def _describe(source: CorpusSource, cache_dir: Path | None, embedder_name: str, params: IndexParams) -> CorpusInfo:
    folder = index_folder(source, cache_dir)
    manifest = read_manifest(folder) or {}
    built = manifest.get("fingerprint") == fingerprint(source, embedder_name, params)
    meta = source.meta
    return CorpusInfo(
        name=source.name, path=source.path,
        snippets=manifest["snippets"] if built else count_lines(source),
        built=built, stale=bool(manifest) and not built, corpus_bytes=source.size_bytes,
        index_bytes=folder_bytes(folder), skipped_lines=manifest.get("skipped_count", 0) if built else 0,
        renamed_ids=manifest.get("renamed_count", 0) if built else 0,
        split_passages=manifest.get("split_passages", 0) if built else 0,
        index_type=manifest.get("index_type", "") if built else "",
        build_seconds=manifest.get("build_seconds") if built else None,
        embed_precision=manifest.get("embed_precision", "float32") if built else "",
        description=meta.get("description", ""), license=meta.get("license", ""),
        attribution=meta.get("attribution", ""),
    )
