"""``python -m core index PATH...``: build (or check) the search indexes of corpora, with progress.

``--engine qdrant`` ingests them into a Qdrant collection instead (the server or folder of ``--url``, default
``MEDRAG_SEARCH_URL``): streamed, in batches, resumable (the same command after a stop carries on where it stopped).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from core.studio.cli.options import at_least_one

_SHOWN_PROBLEMS = 10
ENGINES = ("in-process", "qdrant")


def register(commands) -> None:
    p = commands.add_parser(
        "index", help="build the BM25 + dense indexes of corpora (MedRAG chunk format), in process or in Qdrant"
    )
    p.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATH",
        help="a .jsonl / .jsonl.gz file or a folder of them (default: the default corpus)",
    )
    p.add_argument(
        "--engine",
        choices=ENGINES,
        default=None,
        help="where the index lives (default: qdrant when MEDRAG_SEARCH_URL is set, else in-process)",
    )
    p.add_argument("--strict", action="store_true", help="stop at the first unusable line instead of skipping it")
    p.add_argument("--rebuild", action="store_true", help="build even when an up-to-date index exists")
    p.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help="where in-process indexes live (default: the studio's index folder)",
    )
    q = p.add_argument_group("qdrant")
    q.add_argument(
        "--url",
        default=None,
        help="a Qdrant server's http(s) URL, or a folder for the client's local mode (default: MEDRAG_SEARCH_URL)",
    )
    q.add_argument(
        "--batch", type=at_least_one, default=256, help="snippets embedded and written at a time (default 256)"
    )
    q.add_argument(
        "--device",
        choices=("auto", "cpu", "cuda"),
        default="auto",
        help="where snippets are embedded (default: the GPU when there is one)",
    )
    q.add_argument(
        "--from-index",
        action="store_true",
        help="take the vectors from the corpus's up-to-date in-process index instead of embedding again",
    )
    q.add_argument("--shards", type=at_least_one, default=1, help="shards of a new collection on a cluster (default 1)")
    q.add_argument("--replicas", type=at_least_one, default=1, help="copies of each shard on a cluster (default 1)")
    q.add_argument("--on-disk", action="store_true", help="keep a new collection's original vectors on disk")
    q.add_argument(
        "--quantization",
        choices=("none", "int8", "binary"),
        default="none",
        help="a compressed copy of a new collection's vectors in RAM for the graph search",
    )
    p.set_defaults(handler=handle)


def handle(args) -> int:
    from core.engine.retrieval import CorpusError
    from core.engine.settings import settings

    engine = args.engine or ("qdrant" if settings().search_url else "in-process")
    try:
        return _in_process(args) if engine == "in-process" else _qdrant(args)
    except CorpusError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _problems(m: dict, where: str) -> None:
    for kind in ("skipped", "renamed"):
        for file, line, reason in m[kind][:_SHOWN_PROBLEMS]:
            print(f"  {kind}: {file}:{line}: {reason}")
        if m[f"{kind}_count"] > _SHOWN_PROBLEMS:
            print(
                f"  ... and {m[f'{kind}_count'] - _SHOWN_PROBLEMS} more (the first {len(m[kind])} are listed in "
                f"{where})"
            )


def _chunked(m: dict) -> str:
    n = m.get("split_passages", 0)
    return f" ({n} long passage{'s' * (n != 1)} chunked)" if n else ""


def _in_process(args) -> int:
    from core.engine.retrieval import open_retriever
    from core.engine.retrieval.catalog import human_bytes
    from core.engine.retrieval.location import InProcess

    started = time.perf_counter()
    retriever = open_retriever(
        args.paths or None,
        progress=True,
        strict=args.strict,
        cache_dir=args.cache_dir,
        rebuild=args.rebuild,
        location=InProcess(),
    )
    for index in retriever.indexes.values():
        m = index.manifest
        how = f"built in {m['build_seconds']:.1f}s" if index.built_now else f"up to date (built {m['built_at']})"
        print(
            f"{index.name}: {m['snippets']} snippets{_chunked(m)}, {m['skipped_count']} lines skipped, "
            f"{m['renamed_count']} repeated ids renamed; {m['index_type']}, "
            f"vectors in {m.get('embed_precision', 'float32')}; {how}; "
            f"{human_bytes(index.disk_bytes)} at {index.folder}"
        )
        _problems(m, str(index.folder / "manifest.json"))
    total = sum(index.size for index in retriever.indexes.values())
    print(f"{len(retriever.corpora)} corpora, {total} snippets, {time.perf_counter() - started:.1f}s")
    return 0


def _qdrant(args) -> int:
    from core.engine.retrieval.catalog import ensured_default_paths
    from core.engine.retrieval.corpus import corpus_sources
    from core.engine.retrieval.corpus_index import CorpusIndex, IndexParams, fingerprint, index_folder, read_manifest
    from core.engine.retrieval.dense import Embedder, default_embedder
    from core.engine.retrieval.location import qdrant_place, search_api_key
    from core.engine.retrieval.progress import TqdmProgress
    from core.engine.retrieval.qdrant.ingest import Embedded, FromIndex, ingest
    from core.engine.retrieval.qdrant.store import ClientStore, CollectionOptions
    from core.engine.settings import search_place, settings

    url = (args.url or settings().search_url or "").strip()
    if not url:
        print(
            "error: --engine qdrant needs --url (a server's http(s) URL or a folder) or MEDRAG_SEARCH_URL",
            file=sys.stderr,
        )
        return 2
    try:
        location = qdrant_place(search_place(url))
    except ValueError as exc:
        print(f"error: --url {exc}", file=sys.stderr)
        return 2
    progress = TqdmProgress()
    sources = corpus_sources(args.paths or ensured_default_paths(progress))
    options = CollectionOptions(
        shards=args.shards, replicas=args.replicas, on_disk=args.on_disk, quantization=args.quantization
    )
    store = ClientStore(location, api_key=search_api_key(), options=options)
    embedder = Embedder(device="cuda") if _cuda(args.device) else default_embedder()
    params = IndexParams()
    started, total, current = time.perf_counter(), 0, None
    try:
        for source in sources:
            current = source
            if args.from_index:
                manifest = read_manifest(index_folder(source, args.cache_dir)) or {}
                if manifest.get("fingerprint") != fingerprint(source, embedder.name, params):
                    print(
                        f"error: {source.name} has no up-to-date in-process index to take vectors from; build it "
                        f"with --engine in-process, or drop --from-index",
                        file=sys.stderr,
                    )
                    return 2
                vectors = FromIndex(CorpusIndex.open(source, embedder, cache_dir=args.cache_dir, params=params))
            else:
                vectors = Embedded(embedder)
            done = ingest(
                store,
                source,
                vectors,
                params=params,
                batch=args.batch,
                strict=args.strict,
                rebuild=args.rebuild,
                progress=progress,
            )
            r = done.record
            how = (
                f"up to date (ingested {r.built_at})"
                if done.how == "up to date"
                else f"{done.how} in {done.seconds:.1f}s"
            )
            print(
                f"{r.corpus}: {r.snippets} snippets{_chunked(r.model_dump())}, {r.skipped_count} lines skipped, "
                f"{r.renamed_count} repeated ids renamed; vectors from {vectors.source} in "
                f"{r.embed_precision}; {how}; {store.label}"
            )
            _problems(r.model_dump(), f"the corpus's record in {store.label}")
            total += r.snippets
    except KeyboardInterrupt:
        progress.close()
        print(
            f"\ninterrupted while ingesting {current.name if current else 'corpora'}: run the same command again "
            f"to carry on from the last batch written",
            file=sys.stderr,
        )
        return 130
    finally:
        store.close()
    print(f"{len(sources)} corpora, {total} snippets, {time.perf_counter() - started:.1f}s")
    return 0


def _cuda(device: str) -> bool:
    if device != "auto":
        return device == "cuda"
    import torch

    return torch.cuda.is_available()
