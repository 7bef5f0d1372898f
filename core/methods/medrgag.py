"""MedRGAG (Li et al., 2025): unify retrieved and generated knowledge for medical questions.

Source-balanced retrieval takes the top documents from each corpus separately, merged and re-scored,
and keeps k=5. KGCC: a summarizer condenses each document for the question (or finds no useful
information), an explorer lists up to k points of knowledge still missing, and a generator writes one
background document per point (one from the question alone when none is named: filler written from the
same prompt would only repeat itself). KADS: an integrator identifies the knowledge the question needs,
maps the candidates (at most 2k) to it and selects up to k that cover it without redundancy; the reader
answers from that selection only. Ablations as in the paper: w/o KGCC generates k documents from the
question alone, sampled so that they differ; w/o KADS ranks the candidates against the question (BM25
here) and passes the top k on.
"""

from __future__ import annotations

import re
from functools import partial
from typing import Literal

from pydantic import BaseModel, Field, create_model
from rank_bm25 import BM25Okapi

from core.methods.base import MethodParams, MethodSpec, RunContext, messages, prompt
from core.methods.discuss import answer_from_documents
from core.methods.medrag import read_docs
from core.question import Question
from core.stages import Stage
from core.trace import Answer, GeneratedDoc, Hit, Retrieval, Verdict, VerdictItem

GENERATED = "generated"  # the corpus name of generated documents; their ids are gen-1, gen-2, ...
FROM_QUESTION = "(none: written from the question alone)"


class MedRGAGParams(MethodParams):
    per_source_k: int = Field(5, ge=1, le=32, description="documents taken from each corpus before re-scoring")
    n_retrieved: int = Field(5, ge=1, le=16, description="retrieved documents kept after re-scoring (k)")
    n_generated: int = Field(5, ge=0, le=8, description="most background documents generated (k): one per missing "
                                                         "point; 0 = w/o generation")
    sample_temperature: float = Field(0.7, ge=0.0, le=2.0, description="temperature for documents written from "
                                                                        "the question alone, so several differ")
    n_selected: int = Field(5, ge=1, le=16, description="documents the selection passes to the reader")
    kgcc: bool = Field(True, description="off: generate from the question alone (ablation w/o KGCC)")
    kads: bool = Field(True, description="off: pass the top candidates by BM25 to the reader (ablation w/o KADS)")
    max_doc_chars: int = Field(800, ge=200, le=4000, description="characters of each candidate an agent reads")
    generate_tokens: int = Field(180, ge=32, le=1024, description="budget for each generated document")
    max_tokens: int = Field(320, ge=64, le=4096, description="budget for the final answer")


def _reading(hits: list[Hit], params: MedRGAGParams) -> tuple[list[Hit], int]:
    """Each document cut to ``max_doc_chars`` and a budget that fits them all, so that generated documents are
    never squeezed out by long snippets."""
    return [h.model_copy(update={"text": h.text[: params.max_doc_chars]}) for h in hits], \
        len(hits) * (params.max_doc_chars + 200)


def _documents(hits: list[Hit], params: MedRGAGParams) -> tuple[str, list[str]]:
    return read_docs(*_reading(hits, params))


# -- stage 1: source-balanced evidence retrieval ---------------------------------------------


def retrieve(question: Question, params: MedRGAGParams, ctx: RunContext) -> list[Hit]:
    # The paper's question is the stem with its answer set, so the options are part of the query.
    query = " ".join([question.text, *question.options.values()])
    n_corpora = len(ctx.retriever.corpora) if ctx.retriever else 1
    hits = ctx.retrieve(query, params.per_source_k * max(n_corpora, 1), stage="retrieval", agent="Retriever",
                        balanced=True)
    top = sorted(hits, key=lambda h: -h.score)[: params.n_retrieved]
    top = [h.model_copy(update={"rank": i}) for i, h in enumerate(top, 1)]
    ctx.emit("retrieval", "Reranker", Retrieval(query=query, hits=top, retriever="re-scored top k"))
    return top


# -- stage 2: knowledge-guided context completion ----------------------------------------------


def summary_schema(doc_id: str) -> type[BaseModel]:
    # doc_id is a constant, so the summary in the trace says which document it condenses.
    return create_model(
        "DocumentSummary",
        doc_id=(Literal[doc_id], ...),
        useful=(bool, Field(description="false when the document is irrelevant to the question")),
        summary=(str, Field(description="at most three sentences", json_schema_extra={"maxLength": 400})),
    )


def missing_schema(n: int) -> type[BaseModel]:
    return create_model("MissingKnowledge", missing=(list[str], Field(
        max_length=n, description="short knowledge points, most important first",
        json_schema_extra={"items": {"type": "string", "maxLength": 160}})))


def summarize(question: Question, params: MedRGAGParams, ctx: RunContext, hit: Hit) -> BaseModel:
    # One call per document: the question comes first, since it is what the parallel calls share.
    document, _ = _documents([hit], params)
    text = prompt("medrgag_summarize", question=question.render(), document=document)
    return ctx.ask(messages(prompt("medrgag_system"), text), stage="KGCC: summarize", agent="Summarizer",
                   role="summarizer", schema=summary_schema(hit.snippet_id), max_tokens=160).parsed


def explore(question: Question, summaries: list[BaseModel], params: MedRGAGParams, ctx: RunContext) -> list[str]:
    useful = "\n".join(f"[{s.doc_id}] {s.summary.strip()}" for s in summaries if s.useful and s.summary.strip())
    text = prompt("medrgag_explore", summaries=useful or "(no retrieved document had useful information)",
                  question=question.render(), n=params.n_generated)
    reply = ctx.ask(messages(prompt("medrgag_system"), text), stage="KGCC: explore", agent="Explorer",
                    role="explorer", schema=missing_schema(params.n_generated), max_tokens=60 + 55 * params.n_generated)
    return [m.strip() for m in reply.parsed.missing if m.strip()]


def write_background(question: Question, stage: str, params: MedRGAGParams, ctx: RunContext, gap: str) -> str:
    task = (f"Explain this knowledge needed for the question: {gap}." if gap != FROM_QUESTION
            else "Give background knowledge useful for answering the question.")
    text = prompt("medrgag_generate", question=question.render(), task=task)
    temperature = 0.0 if gap != FROM_QUESTION else params.sample_temperature
    reply = ctx.ask(messages(prompt("medrgag_system"), text), stage=stage, agent="Generator", role="generator",
                    temperature=temperature, max_tokens=params.generate_tokens)
    return " ".join(reply.text.split())


def generate(question: Question, gaps: list[str], stage: str, params: MedRGAGParams, ctx: RunContext) -> list[Hit]:
    """One background document per gap, written concurrently; each recorded with the gap it fills."""
    texts = ctx.parallel(partial(write_background, question, stage, params, ctx), gaps)
    docs = []
    for i, (gap, text) in enumerate(zip(gaps, texts), 1):
        ctx.emit(stage, "Generator", GeneratedDoc(doc_id=f"gen-{i}", text=text, gap=gap))
        if text:
            title = "Generated background" + ("" if gap == FROM_QUESTION else f": {gap}")
            docs.append(Hit(snippet_id=f"gen-{i}", corpus=GENERATED, title=title, text=text, rank=i, score=0.0))
    return docs


def complete_context(question: Question, retrieved: list[Hit], params: MedRGAGParams, ctx: RunContext) -> list[Hit]:
    if not params.n_generated:
        return []
    if not params.kgcc:
        return generate(question, [FROM_QUESTION] * params.n_generated, "generation", params, ctx)
    summaries = ctx.parallel(partial(summarize, question, params, ctx), retrieved)
    gaps = explore(question, summaries, params, ctx)[: params.n_generated]
    return generate(question, gaps or [FROM_QUESTION], "KGCC: generate", params, ctx)


# -- stage 3: knowledge-aware document selection ---------------------------------------------


def selection_schema(ids: list[str], n: int) -> type[BaseModel]:
    candidate_id = Literal[tuple(ids)]  # an enum: the integrator can only name candidates
    mapping = create_model("KnowledgeMapping", doc_id=(candidate_id, ...), covers=(str, Field(
        description="the knowledge point it covers, or none", json_schema_extra={"maxLength": 80})))
    return create_model(
        "Selection",
        requirements=(list[str], Field(min_length=1, max_length=4, description="knowledge points the question needs",
                                       json_schema_extra={"items": {"type": "string", "maxLength": 120}})),
        mapping=(list[mapping], Field(min_length=len(ids), max_length=len(ids))),
        selected=(list[candidate_id], Field(min_length=1, max_length=n)),
    )


def origin(hit: Hit) -> str:
    return "generated" if hit.corpus == GENERATED else f"retrieved from {hit.corpus}"


def select(question: Question, candidates: list[Hit], params: MedRGAGParams, ctx: RunContext) -> list[Hit]:
    """KADS: requirements → candidate-to-requirement map → a compact, non-redundant selection."""
    stage, agent = "KADS: select", "Integrator"
    documents, shown = _documents(candidates, params)
    text = prompt("medrgag_integrate", documents=documents, question=question.render(), n=params.n_selected)
    reply = ctx.ask(messages(prompt("medrgag_system"), text), stage=stage, agent=agent, role="integrator",
                    schema=selection_schema(shown, params.n_selected), max_tokens=240 + 55 * len(shown))
    covers: dict[str, str] = {}
    for m in reply.parsed.mapping:
        covers.setdefault(m.doc_id, m.covers.strip() or "none")
    chosen = set(reply.parsed.selected)
    items = [VerdictItem(doc_id=h.snippet_id, keep=h.snippet_id in chosen,
                         reason=f"{origin(h)}; covers: {covers.get(h.snippet_id, 'not mapped')}"
                                + ("" if h.snippet_id in chosen else "; not selected"))
             for h in candidates]
    selected = [h for h in candidates if h.snippet_id in chosen]
    ctx.emit(stage, agent, Verdict(items=items, reason=f"{_mix(selected, candidates)}; the question needs: "
                                                       + "; ".join(reply.parsed.requirements)))
    return selected


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def rank(question: Question, candidates: list[Hit], params: MedRGAGParams, ctx: RunContext) -> list[Hit]:
    """W/o KADS: the top candidates by BM25 against the question, no reasoning."""
    scores = BM25Okapi([_words(f"{h.title} {h.text}") for h in candidates]).get_scores(_words(question.render()))
    order = sorted(range(len(candidates)), key=lambda i: -scores[i])
    place = {candidates[i].snippet_id: r for r, i in enumerate(order, 1)}
    selected = [candidates[i] for i in sorted(order[: params.n_selected])]
    items = [VerdictItem(doc_id=h.snippet_id, keep=place[h.snippet_id] <= params.n_selected,
                         reason=f"{origin(h)}; BM25 rank {place[h.snippet_id]}") for h in candidates]
    ctx.emit("selection", "BM25", Verdict(items=items, reason=f"{_mix(selected, candidates)}; KADS off"))
    return selected


def _mix(selected: list[Hit], candidates: list[Hit]) -> str:
    generated = sum(h.corpus == GENERATED for h in selected)
    return f"selected {len(selected) - generated} retrieved + {generated} generated of {len(candidates)} candidates"


def run(question: Question, params: MedRGAGParams, ctx: RunContext) -> Answer:
    retrieved = retrieve(question, params, ctx)
    candidates = retrieved + complete_context(question, retrieved, params, ctx)
    if candidates:
        selected = (select if params.kads else rank)(question, candidates, params, ctx)
    else:
        selected = []
    clipped, budget = _reading(selected, params)
    return answer_from_documents(question, clipped, ctx, max_doc_chars=budget, max_tokens=params.max_tokens,
                                 note=_mix(selected, candidates))


SPEC = MethodSpec(
    name="medrgag", label="MedRGAG",
    description="Source-balanced retrieval, generated documents for the knowledge it misses (KGCC), "
                "and a knowledge-aware selection of retrieved + generated evidence (KADS).",
    params=MedRGAGParams, run=run,
    stages=(Stage("Source-balanced retrieval", "retrieve", ("retrieval",)),
            Stage("KGCC: summarize each document", "judge", ("KGCC: summarize",), many="× k"),
            Stage("KGCC: explorer lists missing knowledge", "query", ("KGCC: explore",)),
            Stage("KGCC: generate background documents", "retrieve", ("KGCC: generate", "generation"), many="× gaps"),
            Stage("KADS: integrator selects documents", "judge", ("KADS: select", "selection")),
            Stage("Reader answers", "answer", ("answer",))),
)
