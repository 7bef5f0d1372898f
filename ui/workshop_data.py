"""Where the Workshop page gets its runs: the recorded pack in the repository (read once per change of its files,
shared by every session) or the saved and imported runs in the studio database. No model is ever involved."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from core.runfiles import RunEntry, provenance
from core.teaching import TeachingCase
from core.trace import Run
from core.workshop.pack import PackCase, load_pack, pack_dir
from ui import state
from ui.question_form import teaching_cases

PACK = "pack"  # a room's source: the recorded pack; otherwise "store"
STORE = "store"


@st.cache_resource(show_spinner=False, max_entries=4)
def _pack(folder: str, signature: tuple[tuple[str, int], ...]) -> tuple[list[PackCase], list[str], dict[str, RunEntry]]:
    cases, problems = load_pack(Path(folder), teaching_cases())
    entries = {e.run.id: e for c in cases for e in c.runs.values()}
    return cases, problems, entries


def pack() -> tuple[list[PackCase], list[str], dict[str, RunEntry]]:
    """The recorded cases, the files that could not be read, and every pack run by id."""
    folder = pack_dir()
    signature = tuple((p.name, p.stat().st_mtime_ns) for p in sorted(folder.glob("*.json.gz")))
    return _pack(str(folder), signature)


@dataclass
class Chosen:
    """Runs picked for a replay: where they come from and the teaching case they answer, if any."""

    source: str
    runs: list[Run]
    case: TeachingCase | None

    @property
    def ids(self) -> list[str]:
        return [r.id for r in self.runs]


def case_by_id(case_id: str | None) -> TeachingCase | None:
    return next((c for c in teaching_cases() if c.id == case_id), None)


def case_of_question(text: str) -> TeachingCase | None:
    return next((c for c in teaching_cases() if c.question.strip() == text.strip()), None)


def load(source: str, run_ids: list[str] | tuple[str, ...]) -> Chosen:
    """The runs of a room or a link, from the pack or the store; a missing run raises ``KeyError`` naming it."""
    if source == PACK:
        entries = pack()[2]
        missing = [i for i in run_ids if i not in entries]
        if missing:
            raise KeyError(f"run {', '.join(missing)} is not in the workshop pack")
        chosen = [entries[i] for i in run_ids]
        return Chosen(PACK, [e.run for e in chosen], case_by_id(chosen[0].case_id))
    store = state.store()
    runs = [store.load_run(i) for i in run_ids]
    row = provenance.lookup(store, run_ids[0]) if run_ids else None
    case = case_by_id(row["case_id"]) if row and row["case_id"] else None
    return Chosen(STORE, runs, case or (case_of_question(runs[0].question) if runs else None))
