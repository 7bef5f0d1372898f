"""Settings › Corpora with the Qdrant backend: it names where retrieval runs, shows an ingest that stopped partway,
and says plainly when the Qdrant it was pointed at cannot be reached (the real page, run by Streamlit's AppTest)."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from core.engine.retrieval.corpus import CorpusSource
from core.engine.retrieval.dense import default_embedder
from core.engine.retrieval.location import SEARCH_URL, Qdrant
from core.engine.retrieval.qdrant.ingest import Embedded, ingest
from tests.test_retrieval_index import CARDIO, write_corpus
from ui.common.keys import CORPUS_PATHS

SECTION = "from ui.common.corpora import corpora_section\ncorpora_section()"


def shown(at: AppTest) -> str:
    return "\n".join(e.value for kind in ("caption", "error", "warning", "markdown") for e in getattr(at, kind))


def test_the_in_process_index_is_named_when_no_url_is_set(monkeypatch):
    monkeypatch.delenv(SEARCH_URL, raising=False)
    at = AppTest.from_string(SECTION, default_timeout=60).run()
    assert not at.exception
    assert "Search backend: **in-process index (BM25 + FAISS on this machine)**" in shown(at)
    assert at.button(key="settings.build").label.startswith("Build missing indexes")


def test_a_qdrant_folder_is_named_and_a_stopped_ingest_shows_how_far_it_got(monkeypatch, tmp_path):
    folder = tmp_path / "qdrant"
    monkeypatch.setenv(SEARCH_URL, str(folder))
    write_corpus(tmp_path / "cardio.jsonl", CARDIO)

    def stop(stage, done, total):
        if stage.startswith("ingest") and done >= 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        ingest(
            Qdrant(str(folder)).store(),
            CorpusSource.from_path(tmp_path / "cardio.jsonl"),
            Embedded(default_embedder()),
            batch=2,
            progress=stop,
        )
    at = AppTest.from_string(SECTION, default_timeout=60)
    at.session_state[CORPUS_PATHS] = [str(tmp_path / "cardio.jsonl")]
    at.run()
    assert not at.exception
    text = shown(at)
    assert f"Search backend: **Qdrant local mode in {folder}**" in text and SEARCH_URL in text
    labels = [c.label for c in at.checkbox]
    assert "**cardio** · 6 snippets · ingest stopped at 2 of 6: resume" in labels
    assert any(label.startswith("**hpo** ·") and label.endswith("not built") for label in labels)
    assert at.button(key="settings.build").label == "Ingest missing corpora into Qdrant and open the corpora"


def test_an_unreachable_qdrant_is_said_by_name_without_a_traceback(monkeypatch):
    monkeypatch.setenv(SEARCH_URL, "http://127.0.0.1:9")  # nothing listens on the discard port
    at = AppTest.from_string(SECTION, default_timeout=60).run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert errors and errors[0].startswith("The search backend cannot be reached: Qdrant at http://127.0.0.1:9")
    assert "Traceback" not in shown(at)


@pytest.mark.timeout(20)  # the client alone waited out its 60 s call timeout on such a server
def test_a_qdrant_that_does_not_answer_is_said_within_the_short_timeout_and_without_a_library_warning(monkeypatch):
    import socket
    import warnings

    from core.engine.retrieval.qdrant import store as qdrant_store

    monkeypatch.setattr(qdrant_store, "REACH_SECONDS", 0.5)
    with socket.socket() as silent:  # connections are accepted by the kernel, and nothing ever answers them
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            with pytest.raises(qdrant_store.SearchUnavailable, match=f"Qdrant at {url}: no answer within 0.5 s"):
                qdrant_store.ClientStore(url).exists()
    assert [str(w.message) for w in warned] == []


@pytest.mark.parametrize(
    "argv, said",
    [
        (["--url", "ftp://x"], "--url must be a folder or a Qdrant server's http:// or https:// URL, not 'ftp://x'"),
        (["--url", "/tmp/q", "--shards", "-3"], "argument --shards: '-3': must be a whole number, 1 or more"),
        (["--url", "/tmp/q", "--replicas", "0"], "argument --replicas: '0': must be a whole number, 1 or more"),
    ],
)
def test_index_refuses_a_url_or_a_count_it_cannot_use_before_it_starts(argv, said, tmp_path, monkeypatch, capsys):
    from core.__main__ import main

    monkeypatch.chdir(tmp_path)  # an ftp:// URL was taken as a folder named "ftp:" here
    monkeypatch.setattr("core.engine.retrieval.dense.default_embedder", lambda: pytest.fail("it started indexing"))
    try:
        code = main(["index", "--engine", "qdrant", *argv, str(tmp_path / "none.jsonl")])
    except SystemExit as exc:
        code = exc.code
    assert code == 2 and said in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
