"""Discuss-RAG (Dong et al., 2025): talk before you retrieve.

A recruiter picks expert roles for the question stem; every expert names the knowledge the question needs and a
summarizer folds what they said into a summary; then, for up to ``turns`` review rounds (the authors'
``num_rounds``), each expert reviews the summary and adds what it misses, and the summarizer folds the additions
into a new summary (the discussion ends early when no expert has anything to add). A verifier rewrites the final
summary into D; the stem plus D form the retrieval query. A decision-maker reads the stem and the k snippets and
makes one yes/no judgment: yes, the reader answers from all k snippets; no, a chain-of-thought prompt answers
instead. Defaults, prompts and temperatures follow the authors' code (docs/fidelity/discuss.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from core.methods.base import (AnswerFormat, MethodParams, MethodSpec, RunContext, answer_schema, messages, one_of,
    prompt, read_docs, reading_knob, to_answer, tokens_of)
from core.question import Question
from core.stages import Stage
from core.trace import Answer, Hit, Query, Verdict, VerdictItem

NO_SUMMARY = "(none yet)"
INSIGHT_TOKENS = 160  # three sentences
SUMMARY_TOKENS = 240  # five sentences
DECISION_TOKENS = 160  # three sentences and yes/no
READ_BY_BOTH = "read by the decision-maker and the reader"  # "read by": the screens tag it as read, not judged


class DiscussParams(MethodParams):
    n_experts: int = Field(3, ge=1, le=5, description="experts the recruiter picks")
    turns: int = Field(2, ge=0, le=4, description="review rounds after the first summary (the authors' num_rounds): "
                                                  "up to turns + 1 summaries, fewer when no expert has anything to add")
    k: int = Field(9, ge=1, le=32, description="snippets retrieved with the question + summary, then judged")
    brainstorm: bool = Field(True, description="off: retrieve with the question alone (ablation w/o brainstorming)")
    verify: bool = Field(True, description="off: answer from all k snippets (ablation w/o post-retrieval verification)")
    judge_each: bool = Field(False, description="variant (not the authors' code): the decision-maker keeps or drops "
                                                "each snippet, and the reader reads only the kept ones")
    temperature_discussion: float = Field(1.0, ge=0.0, le=2.0, description="recruiter, experts and summarizer "
                                                                           "(the authors set none: the API default)")
    temperature_verifier: float = Field(0.0, ge=0.0, le=2.0, description="verifier that rewrites the summary")
    temperature_decision: float = Field(1.0, ge=0.0, le=2.0, description="decision-maker (the authors set none: "
                                                                         "the API default)")
    temperature_reader: float = Field(0.0, ge=0.0, le=2.0, description="reader and its CoT fallback")
    seed: int = Field(0, ge=0, description="sampling seed for agents above temperature 0: the same seed replays the "
                                           "same replies from the response cache; another seed draws new ones")
    max_doc_chars: int | None = reading_knob("the decision-maker and the reader each")
    max_tokens: int = Field(320, ge=64, le=4096, description="budget for the final answer")


class Expert(BaseModel):
    role: str = Field(description="a medical specialty, e.g. Cardiologist", json_schema_extra={"maxLength": 60})
    why: str = Field(description="one sentence: what the specialty covers", json_schema_extra={"maxLength": 200})


class Insight(BaseModel):
    """An expert's first contribution."""

    insight: str = Field(description="at most three sentences", json_schema_extra={"maxLength": 500})


class NothingToAdd(BaseModel):
    """The summary is sufficient: the reference's bare "no", with nothing written after it."""

    nothing_to_add: Literal[True]


class Addition(BaseModel):
    """The summary misses something: the reference's "yes - [complementary knowledge]"."""

    nothing_to_add: Literal[False]
    insight: str = Field(description="at most three sentences", json_schema_extra={"maxLength": 500})


# An expert's review of the summary (the discussion ends when every expert has nothing to add). One of two shapes, so
# the grammar ends an expert's reply once it has declined: a small model told to leave an insight empty still writes
# one, which nobody would read.
Review = one_of("Review", NothingToAdd, Addition)


class Summary(BaseModel):
    summary: str = Field(description="at most five sentences", json_schema_extra={"maxLength": 800})


class Decision(BaseModel):
    """The authors' decision format: step-by-step thinking, then "yes" or "no" for the whole set of snippets."""

    reasoning: str = Field(description="step by step, at most three sentences", json_schema_extra={"maxLength": 400})
    answer: Literal["yes", "no"] = Field(description="yes: the documents support an answer to the question")


def recruitment_schema(n: int) -> type[BaseModel]:
    return create_model("Recruitment", experts=(list[Expert], Field(min_length=n, max_length=n)))


def verification_schema(ids: list[str]) -> type[BaseModel]:
    """One judgment per shown snippet (the ``judge_each`` variant); ids are an enum, so none can be invented."""
    judgment = create_model(
        "SnippetJudgment",
        doc_id=(Literal[tuple(ids)], ...),
        reason=(str, Field(description="a few words", json_schema_extra={"maxLength": 80})),
        keep=(bool, ...),
    )
    return create_model(
        "Verification",
        judgments=(list[judgment], Field(min_length=len(ids), max_length=len(ids))),
        accept=(bool, Field(description="the kept snippets support answering the question")),
        reason=(str, Field(description="one sentence", json_schema_extra={"maxLength": 200})),
    )


def sampling(temperature: float, params: DiscussParams) -> dict[str, Any]:
    """A call's temperature, with the run's seed when it samples (so the response cache can replay it)."""
    return {"temperature": temperature, "seed": params.seed if temperature > 0 else None}


# -- brainstorming: every agent reads the question stem, as in the authors' code ---------


def recruit(question: Question, params: DiscussParams, ctx: RunContext) -> list[Expert]:
    reply = ctx.ask(messages(prompt("discuss_system"), prompt("discuss_recruit", question=question.text,
                                                              n=params.n_experts)),
                    stage="recruitment", agent="Recruiter", role="recruiter",
                    schema=recruitment_schema(params.n_experts), max_tokens=40 + 90 * params.n_experts,
                    **sampling(params.temperature_discussion, params))
    experts, seen = [], set()
    for i, expert in enumerate(reply.parsed.experts, 1):
        role = " ".join(expert.role.split()) or f"Expert {i}"
        role = role if role not in seen else f"{role} {i}"  # two experts of one specialty stay apart in the trace
        seen.add(role)
        experts.append(Expert(role=role, why=expert.why))
    return experts


def speak(question: Question, summary: str, turn: int, params: DiscussParams, ctx: RunContext,
          expert: Expert) -> str:
    """The expert's insight (turn 1) or its review of the summary; empty when it has nothing to add."""
    first = turn == 1
    text = prompt("discuss_expert", question=question.text, summary=summary or NO_SUMMARY, role=expert.role,
                  why=expert.why, task=prompt("discuss_expert_first" if first else "discuss_expert_more").strip())
    reply = ctx.ask(messages(prompt("discuss_system"), text), stage=f"brainstorm turn {turn}", agent=expert.role,
                    role="expert", schema=Insight if first else Review, max_tokens=INSIGHT_TOKENS, turn=turn,
                    **sampling(params.temperature_discussion, params)).parsed
    return "" if isinstance(reply, NothingToAdd) else reply.insight.strip()


def summarize(question: Question, said: list[str], summary: str, turn: int, params: DiscussParams,
              ctx: RunContext) -> str:
    text = prompt("discuss_summarize", question=question.text, summary=summary or NO_SUMMARY,
                  insights="\n".join(said))
    return ctx.ask(messages(prompt("discuss_system"), text), stage=f"brainstorm turn {turn}", agent="Summarizer",
                   role="summarizer", schema=Summary, max_tokens=SUMMARY_TOKENS, turn=turn,
                   **sampling(params.temperature_discussion, params)).parsed.summary.strip()


def discuss(question: Question, params: DiscussParams, ctx: RunContext) -> str:
    """The discussion; returns the verified summary D. Turn 1 is the experts' first insights and their summary;
    each later turn is the experts' reviews of the last summary and the summary that folds them in."""
    experts = recruit(question, params, ctx)
    last = params.turns + 1
    summary, turn = "", 1
    while True:
        insights = ctx.parallel(partial(speak, question, summary, turn, params, ctx), experts)
        said = [f"({e.role}) {insight}" for e, insight in zip(experts, insights) if insight]
        if not said:  # every expert found the summary sufficient: the discussion is over
            break
        summary = summarize(question, said, summary, turn, params, ctx) or summary
        if turn == last:  # the authors' code asks the experts once more here, but never reads their replies
            break
        turn += 1
    if not summary:
        return ""
    text = prompt("discuss_refine", question=question.text, summary=summary)
    return ctx.ask(messages(prompt("discuss_system"), text), stage="summary verification", agent="Verifier",
                   role="verifier", schema=Summary, max_tokens=SUMMARY_TOKENS,
                   **sampling(params.temperature_verifier, params)).parsed.summary.strip() or summary


# -- after retrieval ---------------------------------------------------------------------


def decide(question: Question, hits: list[Hit], budget: int, params: DiscussParams,
           ctx: RunContext) -> tuple[bool, list[str], str]:
    """The authors' decision: one yes/no over the snippets (those within the reading budget), given the stem.
    Returns whether it accepted, the ids it read, and why."""
    stage, agent = "verification", "Decision-maker"
    documents, shown = read_docs(hits, budget)
    if not shown:
        reason = "retrieval returned no snippets"
        ctx.emit(stage, agent, Verdict(items=[], accepted=False, reason=reason))
        return False, [], reason
    text = prompt("discuss_decide", documents=documents, question=question.text)
    reply = ctx.ask(messages(prompt("discuss_system"), text), stage=stage, agent=agent, role="decision-maker",
                    schema=Decision, max_tokens=DECISION_TOKENS, read=shown, offered=len(hits),
                    **sampling(params.temperature_decision, params))
    accepted = reply.parsed.answer == "yes"
    read = READ_BY_BOTH if accepted else "the decision-maker rejected the snippets as a whole"
    items = [VerdictItem(doc_id=h.snippet_id, keep=accepted and h.snippet_id in shown,
                         reason=read if h.snippet_id in shown else "beyond the reading budget") for h in hits]
    reason = reply.parsed.reasoning.strip()
    ctx.emit(stage, agent, Verdict(items=items, accepted=accepted, reason=reason))
    return accepted, shown, reason


def decide_each(question: Question, hits: list[Hit], budget: int, params: DiscussParams,
                ctx: RunContext) -> tuple[list[Hit], str]:
    """The per-snippet variant: the kept snippets when it accepts, none when it rejects, and why."""
    stage, agent = "verification", "Decision-maker"
    documents, shown = read_docs(hits, budget)
    if not shown:
        reason = "retrieval returned no snippets"
        ctx.emit(stage, agent, Verdict(items=[], accepted=False, reason=reason))
        return [], reason
    text = prompt("discuss_decide_each", documents=documents, question=question.text)
    reply = ctx.ask(messages(prompt("discuss_system"), text), stage=stage, agent=agent, role="decision-maker",
                    schema=verification_schema(shown), max_tokens=80 + 60 * len(shown), read=shown, offered=len(hits),
                    **sampling(params.temperature_decision, params))
    judged: dict[str, Any] = {}
    for j in reply.parsed.judgments:
        judged.setdefault(j.doc_id, j)  # a repeated id keeps its first judgment
    items = []
    for hit in hits:
        j = judged.get(hit.snippet_id)
        reason = j.reason if j else ("not judged" if hit.snippet_id in shown else "beyond the reading budget")
        items.append(VerdictItem(doc_id=hit.snippet_id, keep=bool(j and j.keep), reason=reason))
    kept = [h for h, item in zip(hits, items) if item.keep]
    accepted = reply.parsed.accept and bool(kept)
    reason = reply.parsed.reason if kept or not reply.parsed.accept else "accepted, but kept no snippet"
    ctx.emit(stage, agent, Verdict(items=items, accepted=accepted, reason=reason))
    return (kept if accepted else []), reason


def answer_from_documents(question: Question, hits: list[Hit], ctx: RunContext, *, system: str, budget: int,
                          max_tokens: int, note: str = "", temperature: float = 0.0, seed: int | None = None,
                          order: AnswerFormat = "reasoning first", real_ids: Mapping[str, str] | None = None) -> Answer:
    """MedRAG's reader (the authors' answer prompt is MedRAG's): answer from these snippets within ``budget``
    characters, citing their ids. ``system`` is the calling method's own, so the reader's documents continue the
    prefix its other agents read; the reader's instructions come last. ``real_ids`` maps ids the reader sees under
    to the snippets' own, for the trace."""
    documents, shown = read_docs(hits, budget)
    reply = ctx.ask(messages(system, prompt("medrag_user", documents=documents, question=question.render()),
                             prompt("medrag_system")),
                    stage="answer", agent="Reader", role="reader", schema=answer_schema(question, cite=True, order=order),
                    temperature=temperature, seed=seed, max_tokens=max_tokens,
                    read=[(real_ids or {}).get(i, i) for i in shown], offered=len(hits))
    return to_answer(reply.parsed, question, valid_ids=shown).model_copy(update={"note": note})


def fall_back(question: Question, reason: str, params: DiscussParams, ctx: RunContext) -> Answer:
    """The authors' fallback when the snippets are rejected: a chain-of-thought prompt, no documents."""
    reply = ctx.ask(messages(prompt("cot_system"), prompt("cot_user", question=question.render())),
                    stage="CoT fallback", agent="Clinician", role="reasoner",
                    schema=answer_schema(question, order=params.answer_format),
                    max_tokens=params.max_tokens, **sampling(params.temperature_reader, params))
    note = f"CoT fallback: the decision-maker rejected the snippets ({reason})"
    return to_answer(reply.parsed, question).model_copy(update={"note": note})


def run(question: Question, params: DiscussParams, ctx: RunContext) -> Answer:
    summary = discuss(question, params, ctx) if params.brainstorm else ""
    query = f"{question.text}\n{summary}" if summary else question.text
    ctx.emit("retrieval", "Retriever", Query(text=query, purpose="question + distilled summary D" if summary
                                             else "question (no discussion)"))
    hits = ctx.retrieve(query, params.k, stage="retrieval", agent="Retriever")
    # One budget for the decision-maker and the reader, so the reader reads exactly the snippets that were accepted;
    # it leaves room for the longest reply of the two (the per-snippet variant writes a line per snippet).
    reply = max(DECISION_TOKENS, params.max_tokens, 80 + 60 * len(hits) if params.judge_each else 0)
    budget = ctx.reading_chars(params.max_doc_chars, tokens_of(question.render()) + reply)
    read = partial(answer_from_documents, question, ctx=ctx, system=prompt("discuss_system"), budget=budget,
                   max_tokens=params.max_tokens, order=params.answer_format,
                   **sampling(params.temperature_reader, params))
    if not params.verify:
        return read(hits, note=f"verification off: answered from all {len(hits)} snippets")
    if params.judge_each:
        kept, reason = decide_each(question, hits, budget, params, ctx)
        if not kept:
            return fall_back(question, reason, params, ctx)
        return read(kept, note=f"answered from the {len(kept)} of {len(hits)} snippets the decision-maker kept")
    accepted, shown, reason = decide(question, hits, budget, params, ctx)
    if not accepted:
        return fall_back(question, reason, params, ctx)
    note = f"the decision-maker accepted the snippets: answered from all {len(shown)} it read"
    if len(shown) < len(hits):
        note += f" ({len(hits) - len(shown)} beyond the reading budget)"
    return read(hits, note=note)


SPEC = MethodSpec(
    name="discuss", label="Discuss-RAG",
    description="Recruited experts brainstorm what the question needs; retrieve with that summary; "
                "a decision-maker accepts the snippets for the reader or falls back to CoT.",
    params=DiscussParams, run=run,
    stages=(Stage("Recruiter picks expert roles", "understand", ("recruitment",)),
            Stage("Experts brainstorm", "understand", ("brainstorm turn",), many="× n experts",
                  kinds=("agent_message",)),
            Stage("Summarizer folds the turn", "understand", ("brainstorm turn",), agents=("Summarizer",),
                  loop_to="Experts brainstorm", loop_label="experts review the summary (up to turns + 1 summaries)"),
            Stage("Verifier distils the summary", "understand", ("summary verification",)),
            Stage("Retrieve with question + summary", "retrieve", ("retrieval",)),
            Stage("Decision-maker accepts or rejects the snippets", "judge", ("verification",)),
            Stage("Reader answers from the snippets", "answer", ("answer",)),
            Stage("CoT fallback (snippets rejected)", "answer", ("CoT fallback",), branch=True)),
)
