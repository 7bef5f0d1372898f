"""BM25 as rank-bm25 scores it, kept as sparse arrays; reciprocal rank fusion arithmetic."""

from __future__ import annotations

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from core.engine.retrieval.bm25 import BM25Index, BM25Params, Collection, tokenize
from core.engine.retrieval.fusion import merge_by_score, rrf

TEXTS = [
    "Metformin lowers hepatic glucose production in type 2 diabetes.",
    "Insulin is required in type 1 diabetes; diabetes ketoacidosis is an emergency.",
    "Beta blockers slow the heart rate in atrial fibrillation.",
    "Warfarin needs INR monitoring; the INR target is usually 2 to 3.",
    "The the the and of",  # only stop words: an empty document
    "Thyroid hormone excess causes a fast heart rate and weight loss.",
]


def test_tokenizer_lowercases_and_drops_stop_words_and_long_runs():
    assert tokenize("The INR of Warfarin, and B12!") == ["inr", "warfarin", "b12"]
    assert tokenize("a" * 41 + " ok") == ["ok"]


@pytest.mark.parametrize(
    "query",
    ["diabetes", "heart rate atrial", "diabetes diabetes insulin", "INR target warfarin unknownword", "the and"],
)
def test_sparse_scores_equal_rank_bm25(query):
    index = BM25Index.build(TEXTS)
    reference = BM25Okapi([tokenize(t) for t in TEXTS]).get_scores(tokenize(query))
    np.testing.assert_allclose(index.scores(query), reference, rtol=1e-5, atol=1e-6)


def test_bm25_params_change_scores_and_survive_save_and_load(tmp_path):
    params = BM25Params(k1=0.9, b=0.4)
    index = BM25Index.build(TEXTS, params)
    reference = BM25Okapi([tokenize(t) for t in TEXTS], k1=0.9, b=0.4).get_scores(tokenize("heart rate"))
    np.testing.assert_allclose(index.scores("heart rate"), reference, rtol=1e-5)
    index.save(tmp_path)
    loaded = BM25Index.load(tmp_path)
    assert loaded.size == len(TEXTS)
    np.testing.assert_array_equal(loaded.scores("heart rate"), index.scores("heart rate"))
    assert not loaded.scores("nothing matches").any()


# Every text four words long, so each corpus's average length is the union's and collection scores are exact.
SMALL = ["warfarin inr target range", "warfarin bleeding risk rises", "heart rate atrial fibrillation"]
LARGE = [f"phenotype term number{i} abnormality" for i in range(40)] + ["warfarin skin necrosis rare"]


@pytest.mark.parametrize("query", ["warfarin", "warfarin bleeding abnormality", "phenotype heart", "unknownword"])
def test_collection_scores_corpora_as_one_index(query):
    """Each corpus's own idf makes a word that is common in a small corpus weigh less than the same word in a large
    one; a collection scores both as rank-bm25 would score their union."""
    small, large = BM25Index.build(SMALL), BM25Index.build(LARGE)
    union = BM25Okapi([tokenize(t) for t in SMALL + LARGE]).get_scores(tokenize(query))
    scored = np.concatenate(Collection([small, large]).scores(query))
    np.testing.assert_allclose(scored, union, rtol=1e-5, atol=1e-6)


def test_collection_fixes_the_ranking_that_separate_indexes_get_wrong():
    small, large = BM25Index.build(SMALL), BM25Index.build(LARGE)
    separate = np.concatenate([small.scores("warfarin"), large.scores("warfarin")])
    together = np.concatenate(Collection([small, large]).scores("warfarin"))
    # separately, the one warfarin snippet of the large corpus outscores both of the small corpus's (rare there)
    assert separate.argmax() == len(SMALL) + len(LARGE) - 1
    # as one collection the word weighs the same everywhere: three snippets of one length holding it once tie
    np.testing.assert_allclose(together[[0, 1, -1]], together[0], rtol=1e-5)


def test_collection_of_one_index_is_that_index_and_zero_idf_terms_stay_zero():
    index = BM25Index.build(TEXTS)
    np.testing.assert_array_equal(Collection([index]).scores("heart rate")[0], index.scores("heart rate"))
    # "alpha" is in exactly half the texts: idf 0, stored weight 0, and a collection's idf cannot rescale it
    half = BM25Index.build(["alpha beta", "alpha gamma", "delta gamma", "delta beta"])
    scores = half.scores("alpha", {"alpha": 1.0})
    assert np.isfinite(scores).all() and not scores.any()


def test_rrf_sums_reciprocal_ranks_with_k_60():
    fused = dict(rrf({"bm25": ["a", "b", "c"], "dense": ["b", "d"]}))
    assert fused["a"] == pytest.approx(1 / 61)
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert fused["c"] == pytest.approx(1 / 63)
    assert fused["d"] == pytest.approx(1 / 62)
    assert [key for key, _ in rrf({"bm25": ["a", "b", "c"], "dense": ["b", "d"]})] == ["b", "a", "d", "c"]


def test_rrf_k_sets_how_much_top_ranks_dominate():
    rankings = {"r1": ["x", "y", "z"], "r2": ["z", "y", "x"]}
    # k=0: x and z have 1 + 1/3, y has 1/2 + 1/2; at k=60 the three are almost level
    assert dict(rrf(rankings, k=0))["x"] == pytest.approx(4 / 3) and rrf(rankings, k=0)[-1][0] == "y"
    fused = dict(rrf(rankings))
    assert fused["y"] == pytest.approx(2 / 62) and fused["x"] - fused["y"] < 1e-5


def test_merge_by_score_interleaves_corpora_by_raw_score():
    one = [(("one", 0), 9.0), (("one", 1), 2.0)]
    two = [(("two", 0), 5.0), (("two", 1), 4.0)]
    assert [key for key, _ in merge_by_score([one, two], 3)] == [("one", 0), ("two", 0), ("two", 1)]
