"""Qdrant's own engine (``qdrant-edge-py``: the segments, HNSW graph, sparse inverted index and payload index a
Qdrant server runs, here in this process) against today's in-process index on the default corpus (HPO definitions
and the teaching pack), the same vectors (taken from today's index), the 22 teaching cases' questions. BM25 must
agree exactly; dense differs only where Qdrant's HNSW graph is approximate while today's index below 100k snippets is
exact.

Where ``make setup`` or ``make run`` built the whole default corpus in this checkout (16,839 snippets: past Qdrant's
full-scan threshold, so its HNSW graph answers), that one; otherwise the tests' small default corpus
(tests/conftest.py), which the engine searches exhaustively."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core.engine.retrieval import describe_corpora, open_retriever
from core.engine.retrieval.corpus import corpus_sources
from core.engine.retrieval.default_corpus import HPO_FILE, default_corpus_paths
from core.engine.retrieval.hybrid import HybridRetriever
from core.engine.retrieval.location import InProcess
from core.engine.retrieval.qdrant.backend import QdrantBackend
from core.engine.retrieval.qdrant.edge import EdgeStore
from core.engine.retrieval.qdrant.ingest import FromIndex, ingest
from core.studio.teaching import load_cases
from tests.conftest import HPO_TERMS, checkout_default_corpus

K = 32
WHOLE = 16_839  # the whole default corpus's snippets


def default_corpus() -> tuple[list[Path], Path | None]:
    """The whole default corpus and its index folder where this checkout has them built, else the tests' own."""
    paths, index_dir = checkout_default_corpus()
    if (paths[0] / HPO_FILE).is_file() and all(
        c.built for c in describe_corpora(paths, cache_dir=index_dir, location=InProcess())
    ):
        return paths, index_dir
    return default_corpus_paths(), None


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    paths, cache_dir = default_corpus()
    in_process = open_retriever(paths, cache_dir=cache_dir, location=InProcess())
    store = EdgeStore(tmp_path_factory.mktemp("edge"))
    records = [
        ingest(store, s, FromIndex(in_process.indexes[s.name]), batch=1024).record for s in corpus_sources(paths)
    ]
    yield in_process, HybridRetriever(QdrantBackend(store, records), in_process.embedder), store
    store.close()


def overlap(a, b) -> float:
    return len({h.snippet_id for h in a} & {h.snippet_id for h in b}) / K


def test_the_default_corpus_is_in_qdrants_engine_whole(both):
    in_process, qdrant, store = both
    snippets = sum(index.size for index in in_process.indexes.values())  # as today's index holds them
    assert sum(r.snippets for r in qdrant.backend.records.values()) == snippets >= min(WHOLE, HPO_TERMS)
    assert store.shard.info().points_count > snippets  # the snippets, and each corpus's record and frequencies
    assert qdrant.corpora == in_process.corpora == ["hpo", "teaching_pack"]


def test_bm25_agrees_exactly_and_dense_up_to_the_graphs_approximation(both):
    in_process, qdrant, _ = both
    questions = [case.question for case in load_cases()]
    dense, hybrid = [], []
    for question in questions:
        ours, theirs = in_process.search(question, K, mode="bm25"), qdrant.search(question, K, mode="bm25")
        assert [h.snippet_id for h in ours] == [h.snippet_id for h in theirs]
        assert [h.score for h in theirs] == pytest.approx([h.score for h in ours], rel=1e-5)
        dense.append(overlap(in_process.search(question, K, mode="dense"), qdrant.search(question, K, mode="dense")))
        hybrid.append(overlap(in_process.search(question, K), qdrant.search(question, K)))
    assert np.mean(dense) >= 0.97 and min(dense) >= 0.9, dense
    assert np.mean(hybrid) >= 0.95 and min(hybrid) >= 0.85, hybrid


def test_filters_exclusions_pins_and_source_balance_hold_in_the_engine(both):
    in_process, qdrant, _ = both
    question = load_cases()[0].question
    top = [h.snippet_id for h in qdrant.search(question, 5, mode="bm25")]
    dropped = qdrant.search(question, 5, mode="bm25", exclude=frozenset(top[:2]))
    assert [h.snippet_id for h in dropped][:3] == top[2:5]
    pinned = qdrant.search(question, 5, pin=frozenset({"HP:0000002"}), corpora=["hpo"])
    assert pinned[0].snippet_id == "HP:0000002" and pinned[0].pinned and {h.corpus for h in pinned} == {"hpo"}
    balanced = qdrant.search(question, 8, balanced=True)
    assert {h.corpus for h in balanced} == {"hpo", "teaching_pack"}
    ours = in_process.search(question, 8, balanced=True, mode="bm25")
    assert [h.snippet_id for h in qdrant.search(question, 8, balanced=True, mode="bm25")] == [
        h.snippet_id for h in ours
    ]


def test_the_shard_reopens_from_its_folder(both, tmp_path):
    in_process, qdrant, store = both
    question = load_cases()[1].question
    before = [h.snippet_id for h in qdrant.search(question, K)]
    store.close()
    reopened = EdgeStore(store.folder)
    again = HybridRetriever(QdrantBackend(reopened, list(qdrant.backend.records.values())), in_process.embedder)
    assert [h.snippet_id for h in again.search(question, K)] == before
    store.shard = reopened.shard  # the module's fixture goes on with the reopened shard
