"""SEMA-RAG (ACL 2026): three agents on one model, told apart only by role prompts.

I-Agent maps the question to a clinical schema ⟨intent, entities, constraints, initial query⟩.
E-Agent retrieves (k=16) and judges the evidence after every turn: sufficient, or the gaps plus m=3
follow-up queries whose retrievals run concurrently; at most T_max=2 turns. A-Agent deduplicates the
evidence, writes the report (supporting, refuting, conflicts) and selects the answer from question and
report alone. Each agent can be switched off, as in the paper's ablation.
"""

from __future__ import annotations

import re
from functools import partial
from itertools import zip_longest
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from core.methods.base import (MethodParams, MethodSpec, RunContext, answer_schema, messages, one_of, prompt, read_docs,
    reading_knob, sample_seed, to_answer, tokens_of)
from core.question import Question
from core.stages import Stage
from core.trace import Answer, Hit, Query, Report, Sufficiency, Verdict, VerdictItem


class SemaParams(MethodParams):
    k: int = Field(16, ge=1, le=128, description="snippets per retrieval")
    m: int = Field(3, ge=1, le=6, description="follow-up queries per insufficient turn")
    t_max: int = Field(2, ge=1, le=5, description="most exploration turns")
    temperature_i: float = Field(1.0, ge=0.0, le=2.0, description="I-Agent (interpreter) temperature")
    temperature_e: float = Field(1.0, ge=0.0, le=2.0, description="E-Agent (explorer) temperature")
    temperature_a: float = Field(0.0, ge=0.0, le=2.0, description="A-Agent (arbiter) temperature")
    seed: int = Field(0, ge=0, description="sampling seed of the agents above temperature 0: the same seed replays a "
                                           "saved run from the response cache; another seed draws new replies")
    use_i_agent: bool = Field(True, description="off: retrieve with the raw question (ablation w/o I-Agent)")
    use_e_agent: bool = Field(True, description="off: one retrieval, no sufficiency loop (ablation w/o E-Agent)")
    use_a_agent: bool = Field(True, description="off: answer straight from the evidence (ablation w/o A-Agent)")
    max_doc_chars: int | None = reading_knob("the E- and A-Agent each")
    max_tokens: int = Field(512, ge=64, le=4096, description="budget for each agent's reply (the schemas' length "
                                                             "limits keep replies within it)")


def _text(limit: int, description: str) -> Any:
    # maxLength reaches the server's grammar only, so a long reply from another backend still parses.
    return Field(description=description, json_schema_extra={"maxLength": limit})


def _texts(most: int, limit: int, description: str, least: int = 0) -> Any:
    return Field(min_length=least, max_length=most, description=description,
                 json_schema_extra={"items": {"type": "string", "maxLength": limit}})


class ClinicalSchema(BaseModel):
    intent: str = _text(150, "what the question asks for")
    entities: list[str] = _texts(8, 60, "key findings, conditions, drugs, tests")
    constraints: list[str] = _texts(5, 100, "facts given in the question that narrow the answer")
    initial_query: str = _text(150, "one search query for a medical knowledge base")

    def linearize(self) -> str:
        """The retrieval entry point: the schema's parts joined into one query."""
        return " ".join([self.initial_query, self.intent, *self.entities, *self.constraints])

    def render(self) -> str:
        return (f"Clinical schema: intent: {self.intent}; entities: {', '.join(self.entities) or 'none'}; "
                f"constraints: {', '.join(self.constraints) or 'none'}")


def judgment_schema(m: int) -> type[BaseModel]:
    """The E-Agent's reply: the gaps and whether the evidence suffices; when it does not, exactly m follow-up queries
    (the paper's m). One of two shapes, so a reply that judges the evidence sufficient ends there: a small model
    asked for queries it will not need writes them anyway. On the last turn (m=0) there is nothing left to query."""
    gaps = (list[str], _texts(3, 120, "facts still missing; empty when the evidence suffices"))
    said = Field(description="the evidence is enough to answer with confidence")
    if not m:
        return create_model("SufficiencyJudgment", gaps=gaps, sufficient=(bool, said))
    enough = create_model("Sufficient", gaps=gaps, sufficient=(Literal[True], said))
    short = create_model("Insufficient", gaps=gaps, sufficient=(Literal[False], said), follow_up_queries=(
        list[str], _texts(m, 120, f"{m} search queries that fill the gaps", least=m)))
    return one_of("SufficiencyJudgment", enough, short)


MAX_IDS_PER_CLAIM = 4  # unbounded, a small model can list ids until its token budget runs out mid-reply


def report_schema(shown: list[str]) -> type[BaseModel]:
    ids: Any = list[Literal[tuple(shown)]] if shown else list[str]  # enum: only ids the Arbiter was shown
    claim = create_model("Claim", claim=(str, _text(150, "one claim, naming the option it bears on")),
                         ids=(ids, Field(description="ids of the documents behind it",
                                         json_schema_extra={"maxItems": MAX_IDS_PER_CLAIM})))
    return create_model(
        "EvidenceReport",
        supporting=(list[claim], Field(max_length=3, description="claims that support an answer")),
        refuting=(list[claim], Field(max_length=3, description="claims that rule an answer out")),
        conflicts=(list[str], _texts(2, 150, "where documents disagree")),
        summary=(str, _text(200, "one sentence")),
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


def interpret(question: Question, params: SemaParams, ctx: RunContext) -> ClinicalSchema:
    reply = ctx.ask(messages(prompt("sema_system"), prompt("sema_interpret", question=question.render())),
                    stage="interpretation", agent="I-Agent", role="interpreter", schema=ClinicalSchema,
                    temperature=params.temperature_i, seed=sample_seed(params.temperature_i, params.seed),
                    max_tokens=params.max_tokens)
    return reply.parsed


def reading_budget(question: Question, schema_text: str, params: SemaParams, ctx: RunContext) -> int:
    """Characters of evidence an agent reads beside the question, the clinical schema and its reply."""
    return ctx.reading_chars(params.max_doc_chars, tokens_of(question.render() + schema_text) + params.max_tokens)


def explore(question: Question, schema_text: str, results: list[list[Hit]], params: SemaParams,
            ctx: RunContext) -> list[list[Hit]]:
    """The self-evolving loop: judge the evidence, and while it falls short, retrieve for its gaps."""
    known = 0
    budget = reading_budget(question, schema_text, params, ctx)
    for turn in range(1, params.t_max + 1):
        evidence = merge(results)
        documents, shown = read_docs(evidence, budget)
        last = turn == params.t_max
        task = prompt("sema_explore_last") if last else prompt("sema_explore_more", m=params.m)
        reply = ctx.ask(messages(prompt("sema_system"), prompt("sema_explore", documents=documents,
                                                               question=question.render(), schema=schema_text, task=task)),
                        stage=f"exploration turn {turn}", agent="E-Agent", role="explorer",
                        schema=judgment_schema(0 if last else params.m), temperature=params.temperature_e,
                        seed=sample_seed(params.temperature_e, params.seed), max_tokens=params.max_tokens, turn=turn,
                        read=shown, offered=len(evidence))
        judged = reply.parsed
        follow_ups = [] if judged.sufficient or last else [q.strip() for q in judged.follow_up_queries if q.strip()]
        ctx.emit(f"sufficiency round {turn}", "E-Agent", Sufficiency(
            round=turn, sufficient=judged.sufficient, gaps=judged.gaps, follow_up_queries=follow_ups,
            new_hits=len(evidence) - known))
        known = len(evidence)
        if not follow_ups:
            break
        stage = f"exploration turn {turn + 1}"
        gaps = "; ".join(judged.gaps) or "unnamed"
        for q in follow_ups:
            ctx.emit(stage, "E-Agent", Query(text=q, purpose=f"follow-up for gaps: {gaps}", round=turn + 1))
        retrieve = partial(ctx.retrieve, k=params.k, stage=stage, agent="E-Agent", round=turn + 1)
        results = results + ctx.parallel(retrieve, follow_ups)
    return results


def arbitrate(question: Question, schema_text: str, evidence: list[Hit], params: SemaParams,
              ctx: RunContext) -> Answer:
    unique, dropped = deduplicate(evidence)
    documents, shown = read_docs(unique, reading_budget(question, schema_text, params, ctx))
    read = set(shown)
    ctx.emit("arbitration", "A-Agent", Verdict(
        items=[VerdictItem(doc_id=h.snippet_id, keep=h.snippet_id in read,
                           reason="read by the A-Agent" if h.snippet_id in read else "beyond the reading budget")
               for h in unique] + dropped,
        reason=f"{len(unique)} unique of {len(evidence)} snippets; {len(shown)} fit the reading budget"))
    system = prompt("sema_system")
    reply = ctx.ask(messages(system, prompt("sema_arbitrate", documents=documents, question=question.render(),
                                            schema=schema_text)),
                    stage="arbitration", agent="A-Agent", role="arbiter", schema=report_schema(shown),
                    temperature=params.temperature_a, max_tokens=params.max_tokens, read=shown, offered=len(evidence))
    r = reply.parsed
    report = Report(supporting=[_cited(c) for c in r.supporting], refuting=[_cited(c) for c in r.refuting],
                    conflicts=r.conflicts, summary=r.summary)
    ctx.emit("arbitration", "A-Agent", report)
    reply = ctx.ask(messages(system, prompt("sema_answer", question=question.render(), report=render_report(report))),
                    stage="answer selection", agent="A-Agent", role="arbiter", schema=answer_schema(question, cite=True, order=params.answer_format),
                    temperature=params.temperature_a, max_tokens=params.max_tokens)
    return to_answer(reply.parsed, question, valid_ids={i for c in (*r.supporting, *r.refuting) for i in c.ids})


def _cited(claim: BaseModel) -> str:
    return f"{claim.claim} [{', '.join(claim.ids)}]" if claim.ids else claim.claim


def render_report(report: Report) -> str:
    def block(title: str, lines: list[str]) -> str:
        return f"{title}:\n" + ("\n".join(f"- {line}" for line in lines) or "- none")

    return "\n".join([block("Supporting", report.supporting), block("Refuting", report.refuting),
                      block("Conflicts", report.conflicts), f"Summary: {report.summary}"])


def run(question: Question, params: SemaParams, ctx: RunContext) -> Answer:
    schema = interpret(question, params, ctx) if params.use_i_agent else None
    schema_text = schema.render() if schema else "Clinical schema: not interpreted"
    query = schema.linearize() if schema else question.text
    ctx.emit("exploration turn 1", "E-Agent", Query(text=query, purpose="initial", round=1))
    results = [ctx.retrieve(query, params.k, stage="exploration turn 1", agent="E-Agent", round=1)]
    if params.use_e_agent:
        results = explore(question, schema_text, results, params, ctx)
    evidence = merge(results)
    if params.use_a_agent:
        return arbitrate(question, schema_text, evidence, params, ctx)
    documents, shown = read_docs(evidence, reading_budget(question, schema_text, params, ctx))
    reply = ctx.ask(messages(prompt("sema_system"), prompt("sema_read", documents=documents, question=question.render(),
                                                           schema=schema_text)),
                    stage="answer", agent="Reader", role="reader", schema=answer_schema(question, cite=True, order=params.answer_format),
                    temperature=params.temperature_a, max_tokens=params.max_tokens, read=shown, offered=len(evidence))
    return to_answer(reply.parsed, question, valid_ids=shown)


SPEC = MethodSpec(
    name="sema", label="SEMA-RAG",
    description="Interpreter → sufficiency-driven explorer (k=16, m=3, T_max=2) → arbiter with an evidence report.",
    params=SemaParams, run=run,
    stages=(Stage("I-Agent maps the question to a schema", "understand", ("interpretation",)),
            Stage("E-Agent retrieves", "retrieve", ("exploration turn",), kinds=("query", "retrieval")),
            Stage("E-Agent judges sufficiency", "judge", ("exploration turn", "sufficiency round"),
                  loop_to="E-Agent retrieves", loop_label="not sufficient: m follow-up queries (≤ T_max turns)"),
            Stage("A-Agent arbitrates the evidence", "judge", ("arbitration",)),
            Stage("A-Agent selects the answer", "answer", ("answer selection", "answer"))),
)
