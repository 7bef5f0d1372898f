"""SEMA-RAG (ACL 2026): three agents on one model, told apart only by role prompts.

I-Agent maps the question to a clinical schema ⟨intent, entities, constraints, initial query⟩.
E-Agent retrieves (k=16) and judges the evidence after every turn: sufficient, or the gaps plus m=3
follow-up queries whose retrievals run concurrently; at most T_max=2 turns. A-Agent deduplicates the
evidence, writes the report (supporting, refuting, conflicts) and selects the answer from question and
report alone. Each agent can be switched off, as in the paper's ablation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial
from itertools import zip_longest
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from core.engine.llm.profiles import Lengths
from core.engine.llm.tokens import tokens_of
from core.engine.methods import reader
from core.engine.methods.answer import PAPER_REPLY_TOKENS, READER, ReaderLengths, answer_schema, to_answer
from core.engine.methods.contract import MethodParams, MethodSpec, RunContext
from core.engine.methods.documents import read_docs
from core.engine.methods.knobs import budget_knob, reading_knob, sampling, seed_knob
from core.engine.methods.reader import read_and_answer
from core.engine.methods.schemas import bounded, counted, one_of
from core.engine.methods.templates import messages, prompt
from core.engine.question import Question
from core.engine.stages import Numbered, Stage, StageNames
from core.engine.trace import Answer, Hit, Query, Report, Sufficiency, Verdict, VerdictItem


class Names(StageNames):
    INTERPRETATION = "interpretation"
    EXPLORATION = Numbered("exploration turn {n}")  # a turn's queries, retrievals and the E-Agent's judgment
    SUFFICIENCY = Numbered("sufficiency round {n}")
    ARBITRATION = "arbitration"
    ANSWER_SELECTION = "answer selection"
    ANSWER = reader.ANSWER  # without the A-Agent


MAX_IDS_PER_CLAIM = 4  # unbounded, a small model can list ids until its token budget runs out mid-reply


@dataclass(frozen=True)
class SemaLengths:
    """What each agent writes: characters of each text and most items of each list, as the grammar bounds them
    (None: no bound), and the tokens each call may take. The defaults are the paper's (the paper lengths)."""

    reader: ReaderLengths = READER["paper"]  # the answer
    max_tokens: int = PAPER_REPLY_TOKENS  # every agent's call
    intent_chars: int | None = None  # the I-Agent's clinical schema
    entities: int | None = None
    entity_chars: int | None = None
    constraints: int | None = None
    constraint_chars: int | None = None
    query_chars: int | None = None
    gaps: int | None = None  # the E-Agent's judgment
    gap_chars: int | None = None
    follow_up_chars: int | None = None
    claims: int | None = None  # the A-Agent's report: supporting and refuting claims each
    claim_chars: int | None = None
    ids_per_claim: int | None = None
    conflicts: int | None = None
    conflict_chars: int | None = None
    summary_chars: int | None = None


LENGTHS: dict[Lengths, SemaLengths] = {
    # Every text and list bounded in the grammar, so a small model cannot run on; the longest reply the schemas allow
    # (the report) fits the budget.
    "compact": SemaLengths(
        READER["compact"],
        512,
        intent_chars=150,
        entities=8,
        entity_chars=60,
        constraints=5,
        constraint_chars=100,
        query_chars=150,
        gaps=3,
        gap_chars=120,
        follow_up_chars=120,
        claims=3,
        claim_chars=150,
        ids_per_claim=MAX_IDS_PER_CLAIM,
        conflicts=2,
        conflict_chars=150,
        summary_chars=200,
    ),
    # The paper (arXiv 2605.17101) bounds none of its agents' replies.
    "paper": SemaLengths(),
}


class SemaParams(MethodParams):
    k: int = Field(16, ge=1, le=128, description="snippets per retrieval")
    m: int = Field(3, ge=1, le=6, description="follow-up queries per insufficient turn")
    t_max: int = Field(2, ge=1, le=5, description="most exploration turns")
    temperature_i: float = Field(1.0, ge=0.0, le=2.0, description="I-Agent (interpreter) temperature")
    temperature_e: float = Field(1.0, ge=0.0, le=2.0, description="E-Agent (explorer) temperature")
    temperature_a: float = Field(0.0, ge=0.0, le=2.0, description="A-Agent (arbiter) temperature")
    seed: int = seed_knob()
    use_i_agent: bool = Field(True, description="off: retrieve with the raw question (ablation w/o I-Agent)")
    use_e_agent: bool = Field(True, description="off: one retrieval, no sufficiency loop (ablation w/o E-Agent)")
    use_a_agent: bool = Field(True, description="off: answer straight from the evidence (ablation w/o A-Agent)")
    max_doc_chars: int | None = reading_knob("the E- and A-Agent each")
    max_tokens: int | None = budget_knob(
        "each agent's reply",
        LENGTHS["compact"].max_tokens,
        LENGTHS["paper"].max_tokens,
        tail="; on the embedded model the schemas' length limits keep replies within it",
    )


def _text(limit: int | None) -> dict[str, Any]:
    """A list's text item of at most ``limit`` characters (None: no bound), as the grammar holds it."""
    return {"type": "string", "maxLength": limit} if limit else {"type": "string"}


def _texts(most: int | None, limit: int | None, description: str) -> Any:
    """A list of at most ``most`` texts of at most ``limit`` characters each (None: no bound); as with every bound
    here, only the server's grammar holds to it, so a longer list or text from another backend still parses."""
    return Field(min_length=0, max_length=most, description=description, json_schema_extra={"items": _text(limit)})


class Schema(BaseModel):  # the I-Agent's clinical schema, whatever lengths it was written to
    intent: str
    entities: list[str]
    constraints: list[str]
    initial_query: str

    def linearize(self) -> str:
        """The retrieval entry point: the schema's parts joined into one query."""
        return " ".join([self.initial_query, self.intent, *self.entities, *self.constraints])

    def render(self) -> str:
        return (
            f"Clinical schema: intent: {self.intent}; entities: {', '.join(self.entities) or 'none'}; "
            f"constraints: {', '.join(self.constraints) or 'none'}"
        )


def clinical_schema(lengths: SemaLengths) -> type[Schema]:
    return create_model(
        "ClinicalSchema",
        __base__=Schema,
        __doc__=None,
        intent=(str, bounded(lengths.intent_chars, "what the question asks for")),
        entities=(list[str], _texts(lengths.entities, lengths.entity_chars, "key findings, conditions, drugs, tests")),
        constraints=(
            list[str],
            _texts(lengths.constraints, lengths.constraint_chars, "facts given in the question that narrow the answer"),
        ),
        initial_query=(str, bounded(lengths.query_chars, "one search query for a medical knowledge base")),
    )


def judgment_schema(m: int, lengths: SemaLengths = LENGTHS["compact"]) -> type[BaseModel]:
    """The E-Agent's reply: the gaps and whether the evidence suffices; when it does not, exactly m follow-up queries
    (the paper's m). One of two shapes, so a reply that judges the evidence sufficient ends there: a small model
    asked for queries it will not need writes them anyway. On the last turn (m=0) there is nothing left to query."""
    gaps = (list[str], _texts(lengths.gaps, lengths.gap_chars, "facts still missing; empty when the evidence suffices"))
    said = Field(description="the evidence is enough to answer with confidence")
    if not m:
        return create_model("SufficiencyJudgment", gaps=gaps, sufficient=(bool, said))
    enough = create_model("Sufficient", gaps=gaps, sufficient=(Literal[True], said))
    short = create_model(
        "Insufficient",
        gaps=gaps,
        sufficient=(Literal[False], said),
        follow_up_queries=counted(
            str,
            m,
            "follow-up queries",
            description=f"{m} search queries that fill the gaps",
            items=_text(lengths.follow_up_chars),
        ),
    )
    return one_of("SufficiencyJudgment", enough, short)


def report_schema(shown: list[str], lengths: SemaLengths = LENGTHS["compact"]) -> type[BaseModel]:
    ids: Any = list[Literal[tuple(shown)]] if shown else list[str]  # enum: only ids the Arbiter was shown
    claim = create_model(
        "Claim",
        claim=(str, bounded(lengths.claim_chars, "one claim, naming the option it bears on")),
        ids=(
            ids,
            Field(
                description="ids of the documents behind it",
                json_schema_extra={"maxItems": lengths.ids_per_claim} if lengths.ids_per_claim else None,
            ),
        ),
    )
    return create_model(
        "EvidenceReport",
        supporting=(list[claim], Field(max_length=lengths.claims, description="claims that support an answer")),
        refuting=(list[claim], Field(max_length=lengths.claims, description="claims that rule an answer out")),
        conflicts=(list[str], _texts(lengths.conflicts, lengths.conflict_chars, "where documents disagree")),
        summary=(str, bounded(lengths.summary_chars, "one sentence")),
    )


# -- evidence bookkeeping ------------------------------------------------------------


def merge(results: list[list[Hit]]) -> list[Hit]:
    """The evidence set: every retrieval's hits interleaved by rank, so each query's best fit the budget first."""
    seen: dict[str, Hit] = {}
    for tier in zip_longest(*results):
        for hit in tier:
            if hit is not None and hit.snippet_id not in seen:
                seen[hit.snippet_id] = hit
    return list(seen.values())


def deduplicate(evidence: list[Hit]) -> tuple[list[Hit], list[VerdictItem]]:
    """Drop snippets whose text repeats an earlier one (the same passage from two corpora or queries)."""
    kept: list[Hit] = []
    first: dict[str, str] = {}
    items = []
    for hit in evidence:
        key = re.sub(r"\W+", " ", hit.text.lower()).strip()
        if key in first:
            items.append(VerdictItem(doc_id=hit.snippet_id, keep=False, reason=f"duplicate of {first[key]}"))
        else:
            first[key] = hit.snippet_id
            kept.append(hit)
    return kept, items


# -- the three agents ----------------------------------------------------------------


def interpret(question: Question, params: SemaParams, lengths: SemaLengths, ctx: RunContext) -> Schema:
    reply = ctx.ask(
        messages(prompt("sema_system"), prompt("sema_interpret", question=question.render())),
        stage=Names.INTERPRETATION,
        agent="I-Agent",
        role="interpreter",
        schema=clinical_schema(lengths),
        **sampling(params.temperature_i, params.seed),
        max_tokens=reply_tokens(params, lengths),
    )
    return reply.parsed


def reply_tokens(params: SemaParams, lengths: SemaLengths) -> int:
    return params.max_tokens or lengths.max_tokens


def reading_budget(
    question: Question, schema_text: str, params: SemaParams, lengths: SemaLengths, ctx: RunContext
) -> int:
    """Characters of evidence an agent reads beside the question, the clinical schema and its reply."""
    return ctx.reading_chars(
        params.max_doc_chars, tokens_of(question.render() + schema_text) + reply_tokens(params, lengths)
    )


def explore(
    question: Question,
    schema_text: str,
    results: list[list[Hit]],
    params: SemaParams,
    lengths: SemaLengths,
    ctx: RunContext,
) -> list[list[Hit]]:
    """The self-evolving loop: judge the evidence, and while it falls short, retrieve for its gaps."""
    known = 0
    budget = reading_budget(question, schema_text, params, lengths, ctx)
    for turn in range(1, params.t_max + 1):
        evidence = merge(results)
        documents, shown = read_docs(evidence, budget)
        last = turn == params.t_max
        task = prompt("sema_explore_last") if last else prompt("sema_explore_more", m=params.m)
        reply = ctx.ask(
            messages(
                prompt("sema_system"),
                prompt("sema_explore", documents=documents, question=question.render(), schema=schema_text, task=task),
            ),
            stage=Names.EXPLORATION(turn),
            agent="E-Agent",
            role="explorer",
            schema=judgment_schema(0 if last else params.m, lengths),
            **sampling(params.temperature_e, params.seed),
            max_tokens=reply_tokens(params, lengths),
            turn=turn,
            read=shown,
            offered=len(evidence),
        )
        judged = reply.parsed
        follow_ups = [] if judged.sufficient or last else [q.strip() for q in judged.follow_up_queries if q.strip()]
        ctx.emit(
            Names.SUFFICIENCY(turn),
            "E-Agent",
            Sufficiency(
                round=turn,
                sufficient=judged.sufficient,
                gaps=judged.gaps,
                follow_up_queries=follow_ups,
                new_hits=len(evidence) - known,
            ),
        )
        known = len(evidence)
        if not follow_ups:
            break
        stage = Names.EXPLORATION(turn + 1)
        gaps = "; ".join(judged.gaps) or "unnamed"
        for q in follow_ups:
            ctx.emit(stage, "E-Agent", Query(text=q, purpose=f"follow-up for gaps: {gaps}", round=turn + 1))
        retrieve = partial(ctx.retrieve, k=params.k, stage=stage, agent="E-Agent", round=turn + 1)
        results = results + ctx.parallel(retrieve, follow_ups)
    return results


def arbitrate(
    question: Question, schema_text: str, evidence: list[Hit], params: SemaParams, lengths: SemaLengths, ctx: RunContext
) -> Answer:
    unique, dropped = deduplicate(evidence)
    documents, shown = read_docs(unique, reading_budget(question, schema_text, params, lengths, ctx))
    read = set(shown)
    ctx.emit(
        Names.ARBITRATION,
        "A-Agent",
        Verdict(
            items=[
                VerdictItem(
                    doc_id=h.snippet_id,
                    keep=h.snippet_id in read,
                    reason="read by the A-Agent" if h.snippet_id in read else "beyond the reading budget",
                )
                for h in unique
            ]
            + dropped,
            reason=f"{len(unique)} unique of {len(evidence)} snippets; {len(shown)} fit the reading budget",
        ),
    )
    system = prompt("sema_system")
    reply = ctx.ask(
        messages(system, prompt("sema_arbitrate", documents=documents, question=question.render(), schema=schema_text)),
        stage=Names.ARBITRATION,
        agent="A-Agent",
        role="arbiter",
        schema=report_schema(shown, lengths),
        temperature=params.temperature_a,
        max_tokens=reply_tokens(params, lengths),
        read=shown,
        offered=len(evidence),
    )
    r = reply.parsed
    report = Report(
        supporting=[_cited(c) for c in r.supporting],
        refuting=[_cited(c) for c in r.refuting],
        conflicts=r.conflicts,
        summary=r.summary,
    )
    ctx.emit(Names.ARBITRATION, "A-Agent", report)
    reply = ctx.ask(
        messages(
            system,
            prompt("sema_answer", question=question.render(), report=render_report(report), **lengths.reader.words()),
        ),
        stage=Names.ANSWER_SELECTION,
        agent="A-Agent",
        role="arbiter",
        schema=answer_schema(question, cite=True, order=params.answer_format, reader=lengths.reader),
        temperature=params.temperature_a,
        max_tokens=reply_tokens(params, lengths),
    )
    return to_answer(reply.parsed, question, valid_ids={i for c in (*r.supporting, *r.refuting) for i in c.ids})


def _cited(claim: BaseModel) -> str:
    return f"{claim.claim} [{', '.join(claim.ids)}]" if claim.ids else claim.claim


def render_report(report: Report) -> str:
    def block(title: str, lines: list[str]) -> str:
        return f"{title}:\n" + ("\n".join(f"- {line}" for line in lines) or "- none")

    return "\n".join(
        [
            block("Supporting", report.supporting),
            block("Refuting", report.refuting),
            block("Conflicts", report.conflicts),
            f"Summary: {report.summary}",
        ]
    )


def run(question: Question, params: SemaParams, ctx: RunContext) -> Answer:
    lengths = LENGTHS[ctx.llm.lengths]
    schema = interpret(question, params, lengths, ctx) if params.use_i_agent else None
    schema_text = schema.render() if schema else "Clinical schema: not interpreted"
    query = schema.linearize() if schema else question.text
    ctx.emit(Names.EXPLORATION(1), "E-Agent", Query(text=query, purpose="initial", round=1))
    results = [ctx.retrieve(query, params.k, stage=Names.EXPLORATION(1), agent="E-Agent", round=1)]
    if params.use_e_agent:
        results = explore(question, schema_text, results, params, lengths, ctx)
    evidence = merge(results)
    if params.use_a_agent:
        return arbitrate(question, schema_text, evidence, params, lengths, ctx)
    words = lengths.reader.words()
    return read_and_answer(
        question,
        evidence,
        ctx,
        write=lambda documents: messages(
            prompt("sema_system"),
            prompt("sema_read", documents=documents, question=question.render(), schema=schema_text, **words),
        ),
        budget=reading_budget(question, schema_text, params, lengths, ctx),
        reader=lengths.reader,
        order=params.answer_format,
        max_tokens=reply_tokens(params, lengths),
        temperature=params.temperature_a,
    )


SPEC = MethodSpec(
    name="sema",
    label="SEMA-RAG",
    description="Interpreter → sufficiency-driven explorer (k=16, m=3, T_max=2) → arbiter with an evidence report.",
    params=SemaParams,
    run=run,
    stages=(
        Stage("I-Agent maps the question to a schema", "understand", (Names.INTERPRETATION,)),
        Stage("E-Agent retrieves", "retrieve", (Names.EXPLORATION,), kinds=("query", "retrieval")),
        Stage(
            "E-Agent judges sufficiency",
            "judge",
            (Names.EXPLORATION, Names.SUFFICIENCY),
            loop_to="E-Agent retrieves",
            loop_label="not sufficient: m follow-up queries (≤ T_max turns)",
        ),
        Stage("A-Agent arbitrates the evidence", "judge", (Names.ARBITRATION,)),
        Stage("A-Agent selects the answer", "answer", (Names.ANSWER_SELECTION, Names.ANSWER)),
    ),
    stage_names=Names,
)
