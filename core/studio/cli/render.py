"""Events as one-line text, for the command line."""

from __future__ import annotations

from core.engine.trace import Event, Run


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe(event: Event) -> str:
    p = event.payload
    match p.kind:
        case "agent_message":
            body = _short(p.text)
        case "query":
            body = f"query: {_short(p.text)}"
        case "retrieval":
            top = ", ".join(f"{h.snippet_id} ({h.score:.3f})" for h in p.hits[:3])
            body = f"{len(p.hits)} hits for {_short(p.query, 60)!r}: {top}{' …' if len(p.hits) > 3 else ''}"
        case "generated_doc":
            body = f"generated {p.doc_id} for gap {_short(p.gap, 60)!r}: {_short(p.text, 80)}"
        case "verdict":
            kept = sum(i.keep for i in p.items)
            overall = "" if p.accepted is None else ("accepted, " if p.accepted else "rejected, ")
            body = f"verdict: {overall}kept {kept}/{len(p.items)} {_short(p.reason, 80)}"
        case "sufficiency":
            body = (
                f"round {p.round}: {'sufficient' if p.sufficient else 'insufficient'}"
                + (f"; gaps: {_short('; '.join(p.gaps), 80)}" if p.gaps else "")
                + (f"; follow-ups: {len(p.follow_up_queries)}" if p.follow_up_queries else "")
            )
        case "report":
            body = f"report: {len(p.supporting)} supporting, {len(p.refuting)} refuting, {len(p.conflicts)} conflicts"
        case "answer":
            body = f"ANSWER {p.choice + ': ' if p.choice else ''}{_short(p.text, 100)}" + (
                f" [{', '.join(p.cited)}]" if p.cited else ""
            )
        case "error":
            body = f"ERROR: {p.message}"
        case _:
            body = p.kind
    u = event.usage
    cost = (
        f"  ({u.prompt_tokens}+{u.completion_tokens} tok, {u.seconds:.1f}s{', cached' if u.cached else ''})"
        if u.calls
        else ""
    )
    said = "".join(f"\n      note: {note}" for note in getattr(p, "notes", []))
    return f"[{event.seq:>3}] {event.stage} · {event.agent}: {body}{cost}{said}"


def totals_line(run: Run) -> str:
    t = run.totals
    return (
        f"{run.status}: {t.calls} LLM calls, {t.retrievals} retrievals, {t.prompt_tokens} prompt + "
        f"{t.completion_tokens} completion tokens, {t.seconds:.1f}s (run {run.id})"
    )
