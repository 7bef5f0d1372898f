"""Discuss-RAG (Dong et al., 2025): talk before you retrieve.

A recruiter picks expert roles for the question; over m brainstorm turns every expert names the
knowledge the question needs, given the previous summary, and a summarizer folds the turn into a new
summary (the discussion ends early when no expert has anything to add). A verifier distils the final
summary into D; the question plus D form the retrieval query. A decision-maker judges the top-k
snippets: accepted, the answer comes from the snippets it kept; rejected, a chain-of-thought prompt
answers instead, as in the authors' implementation. Defaults follow the authors' code (3 experts,
2 turns, k=9).
"""

from __future__ import annotations

from functools import partial
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from core.methods.base import MethodParams, MethodSpec, RunContext, answer_schema, messages, prompt, to_answer
from core.methods.medrag import read_docs
from core.question import Question
from core.stages import Stage
from core.trace import Answer, Hit, Query, Verdict, VerdictItem

NO_SUMMARY = "(none yet)"
INSIGHT_TOKENS = 160  # three sentences
SUMMARY_TOKENS = 240  # five sentences


class DiscussParams(MethodParams):
    n_experts: int = Field(3, ge=1, le=5, description="experts the recruiter picks")
    turns: int = Field(2, ge=1, le=4, description="brainstorm turns m (fewer when no expert has anything to add)")
    k: int = Field(9, ge=1, le=32, description="snippets retrieved with question + summary, then judged")
    brainstorm: bool = Field(True, description="off: retrieve with the question alone (ablation w/o brainstorming)")
    verify: bool = Field(True, description="off: answer from all k snippets (ablation w/o post-retrieval verification)")
    max_doc_chars: int = Field(6000, ge=500, le=60000, description="character budget for the snippets an agent reads")
    max_tokens: int = Field(320, ge=64, le=4096, description="budget for the final answer")


class Expert(BaseModel):
    role: str = Field(description="a medical specialty, e.g. Cardiologist", json_schema_extra={"maxLength": 60})
    why: str = Field(description="one sentence", json_schema_extra={"maxLength": 200})


class Insight(BaseModel):
    """An expert's first contribution."""

    insight: str = Field(description="at most three sentences", json_schema_extra={"maxLength": 500})


class Addition(BaseModel):
    """A later contribution, which an expert may decline (the discussion ends when all do)."""

    nothing_to_add: bool = Field(description="true when the summary is sufficient")
    insight: str = Field(description="at most three sentences; empty when nothing to add",
                         json_schema_extra={"maxLength": 500})


class Summary(BaseModel):
    summary: str = Field(description="at most five sentences", json_schema_extra={"maxLength": 800})


def recruitment_schema(n: int) -> type[BaseModel]:
    return create_model("Recruitment", experts=(list[Expert], Field(min_length=n, max_length=n)))


def verification_schema(ids: list[str]) -> type[BaseModel]:
    """One judgment per shown snippet; ids are an enum, so the decision-maker cannot name another."""
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


# -- brainstorming -----------------------------------------------------------------------


def recruit(question: Question, params: DiscussParams, ctx: RunContext) -> list[Expert]:
    reply = ctx.ask(messages(prompt("discuss_system"), prompt("discuss_recruit", question=question.render(),
                                                              n=params.n_experts)),
                    stage="recruitment", agent="Recruiter", role="recruiter",
                    schema=recruitment_schema(params.n_experts), max_tokens=40 + 90 * params.n_experts)
    experts, seen = [], set()
    for i, expert in enumerate(reply.parsed.experts, 1):
        role = " ".join(expert.role.split()) or f"Expert {i}"
        role = role if role not in seen else f"{role} {i}"  # two experts of one specialty stay apart in the trace
        seen.add(role)
        experts.append(Expert(role=role, why=expert.why))
    return experts


def speak(question: Question, summary: str, turn: int, ctx: RunContext, expert: Expert) -> str:
    """The expert's insight for this turn; empty when, after the first turn, it has nothing to add."""
    first = turn == 1
    text = prompt("discuss_expert", question=question.render(), summary=summary or NO_SUMMARY, role=expert.role,
                  why=expert.why, task=prompt("discuss_expert_first" if first else "discuss_expert_more").strip())
    reply = ctx.ask(messages(prompt("discuss_system"), text), stage=f"brainstorm turn {turn}", agent=expert.role,
                    role="expert", schema=Insight if first else Addition, max_tokens=INSIGHT_TOKENS, turn=turn).parsed
    return "" if getattr(reply, "nothing_to_add", False) else reply.insight.strip()


def discuss(question: Question, params: DiscussParams, ctx: RunContext) -> str:
    """The multi-turn discussion; returns the distilled summary D."""
    experts = recruit(question, params, ctx)
    summary = ""
    for turn in range(1, params.turns + 1):
        insights = ctx.parallel(partial(speak, question, summary, turn, ctx), experts)
        said = [f"({e.role}) {insight}" for e, insight in zip(experts, insights) if insight]
        if not said:  # every expert declined to add: the discussion is over
            break
        text = prompt("discuss_summarize", question=question.render(), summary=summary or NO_SUMMARY,
                      insights="\n".join(said))
        summary = ctx.ask(messages(prompt("discuss_system"), text), stage=f"brainstorm turn {turn}",
                          agent="Summarizer", role="summarizer", schema=Summary, max_tokens=SUMMARY_TOKENS,
                          turn=turn).parsed.summary.strip()
    if not summary:
        return ""
    text = prompt("discuss_refine", question=question.render(), summary=summary)
    return ctx.ask(messages(prompt("discuss_system"), text), stage="summary verification", agent="Verifier",
                   role="verifier", schema=Summary, max_tokens=SUMMARY_TOKENS).parsed.summary.strip() or summary


# -- after retrieval ---------------------------------------------------------------------


def decide(question: Question, summary: str, hits: list[Hit], params: DiscussParams,
           ctx: RunContext) -> tuple[list[Hit], str]:
    """The decision-maker's verdict: the kept snippets when it accepts, none when it rejects, and why."""
    stage, agent = "verification", "Decision-maker"
    documents, shown = read_docs(hits, params.max_doc_chars)
    if not shown:
        reason = "retrieval returned no snippets"
        ctx.emit(stage, agent, Verdict(items=[], accepted=False, reason=reason))
        return [], reason
    text = prompt("discuss_decide", documents=documents, question=question.render(),
                  summary=summary or "(no discussion: brainstorming is off)")
    reply = ctx.ask(messages(prompt("discuss_system"), text), stage=stage, agent=agent, role="decision-maker",
                    schema=verification_schema(shown), max_tokens=80 + 60 * len(shown))
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


def answer_from_documents(question: Question, hits: list[Hit], ctx: RunContext, *, max_doc_chars: int,
                          max_tokens: int, note: str = "") -> Answer:
    """MedRAG's reader (the authors' answer prompt is MedRAG's): answer from these snippets, citing their ids."""
    documents, shown = read_docs(hits, max_doc_chars)
    reply = ctx.ask(messages(prompt("medrag_system"), prompt("medrag_user", documents=documents,
                                                             question=question.render())),
                    stage="answer", agent="Reader", role="reader", schema=answer_schema(question, cite=True),
                    max_tokens=max_tokens)
    return to_answer(reply.parsed, question, valid_ids=shown).model_copy(update={"note": note})


def fall_back(question: Question, reason: str, params: DiscussParams, ctx: RunContext) -> Answer:
    """The authors' fallback when the snippets are rejected: a chain-of-thought prompt, no documents."""
    reply = ctx.ask(messages(prompt("cot_system"), prompt("cot_user", question=question.render())),
                    stage="CoT fallback", agent="Clinician", role="reasoner", schema=answer_schema(question),
                    max_tokens=params.max_tokens)
    note = f"CoT fallback: the decision-maker rejected the snippets ({reason})"
    return to_answer(reply.parsed, question).model_copy(update={"note": note})


def run(question: Question, params: DiscussParams, ctx: RunContext) -> Answer:
    summary = discuss(question, params, ctx) if params.brainstorm else ""
    query = f"{question.text}\n{summary}" if summary else question.text
    ctx.emit("retrieval", "Retriever", Query(text=query, purpose="question + distilled summary D" if summary
                                             else "question (no discussion)"))
    hits = ctx.retrieve(query, params.k, stage="retrieval", agent="Retriever")
    read = partial(answer_from_documents, question, ctx=ctx, max_doc_chars=params.max_doc_chars,
                   max_tokens=params.max_tokens)
    if not params.verify:
        return read(hits, note=f"verification off: answered from all {len(hits)} snippets")
    kept, reason = decide(question, summary, hits, params, ctx)
    if not kept:
        return fall_back(question, reason, params, ctx)
    return read(kept, note=f"answered from the {len(kept)} of {len(hits)} snippets the decision-maker kept")


SPEC = MethodSpec(
    name="discuss", label="Discuss-RAG",
    description="Recruited experts brainstorm what the question needs; retrieve with that summary; "
                "a decision-maker verifies the snippets or falls back to CoT.",
    params=DiscussParams, run=run,
    stages=(Stage("Recruiter picks expert roles", "understand", ("recruitment",)),
            Stage("Experts brainstorm", "understand", ("brainstorm turn",), many="× n experts",
                  kinds=("agent_message",)),
            Stage("Summarizer folds the turn", "understand", ("brainstorm turn",), agents=("Summarizer",),
                  loop_to="Experts brainstorm", loop_label="next turn (m turns)"),
            Stage("Verifier distils the summary", "understand", ("summary verification",)),
            Stage("Retrieve with question + summary", "retrieve", ("retrieval",)),
            Stage("Decision-maker judges the snippets", "judge", ("verification",)),
            Stage("Reader answers from kept snippets", "answer", ("answer",)),
            Stage("CoT fallback (snippets rejected)", "answer", ("CoT fallback",), branch=True)),
)
