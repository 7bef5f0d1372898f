"""The Qdrant search backend against today's in-process index, on the same small corpora: the real embedder, real
indexes on disk and the real ``qdrant-client`` in its local mode (a folder), which is the client code that reaches a
Qdrant server or cluster. Both must give the methods the same hits."""

from __future__ import annotations

import json
import math

import pytest

from core.__main__ import main
from core.engine.question import Question
from core.engine.retrieval import CorpusError, describe_corpora, open_retriever
from core.engine.retrieval.corpus import CorpusSource
from core.engine.retrieval.dense import default_embedder
from core.engine.retrieval.location import SEARCH_URL, InProcess, Qdrant, search_location
from core.engine.retrieval.qdrant.ingest import Embedded, ingest
from core.engine.retrieval.qdrant.stats import read_record
from core.engine.runner import execute
from tests.fakes import ScriptedLLM
from tests.test_retrieval_index import CARDIO, ENDO, write_corpora, write_corpus

# Odd sizes: a word in exactly half a corpus's snippets has idf 0 there, and today's index then drops it from that
# corpus even when several corpora are scored as one collection (Qdrant scores it on the collection's idf).
VT = (
    "Ventricular tachycardia is a broad-complex fast rhythm that can cause syncope; amiodarone or cardioversion "
    "treat it."
)
HEART = [*CARDIO, ("vt", "Ventricular tachycardia", VT)]
GLANDS = ENDO[:5]
QUERIES = [
    "chest pain with ST elevation",
    "autoimmune thyroid disease with a fast heart rate",
    "insulin",
    "blood pressure and stroke risk",
]
SEARCHES = [
    {},
    {"mode": "bm25"},
    {"mode": "dense"},
    {"corpora": ["glands"]},
    {"balanced": True},
    {"balanced": True, "per_corpus": 2},
    {"exclude": frozenset({"mi", "graves"})},
    {"pin": frozenset({"cush"})},
    {"pin": frozenset({"hf"}), "exclude": frozenset({"mi"})},
]


@pytest.fixture(scope="module")
def corpus_paths(tmp_path_factory):
    return write_corpora(tmp_path_factory.mktemp("corpora"), {"heart": HEART, "glands": GLANDS})


@pytest.fixture(scope="module")
def in_process(corpus_paths, tmp_path_factory):
    return open_retriever(corpus_paths, cache_dir=tmp_path_factory.mktemp("indexes"), location=InProcess())


@pytest.fixture(scope="module")
def qdrant(corpus_paths, tmp_path_factory):
    return open_retriever(corpus_paths, location=Qdrant(str(tmp_path_factory.mktemp("qdrant"))))


def same_hits(ours, theirs) -> None:
    shape = [(h.snippet_id, h.corpus, h.rank, h.title, h.text, h.ranks, h.pinned, sorted(h.scores)) for h in ours]
    assert shape == [
        (h.snippet_id, h.corpus, h.rank, h.title, h.text, h.ranks, h.pinned, sorted(h.scores)) for h in theirs
    ]
    for a, b in zip(ours, theirs, strict=True):  # single precision on both sides, summed in another order
        assert math.isclose(a.score, b.score, rel_tol=1e-5, abs_tol=1e-6)
        assert all(math.isclose(a.scores[k], b.scores[k], rel_tol=1e-5, abs_tol=1e-6) for k in a.scores)


@pytest.mark.parametrize("search", SEARCHES, ids=lambda s: ",".join(sorted(s)) or "hybrid")
def test_both_backends_give_the_same_hits(in_process, qdrant, search):
    assert qdrant.corpora == in_process.corpora == ["heart", "glands"]
    for query in QUERIES:
        for k in (1, 5, 12):
            same_hits(in_process.search(query, k, **search), qdrant.search(query, k, **search))


def test_the_backend_is_qdrant_and_hits_carry_both_scores(qdrant):
    assert qdrant.backend.label.startswith("Qdrant local mode in ")
    assert qdrant.indexes == {}  # nothing held in this process but the client
    hits = qdrant.search("crushing chest pain", 3)
    assert hits[0].snippet_id == "mi" and hits[0].scores["bm25"] > 0 and hits[0].scores["dense"] > 0.3


def test_similarity_and_refusals_are_the_same(in_process, qdrant):
    texts = ["Metformin lowers glucose.", "A friction rub and sharp chest pain."]
    assert qdrant.similarity("pericarditis", texts) == pytest.approx(in_process.similarity("pericarditis", texts))
    for kwargs, message in (
        ({"corpora": ["lungs"]}, "unknown corpus 'lungs'"),
        ({"pin": frozenset({"nope"})}, "pinned snippet nope is not in the corpora searched"),
        ({"pin": frozenset({"mi"}), "exclude": frozenset({"mi"})}, "both pinned and dropped"),
    ):
        for retriever in (in_process, qdrant):
            with pytest.raises(ValueError, match=message):
                retriever.search("chest pain", 5, **kwargs)


def test_medrag_runs_unchanged_on_qdrant(in_process, qdrant):
    """The method sees the same snippets, so it sends the same prompt and gets the same answer."""
    question = Question(text="What treats ventricular tachycardia?", options={"A": "amiodarone", "B": "metformin"})
    runs, prompts = [], []
    for retriever in (in_process, qdrant):
        llm = ScriptedLLM().enqueue({"reasoning": "vt says so.", "answer": "A", "cited_ids": ["vt"]})
        runs.append(execute("medrag", question, llm=llm, retriever=retriever))
        prompts.append(llm.calls[0]["messages"])
    assert prompts[0] == prompts[1]
    hits = [[h.snippet_id for h in next(e.payload for e in r.events if e.kind == "retrieval").hits] for r in runs]
    assert hits[0] == hits[1] and hits[0][0] == "vt"
    assert runs[0].answer.choice == runs[1].answer.choice == "A" and runs[1].answer.cited == ["vt"]


def test_the_search_url_setting_picks_where_retrieval_runs(monkeypatch, tmp_path):
    monkeypatch.delenv(SEARCH_URL, raising=False)
    assert isinstance(search_location(), InProcess)
    monkeypatch.setenv(SEARCH_URL, str(tmp_path / "q"))
    assert search_location() == Qdrant(str(tmp_path / "q"))
    monkeypatch.setenv(SEARCH_URL, "https://qdrant.hospital.example:6333")
    assert search_location() == Qdrant("https://qdrant.hospital.example:6333")  # the same client code, remote


def test_open_retriever_follows_the_setting_and_settings_show_the_ingest(corpus_paths, monkeypatch, tmp_path):
    monkeypatch.setenv(SEARCH_URL, str(tmp_path / "q"))
    before = describe_corpora(corpus_paths)
    assert [(i.name, i.built, i.snippets) for i in before] == [("heart", False, 7), ("glands", False, 5)]
    retriever = open_retriever(corpus_paths[:1])
    assert retriever.backend.label == f"Qdrant local mode in {tmp_path / 'q'}"
    after = describe_corpora(corpus_paths)
    assert after[0].built and after[0].index_type.startswith("Qdrant") and after[0].embed_precision
    assert not after[1].built and after[1].ingested is None


class Counted(Embedded):
    """The real embedder, counting what it encodes (to tell a resumed ingest from one that starts over)."""

    def __init__(self):
        super().__init__(default_embedder())
        self.encoded = 0

    def vectors(self, first_row, snippets):
        self.encoded += len(snippets)
        return super().vectors(first_row, snippets)


def test_an_ingest_that_stops_resumes_where_it_stopped(corpus_paths, tmp_path):
    store = Qdrant(str(tmp_path / "q")).store()
    source = CorpusSource.from_path(corpus_paths[0])

    def stop_after_two_batches(stage, done, total):
        if stage.startswith("ingest") and done >= 4:
            raise KeyboardInterrupt  # what Ctrl-C does in the middle of an ingest

    first = Counted()
    with pytest.raises(KeyboardInterrupt):
        ingest(store, source, first, batch=2, progress=stop_after_two_batches)
    record = read_record(store, "heart")
    assert (record.state, record.done, record.snippets, first.encoded) == ("ingesting", 4, 7, 4)
    assert describe_corpora(corpus_paths[:1], location=Qdrant(str(tmp_path / "q")))[0].ingested == 4

    second = Counted()
    done = ingest(store, source, second, batch=2)
    assert (done.how, second.encoded, done.record.state, done.record.done) == ("resumed", 3, "ready", 7)
    again = Counted()
    assert ingest(store, source, again).how == "up to date" and again.encoded == 0


def test_a_bad_line_is_named_and_skipped_alone_and_a_changed_corpus_replaces_the_old(tmp_path):
    path = tmp_path / "ward.jsonl"
    write_corpus(path, HEART[:3])
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], '{"id": "broken", "title": "x"', *lines[1:]]) + "\n")
    location = Qdrant(str(tmp_path / "q"))
    retriever = open_retriever([path], location=location)
    record = read_record(location.store(), "ward")
    assert record.snippets == 3 and record.skipped_count == 1
    assert record.skipped[0][:2] == (str(path), 2) and "not valid JSON" in record.skipped[0][2]
    with pytest.raises(CorpusError, match=r"ward.jsonl:2: not valid JSON"):
        open_retriever([path], location=location, strict=True)

    write_corpus(path, HEART[3:6])  # the file changed: its snippets replace the old ones
    retriever = open_retriever([path], location=location)
    assert {h.snippet_id for h in retriever.search("heart", 10, mode="bm25")} == {"htn"}
    assert read_record(location.store(), "ward").skipped_count == 0
    assert {h.snippet_id for h in retriever.search("heart", 10, mode="dense")} == {"htn", "peri", "ae"}


def test_the_index_command_ingests_into_qdrant(corpus_paths, tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        json.dumps({"id": "a", "title": "A", "content": "Aspirin thins the blood."}) + "\n{oops\n", encoding="utf-8"
    )
    url = str(tmp_path / "q")
    assert main(["index", "--engine", "qdrant", "--url", url, "--batch", "3", str(corpus_paths[1]), str(bad)]) == 0
    out = capsys.readouterr().out
    assert "glands: 5 snippets, 0 lines skipped" in out and "ingested in" in out
    assert f"skipped: {bad}:2: not valid JSON" in out and "2 corpora, 6 snippets" in out
    assert main(["index", "--engine", "qdrant", "--url", url, str(corpus_paths[1])]) == 0
    assert "glands: 5 snippets" in (out := capsys.readouterr().out) and "up to date" in out
    assert main(["index", "--engine", "qdrant", str(corpus_paths[1])]) == 2
    assert "needs --url" in capsys.readouterr().err
