"""Where the studio keeps its state: one folder, movable with MEDRAG_STUDIO_HOME (tests point it at a tmp dir).

The folders themselves are settings (``core.engine.settings``); these functions make sure they exist. What the repository
ships is beside the code: the teaching pack, whose passages are part of the default corpus."""

from __future__ import annotations

from pathlib import Path

from core.engine.settings import REPO_ROOT, settings

__all__ = [
    "REPO_ROOT",
    "TEACHING_PACK",
    "corpora_dir",
    "db_path",
    "home",
    "index_dir",
    "llm_cache_path",
    "model_dir",
]

TEACHING_PACK = REPO_ROOT / "data" / "teaching_pack"  # teaching cases, and passages the default corpus holds


def _made(path: Path) -> Path:
    if not path.is_dir():  # one stat where the folder is there: every page run of every session asks for it
        path.mkdir(parents=True, exist_ok=True)
    return path


def home() -> Path:
    return _made(settings().studio_home)


def db_path() -> Path:
    return home() / "studio.sqlite"


def llm_cache_path() -> Path:
    return home() / "llm_cache.sqlite"


# Built artefacts are large and derived only from their inputs (keyed by fingerprint or hash),
# so they are shared by every user state folder unless a setting moves them.
def model_dir() -> Path:
    return _made(settings().model_dir)


def index_dir() -> Path:
    return _made(settings().index_dir)


def corpora_dir() -> Path:
    """Corpora the setup generates (the HPO definitions)."""
    return _made(settings().corpora_dir)
