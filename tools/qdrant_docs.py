"""The measured tables of ``docs/retrieval-at-scale.md``, drawn from ``benchmarks/results/qdrant_equivalence.json``,
``qdrant_scale.json`` and ``gpu_embed.json``. ``python -m tools.docs`` writes them into the page (each between
``<!-- table:NAME -->`` and ``<!-- /table -->``; only those lines) and checks them in CI.
"""

from __future__ import annotations

import json

import numpy as np

from benchmarks.retrieval_bench import interval  # recall@5 with its interval, as the retrieval benchmark prints it
from core.engine.paths import REPO_ROOT
from core.studio.eval.stats import mcnemar, wilson

RESULTS = REPO_ROOT / "benchmarks" / "results"
PAGE = REPO_ROOT / "docs" / "retrieval-at-scale.md"
GiB = 2**30
MEDCORP = 54_000_000  # Textbooks 126k + StatPearls 301k + PubMed 23.9M + Wikipedia 29.9M snippets (rounded)
DIM = 384


def _load(name: str) -> dict:
    path = RESULTS / name
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def overlap_table(eq: dict) -> str:
    sizes = eq.get("sizes", {})
    rows = [
        "| questions | corpora (snippets) | Qdrant | hybrid | BM25 | dense |",
        "| --- | --- | --- | ---: | ---: | ---: |",
    ]
    labels = {
        "teaching": (f"{sizes.get('cases', 22)} teaching cases", f"default corpus ({sizes.get('teaching', 0):,})"),
        "dev": (f"{sizes.get('questions', 0)} MIRAGE dev questions", f"shared corpora ({sizes.get('dev', 0):,})"),
    }
    for key, (questions, corpora) in labels.items():
        for engine, modes in eq.get(key, {}).items():
            cells = [
                f"{m['mean']:.3f} (min {m['min']:.2f}; {m['identical']}/{m['n']} identical)"
                for m in (modes["hybrid"], modes["bm25"], modes["dense"])
            ]
            rows.append(f"| {questions} | {corpora} | {engine} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def recall_table(eq: dict) -> str:
    rows = [
        (
            "| search backend | recall@5 of the key passages [95% bootstrap interval] | cases better / worse than "
            "today's |"
        ),
        "| --- | --- | --- |",
    ]
    per = eq.get("recall_at_5", {})
    base = per.get("in-process", {})
    for engine, cases in sorted(per.items(), key=lambda item: item[0] != "in-process"):  # today's first
        diff = np.array([cases[c] - base[c] for c in base])
        paired = "—" if engine == "in-process" else f"{int((diff > 0).sum())} / {int((diff < 0).sum())}"
        rows.append(f"| {engine} | {interval(list(cases.values()))} | {paired} |")
    return "\n".join(rows)


def answers_table(eq: dict) -> str:
    runs = {q: r for q, r in eq.get("answers", {}).items() if "in-process" in r and "edge" in r}
    rows = [
        (
            "| questions | n | same answer | today's index right [95% Wilson] | Qdrant right [95% Wilson] | "
            "read other snippets (each a new model call) | exact McNemar p |"
        ),
        "| --- | ---: | ---: | --- | --- | ---: | ---: |",
    ]
    for label, teaching in (("teaching cases", True), ("MIRAGE dev", False)):
        picked = {q: r for q, r in runs.items() if q.startswith("teaching/") == teaching}
        if not picked:
            continue
        ours = [r["in-process"]["correct"] for r in picked.values()]
        theirs = [r["edge"]["correct"] for r in picked.values()]
        same = sum(r["in-process"]["choice"] == r["edge"]["choice"] for r in picked.values())
        other = sum(r["in-process"]["read"] != r["edge"]["read"] for r in picked.values())
        *_, p = mcnemar(ours, theirs)
        n = len(picked)
        ci = [wilson(sum(x), n) for x in (ours, theirs)]
        shown = [f"{sum(x)}/{n} [{lo:.2f}–{hi:.2f}]" for x, (lo, hi) in zip((ours, theirs), ci, strict=True)]
        rows.append(f"| {label} | {n} | {same} | {shown[0]} | {shown[1]} | {other} | {p:.2f} |")
    return "\n".join(rows)


def _gib(n: float) -> str:
    return f"{n / GiB:.2f} GiB"


def _engine(r: dict) -> str:
    d = r["dense"]
    if r["engine"] == "in-process":
        graph = (
            f"FAISS HNSW M {d['hnsw_m']}, efSearch {d['hnsw_ef_search']}" if r["size"] > d["exact_limit"] else "exact"
        )
        return f"today's index ({graph})"
    return f"Qdrant Edge (HNSW m {d['hnsw_m']}, ef {d['hnsw_ef']})"


def scale_table(scale: dict) -> str:
    rows = [
        (
            "| engine | snippets | build | ingest rate | index build | hybrid p50 / p95 (k=32) | recall@32 hybrid / "
            "BM25 / dense | peak memory building | memory serving (opened / after queries) | disk |"
        ),
        "| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |",
    ]
    for key in sorted(scale, key=lambda k: (scale[k]["size"], k)):
        r = scale[key]
        if "recall_at_32" not in r:
            continue
        rec = r["recall_at_32"]
        ingest = f"{r['ingest_per_s']:,.0f}/s" if r.get("ingest_per_s") else "—"
        index = f"{r['index_build_s']:.0f} s" if r.get("index_build_s") else "—"
        rows.append(
            f"| {_engine(r)} | {r['snippets']:,} | {r['build_s']:.0f} s | {ingest} | {index} | "
            f"{r['hybrid_p50_ms']:.1f} / {r['hybrid_p95_ms']:.1f} ms | {rec['hybrid']:.3f} / {rec['bm25']:.3f}"
            f" / {rec['dense']:.3f} | {_gib(r['build_peak_rss'])} | {_gib(r['rss_after_open'])} / "
            f"{_gib(r['rss_after_queries'])} | {_gib(r['disk'])} |"
        )
    return "\n".join(rows)


def fit(scale: dict, engine: str, field: str) -> tuple[float, float] | None:
    """Bytes per snippet and fixed bytes, by a line through the measured sizes (two or more)."""
    points = sorted((r["size"], r[field]) for r in scale.values() if r["engine"] == engine and field in r)
    if len(points) < 2:
        return None
    slope, intercept = np.polyfit([p[0] for p in points], [p[1] for p in points], 1)
    return float(slope), float(intercept)


def limit_table(scale: dict) -> str:
    rows = [
        "| today's index | bytes a snippet | fixed | 24 GiB reached at (extrapolated) |",
        "| --- | ---: | ---: | ---: |",
    ]
    for field, label in (("build_peak_rss", "building (peak)"), ("rss_after_queries", "serving (after queries)")):
        line = fit(scale, "in-process", field)
        if line is None:
            continue
        slope, intercept = line
        rows.append(
            f"| {label} | {slope:,.0f} B | {_gib(intercept)} | {(24 * GiB - intercept) / slope / 1e6:.1f} M snippets |"
        )
    return "\n".join(rows)


def gpu_table(gpu: dict) -> str:
    if not gpu:
        return ""
    first, profile, check = gpu["sittings"]
    n = gpu["snippets"]
    rows = [
        "| on one " + gpu["gpu"] + f" ({n:,} real snippets, {gpu['word_pieces_mean']:.0f} word pieces on average) "
        "| seconds | snippets/s |",
        "| --- | ---: | ---: |",
    ]
    best = max(first["runs"].items(), key=lambda kv: kv[1]["per_s"])
    rows.append(
        f"| the Embedder as first shipped (float16 autocast, a copy per row), best of 8 shapes: {best[0]} | "
        f"{best[1]['seconds']:.1f} | {best[1]['per_s']:,.0f} |"
    )
    best = max(check["runs"].items(), key=lambda kv: kv[1]["per_s"])
    rows.append(
        f"| the same with float16 weights and the tokenizer's threads: {best[0]} | {best[1]['seconds']:.1f} | "
        f"{best[1]['per_s']:,.0f} |"
    )
    rows.append(
        f"| tokenizing every text (16 threads) | {profile['tokenize_s']:.1f} | {n / profile['tokenize_s']:,.0f} |"
    )
    rows.append(
        f"| the model's forward pass alone (length-sorted batches of 1,024) | {profile['forward_s_batch_1024']:.1f}"
        f" | {n / profile['forward_s_batch_1024']:,.0f} |"
    )
    both = profile["tokenize_s"] + profile["forward_s_batch_1024"]
    rows.append(f"| tokenizing then the forward pass, one after the other | {both:.1f} | {n / both:,.0f} |")
    return "\n".join(rows)


def medcorp_table(scale: dict, gpu: dict) -> str:
    edge = max(
        (r for r in scale.values() if r["engine"] == "edge" and "disk" in r), key=lambda r: r["size"], default=None
    )
    rows = ["| for 54M snippets | figure | from |", "| --- | ---: | --- |"]
    rows.append(f"| dense vectors, float32 | {_gib(MEDCORP * DIM * 4)} | 54M × 384 × 4 bytes |")
    rows.append(
        f"| dense vectors, int8 quantized (kept in RAM; originals on disk) | {_gib(MEDCORP * DIM)} | 54M × 384 |"
    )
    rows.append(f"| dense vectors, binary quantized | {_gib(MEDCORP * DIM / 8)} | 54M × 384 bits |")
    rows.append(
        f"| HNSW links (m 16: 32 on the base layer) | {_gib(MEDCORP * 32 * 4 * 1.1)} | 54M × 32 × 4 bytes, "
        "+10% upper layers |"
    )
    if edge:
        per = edge["disk"] / edge["snippets"]
        rows.append(
            f"| disk, all of it (vectors, sparse index, texts, graph) | {_gib(per * MEDCORP)} | "
            f"{per:,.0f} B a snippet measured at {edge['snippets']:,} (Qdrant Edge) |"
        )
        if edge.get("ingest_per_s"):
            rows.append(
                f"| writing the points, one 2-core writer | {MEDCORP / edge['ingest_per_s'] / 3600:.1f} h | "
                f"{edge['ingest_per_s']:,.0f} snippets/s measured (embedding aside) |"
            )
        if edge.get("index_build_s"):
            rows.append(
                f"| building the indexes, 2 cores | {edge['index_build_s'] * MEDCORP / edge['snippets'] / 3600:.0f}"
                f" h | {edge['index_build_s']:.0f} s measured at {edge['snippets']:,}, taken as linear (a graph "
                "costs a little more than that) |"
            )
    if gpu:
        profile = gpu["sittings"][1]
        per_s = gpu["snippets"] / (profile["tokenize_s"] + profile["forward_s_batch_1024"])
        rows.append(
            f"| embedding on one {gpu['gpu']} | {MEDCORP / per_s / 3600:.1f} h | {per_s:,.0f} snippets/s: "
            "tokenizing then the forward pass, measured |"
        )
    return "\n".join(rows)


def tables() -> dict[str, str]:
    eq, scale, gpu = _load("qdrant_equivalence.json"), _load("qdrant_scale.json"), _load("gpu_embed.json")
    return {
        "overlap": overlap_table(eq),
        "recall": recall_table(eq),
        "answers": answers_table(eq),
        "scale": scale_table(scale),
        "limit": limit_table(scale),
        "gpu": gpu_table(gpu),
        "medcorp": medcorp_table(scale, gpu),
    }
