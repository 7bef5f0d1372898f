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


def index_dir() -> Path:
    return home() / "indexes"


def model_dir() -> Path:
    """Assembled model files are large and identical for every user: shared unless MEDRAG_MODEL_DIR says otherwise."""
    path = Path(os.environ.get("MEDRAG_MODEL_DIR") or REPO_ROOT / ".cache" / "models")
    path.mkdir(parents=True, exist_ok=True)
    return path
