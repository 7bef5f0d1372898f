"""Draws a run's trace by event kind: the same view for a live run, a compared one and a saved one."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from core.trace import (
    AgentMessage,
    Answer,
    Error,
    Event,
    GeneratedDoc,
    Hit,
    Query,
    Report,
    Retrieval,
    Run,
    Sufficiency,
    Usage,
    Verdict,
    VerdictItem,
)
from ui.cost import render_cost, wall_usage
from ui.text import esc, md, short

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
PREVIEW_CHARS = 220
CITED_TAG = '<span class="tag cited">cited</span>'


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


@dataclass
class Evidence:
    """Everything a card needs to know about a document: where it came from, its verdict, if it is cited."""

    hits: dict[str, Hit] = field(default_factory=dict)
    generated: dict[str, GeneratedDoc] = field(default_factory=dict)
    verdicts: dict[str, VerdictItem] = field(default_factory=dict)
    cited: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, events: Iterable[Event]) -> Evidence:
        found = cls()
        for event in events:
            p = event.payload
            if isinstance(p, Retrieval):
                for hit in p.hits:
                    found.hits.setdefault(hit.snippet_id, hit)
            elif isinstance(p, GeneratedDoc):
                found.generated[p.doc_id] = p
            elif isinstance(p, Verdict):
                found.verdicts.update({item.doc_id: item for item in p.items})
            elif isinstance(p, Answer):
                found.cited = list(p.cited)
        return found


# -- cards (HTML: no nested expanders, so cards can sit anywhere) ----------------------------


def _verdict_tag(verdict: VerdictItem | None, generated: bool) -> str:
    if verdict is None:
        return ""
    word = ("selected" if generated else "kept") if verdict.keep else ("not selected" if generated else "dropped")
    title = f' title="{esc(verdict.reason)}"' if verdict.reason else ""
    return f'<span class="tag {"keep" if verdict.keep else "drop"}"{title}>{word}</span>'


def _body(text: str) -> str:
    if len(text) <= PREVIEW_CHARS:
        return f'<div class="full">{esc(text)}</div>'
    return f'<details><summary>{esc(short(text, PREVIEW_CHARS))}</summary><div class="full">{esc(text)}</div></details>'


def hit_card(hit: Hit, evidence: Evidence) -> str:
    verdict = evidence.verdicts.get(hit.snippet_id)
    cited = hit.snippet_id in evidence.cited
    classes = "snip" + (" cited" if cited else "") + (" dropped" if verdict and not verdict.keep else "")
    scores = [f"fused {hit.score:.4g}"]
    for name, value in hit.scores.items():
        scores.append(f"{name} {value:.3g}" + (f" (#{hit.ranks[name]})" if name in hit.ranks else ""))
    return (
        f'<div class="{classes}"><div class="snip-head"><span class="tag rank">#{hit.rank}</span>'
        f'<span class="tag corpus">{esc(hit.corpus)}</span>'
        f'<span class="title">{esc(hit.title or hit.snippet_id)}</span>'
        f'{_verdict_tag(verdict, False)}{CITED_TAG if cited else ""}</div>'
        f'<div class="snip-meta">{esc(hit.snippet_id)} · {esc(" · ".join(scores))}</div>{_body(hit.text)}</div>'
    )


def generated_card(doc: GeneratedDoc, evidence: Evidence) -> str:
    verdict = evidence.verdicts.get(doc.doc_id)
    cited = doc.doc_id in evidence.cited
    gap = f'<div class="snip-gap">fills the gap: {esc(doc.gap)}</div>' if doc.gap else ""
    return (
        f'<div class="snip gen{" cited" if cited else ""}">'
        f'<div class="snip-head"><span class="tag generated">generated</span>'
        f'<span class="title">{esc(doc.doc_id)}</span>{_verdict_tag(verdict, True)}'
        f'{CITED_TAG if cited else ""}</div>{gap}{_body(doc.text)}</div>'
    )


def cards(html_cards: list[str]) -> None:
    if html_cards:
        st.markdown(f'<div class="cards">{"".join(html_cards)}</div>', unsafe_allow_html=True)


def doc_card(doc_id: str, evidence: Evidence) -> str:
    if doc_id in evidence.hits:
        return hit_card(evidence.hits[doc_id], evidence)
    if doc_id in evidence.generated:
        return generated_card(evidence.generated[doc_id], evidence)
    return f'<div class="snip"><span class="title">{esc(doc_id)}</span></div>'


# -- one event -------------------------------------------------------------------------------


def _flat(value: Any) -> bool:
    scalar = (str, int, float, bool)
    return isinstance(value, scalar) or (isinstance(value, list) and all(isinstance(v, scalar) for v in value))


def _record(item: dict[str, Any]) -> str:
    """One object of a list (a claim and its ids, an expert and why, a snippet's judgment) as one line."""
    return " · ".join(f":gray[{md(k.replace('_', ' '))}] "
                      f"{md(', '.join(map(str, v)) if isinstance(v, list) else str(v)) or '–'}" for k, v in item.items())


def _structured(data: dict[str, Any]) -> None:
    """A parsed reply, compactly: short fields as one line of chips, long text as paragraphs, lists as bullets
    (a list of flat objects too, one line each); only deeper nesting falls back to a JSON view."""
    chips, blocks = [], []
    for key, value in data.items():
        name = key.replace("_", " ")
        if isinstance(value, str | int | float | bool) and len(str(value)) <= 40:
            chips.append(f"**{md(name)}** `{value}`" if value != "" else f"**{md(name)}** –")
        elif isinstance(value, str):
            blocks.append(f"**{md(name)}:** {md(value)}")
        elif isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
            items = "\n".join(f"- {md(str(v))}" for v in value) or "- (none)"
            blocks.append(f"**{md(name)}:**\n{items}")
        elif isinstance(value, list) and all(isinstance(v, dict) and all(map(_flat, v.values())) for v in value):
            items = "\n".join(f"- {_record(v)}" for v in value)
            blocks.append(f"**{md(name)}:**\n{items}")
        else:
            blocks.append((name, value))
    for block in blocks:
        if isinstance(block, tuple):
            st.markdown(f"**{md(block[0])}:**")
            st.json(block[1], expanded=1)
        else:
            st.markdown(block)
    if chips:
        st.markdown(" · ".join(chips))


def _agent_message(event: Event, p: AgentMessage) -> None:
    avatar, colour = role_style(p.role, event.agent)
    with st.chat_message(event.agent, avatar=avatar):
        turn = f" · turn {p.turn}" if p.turn is not None else ""
        st.markdown(f":{colour}-badge[{md(event.agent)}] :gray[{md(p.role)}{turn} · {usage_text(event.usage)}]")
        if p.data:
            _structured(p.data)
        else:
            st.markdown(md(p.text) or ":gray[(empty reply)]")


def _retrieval(event: Event, p: Retrieval, evidence: Evidence) -> None:
    round_ = f" · round {p.round}" if p.round is not None else ""
    corpora = sorted({h.corpus for h in p.hits})
    st.markdown(f":material/library_books: **{md(event.agent)}** retrieved **{len(p.hits)}** snippets "
                f"({md(p.retriever)}{round_}, {md(', '.join(corpora) or 'no corpus')}) for: "
                f"{md(short(p.query, 200))} :gray[· {usage_text(event.usage)}]")
    if p.hits:
        with st.expander(f"The {len(p.hits)} snippets, best first"):
            cards([hit_card(h, evidence) for h in p.hits])


def _verdict(event: Event, p: Verdict, evidence: Evidence) -> None:
    overall = ""
    if p.accepted is not None:
        overall = ":green-badge[accepted]" if p.accepted else ":red-badge[rejected]"
    st.markdown(f":material/fact_check: **{md(event.agent)}** verdict {overall} {md(p.reason)}")
    rows = []
    for item in p.items:
        doc = evidence.hits.get(item.doc_id)
        name = doc.title if doc and doc.title else item.doc_id
        word = "keep" if item.keep else "drop"
        rows.append(f'<div class="row"><span class="tag {word}">{word}</span><b>{esc(name)}</b>'
                    f'<span class="why">{esc(item.reason)}</span></div>')
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
        f'{" · " + str(p.new_hits) + " new snippets" if p.new_hits else ""}'
        f'{"<div>Gaps:</div><ul>" + gaps + "</ul>" if gaps else ""}'
        f'{"<div>Follow-up queries:</div>" + queries if queries else ""}</div></div>',
        unsafe_allow_html=True,
    )


def _report(event: Event, p: Report) -> None:
    st.markdown(f":material/balance: **{md(event.agent)}** report" + (f": {md(p.summary)}" if p.summary else ""))
    columns = st.columns(3)
    for column, (title, colour, items) in zip(columns, (("Supporting", "green", p.supporting),
                                                         ("Refuting", "red", p.refuting),
                                                         ("Conflicts", "orange", p.conflicts))):
        with column:
            st.markdown(f":{colour}-badge[{title} · {len(items)}]")
            st.markdown("\n".join(f"- {md(i)}" for i in items) or ":gray[none]")


def render_event(event: Event, evidence: Evidence) -> None:
    p = event.payload
    match p:
        case AgentMessage():
            _agent_message(event, p)
        case Query():
            purpose = f" ({md(p.purpose)})" if p.purpose else ""
            st.markdown(f':material/search: **Query**{purpose}: <span class="query-chip">{esc(p.text)}</span>',
                        unsafe_allow_html=True)
        case Retrieval():
            _retrieval(event, p, evidence)
        case GeneratedDoc():
            cards([generated_card(p, evidence)])
        case Verdict():
            _verdict(event, p, evidence)
        case Sufficiency():
            _sufficiency(p)
        case Report():
            _report(event, p)
        case Answer():
            choice = f"**{md(p.choice)}** · " if p.choice else ""
            st.markdown(f":material/check_circle: **Final answer:** {choice}{md(short(p.text, 300))}")
        case Error():
            st.error(f"{p.error_type or 'Error'}: {p.message}")


def stages(events: Iterable[Event]) -> list[tuple[str, list[Event]]]:
    """Events grouped by stage, stages in the order they first appear (parallel steps interleave)."""
    grouped: dict[str, list[Event]] = {}
    for event in events:
        grouped.setdefault(event.stage, []).append(event)
    return list(grouped.items())


def stage_cost(events: list[Event]) -> str:
    """The stage's usage with its wall time; when its calls ran at once, their summed seconds too."""
    usage = wall_usage(events)
    summed = sum(e.usage.seconds for e in events)
    cost = usage_text(usage)
    if summed - usage.seconds >= 1:
        cost += f" wall ({summed:.1f} s of calls at once)"
    return cost


def stage_head(name: str, events: list[Event]) -> None:
    cost = stage_cost(events)
    st.markdown(f'<div class="stage-head"><span class="name">{esc(name)}</span>'
                f'<span class="cost">{esc(cost)}</span></div>', unsafe_allow_html=True)


def render_timeline(events: list[Event], evidence: Evidence) -> None:
    for name, group in stages(events):
        stage_head(name, group)
        for event in group:
            render_event(event, evidence)


# -- whole run -------------------------------------------------------------------------------


def render_evidence(evidence: Evidence) -> None:
    """Retrieved and generated documents side by side, with verdicts and citations."""
    if not evidence.hits and not evidence.generated:
        st.caption("This run used no documents.")
        return
    retrieved = [hit_card(h, evidence) for h in evidence.hits.values()]
    if not evidence.generated:
        st.markdown(f"**Retrieved snippets** · {len(retrieved)}")
        cards(retrieved)
        return
    left, right = st.columns(2)
    with left:
        st.markdown(f"**Retrieved** · {len(retrieved)}")
        cards(retrieved)
    with right:
        st.markdown(f"**Generated** · {len(evidence.generated)}")
        cards([generated_card(d, evidence) for d in evidence.generated.values()])


def render_question(run: Run) -> None:
    st.markdown(f"**Question:** {md(run.question)}")
    if run.options:
        chosen = run.answer.choice if run.answer else None
        st.markdown("\n".join(f"- {'**' if k == chosen else ''}{md(k)}\\. {md(v)}{'** ◀' if k == chosen else ''}"
                              for k, v in run.options.items()))


def render_outcome(run: Run, evidence: Evidence, key: str) -> None:
    """The answer card with its cited documents, or what went wrong."""
    if run.status == "running":  # a saved run another process is still writing, or one whose process died
        with st.container(key=f"running-card-{key}"):
            st.markdown("**Not finished:** this run is still going in another session or process, or that process "
                        "ended before the run did.")
            st.caption(f"The trace so far is below ({len(run.events)} events).")
        return
    if run.status in ("error", "cancelled") or run.answer is None:
        errors = [e.payload for e in run.events if isinstance(e.payload, Error)]
        message = errors[-1].message if errors else "the run ended without an answer"
        with st.container(key=f"error-card-{key}"):
            st.markdown(f"**{'Stopped' if run.status == 'cancelled' else 'The run failed'}:** {md(message)}")
            st.caption(f"The trace up to that point is below ({len(run.events)} events). The run is saved in History.")
        return
    answer = run.answer
    with st.container(key=f"answer-card-{key}"):
        letter = f'<span class="letter">{esc(answer.choice)}</span>' if answer.choice else ""
        st.markdown(f'<div class="answer-line">{letter}{esc(answer.text)}</div>', unsafe_allow_html=True)
        if answer.rationale:
            st.markdown(md(answer.rationale))
        if answer.note:
            st.info(answer.note)
        if answer.cited:
            st.markdown(f"**Cited** · {len(answer.cited)}")
            cards([doc_card(i, evidence) for i in answer.cited])


def render_totals(run: Run) -> None:
    t = run.totals if run.finished else run.compute_totals()
    columns = st.columns(5)
    for column, (label, value) in zip(columns, (
        ("Status", run.status), ("LLM calls", f"{t.calls}"), ("Retrievals", f"{t.retrievals}"),
        ("Tokens", f"{t.tokens:,}"), ("Seconds", f"{t.seconds:.1f}"),
    )):
        column.metric(label, value)


def render_run(run: Run, *, key: str, show_question: bool = False) -> None:
    evidence = Evidence.of(run.events)
    if show_question:
        render_question(run)
    render_outcome(run, evidence, key)
    render_totals(run)
    trace, docs, cost, labels = st.tabs([
        f"Trace · {len(run.events)} events",
        f"Evidence · {len(evidence.hits)} retrieved, {len(evidence.generated)} generated",
        "Time and tokens", "Labels"])
    with trace:
        render_timeline(run.events, evidence)
    with docs:
        render_evidence(evidence)
    with cost:
        render_cost(run.events, key=key)
    with labels:
        from ui.labels_inline import label_tab  # imported here: it draws cards with this module's functions

        label_tab(run, evidence, key)
