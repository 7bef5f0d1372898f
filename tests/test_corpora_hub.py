"""Named corpora from the Hugging Face Hub: the real ``huggingface_hub`` client against a Hub on 127.0.0.1
(``tests/hub_server.py``, ``HF_ENDPOINT``) that serves a small "textbooks" corpus in MedRAG's layout."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from core.__main__ import main
from core.engine.retrieval.catalog import human_bytes
from core.engine.retrieval.corpus import CorpusError
from core.engine.retrieval.hub import ChecksumMismatch, HubError, recorded
from core.engine.retrieval.named import CATALOG, get, named_paths, plan
from tests.hub_server import COMMIT, FakeHub, HubServer

BOOKS = {
    "Anatomy_Gray": [
        "The brachial plexus is formed by the anterior rami of C5 to T1 and supplies the upper limb.",
        "The femoral nerve arises from L2 to L4 and innervates the quadriceps femoris.",
        "The recurrent laryngeal nerve loops under the arch of the aorta on the left side.",
        "The portal vein is formed behind the neck of the pancreas by the splenic and superior mesenteric veins.",
    ],
    "Pharmacology_Katzung": [
        "Metformin lowers hepatic glucose production and rarely causes lactic acidosis.",
        "Warfarin inhibits vitamin K epoxide reductase; its effect is monitored with the INR.",
        "Beta blockers reduce mortality in heart failure with reduced ejection fraction.",
        "Aminoglycosides are nephrotoxic and ototoxic; trough levels guide dosing.",
    ],
    "Pathology_Robbins": [
        "Caseating granulomas are characteristic of tuberculosis.",
        "Reed-Sternberg cells are the hallmark of classical Hodgkin lymphoma.",
        "Amyloid stains with Congo red and shows apple-green birefringence under polarized light.",
        "Coagulative necrosis is typical of myocardial infarction.",
    ],
}


def chunk_file(book: str, texts: list[str]) -> bytes:
    lines = [
        json.dumps({"id": f"{book}_{i}", "title": book, "content": text, "contents": f"{book}. {text}"})
        for i, text in enumerate(texts)
    ]
    return ("\n".join(lines) + "\n").encode()


FILES = {f"chunk/{book}.jsonl": chunk_file(book, texts) for book, texts in BOOKS.items()}


@pytest.fixture
def hub(tmp_path, monkeypatch):
    """The fake Hub serving MedRAG/textbooks; corpora and indexes in this test's folder."""
    monkeypatch.setenv("MEDRAG_CORPORA_DIR", str(tmp_path / "corpora"))
    monkeypatch.setenv("MEDRAG_INDEX_DIR", str(tmp_path / "indexes"))
    monkeypatch.delenv("MEDRAG_SEARCH_URL", raising=False)
    fake = FakeHub("MedRAG/textbooks", dict(FILES) | {"README.md": b"# MedRAG textbooks\n"})
    with HubServer(fake) as url:
        monkeypatch.setenv("HF_ENDPOINT", url)
        yield fake


def folder() -> Path:
    return CATALOG["textbooks"].folder


def test_plan_lists_the_chunk_files_with_size_and_checksum_before_anything_is_fetched(hub):
    p = plan("textbooks")
    assert [f.path for f in p.listing.files] == sorted(FILES)  # the README is not a chunk file
    assert p.listing.revision == COMMIT
    assert p.to_fetch == sum(len(d) for d in FILES.values())
    said = "\n".join(p.lines())
    assert f"3 files, {human_bytes(p.to_fetch)}" in said and "(assumed)" in said
    assert not any(method == "GET" and "/resolve/" in path for method, path, _ in hub.log)


def test_download_verifies_every_file_and_keeps_its_checksum(hub):
    got = get("textbooks", given=plan("textbooks"), index=False)
    assert got.fetched == sum(len(d) for d in FILES.values())
    for path, data in FILES.items():
        assert (folder() / path).read_bytes() == data
    kept = recorded(folder())
    assert kept["name"] == "textbooks" and kept["source"]["revision"] == COMMIT
    assert kept["source"]["files"] == {  # the Hub's LFS sha256 of each file
        p: {"size": len(d), "checksum": f"sha256:{hashlib.sha256(d).hexdigest()}"} for p, d in FILES.items()
    }


def test_a_transfer_cut_midway_resumes_from_the_bytes_received(hub):
    """The client keeps what it received in whole pieces of ``DOWNLOAD_CHUNK_SIZE`` (10 MB) and asks for the rest with
    a ``Range`` request, so the file cut here is big enough for half of it to hold one such piece."""
    from huggingface_hub.constants import DOWNLOAD_CHUNK_SIZE

    big = "chunk/InternalMed_Harrison.jsonl"
    texts = BOOKS["Pharmacology_Katzung"]
    hub.files[big] = chunk_file("InternalMed_Harrison", texts * (3 * DOWNLOAD_CHUNK_SIZE // len(chunk_file("", texts))))
    hub.cut_once.add(big)
    get("textbooks", given=plan("textbooks"), index=False)
    first, then = hub.gets(big)
    assert first is None and then == f"bytes={DOWNLOAD_CHUNK_SIZE}-"  # the second request asks only for the rest
    assert DOWNLOAD_CHUNK_SIZE <= len(hub.files[big]) // 2  # what it skipped had been received before the cut
    assert (folder() / big).read_bytes() == hub.files[big]
    assert recorded(folder())["source"]["files"][big]["size"] == len(hub.files[big])


def test_a_stopped_download_carries_on_with_the_files_not_yet_verified(hub):
    broken = "chunk/Pharmacology_Katzung.jsonl"  # the last of the three, in the order they are fetched
    hub.fail.add(broken)
    with pytest.raises(HubError, match="carries on from the next one"):
        get("textbooks", index=False)
    assert sorted(recorded(folder())["source"]["files"]) == [
        "chunk/Anatomy_Gray.jsonl",
        "chunk/Pathology_Robbins.jsonl",
    ]
    with pytest.raises(CorpusError, match="not downloaded yet"):
        named_paths("textbooks")  # half a corpus is not offered for search
    hub.fail.clear()
    hub.log.clear()
    p = plan("textbooks")
    assert p.to_fetch == len(FILES[broken])
    get("textbooks", given=p, index=False)
    fetched = [path for method, path, _ in hub.log if method == "GET" and "/resolve/" in path]
    assert [path.rsplit("/", 1)[-1] for path in fetched] == ["Pharmacology_Katzung.jsonl"]  # the others are kept
    assert named_paths("textbooks") == [folder()]


def test_a_file_that_does_not_match_its_checksum_is_deleted_and_named(hub):
    bad = "chunk/Pathology_Robbins.jsonl"
    hub.corrupt.add(bad)
    with pytest.raises(ChecksumMismatch) as caught:
        get("textbooks", index=False)
    message = str(caught.value)
    assert bad in message and "the Hub lists sha256:" in message and "was deleted" in message
    assert not (folder() / bad).exists()
    assert bad not in recorded(folder())["source"]["files"]
    assert not list(Path(folder().parent.parent / "indexes").glob("textbooks-*/manifest.json"))  # nothing indexed


def test_statpearls_says_what_to_fetch_and_indexes_what_the_user_put_there(hub, capsys):
    assert main(["corpora", "get", "statpearls", "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "statpearls_NBK430685.tar.gz" in err and "src/data/statpearls.py" in err
    assert str(CATALOG["statpearls"].folder / "chunk") in err
    chunk = CATALOG["statpearls"].folder / "chunk"
    chunk.mkdir(parents=True)
    (chunk / "article-1.jsonl").write_bytes(chunk_file("Atrial Fibrillation -- Treatment", BOOKS["Pathology_Robbins"]))
    assert named_paths("statpearls") == [CATALOG["statpearls"].folder]
    assert main(["corpora", "get", "statpearls", "--dry-run"]) == 0  # now it says what indexing them takes
    assert "download:" not in capsys.readouterr().out


def test_an_unknown_name_lists_the_names(hub, capsys):
    assert main(["corpora", "get", "medcorp", "--dry-run"]) == 2
    assert "textbooks, pubmed, wikipedia, statpearls, medquad, openstax" in capsys.readouterr().err


def test_get_indexes_the_download_and_search_finds_it(hub, capsys):
    """Heavy (the real embedder builds the index): run under ``flock /tmp/medrag-heavy.lock``."""
    assert main(["corpora", "get", "textbooks"]) == 0
    out = capsys.readouterr().out
    assert "every file verified" in out and "textbooks: 12 snippets indexed" in out
    assert main(["search", "which nerve loops under the aortic arch", "--k", "1", "--path", str(folder())]) == 0
    assert "Anatomy_Gray_2" in capsys.readouterr().out
    assert main(["corpora", "list"]) == 0
    assert "here (" in next(line for line in capsys.readouterr().out.splitlines() if line.startswith("textbooks"))


@pytest.mark.shared
def test_the_shared_corpora_are_found_by_name(shared_data, monkeypatch, capsys):
    monkeypatch.setenv("MEDRAG_SHARED_CORPORA", str(shared_data / "corpora"))
    assert [p.name for p in named_paths("openstax")] == [
        "openstax_anatomy_physiology_2e.jsonl.gz",
        "openstax_microbiology.jsonl.gz",
    ]
    assert main(["corpora", "get", "medquad", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("medquad: MedQuAD") and "download:" not in out  # a local file: nothing to fetch
    monkeypatch.setenv("MEDRAG_SHARED_CORPORA", str(shared_data))
    with pytest.raises(CorpusError, match="set MEDRAG_SHARED_CORPORA to the folder that holds"):
        named_paths("medquad")


def test_with_a_search_url_the_download_goes_into_qdrant(hub, tmp_path, monkeypatch, capsys):
    """Heavy (the real embedder): run under ``flock /tmp/medrag-heavy.lock``. Qdrant's local mode in a folder stands
    for the server PubMed and Wikipedia go to; the same client code reaches either."""
    monkeypatch.setenv("MEDRAG_SEARCH_URL", str(tmp_path / "qdrant"))
    p = plan("textbooks")
    assert p.fits and "Qdrant" in p.lines()[-1]
    got = get("textbooks", given=p)
    assert [(info.name, info.snippets, info.built) for info in got.indexed] == [("textbooks", 12, True)]
    assert not list((tmp_path / "indexes").glob("textbooks-*"))  # nothing built in process


def test_a_corpus_too_big_for_the_in_process_index_is_refused_before_any_fetch(hub):
    from dataclasses import replace

    from core.engine.retrieval.named import Capacity

    small = Capacity("hpo", index_bytes=2000.0, seconds=0.02, available=100 * 2**20)  # 100 MB free
    p = replace(plan("textbooks"), capacity=small)
    assert not p.fits  # 125,800 snippets of about 2 KB of index and their text: more than 100 MB
    said = p.lines()
    limit = int(small.available / (small.index_bytes + p.text_bytes))  # memory over a snippet's index and text
    assert f"holds about {limit:,} snippets" in said[-3] and "MEDRAG_SEARCH_URL" in said[-1]
    with pytest.raises(CorpusError, match="does not fit the in-process index here"):
        get("textbooks", given=p)
    assert not [path for method, path, _ in hub.log if method == "GET" and "/resolve/" in path]
