from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

pytest_plugins = ["tests.least_lengths"]  # the ``least_lengths`` fixture of the model's smoke tests

SHARED_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
SLOW = ("model", "browser")
# The default corpus the tests search: the first HPO terms and the whole teaching pack, converted and indexed by the
# code that builds the whole default corpus (its 16,000-odd terms take minutes to embed; ``make setup`` builds them).
HPO_TERMS = 100
# The folder holding it for one pytest run: its workers (pytest-xdist) inherit it from the process that made it.
SESSION_CORPUS = "MEDRAG_TEST_DEFAULT_CORPUS"
_SESSION_FOLDER = pytest.StashKey[Path]()  # in the process that made it, to remove at the end


def pytest_configure(config):
    """Under pytest-xdist each worker's model and index builds compute on its share of the cores: two servers each
    on every core slow each other several times over (``MEDRAG_THREADS``). A worker's test servers inherit it.

    Every test, and every app or command a test starts, finds the small default corpus where the default corpus
    lives (``MEDRAG_CORPORA_DIR``, ``MEDRAG_INDEX_DIR``): converted here in a second, indexed by the first test that
    opens it (under the index's file lock, so workers build it once)."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers > 1:
        from core.engine.settings import usable_cores

        os.environ.setdefault("MEDRAG_THREADS", str(max(1, usable_cores() // workers)))
    made = os.environ.get(SESSION_CORPUS)
    if os.environ.get("PYTEST_XDIST_WORKER") and made and Path(made).is_dir():
        return  # a worker: the controller made the folder
    folder = Path(tempfile.mkdtemp(prefix="medrag-tests-"))
    config.stash[_SESSION_FOLDER] = folder
    os.environ[SESSION_CORPUS] = str(folder)
    os.environ["MEDRAG_CORPORA_DIR"] = str(folder / "corpora")
    os.environ["MEDRAG_INDEX_DIR"] = str(folder / "indexes")
    from core.engine.retrieval.default_corpus import write_hpo_corpus

    write_hpo_corpus(limit=HPO_TERMS)


def checkout_default_corpus() -> tuple[list[Path], Path]:
    """The whole default corpus's folders where ``make setup`` and ``make run`` keep them in this checkout (the
    settings' defaults), and its index folder: either may be absent, or the index not built."""
    from core.engine.retrieval.default_corpus import HPO_NAME, teaching_pack_dir
    from core.engine.settings import Settings

    folders = Settings.model_fields
    return [folders["corpora_dir"].default / HPO_NAME, teaching_pack_dir()], folders["index_dir"].default


def pytest_unconfigure(config):
    if folder := config.stash.get(_SESSION_FOLDER, None):
        shutil.rmtree(folder, ignore_errors=True)


def pytest_collection_modifyitems(config, items):
    """Spread over workers (``make test``: a module whole on one worker, handed out in this order): slow modules
    (the model, a browser) first, so that the quick ones fill in around them and the workers finish together."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    slow = {item.module.__name__ for item in items if any(item.get_closest_marker(name) for name in SLOW)}
    items.sort(key=lambda item: item.module.__name__ not in slow)  # stable: each module's own order is kept


class ModelNotMarked(RuntimeError):
    """A test without the ``model`` marker started the embedded model."""


@pytest.fixture(autouse=True)
def model_only_where_marked(request, monkeypatch):
    """``-m 'not model'`` leaves out every test that runs the embedded model: a test without the marker that starts
    it, or asks a server an earlier test started, fails naming itself (even where the code it ran caught the
    error)."""
    if request.node.get_closest_marker("model"):
        yield
        return
    from core.engine.llm.embedded import EmbeddedServer

    refused: list[str] = []

    def refuse(*args, **kwargs):
        refused.append(f"{request.node.nodeid} starts the embedded model but is not marked `model`")
        raise ModelNotMarked(refused[-1])

    monkeypatch.setattr(EmbeddedServer, "_instance", None)  # one an earlier test started is out of its reach
    monkeypatch.setattr(EmbeddedServer, "__init__", refuse)
    yield
    if refused:
        pytest.fail(refused[0], pytrace=False)


@pytest.fixture(autouse=True)
def studio_home(tmp_path, monkeypatch):
    """Every test gets its own state folder (DB, response cache, indexes); the assembled model stays shared."""
    home = tmp_path / "home"
    monkeypatch.setenv("MEDRAG_STUDIO_HOME", str(home))
    monkeypatch.setenv("MEDRAG_BACKGROUND_INDEX", "0")  # the app opens the corpus when a run needs it
    for var in ("MEDRAG_BASE_URL", "MEDRAG_MODEL", "MEDRAG_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture(autouse=True)
def served_on_loopback(monkeypatch):
    """Pages run as ``make run`` serves them, on 127.0.0.1: single-user. A test of shared mode says so itself."""
    from streamlit import config

    monkeypatch.delenv("MEDRAG_MODE", raising=False)
    for var in ("MEDRAG_OWNER_PASSCODE", "MEDRAG_OWNER_EMAILS"):
        monkeypatch.delenv(var, raising=False)
    before = config.get_option("server.address")
    config.set_option("server.address", "127.0.0.1")
    yield
    config.set_option("server.address", before)


@pytest.fixture(autouse=True)
def keep_main_module():
    """``AppTest.from_function`` runs its script as ``__main__`` and leaves it there; a process a later test spawns
    would then re-run that script (spawn re-imports the parent's main module) and die before its target runs."""
    main = sys.modules["__main__"]
    yield
    sys.modules["__main__"] = main


@pytest.fixture(scope="session")
def embedded_llm(tmp_path_factory):
    """The real embedded model with a session-wide response cache."""
    from core.engine.llm import LLM
    from core.engine.llm.cache import ResponseCache

    return LLM(cache=ResponseCache(tmp_path_factory.mktemp("llmcache") / "cache.sqlite"))


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"needs the shared data folder, which is absent: {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture
def bench_files(tmp_path):
    """A small MIRAGE-format benchmark file and its ids file (``tests/test_eval.py``'s BENCH and IDS)."""
    import gzip
    import json

    from tests.test_eval import BENCH, IDS

    bench = tmp_path / "mini.json.gz"
    with gzip.open(bench, "wt") as f:
        json.dump(BENCH, f)
    ids = tmp_path / "dev_ids.json"
    ids.write_text(json.dumps(IDS))
    return bench, ids
