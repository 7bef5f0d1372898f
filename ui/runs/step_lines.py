"""One readable Markdown line per step, for the list a live run grows: who did what, and what it cost."""

from __future__ import annotations

from typing import Any

from core.engine.trace import AgentMessage, Event
from ui.common.text import md, short

FIELD_CHARS = 90


def field_text(value: Any) -> str:
    """A reply field as a short plain phrase: lists joined, objects by their values."""
    if isinstance(value, dict):
        return " · ".join(field_text(v) for v in value.values())
    if isinstance(value, list):
        return "; ".join(field_text(v) for v in value) or "none"
    return str(value)


def fields_line(data: dict[str, Any], limit: int = FIELD_CHARS) -> str:
    return " · ".join(f":gray[{md(k.replace('_', ' '))}] {md(short(field_text(v), limit))}" for k, v in data.items())


def reading_text(p: AgentMessage) -> str:
    """How many of the snippets it was given a call read ("read 9 of 32 snippets"); empty for a call that read none."""
    if p.read is None:
        return ""
    of = f" of {p.offered}" if p.offered is not None and p.offered != len(p.read) else ""
    return f"read {len(p.read)}{of} snippet{'' if (p.offered or len(p.read)) == 1 else 's'}"


def _what(event: Event) -> str:
    p = event.payload
    match p.kind:
        case "agent_message":
            said = fields_line(p.data) if p.data else md(short(p.text, 2 * FIELD_CHARS))
            reading = reading_text(p)
            return f":gray[{reading} ·] {said}" if reading else said
        case "query":
            return f"query: {md(short(p.text, 2 * FIELD_CHARS))}"
        case "retrieval":
            return f"retrieved {len(p.hits)} snippets for: {md(short(p.query, FIELD_CHARS))}"
        case "generated_doc":
            return f"wrote {md(p.doc_id)} for the gap: {md(short(p.gap, FIELD_CHARS))}"
        case "verdict":
            overall = "" if p.accepted is None else ("accepted · " if p.accepted else "rejected · ")
            return f"verdict: {overall}kept {sum(i.keep for i in p.items)} of {len(p.items)}"
        case "sufficiency":
            return f"round {p.round}: {'sufficient' if p.sufficient else 'not sufficient'}"
        case "report":
            return f"report: {len(p.supporting)} supporting, {len(p.refuting)} refuting, {len(p.conflicts)} conflicts"
        case "answer":
            return f"**answer {md(p.choice or '')}** {md(short(p.text, FIELD_CHARS))}"
        case "error":
            return f":red[{md(p.message)}]"
    return p.kind


def step_line(event: Event) -> str:
    u = event.usage
    cost = f" :gray[· {u.completion_tokens} tokens written · {u.seconds:.1f} s]" if u.calls else ""
    return f"**{md(event.agent)}** :gray[{md(event.stage)}] — {_what(event)}{cost}"
