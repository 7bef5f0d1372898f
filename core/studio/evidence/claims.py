"""A run's claims: its final answer, the answer's rationale and, where a method has them, each agent's findings,
cut into sentences with their offsets in the text the trace keeps.

Which agents' findings count is a table (``FINDINGS``) of what the methods' traces already carry, not a reading of
any method's code: SEMA-RAG's arbitration report, MASS-RAG's three views, Discuss-RAG's final summary and MedRGAG's
generated documents.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from core.engine.methods.bounds import stopped_at
from core.engine.trace import AgentMessage, Answer, Event, GeneratedDoc, Report, Run
from core.studio.evidence.model import Claim, Origin
from core.studio.evidence.words import content_words

# A sentence ends at . ! ? (or a line break) followed by a space and what can start one (a capital, a digit, a
# bullet's markup); "e.g.", "i.e.", "vs." and "Dr." do not end one, nor does a decimal point (no space after it).
_END = re.compile(r"(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\bvs\.)(?<!\bDr\.)(?<=[.!?])\s+(?=[\"'(*#\[]*[A-Z0-9])|\n+")
_CITE = re.compile(r"\[([A-Za-z0-9:_\-]+(?:\s*,\s*[A-Za-z0-9:_\-]+)*)\]")
_MARKUP = re.compile(r"^[\s#*>\-]*(?:\d+[.)]\s+)?[\s*]*")  # a heading's #, a bullet, a list number, bold markers
MIN_WORDS = 4  # shorter pieces ("Background Document:", a list number) say nothing to check
QUESTION_SHARE = 0.8  # a claim with this share of its words in the question restates the case

# (role of the agent message, the field of its structured reply, the section a reader calls it); ``None`` field: the
# spans list of MASS-RAG's Extractor, each span a quote of one document.
FINDINGS: dict[str, list[tuple[str, str, str]]] = {
    "mass": [
        ("summarizer", "summary", "Summarizer's view"),
        ("reasoner", "inference", "Reasoner's view"),
        ("extractor", "spans", "Extractor's quotes"),
    ],
    "discuss": [("verifier", "summary", "final summary"), ("summarizer", "summary", "final summary")],
}


@dataclass(frozen=True)
class Sentence:
    text: str
    start: int
    end: int


def sentences(text: str) -> list[Sentence]:
    """The sentences of ``text`` with their offsets, leading markup (a bullet, a heading's #) left out of each."""
    found, at = [], 0
    for piece in [*_END.finditer(text), None]:
        stop = piece.start() if piece else len(text)
        raw = text[at:stop]
        lead = len(_MARKUP.match(raw).group(0))
        body = raw[lead:].rstrip()
        if len(body.split()) >= MIN_WORDS:
            found.append(Sentence(body, at + lead, at + lead + len(body)))
        at = piece.end() if piece else stop
    return found


def cited_in(text: str) -> tuple[str, ...]:
    """Ids a text cites in brackets ("… [tp-stemi-k1, tp-stemi-n2]")."""
    return tuple(dict.fromkeys(i.strip() for m in _CITE.finditer(text) for i in m.group(1).split(",")))


def without_citations(text: str) -> str:
    return _CITE.sub("", text).strip()


def restates(text: str, question_words: set[str]) -> bool:
    words = content_words(without_citations(text))
    return bool(words) and sum(w in question_words for w in words) >= QUESTION_SHARE * len(words)


def claims_of(run: Run) -> list[Claim]:
    """Every claim of the run, in the order its events said them: findings on the way first, the answer last."""
    question_words = set(content_words(run.question))
    found: list[Claim] = []
    counts: dict[tuple[int, str], int] = {}  # a section (a report's column) may hold several texts
    for event, origin, section, text, cited, generated in _texts(run):
        for s in sentences(text):
            key = (event.seq, section_key(section))
            counts[key] = n = counts.get(key, -1) + 1
            found.append(
                Claim(
                    id=f"c{event.seq}-{key[1]}-{n}",
                    text=s.text,
                    origin=origin,
                    section=section,
                    agent=event.agent,
                    seq=event.seq,
                    start=s.start,
                    end=s.end,
                    cited=tuple(dict.fromkeys([*cited_in(s.text), *cited])),
                    restates_question=restates(s.text, question_words),
                    generated_doc=generated,
                )
            )
    return found


def section_key(section: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", section.lower())[:12] or "text"


def source_text(run: Run, claim: Claim) -> str:
    """The whole text a claim is a sentence of (its offsets index it)."""
    return next(
        text
        for event, _, section, text, _, _ in _texts(run)
        if event.seq == claim.seq
        and section_key(section) == section_key(claim.section)
        and text[claim.start : claim.end] == claim.text
    )


def cut_at(run: Run, claim: Claim, bounds: frozenset[int]) -> int | None:
    """The bound a claim's text was cut at when the claim is that text's last sentence and the reply format stopped
    it mid-sentence (``core.engine.methods.bounds``), else None (also for a claim not made from this run's texts)."""
    try:
        text = source_text(run, claim)
    except StopIteration:
        return None
    return stopped_at(text, bounds) if claim.end >= len(text.rstrip()) else None


def _texts(run: Run) -> Iterator[tuple[Event, Origin, str, str, tuple[str, ...], str]]:
    """(event, origin, section, text, ids the event cites, generated document id) for every text holding claims."""
    findings = FINDINGS.get(run.method, [])
    last_summary = _last_summary_seq(run, findings)
    for event in run.events:
        p = event.payload
        if isinstance(p, Answer):
            if p.text:
                yield event, "answer", "answer", p.text, tuple(p.cited), ""
            if p.rationale:
                yield event, "rationale", "rationale", p.rationale, tuple(p.cited), ""
        elif isinstance(p, Report):
            for column in ("supporting", "refuting", "conflicts"):
                for item in getattr(p, column):
                    yield event, "finding", column, item, cited_in(item), ""
            if p.summary:
                yield event, "finding", "arbiter's summary", p.summary, (), ""
        elif isinstance(p, GeneratedDoc):
            yield event, "finding", f"generated document {p.doc_id}", p.text, (), p.doc_id
        elif isinstance(p, AgentMessage) and p.data:
            for role, key, section in findings:
                if p.role != role or key not in p.data:
                    continue
                if key == "summary" and run.method == "discuss" and event.seq != last_summary:
                    continue  # the turns' summaries are drafts; the one the retrieval used is the last
                if key == "spans":
                    for span in p.data[key] or []:
                        if isinstance(span, dict) and span.get("text"):
                            yield event, "finding", section, str(span["text"]), (str(span.get("doc_id", "")),), ""
                elif isinstance(p.data[key], str):
                    ids = tuple(str(i) for i in p.data.get("doc_ids") or ())
                    yield event, "finding", section, p.data[key], ids, ""


def _last_summary_seq(run: Run, findings: list[tuple[str, str, str]]) -> int | None:
    roles = {role for role, key, _ in findings if key == "summary"}
    seqs = [
        e.seq
        for e in run.events
        if isinstance(e.payload, AgentMessage) and e.payload.role in roles and "summary" in (e.payload.data or {})
    ]
    return seqs[-1] if seqs else None
