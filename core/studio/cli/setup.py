"""``python -m core setup``: everything the app needs offline — the embedded model assembled and verified, the
default corpus converted and indexed. Work already done is skipped."""

from __future__ import annotations

import sys
import time

from tqdm import tqdm

from core.engine.llm import embedded


def register(commands) -> None:
    p = commands.add_parser("setup", help="assemble and verify the embedded model, build the default corpus index")
    p.add_argument(
        "--skip-index",
        action="store_true",
        help="only the model files (the app then builds the index in the background)",
    )
    p.add_argument("--reverify", action="store_true", help="hash the assembled model again even if it was verified")
    p.set_defaults(handler=handle)


def _bar(desc: str, total: int) -> tuple[tqdm, callable]:
    bar = tqdm(total=total, unit="B", unit_scale=True, desc=desc, file=sys.stderr)

    def update(done: int, total: int) -> None:
        bar.total = total
        bar.update(done - bar.n)

    return bar, update


def _model(model: embedded.ModelFile, reverify: bool) -> str:
    """Assemble and verify one model file of the shipped server configuration; a line saying what was done."""
    started = time.perf_counter()
    fresh = not embedded.is_verified(model)
    bar, update = _bar(f"assembling {model.name}", model.size) if fresh else (None, None)
    try:
        path = embedded.assemble(update, model)
    finally:
        if bar:
            bar.close()
    if reverify:
        bar, update = _bar(f"verifying sha256 of {model.name}", model.size)
        try:
            embedded.verify(path, update, model)
        finally:
            bar.close()
    return (
        f"model: {path} ({'assembled and verified' if fresh else 'already verified'}, "
        f"{time.perf_counter() - started:.1f}s)"
    )


def handle(args) -> int:
    try:
        print(_model(embedded.MAIN, args.reverify))
    except embedded.ModelAssemblyError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if not args.skip_index:
        from core.engine.retrieval import open_retriever
        from core.engine.retrieval.default_corpus import ensure_default_corpus

        t = time.perf_counter()
        corpus_paths = ensure_default_corpus(progress=True)
        retriever = open_retriever(corpus_paths, progress=True)
        print(f"default corpus: {', '.join(retriever.corpora)} indexed ({time.perf_counter() - t:.1f}s)")
    return 0
