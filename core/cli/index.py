"""``python -m core index PATH...``: build (or check) the search indexes of corpora, with progress."""

from __future__ import annotations

import sys
import time
from pathlib import Path

_SHOWN_PROBLEMS = 10


def register(commands) -> None:
    p = commands.add_parser("index", help="build the BM25 + dense indexes of corpora (MedRAG chunk format)")
    p.add_argument("paths", nargs="*", type=Path, metavar="PATH",
                   help="a .jsonl / .jsonl.gz file or a folder of them (default: the default corpus)")
    p.add_argument("--strict", action="store_true", help="stop at the first unusable line instead of skipping it")
    p.add_argument("--rebuild", action="store_true", help="build even when an up-to-date index exists")
    p.add_argument("--cache-dir", type=Path, default=None,
                   help="where indexes live (default: the studio's index folder)")
    p.set_defaults(handler=handle)


def handle(args) -> int:
    from core.retrieval import CorpusError, open_retriever
    from core.retrieval.catalog import human_bytes

    started = time.perf_counter()
    try:
        retriever = open_retriever(args.paths or None, progress=True, strict=args.strict, cache_dir=args.cache_dir,
                                   rebuild=args.rebuild)
    except CorpusError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for index in retriever.indexes.values():
        m = index.manifest
        how = f"built in {m['build_seconds']:.1f}s" if index.built_now else f"up to date (built {m['built_at']})"
        n = m.get("split_passages", 0)
        chunked = f" ({n} long passage{'s' * (n != 1)} chunked)" if n else ""
        print(f"{index.name}: {m['snippets']} snippets{chunked}, {m['skipped_count']} lines skipped, "
              f"{m['renamed_count']} repeated ids renamed; {m['index_type']}, "
              f"vectors in {m.get('embed_precision', 'float32')}; {how}; "
              f"{human_bytes(index.disk_bytes)} at {index.folder}")
        for kind in ("skipped", "renamed"):
            for file, line, reason in m[kind][:_SHOWN_PROBLEMS]:
                print(f"  {kind}: {file}:{line}: {reason}")
            if m[f"{kind}_count"] > _SHOWN_PROBLEMS:
                print(f"  ... and {m[f'{kind}_count'] - _SHOWN_PROBLEMS} more "
                      f"(the first {len(m[kind])} are listed in {index.folder / 'manifest.json'})")
    total = sum(index.size for index in retriever.indexes.values())
    print(f"{len(retriever.corpora)} corpora, {total} snippets, {time.perf_counter() - started:.1f}s")
    return 0
