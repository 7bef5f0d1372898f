"""Where the studio keeps its state: one folder, movable with MEDRAG_STUDIO_HOME (tests point it at a tmp dir)."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def home() -> Path:
    path = Path(os.environ.get("MEDRAG_STUDIO_HOME") or REPO_ROOT / ".cache")
    path.mkdir(parents=True, exist_ok=True)
    return path


def db_path() -> Path:
    return home() / "studio.sqlite"


def llm_cache_path() -> Path:
    return home() / "llm_cache.sqlite"


def _shared(env: str, name: str) -> Path:
    path = Path(os.environ.get(env) or REPO_ROOT / ".cache" / name)
    path.mkdir(parents=True, exist_ok=True)
    return path


# Built artefacts are large and derived only from their inputs (keyed by fingerprint or hash),
# so they are shared by every user state folder unless an environment variable moves them.
def model_dir() -> Path:
    return _shared("MEDRAG_MODEL_DIR", "models")


def index_dir() -> Path:
    return _shared("MEDRAG_INDEX_DIR", "indexes")


def corpora_dir() -> Path:
    """Corpora the setup generates (the HPO definitions)."""
    return _shared("MEDRAG_CORPORA_DIR", "corpora")
