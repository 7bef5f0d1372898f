"""Indexes on disk (real BM25, the real embedder, FAISS, SQLite) and hybrid search over them."""

from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from core.__main__ import main
from core.engine.retrieval import CorpusError, describe_corpora, open_retriever
from core.engine.retrieval.corpus_index import IndexParams
from core.engine.retrieval.dense import DenseParams, Embedder, default_embedder
from core.engine.retrieval.fusion import RRF_K

CARDIO = [
    (
        "af",
        "Atrial fibrillation",
        "Atrial fibrillation is an irregular, often rapid heart rhythm; anticoagulation "
        "prevents stroke in patients with a high CHA2DS2-VASc score.",
    ),
    (
        "mi",
        "Myocardial infarction",
        "Crushing chest pain with ST elevation on the ECG suggests an acute myocardial "
        "infarction; troponin rises within hours.",
    ),
    (
        "hf",
        "Heart failure",
        "Heart failure with reduced ejection fraction is treated with beta blockers, ACE "
        "inhibitors and diuretics for fluid overload.",
    ),
    (
        "htn",
        "Hypertension",
        "Hypertension is persistently raised arterial blood pressure, a major risk factor for "
        "stroke and heart disease.",
    ),
    ("peri", "Pericarditis", "Pericarditis causes sharp chest pain relieved by sitting forward, with a friction rub."),
    (
        "ae",
        "Aortic stenosis",
        "Aortic stenosis gives an ejection systolic murmur radiating to the carotids, syncope and angina.",
    ),
]
ENDO = [
    (
        "t1d",
        "Type 1 diabetes",
        "Type 1 diabetes is autoimmune destruction of pancreatic beta cells; patients need "
        "insulin and risk diabetic ketoacidosis.",
    ),
    (
        "t2d",
        "Type 2 diabetes",
        "Metformin is the first-line drug for type 2 diabetes; it lowers hepatic glucose production.",
    ),
    (
        "hypo",
        "Hypothyroidism",
        "Hypothyroidism causes fatigue, weight gain and cold intolerance; TSH is high and "
        "levothyroxine replaces the hormone.",
    ),
    (
        "graves",
        "Graves disease",
        "Graves disease is autoimmune hyperthyroidism with goitre, exophthalmos and a fast heart rate.",
    ),
    (
        "cush",
        "Cushing syndrome",
        "Cushing syndrome is cortisol excess: central obesity, striae, hypertension and high blood glucose.",
    ),
    (
        "addison",
        "Addison disease",
        "Addison disease is adrenal insufficiency with low blood pressure, hyperpigmentation and low sodium.",
    ),
]


def write_corpus(path, rows) -> None:
    path.write_text(
        "".join(json.dumps({"id": i, "title": t, "content": c, "contents": f"{t}. {c}"}) + "\n" for i, t, c in rows),
        encoding="utf-8",
    )


def write_corpora(folder, corpora: dict[str, list]) -> list:
    """One ``NAME.jsonl`` file in ``folder`` per corpus, in the order given; their paths."""
    for name, rows in corpora.items():
        write_corpus(folder / f"{name}.jsonl", rows)
    return [folder / f"{name}.jsonl" for name in corpora]


@pytest.fixture(scope="module")
def corpus_paths(tmp_path_factory):
    return write_corpora(tmp_path_factory.mktemp("corpora"), {"cardio": CARDIO, "endo": ENDO})


@pytest.fixture(scope="module")
def retriever(corpus_paths, tmp_path_factory):
    return open_retriever(corpus_paths, cache_dir=tmp_path_factory.mktemp("indexes"))


class CountingEncode:
    """Counts corpus encodings, to tell a build from a load."""

    def __init__(self, monkeypatch):
        self.calls = 0
        embedder = default_embedder()
        original = embedder.encode

        def encode(texts, *args, **kwargs):
            self.calls += 1
            return original(texts, *args, **kwargs)

        monkeypatch.setattr(embedder, "encode", encode)


# -- indexes on disk ----------------------------------------------------------------------


def test_index_is_built_once_then_loaded_from_disk(corpus_paths, tmp_path, monkeypatch):
    encodes = CountingEncode(monkeypatch)
    stages = []
    first = open_retriever(corpus_paths, cache_dir=tmp_path, progress=lambda stage, done, total: stages.append(stage))
    assert encodes.calls == 2 and all(index.built_now for index in first.indexes.values())
    assert {"read cardio", "bm25 cardio", "embed cardio", "faiss cardio", "embed endo"} <= set(stages)
    assert not any(stage.startswith("load ") for stage in stages)
    manifest = first.indexes["cardio"].manifest
    assert manifest["snippets"] == 6 and manifest["index_type"].startswith("flat")
    assert manifest["model"] == default_embedder().name and manifest["build_seconds"] >= 0

    reported = []
    second = open_retriever(corpus_paths, cache_dir=tmp_path, progress=lambda *step: reported.append(step))
    assert encodes.calls == 2 and not any(index.built_now for index in second.indexes.values())
    assert reported == [("load cardio", 0, 1), ("load cardio", 1, 1), ("load endo", 0, 1), ("load endo", 1, 1)]
    query = "anticoagulation for an irregular heart rhythm"
    assert first.search(query, 5) == second.search(query, 5)


def test_a_changed_corpus_file_or_parameter_rebuilds_only_that_index(corpus_paths, tmp_path, monkeypatch):
    cardio = tmp_path / "cardio.jsonl"
    write_corpus(cardio, CARDIO)
    open_retriever([cardio, corpus_paths[1]], cache_dir=tmp_path / "idx")
    encodes = CountingEncode(monkeypatch)

    write_corpus(cardio, [*CARDIO, ("kawasaki", "Kawasaki disease", "A childhood vasculitis with coronary aneurysms.")])
    changed = open_retriever([cardio, corpus_paths[1]], cache_dir=tmp_path / "idx")
    assert encodes.calls == 1 and changed.indexes["cardio"].built_now and not changed.indexes["endo"].built_now
    assert changed.search("childhood vasculitis coronary aneurysm", 1)[0].snippet_id == "kawasaki"

    os.utime(cardio, ns=(cardio.stat().st_atime_ns, cardio.stat().st_mtime_ns + 10**9))  # copied again: same bytes
    assert not open_retriever([cardio], cache_dir=tmp_path / "idx").indexes["cardio"].built_now
    other_params = IndexParams(dense=DenseParams(hnsw_m=16))
    assert open_retriever([cardio], cache_dir=tmp_path / "idx", params=other_params).indexes["cardio"].built_now


def test_large_corpora_get_an_approximate_index_that_still_finds_the_answer(corpus_paths, tmp_path):
    retriever = open_retriever(corpus_paths, cache_dir=tmp_path, params=IndexParams(dense=DenseParams(exact_limit=3)))
    assert retriever.indexes["endo"].manifest["index_type"].startswith("HNSW")
    assert retriever.search("thyroid hormone replacement", 1, mode="dense")[0].snippet_id == "hypo"


def test_strict_opening_refuses_an_index_built_from_skipped_lines(tmp_path):
    path = tmp_path / "messy.jsonl"
    write_corpus(path, CARDIO[:2])
    with open(path, "a") as fh:
        fh.write("{oops\n")
    retriever = open_retriever([path], cache_dir=tmp_path)
    assert retriever.indexes["messy"].report.summary().startswith("2 snippets, 1 lines skipped")
    with pytest.raises(CorpusError, match=rf"{path}:3: not valid JSON.*built leniently"):
        open_retriever([path], cache_dir=tmp_path, strict=True)


def test_describe_corpora_reports_sizes_and_index_status(corpus_paths, tmp_path):
    cardio = tmp_path / "cardio.jsonl"
    write_corpus(cardio, CARDIO)
    (before,) = describe_corpora([cardio], cache_dir=tmp_path / "idx")
    assert (before.name, before.snippets, before.built, before.stale) == ("cardio", 6, False, False)
    assert before.index_bytes == 0
    open_retriever([cardio], cache_dir=tmp_path / "idx")
    (after,) = describe_corpora([cardio], cache_dir=tmp_path / "idx")
    assert after.built and after.index_bytes > 0 and after.corpus_bytes == cardio.stat().st_size
    write_corpus(cardio, CARDIO[:4])
    (changed,) = describe_corpora([cardio], cache_dir=tmp_path / "idx")
    assert changed.stale and not changed.built and changed.snippets == 4


def test_bfloat16_vectors_stay_close_to_float32_and_find_the_same_snippets(corpus_paths, tmp_path):
    """An index built in bfloat16 (where the CPU does it natively) answers as one built in float32, and says which."""
    built = {
        bf16: open_retriever(corpus_paths, cache_dir=tmp_path / str(bf16), embedder=Embedder(bf16=bf16))
        for bf16 in (False, True)
    }
    for bf16, retriever in built.items():
        assert retriever.indexes["cardio"].manifest["embed_precision"] == ("bfloat16" if bf16 else "float32")
    (info,) = describe_corpora(corpus_paths[:1], cache_dir=tmp_path / "True")
    assert info.embed_precision == "bfloat16"
    texts = [f"{t}. {c}" for _, t, c in CARDIO + ENDO]
    cosines = np.sum(built[False].embedder.encode(texts) * built[True].embedder.encode(texts), axis=1)
    assert cosines.min() > 0.9995
    for query in (
        "irregular heart rhythm and stroke prevention",
        "first-line drug for type 2 diabetes",
        "adrenal insufficiency with low sodium",
    ):
        ranked = {bf16: [h.snippet_id for h in r.search(query, 3, mode="dense")] for bf16, r in built.items()}
        assert ranked[True] == ranked[False]


# -- search ---------------------------------------------------------------------------------


def test_hits_carry_corpus_per_retriever_scores_ranks_and_the_fused_score(retriever):
    query = "chest pain with ST elevation and raised troponin"
    hits = retriever.search(query, 5)
    assert hits[0].snippet_id == "mi" and hits[0].corpus == "cardio" and hits[0].title == "Myocardial infarction"
    assert [h.rank for h in hits] == [1, 2, 3, 4, 5]
    alone = {mode: [h.snippet_id for h in retriever.search(query, 12, mode=mode)] for mode in ("bm25", "dense")}
    for hit in hits:
        assert set(hit.scores) == {"bm25", "dense"} and hit.ranks
        for mode, order in alone.items():  # each rank is the hit's place in that retriever's own ranking
            assert hit.ranks.get(mode) == (order.index(hit.snippet_id) + 1 if hit.snippet_id in order else None)
        assert hit.score == pytest.approx(sum(1 / (RRF_K + r) for r in hit.ranks.values()))
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert {h.corpus for h in retriever.search("blood pressure", 12)} == {"cardio", "endo"}


def test_single_retriever_modes_rank_by_their_own_score(retriever):
    bm25 = retriever.search("autoimmune insulin ketoacidosis", 3, mode="bm25")
    assert bm25[0].snippet_id == "t1d" and set(bm25[0].scores) == {"bm25"}
    assert bm25[0].score == bm25[0].scores["bm25"] and bm25[0].ranks == {"bm25": 1}
    assert not retriever.search("zzzz qqqq", 3, mode="bm25")  # nothing matches a word: no BM25 hits
    dense = retriever.search("a drug that makes the liver release less sugar", 3, mode="dense")
    assert dense[0].snippet_id == "t2d" and dense[0].score == pytest.approx(dense[0].scores["dense"])


def test_corpus_filter_and_bad_requests(retriever):
    assert {h.corpus for h in retriever.search("heart rate", 10, corpora=["endo"])} == {"endo"}
    with pytest.raises(ValueError, match="unknown corpus 'ortho'; open corpora: cardio, endo"):
        retriever.search("heart", 3, corpora=["ortho"])
    with pytest.raises(ValueError, match="empty"):
        retriever.search("   ", 3)
    with pytest.raises(ValueError, match="unknown retrieval mode"):
        retriever.search("heart", 3, mode="colbert")
    assert retriever.search("heart", 0) == []


@pytest.mark.parametrize("options", [{}, {"mode": "bm25"}, {"mode": "dense"}, {"balanced": True}])
def test_excluded_snippets_never_come_back(retriever, options):
    query = "autoimmune diabetes insulin"
    assert "t1d" in [h.snippet_id for h in retriever.search(query, 12, **options)]
    hits = retriever.search(query, 12, exclude=frozenset({"t1d", "graves"}), **options)
    assert hits and not {"t1d", "graves"} & {h.snippet_id for h in hits}


@pytest.mark.parametrize("options", [{}, {"mode": "bm25"}, {"balanced": True}])
def test_pinned_snippets_always_come_back_first(retriever, options):
    query = "autoimmune diabetes insulin"
    plain = [h.snippet_id for h in retriever.search(query, 4, **options)]
    assert "t1d" in plain and "peri" not in plain
    hits = retriever.search(query, 4, pin=frozenset({"peri", "t1d"}), **options)
    assert [h.snippet_id for h in hits[:2]] == ["t1d", "peri"]  # a pin that ranked keeps its scores, then the rest
    assert [h.pinned for h in hits] == [True, True, False, False] and [h.rank for h in hits] == [1, 2, 3, 4]
    assert hits[1].corpus == "cardio" and hits[1].text.startswith("Pericarditis causes") and hits[1].score == 0.0
    assert [h.snippet_id for h in hits[2:]] == [i for i in plain if i not in ("t1d", "peri")][:2]
    with pytest.raises(ValueError, match="pinned snippet nope is not in the corpora searched"):
        retriever.search(query, 4, pin=frozenset({"nope"}), **options)
    with pytest.raises(ValueError, match="cannot be both pinned and dropped"):
        retriever.search(query, 4, pin=frozenset({"t1d"}), exclude=frozenset({"t1d"}), **options)


def test_balanced_search_takes_an_equal_share_from_each_corpus_then_rescores(retriever):
    query = "chest pain with a murmur, a friction rub or ST elevation"
    assert {h.corpus for h in retriever.search(query, 4)} == {"cardio"}
    hits = retriever.search(query, 4, balanced=True)
    assert sorted(h.corpus for h in hits) == ["cardio", "cardio", "endo", "endo"]
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    for hit in hits:  # the default rerank hook is dense cosine similarity
        assert hit.score == hit.scores["rerank"] == pytest.approx(hit.scores["dense"]) and "fused" in hit.scores


def test_balanced_search_orders_by_the_rerank_hook(corpus_paths, retriever):
    pools = []

    def prefer_short(query, hits):
        pools.append([h.snippet_id for h in hits])
        return [-len(h.text) for h in hits]

    hook = type(retriever)(list(retriever.indexes.values()), retriever.embedder, reranker=prefer_short)
    hits = hook.search("diabetes and heart disease", 6, balanced=True)
    assert len(pools[0]) == 6 and len(set(pools[0]) & {s[0] for s in CARDIO}) == 3
    assert [len(h.text) for h in hits] == sorted(len(h.text) for h in hits)
    assert [h.rank for h in hits] == list(range(1, 7))


def test_balanced_search_can_pool_more_of_each_corpus_than_it_keeps(corpus_paths, retriever):
    pools = []

    def record(query, hits):
        pools.append(hits)
        return [h.scores["dense"] for h in hits]

    hook = type(retriever)(list(retriever.indexes.values()), retriever.embedder, reranker=record)
    hits = hook.search("diabetes and heart disease", 2, balanced=True, per_corpus=3)
    assert sorted(h.corpus for h in pools[0]) == ["cardio"] * 3 + ["endo"] * 3  # 3 of each pooled, 2 kept
    best = sorted(pools[0], key=lambda h: -h.scores["dense"])[:2]
    assert [h.snippet_id for h in hits] == [h.snippet_id for h in best] and [h.rank for h in hits] == [1, 2]


def test_similarity_scores_any_text_as_the_default_rerank_scores_the_pool(retriever):
    query = "chest pain with a friction rub"
    hits = retriever.search(query, 3, balanced=True)
    contents = [f"{h.title}. {h.text}" if h.title else h.text for h in hits]  # what the index embedded
    scores = retriever.similarity(query, contents + ["Pericarditis: pleuritic chest pain, a rub."])
    assert scores[:3] == pytest.approx([h.scores["rerank"] for h in hits], abs=1e-4)
    assert scores[3] > min(scores[:3]) and retriever.similarity(query, []) == []


def test_concurrent_searches_give_the_same_hits_as_one_at_a_time(retriever):
    queries = ["irregular heart rhythm", "thyroid", "adrenal insufficiency low sodium", "stroke risk", "glucose"] * 4
    expected = [retriever.search(q, 5) for q in queries]
    with ThreadPoolExecutor(max_workers=6) as pool:
        assert list(pool.map(lambda q: retriever.search(q, 5), queries)) == expected


# -- command line -----------------------------------------------------------------------------


def test_index_and_search_commands(corpus_paths, tmp_path, capsys):
    cache = str(tmp_path / "idx")
    assert main(["index", *map(str, corpus_paths), "--cache-dir", cache]) == 0
    out = capsys.readouterr().out
    assert "cardio: 6 snippets, 0 lines skipped" in out and "built in" in out and "2 corpora, 12 snippets" in out
    assert main(["index", str(corpus_paths[0]), "--cache-dir", cache]) == 0
    assert "up to date" in capsys.readouterr().out

    repeated = sum((["--path", str(p)] for p in corpus_paths), [])
    globbed = ["--path", *map(str, corpus_paths)]  # what `--path folder/*.jsonl.gz` gives
    for paths in (repeated, globbed):
        assert main(["search", "levothyroxine for a high TSH", "--k", "2", "--cache-dir", cache, *paths]) == 0
        out = capsys.readouterr().out
        assert out.splitlines()[0].startswith("  1. [endo] hypo  Hypothyroidism")
        assert "bm25 " in out and "dense " in out and "(#1)" in out


def test_commands_report_bad_input_with_file_and_line(tmp_path, capsys):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "a", "content": "fine"}\n[1, 2]\n')
    assert main(["index", str(path), "--strict", "--cache-dir", str(tmp_path)]) == 2
    assert f"{path}:2: expected a JSON object" in capsys.readouterr().err
    assert main(["index", str(path), "--cache-dir", str(tmp_path)]) == 0
    assert f"skipped: {path}:2: expected a JSON object" in capsys.readouterr().out
    assert main(["search", "x", "--path", str(path), "--corpus", "nope", "--cache-dir", str(tmp_path)]) == 2
    assert "unknown corpus 'nope'" in capsys.readouterr().err


def test_a_build_clears_what_a_killed_build_left_behind(tmp_path):
    from core.engine.retrieval.corpus import CorpusSource
    from core.engine.retrieval.corpus_index import index_folder

    path = tmp_path / "cardio.jsonl"
    write_corpus(path, CARDIO[:2])
    folder = index_folder(CorpusSource.from_path(path), tmp_path / "idx")
    left = folder.with_name(f"{folder.name}.building-99999-1")
    left.mkdir(parents=True)
    (left / "dense.faiss").write_bytes(b"half written")
    retriever = open_retriever([path], cache_dir=tmp_path / "idx")
    assert retriever.indexes["cardio"].built_now and not left.exists()
    assert sorted(p.name for p in folder.parent.iterdir() if p.is_dir()) == [folder.name]
