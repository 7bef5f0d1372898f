from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
SLOW = ("model", "browser")


def pytest_configure(config):
    """Under pytest-xdist each worker's model and index builds compute on its share of the cores: two servers each
    on every core slow each other several times over (``MEDRAG_THREADS``). A worker's test servers inherit it."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers > 1:
        os.environ.setdefault("MEDRAG_THREADS", str(max(1, (os.cpu_count() or 1) // workers)))


def _turn(module: list[pytest.Item]) -> int:
    """When a module goes out to a worker: the default index's build first; the other workers meanwhile run what
    does without it, slow modules (the model, a browser) before quick ones; then those that read it, likewise."""

    def marked(*names: str) -> bool:
        return any(item.get_closest_marker(name) for item in module for name in names)

    if marked("builds_default_index"):
        return 0
    return (2 if marked("default_index") else 0) + (1 if marked(*SLOW) else 2)


def pytest_collection_modifyitems(config, items):
    """Spread over workers (``make test``: a module whole on one worker, handed out in this order) so that the
    workers finish together and wait for the default index as little as they can."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        modules.setdefault(item.module.__name__, []).append(item)
    turn = {name: _turn(module) for name, module in modules.items()}
    items.sort(key=lambda item: turn[item.module.__name__])  # stable: each module's own order is kept


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
    from core.llm import LLM
    from core.llm.cache import ResponseCache

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
