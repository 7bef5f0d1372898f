"""The recorded workshop pack: teaching-pack cases × methods, run on the embedded model with the default corpus,
kept in the repository as one run file per case (``data/workshop_pack/<case id>.json.gz``) so a workshop runs the
moment the app opens, with no model and no corpus.

Recording is resumable: each finished run is written into its case's file at once (atomically), a run cut off
is simply recorded again next time, and cases or methods can be added later.
"""

from __future__ import annotations

import hashlib
import tempfile
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock

from core.engine.llm.answer_formats import PAPERS_FORMAT
from core.engine.methods import registry
from core.engine.methods.contract import Sink
from core.engine.retrieval.retriever import Retriever
from core.engine.runner import execute
from core.engine.settings import Settings, settings
from core.engine.trace import Run
from core.studio.runfiles import RunEntry, RunFile, RunFileError, read, write
from core.studio.runfiles.provenance import retriever_corpora
from core.studio.teaching import TeachingCase, load_cases

PACK_DIR: Path = Settings.model_fields["workshop_pack"].default  # the repository's
SIZE_BUDGET = 10 * 2**20  # the whole pack, in the repository


def pack_dir() -> Path:
    """The pack folder: MEDRAG_WORKSHOP_PACK when set (a pack kept elsewhere), else the repository's."""
    return settings().workshop_pack


def case_path(case_id: str, folder: Path | None = None) -> Path:
    return Path(folder or pack_dir()) / f"{case_id}.json.gz"


@dataclass
class PackCase:
    case: TeachingCase
    runs: dict[str, RunEntry]  # method -> its recorded run
    path: Path


def load_pack(folder: Path | None = None, cases: list[TeachingCase] | None = None) -> tuple[list[PackCase], list[str]]:
    """The recorded cases in teaching-pack order, and a message for each file that cannot be read."""
    found, problems = [], []
    for case in cases if cases is not None else load_cases():
        path = case_path(case.id, folder)
        if not path.exists():
            continue
        try:
            run_file = read(path)
        except RunFileError as exc:
            problems.append(f"{path.name}: {exc}")
            continue
        runs = {e.run.method: e for e in run_file.runs}
        found.append(PackCase(case=case, runs={m: runs[m] for m in registry() if m in runs}, path=path))
    return found, problems


def find_run(run_id: str, folder: Path | None = None) -> RunEntry | None:
    for pack_case in load_pack(folder)[0]:
        for entry in pack_case.runs.values():
            if entry.run.id == run_id:
                return entry
    return None


# -- what is recorded, what is missing ---------------------------------------------------------------------------


def status(cases: list[TeachingCase], methods: list[str], folder: Path | None = None) -> dict[tuple[str, str], str]:
    """(case id, method) -> the recorded run's status ("ok", "error", ...) or "missing"."""
    recorded = {p.case.id: p for p in load_pack(folder, cases)[0]}
    return {
        (c.id, m): (recorded[c.id].runs[m].run.status if c.id in recorded and m in recorded[c.id].runs else "missing")
        for c in cases
        for m in methods
    }


def pack_bytes(folder: Path | None = None) -> int:
    return sum(p.stat().st_size for p in Path(folder or pack_dir()).glob("*.json.gz"))


def status_table(cases: list[TeachingCase], methods: list[str], folder: Path | None = None) -> str:
    """A plain-text grid: one row per case, one column per method; ✓ recorded, ✗ ended in error, · missing."""
    found = status(cases, methods, folder)
    marks = {"ok": "✓", "missing": "·"}
    width = max(len(c.id) for c in cases)
    lines = [" " * width + "  " + " ".join(f"{m:>8}" for m in methods)]
    for case in cases:
        lines.append(f"{case.id:<{width}}  " + " ".join(f"{marks.get(found[case.id, m], '✗'):>8}" for m in methods))
    done = sum(v == "ok" for v in found.values())
    missing = [f"{c}/{m}" for (c, m), v in found.items() if v == "missing"]
    failed = [f"{c}/{m}" for (c, m), v in found.items() if v not in ("ok", "missing")]
    lines.append(
        f"recorded {done} of {len(found)}; missing {len(missing)}; ended in error {len(failed)}; "
        f"pack size {pack_bytes(folder) / 2**20:.2f} MB of {SIZE_BUDGET / 2**20:.0f} MB"
    )
    if failed:
        lines.append("ended in error (record again with --retry-errors): " + ", ".join(failed))
    return "\n".join(lines)


def to_record(
    cases: list[TeachingCase],
    methods: list[str],
    folder: Path | None = None,
    retry_errors: bool = False,
    again: bool = False,
) -> list[tuple[TeachingCase, str]]:
    """What is missing (and what ended in error, with ``retry_errors``); with ``again``, every pair asked for,
    as after a method changed: each is replaced when its new run ends, so a stop leaves the old ones."""
    found = status(cases, methods, folder)
    return [
        (c, m)
        for c in cases
        for m in methods
        if again or found[c.id, m] == "missing" or (retry_errors and found[c.id, m] != "ok")
    ]


# -- recording ---------------------------------------------------------------------------------------------------


def save_run(case: TeachingCase, entry: RunEntry, folder: Path | None = None) -> Path:
    """Put one recorded run into its case's file (replacing that method's earlier run), methods in display order."""
    path = case_path(case.id, folder)
    runs = {e.run.method: e for e in read(path).runs} if path.exists() else {}
    runs[entry.run.method] = entry
    ordered = [runs[m] for m in registry() if m in runs]
    return write(RunFile(kind="comparison", title=case.title, runs=ordered), path)


def record(
    cases: list[TeachingCase],
    methods: list[str],
    *,
    llm,
    retriever: Retriever,
    folder: Path | None = None,
    retry_errors: bool = False,
    again: bool = False,
    sinks: Iterable[Sink] = (),
    on_plan: Callable[[list[tuple[TeachingCase, str]]], None] | None = None,
    on_start: Callable[[TeachingCase, str], None] | None = None,
    on_done: Callable[[TeachingCase, Run], None] | None = None,
    cancel: threading.Event | None = None,
) -> list[Run]:
    """Run each missing (case, method) with the method's default knobs, its final reader in the papers' order (the
    pack shows each method as its paper draws it, whatever the backend's best format), and save it into the pack as
    soon as it ends. One recorder at a time per pack folder (a file lock): a second one waits, then finds less to do.
    Setting ``cancel`` ends the run in flight within seconds; a cancelled run is not saved (it would teach a cut-off
    trace), so the next recording runs it again."""
    folder = Path(folder or pack_dir())
    folder.mkdir(parents=True, exist_ok=True)
    corpora = retriever_corpora(retriever)
    done = []
    key = hashlib.sha1(str(folder.resolve()).encode()).hexdigest()[:12]  # outside the folder: nothing to commit
    with FileLock(str(Path(tempfile.gettempdir()) / f"medrag-workshop-record-{key}.lock")):
        pairs = to_record(cases, methods, folder, retry_errors, again)
        if on_plan:
            on_plan(pairs)
        for case, method in pairs:
            if cancel is not None and cancel.is_set():
                break
            if on_start:
                on_start(case, method)
            spec = registry()[method]
            run = execute(
                method,
                case.to_question(),
                {"answer_format": PAPERS_FORMAT},
                llm=llm,
                retriever=retriever if spec.uses_retrieval else None,
                sinks=sinks,
                cancel=cancel,
            )
            if run.status == "cancelled":
                break
            entry = RunEntry(
                run=run, backend=llm.backend, corpora=corpora if spec.uses_retrieval else [], case_id=case.id
            )
            save_run(case, entry, folder)
            done.append(run)
            if on_done:
                on_done(case, run)
    return done
