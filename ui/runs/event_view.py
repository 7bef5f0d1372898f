"""One trace event drawn by its kind: an agent's message, a query, a retrieval, a verdict, a sufficiency round,
a report, the answer or an error."""

from __future__ import annotations

import re

import streamlit as st

from core.engine.llm.ladder import TEXT_MODE
from core.engine.methods.quotes import quote_of, verbatim_prefix
from core.engine.trace import (
    AgentMessage,
    Answer,
    Error,
    Event,
    GeneratedDoc,
    Query,
    Report,
    Retrieval,
    Shortfall,
    Sufficiency,
    Usage,
    Verdict,
    VerdictItem,
)
from ui.common.text import esc, folded, md
from ui.runs.cuts import BUDGET, clipped, cut_note, cut_suffix
from ui.runs.id_links import id_chip, linked
from ui.runs.reply_fields import reply_fields
from ui.runs.snippet_cards import Evidence, cards, is_budget_cut, snippet_card, verdict_tag
from ui.runs.step_lines import reading_text

# (words looked for in the role or agent name, avatar, badge colour); the first match wins.
ROLE_STYLES: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (("recruit",), ":material/group_add:", "violet"),
    (("question",), ":material/contact_support:", "violet"),
    (("reader", "answer", "respond"), ":material/menu_book:", "green"),
    (("summar", "compress"), ":material/summarize:", "blue"),
    (("arbit", "synthes", "integrat"), ":material/balance:", "orange"),
    (("judge", "decision", "verif", "critic", "evaluat"), ":material/fact_check:", "red"),
    (("explor", "gap"), ":material/travel_explore:", "violet"),
    (("generat", "writer"), ":material/edit_note:", "violet"),
    (("extract",), ":material/content_cut:", "gray"),
    (("reason", "planner", "interpret", "schema"), ":material/psychology:", "blue"),
    (("expert", "ologist", "ician", "clinician"), ":material/stethoscope:", "green"),
)
REPORT_FIELDS = {"supporting", "refuting"}  # a reply with these fields is the raw form of a Report event


def role_style(role: str, agent: str) -> tuple[str, str]:
    for text in (role.lower(), agent.lower()):
        for words, avatar, colour in ROLE_STYLES:
            if any(w in text for w in words):
                return avatar, colour
    return ":material/chat:", "gray"


def usage_text(usage: Usage) -> str:
    parts = []
    if usage.calls:
        parts.append(f"{usage.prompt_tokens:,}+{usage.completion_tokens:,} tokens")
    if usage.retrievals:
        parts.append(f"{usage.retrievals} retrieval{'s' if usage.retrievals > 1 else ''}")
    if usage.calls or usage.retrievals:
        parts.append(f"{usage.seconds:.1f} s")
    if usage.cached:
        parts.append("cached")
    return " · ".join(parts)


def shortfall_note(short: Shortfall) -> str:
    """A list the model wrote shorter than asked, which the run used as written."""
    said = short.text[:1].upper() + short.text[1:]
    return f":material/format_list_numbered: :orange[{md(said)}]: the run went on with what it wrote."


def is_raw_report(event: Event, stage_events: list[Event]) -> bool:
    """An agent's reply that the same agent's Report event in this stage draws again, in full."""
    p = event.payload
    return (
        isinstance(p, AgentMessage)
        and bool(p.data)
        and REPORT_FIELDS <= set(p.data)
        and any(isinstance(e.payload, Report) and e.agent == event.agent for e in stage_events)
    )


def agent_message(event: Event, p: AgentMessage, evidence: Evidence, *, fold: bool = False) -> None:
    avatar, colour = role_style(p.role, event.agent)
    with st.chat_message(event.agent, avatar=avatar):
        turn = f" · turn {p.turn}" if p.turn is not None else ""
        reading = f" · {reading_text(p)}" if p.read is not None else ""
        mode = f" · {md(p.mode)}" if p.mode and p.mode != TEXT_MODE else ""
        st.markdown(
            f":{colour}-badge[{md(event.agent)}] :gray[{md(p.role)}{turn}{reading} · {usage_text(event.usage)}{mode}]"
        )
        if p.reasoning:
            with st.expander("The reasoning the model showed before its reply"):
                st.markdown(md(p.reasoning))
        if fold:
            st.caption("Wrote the report drawn below.")
        elif p.data:
            reply_fields(p.data, evidence)
        else:
            note = cut_note(p.text, evidence.bounds)
            st.markdown(
                linked(p.text, evidence) + (" …" if note else "") or ":gray[(empty reply)]", unsafe_allow_html=True
            )
            if note and not p.cut:
                st.caption(note)
        if p.cut:
            st.caption(BUDGET)
        for short in p.shortfalls:
            st.caption(shortfall_note(short))
        for note in p.notes:
            st.caption(f":material/info: {md(note)}")


QUERY_CHARS = 200  # a retrieval's query on its one line
ANSWER_CHARS = 300  # the answer's text on the trace's last line


def _retrieval(event: Event, p: Retrieval, evidence: Evidence) -> None:
    round_ = f" · round {p.round}" if p.round is not None else ""
    corpora = sorted({h.corpus for h in p.hits})
    marked = [m for m in map(evidence.marks, (h.snippet_id for h in p.hits)) if m]
    teach = f" · teaching pack: {', '.join(sorted({m.word for m in marked}))}" if marked else ""
    st.markdown(
        f":material/library_books: **{md(event.agent)}** retrieved **{len(p.hits)}** snippets "
        f"({md(p.retriever)}{round_}, {md(', '.join(corpora) or 'no corpus')}) for: "
        f"{clipped(p.query, QUERY_CHARS, 'at the top of the snippets below')} "
        f":gray[· {usage_text(event.usage)}{md(teach)}]"
    )
    if p.hits:
        with st.expander(f"The {len(p.hits)} snippets, best first"):
            if len(p.query) > QUERY_CHARS:
                st.markdown(f"**The query in full:** {md(p.query)}")
            cards([snippet_card(h, evidence) for h in p.hits])


NOT_VERBATIM = re.compile(r'^"(?P<quote>.*?)(?:…)?" not verbatim in (?P<doc>.+)$', re.S)


def _why(item: VerdictItem, evidence: Evidence) -> str:
    """A verdict's reason as HTML. A quote found not to be verbatim is shown whole (the reason may hold it shortened,
    which would hide the words that failed), the words from where the document stops saying it marked."""
    failed = NOT_VERBATIM.match(item.reason) if not item.keep else None
    doc = evidence.hits.get(item.doc_id)
    if failed is None or doc is None:
        return esc(item.reason)
    start = failed["quote"]
    quote = next((q for q in map(quote_of, evidence.quoted.get(item.doc_id, [])) if q.startswith(start)), start)
    found = verbatim_prefix(quote, f"{doc.title}\n{doc.text}")
    return (
        f'"{esc(quote[:found])}<span class="unverified">{esc(quote[found:])}</span>" not verbatim in '
        f"{esc(failed['doc'])}: the marked words are not the document's"
    )


def _verdict(event: Event, p: Verdict, evidence: Evidence) -> None:
    overall = ""
    if p.accepted is not None:
        overall = ":green-badge[accepted]" if p.accepted else ":red-badge[rejected]"
    st.markdown(f":material/fact_check: **{md(event.agent)}** verdict {overall} {md(p.reason)}")
    rows = []
    for item in p.items:
        doc = evidence.hits.get(item.doc_id)
        name = doc.title if doc and doc.title else item.doc_id
        why = "" if is_budget_cut(item) else f'<span class="why">{_why(item, evidence)}</span>'
        rows.append(
            f'<div class="row">{verdict_tag(item, item.doc_id in evidence.generated)}{id_chip(item.doc_id, evidence)}'
            f"<b>{esc(name)}</b>{why}</div>"
        )
    if rows:
        st.markdown(f'<div class="verdicts">{"".join(rows)}</div>', unsafe_allow_html=True)


def _sufficiency(p: Sufficiency) -> None:
    gaps = "".join(f"<li>{esc(g)}</li>" for g in p.gaps)
    queries = "".join(f'<span class="query-chip">{esc(q)}</span>' for q in p.follow_up_queries)
    # without follow-ups an insufficient round is the last one: the next step works with what was found
    verdict = "sufficient ✓" if p.sufficient else "not sufficient yet" if queries else "not sufficient, no turn left"
    st.markdown(
        f'<div class="timeline"><div class="round{" ok" if p.sufficient else ""}">'
        f'<span class="label">Round {p.round}: {verdict}</span>'
        f"{' · ' + str(p.new_hits) + ' new snippets' if p.new_hits else ''}"
        f"{'<div>Gaps:</div><ul>' + gaps + '</ul>' if gaps else ''}"
        f"{'<div>Follow-up queries:</div>' + queries if queries else ''}</div></div>",
        unsafe_allow_html=True,
    )


def _line(text: str, evidence: Evidence) -> str:
    """A text of the trace inline: its ids linked to their cards, and a note when a bound cut it."""
    return linked(text, evidence) + cut_suffix(text, evidence.bounds)


def _report(event: Event, p: Report, evidence: Evidence) -> None:
    summary = f": {_line(p.summary, evidence)}" if p.summary else ""
    st.markdown(f":material/balance: **{md(event.agent)}** report{summary}", unsafe_allow_html=True)
    columns = st.columns(3)
    for column, (title, colour, items) in zip(
        columns,
        (("Supporting", "green", p.supporting), ("Refuting", "red", p.refuting), ("Conflicts", "orange", p.conflicts)),
    ):
        with column:
            st.markdown(f":{colour}-badge[{title} · {len(items)}]")
            lines = [
                f"- {_line(item, evidence)}" + (f" :orange-badge[×{n}, repeated]" if n > 1 else "")
                for item, n in folded(items)
            ]
            st.markdown("\n".join(lines) or ":gray[none]", unsafe_allow_html=True)


def render_event(event: Event, evidence: Evidence, *, fold: bool = False) -> None:
    p = event.payload
    match p:
        case AgentMessage():
            agent_message(event, p, evidence, fold=fold)
        case Query():
            purpose = f" ({md(p.purpose)})" if p.purpose else ""
            st.markdown(
                f':material/search: **Query**{purpose}: <span class="query-chip">{esc(p.text)}</span>',
                unsafe_allow_html=True,
            )
        case Retrieval():
            _retrieval(event, p, evidence)
        case GeneratedDoc():
            cards([snippet_card(p, evidence)])
        case Verdict():
            _verdict(event, p, evidence)
        case Sufficiency():
            _sufficiency(p)
        case Report():
            _report(event, p, evidence)
        case Answer():
            choice = f"**{md(p.choice)}** · " if p.choice else ""
            text = clipped(p.text, ANSWER_CHARS, "in the answer card at the top")
            cited = " ".join(id_chip(i, evidence) for i in dict.fromkeys(p.cited))
            st.markdown(
                f":material/check_circle: **Final answer:** {choice}{text}"
                + (f" :gray[· cites] {cited}" if cited else " :gray[· cites no document]"),
                unsafe_allow_html=True,
            )
        case Error():
            st.error(f"{p.error_type or 'Error'}: {p.message}")
