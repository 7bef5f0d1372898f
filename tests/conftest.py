from __future__ import annotations

from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"


@pytest.fixture(autouse=True)
def studio_home(tmp_path, monkeypatch):
    """Every test gets its own state folder (DB, response cache, indexes); the assembled model stays shared."""
    home = tmp_path / "home"
    monkeypatch.setenv("MEDRAG_STUDIO_HOME", str(home))
    monkeypatch.setenv("MEDRAG_BACKGROUND_INDEX", "0")  # the app opens the corpus when a run needs it
    for var in ("MEDRAG_BASE_URL", "MEDRAG_MODEL", "MEDRAG_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    return home


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
