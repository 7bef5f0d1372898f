"""Retrieval benchmark: build time, disk and memory, query latency, and recall on the teaching pack.

    .venv/bin/python -m benchmarks.retrieval_bench [--queries 100] [--synthetic 300000] [--skip-synthetic]

1. Recall@5 of BM25, dense and hybrid on the teaching pack, with 95% bootstrap intervals: each case's question
   (alone, and with its options, as a reader sees it) against its key passages, one ranking pooled over the
   corpora or an equal share per corpus, over the teaching pack alone and over the whole default corpus (HPO
   definitions too); and the paired difference the options make. Then, on the default corpus, BM25 with one idf
   over the corpora (the studio's) against each corpus's own idf (MedRAG's merge of separate indexes): recall@5
   and the share of the top 5 from a corpus that holds none of the case's key passages.
2. The shared corpora together (../shared/data/corpora, about 23k passages, 39k snippets once long ones are
   chunked): indexes are built in the studio's index folder if missing (an hour on two busy cores) and loaded
   otherwise; the build time shown is the one recorded when they were built. Then what chunking long passages
   changes for MedRAG's reader on the development questions (a second index of whole passages, built once).
3. A synthetic corpus (300k snippets of words drawn from the shared corpora's word frequencies),
   built in a temporary folder. Embedding 300k snippets would take hours on two cores, so its snippet
   vectors are random unit vectors: latency and size are real (HNSW index, real query encoding),
   dense relevance is meaningless.
Memory is the growth of this process when a corpus opens, so the smallest run first.
Latency is per query (k=32, MedRAG's default), one thread, as methods run it.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import tempfile
import time
from collections import Counter
from itertools import islice
from pathlib import Path

import numpy as np
from scipy.stats import bootstrap, wilcoxon
from tqdm import tqdm

from core.engine.llm.embedded import SHIPPED
from core.engine.llm.tokens import CHARS_PER_TOKEN
from core.engine.methods.documents import format_docs, read_docs
from core.engine.paths import REPO_ROOT, index_dir
from core.engine.question import Question
from core.engine.retrieval import HybridRetriever, open_retriever
from core.engine.retrieval.catalog import human_bytes
from core.engine.retrieval.chunking import ChunkParams, passage_id
from core.engine.retrieval.corpus_index import IndexParams
from core.engine.retrieval.default_corpus import ensure_default_corpus, teaching_pack_dir
from core.engine.retrieval.dense import Embedder, default_embedder
from core.engine.retrieval.hybrid import MODES, Idf
from core.engine.retrieval.progress import no_progress

SHARED = REPO_ROOT.parent / "shared" / "data"
K = 32


def rss_bytes() -> int:
    """Resident memory of this process (Linux); 0 where /proc is not available."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def mirage_questions(n: int) -> list[str]:
    """Questions of the MIRAGE development split, a fair sample of what methods search for."""
    with gzip.open(SHARED / "mirage" / "benchmark.json.gz", "rt", encoding="utf-8") as fh:
        bench = json.load(fh)
    dev = json.loads((SHARED / "mirage" / "dev_ids.json").read_text())
    questions = [bench[dataset][qid]["question"] for dataset, ids in dev.items() for qid in ids]
    return questions[:n]


def latency(retriever: HybridRetriever, queries: list[str], label: str) -> None:
    for query in queries[:3]:  # warm-up: first-use costs are not query latency
        retriever.search(query, K)
    for mode in MODES:
        seconds = []
        for query in tqdm(queries, desc=f"{label} {mode}", leave=False):
            started = time.perf_counter()
            retriever.search(query, K, mode=mode)
            seconds.append(time.perf_counter() - started)
        p50, p95 = np.percentile(seconds, [50, 95]) * 1000
        print(f"  {mode:<7} latency p50 {p50:7.1f} ms   p95 {p95:7.1f} ms   ({len(seconds)} queries, k={K})")


def open_measured(paths: list[Path], label: str, **kwargs) -> HybridRetriever:
    """Open (building if needed) and print build time, load time, disk and the memory the indexes take."""
    default_embedder().encode_query("warm up")  # the model's memory is not the index's
    before = rss_bytes()
    retriever = open_retriever(paths, progress=True, **kwargs)
    memory = rss_bytes() - before
    indexes = list(retriever.indexes.values())
    built_now = any(index.built_now for index in indexes)
    started = time.perf_counter()
    loaded = open_retriever(paths, **kwargs)  # what every later start costs
    load = time.perf_counter() - started
    del loaded
    print(
        f"{label}: {len(indexes)} corpora, {sum(index.size for index in indexes)} snippets, "
        f"{indexes[0].manifest['index_type']}"
    )
    print(
        f"  build {sum(index.manifest['build_seconds'] for index in indexes):.0f}s "
        f"({'now' if built_now else 'as recorded when built'}); load {load:.1f}s; "
        f"disk {human_bytes(sum(index.disk_bytes for index in indexes))}; memory +{human_bytes(memory)}"
    )
    return retriever


class RandomVectors(Embedder):
    """Random unit vectors for the synthetic corpus's snippets; real encoding for queries."""

    name = "random unit vectors (benchmark only)"

    def encode(self, texts, progress=no_progress, stage="embed", batch=256) -> np.ndarray:
        vectors = np.random.default_rng(0).standard_normal((len(texts), self.dim), dtype=np.float32)
        progress(stage, len(texts), len(texts))
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def write_synthetic(path: Path, n: int, sources: list[Path]) -> None:
    """n snippets of 40-120 words drawn with the word frequencies of the shared corpora."""
    counts: Counter[str] = Counter()
    for source in sources:
        with gzip.open(source, "rt", encoding="utf-8") as fh:
            for line in islice(fh, 3000):
                counts.update(json.loads(line)["content"].split())
    words = list(counts)
    p = np.array(list(counts.values()), dtype=np.float64)
    rng = np.random.default_rng(0)
    ends = np.cumsum(rng.integers(40, 121, size=n))
    drawn = rng.choice(len(words), size=int(ends[-1]), p=p / p.sum())  # one draw: cheap per word
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=1) as out:
        for i in tqdm(range(n), desc="write synthetic corpus", unit=" snippets"):
            text = " ".join(words[w] for w in drawn[ends[i - 1] if i else 0 : ends[i]])
            out.write(json.dumps({"id": f"syn{i}", "title": f"Synthetic {i}", "content": text}) + "\n")


QUERIES = ("question", "question + options")


def teaching_cases(pack: Path) -> list[tuple[dict[str, str], set[str]]]:
    """({query formulation: text}, key passage ids) for every case of the teaching pack."""
    data = json.loads((pack / "cases.json").read_text(encoding="utf-8"))
    cases = data["cases"] if isinstance(data, dict) else data
    return [
        (
            {
                "question": case["question"],
                "question + options": Question(text=case["question"], options=case.get("options") or {}).render(),
            },
            set(case["key_passages"]),
        )
        for case in cases
    ]


def interval(values: list[float]) -> str:
    """The mean with its 95% bootstrap interval (percentile; cases resampled)."""
    if len(set(values)) == 1:
        return f"{values[0]:.2f} [{values[0]:.2f}–{values[0]:.2f}]"
    low, high = bootstrap(
        (np.array(values),), np.mean, n_resamples=5000, method="percentile", random_state=0
    ).confidence_interval
    return f"{np.mean(values):.2f} [{low:.2f}–{high:.2f}]"


def recall(retriever: HybridRetriever, cases: list[tuple[dict[str, str], set[str]]], label: str) -> None:
    """Recall@5 (share of a case's key passages in the top 5) and hit@5 per query formulation, retriever and
    pooling; then the paired difference that formulation makes to each retriever (Wilcoxon signed-rank)."""
    print(
        f"  {label}: recall@5 [95% bootstrap interval], hit@5 = a key passage in the top 5, n = {len(cases)} "
        f"cases; pooled = one ranking over all corpora (MedRAG's merge), balanced = an equal share per corpus "
        f"re-ranked by dense score"
    )
    per_case: dict[tuple[str, str, bool], list[float]] = {}
    for query in QUERIES:
        for mode in MODES:
            for balanced in (False, True):
                found, hits = [], []
                for texts, keys in cases:
                    ids = {h.snippet_id for h in retriever.search(texts[query], 5, mode=mode, balanced=balanced)}
                    found.append(len(keys & ids) / len(keys))
                    hits.append(float(bool(keys & ids)))
                per_case[query, mode, balanced] = found
                print(
                    f"    {query:<18} {mode:<7} {'balanced' if balanced else 'pooled':<9} recall@5 "
                    f"{interval(found)}   hit@5 {np.mean(hits):.2f}"
                )
    for mode in MODES:
        for balanced in (False, True):
            a, b = per_case["question", mode, balanced], per_case["question + options", mode, balanced]
            diff = np.array(b) - np.array(a)
            p = wilcoxon(b, a).pvalue if diff.any() else 1.0
            print(
                f"    options added to the query, {mode} {'balanced' if balanced else 'pooled'}: recall@5 "
                f"{np.mean(diff):+.2f}, better on {(diff > 0).sum()} cases, worse on {(diff < 0).sum()}, "
                f"Wilcoxon p = {p:.3f}"
            )


def idf_comparison(retriever: HybridRetriever, cases: list[tuple[dict[str, str], set[str]]]) -> None:
    """Collection idf against per-corpus idf on the same indexes and cases, paired (Wilcoxon signed-rank)."""
    print(
        "  BM25 idf over the corpora as one collection vs each corpus's own (pooled ranking; off-corpus@5 = share "
        "of the top 5 from a corpus holding none of the case's key passages)"
    )
    home = {
        key: name
        for name in retriever.corpora
        for _, keys in cases
        for key in keys
        if retriever.indexes[name].store.rows_of([key])
    }
    variants: dict[Idf, HybridRetriever] = {
        idf: HybridRetriever(list(retriever.indexes.values()), retriever.embedder, bm25_idf=idf)
        for idf in ("per corpus", "collection")
    }
    for query in QUERIES:
        for mode in ("hybrid", "bm25"):
            found: dict[str, list[float]] = {}
            for idf, variant in variants.items():
                recalls, off = [], []
                for texts, keys in cases:
                    hits = variant.search(texts[query], 5, mode=mode)
                    recalls.append(len(keys & {h.snippet_id for h in hits}) / len(keys))
                    off.append(sum(h.corpus not in {home.get(k) for k in keys} for h in hits) / 5)
                found[idf] = recalls
                print(
                    f"    {query:<18} {mode:<7} idf {idf:<10} recall@5 {interval(recalls)}   "
                    f"off-corpus@5 {np.mean(off):.2f}"
                )
            diff = np.array(found["collection"]) - np.array(found["per corpus"])
            p = wilcoxon(found["collection"], found["per corpus"]).pvalue if diff.any() else 1.0
            print(
                f"    {query:<18} {mode:<7} collection − per corpus: recall@5 {np.mean(diff):+.2f}, better on "
                f"{(diff > 0).sum()} cases, worse on {(diff < 0).sum()}, Wilcoxon p = {p:.3f}"
            )


def recall_section() -> None:
    pack = teaching_pack_dir()
    if not (pack / "cases.json").is_file():
        print(f"teaching pack: {pack / 'cases.json'} is absent, no recall figures")
        return
    cases = teaching_cases(pack)
    print("teaching pack recall (each case's question; its key passages)")
    recall(open_retriever([pack], progress=True), cases, "teaching pack alone")
    default = open_measured(ensure_default_corpus(progress=True), "default corpus")
    recall(default, cases, "default corpus (HPO definitions + teaching pack)")
    idf_comparison(default, cases)


WORD = re.compile(r"[a-z][a-z0-9-]{3,}")
STOP = {
    "with",
    "that",
    "this",
    "from",
    "which",
    "have",
    "been",
    "were",
    "their",
    "there",
    "most",
    "more",
    "than",
    "into",
    "other",
    "also",
    "only",
    "such",
    "these",
    "those",
    "what",
    "when",
    "where",
    "does",
    "each",
    "both",
}


def content_words(text: str) -> set[str]:
    return set(WORD.findall(text.lower())) - STOP


def dev_questions(datasets: tuple[str, ...] = ("medqa", "medmcqa", "mmlu")) -> list[tuple[str, str]]:
    """(question, the correct option's text) for every development question of ``datasets``, whose options are
    worded answers (not yes/no)."""
    with gzip.open(SHARED / "mirage" / "benchmark.json.gz", "rt", encoding="utf-8") as fh:
        bench = json.load(fh)
    dev = json.loads((SHARED / "mirage" / "dev_ids.json").read_text())
    return [
        (bench[d][q]["question"], bench[d][q]["options"][bench[d][q]["answer"]])
        for d in datasets
        for q in dev.get(d, [])
    ]


def whole_passages(paths: list[Path]) -> HybridRetriever:
    """The shared corpora indexed with every passage whole (as before chunking), in their own folder."""
    return open_retriever(
        paths,
        progress=True,
        cache_dir=index_dir() / "whole-passages",
        params=IndexParams(chunks=ChunkParams(size=10**9)),
    )


def chunking_section(paths: list[Path], chunked: HybridRetriever) -> None:
    """What MedRAG's reader gets on the embedded model (its question as the query, k = 32, hybrid, the laptop
    reading budget) with passages whole and in chunks, on the same development questions, paired."""
    budget = SHIPPED.read_tokens * CHARS_PER_TOKEN
    questions = dev_questions()
    print(
        f"chunking long passages: MedRAG's retrieval for {len(questions)} MIRAGE dev questions (medqa, medmcqa, "
        f"mmlu), k={K}, a reader budget of {budget:,} characters; gold-option support = share of the correct "
        f"option's content words found in what the reader reads (a proxy: no passage is labelled relevant)"
    )
    figures: dict[str, dict[str, list[float]]] = {}
    for label, retriever in (("whole passages", whole_passages(paths)), ("in chunks", chunked)):
        rows: dict[str, list[float]] = {"read": [], "sources": [], "first": [], "support": []}
        for question, gold in tqdm(questions, desc=label, leave=False):
            hits = retriever.search(question, K)
            text, shown = read_docs(hits, budget)
            rows["read"].append(len(shown))
            rows["sources"].append(len({passage_id(i) for i in shown}))
            rows["first"].append(len(format_docs(hits[:1], budget)) / budget)
            words = content_words(gold)
            rows["support"].append(len(words & content_words(text)) / len(words) if words else 0.0)
        figures[label] = rows
        print(
            f"  {label:<15} snippets read {interval(rows['read'])}   source passages read "
            f"{interval(rows['sources'])}   budget taken by the first snippet {interval(rows['first'])}   "
            f"gold-option support {interval(rows['support'])}"
        )
    a, b = figures["whole passages"]["support"], figures["in chunks"]["support"]
    diff = np.array(b) - np.array(a)
    p = wilcoxon(b, a).pvalue if diff.any() else 1.0
    print(
        f"  in chunks − whole: gold-option support {np.mean(diff):+.3f}, higher on {(diff > 0).sum()} questions, "
        f"lower on {(diff < 0).sum()}, Wilcoxon p = {p:.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=100, help="queries per latency measurement")
    parser.add_argument("--synthetic", type=int, default=300_000, help="snippets in the synthetic corpus")
    parser.add_argument("--skip-shared", action="store_true")
    parser.add_argument("--skip-synthetic", action="store_true")
    parser.add_argument("--skip-recall", action="store_true")
    parser.add_argument(
        "--skip-chunking",
        action="store_true",
        help="no whole-passage index of the shared corpora (built once, about 30 minutes)",
    )
    args = parser.parse_args()
    # Smallest first: memory is measured as the growth of this process.
    if not args.skip_recall:
        recall_section()
    if not SHARED.is_dir():
        print(f"{SHARED} is absent: no figures for the shared and synthetic corpora")
        return
    shared_paths = sorted((SHARED / "corpora").glob("*.jsonl.gz"))
    queries = mirage_questions(args.queries)
    if not args.skip_shared:
        shared = open_measured(shared_paths, "shared corpora")
        latency(shared, queries, "shared")
        if not args.skip_chunking:
            chunking_section(shared_paths, shared)
    if not args.skip_synthetic:
        with tempfile.TemporaryDirectory(prefix="retrieval-bench-") as tmp:
            corpus = Path(tmp) / "synthetic.jsonl.gz"
            write_synthetic(corpus, args.synthetic, shared_paths)
            label = "synthetic corpus with random snippet vectors (for size and latency only)"
            retriever = open_measured([corpus], label, embedder=RandomVectors(), cache_dir=Path(tmp) / "indexes")
            latency(retriever, queries, "synthetic")


if __name__ == "__main__":
    main()
