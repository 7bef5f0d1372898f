"""Export saved runs to a run file, and import one: the whole file is checked before anything is written, and
everything it brings is written in one transaction, so an import is complete or does not happen."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from core.engine.store import RunStore
from core.engine.store.runs import mark_interrupted
from core.engine.trace import Run
from core.studio.runfiles import io, provenance
from core.studio.runfiles.format import Kind, Origin, RunFile, RunFileError

STILL_RUNNING = (
    "the run was still going where it was exported, and it goes on nowhere here; its trace is kept up to that point"
)


def export_runs(store: RunStore, run_ids: list[str], *, kind: Kind | None = None, title: str = "") -> RunFile:
    """The runs (in the order given) as a run file; an unknown id is refused by name, and so is a run still going
    (its file would hold a run that says "running" and has not the events it goes on to have)."""
    if not run_ids:
        raise RunFileError("no runs to export: choose at least one")
    missing = [i for i in run_ids if not store.has_run(i)]
    if missing:
        raise RunFileError(f"no saved run has the id {', '.join(missing)}")
    runs = [store.load_run(i) for i in dict.fromkeys(run_ids)]
    going = [r.id for r in runs if r.status == "running"]
    if going:
        raise RunFileError(f"run {', '.join(going)} is still running: export it once it has ended")
    local = provenance.index_fingerprints()
    entries = [provenance.entry_for(store, run, local) for run in runs]
    return RunFile(kind=kind or ("run" if len(entries) == 1 else "selection"), title=title, runs=entries)


def export_to(store: RunStore, run_ids: list[str], path: Path | str, **kwargs: Any) -> RunFile:
    run_file = export_runs(store, run_ids, **kwargs)
    io.write(run_file, path)
    return run_file


@dataclass
class ImportReport:
    source: str
    imported: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # already here with the same content
    interrupted: list[str] = field(default_factory=list)  # imported, but still running where they were exported

    def summary(self) -> str:
        parts = [f"{len(self.imported)} run{'s' if len(self.imported) != 1 else ''} imported from {self.source}"]
        if self.interrupted:
            parts.append(
                f"{len(self.interrupted)} of them still running where exported, kept as interrupted "
                f"({', '.join(self.interrupted)})"
            )
        if self.skipped:
            parts.append(f"{len(self.skipped)} already here with the same content, skipped ({', '.join(self.skipped)})")
        return "; ".join(parts)


def _comparable(run: Run) -> dict[str, Any]:
    return run.model_dump(mode="json")


def _differences(here: Run, there: Run) -> str:
    a, b = _comparable(here), _comparable(there)
    fields = [k for k in a if k != "events" and a[k] != b.get(k)]
    if a["events"] != b["events"]:
        fields.append(f"events ({len(here.events)} here, {len(there.events)} in the file)")
    return ", ".join(fields)


def import_file(
    store: RunStore, source: Path | str | BinaryIO, *, name: str | None = None, **limits: int
) -> ImportReport:
    """Check the whole file, then import it (see ``import_runs``)."""
    label = name or (Path(source).name if isinstance(source, str | Path) else "the uploaded file")
    return import_runs(store, io.read(source, **limits), label)


def as_imported(run: Run) -> Run:
    """The run as it is kept here: one still running where it was exported comes in interrupted at its last event
    (no process here will ever finish it)."""
    if run.status != "running":
        return run
    run = run.model_copy(deep=True)
    mark_interrupted(run, STILL_RUNNING, max((e.time for e in run.events), default=run.started))
    return run


def import_runs(store: RunStore, run_file: RunFile, label: str) -> ImportReport:
    """Write a checked file's new runs in one transaction, each marked as imported from ``label``. A run whose id
    is already here is skipped when its content is the same and refuses the whole import when it differs."""
    report = ImportReport(source=label)
    now = time.time()
    runs = {entry.run.id: as_imported(entry.run) for entry in run_file.runs}
    with store.writing() as db:
        conflicts = []
        for entry in run_file.runs:
            run = runs[entry.run.id]
            if not store.has_run(run.id):
                continue
            here = store.load_run(run.id)
            if _comparable(here) == _comparable(run):
                report.skipped.append(run.id)
            else:
                conflicts.append(f"run {run.id} ({_differences(here, run)})")
        if conflicts:
            raise RunFileError(
                "these runs are already here with different content: "
                + "; ".join(conflicts)
                + ". Delete them in History first to replace them."
            )
        for entry in run_file.runs:
            run = runs[entry.run.id]
            if run.id in report.skipped:
                continue
            db["runs"].insert(RunStore._run_row(run))
            db["events"].insert_all([RunStore._event_row(e) for e in run.events])
            origin = Origin(source=label, imported_at=now, exported_at=run_file.exported_at)
            db[provenance.TABLE].insert(
                provenance.provenance_row(run.id, entry.backend, entry.corpora, entry.case_id, origin, entry.variation)
            )
            report.imported.append(run.id)
            if entry.run.status == "running":
                report.interrupted.append(run.id)
    return report
