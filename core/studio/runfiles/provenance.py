"""Where a saved run came from, beside the run: the backend that answered, the corpora it searched with their
index fingerprints, the teaching case it answers, and for an imported run the file and when it came in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.engine import paths
from core.engine.store import RunStore
from core.engine.trace import Run
from core.studio.runfiles.format import CorpusRef, Origin, RunEntry, Variation
from core.studio.runfiles.masking import known_secrets, mask

TABLE = "run_provenance"


def index_fingerprints(index_dir: Path | None = None) -> dict[str, str | None]:
    """Corpus name -> the fingerprint of its index on this machine (None when two indexes share a name)."""
    found: dict[str, str | None] = {}
    root = Path(index_dir or paths.index_dir())
    for manifest_path in sorted(root.glob("*/manifest.json")):
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        name, fp = manifest.get("corpus"), manifest.get("fingerprint")
        if isinstance(name, str):
            found[name] = fp if found.get(name, fp) == fp else None
    return found


def retriever_corpora(retriever: Any) -> list[CorpusRef]:
    """The corpora a live retriever searches, with the fingerprints of the indexes it opened."""
    indexes = getattr(retriever, "indexes", {}) or {}
    return [
        CorpusRef(name=name, fingerprint=getattr(indexes.get(name), "manifest", {}).get("fingerprint"))
        for name in getattr(retriever, "corpora", [])
    ]


def record(
    store: RunStore,
    run_id: str,
    *,
    backend: str,
    corpora: list[CorpusRef],
    case_id: str | None = None,
    origin: Origin | None = None,
    variation: Variation | None = None,
) -> None:
    """Keep a run's provenance (a run recorded or re-run here, or imported)."""
    row = provenance_row(run_id, backend, corpora, case_id, origin, variation)
    with store.writing() as db:
        db[TABLE].upsert(row, pk="run_id")


def provenance_row(
    run_id: str,
    backend: str,
    corpora: list[CorpusRef],
    case_id: str | None,
    origin: Origin | None,
    variation: Variation | None = None,
) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "backend": mask(backend, known_secrets()),
        "corpora": json.dumps([c.model_dump() for c in corpora]),
        "case_id": case_id,
        "source": origin.source if origin else None,
        "imported_at": origin.imported_at if origin else None,
        "exported_at": origin.exported_at if origin else None,
        "variation": variation.model_dump_json() if variation else None,
    }


def lookup(store: RunStore, run_id: str) -> dict[str, Any] | None:
    with store.reading() as db:
        rows = list(db[TABLE].rows_where("run_id = ?", [run_id]))
    return rows[0] if rows else None


def entry_for(store: RunStore, run: Run, local_fingerprints: dict[str, str | None] | None = None) -> RunEntry:
    """The run as it goes into a file. A run with no provenance row (asked on Ask or Compare) gets its model as
    the backend and the fingerprints of the indexes of its corpora on this machine."""
    row = lookup(store, run.id)
    if row is None:
        local = index_fingerprints() if local_fingerprints is None else local_fingerprints
        return RunEntry(
            run=run, backend=run.model, corpora=[CorpusRef(name=c, fingerprint=local.get(c)) for c in run.corpus]
        )
    origin = None
    if row["imported_at"] is not None:
        origin = Origin(source=row["source"] or "", imported_at=row["imported_at"], exported_at=row["exported_at"])
    variation = Variation.model_validate_json(row["variation"]) if row["variation"] else None
    return RunEntry(
        run=run,
        backend=row["backend"],
        corpora=[CorpusRef(**c) for c in json.loads(row["corpora"])],
        case_id=row["case_id"],
        origin=origin,
        variation=variation,
    )


def imported_runs(store: RunStore) -> dict[str, dict[str, Any]]:
    """Run id -> provenance row, for every imported run (History marks them)."""
    with store.reading() as db:
        return {r["run_id"]: r for r in db[TABLE].rows_where("imported_at IS NOT NULL")}
