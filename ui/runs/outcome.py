"""A run's outcome on screen: the question, the answer card (with a flag when its letter and its reasoning
disagree) and its cited documents once each, or what went wrong; and the totals."""

from __future__ import annotations

import streamlit as st

from core.engine.trace import AgentMessage, Error, Run
from core.studio.consistency import check_answer
from ui.common.text import esc, md
from ui.runs.cuts import cut_note
from ui.runs.id_links import linked
from ui.runs.money import cost_line
from ui.runs.snippet_cards import Evidence, cards, doc_card
from ui.runs.teaching_view import case_line

NOT_FINISHED = (
    "**Not finished:** this run is still going in another session or process, or that process ended before the run did."
)


def render_question(run: Run) -> None:
    st.markdown(f"**Question:** {md(run.question)}")
    if run.options:
        chosen = run.answer.choice if run.answer else None
        st.markdown(
            "\n".join(
                f"- {'**' if k == chosen else ''}{md(k)}\\. {md(v)}{'** ◀' if k == chosen else ''}"
                for k, v in run.options.items()
            )
        )


def _ended_without_answer(run: Run, key: str) -> None:
    errors = [e.payload for e in run.events if isinstance(e.payload, Error)]
    if run.status == "interrupted":
        title, message = "Interrupted", "the process running it ended before the run did"
    else:
        title = "Stopped" if run.status == "cancelled" else "The run failed"
        message = errors[-1].message if errors else "the run ended without an answer"
    with st.container(key=f"error-card-{key}"):
        st.markdown(f"**{title}:** {md(message)}")
        st.caption(f"The trace up to that point is below ({len(run.events)} events). The run is saved in History.")


def _final_reply_cut(run: Run) -> bool:
    """Whether the reply the answer came from (the run's last call) ended at its token budget."""
    last = next((e.payload for e in reversed(run.events) if isinstance(e.payload, AgentMessage)), None)
    return last is not None and last.cut


def render_outcome(run: Run, evidence: Evidence, key: str) -> None:
    """The answer card with its cited documents, or what went wrong."""
    if run.status == "running":  # a saved run another process is still writing, or one whose process died
        with st.container(key=f"running-card-{key}"):
            st.markdown(NOT_FINISHED)
            st.caption(f"The trace so far is below ({len(run.events)} events).")
        return
    if run.status != "ok" or run.answer is None:
        _ended_without_answer(run, key)
        return
    answer = run.answer
    mismatch = check_answer(answer, run.options, run.question)
    # a letter its own reasoning argues against is not drawn as a settled answer
    with st.container(key=f"answer-card-{'mismatch-' if mismatch else ''}{key}"):
        letter = f'<span class="letter">{esc(answer.choice)}</span>' if answer.choice else ""
        st.markdown(f'<div class="answer-line">{letter}{esc(answer.text)}</div>', unsafe_allow_html=True)
        if mismatch:
            st.warning(mismatch.message(run.options), icon=":material/rule:")
        cut = cut_note(answer.rationale, evidence.bounds, budget=_final_reply_cut(run))
        if answer.rationale:
            st.markdown(linked(answer.rationale, evidence) + (" …" if cut else ""), unsafe_allow_html=True)
        if cut:
            st.caption(cut)
        if answer.answer_format and answer.answer_format != "reasoning first":  # the papers' order goes unsaid
            st.caption(
                f"Answered {answer.answer_format}"
                + (
                    " (no reasoning asked for)"
                    if answer.answer_format == "answer only"
                    else ", its reasoning written after it"
                )
            )
        if answer.note:
            st.info(answer.note)
        case_line(run, evidence)
        if evidence.cited:
            st.markdown(f"**Cited** · {len(evidence.cited)}")
            cards([doc_card(i, evidence) for i in evidence.cited])


def render_totals(run: Run) -> None:
    t = run.totals if run.finished else run.compute_totals()
    columns = st.columns(5)
    for column, (label, value) in zip(
        columns,
        (
            ("Status", run.status),
            ("LLM calls", f"{t.calls}"),
            ("Retrievals", f"{t.retrievals}"),
            ("Tokens", f"{t.tokens:,}"),
            ("Seconds", f"{t.seconds:.1f}"),
        ),
    ):
        column.metric(label, value)
    cost_line(run)
