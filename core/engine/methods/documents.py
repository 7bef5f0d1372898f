"""Retrieved snippets as a model reads them: numbered by snippet id, best first, within a character budget."""

from __future__ import annotations

from core.engine.trace import Hit

MIN_TAIL_CHARS = 300  # a shorter cut of the document that no longer fits says too little to be worth reading


def format_docs(hits: list[Hit], max_chars: int) -> str:
    """Numbered documents by snippet id, best first, filling a character budget:
    the first document that does not fit whole is cut to the room left, as long as that room is worth reading,
    so one long snippet cannot leave the budget mostly empty."""
    parts, used = [], 0
    for hit in hits:
        block = f"[{hit.snippet_id}] {hit.title}\n{hit.text}".strip()
        room = max_chars - used
        if len(block) > room:
            if room >= MIN_TAIL_CHARS or not parts:
                parts.append(block[: max(room - 1, 1)].rstrip() + "…")
            break
        parts.append(block)
        used += len(block) + 2
    return "\n\n".join(parts)


NO_DOCUMENTS = "(no documents were found)"


def read_docs(hits: list[Hit], max_chars: int) -> tuple[str, list[str]]:
    """The documents as the model reads them, and the ids of those that fit the budget."""
    text = format_docs(hits, max_chars)
    shown = [h.snippet_id for h in hits if f"[{h.snippet_id}]" in text]
    return text or NO_DOCUMENTS, shown
