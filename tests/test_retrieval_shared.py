"""Real corpora (../shared/data/corpora), cut to a few dozen lines each so the dense index builds in seconds on two
cores; the whole set is measured by benchmarks/retrieval_bench.py instead."""

from __future__ import annotations

import gzip

import pytest

from core.engine.retrieval import describe_corpora, open_retriever

pytestmark = pytest.mark.shared

# Lines (0-based) kept of each file: medquad's 28-39 hold its Hairy Cell Leukemia answers (long ones among them),
# and 281-283 repeat the ids of 277-279 for different answers; the OpenStax lines end in the chapters searched for.
LINES = {
    "medquad_answers": [*range(28, 40), 277, 278, 279, 281, 282, 283],
    "openstax_anatomy_physiology_2e": list(range(50, 80)),
    "openstax_microbiology": list(range(50, 80)),
}


@pytest.fixture(scope="module")
def _built() -> dict:
    return {}


@pytest.fixture
def shared_subset(shared_data, _built, tmp_path_factory):
    """The chosen lines of each shared corpus, copied once per module."""
    if "paths" not in _built:
        folder = tmp_path_factory.mktemp("shared_subset")
        for name, keep in LINES.items():
            with gzip.open(shared_data / "corpora" / f"{name}.jsonl.gz", "rt", encoding="utf-8") as src:
                lines = [line for i, line in zip(range(max(keep) + 1), src) if i in keep]
            with gzip.open(folder / f"{name}.jsonl.gz", "wt", encoding="utf-8") as dst:
                dst.writelines(lines)
        _built["paths"] = [folder / f"{name}.jsonl.gz" for name in LINES]
    return _built["paths"]


@pytest.fixture
def retriever(shared_subset, _built, tmp_path_factory):
    if "retriever" not in _built:
        _built["retriever"] = open_retriever(shared_subset, cache_dir=tmp_path_factory.mktemp("indexes"))
    return _built["retriever"]


@pytest.mark.parametrize(
    ("query", "corpus", "title_part"),
    [
        (
            "negative feedback keeps body temperature near its set point",
            "openstax_anatomy_physiology_2e",
            "Homeostasis",
        ),
        ("treatment of hairy cell leukemia", "medquad_answers", "Hairy Cell Leukemia"),
        ("bacteria, archaea, fungi and protozoa are types of microorganisms", "openstax_microbiology", "Types of"),
    ],
)
def test_hybrid_search_finds_the_right_corpus_and_chapter(retriever, query, corpus, title_part):
    top = retriever.search(query, 3)
    assert top[0].corpus == corpus and title_part in top[0].title
    assert set(top[0].scores) == {"bm25", "dense"} and top[0].ranks


def test_repeated_ids_in_the_shared_corpus_are_kept_under_new_ids_and_reported(retriever, shared_subset, tmp_path):
    index = retriever.indexes["medquad_answers"]
    assert index.manifest["renamed_count"] > 0 and index.manifest["skipped_count"] == 0
    # every line is one passage; the long ones are indexed as several chunks
    assert index.manifest["split_passages"] > 0 and index.size > len(LINES["medquad_answers"])
    renamed = index.manifest["renamed"][0]
    assert renamed[0].endswith("medquad_answers.jsonl.gz") and "is kept as" in renamed[2]


def test_balanced_search_draws_from_every_shared_corpus(retriever):
    hits = retriever.search("cells of the immune system", 6, balanced=True)
    assert sorted(h.corpus for h in hits) == sorted(list(LINES) * 2)


def test_describe_lists_the_shared_corpora_as_built(retriever, shared_subset):
    cache = retriever.indexes["medquad_answers"].folder.parent
    infos = describe_corpora(shared_subset, cache_dir=cache)
    assert [i.name for i in infos] == list(LINES) and all(i.built for i in infos)
    assert [i.snippets for i in infos] == [retriever.indexes[name].size for name in LINES]
