"""MedRGAG (Li et al., 2025): unify retrieved and generated knowledge for medical questions.

As the authors' code runs it: the top 32 documents of each corpus (query: the question and its options) are
pooled and re-scored, and the best 5 kept. KGCC: a summarizer distils each of them for the question (or finds
nothing useful), an explorer names exactly 3 missing knowledge points (2 for a yes/no question), and a generator
writes one background document per point, then documents from the question alone until 5 are written, all
sampled (temperature 1.2, top-p 0.9, presence penalty 1.0). KADS: an integrator reads the 10 candidates under
neutral ids (nothing tells it which were generated), identifies the knowledge the question needs, maps the
candidates to it and selects up to 5; the selection is re-scored against the question and read in that order by
the reader, again under neutral ids. The trace keeps each candidate's provenance for the screens.
Ablations as in the paper: w/o KGCC writes every document from the question alone; w/o KADS passes the
re-scored top candidates on with no integrator.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial
from typing import Literal

from pydantic import BaseModel, Field, create_model

from core.engine.llm.profiles import Lengths
from core.engine.llm.tokens import tokens_of
from core.engine.methods import reader
from core.engine.methods.answer import OWN_KNOWLEDGE, PAPER_REPLY_TOKENS, RAG_TEMPLATE, READER, ReaderLengths
from core.engine.methods.contract import MethodParams, MethodSpec, RunContext
from core.engine.methods.documents import read_docs
from core.engine.methods.knobs import budget_knob, sampling, seed_knob
from core.engine.methods.reader import medrag_prompt, read_and_answer
from core.engine.methods.schemas import bounded, counted, one_of
from core.engine.methods.templates import at_most, briefly, in_at_most, messages, prompt
from core.engine.question import Question
from core.engine.stages import RETRIEVAL, Stage, StageNames
from core.engine.trace import Answer, GeneratedDoc, Hit, Query, Verdict, VerdictItem


class Names(StageNames):
    RETRIEVAL = RETRIEVAL
    SUMMARIZE = "KGCC: summarize"
    EXPLORE = "KGCC: explore"
    GENERATE = "KGCC: generate"
    GENERATION = "generation"  # the background documents without KGCC
    SELECT = "KADS: select"
    SELECTION = "selection"  # the re-scoring without KADS
    ANSWER = reader.ANSWER


GENERATED = "generated"  # the corpus name of generated documents; their ids are gen-1, gen-2, ...
FROM_QUESTION = "(none: written from the question alone)"
# What the explorer is asked besides its points, where its lengths have it reason first.
EXPLORE_REASONING = (
    ' Before the points, give a detailed explanation ("reasoning"): the knowledge points a complete answer needs, and '
    "which of them the information lacks."
)
SELECT_TOKENS_EACH = 55  # the integrator's line per candidate: its id and the knowledge point it covers


@dataclass(frozen=True)
class MedRGAGLengths:
    """What each agent reads and writes: characters of each candidate, sentences a prompt asks for, characters the
    grammar allows (None: no bound) and the tokens a call may take. The defaults are the authors' (the paper
    lengths)."""

    reader: ReaderLengths = replace(READER["paper"], tokens=512)
    commit: str = RAG_TEMPLATE  # how the reader is told to commit to an answer, and to what it may fall back
    brief: bool = False  # the system prompt tells every agent to be brief
    doc_chars: int | None = None  # each candidate as an agent reads it (None: whole)
    summary_sentences: int | None = None
    summary_chars: int | None = None
    summary_tokens: int = PAPER_REPLY_TOKENS
    explore_reasoning: bool = True  # the explorer reasons before it names the missing points
    point_chars: int | None = None
    explore_tokens: int = PAPER_REPLY_TOKENS  # plus ``explore_tokens_each`` per point
    explore_tokens_each: int = 0
    requirements: int | None = None  # the integrator: most knowledge points it lists
    requirement_chars: int | None = None
    covers_chars: int | None = None
    select_tokens: int = PAPER_REPLY_TOKENS  # plus ``SELECT_TOKENS_EACH`` per candidate read


LENGTHS: dict[Lengths, MedRGAGLengths] = {
    # On the embedded model's 8,192-token slot 10 candidates of 1,600 characters (about 4,000 tokens) leave room for
    # the question and the integrator's reply; 1,600 characters hold a whole 256-word generated document and most
    # corpus chunks. Every text is bounded in the grammar, and each budget fits the longest reply its schema allows.
    "compact": MedRGAGLengths(
        reader=READER["compact"],
        commit=OWN_KNOWLEDGE,
        brief=True,
        doc_chars=1600,
        summary_sentences=3,
        summary_chars=400,
        summary_tokens=160,
        explore_reasoning=False,
        point_chars=160,
        explore_tokens=60,
        explore_tokens_each=55,
        requirements=4,
        requirement_chars=120,
        covers_chars=80,
        select_tokens=240,
    ),
    # The authors' code (ll0ruc/MedRGAG): whole documents (src/llm_by_gpt.py read_data); a summary with no length
    # but "avoid unnecessary details" (src/template.py knowledge_summary_template); the explorer's "- Reasoning:
    # [Detailed explanation]" before its points (knowledge_explore_template); the integrator's requirements as many
    # as the question needs (llm_selection_prompt); no max_tokens for those three (src/llm_by_gpt.py GPT.call); no
    # agent told to be brief; the reader's 512 tokens (src/medrgag.py vllm_answer), its "please have a definite
    # answer" and "rely on your own medical knowledge" (rag_template).
    "paper": MedRGAGLengths(),
}


class MedRGAGParams(MethodParams):
    per_source_k: int = Field(32, ge=1, le=64, description="documents pooled from each corpus before re-scoring")
    n_retrieved: int = Field(5, ge=1, le=16, description="retrieved documents kept after re-scoring (k)")
    n_points: int = Field(3, ge=1, le=8, description="missing knowledge points the explorer names")
    n_points_yes_no: int = Field(2, ge=1, le=8, description="missing knowledge points for a yes/no question")
    n_generated: int = Field(
        5,
        ge=0,
        le=8,
        description="background documents generated: one per missing point, "
        "the rest from the question alone; 0 = w/o generation",
    )
    generate_temperature: float = Field(1.2, ge=0.0, le=2.0, description="the generator's sampling temperature")
    generate_top_p: float = Field(0.9, gt=0.0, le=1.0, description="the generator's nucleus (top-p) sampling")
    generate_presence_penalty: float = Field(1.0, ge=-2.0, le=2.0, description="the generator's presence penalty")
    generate_tokens: int = Field(256, ge=32, le=1024, description="budget for each generated document")
    agent_temperature: float = Field(
        1.2, ge=0.0, le=2.0, description="temperature of the summarizer, explorer and integrator"
    )
    n_selected: int = Field(5, ge=1, le=16, description="documents the selection passes to the reader")
    kgcc: bool = Field(True, description="off: generate from the question alone (ablation w/o KGCC)")
    kads: bool = Field(True, description="off: pass the re-scored top candidates to the reader (ablation w/o KADS)")
    max_doc_chars: int | None = Field(
        None,
        ge=200,
        le=4000,
        description="characters of each candidate an agent "
        f"reads; empty = the backend's ({LENGTHS['compact'].doc_chars:,} on the "
        "embedded model, whole documents on an endpoint)",
    )
    max_tokens: int | None = budget_knob(
        "the final answer",
        LENGTHS["compact"].reader.tokens,
        LENGTHS["paper"].reader.tokens,
        tail=", the authors' reader",
    )
    seed: int = seed_knob("documents", " (each document from the question alone its own)")


def _reading(hits: list[Hit], cut: int | None, ctx: RunContext, reserved_tokens: int) -> tuple[list[Hit], int]:
    """Each document cut to ``cut`` characters and a budget that fits them all, so that generated documents are never
    squeezed out by long snippets, within the backend's context window once ``reserved_tokens`` are set aside (the
    embedded server's reading cap does not bind here: 10 candidates of 1,600 characters read past it); whole
    documents, as the authors read them, within what the backend reads per call."""
    if cut is None:
        return hits, ctx.reading_chars(None, reserved_tokens)
    return [h.model_copy(update={"text": h.text[:cut]}) for h in hits], min(
        len(hits) * (cut + 200), ctx.window_chars(reserved_tokens)
    )


def _documents(hits: list[Hit], cut: int | None, ctx: RunContext, reserved_tokens: int) -> tuple[str, list[str]]:
    return read_docs(*_reading(hits, cut, ctx, reserved_tokens))


def cut(params: MedRGAGParams, lengths: MedRGAGLengths) -> int | None:
    """Characters of each candidate an agent reads: the knob's, else the backend's (None: whole documents)."""
    return params.max_doc_chars or lengths.doc_chars


def select_tokens(n: int, lengths: MedRGAGLengths) -> int:
    """The integrator's budget: its requirements, then a line per candidate it reads."""
    return lengths.select_tokens + SELECT_TOKENS_EACH * n


def with_options(question: Question) -> str:
    """The question with its options, as the authors retrieve and re-score with it."""
    return "\n".join([question.text, *(f"{k}. {v}" for k, v in sorted(question.options.items()))])


def is_yes_no(question: Question) -> bool:
    return bool(question.options) and {v.strip().lower() for v in question.options.values()} == {"yes", "no"}


def n_points(question: Question, params: MedRGAGParams) -> int:
    return min(params.n_points_yes_no if is_yes_no(question) else params.n_points, params.n_generated)


def system_prompt(lengths: MedRGAGLengths) -> str:
    """What every agent reads first."""
    return prompt("medrgag_system", brief=briefly(lengths.brief))


# -- stage 1: source-balanced evidence retrieval ---------------------------------------------


def retrieve(question: Question, params: MedRGAGParams, ctx: RunContext) -> list[Hit]:
    query = with_options(question)
    n_corpora = len(ctx.retriever.corpora) if ctx.retriever else 1
    ctx.emit(
        Names.RETRIEVAL,
        "Retriever",
        Query(
            text=query,
            purpose=(
                f"question + options: the top {params.per_source_k} of each of {n_corpora} corpora pooled "
                f"({params.per_source_k * n_corpora}), re-scored, the best {params.n_retrieved} kept"
            ),
        ),
    )
    return ctx.retrieve(
        query,
        params.n_retrieved,
        stage=Names.RETRIEVAL,
        agent="Retriever",
        balanced=True,
        per_corpus=params.per_source_k,
    )


# -- stage 2: knowledge-guided context completion ----------------------------------------------


def summary_schema(doc_id: str, lengths: MedRGAGLengths) -> type[BaseModel]:
    """A document judged of no use ends there (the reference's "No useful information"); a useful one is summarized.
    Two shapes, as a small model told to leave the summary of a useless document empty still writes one. doc_id is a
    constant, so the summary in the trace says which document it condenses."""
    said = Field(description="false when the document is irrelevant to the question")
    useless = create_model("NoUsefulInformation", doc_id=(Literal[doc_id], ...), useful=(Literal[False], said))
    sentences = at_most(lengths.summary_sentences) if lengths.summary_sentences else "the useful information"
    useful = create_model(
        "UsefulDocument",
        doc_id=(Literal[doc_id], ...),
        useful=(Literal[True], said),
        summary=(str, bounded(lengths.summary_chars, sentences)),
    )
    return one_of("DocumentSummary", useless, useful)


def missing_schema(n: int, lengths: MedRGAGLengths) -> type[BaseModel]:
    """Exactly n missing knowledge points, after the reasoning that finds them where the lengths have it (a reply
    without it still parses)."""
    point = {"type": "string", "maxLength": lengths.point_chars} if lengths.point_chars else {"type": "string"}
    reasoning = (
        {
            "reasoning": (
                str,
                Field(
                    "",
                    description="a detailed explanation: the knowledge points the question needs, and which the "
                    "information lacks",
                ),
            )
        }
        if lengths.explore_reasoning
        else {}
    )
    return create_model(
        "MissingKnowledge",
        **reasoning,
        missing=counted(
            str, n, "missing knowledge points", description="short knowledge points, most critical first", items=point
        ),
    )


def summarize(
    question: Question, params: MedRGAGParams, lengths: MedRGAGLengths, ctx: RunContext, hit: Hit
) -> BaseModel:
    # The question comes first in every agent's prompt: it is what all of them share (each reads other documents).
    reserved = tokens_of(question.render()) + lengths.summary_tokens
    document, shown = _documents([hit], cut(params, lengths), ctx, reserved)
    limit = f",{in_at_most(lengths.summary_sentences)}" if lengths.summary_sentences else ""
    text = prompt("medrgag_summarize", question=question.render(), document=document, within=limit)
    return ctx.ask(
        messages(system_prompt(lengths), text),
        stage=Names.SUMMARIZE,
        agent="Summarizer",
        role="summarizer",
        schema=summary_schema(hit.snippet_id, lengths),
        **sampling(params.agent_temperature, params.seed),
        max_tokens=lengths.summary_tokens,
        read=shown,
        offered=1,
    ).parsed


def explore(
    question: Question,
    summaries: list[BaseModel],
    n: int,
    params: MedRGAGParams,
    lengths: MedRGAGLengths,
    ctx: RunContext,
) -> list[str]:
    useful = "\n".join(f"[{s.doc_id}] {s.summary.strip()}" for s in summaries if s.useful and s.summary.strip())
    text = prompt(
        "medrgag_explore",
        summaries=useful or "(no retrieved document had useful information)",
        question=question.render(),
        n=n,
        reasoning=EXPLORE_REASONING if lengths.explore_reasoning else "",
    )
    reply = ctx.ask(
        messages(system_prompt(lengths), text),
        stage=Names.EXPLORE,
        agent="Explorer",
        role="explorer",
        schema=missing_schema(n, lengths),
        **sampling(params.agent_temperature, params.seed),
        max_tokens=lengths.explore_tokens + lengths.explore_tokens_each * n,
    )
    return [m.strip() for m in reply.parsed.missing if m.strip()]


def write_background(
    question: Question,
    stage: str,
    params: MedRGAGParams,
    lengths: MedRGAGLengths,
    ctx: RunContext,
    numbered: tuple[int, str],
) -> str:
    index, point = numbered  # documents from the question alone share a prompt: each samples with its own seed
    task = (
        f"Knowledge point: {point}. Write only about this knowledge point."
        if point != FROM_QUESTION
        else "Write from the question and general medical knowledge."
    )
    text = prompt("medrgag_generate", question=question.render(), task=task)
    reply = ctx.ask(
        messages(system_prompt(lengths), text),
        stage=stage,
        agent="Generator",
        role="generator",
        top_p=params.generate_top_p,
        presence_penalty=params.generate_presence_penalty,
        max_tokens=params.generate_tokens,
        **sampling(params.generate_temperature, params.seed, index),
    )
    return " ".join(reply.text.split())


def generate(
    question: Question,
    points: list[str],
    stage: str,
    params: MedRGAGParams,
    lengths: MedRGAGLengths,
    ctx: RunContext,
) -> list[Hit]:
    """One background document per point, then documents from the question alone up to ``n_generated``, written
    concurrently; each recorded with the point it explains."""
    points = points + [FROM_QUESTION] * (params.n_generated - len(points))
    texts = ctx.parallel(partial(write_background, question, stage, params, lengths, ctx), list(enumerate(points)))
    docs = []
    for i, (point, text) in enumerate(zip(points, texts), 1):
        ctx.emit(stage, "Generator", GeneratedDoc(doc_id=f"gen-{i}", text=text, gap=point))
        if text:
            docs.append(Hit(snippet_id=f"gen-{i}", corpus=GENERATED, title="", text=text, rank=i, score=0.0))
    return docs


def complete_context(
    question: Question, retrieved: list[Hit], params: MedRGAGParams, lengths: MedRGAGLengths, ctx: RunContext
) -> list[Hit]:
    if not params.n_generated:
        return []
    if not params.kgcc:
        return generate(question, [], Names.GENERATION, params, lengths, ctx)
    summaries = ctx.parallel(partial(summarize, question, params, lengths, ctx), retrieved)
    points = explore(question, summaries, n_points(question, params), params, lengths, ctx)
    return generate(question, points, Names.GENERATE, params, lengths, ctx)


# -- stage 3: knowledge-aware document selection ---------------------------------------------


def anonymous(candidates: list[Hit]) -> list[Hit]:
    """The candidates as agents read them: numbered in order, retrieved ones with their title as the corpus gives
    it, nothing saying which were generated (the integrator and the reader judge the text alone)."""
    return [h.model_copy(update={"snippet_id": str(i), "corpus": ""}) for i, h in enumerate(candidates, 1)]


def selection_schema(ids: list[str], n: int, lengths: MedRGAGLengths) -> type[BaseModel]:
    candidate_id = Literal[tuple(ids)]  # an enum: the integrator can only name candidates
    mapping = create_model(
        "KnowledgeMapping",
        doc_id=(candidate_id, ...),
        covers=(str, bounded(lengths.covers_chars, "the knowledge point it covers, or none")),
    )
    point = (
        {"type": "string", "maxLength": lengths.requirement_chars} if lengths.requirement_chars else {"type": "string"}
    )
    return create_model(
        "Selection",
        requirements=(
            list[str],
            Field(
                min_length=1,
                max_length=lengths.requirements,
                description="knowledge points the question needs",
                json_schema_extra={"items": point},
            ),
        ),
        mapping=counted(mapping, len(ids), "documents mapped", least=0),  # an unmapped one says so
        selected=(list[candidate_id], Field(min_length=1, max_length=n)),
    )


def origin(hit: Hit, shown_as: str) -> str:
    where = "generated" if hit.corpus == GENERATED else f"retrieved from {hit.corpus}"
    return f"{where}; shown to the model as [{shown_as}]"


def contents(hit: Hit) -> str:
    """A document as it is scored: a retrieved one with its title, as its corpus indexed it; a generated one, its text."""
    return f"{hit.title}. {hit.text}" if hit.title else hit.text


def rescore(question: Question, hits: list[Hit], ctx: RunContext) -> list[tuple[Hit, float]]:
    """The documents best first, re-scored against the question and its options as the retrieved pool was."""
    scores = ctx.retriever.similarity(with_options(question), [contents(h) for h in hits]) if hits else []
    return sorted(zip(hits, scores), key=lambda pair: -pair[1])


def select(
    question: Question, candidates: list[Hit], params: MedRGAGParams, lengths: MedRGAGLengths, ctx: RunContext
) -> list[Hit]:
    """KADS: requirements → candidate-to-requirement map → a compact, non-redundant selection, re-scored so the
    reader reads the best first."""
    stage, agent = Names.SELECT, "Integrator"
    neutral = anonymous(candidates)
    real = {n.snippet_id: h for n, h in zip(neutral, candidates)}
    documents, shown = _documents(
        neutral, cut(params, lengths), ctx, tokens_of(question.render()) + select_tokens(len(neutral), lengths)
    )
    text = prompt("medrgag_integrate", documents=documents, question=question.render(), n=params.n_selected)
    reply = ctx.ask(
        messages(system_prompt(lengths), text),
        stage=stage,
        agent=agent,
        role="integrator",
        schema=selection_schema(shown, params.n_selected, lengths),
        **sampling(params.agent_temperature, params.seed),
        max_tokens=select_tokens(len(shown), lengths),
        read=[real[i].snippet_id for i in shown],
        offered=len(candidates),
    )
    covers: dict[str, str] = {}
    for m in reply.parsed.mapping:
        covers.setdefault(m.doc_id, m.covers.strip() or "none")
    chosen = list(dict.fromkeys(reply.parsed.selected))
    order = {h.snippet_id: r for r, (h, _) in enumerate(rescore(question, [real[i] for i in chosen], ctx), 1)}
    items = []
    for n, h in zip(neutral, candidates):
        place = (
            f"; selected, read {order[h.snippet_id]} of {len(order)} after re-scoring"
            if h.snippet_id in order
            else "; not selected"
        )
        items.append(
            VerdictItem(
                doc_id=h.snippet_id,
                keep=h.snippet_id in order,
                reason=f"{origin(h, n.snippet_id)}; covers: {covers.get(n.snippet_id, 'not mapped')}" + place,
            )
        )
    selected = sorted((real[i] for i in chosen), key=lambda h: order[h.snippet_id])
    ctx.emit(
        stage,
        agent,
        Verdict(
            items=items,
            reason=f"{_mix(selected, candidates)}, re-scored for the reader; "
            "the question needs: " + "; ".join(reply.parsed.requirements),
        ),
    )
    return selected


def rank(question: Question, candidates: list[Hit], params: MedRGAGParams, ctx: RunContext) -> list[Hit]:
    """W/o KADS: the top candidates re-scored against the question, no integrator."""
    ranked = rescore(question, candidates, ctx)
    place = {h.snippet_id: r for r, (h, _) in enumerate(ranked, 1)}
    selected = [h for h, _ in ranked[: params.n_selected]]
    items = [
        VerdictItem(
            doc_id=h.snippet_id,
            keep=place[h.snippet_id] <= params.n_selected,
            reason=f"{origin(h, n.snippet_id)}; re-scored #{place[h.snippet_id]}",
        )
        for n, h in zip(anonymous(candidates), candidates)
    ]
    ctx.emit(Names.SELECTION, "Reranker", Verdict(items=items, reason=f"{_mix(selected, candidates)}; KADS off"))
    return selected


def _mix(selected: list[Hit], candidates: list[Hit]) -> str:
    generated = sum(h.corpus == GENERATED for h in selected)
    return f"selected {len(selected) - generated} retrieved + {generated} generated of {len(candidates)} candidates"


def read(
    question: Question,
    selected: list[Hit],
    candidates: list[Hit],
    params: MedRGAGParams,
    lengths: MedRGAGLengths,
    ctx: RunContext,
) -> Answer:
    """The reader answers from the selection in its re-scored order, under the ids the integrator saw them by;
    its citations are mapped back to the documents' own ids."""
    neutral = {h.snippet_id: n for n, h in zip(anonymous(candidates), candidates)}
    shown = [neutral[h.snippet_id] for h in selected]
    real = {n.snippet_id: h.snippet_id for n, h in zip(shown, selected)}
    max_tokens = params.max_tokens or lengths.reader.tokens
    clipped, budget = _reading(shown, cut(params, lengths), ctx, tokens_of(question.render()) + max_tokens)
    answer = read_and_answer(
        question,
        clipped,
        ctx,
        # told to fall back on what it knows on every backend, as the authors' reader is (src/template.py rag_template)
        write=medrag_prompt(question, lengths.reader, lengths.commit, system=system_prompt(lengths)),
        budget=budget,
        reader=lengths.reader,
        order=params.answer_format,
        max_tokens=max_tokens,
        note=_mix(selected, candidates),
        real_ids=real,
    )
    return answer.model_copy(update={"cited": [real[i] for i in answer.cited if i in real]})


def run(question: Question, params: MedRGAGParams, ctx: RunContext) -> Answer:
    lengths = LENGTHS[ctx.llm.lengths]
    retrieved = retrieve(question, params, ctx)
    candidates = retrieved + complete_context(question, retrieved, params, lengths, ctx)
    if not candidates:
        selected = []
    elif params.kads:
        selected = select(question, candidates, params, lengths, ctx)
    else:
        selected = rank(question, candidates, params, ctx)
    return read(question, selected, candidates, params, lengths, ctx)


SPEC = MethodSpec(
    name="medrgag",
    label="MedRGAG",
    description="Source-balanced retrieval, generated documents for the knowledge it misses (KGCC), "
    "and a knowledge-aware selection of retrieved + generated evidence (KADS).",
    params=MedRGAGParams,
    run=run,
    stages=(
        Stage("Source-balanced retrieval", "retrieve", (Names.RETRIEVAL,)),
        Stage("KGCC: summarize each document", "judge", (Names.SUMMARIZE,), many="× k"),
        Stage("KGCC: explorer names missing knowledge", "query", (Names.EXPLORE,)),
        Stage(
            "KGCC: generate background documents", "retrieve", (Names.GENERATE, Names.GENERATION), many="× n_generated"
        ),
        Stage("KADS: integrator selects documents, re-scored for reading", "judge", (Names.SELECT, Names.SELECTION)),
        Stage("Reader answers", "answer", (Names.ANSWER,)),
    ),
    stage_names=Names,
)
