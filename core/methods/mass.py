"""MASS-RAG (ACL 2026 Findings): multi-agent synthesis over complementary views of the same documents.

After one retrieval, three filtering agents read the same documents concurrently: the Summarizer
compresses them, the Extractor copies verbatim spans (each checked against its document here; a span
that is not verbatim is flagged and left out), the Reasoner infers across documents. An optional
Answer Agent answers from each view (the paper finds it helps open questions and adds little to
multiple choice, hence the automatic default). The Synthesis Agent reconciles the views, or their
candidate answers, into the answer and says which view it followed. The paper's ablation keeps a
single view.
"""

from __future__ import annotations

import unicodedata
from functools import partial
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model, field_validator

from core.methods.base import (AnswerFormat, MethodParams, MethodSpec, RunContext, answer_schema, messages, prompt,
    read_docs, reading_knob, to_answer, tokens_of)
from core.question import Question
from core.stages import Stage
from core.trace import Answer, Hit, Verdict, VerdictItem

View = Literal["summarizer", "extractor", "reasoner"]
VIEWS: tuple[str, ...] = ("summarizer", "extractor", "reasoner")
# Token budgets that fit the longest reply the schemas allow: a reply cut off by its budget does not parse.
VIEW_TOKENS = 300
SPAN_TOKENS = 90


class MassParams(MethodParams):
    # The paper does not fix k; five documents keep three concurrent reads short on the embedded model.
    k: int = Field(5, ge=1, le=32, description="documents retrieved once and read by every view")
    views: list[View] = Field(default_factory=lambda: list(VIEWS), min_length=1,
                              description="filtering agents, run concurrently; a single one is the paper's ablation")
    answer_agent: bool | None = Field(None, description="an Answer Agent per view before synthesis; "
                                                        "None = on for open questions, off for multiple choice")
    n_spans: int = Field(4, ge=1, le=12, description="most verbatim spans the Extractor copies")
    max_doc_chars: int | None = reading_knob("each view")
    max_tokens: int = Field(320, ge=64, le=4096, description="budget for each answer and the synthesis")

    @field_validator("views")
    @classmethod
    def _distinct(cls, value: list[str]) -> list[str]:
        return list(dict.fromkeys(value))


def view_schema(view: str, ids: list[str], n_spans: int) -> type[BaseModel]:
    doc_id: Any = Literal[tuple(ids)] if ids else str  # an enum of the ids the view was shown
    doc_ids = (list[doc_id], Field(default_factory=list, max_length=max(len(ids), 1),
                                   description="ids of the documents used"))
    if view == "extractor":
        span = create_model("Span", doc_id=(doc_id, ...), text=(str, Field(
            description="copied word for word", json_schema_extra={"maxLength": 200})))
        return create_model("ExtractorView", spans=(list[span], Field(max_length=n_spans)))
    field = "summary" if view == "summarizer" else "inference"
    return create_model(f"{view.title()}View", **{field: (str, Field(
        description="at most four sentences", json_schema_extra={"maxLength": 500})), "doc_ids": doc_ids})


# -- the three views -----------------------------------------------------------------------


def view_tokens(view: str, params: MassParams) -> int:
    return 20 + SPAN_TOKENS * params.n_spans if view == "extractor" else VIEW_TOKENS


def filter_view(question: Question, documents: str, shown: list[str], offered: int, params: MassParams,
                ctx: RunContext, view: str) -> BaseModel:
    text = prompt(f"mass_{view}", documents=documents, question=question.render(), n=params.n_spans)
    return ctx.ask(messages(prompt("mass_system"), text), stage="views", agent=view.title(), role=view,
                   schema=view_schema(view, shown, params.n_spans), max_tokens=view_tokens(view, params),
                   read=shown, offered=offered).parsed


def _plain(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split())


def check_spans(spans: list[Any], hits: list[Hit], ctx: RunContext) -> list[tuple[str, str]]:
    """Keep the Extractor's spans that occur word for word in a document (ignoring case, as a span that starts a
    sentence is often capitalised, and spacing); flag the others in the trace."""
    texts = {h.snippet_id: _plain(f"{h.title}\n{h.text}").casefold() for h in hits}
    kept, items = [], []
    for span in spans:
        quote = _plain(span.text).strip('"“” ')
        short = quote if len(quote) <= 80 else quote[:79] + "…"
        found = [i for i, t in texts.items() if quote and quote.casefold() in t]
        if span.doc_id in found:
            kept.append((span.doc_id, quote))
            items.append(VerdictItem(doc_id=span.doc_id, keep=True, reason=f'"{short}" verbatim in {span.doc_id}'))
        elif found:  # verbatim, but from another document than the one named
            kept.append((found[0], quote))
            items.append(VerdictItem(doc_id=found[0], keep=True,
                                     reason=f'"{short}" verbatim in {found[0]}, not in {span.doc_id} as named'))
        else:
            items.append(VerdictItem(doc_id=span.doc_id, keep=False, reason=f'"{short}" not verbatim in {span.doc_id}'))
    ctx.emit("span check", "Extractor", Verdict(items=items, reason=f"{len(kept)} of {len(spans)} spans are verbatim"))
    return kept


def evidence_from_views(views: list[str], outputs: list[BaseModel], hits: list[Hit],
                        ctx: RunContext) -> tuple[dict[str, str], set[str]]:
    """Each view as the next agents read it (the Extractor's spans checked on the way), and the ids it rests on."""
    rendered, used = {}, set()
    for view, out in zip(views, outputs):
        if view == "extractor":
            spans = check_spans(out.spans, hits, ctx)
            used |= {doc_id for doc_id, _ in spans}
            rendered[view] = "\n".join(f'- [{doc_id}] "{quote}"' for doc_id, quote in spans) or "(no verbatim evidence)"
        else:
            text = (out.summary if view == "summarizer" else out.inference).strip() or "(nothing found)"
            used |= set(out.doc_ids)
            rendered[view] = f"{text} [{', '.join(out.doc_ids)}]" if out.doc_ids else text
    return rendered, used


# -- answers and synthesis -------------------------------------------------------------------


def answer_view(question: Question, params: MassParams, ctx: RunContext, item: tuple[str, str]) -> Answer:
    view, evidence = item
    text = prompt("mass_answer", view=view, evidence=evidence, question=question.render())
    reply = ctx.ask(messages(prompt("mass_system"), text), stage="candidate answers", agent="Answer Agent",
                    role=f"answerer ({view})", schema=answer_schema(question), max_tokens=params.max_tokens)
    return to_answer(reply.parsed, question)


def synthesis_schema(question: Question, views: list[str], order: AnswerFormat = "reasoning first") -> type[BaseModel]:
    followed = Literal[tuple(v.title() for v in views) + ("combined",)]
    return create_model("Synthesis", __base__=answer_schema(question, cite=True, order=order), followed_view=(followed, ...))


def synthesize(question: Question, views: dict[str, str], candidates: dict[str, Answer], used: set[str],
               params: MassParams, ctx: RunContext) -> Answer:
    """Reconcile the views (and their candidate answers, when the Answer Agent ran) into one answer."""
    lines = [f"- {v.title()} view: {a.choice or a.text} ({a.rationale})" for v, a in candidates.items()]
    text = prompt("mass_synthesize", views="\n\n".join(f"{v.title()} view:\n{t}" for v, t in views.items()),
                  candidates="\nCandidate answers:\n" + "\n".join(lines) + "\n" if lines else "",
                  question=question.render(), compared="views and candidate answers" if lines else "views")
    reply = ctx.ask(messages(prompt("mass_system"), text), stage="synthesis", agent="Synthesis Agent",
                    role="synthesizer", schema=synthesis_schema(question, list(views), params.answer_format),
                    max_tokens=params.max_tokens)
    followed = reply.parsed.followed_view
    note = "combined the views" if followed == "combined" else f"followed the {followed} view"
    if candidates:
        note += "; candidates: " + ", ".join(f"{v.title()} {a.choice or a.text[:40]}" for v, a in candidates.items())
    return to_answer(reply.parsed, question, valid_ids=used).model_copy(update={"note": note})


def run(question: Question, params: MassParams, ctx: RunContext) -> Answer:
    hits = ctx.retrieve(question.text, params.k, stage="retrieval", agent="Retriever")
    if not hits:
        raise RuntimeError("retrieval returned no documents for this question, so there is nothing to filter")
    reply_tokens = max(view_tokens(view, params) for view in params.views)
    budget = ctx.reading_chars(params.max_doc_chars, tokens_of(question.render()) + reply_tokens)
    documents, shown = read_docs(hits, budget)
    read = [h for h in hits if h.snippet_id in shown]
    outputs = ctx.parallel(partial(filter_view, question, documents, shown, len(hits), params, ctx), params.views)
    rendered, used = evidence_from_views(params.views, outputs, read, ctx)
    with_answers = params.answer_agent if params.answer_agent is not None else not question.is_multiple_choice
    candidates = ctx.parallel(partial(answer_view, question, params, ctx), rendered.items()) if with_answers else []
    return synthesize(question, rendered, dict(zip(rendered, candidates)), used, params, ctx)


SPEC = MethodSpec(
    name="mass", label="MASS-RAG",
    description="Summarizer, Extractor (verbatim spans, checked) and Reasoner read the same documents in parallel; "
                "a Synthesis Agent reconciles the views or their candidate answers.",
    params=MassParams, run=run,
    stages=(Stage("Retrieve k documents", "retrieve", ("retrieval",)),
            Stage("Summarizer · Extractor · Reasoner views", "judge", ("views",), many="in parallel"),
            Stage("Span check (verbatim?)", "judge", ("span check",)),
            Stage("Answer Agent per view (optional)", "answer", ("candidate answers",)),
            Stage("Synthesis Agent reconciles", "answer", ("synthesis",))),
)
