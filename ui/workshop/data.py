"""Where the Workshop page gets its runs: the recorded pack in the repository (read once per change of its files,
shared by every session) or the saved and imported runs in the studio database. No model is ever involved."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from core.engine.trace import Run
from core.studio.runfiles import RunEntry
from core.studio.teaching import TeachingCase
from core.studio.workshop.pack import PackCase, load_pack, pack_dir
from ui.common import state
from ui.runs.question_form import teaching_cases
from ui.runs.teaching_view import pack as teaching_pack

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


def case_of(run: Run) -> TeachingCase | None:
    """The teaching case a run answers: the one whose question and options it asked, whatever a file says."""
    found = teaching_pack()
    return found.case_for(run.question, run.options) if found else None


def load(source: str, run_ids: list[str] | tuple[str, ...]) -> Chosen:
    """The runs of a room or a link, from the pack or the store; a missing run raises ``KeyError`` naming it."""
    if source == PACK:
        entries = pack()[2]
        missing = [i for i in run_ids if i not in entries]
        if missing:
            raise KeyError(f"run {', '.join(missing)} is not in the workshop pack")
        runs = [entries[i].run for i in run_ids]
        return Chosen(PACK, runs, case_of(runs[0]))
    store = state.store()
    runs = [store.load_run(i) for i in run_ids]
    return Chosen(STORE, runs, case_of(runs[0]) if runs else None)
