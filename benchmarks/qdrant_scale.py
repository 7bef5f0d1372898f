"""Scale: today's in-process index beside Qdrant's engine (qdrant-edge-py) on one corpus of N snippets.

    .venv/bin/python -m benchmarks.qdrant_scale --size 1000000 --engines in-process,edge

Results go to ``benchmarks/results/qdrant_scale.json``; ``python -m tools.docs`` writes the tables of
``docs/retrieval-at-scale.md`` from it.

The corpus is the real one first (the shared corpora and the default corpus, 55,459 snippets, with their vectors
from a GPU run, ``benchmarks/gpu_vectors.py``), then synthetic snippets to fill: words drawn by the real snippets'
word frequencies, lengths by theirs, and vectors made from two real vectors and noise (so they cluster as real ones
do; random unit vectors would make every graph search look worse than it is). Nothing is embedded here: embedding a
million texts on two CPU cores would take a day, and ingest speed is measured without it (the GPU run measures
embedding). Each engine builds in its own process (peak memory), then a fresh process opens the index and searches
(memory after opening and after the queries; latency of hybrid search at k=32, the query already embedded, one
thread; recall@32 of each retriever against exact search: dense by brute force over all vectors, BM25 by the
in-process index's exact scores, hybrid by fusing the two exact rankings as the retriever does).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

from benchmarks.gpu_vectors import FOLDER, chunks, gpu_vectors
from core.engine.paths import REPO_ROOT
from core.engine.retrieval.chunking import ChunkParams
from core.engine.retrieval.corpus import CorpusSource, corpus_sources
from core.engine.retrieval.corpus_index import CorpusIndex, IndexParams
from core.engine.retrieval.default_corpus import default_corpus_paths
from core.engine.retrieval.dense import DenseParams
from core.engine.retrieval.fusion import RRF_K, rrf
from core.engine.retrieval.hybrid import HybridRetriever
from core.engine.retrieval.qdrant.ingest import VectorSource

RESULTS = REPO_ROOT / "benchmarks" / "results" / "qdrant_scale.json"
SHARED = REPO_ROOT.parent / "shared" / "data"
K = 32
GiB = 2**30


def rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def du(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def folder_for(size: int) -> Path:
    return FOLDER / f"scale-{size}"


# -- the corpus ---------------------------------------------------------------------------------------------------


def real_sources() -> list[CorpusSource]:
    return corpus_sources(default_corpus_paths() + sorted((SHARED / "corpora").glob("*.jsonl.gz")))


def prepare(size: int) -> None:
    """Writes scale-N/corpus.jsonl (one MedRAG-format corpus) and scale-N/vectors.npy (row by row)."""
    folder = folder_for(size)
    if (folder / "vectors.npy").exists():
        return
    # every snippet within one chunk, so that rows and vectors stay one to one
    folder.mkdir(parents=True, exist_ok=True)
    by_key = gpu_vectors()
    rng = np.random.default_rng(0)
    real, lengths, words = [], [], Counter()
    for source in real_sources():
        for row, s in enumerate(chunks(source)):
            real.append((f"{source.name}/{s.id}", s.title, s.text, by_key[source.name, row]))
            tokens = re.findall(r"[A-Za-z][A-Za-z0-9-]*|\d+", s.text)
            lengths.append(len(tokens))
            words.update(tokens)
    real = real[:size]
    vocabulary = np.array(list(words))
    p = np.array(list(words.values()), dtype=np.float64)
    p /= p.sum()
    base = np.stack([r[3] for r in real])
    vectors = np.lib.format.open_memmap(folder / "vectors.tmp.npy", "w+", np.float32, (size, base.shape[1]))
    vectors[: len(real)] = base
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as out:
        out.writelines(json.dumps({"id": sid, "title": title, "content": text}) + "\n" for sid, title, text, _ in real)
        for start in range(len(real), size, 10_000):
            n = min(10_000, size - start)
            counts = rng.choice(lengths, n)
            drawn = rng.choice(len(vocabulary), int(counts.sum()), p=p)
            at = 0
            for i, c in enumerate(counts):
                text = " ".join(vocabulary[drawn[at : at + c]])[: ChunkParams().size].rsplit(" ", 1)[0]
                out.write(json.dumps({"id": f"synthetic/{start + i}", "title": "", "content": text}) + "\n")
                at += c
            mixed = base[rng.integers(len(base), size=n)] + 0.5 * base[rng.integers(len(base), size=n)]
            mixed += rng.normal(0, 0.03, mixed.shape).astype(np.float32)
            vectors[start : start + n] = mixed / np.linalg.norm(mixed, axis=1, keepdims=True)
            print(f"prepared {start + n:,} of {size:,}", end="\r", flush=True)
    vectors.flush()
    del vectors
    os.replace(folder / "vectors.tmp.npy", folder / "vectors.npy")
    print()


class Rows(VectorSource):
    """Vectors by row for both builds: today's index asks for all texts at once (as of an embedder), an ingest for a
    batch at a time (as of a vector source)."""

    name = model = "benchmark vectors (GPU-embedded real snippets, synthetic fill)"
    precision = "float32"
    dim = 384
    source = "the benchmark's vector file"

    def __init__(self, size: int):
        self.array = np.load(folder_for(size) / "vectors.npy", mmap_mode="r")

    def encode(self, texts, progress=None, stage="embed", batch=256) -> np.ndarray:
        assert len(texts) == len(self.array), "the corpus and its vectors differ in length"
        return np.asarray(self.array)

    def vectors(self, first_row: int, snippets) -> np.ndarray:
        return np.asarray(self.array[first_row : first_row + len(snippets)])


class Stages:
    """When each progress stage was first and last reported: the phases of a build."""

    def __init__(self):
        self.spans: dict[str, list[float]] = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        now = time.perf_counter()
        phase = stage.split(" ")[0]
        self.spans.setdefault(phase, [now, now])[1] = now


# -- building -----------------------------------------------------------------------------------------------------


def build(engine: str, size: int) -> dict:
    folder = folder_for(size)
    source = CorpusSource.from_path(folder / "corpus.jsonl")
    target = folder / engine
    shutil.rmtree(target, ignore_errors=True)
    stages, vectors = Stages(), Rows(size)
    started = time.perf_counter()
    if engine == "in-process":
        index = CorpusIndex.open(source, vectors, cache_dir=target, params=IndexParams(), progress=stages)
        snippets, kind = index.size, index.manifest["index_type"]
    else:
        from core.engine.retrieval.qdrant.edge import EdgeStore
        from core.engine.retrieval.qdrant.ingest import ingest

        store = EdgeStore(target / "shard")
        done = ingest(store, source, vectors, batch=1024, progress=stages)
        store.close()
        snippets, kind = done.record.snippets, "Qdrant Edge: HNSW (m 16, ef_construct 100) + sparse inverted index"
    seconds = time.perf_counter() - started
    spans = {k: round(v[1] - v[0], 1) for k, v in stages.spans.items()}
    result = {
        "snippets": snippets,
        "index": kind,
        "build_s": round(seconds, 1),
        "phases_s": spans,
        "build_peak_rss": peak_rss(),
        "disk": du(target),
    }
    if engine == "edge":
        result["ingest_per_s"] = round(snippets / spans["ingest"], 1) if spans.get("ingest") else None
        result["index_build_s"] = spans.get("index")
    print(json.dumps(result))
    return result


# -- searching ----------------------------------------------------------------------------------------------------


def questions(n: int = 150) -> list[str]:
    with gzip.open(SHARED / "mirage" / "benchmark.json.gz", "rt", encoding="utf-8") as fh:
        bench = json.load(fh)
    dev = json.loads((SHARED / "mirage" / "dev_ids.json").read_text())
    from core.studio.teaching import load_cases

    asked = [bench[d][q]["question"] for d, ids in dev.items() for q in ids][:n]
    return asked + [c.question for c in load_cases()]


def open_engine(engine: str, size: int, embedder) -> HybridRetriever:
    folder = folder_for(size) / engine
    source = CorpusSource.from_path(folder_for(size) / "corpus.jsonl")
    if engine == "in-process":
        index = CorpusIndex.open(source, Rows(size), cache_dir=folder, params=IndexParams())
        return HybridRetriever([index], embedder)
    from core.engine.retrieval.qdrant.backend import QdrantBackend
    from core.engine.retrieval.qdrant.edge import EdgeStore
    from core.engine.retrieval.qdrant.stats import read_record

    store = EdgeStore(folder / "shard")
    return HybridRetriever(QdrantBackend(store, [read_record(store, source.name)]), embedder)


def search(engine: str, size: int) -> dict:
    from benchmarks.gpu_vectors import Precomputed
    from core.engine.retrieval.dense import query_threads_only

    asked = questions()
    embedder = Precomputed({})
    for q in asked:  # query vectors first: latency is the search's, not the embedding's
        embedder.encode_query(q)
    query_threads_only()
    before = rss()
    retriever = open_engine(engine, size, embedder)
    opened = rss() - before
    for q in asked[:10]:
        retriever.search(q, K)
    seconds, found = [], {}
    for q in asked:
        t = time.perf_counter()
        hits = retriever.search(q, K)
        seconds.append(time.perf_counter() - t)
        found[q] = {"hybrid": [h.snippet_id for h in hits]}
        for mode in ("bm25", "dense"):
            found[q][mode] = [h.snippet_id for h in retriever.search(q, 100, mode=mode)]
    exact_file = folder_for(size) / "exact.json"
    if engine == "in-process":  # BM25 here is exact (every snippet scored); dense by brute force
        exact_file.write_text(json.dumps(exact(retriever, asked, size, found)), encoding="utf-8")
    truth = json.loads(exact_file.read_text(encoding="utf-8"))
    recall = {
        mode: round(
            float(
                np.mean(
                    [
                        len(set(found[q][mode][:K]) & set(truth[q][mode][:K])) / max(len(truth[q][mode][:K]), 1)
                        for q in asked
                    ]
                )
            ),
            4,
        )
        for mode in ("hybrid", "bm25", "dense")
    }  # a query that few snippets match has fewer than K to find
    ms = np.array(seconds) * 1000
    result = {
        "queries": len(asked),
        "hybrid_p50_ms": round(float(np.percentile(ms, 50)), 2),
        "hybrid_p95_ms": round(float(np.percentile(ms, 95)), 2),
        "recall_at_32": recall,
        "rss_after_open": opened,
        "rss_after_queries": rss() - before,
    }
    print(json.dumps(result))
    return result


def exact(retriever: HybridRetriever, asked: list[str], size: int, found: dict) -> dict:
    """Exact rankings: dense by brute force over every vector, BM25 as the in-process index scores all, and hybrid
    as their RRF (the retriever's fusion, on exact inputs)."""
    vectors = np.load(folder_for(size) / "vectors.npy", mmap_mode="r")
    index = next(iter(retriever.indexes.values()))
    ids = {}
    truth = {}
    for q in asked:
        sims = np.zeros(len(vectors), np.float32)
        qv = retriever.embedder.encode_query(q)
        for start in range(0, len(vectors), 200_000):
            sims[start : start + 200_000] = vectors[start : start + 200_000] @ qv
        top = np.argpartition(-sims, 100)[:100]
        dense_rows = top[np.argsort(-sims[top])].tolist()
        bm25_rows = [row for row, _ in index.bm25_top(index.bm25.scores(q), 100, np.empty(0, np.int64))]
        fused = [row for row, _ in rrf({"bm25": bm25_rows, "dense": dense_rows}, RRF_K)[:K]]
        rows = set(dense_rows) | set(bm25_rows) | set(fused)
        ids.update({r: s.id for r, s in index.snippets([r for r in rows if r not in ids]).items()})
        truth[q] = {
            "dense": [ids[r] for r in dense_rows],
            "bm25": [ids[r] for r in bm25_rows],
            "hybrid": [ids[r] for r in fused],
        }
    return truth


# -- the driver and the report ------------------------------------------------------------------------------------


def load() -> dict:
    return json.loads(RESULTS.read_text(encoding="utf-8")) if RESULTS.exists() else {}


def save(key: str, result: dict) -> None:
    results = load()
    results[key] = results.get(key, {}) | result | {"at": time.strftime("%Y-%m-%d %H:%M:%S")}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=1_000_000)
    ap.add_argument("--engines", default="in-process,edge")
    ap.add_argument("--step", choices=("all", "build", "search"), default="all", help=argparse.SUPPRESS)
    ap.add_argument("--keep", action="store_true", help="keep the built indexes (default: removed after)")
    args = ap.parse_args(argv)
    prepare(args.size)
    for engine in args.engines.split(","):
        key = f"{engine} {args.size}"
        if args.step == "all":  # each step in a process of its own, so memory is that step's alone
            for step in ("build", "search"):
                subprocess.run(
                    [
                        sys.executable,
                        "-m",
                        "benchmarks.qdrant_scale",
                        "--size",
                        str(args.size),
                        "--engines",
                        engine,
                        "--step",
                        step,
                    ],
                    check=True,
                )
            if not args.keep:
                shutil.rmtree(folder_for(args.size) / engine, ignore_errors=True)
        else:
            save(
                key,
                (build if args.step == "build" else search)(engine, args.size)
                | {
                    "engine": engine,
                    "size": args.size,
                    "dense": DenseParams().__dict__
                    if engine == "in-process"
                    else {"hnsw_m": 16, "hnsw_ef_construct": 100, "hnsw_ef": 128},
                },
            )


if __name__ == "__main__":
    main()
