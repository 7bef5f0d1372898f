"""MiniLM (the studio's embedder) on a GPU: how fast an ingest can embed, for what a large corpus costs to build.

Runs on a machine with a CUDA GPU and nothing else of the studio installed: give it the studio's ``core/engine/retrieval``
``dense.py`` and ``progress.py`` (under ``core/engine/retrieval/`` beside this script, with empty ``__init__.py`` files),
the model folder (``model/``, float16 weights travel in half the bytes) and the real corpora's chunks
(``chunks.jsonl.xz``: one JSON object a line with corpus, row, id and text, in row order), then

    OUT=results python3 gpu_embed_bench.py

It measures (1) the studio's ``Embedder(device="cuda")`` in an ingest's batch shapes, (2) the model alone: the
tokenizer over every text (its threads on) and the forward pass on length-sorted batches, which is what any
embedding code pays at the least, and (3) float16 against float32 vectors. It writes ``gpu_embed.json`` and the
snippets' float16 vectors (``vectors_*.npy``, ``ids.npy``: what ``benchmarks/gpu_vectors.py`` reads).
"""

import json
import lzma
import os
import sys
import time

os.environ["TOKENIZERS_PARALLELISM"] = "true"
import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from core.engine.retrieval.dense import Embedder  # noqa: E402 - after the path set-up: it runs as a plain script

OUT = os.environ.get("OUT", "results")


def timed(fn):
    torch.cuda.synchronize()
    started = time.perf_counter()
    out = fn()
    torch.cuda.synchronize()
    return out, time.perf_counter() - started


def main() -> None:
    os.makedirs(OUT, exist_ok=True)
    with lzma.open(os.path.join(HERE, "chunks.jsonl.xz"), "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    texts = [r["text"] for r in rows]
    result = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "snippets": len(texts), "runs": {}}
    embedder = Embedder(model_path=os.path.join(HERE, "model"), device="cuda")
    embedder.encode(texts[:4096], batch=4096)  # warm-up: kernels, allocator
    for model_batch in (512, 2048):
        embedder.model_batch = model_batch
        for batch in (256, 4096):  # what `index --batch` hands the embedder at a time, in corpus order
            vectors, seconds = timed(
                lambda b=batch: np.concatenate(
                    [embedder.encode(texts[i : i + b], batch=b) for i in range(0, len(texts), b)]
                )
            )
            result["runs"][f"Embedder, batch {batch}, model batch {model_batch}"] = {
                "seconds": round(seconds, 2),
                "per_s": round(len(texts) / seconds),
            }
    model = embedder._load()
    tokenizer, bert = model.tokenizer, model[0].auto_model
    encoded, result["tokenize_s"] = timed(lambda: tokenizer(texts, truncation=True, max_length=256))
    order = np.argsort([len(ids) for ids in encoded["input_ids"]])

    def forward(size: int) -> None:
        with torch.inference_mode():
            for start in range(0, len(order), size):
                picked = order[start : start + size]
                batch = tokenizer.pad(
                    {k: [encoded[k][i] for i in picked] for k in ("input_ids", "attention_mask")}, return_tensors="pt"
                )
                mask = batch["attention_mask"].cuda()
                hidden = bert(input_ids=batch["input_ids"].cuda(), attention_mask=mask).last_hidden_state
                weights = mask.unsqueeze(-1).to(hidden.dtype)
                torch.nn.functional.normalize((hidden * weights).sum(1) / weights.sum(1), dim=-1).float().cpu()

    for size in (256, 1024, 4096):
        result[f"forward_s_batch_{size}"] = round(timed(lambda s=size: forward(s))[1], 2)
    lengths = np.array([len(ids) for ids in encoded["input_ids"]])
    result["word_pieces_mean"], result["word_pieces_at_cap"] = float(lengths.mean()), float((lengths >= 256).mean())
    model.float()
    reference, _ = timed(lambda: embedder.encode(texts, batch=len(texts)))
    cosine = (vectors * reference).sum(axis=1)
    result["float16_vs_float32_cosine"] = {"mean": float(cosine.mean()), "min": float(cosine.min())}
    result["peak_gpu_bytes"] = int(torch.cuda.max_memory_allocated())
    np.save(os.path.join(OUT, "ids.npy"), np.array([f"{r['corpus']}\t{r['row']}\t{r['id']}" for r in rows]))
    for i, start in enumerate(range(0, len(texts), 18500)):
        np.save(os.path.join(OUT, f"vectors_{i}.npy"), vectors[start : start + 18500].astype(np.float16))
    with open(os.path.join(OUT, "gpu_embed.json"), "w") as fh:
        json.dump(result, fh, indent=1)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
