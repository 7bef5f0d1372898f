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

import numpy as np

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
CACHE_SIZE = 64  # evidence maps kept in memory
VECTOR_CACHE = 20_000  # texts whose vectors are kept
DOCS_PER_CLAIM = 6
WINDOWS_PER_DOC = 2


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


def _level(score: float, word_share: float, numbers_missing: bool, restates: bool) -> Level:
    """A claim that restates the case (the patient's own findings) is never "supported": a document speaks of
    patients in general, so at most it says the same kind of thing."""
    if score >= SUPPORTED and word_share >= WORD_FLOOR and not numbers_missing and not restates:
        return "supported"
    return "partly" if score >= PARTLY else "not_found"


def _why(
    level: Level, found: list[str], missing: list[str], cosine: float, numbers_missing: set[str], restates: bool
) -> str:
    parts = ["it restates the case, which no document can attest"] if restates else []
    parts.append(f"meaning similarity {cosine:.2f}")
    if found:
        parts.append("shares " + ", ".join(f"“{w}”" for w in found[:6]))
    if missing and level != "supported":
        parts.append("does not say " + ", ".join(f"“{w}”" for w in missing[:4]))
    if numbers_missing:
        parts.append("its numbers differ (" + ", ".join(sorted(numbers_missing)) + " not in the span)")
    return "; ".join(parts)


def _share(own: list[str], words: set[str]) -> float:
    return sum(w in words for w in own) / len(own) if own else 0.0


def link(run: Run, claims: list[Claim], documents: dict[str, Document]) -> list[SupportLink]:
    """The links of ``claims`` into ``documents``. The words pick each claim's candidates first (its
    ``DOCS_PER_CLAIM`` documents sharing most of its words, in each the ``WINDOWS_PER_DOC`` windows sharing most),
    and only those are embedded: a run can hold hundreds of documents, and embedding every sentence of them would
    take minutes on two cores. For each candidate pair the best window gives the span and the level; a pair below
    "partly" is kept only as its claim's best candidate. A sentence of a generated document is never linked to that
    same document."""
    windows = [w for d in documents.values() for w in _windows(d)]
    if not claims or not windows:
        return []
    question_words = set(content_words(run.question))
    window_words = [set(content_words(w.text)) for w in windows]
    by_doc: dict[str, list[int]] = {}
    for i, w in enumerate(windows):
        by_doc.setdefault(w.doc, []).append(i)
    owns = [_own_words(c, question_words) for c in claims]
    chosen: list[dict[str, list[int]]] = []  # per claim: document -> its candidate windows
    for claim, own in zip(claims, owns):
        shares = {doc: sorted(rows, key=lambda wi: -_share(own, window_words[wi])) for doc, rows in by_doc.items()}
        best = sorted(
            (doc for doc in shares if doc != claim.generated_doc and _share(own, window_words[shares[doc][0]]) > 0),
            key=lambda doc: -_share(own, window_words[shares[doc][0]]),
        )[:DOCS_PER_CLAIM]
        chosen.append({doc: shares[doc][:WINDOWS_PER_DOC] for doc in best})
    rows = sorted({wi for picks in chosen for wis in picks.values() for wi in wis})
    vectors = embed([without_citations(c.text) for c in claims] + [windows[wi].text for wi in rows])
    column = {wi: len(claims) + n for n, wi in enumerate(rows)}
    links: list[SupportLink] = []
    for ci, (claim, own) in enumerate(zip(claims, owns)):
        claim_numbers = numbers(without_citations(claim.text)) - numbers(run.question)
        candidates = []
        for doc_id, wis in chosen[ci].items():
            score, wi = max(
                (MEANING * float(vectors[ci] @ vectors[column[w]]) + (1 - MEANING) * _share(own, window_words[w]), w)
                for w in wis
            )
            cosine = float(vectors[ci] @ vectors[column[wi]])
            share = _share(own, window_words[wi])
            missing_numbers = claim_numbers - numbers(windows[wi].text)
            level = _level(score, share, bool(missing_numbers), claim.restates_question)
            found = [w for w in own if w in window_words[wi]]
            lost = [w for w in own if w not in window_words[wi]]
            doc = documents[doc_id]
            candidates.append(
                SupportLink(
                    claim.id,
                    doc_id,
                    (windows[wi].start, windows[wi].end),
                    level,
                    _why(level, found, lost, cosine, missing_numbers, claim.restates_question),
                    doc.source,
                    round(score, 3),
                )
            )
        candidates.sort(key=lambda ln: -ln.score)
        kept = [ln for ln in candidates if ln.level != "not_found"]
        links.extend(kept or candidates[:1])
    return links


_vectors: OrderedDict[str, np.ndarray] = OrderedDict()  # text -> its vector: a case's runs share their documents
_vectors_lock = threading.Lock()


def embed(texts: list[str]) -> np.ndarray:
    """The texts' vectors from the shipped embedder (the instance retrieval loaded), each text encoded once per
    process."""
    with _vectors_lock:
        missing = list(dict.fromkeys(t for t in texts if t not in _vectors))
    if missing:
        fresh = default_embedder().encode(missing, stage="evidence")
        with _vectors_lock:
            _vectors.update(zip(missing, fresh))
            while len(_vectors) > VECTOR_CACHE:
                _vectors.popitem(last=False)
    with _vectors_lock:
        return np.stack([_vectors[t] for t in texts]) if texts else np.empty((0, default_embedder().dim))


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
