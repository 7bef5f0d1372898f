"""The teaching pack on screen: marks for its passages, a run's tally against its case, and the case's answer
revealed (on request) after the method's own."""

from __future__ import annotations

import streamlit as st

from core.engine.trace import Run
from core.studio.teaching import TeachingPack, TeachingPackError, tally
from core.studio.workshop.marks import NO_RETRIEVAL, retrieved
from ui.common.text import md
from ui.runs.snippet_cards import Evidence, Marks


@st.cache_resource(show_spinner=False)
def _load() -> tuple[TeachingPack | None, str | None]:
    try:
        return TeachingPack.load(), None
    except TeachingPackError as exc:
        return None, f"The teaching pack cannot be read: {exc}"


def pack() -> TeachingPack | None:
    return _load()[0]


def pack_problem() -> str | None:
    return _load()[1]


def marks_for(run: Run) -> Marks:
    """The teaching marks a run's cards carry: its own case's passages, and nothing for a question of no case."""
    found = pack()
    return (found.case_marks(run.question, run.options) if found else {}).get


def case_line(run: Run, evidence: Evidence) -> None:
    """'Teaching case …: met 2 of 4 key passages, cited the outdated one', for a run on a teaching-pack case."""
    found = pack()
    case = found.case_for(run.question, run.options) if found else None
    if case is None:
        return
    line = tally(case, list(evidence.hits), evidence.cited).line() if retrieved(run) else NO_RETRIEVAL
    st.markdown(f":material/school: **Teaching case** “{md(case.title)}”: {md(line)}")


def reveal(run: Run) -> None:
    """The pack's answer and teaching note, folded under a title that does not say whether the method agreed."""
    found = pack()
    case = found.case_for(run.question, run.options) if found else None
    if case is None:
        return
    with st.expander("Teaching pack answer and note: open to reveal", icon=":material/school:"):
        verdict = "the same answer" if run.answer and run.answer.choice == case.answer else "a different answer"
        st.markdown(f"**{md(case.answer)}\\.** {md(case.options[case.answer])}")
        if run.answer and run.answer.choice:
            st.caption(f"The method chose {run.answer.choice}: {verdict}.")
        st.markdown(md(case.teaching_note))
