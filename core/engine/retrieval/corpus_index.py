"""The saved index of one corpus: BM25 weights, FAISS vectors, snippet texts and a manifest.

Each corpus gets its own folder under the cache folder (named after the corpus and its path), so
adding a corpus never rebuilds the others. The manifest holds the fingerprint it was built for:
the corpus files (path, size, content hash), the embedding model, the tokenizer and every
index parameter. When any of them changes the folder is rebuilt; otherwise it loads in seconds.
The content hash, not the modification time, so a corpus copied or unpacked again unchanged keeps its index.
Builds write to a temporary folder that replaces the old one only when complete, under a file lock
so two processes never build the same corpus at once.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
from filelock import FileLock

from core.engine import paths
from core.engine.retrieval.bm25 import TOKENIZER, BM25Index, BM25Params
from core.engine.retrieval.chunking import ChunkParams, split_long
from core.engine.retrieval.corpus import CorpusError, CorpusSource, LineProblem, LoadReport, Snippet, read_corpus
from core.engine.retrieval.dense import DenseParams, Embedder, build_faiss, index_type, tune_faiss
from core.engine.retrieval.progress import LOAD_STAGE, Progress, no_progress
from core.engine.retrieval.snippet_store import SnippetStore

INDEX_FORMAT = 1
MANIFEST = "manifest.json"
DENSE_FILE = "dense.faiss"
_KEPT_PROBLEMS = 200  # skipped lines listed in the manifest; the count is always exact


@dataclass(frozen=True)
class IndexParams:
    bm25: BM25Params = field(default_factory=BM25Params)
    dense: DenseParams = field(default_factory=DenseParams)
    chunks: ChunkParams = field(default_factory=ChunkParams)


def file_sha256(path: Path) -> str:
    st = path.stat()
    return _sha256(str(path), st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=256)  # keyed by size and time too: a screen redrawn often hashes a file once
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def fingerprint(source: CorpusSource, model: str, params: IndexParams) -> str:
    files = [[str(f), f.stat().st_size, file_sha256(f)] for f in source.files]
    payload = {"format": INDEX_FORMAT, "files": files, "model": model, "tokenizer": TOKENIZER, "params": asdict(params)}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def index_folder(source: CorpusSource, cache_dir: Path | None = None) -> Path:
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", source.name)[:60]
    key = hashlib.sha1(str(source.path).encode()).hexdigest()[:10]
    return Path(cache_dir or paths.index_dir()) / f"{slug}-{key}"


def read_manifest(folder: Path) -> dict | None:
    try:
        return json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


def folder_bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.iterdir() if f.is_file()) if folder.is_dir() else 0


class CorpusIndex:
    def __init__(self, source: CorpusSource, folder: Path, manifest: dict, built_now: bool = False):
        import faiss

        self.built_now = built_now
        self.source = source
        self.folder = folder
        self.manifest = manifest
        self.bm25 = BM25Index.load(folder, manifest["params"]["bm25"]["epsilon"])
        self.dense = tune_faiss(faiss.read_index(str(folder / DENSE_FILE)), DenseParams(**manifest["params"]["dense"]))
        self.store = SnippetStore(folder)

    @property
    def name(self) -> str:
        return self.source.name

    @property
    def size(self) -> int:
        return self.bm25.size

    @property
    def report(self) -> LoadReport:
        m = self.manifest
        return LoadReport(
            m["snippets"],
            skipped=[LineProblem(*p) for p in m["skipped"]],
            renamed=[LineProblem(*p) for p in m["renamed"]],
            split=m.get("split_passages", 0),
        )

    # -- opening and building -------------------------------------------------------------

    @classmethod
    def open(
        cls,
        source: CorpusSource,
        embedder: Embedder,
        *,
        cache_dir: Path | None = None,
        params: IndexParams = IndexParams(),
        strict: bool = False,
        progress: Progress = no_progress,
        rebuild: bool = False,
    ) -> CorpusIndex:
        """Load the corpus's index, building it first when it is missing or out of date."""
        folder = index_folder(source, cache_dir)
        folder.parent.mkdir(parents=True, exist_ok=True)
        wanted = fingerprint(source, embedder.name, params)
        with FileLock(str(folder) + ".lock"):
            manifest = read_manifest(folder)
            build = rebuild or manifest is None or manifest.get("fingerprint") != wanted
            if build:
                for stale in folder.parent.glob(f"{folder.name}.building-*"):  # a build whose process was killed:
                    shutil.rmtree(stale, ignore_errors=True)  # under this lock no other build of it is running
                manifest = cls._build(source, folder, wanted, embedder, params, strict, progress)
            else:
                progress(LOAD_STAGE + source.name, 0, 1)
        if strict and (manifest["skipped_count"] or manifest["renamed_count"]):
            first = LineProblem(*(manifest["skipped"] or manifest["renamed"])[0])
            raise CorpusError(
                f"{first} (the index was built leniently: {manifest['skipped_count']} lines skipped, "
                f"{manifest['renamed_count']} repeated ids renamed; fix them, or load without strict)"
            )
        index = cls(source, folder, manifest, built_now=build)
        if not build:
            progress(LOAD_STAGE + source.name, 1, 1)
        return index

    @staticmethod
    def _build(
        source: CorpusSource,
        folder: Path,
        fp: str,
        embedder: Embedder,
        params: IndexParams,
        strict: bool,
        progress: Progress,
    ) -> dict:
        import faiss

        started = time.perf_counter()
        snippets, report = read_corpus(source, strict=strict, progress=progress)
        snippets, split = split_long(snippets, params.chunks)
        tmp = folder.with_name(f"{folder.name}.building-{os.getpid()}-{threading.get_ident()}")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        try:
            texts = [s.contents for s in snippets]
            BM25Index.build(texts, params.bm25, progress, f"bm25 {source.name}").save(tmp)
            vectors = embedder.encode(texts, progress, f"embed {source.name}")
            index = build_faiss(vectors, params.dense, progress, f"faiss {source.name}")
            faiss.write_index(index, str(tmp / DENSE_FILE))
            SnippetStore.write(tmp, snippets)
            manifest = {
                "format": INDEX_FORMAT,
                "fingerprint": fp,
                "corpus": source.name,
                "path": str(source.path),
                "files": [str(f) for f in source.files],
                "meta": source.meta,
                "model": embedder.name,
                "embed_precision": embedder.precision,
                "tokenizer": TOKENIZER,
                "params": asdict(params),
                "snippets": len(snippets),
                "split_passages": split,
                "skipped_count": len(report.skipped),
                "skipped": [[p.file, p.line, p.reason] for p in report.skipped[:_KEPT_PROBLEMS]],
                "renamed_count": len(report.renamed),
                "renamed": [[p.file, p.line, p.reason] for p in report.renamed[:_KEPT_PROBLEMS]],
                "index_type": index_type(index),
                "build_seconds": round(time.perf_counter() - started, 1),
                "built_at": time.strftime("%Y-%m-%d %H:%M:%S"),
            }
            (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
            if folder.exists():
                shutil.rmtree(folder)
            tmp.rename(folder)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return manifest

    # -- searching --------------------------------------------------------------------------

    def excluded_rows(self, ids: frozenset[str]) -> np.ndarray:
        return np.array(self.store.rows_of(ids), dtype=np.int64) if ids else np.empty(0, dtype=np.int64)

    def bm25_top(self, scores: np.ndarray, n: int, excluded: np.ndarray) -> list[tuple[int, float]]:
        """The n best rows by BM25, among rows that match at least one query word."""
        if excluded.size:
            scores = scores.copy()
            scores[excluded] = 0.0
        candidates = np.flatnonzero(scores > 0)
        if candidates.size > n:
            candidates = candidates[np.argpartition(-scores[candidates], n - 1)[:n]]
        candidates = candidates[np.lexsort((candidates, -scores[candidates]))]
        return [(int(r), float(scores[r])) for r in candidates]

    def dense_top(self, query_vector: np.ndarray, n: int, excluded: np.ndarray) -> list[tuple[int, float]]:
        fetch = min(n + excluded.size, self.size)
        sims, rows = self.dense.search(query_vector.reshape(1, -1), fetch)
        banned = set(excluded.tolist())
        return [(int(r), float(s)) for r, s in zip(rows[0], sims[0], strict=True) if r >= 0 and r not in banned][:n]

    def dense_scores(self, query_vector: np.ndarray, rows: list[int]) -> np.ndarray:
        if not rows:
            return np.empty(0, dtype=np.float32)
        vectors = np.vstack([self.dense.reconstruct(int(r)) for r in rows])
        return vectors @ query_vector

    def snippets(self, rows: list[int]) -> dict[int, Snippet]:
        return self.store.get(rows)

    @property
    def disk_bytes(self) -> int:
        return folder_bytes(self.folder)
