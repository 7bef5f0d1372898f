"""Run files: export and import between two real SQLite stores, credentials never written, and every kind of
bad file refused with a message that names the problem while the store stays exactly as it was."""

from __future__ import annotations

import gzip
import io
import json
import os
import tracemalloc
import zlib

import pytest

from core.__main__ import main
from core.engine.question import Question
from core.engine.runner import execute
from core.engine.store import RunStore
from core.studio.runfiles import RunFileError, export_runs, export_to, import_file, provenance, read, write
from core.studio.runfiles.format import CorpusRef
from tests.fakes import ListRetriever, ScriptedLLM, make_hits

MC = Question(text="Which drug treats disease 1?", options={"A": "aspirin", "B": "metformin"})


def medrag_run(store: RunStore, answer: str = "B"):
    llm = ScriptedLLM().enqueue({"reasoning": "Doc 1 says so.", "answer": answer, "cited_ids": ["teaching-1"]})
    return execute("medrag", MC, llm=llm, retriever=ListRetriever(make_hits(4)), store=store)


def cot_run(store: RunStore):
    return execute("cot", MC, llm=ScriptedLLM().enqueue({"reasoning": "r", "answer": "A"}), store=store)


def counts(store: RunStore) -> tuple[int, int, int]:
    return (store.db["runs"].count, store.db["events"].count, store.db[provenance.TABLE].count)


@pytest.fixture
def stores(tmp_path):
    return RunStore(tmp_path / "here.sqlite"), RunStore(tmp_path / "there.sqlite")


def test_a_run_travels_whole_and_is_marked_imported(stores, tmp_path):
    here, there = stores
    medrag, cot = medrag_run(here), cot_run(here)
    path = tmp_path / "two.json.gz"
    export_to(here, [medrag.id, cot.id], path, kind="comparison", title="drugs")
    report = import_file(there, path)
    assert report.imported == [medrag.id, cot.id] and report.skipped == []
    for original in (medrag, cot):
        assert there.load_run(original.id) == here.load_run(original.id)  # ids, params, events, answer
    loaded = there.load_run(medrag.id)
    hits = next(e.payload.hits for e in loaded.events if e.kind == "retrieval")
    assert [h.text for h in hits][:1] == ["fact number 0 about disease 0"]  # snippet texts travel with the run
    marks = provenance.imported_runs(there)
    assert set(marks) == {medrag.id, cot.id} and marks[medrag.id]["source"] == "two.json.gz"
    assert provenance.imported_runs(here) == {}
    run_file = read(path)
    assert run_file.kind == "comparison" and run_file.title == "drugs"
    assert run_file.entry(medrag.id).corpora == [CorpusRef(name="teaching", fingerprint=None)]


def test_importing_again_skips_the_same_runs_and_refuses_changed_ones(stores, tmp_path):
    here, there = stores
    run = medrag_run(here)
    path = tmp_path / "one.json.gz"
    export_to(here, [run.id], path)
    import_file(there, path)
    again = import_file(there, path)
    assert again.imported == [] and again.skipped == [run.id] and "same content, skipped" in again.summary()

    changed = export_runs(here, [run.id])
    changed.runs[0].run.answer.choice = "A"
    extra = cot_run(here)
    changed.runs.append(export_runs(here, [extra.id]).runs[0])
    write(changed, tmp_path / "changed.json.gz")
    before = counts(there)
    with pytest.raises(RunFileError, match=f"run {run.id} \\(answer\\)"):
        import_file(there, tmp_path / "changed.json.gz")
    assert counts(there) == before  # the new run in the same file was not imported either


def test_no_credential_is_ever_written(stores, tmp_path, monkeypatch):
    here, _ = stores
    monkeypatch.setenv("MEDRAG_API_KEY", "sk-live-0123456789abcdef")
    run = cot_run(here)
    provenance.record(
        here, run.id, backend="qwen @ https://alice:s3cr3t-pass@llm.example.org/v1?api_key=zzz999", corpora=[]
    )
    loaded = here.load_run(run.id)
    loaded.events[0].payload.text = (
        "called https://bob:hunter22@llm.example.org/v1 with Authorization: Bearer "
        "abcdefghijkl and key sk-live-0123456789abcdef"
    )
    run_file = export_runs(here, [run.id])
    run_file.runs[0].run = loaded
    path = write(run_file, tmp_path / "secret.json.gz")
    text = gzip.decompress(path.read_bytes()).decode()
    for secret in ("s3cr3t-pass", "alice", "hunter22", "zzz999", "abcdefghijkl", "sk-live-0123456789abcdef"):
        assert secret not in text
    entry = read(path).runs[0]
    assert entry.backend == "qwen @ https://***@llm.example.org/v1?api_key=***"
    assert "https://***@llm.example.org/v1" in entry.run.events[0].payload.text


def test_an_unknown_run_id_is_named():
    with pytest.raises(RunFileError, match="no saved run has the id nope"):
        export_runs(RunStore(), ["nope"])


def test_a_run_still_going_is_refused_and_history_leaves_it_out_of_the_download():
    from streamlit.testing.v1 import AppTest

    from core.engine.trace import Run

    store = RunStore()
    going = Run(method="cot", question="Which hormone lowers blood glucose?")
    store.create_run(going)  # as a run in another process would be, with no events yet
    done = cot_run(store)
    with pytest.raises(RunFileError, match=f"run {going.id} is still running: export it once it has ended"):
        export_runs(store, [done.id, going.id])
    at = AppTest.from_string("from ui.history.page import page\npage()", default_timeout=20).run()
    assert at.multiselect(key="history.files.runs").options == [f"CoT · Which drug treats disease 1? · {done.id}"]
    assert "Left out until it ends: 1 run still going." in [c.value for c in at.caption]
    assert at.get("download_button")[0].proto.disabled  # nothing chosen yet
    at.multiselect(key="history.files.runs").set_value([done.id]).run()
    assert not at.get("download_button")[0].proto.disabled and not at.exception


# -- bad files: each refused with its own message, the store untouched --------------------------------


def good_document(store: RunStore) -> dict:
    return json.loads(export_runs(store, [medrag_run(store).id, cot_run(store).id]).model_dump_json())


def gz(document: dict | bytes) -> bytes:
    raw = document if isinstance(document, bytes) else json.dumps(document).encode()
    return gzip.compress(raw)


def refused(there: RunStore, data: bytes | io.BufferedIOBase, pattern: str, **limits: int) -> None:
    before = counts(there)
    stream = io.BytesIO(data) if isinstance(data, bytes) else data
    with pytest.raises(RunFileError, match=pattern):
        import_file(there, stream, **limits)
    assert counts(there) == before


def test_truncated_gzip(stores):
    here, there = stores
    data = gz(good_document(here))
    refused(there, data[: len(data) // 2], "cut short")


def test_wrong_version(stores):
    here, there = stores
    doc = good_document(here)
    refused(there, gz({**doc, "version": 7}), "format version 7 was written by a newer studio")
    refused(there, gz({**doc, "version": "1"}), "format version '1' is not a whole number")


def test_a_run_whose_events_skip_a_sequence_number(stores):
    here, there = stores
    doc = good_document(here)
    run = doc["runs"][0]["run"]
    del run["events"][1]
    refused(there, gz(doc), f"run {run['id']}: the events skip a number: sequence number 1 is missing")


def test_a_bad_field_is_named_with_its_run_and_event(stores):
    here, there = stores
    doc = good_document(here)
    run = doc["runs"][0]["run"]
    del run["events"][0]["payload"]["hits"][2]["text"]
    refused(there, gz(doc), f"run {run['id']}, event seq 0, field payload.retrieval.hits.2.text: Field required")


def test_the_same_run_twice_in_one_file(stores):
    here, there = stores
    doc = good_document(here)
    doc["runs"].append(doc["runs"][0])
    refused(there, gz(doc), "appears twice")


def test_not_gzip_and_not_json(stores):
    here, there = stores
    refused(there, json.dumps(good_document(here)).encode(), "not a gzip file .it looks like plain JSON")
    refused(there, b"PK\x03\x04 a zip file", "not a gzip file")
    refused(
        there,
        gz(b'{"format": "medrag-studio-runs", "version": 1, "runs": [}'),
        "not valid JSON: line 1, column 57: Expecting value",
    )
    refused(there, gz([1, 2]), "the JSON document is a list")
    refused(there, gz({"hello": "world"}), "not a run file")
    refused(there, b"", "the file is empty")


def test_a_200_mb_file_is_refused_before_it_is_read(stores, tmp_path):
    _, there = stores
    big = tmp_path / "big.json.gz"
    with open(big, "wb") as fh:
        fh.write(gzip.compress(b"{}"))
        fh.truncate(200 * 2**20)  # sparse: 200 MB on paper, nothing to write
    before = counts(there)
    with pytest.raises(RunFileError, match="the file is 200 MB; a run file may be at most 64 MB"):
        import_file(there, big)
    assert counts(there) == before


class CountingStream(io.BytesIO):
    def __init__(self, data: bytes):
        super().__init__(data)
        self.served = 0

    def read(self, n=-1):
        chunk = super().read(n)
        self.served += len(chunk)
        return chunk


def test_a_file_that_unpacks_to_200_mb_is_stopped_while_streaming(stores):
    _, there = stores
    deflate = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b" " * 2**20
    bomb = b"".join(deflate.compress(block) for _ in range(200)) + deflate.flush()  # 200 MB of spaces in ~200 KB
    tracemalloc.start()
    try:
        refused(there, io.BytesIO(bomb), "unpacks to more than 128 MB")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 160 * 2**20  # stopped at the limit: the 200 MB were never held at once


def test_an_upload_over_the_size_limit_is_stopped_while_streaming(stores):
    _, there = stores
    stream = CountingStream(gzip.compress(os.urandom(10 * 2**20), compresslevel=1))  # random bytes do not compress
    refused(there, stream, "larger than 2 MB", max_file_bytes=2 * 2**20)
    assert stream.served < 4 * 2**20


# -- the command line ------------------------------------------------------------------------------------


def test_cli_export_and_import(tmp_path, capsys, monkeypatch):
    store = RunStore()
    first, second = medrag_run(store), cot_run(store)
    path = tmp_path / "all.json.gz"
    assert main(["runs", "export", str(path), "--all"]) == 0
    assert "wrote 2 runs" in capsys.readouterr().out
    assert [e.run.id for e in read(path).runs] == [second.id, first.id]  # newest first
    monkeypatch.setenv("MEDRAG_STUDIO_HOME", str(tmp_path / "elsewhere"))
    assert main(["runs", "import", str(path)]) == 0
    assert "2 runs imported from all.json.gz" in capsys.readouterr().out
    assert main(["runs", "import", str(path)]) == 0
    assert "already here with the same content, skipped" in capsys.readouterr().out
    broken = tmp_path / "broken.json.gz"
    broken.write_bytes(path.read_bytes()[:100])
    assert main(["runs", "import", str(broken)]) == 1
    assert "broken.json.gz: the file is cut short" in capsys.readouterr().err
    assert main(["runs", "export", str(tmp_path / "x.json.gz"), "missing-id"]) == 2
    assert "no saved run has the id missing-id" in capsys.readouterr().err


def test_masking_never_runs_across_two_values(stores, tmp_path):
    here, _ = stores
    run = export_runs(here, [cot_run(here).id])
    run.runs[0].run.question = "see http://example.org"
    run.runs[0].run.events[0].payload.text = "mail b@c"  # in compact JSON a pattern over the whole text would
    loaded = read(write(run, tmp_path / "x.json.gz")).runs[0].run  # swallow every field between the two
    assert loaded.question == "see http://example.org" and loaded.events[0].payload.text == "mail b@c"
