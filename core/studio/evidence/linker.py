"""The offline linker: every claim of a run against every document the run could draw on, sentence by sentence,
on two signals the studio already has: the shipped sentence embedder (meaning) and the words themselves (what a
reader checks). No network and no model call; seconds per run on two cores.

A claim's words that are the question's own (the case: age, ECG, blood pressure) are what every document and every
claim share, so they are left out of the word signal when the claim has words of its own: the link then rests on
what the claim adds to the case.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

from core.engine.retrieval.dense import default_embedder
from core.engine.trace import Answer, GeneratedDoc, Retrieval, Run
from core.studio.evidence.claims import Sentence, claims_of, sentences, without_citations
from core.studio.evidence.model import Claim, Document, EvidenceMap, Level, SupportLink
from core.studio.evidence.words import content_words, numbers

VERSION = "1"  # bump when a threshold or a signal changes: cached maps and shipped figures belong to one version

# Thresholds set once, before any label was read; docs/evidence.md reports how far they agree with a person.
SUPPORTED = 0.62  # combined score for "supported"
PARTLY = 0.45  # and for "partly"
WORD_FLOOR = 0.5  # "supported" also needs half the claim's own words in the span: meaning alone is not evidence
MEANING = 0.5  # weight of the embedder's cosine in the combined score; the rest is the share of words found
WINDOW = 2  # a span is one or two consecutive sentences of a document
CACHE_SIZE = 64


@dataclass(frozen=True)
class _Window:
    doc: str
    start: int
    end: int
    text: str


def documents_of(run: Run) -> dict[str, Document]:
    """Every document the run retrieved or generated, first sight kept, and whether the final answer cites it."""
    cited: set[str] = set()
    for event in run.events:
        if isinstance(event.payload, Answer):
            cited = set(event.payload.cited)
    found: dict[str, Document] = {}
    for event in run.events:
        p = event.payload
        if isinstance(p, Retrieval):
            for h in p.hits:
                if h.snippet_id not in found:
                    found[h.snippet_id] = Document(
                        h.snippet_id, h.text, h.title, "retrieved", h.corpus, h.snippet_id in cited
                    )
        elif isinstance(p, GeneratedDoc):
            found[p.doc_id] = Document(p.doc_id, p.text, p.gap, "generated", "", p.doc_id in cited)
    return found


def _windows(doc: Document) -> list[_Window]:
    parts = sentences(doc.text) or ([] if not doc.text.strip() else [_whole(doc.text)])
    found = []
    for i in range(len(parts)):
        for size in range(1, WINDOW + 1):
            if i + size <= len(parts):
                a, b = parts[i].start, parts[i + size - 1].end
                found.append(_Window(doc.id, a, b, doc.text[a:b]))
    return found


def _whole(text: str) -> Sentence:
    """A document too short to hold a sentence is one span, whole."""
    stripped = text.strip()
    start = text.index(stripped)
    return Sentence(stripped, start, start + len(stripped))


def _own_words(claim: Claim, question_words: set[str]) -> list[str]:
    words = content_words(without_citations(claim.text))
    own = [w for w in words if w not in question_words]
    return own if len(own) >= 2 else words


def _level(score: float, word_share: float, numbers_missing: bool) -> Level:
    if score >= SUPPORTED and word_share >= WORD_FLOOR and not numbers_missing:
        return "supported"
    return "partly" if score >= PARTLY else "not_found"


def _why(level: Level, found: list[str], missing: list[str], cosine: float, numbers_missing: set[str]) -> str:
    parts = [f"meaning similarity {cosine:.2f}"]
    if found:
        parts.append("shares " + ", ".join(f"“{w}”" for w in found[:6]))
    if missing and level != "supported":
        parts.append("does not say " + ", ".join(f"“{w}”" for w in missing[:4]))
    if numbers_missing:
        parts.append("its numbers differ (" + ", ".join(sorted(numbers_missing)) + " not in the span)")
    return "; ".join(parts)


def link(run: Run, claims: list[Claim], documents: dict[str, Document]) -> list[SupportLink]:
    """The links of ``claims`` into ``documents``: for each pair, the best window and its level; a pair below
    "partly" is kept only as its claim's best candidate. A sentence of a generated document is never linked to
    that same document."""
    windows = [w for d in documents.values() for w in _windows(d)]
    if not claims or not windows:
        return []
    question_words = set(content_words(run.question))
    vectors = default_embedder().encode(
        [without_citations(c.text) for c in claims] + [w.text for w in windows], stage="evidence"
    )
    cosines = vectors[: len(claims)] @ vectors[len(claims) :].T
    window_words = [set(content_words(w.text)) for w in windows]
    window_numbers = [numbers(w.text) for w in windows]
    by_doc: dict[str, list[int]] = {}
    for i, w in enumerate(windows):
        by_doc.setdefault(w.doc, []).append(i)
    links: list[SupportLink] = []
    for ci, claim in enumerate(claims):
        own = _own_words(claim, question_words)
        claim_numbers = numbers(without_citations(claim.text)) - numbers(run.question)
        candidates = []
        for doc_id, rows in by_doc.items():
            if doc_id == claim.generated_doc:
                continue
            best = None
            for wi in rows:
                share = sum(w in window_words[wi] for w in own) / len(own) if own else 0.0
                score = MEANING * float(cosines[ci, wi]) + (1 - MEANING) * share
                if best is None or score > best[0]:
                    best = (score, wi, share)
            score, wi, share = best
            missing_numbers = claim_numbers - window_numbers[wi]
            level = _level(score, share, bool(missing_numbers))
            found = [w for w in own if w in window_words[wi]]
            lost = [w for w in own if w not in window_words[wi]]
            why = _why(level, found, lost, float(cosines[ci, wi]), missing_numbers)
            w = windows[wi]
            doc = documents[doc_id]
            candidates.append(
                SupportLink(claim.id, doc_id, (w.start, w.end), level, why, doc.source, round(float(score), 3))
            )
        candidates.sort(key=lambda ln: -ln.score)
        kept = [ln for ln in candidates if ln.level != "not_found"]
        links.extend(kept or candidates[:1])
    return links


_cache: OrderedDict[tuple[str, str, int], EvidenceMap] = OrderedDict()
_cache_lock = threading.Lock()


def link_run(run: Run) -> EvidenceMap:
    """The run's evidence map, computed once per (run id, linker version, events) and kept in memory."""
    key = (run.id, VERSION, len(run.events))
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    started = time.perf_counter()
    claims = claims_of(run)
    documents = documents_of(run)
    links = link(run, claims, documents)
    found = EvidenceMap(run.id, run.method, VERSION, claims, documents, links, round(time.perf_counter() - started, 3))
    with _cache_lock:
        _cache[key] = found
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return found
