"""``python -m core search "query"``: the hits of a query with their fused and per-retriever scores."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

from core.studio.cli.options import add_corpus_paths

# The same names as core.engine.retrieval.MODES, spelled out so that listing commands does not load the retrieval stack.
MODES = ("hybrid", "bm25", "dense")


def register(commands) -> None:
    p = commands.add_parser("search", help="search corpora and print hits with per-retriever scores")
    p.add_argument("query", help="the query text")
    p.add_argument("--k", type=int, default=10, help="number of hits (default 10)")
    p.add_argument("--corpus", action="append", default=[], metavar="NAME", help="search only this corpus (repeat)")
    add_corpus_paths(p, "--path", "corpus files or folders to open (several, or repeat; default: the default corpus)")
    p.add_argument(
        "--balanced",
        action="store_true",
        help="source-balanced: an equal share of k from each corpus, then re-scored together",
    )
    p.add_argument("--mode", choices=MODES, default="hybrid", help="retrievers to use (default hybrid)")
    p.add_argument("--exclude", action="append", default=[], metavar="ID", help="snippet id never to return (repeat)")
    p.add_argument(
        "--cache-dir", type=Path, default=None, help="where indexes live (default: the studio's index folder)"
    )
    p.set_defaults(handler=handle)


def _scores_line(hit) -> str:
    parts = [f"score {hit.score:.4f}"]
    for name, value in hit.scores.items():
        rank = hit.ranks.get(name)
        parts.append(f"{name} {value:.3f}" + (f" (#{rank})" if rank else ""))
    return " | ".join(parts)


def handle(args) -> int:
    from core.engine.retrieval import CorpusError, open_retriever

    try:
        retriever = open_retriever(args.path or None, progress=True, cache_dir=args.cache_dir)
        hits = retriever.search(
            args.query,
            args.k,
            corpora=args.corpus or None,
            balanced=args.balanced,
            exclude=frozenset(args.exclude),
            mode=args.mode,
        )
    except (CorpusError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not hits:
        print(f"no hits in {', '.join(args.corpus or retriever.corpora)}")
        return 0
    for hit in hits:
        print(f"{hit.rank:>3}. [{hit.corpus}] {hit.snippet_id}  {hit.title}")
        print(f"     {_scores_line(hit)}")
        print(textwrap.indent(textwrap.fill(textwrap.shorten(hit.text, 300), 100), "     "))
    return 0
