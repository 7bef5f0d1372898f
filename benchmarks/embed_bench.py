"""Embedding benchmark: float32 against bfloat16 for the snippets of an index build.

    .venv/bin/python -m benchmarks.embed_bench [--sample 3000] [--seed 0]

Encodes a seeded sample of the default corpus's snippets (every teaching-pack passage among them) twice in one
process, in float32 and in bfloat16 (torch autocast, which the index build uses where the CPU multiplies in
bfloat16 natively), and prints the seconds of each and their ratio, the cosine of each bfloat16 vector to its
float32 one, and how many of each query's nearest snippets stay the same (queries in float32, as at search time:
the teaching cases' questions, and the first 10 MIRAGE dev questions of each dataset when ../shared/data is there).
Results are written to ``benchmarks/results/embed_bench.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import numpy as np

from core.engine.paths import REPO_ROOT
from core.engine.retrieval.chunking import split_long
from core.engine.retrieval.corpus import corpus_sources, read_corpus
from core.engine.retrieval.default_corpus import ensure_default_corpus
from core.engine.retrieval.dense import Embedder, native_bf16
from core.studio.eval.mirage import load_benchmark, load_ids
from core.studio.teaching import load_cases

RESULTS = REPO_ROOT / "benchmarks" / "results" / "embed_bench.json"
MIRAGE = REPO_ROOT.parent / "shared" / "data" / "mirage"
NEIGHBOURS = (5, 10, 32)


def snippets(sample: int, seed: int) -> list[str]:
    texts, teaching = [], []
    for source in corpus_sources(ensure_default_corpus()):
        found, _ = split_long(read_corpus(source)[0])
        (teaching if source.name == "teaching_pack" else texts).extend(s.contents for s in found)
    return random.Random(seed).sample(texts, min(sample, len(texts))) + teaching


def queries() -> list[str]:
    found = [case.question for case in load_cases()]
    if (MIRAGE / "dev_ids.json").is_file():
        bench = load_benchmark(MIRAGE / "benchmark.json.gz")
        for dataset, ids in load_ids(MIRAGE / "dev_ids.json").items():
            found += [bench[dataset][i]["question"] for i in ids[:10]]
    return found


def timed(embedder: Embedder, texts: list[str]) -> tuple[np.ndarray, float]:
    embedder.encode(texts[:64])  # the model loaded and warm before the clock starts
    started = time.perf_counter()
    vectors = embedder.encode(texts)
    return vectors, time.perf_counter() - started


def markdown(r: dict) -> str:
    """The results file as docs/results/embed_bench.md shows it."""
    kept = ", ".join(f"top {k}: {v:.1%}" for k, v in r["neighbours_kept"].items())
    same = ", ".join(f"top {k}: {v:.1%}" for k, v in r["same_set"].items())
    return (
        f"Embedding {r['snippets']:,} default-corpus snippets in bfloat16 against float32 ({r['at']}):\n\n"
        f"| | value |\n| --- | --- |\n| float32 | {r['float32_s']:.1f} s |\n| bfloat16 | {r['bfloat16_s']:.1f} s "
        f"({r['ratio']:.2f} of float32) |\n| cosine to float32 | mean {r['cosine_mean']:.6f}, least "
        f"{r['cosine_min']:.6f} |\n| neighbours kept, {r['queries']} queries | {kept} |\n"
        f"| the same set of neighbours | {same} |"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sample", type=int, default=3000, help="snippets of the default corpus (seeded sample)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=RESULTS, help="results file")
    args = p.parse_args(argv)
    if not native_bf16():
        print(
            "This CPU has no native bfloat16 (AVX-512 BF16 or AMX): index builds here encode in float32, "
            "so there is nothing to compare."
        )
        return 0
    texts, asked = snippets(args.sample, args.seed), queries()
    full, bf16 = Embedder(bf16=False), Embedder(bf16=True)
    ref, ref_s = timed(full, texts)
    low, low_s = timed(bf16, texts)
    cosines = np.sum(ref * low, axis=1)
    q = np.stack([full.encode_query(text) for text in asked])
    near_ref, near_low = np.argsort(-(q @ ref.T), axis=1), np.argsort(-(q @ low.T), axis=1)
    kept = {k: [len(set(a[:k]) & set(b[:k])) / k for a, b in zip(near_ref, near_low)] for k in NEIGHBOURS}
    result = {
        "snippets": len(texts),
        "queries": len(asked),
        "float32_s": round(ref_s, 1),
        "bfloat16_s": round(low_s, 1),
        "ratio": round(low_s / ref_s, 2),
        "cosine_mean": float(cosines.mean()),
        "cosine_min": float(cosines.min()),
        "neighbours_kept": {k: round(float(np.mean(v)), 4) for k, v in kept.items()},
        "same_set": {k: round(float(np.mean([x == 1 for x in v])), 3) for k, v in kept.items()},
        "at": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    print(f"{len(texts)} snippets of the default corpus, {len(asked)} queries")
    print(
        f"float32 {ref_s:.1f} s ({len(texts) / ref_s:.0f} snippets/s), bfloat16 {low_s:.1f} s "
        f"({len(texts) / low_s:.0f} snippets/s): ratio {low_s / ref_s:.2f}"
    )
    print(f"cosine of bfloat16 to float32 vectors: mean {cosines.mean():.6f}, min {cosines.min():.6f}")
    for k in NEIGHBOURS:
        print(
            f"top {k}: {result['neighbours_kept'][k]:.4f} of the neighbours kept on average; "
            f"the same set for {result['same_set'][k]:.1%} of {len(asked)} queries"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
