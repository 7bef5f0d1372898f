"""Equivalence: the Qdrant backend against today's in-process index, on the teaching cases and MIRAGE dev questions.

    .venv/bin/python -m benchmarks.qdrant_equivalence [--questions 50] [--answer-minutes 30]

- The 22 teaching cases search the default corpus (HPO definitions + the teaching pack) as today's index holds it
  (the one ``make setup`` builds); Qdrant gets the same vectors from it (``index --engine qdrant --from-index``,
  the way a corpus moves to Qdrant without being embedded again).
- The dev questions (the first of each MIRAGE dataset's development ids, in turn) search the shared corpora; today's
  index is built here from the GPU-embedded vectors (``benchmarks/gpu_vectors.py``) and Qdrant gets the same.
- Qdrant is measured twice on the teaching cases: its engine in-process (Edge, an HNSW graph as a server builds) and
  the client's local mode (brute force), which tells the graph's approximation from everything else; the dev
  questions on the engine alone (the local mode, pure Python, takes minutes to take in their 38,620 snippets).
- Top-32 overlap of each retriever (the share of today's top 32 that Qdrant also returns); recall@5 of each teaching
  case's key passages (its question searched, hybrid); and MedRAG's answers on the embedded model, today's index
  first, then Qdrant with the same response cache, so that only questions whose read documents differ cost a call,
  as many as fit in ``--answer-minutes`` (paired: exact McNemar). Results go to
  ``benchmarks/results/qdrant_equivalence.json``, saved after every answer, so a stopped run carries on.
"""

from __future__ import annotations

import argparse
import gzip
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.gpu_vectors import FOLDER, Precomputed, table_for
from core.engine.paths import REPO_ROOT
from core.engine.question import Question
from core.engine.retrieval import open_retriever
from core.engine.retrieval.corpus import corpus_sources
from core.engine.retrieval.default_corpus import default_corpus_paths
from core.engine.retrieval.hybrid import HybridRetriever
from core.engine.retrieval.location import InProcess
from core.engine.retrieval.qdrant.backend import QdrantBackend
from core.engine.retrieval.qdrant.edge import EdgeStore
from core.engine.retrieval.qdrant.ingest import FromIndex, ingest
from core.engine.retrieval.qdrant.store import ClientStore
from core.studio.teaching import load_cases

RESULTS = REPO_ROOT / "benchmarks" / "results" / "qdrant_equivalence.json"
SHARED = REPO_ROOT.parent / "shared" / "data"
K = 32


def dev_questions(n: int) -> list[tuple[str, Question, str]]:
    """(id, question, answer): the development ids taken in turn across the datasets, so n covers all five."""
    with gzip.open(SHARED / "mirage" / "benchmark.json.gz", "rt", encoding="utf-8") as fh:
        bench = json.load(fh)
    dev = json.loads((SHARED / "mirage" / "dev_ids.json").read_text())
    order = [
        (d, ids[i]) for i in range(max(len(ids) for ids in dev.values())) for d, ids in dev.items() if i < len(ids)
    ]
    return [
        (f"{d}/{q}", Question(text=bench[d][q]["question"], options=bench[d][q]["options"]), bench[d][q]["answer"])
        for d, q in order[:n]
    ]


def qdrant_twins(in_process: HybridRetriever, folder: Path, local_mode: bool = True) -> dict[str, HybridRetriever]:
    """Qdrant's engine and (unless told not to) the client's local mode, each given today's index's vectors."""
    twins = {}
    stores = [("edge", EdgeStore(folder / "edge"))] + (
        [("local mode", ClientStore(str(folder / "local")))] if local_mode else []
    )
    for name, store in stores:
        started = time.perf_counter()
        records = [
            ingest(store, index.source, FromIndex(index), batch=1024).record for index in in_process.indexes.values()
        ]
        print(
            f"  {name}: ingested {sum(r.snippets for r in records):,} snippets in {time.perf_counter() - started:.0f} s"
        )
        twins[name] = HybridRetriever(QdrantBackend(store, records), in_process.embedder)
    return twins


def overlaps(in_process: HybridRetriever, twins: dict[str, HybridRetriever], queries: dict[str, str]) -> dict:
    out: dict = {}
    for name, twin in twins.items():
        for mode in ("hybrid", "bm25", "dense"):
            shares = {}
            for qid, text in queries.items():
                ours = [h.snippet_id for h in in_process.search(text, K, mode=mode)]
                theirs = [h.snippet_id for h in twin.search(text, K, mode=mode)]
                shares[qid] = len(set(ours) & set(theirs)) / max(len(ours), 1)
            values = np.array(list(shares.values()))
            out.setdefault(name, {})[mode] = {
                "mean": round(float(values.mean()), 4),
                "min": round(float(values.min()), 4),
                "identical": int((values == 1).sum()),
                "n": len(values),
                "per_query": shares,
            }
        print(
            f"  {name}: "
            + ", ".join(
                f"{m} {v['mean']:.3f} (min {v['min']:.3f}, {v['identical']}/{v['n']} identical)"
                for m, v in out[name].items()
            )
        )
    return out


def recall_at_5(retrievers: dict[str, HybridRetriever]) -> dict:
    cases = load_cases()
    out = {}
    for name, r in retrievers.items():
        out[name] = {
            c.id: len(set(c.key_passages) & {h.snippet_id for h in r.search(c.question, 5)}) / len(c.key_passages)
            for c in cases
        }
        print(f"  recall@5 {name}: {np.mean(list(out[name].values())):.3f}")
    return out


def load() -> dict:
    return json.loads(RESULTS.read_text(encoding="utf-8")) if RESULTS.exists() else {}


def save(results: dict) -> None:
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def answers(
    sets: dict[str, tuple[dict[str, HybridRetriever], list[tuple[str, Question, str]]]], minutes: float, results: dict
) -> None:
    """MedRAG on the embedded model, today's index first (within the time), then Qdrant's engine on the same
    questions with the same response cache."""
    from core.engine.llm import LLM
    from core.engine.llm.cache import ResponseCache
    from core.engine.runner import execute

    llm = LLM(cache=ResponseCache(FOLDER / "llm_cache.sqlite"))
    runs = results.setdefault("answers", {})
    deadline = time.monotonic() + minutes * 60
    for arm in ("in-process", "edge"):
        for retrievers, items in sets.values():
            for qid, question, answer in items:
                if arm == "in-process" and qid not in runs and time.monotonic() > deadline:
                    continue
                if arm == "edge" and "in-process" not in runs.get(qid, {}):
                    continue
                if arm in runs.get(qid, {}):
                    continue
                run = execute("medrag", question, llm=llm, retriever=retrievers[arm])
                read = next((e.payload.read for e in run.events if e.kind == "agent_message"), None)
                choice = run.answer.choice if run.answer else None
                runs.setdefault(qid, {})[arm] = {
                    "status": run.status,
                    "choice": choice,
                    "correct": choice == answer,
                    "read": read,
                    "calls": run.totals.calls,
                    "cached": run.totals.cached,
                    "seconds": run.totals.seconds,
                    "prompt_tokens": run.totals.prompt_tokens,
                    "completion_tokens": run.totals.completion_tokens,
                }
                save(results)
                print(
                    f"  {arm} {qid}: {choice} ({'right' if choice == answer else 'wrong'}), "
                    f"{run.totals.seconds:.1f} s{' (cached)' if run.totals.cached else ''}",
                    flush=True,
                )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=50, help="MIRAGE dev questions (default 50)")
    ap.add_argument(
        "--answer-minutes",
        type=float,
        default=30.0,
        help="time for MedRAG's first runs on today's index (Qdrant's then reuse the cache)",
    )
    ap.add_argument("--answers-only", action="store_true", help="keep the overlaps measured before; run answers")
    args = ap.parse_args(argv)
    results = load()
    folder = Path(tempfile.mkdtemp(prefix="qdrant-equivalence-"))
    print("teaching cases: the default corpus as today's index holds it")
    teaching = open_retriever(default_corpus_paths(), location=InProcess())
    teaching_twins = qdrant_twins(teaching, folder / "teaching", local_mode=not args.answers_only)
    cases = load_cases()
    if not args.answers_only:
        results["teaching"] = overlaps(teaching, teaching_twins, {c.id: c.question for c in cases})
        results["recall_at_5"] = recall_at_5({"in-process": teaching, **teaching_twins})
    print(f"dev questions: the shared corpora, today's index built from GPU vectors ({args.questions} questions)")
    shared = corpus_sources(sorted((SHARED / "corpora").glob("*.jsonl.gz")))
    embedder = Precomputed(table_for(shared))
    dev_index = open_retriever(
        [s.path for s in shared], location=InProcess(), embedder=embedder, progress=True, cache_dir=FOLDER / "indexes"
    )
    dev_twins = qdrant_twins(dev_index, folder / "dev", local_mode=False)  # the local mode took 6 minutes here
    asked = dev_questions(args.questions)
    if not args.answers_only:
        results["dev"] = overlaps(dev_index, dev_twins, {qid: q.text for qid, q, _ in asked})
    results["sizes"] = {
        "teaching": sum(i.size for i in teaching.indexes.values()),
        "dev": sum(i.size for i in dev_index.indexes.values()),
        "questions": len(asked),
        "cases": len(cases),
    }
    save(results)
    if args.answer_minutes > 0:
        print(f"MedRAG on the embedded model: today's index first, at most {args.answer_minutes:.0f} minutes")
        sets = {
            "teaching": (
                {"in-process": teaching, **teaching_twins},
                [(f"teaching/{c.id}", c.to_question(), c.answer) for c in cases],
            ),
            "dev": ({"in-process": dev_index, **dev_twins}, asked),
        }
        answers(sets, args.answer_minutes, results)


if __name__ == "__main__":
    main()
