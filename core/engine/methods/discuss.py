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

from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from core.engine.llm.profiles import Lengths
from core.engine.llm.tokens import tokens_of
from core.engine.methods import cot, reader
from core.engine.methods.answer import DEFINITE_ANSWER, OWN_KNOWLEDGE, PAPER_REPLY_TOKENS, READER, ReaderLengths
from core.engine.methods.contract import MethodParams, MethodSpec, RunContext
from core.engine.methods.documents import read_docs
from core.engine.methods.knobs import budget_knob, reading_knob, sampling, seed_knob
from core.engine.methods.reader import medrag_prompt, read_and_answer
from core.engine.methods.schemas import bounded, counted, one_of
from core.engine.methods.templates import NUMBERS, at_most, briefly, in_at_most, messages, prompt
from core.engine.question import Question
from core.engine.stages import RETRIEVAL, Numbered, Stage, StageNames
from core.engine.trace import Answer, Hit, Query, Verdict, VerdictItem


class Names(StageNames):
    RECRUITMENT = "recruitment"
    BRAINSTORM = Numbered("brainstorm turn {n}")  # the experts' insights or reviews and the summary that folds them
    SUMMARY_VERIFICATION = "summary verification"
    RETRIEVAL = RETRIEVAL
    VERIFICATION = "verification"  # the decision-maker's
    ANSWER = reader.ANSWER
    COT_FALLBACK = "CoT fallback"


NO_SUMMARY = "(none yet)"
DECIDER = "Decision-maker"
NO_SNIPPETS = "retrieval returned no snippets"
READ_BY_BOTH = "read by the decision-maker and the reader"  # "read by": the screens tag it as read, not judged
JUDGE_TOKENS_EACH = 60  # the per-snippet variant's line per snippet: its id, a few words and keep or drop
# What an expert who adds to the summary is asked besides, where its lengths have it (the reference's "Reasoning:").
ADDITION_REASONING = ', then explain your thinking clearly and step by step ("reasoning")'


@dataclass(frozen=True)
class DiscussLengths:
    """What each agent writes: sentences its prompt asks for, characters the grammar allows (None: no bound) and
    the tokens its call may take. The defaults are the authors' (the paper lengths)."""

    reader: ReaderLengths = READER["paper"]  # the reader and the CoT fallback
    commit: str = DEFINITE_ANSWER  # how the reader is told to commit to an answer the documents do not give
    brief: bool = False  # the system prompt tells every agent to be brief
    role_chars: int | None = None  # the recruiter: a specialty and one sentence on it, per expert
    why_chars: int | None = None
    recruit_tokens: int = PAPER_REPLY_TOKENS  # plus ``recruit_tokens_each`` per expert
    recruit_tokens_each: int = 0
    insight_sentences: int = 7  # an expert's first insight
    addition_sentences: int = 5  # what an expert adds to a summary
    addition_reasoning: bool = True  # an addition comes with the expert's reasoning, passed on with it
    insight_chars: int | None = None
    insight_tokens: int = PAPER_REPLY_TOKENS
    summary_sentences: int = 5  # the summarizer
    summary_chars: int | None = None
    summary_tokens: int = PAPER_REPLY_TOKENS  # the summarizer and the verifier
    refined_sentences: int | None = None  # the verifier, who rewrites the summary
    refined_chars: int | None = None
    decision_sentences: int | None = None  # the decision-maker's reasoning
    decision_chars: int | None = None
    decision_tokens: int = PAPER_REPLY_TOKENS
    judgment_chars: int | None = None  # the per-snippet variant: a reason per snippet, one overall
    verdict_chars: int | None = None
    judge_tokens: int = PAPER_REPLY_TOKENS  # plus ``JUDGE_TOKENS_EACH`` per snippet judged


LENGTHS: dict[Lengths, DiscussLengths] = {
    # Three sentences rather than seven keep an expert's turn on the embedded model to about half a minute; every
    # text is bounded in the grammar, and each budget fits the longest reply its schema allows.
    "compact": DiscussLengths(
        reader=READER["compact"],
        commit=OWN_KNOWLEDGE,
        brief=True,
        role_chars=60,
        why_chars=200,
        recruit_tokens=40,
        recruit_tokens_each=90,
        insight_sentences=3,
        addition_sentences=3,
        addition_reasoning=False,
        insight_chars=500,
        insight_tokens=160,
        summary_sentences=5,
        summary_chars=800,
        summary_tokens=240,
        refined_sentences=5,
        refined_chars=800,
        decision_sentences=3,
        decision_chars=400,
        decision_tokens=160,
        judgment_chars=80,
        verdict_chars=200,
        judge_tokens=80,
    ),
    # The authors' prompts (LLM-VLM-GSL/Discuss-RAG src/template_discuss.py): experts "ideally within 7 sentences"
    # (agent_reason_discuss), additions and summaries "within 5 sentences" (whether_agent_continue,
    # summary_agent_chat), an addition's "Reasoning: [Explain your thinking clearly and step-by-step]", passed on
    # with it (whether_agent_continue; src/discuss_rag.py keeps the whole reply), the refiner with no length
    # (refiner_prom_init), the decision-maker and the reader step by step (retrival_decide_prompt_init,
    # discuss_rag) with "have a definite answer" (discuss_rag_system), no agent told to be brief; no call sends
    # max_tokens (src/discuss_rag.py Agent.chat, src/medrag.py MedRAG.generate). The per-snippet variant is this
    # project's: its texts unbounded here too.
    "paper": DiscussLengths(),
}


class DiscussParams(MethodParams):
    n_experts: int = Field(3, ge=1, le=5, description="experts the recruiter picks")
    turns: int = Field(
        2,
        ge=0,
        le=4,
        description="review rounds after the first summary (the authors' num_rounds): "
        "up to turns + 1 summaries, fewer when no expert has anything to add",
    )
    k: int = Field(9, ge=1, le=32, description="snippets retrieved with the question + summary, then judged")
    brainstorm: bool = Field(True, description="off: retrieve with the question alone (ablation w/o brainstorming)")
    verify: bool = Field(True, description="off: answer from all k snippets (ablation w/o post-retrieval verification)")
    judge_each: bool = Field(
        False,
        description="variant (not the authors' code): the decision-maker keeps or drops "
        "each snippet, and the reader reads only the kept ones",
    )
    temperature_discussion: float = Field(
        1.0, ge=0.0, le=2.0, description="recruiter, experts and summarizer (the authors set none: the API default)"
    )
    temperature_verifier: float = Field(0.0, ge=0.0, le=2.0, description="verifier that rewrites the summary")
    temperature_decision: float = Field(
        1.0, ge=0.0, le=2.0, description="decision-maker (the authors set none: the API default)"
    )
    temperature_reader: float = Field(0.0, ge=0.0, le=2.0, description="reader and its CoT fallback")
    seed: int = seed_knob()
    max_doc_chars: int | None = reading_knob("the decision-maker and the reader each")
    max_tokens: int | None = budget_knob(
        "the final answer", LENGTHS["compact"].reader.tokens, LENGTHS["paper"].reader.tokens
    )


def expert_schema(lengths: DiscussLengths) -> type[BaseModel]:
    return create_model(
        "Expert",
        role=(str, bounded(lengths.role_chars, "a medical specialty, e.g. Cardiologist")),
        why=(str, bounded(lengths.why_chars, "one sentence: what the specialty covers")),
    )


def insight_schema(lengths: DiscussLengths) -> type[BaseModel]:
    class Insight(BaseModel):
        """An expert's first contribution."""

        insight: str = bounded(lengths.insight_chars, at_most(lengths.insight_sentences))

    return Insight


def review_schema(lengths: DiscussLengths) -> type[BaseModel]:
    """An expert's review of the summary (the discussion ends when every expert has nothing to add). One of two
    shapes, so the grammar ends an expert's reply once it has declined: a small model told to leave an insight empty
    still writes one, which nobody would read."""

    class NothingToAdd(BaseModel):
        """The summary is sufficient: the reference's bare "no", with nothing written after it."""

        nothing_to_add: Literal[True]

    class Addition(BaseModel):
        """The summary misses something: the reference's "yes - [complementary knowledge]"."""

        nothing_to_add: Literal[False]
        insight: str = bounded(lengths.insight_chars, at_most(lengths.addition_sentences))

    if not lengths.addition_reasoning:
        return one_of("Review", NothingToAdd, Addition)

    class ReasonedAddition(Addition):
        """The reference's "yes - [complementary knowledge]" and "Reasoning: [...]" after it."""

        reasoning: str = Field("", description="your thinking, clearly and step by step")

    return one_of("Review", NothingToAdd, ReasonedAddition)


Review = review_schema(LENGTHS["compact"])  # as the embedded model is asked for it


def summary_schema(sentences: int | None, chars: int | None) -> type[BaseModel]:
    """The summarizer's summary, or the verifier's rewrite of it (no bound: the corrected summary, as the reference's
    refiner returns it)."""
    said = at_most(sentences) if sentences else "the corrected summary"
    return create_model("Summary", summary=(str, bounded(chars, said)))


def decision_schema(lengths: DiscussLengths) -> type[BaseModel]:
    said = f"step by step, {at_most(lengths.decision_sentences)}" if lengths.decision_sentences else "step by step"

    class Decision(BaseModel):
        """The authors' decision format: step-by-step thinking, then "yes" or "no" for the whole set of snippets."""

        reasoning: str = bounded(lengths.decision_chars, said)
        answer: Literal["yes", "no"] = Field(description="yes: the documents support an answer to the question")

    return Decision


def recruitment_schema(n: int, lengths: DiscussLengths) -> type[BaseModel]:
    return create_model("Recruitment", experts=counted(expert_schema(lengths), n, "experts"))


def verification_schema(ids: list[str], lengths: DiscussLengths) -> type[BaseModel]:
    """One judgment per shown snippet (the ``judge_each`` variant); ids are an enum, so none can be invented."""
    judgment = create_model(
        "SnippetJudgment",
        doc_id=(Literal[tuple(ids)], ...),
        reason=(str, bounded(lengths.judgment_chars, "a few words")),
        keep=(bool, ...),
    )
    return create_model(
        "Verification",
        judgments=counted(judgment, len(ids), "snippet judgments", least=0),  # an unjudged snippet is dropped
        accept=(bool, Field(description="the kept snippets support answering the question")),
        reason=(str, bounded(lengths.verdict_chars, "one sentence")),
    )


def judge_tokens(n: int, lengths: DiscussLengths) -> int:
    """The per-snippet variant's budget: a line per snippet judged."""
    return lengths.judge_tokens + JUDGE_TOKENS_EACH * n


def system_prompt(lengths: DiscussLengths) -> str:
    """What every agent of the team reads first."""
    return prompt("discuss_system", brief=briefly(lengths.brief))


# -- brainstorming: every agent reads the question stem, as in the authors' code ---------


def recruit(question: Question, params: DiscussParams, lengths: DiscussLengths, ctx: RunContext) -> list[BaseModel]:
    reply = ctx.ask(
        messages(system_prompt(lengths), prompt("discuss_recruit", question=question.text, n=params.n_experts)),
        stage=Names.RECRUITMENT,
        agent="Recruiter",
        role="recruiter",
        schema=recruitment_schema(params.n_experts, lengths),
        max_tokens=lengths.recruit_tokens + lengths.recruit_tokens_each * params.n_experts,
        **sampling(params.temperature_discussion, params.seed),
    )
    experts, seen = [], set()
    for i, expert in enumerate(reply.parsed.experts, 1):
        role = " ".join(expert.role.split()) or f"Expert {i}"
        role = role if role not in seen else f"{role} {i}"  # two experts of one specialty stay apart in the trace
        seen.add(role)
        experts.append(expert.model_copy(update={"role": role}))
    return experts


def speak(
    question: Question,
    summary: str,
    turn: int,
    params: DiscussParams,
    lengths: DiscussLengths,
    ctx: RunContext,
    expert: BaseModel,
) -> str:
    """The expert's insight (turn 1) or its review of the summary; empty when it has nothing to add."""
    first = turn == 1
    task = (
        prompt("discuss_expert_first", sentences=NUMBERS[lengths.insight_sentences])
        if first
        else prompt(
            "discuss_expert_more",
            sentences=NUMBERS[lengths.addition_sentences],
            reasoning=ADDITION_REASONING if lengths.addition_reasoning else "",
        )
    )
    text = prompt(
        "discuss_expert",
        question=question.text,
        summary=summary or NO_SUMMARY,
        role=expert.role,
        why=expert.why,
        task=task.strip(),
    )
    reply = ctx.ask(
        messages(system_prompt(lengths), text),
        stage=Names.BRAINSTORM(turn),
        agent=expert.role,
        role="expert",
        schema=insight_schema(lengths) if first else review_schema(lengths),
        max_tokens=lengths.insight_tokens,
        turn=turn,
        **sampling(params.temperature_discussion, params.seed),
    ).parsed
    if not first and reply.nothing_to_add:
        return ""
    insight = reply.insight.strip()
    reasoning = getattr(reply, "reasoning", "").strip()  # passed on with the addition, as the reference does
    return f"{insight}\nReasoning: {reasoning}" if insight and reasoning else insight


def summarize(
    question: Question,
    said: list[str],
    summary: str,
    turn: int,
    params: DiscussParams,
    lengths: DiscussLengths,
    ctx: RunContext,
) -> str:
    text = prompt(
        "discuss_summarize",
        question=question.text,
        summary=summary or NO_SUMMARY,
        insights="\n".join(said),
        sentences=NUMBERS[lengths.summary_sentences],
    )
    return ctx.ask(
        messages(system_prompt(lengths), text),
        stage=Names.BRAINSTORM(turn),
        agent="Summarizer",
        role="summarizer",
        schema=summary_schema(lengths.summary_sentences, lengths.summary_chars),
        max_tokens=lengths.summary_tokens,
        turn=turn,
        **sampling(params.temperature_discussion, params.seed),
    ).parsed.summary.strip()


def discuss(question: Question, params: DiscussParams, lengths: DiscussLengths, ctx: RunContext) -> str:
    """The discussion; returns the verified summary D. Turn 1 is the experts' first insights and their summary;
    each later turn is the experts' reviews of the last summary and the summary that folds them in."""
    experts = recruit(question, params, lengths, ctx)
    last = params.turns + 1
    summary, turn = "", 1
    while True:
        insights = ctx.parallel(partial(speak, question, summary, turn, params, lengths, ctx), experts)
        said = [f"({e.role}) {insight}" for e, insight in zip(experts, insights) if insight]
        if not said:  # every expert found the summary sufficient: the discussion is over
            break
        summary = summarize(question, said, summary, turn, params, lengths, ctx) or summary
        if turn == last:  # the authors' code asks the experts once more here, but never reads their replies
            break
        turn += 1
    if not summary:
        return ""
    text = prompt("discuss_refine", question=question.text, summary=summary)
    return (
        ctx.ask(
            messages(system_prompt(lengths), text),
            stage=Names.SUMMARY_VERIFICATION,
            agent="Verifier",
            role="verifier",
            schema=summary_schema(lengths.refined_sentences, lengths.refined_chars),
            max_tokens=lengths.summary_tokens,
            **sampling(params.temperature_verifier, params.seed),
        ).parsed.summary.strip()
        or summary
    )


# -- after retrieval ---------------------------------------------------------------------


def record_verdict(ctx: RunContext, items: list[VerdictItem], accepted: bool, reason: str) -> None:
    """The decision-maker's verdict on the snippets, in the trace."""
    ctx.emit(Names.VERIFICATION, DECIDER, Verdict(items=items, accepted=accepted, reason=reason))


def decide(
    question: Question, hits: list[Hit], budget: int, params: DiscussParams, lengths: DiscussLengths, ctx: RunContext
) -> tuple[bool, list[str], str]:
    """The authors' decision: one yes/no over the snippets (those within the reading budget), given the stem.
    Returns whether it accepted, the ids it read, and why."""
    documents, shown = read_docs(hits, budget)
    if not shown:
        record_verdict(ctx, [], False, NO_SNIPPETS)
        return False, [], NO_SNIPPETS
    text = prompt(
        "discuss_decide", documents=documents, question=question.text, within=in_at_most(lengths.decision_sentences)
    )
    reply = ctx.ask(
        messages(system_prompt(lengths), text),
        stage=Names.VERIFICATION,
        agent=DECIDER,
        role="decision-maker",
        schema=decision_schema(lengths),
        max_tokens=lengths.decision_tokens,
        read=shown,
        offered=len(hits),
        **sampling(params.temperature_decision, params.seed),
    )
    accepted = reply.parsed.answer == "yes"
    read = READ_BY_BOTH if accepted else "the decision-maker rejected the snippets as a whole"
    items = [
        VerdictItem(
            doc_id=h.snippet_id,
            keep=accepted and h.snippet_id in shown,
            reason=read if h.snippet_id in shown else "beyond the reading budget",
        )
        for h in hits
    ]
    reason = reply.parsed.reasoning.strip()
    record_verdict(ctx, items, accepted, reason)
    return accepted, shown, reason


def decide_each(
    question: Question, hits: list[Hit], budget: int, params: DiscussParams, lengths: DiscussLengths, ctx: RunContext
) -> tuple[list[Hit], str]:
    """The per-snippet variant: the kept snippets when it accepts, none when it rejects, and why."""
    documents, shown = read_docs(hits, budget)
    if not shown:
        record_verdict(ctx, [], False, NO_SNIPPETS)
        return [], NO_SNIPPETS
    text = prompt("discuss_decide_each", documents=documents, question=question.text)
    reply = ctx.ask(
        messages(system_prompt(lengths), text),
        stage=Names.VERIFICATION,
        agent=DECIDER,
        role="decision-maker",
        schema=verification_schema(shown, lengths),
        max_tokens=judge_tokens(len(shown), lengths),
        read=shown,
        offered=len(hits),
        **sampling(params.temperature_decision, params.seed),
    )
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
    record_verdict(ctx, items, accepted, reason)
    return (kept if accepted else []), reason


def fall_back(
    question: Question, reason: str, params: DiscussParams, lengths: DiscussLengths, ctx: RunContext
) -> Answer:
    """The authors' fallback when the snippets are rejected: a chain-of-thought prompt, no documents."""
    answer = cot.reason(
        question,
        ctx,
        stage=Names.COT_FALLBACK,
        reader=lengths.reader,
        order=params.answer_format,
        max_tokens=params.max_tokens,
        **sampling(params.temperature_reader, params.seed),
    )
    return answer.model_copy(update={"note": f"CoT fallback: the decision-maker rejected the snippets ({reason})"})


def run(question: Question, params: DiscussParams, ctx: RunContext) -> Answer:
    lengths = LENGTHS[ctx.llm.lengths]
    max_tokens = params.max_tokens or lengths.reader.tokens
    summary = discuss(question, params, lengths, ctx) if params.brainstorm else ""
    query = f"{question.text}\n{summary}" if summary else question.text
    ctx.emit(
        Names.RETRIEVAL,
        "Retriever",
        Query(text=query, purpose="question + distilled summary D" if summary else "question (no discussion)"),
    )
    hits = ctx.retrieve(query, params.k, stage=Names.RETRIEVAL, agent="Retriever")
    # One budget for the decision-maker and the reader, so the reader reads exactly the snippets that were accepted;
    # it leaves room for the longest reply of the two (the per-snippet variant writes a line per snippet).
    reply = max(lengths.decision_tokens, max_tokens, judge_tokens(len(hits), lengths) if params.judge_each else 0)
    budget = ctx.reading_chars(params.max_doc_chars, tokens_of(question.render()) + reply)
    read = partial(
        read_and_answer,
        question,
        ctx=ctx,
        write=medrag_prompt(question, lengths.reader, lengths.commit, system=system_prompt(lengths)),
        budget=budget,
        reader=lengths.reader,
        order=params.answer_format,
        max_tokens=max_tokens,
        **sampling(params.temperature_reader, params.seed),
    )
    if not params.verify:
        return read(hits, note=f"verification off: answered from all {len(hits)} snippets")
    if params.judge_each:
        kept, reason = decide_each(question, hits, budget, params, lengths, ctx)
        if not kept:
            return fall_back(question, reason, params, lengths, ctx)
        return read(kept, note=f"answered from the {len(kept)} of {len(hits)} snippets the decision-maker kept")
    accepted, shown, reason = decide(question, hits, budget, params, lengths, ctx)
    if not accepted:
        return fall_back(question, reason, params, lengths, ctx)
    note = f"the decision-maker accepted the snippets: answered from all {len(shown)} it read"
    if len(shown) < len(hits):
        note += f" ({len(hits) - len(shown)} beyond the reading budget)"
    return read(hits, note=note)


SPEC = MethodSpec(
    name="discuss",
    label="Discuss-RAG",
    description="Recruited experts brainstorm what the question needs; retrieve with that summary; "
    "a decision-maker accepts the snippets for the reader or falls back to CoT.",
    params=DiscussParams,
    run=run,
    stages=(
        Stage("Recruiter picks expert roles", "understand", (Names.RECRUITMENT,)),
        Stage("Experts brainstorm", "understand", (Names.BRAINSTORM,), many="× n experts", kinds=("agent_message",)),
        Stage(
            "Summarizer folds the turn",
            "understand",
            (Names.BRAINSTORM,),
            agents=("Summarizer",),
            loop_to="Experts brainstorm",
            loop_label="experts review the summary (up to turns + 1 summaries)",
        ),
        Stage("Verifier distils the summary", "understand", (Names.SUMMARY_VERIFICATION,)),
        Stage("Retrieve with question + summary", "retrieve", (Names.RETRIEVAL,)),
        Stage("Decision-maker accepts or rejects the snippets", "judge", (Names.VERIFICATION,)),
        Stage("Reader answers from the snippets", "answer", (Names.ANSWER,)),
        Stage("CoT fallback (snippets rejected)", "answer", (Names.COT_FALLBACK,), branch=True),
    ),
    stage_names=Names,
)
