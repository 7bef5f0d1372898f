"""``python -m core setup``: everything the app needs offline — the embedded model assembled and verified,
the default corpus converted and indexed. Work already done is skipped."""

from __future__ import annotations

import sys
import time

from tqdm import tqdm

from core.llm import embedded


def register(commands) -> None:
    p = commands.add_parser("setup", help="assemble and verify the embedded model, build the default corpus index")
    p.add_argument("--skip-index", action="store_true", help="only the model")
    p.add_argument("--reverify", action="store_true", help="hash the assembled model again even if it was verified")
    p.set_defaults(handler=handle)


def _bar(desc: str) -> tuple[tqdm, callable]:
    bar = tqdm(total=embedded.MODEL_BYTES, unit="B", unit_scale=True, desc=desc, file=sys.stderr)

    def update(done: int, total: int) -> None:
        bar.total = total
        bar.update(done - bar.n)

    return bar, update


def handle(args) -> int:
    started = time.perf_counter()
    fresh = not embedded.model_path().with_suffix(".verified").is_file()
    bar, update = _bar("assembling model") if fresh else (None, None)
    try:
        path = embedded.assemble(update)
        if bar:
            bar.close()
        if args.reverify:
            bar, update = _bar("verifying sha256")
            embedded.verify(path, update)
            bar.close()
    except embedded.ModelAssemblyError as exc:
        if bar:
            bar.close()
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"model: {path} ({'assembled and verified' if fresh else 'already verified'}, "
          f"{time.perf_counter() - started:.1f}s)")
    if not args.skip_index:
        from core.retrieval import open_retriever
        from core.retrieval.default_corpus import ensure_default_corpus

        t = time.perf_counter()
        corpus_paths = ensure_default_corpus(progress=True)
        retriever = open_retriever(corpus_paths, progress=True)
        print(f"default corpus: {', '.join(retriever.corpora)} indexed ({time.perf_counter() - t:.1f}s)")
    return 0
