"""``python -m core corpora list | get NAME``: the papers' corpora by name (``core.engine.retrieval.named``).

``get`` says first what it will take (bytes, time, whether the in-process index holds it here), then downloads
MedRAG's chunks from the Hugging Face Hub (``HF_ENDPOINT``), verified against the Hub's checksums, and indexes them
where retrieval runs (``MEDRAG_SEARCH_URL``). Stopped midway, the same command carries on with the files not yet
verified.
"""

from __future__ import annotations

import sys


def register(commands) -> None:
    p = commands.add_parser("corpora", help="the papers' corpora by name: list them, or download and index one")
    sub = p.add_subparsers(dest="corpora_command", metavar="ACTION", required=True)
    sub.add_parser("list", help="the named corpora and whether each is here").set_defaults(handler=handle_list)
    g = sub.add_parser("get", help="download (from the Hugging Face Hub) and index a named corpus")
    g.add_argument("name", help="a corpus name, as `corpora list` prints them")
    g.add_argument("--dry-run", action="store_true", help="say what it would take, and stop")
    g.add_argument(
        "--download-only", action="store_true", help="download and verify, index later (python -m core index PATH)"
    )
    g.set_defaults(handler=handle_get)


def handle_list(args) -> int:
    from core.engine.retrieval.named import CATALOG, status

    for corpus in CATALOG.values():
        print(f"{corpus.name:<11} {corpus.snippets:>12,} snippets  {status(corpus):<28} {corpus.title}")
    return 0


def handle_get(args) -> int:
    from core.engine.retrieval.corpus import CorpusError
    from core.engine.retrieval.named import get, plan
    from core.engine.retrieval.progress import TqdmProgress

    try:
        p = plan(args.name)
        for line in p.lines():
            print(line)
        if args.dry_run:
            return 0
        if not p.fits:
            return 2
        progress = TqdmProgress()
        got = get(args.name, progress=progress, given=p, index=not args.download_only)
        progress.close()
    except CorpusError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            "\ninterrupted: the files verified so far are kept; run the same command again to carry on",
            file=sys.stderr,
        )
        return 130
    if got.fetched:
        print(
            f"downloaded {got.fetched:,} bytes in {got.download_seconds:.1f}s "
            f"({got.fetched / max(got.download_seconds, 1e-3) / 1e6:.1f} MB/s), every file verified"
        )
    for info in got.indexed:
        print(f"{info.name}: {info.snippets:,} snippets indexed ({p.where.label}); {info.path}")
    print("search it with: python -m core search QUERY " + " ".join(f"--path {path}" for path in got.paths))
    return 0
