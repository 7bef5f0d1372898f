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

from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model, field_validator

from core.engine.llm.answer_formats import AnswerFormat
from core.engine.llm.profiles import Lengths
from core.engine.llm.tokens import tokens_of
from core.engine.methods.answer import PAPER_REPLY_TOKENS, READER, ReaderLengths, answer_schema, to_answer
from core.engine.methods.contract import MethodParams, MethodSpec, RunContext
from core.engine.methods.documents import read_docs
from core.engine.methods.knobs import budget_knob, reading_knob
from core.engine.methods.quotes import quote_of, verbatim_in
from core.engine.methods.schemas import bounded
from core.engine.methods.templates import at_most, briefly, messages, prompt
from core.engine.question import Question
from core.engine.stages import RETRIEVAL, Stage, StageNames
from core.engine.trace import Answer, Hit, Verdict, VerdictItem


class Names(StageNames):
    RETRIEVAL = RETRIEVAL
    VIEWS = "views"
    SPAN_CHECK = "span check"
    CANDIDATE_ANSWERS = "candidate answers"
    SYNTHESIS = "synthesis"


View = Literal["summarizer", "extractor", "reasoner"]
VIEWS: tuple[str, ...] = ("summarizer", "extractor", "reasoner")
SPAN_TOKENS = 90  # one of the Extractor's spans: its document id and up to 200 characters copied


@dataclass(frozen=True)
class MassLengths:
    """What each agent writes: sentences a view is asked for, characters the grammar allows (None: no bound), the
    Extractor's spans, and the tokens each call may take. The defaults are the paper's (the paper lengths)."""

    reader: ReaderLengths = READER["paper"]  # the Answer and Synthesis Agents
    brief: bool = False  # the system prompt tells every agent to be brief
    view_sentences: int | None = None  # the Summarizer's summary, the Reasoner's inference
    view_chars: int | None = None
    view_tokens: int = PAPER_REPLY_TOKENS
    spans: int | None = None  # the Extractor: most spans (None: as many as it finds), each at most ``span_chars``
    span_chars: int | None = None
    extract_tokens: int = PAPER_REPLY_TOKENS  # plus ``SPAN_TOKENS`` per span


LENGTHS: dict[Lengths, MassLengths] = {
    # Every text bounded in the grammar; the budgets fit the longest reply the schemas allow (a reply cut off by its
    # budget does not parse).
    "compact": MassLengths(
        READER["compact"],
        brief=True,
        view_sentences=4,
        view_chars=500,
        view_tokens=300,
        spans=4,
        span_chars=200,
        extract_tokens=20,
    ),
    # The paper (arXiv 2604.18509) bounds no agent's reply and tells none to be brief: views compress, copy or infer
    # from the documents as they need.
    "paper": MassLengths(),
}


class MassParams(MethodParams):
    # The paper does not fix k; five documents keep three concurrent reads short on the embedded model.
    k: int = Field(5, ge=1, le=32, description="documents retrieved once and read by every view")
    views: list[View] = Field(
        default_factory=lambda: list(VIEWS),
        min_length=1,
        description="filtering agents, run concurrently; a single one is the paper's ablation",
    )
    answer_agent: bool | None = Field(
        None,
        description="an Answer Agent per view before synthesis; None = on for open questions, off for multiple choice",
    )
    n_spans: int | None = Field(
        None,
        ge=1,
        le=12,
        description="most verbatim spans the Extractor copies; empty = the "
        f"backend's ({LENGTHS['compact'].spans} on the embedded model, as many as it finds "
        "on an endpoint)",
    )
    max_doc_chars: int | None = reading_knob("each view")
    max_tokens: int | None = budget_knob(
        "each answer and the synthesis", LENGTHS["compact"].reader.tokens, LENGTHS["paper"].reader.tokens
    )

    @field_validator("views")
    @classmethod
    def _distinct(cls, value: list[str]) -> list[str]:
        return list(dict.fromkeys(value))


# What a view holds when its length is not bounded in sentences.
UNBOUNDED_VIEW = {
    "summary": "what the documents say that bears on the question",
    "inference": "what follows from combining the documents",
}


def view_schema(view: str, ids: list[str], n_spans: int | None, lengths: MassLengths) -> type[BaseModel]:
    doc_id: Any = Literal[tuple(ids)] if ids else str  # an enum of the ids the view was shown
    doc_ids = (
        list[doc_id],
        Field(default_factory=list, max_length=max(len(ids), 1), description="ids of the documents used"),
    )
    if view == "extractor":
        span = create_model(
            "Span", doc_id=(doc_id, ...), text=(str, bounded(lengths.span_chars, "copied word for word"))
        )
        return create_model("ExtractorView", spans=(list[span], Field(max_length=n_spans)))
    field = "summary" if view == "summarizer" else "inference"
    said = at_most(lengths.view_sentences) if lengths.view_sentences else UNBOUNDED_VIEW[field]
    return create_model(f"{view.title()}View", **{field: (str, bounded(lengths.view_chars, said)), "doc_ids": doc_ids})


# -- the three views -----------------------------------------------------------------------


def system_prompt(lengths: MassLengths) -> str:
    """What every agent reads first."""
    return prompt("mass_system", brief=briefly(lengths.brief))


def spans(params: MassParams, lengths: MassLengths) -> int | None:
    """Most spans the Extractor copies: the knob's, else the backend's (None: as many as it finds)."""
    return params.n_spans or lengths.spans


def view_tokens(view: str, params: MassParams, lengths: MassLengths) -> int:
    if view == "extractor":
        return lengths.extract_tokens + SPAN_TOKENS * (spans(params, lengths) or 0)
    return lengths.view_tokens


def view_prompt(view: str, documents: str, question: Question, params: MassParams, lengths: MassLengths) -> str:
    n, sentences = spans(params, lengths), lengths.view_sentences
    return prompt(
        f"mass_{view}",
        documents=documents,
        question=question.render(),
        spans=f"up to {n} short spans" if n else "the short spans",
        length=f" of {at_most(sentences)}" if sentences else "",
        infer=f"In {at_most(sentences)}, infer" if sentences else "Infer",
    )


def filter_view(
    question: Question,
    documents: str,
    shown: list[str],
    offered: int,
    params: MassParams,
    lengths: MassLengths,
    ctx: RunContext,
    view: str,
) -> BaseModel:
    text = view_prompt(view, documents, question, params, lengths)
    return ctx.ask(
        messages(system_prompt(lengths), text),
        stage=Names.VIEWS,
        agent=view.title(),
        role=view,
        schema=view_schema(view, shown, spans(params, lengths), lengths),
        max_tokens=view_tokens(view, params, lengths),
        read=shown,
        offered=offered,
    ).parsed


def check_spans(spans: list[Any], hits: list[Hit], ctx: RunContext) -> list[tuple[str, str]]:
    """Keep the Extractor's spans that occur word for word in a document (``quotes``: ignoring case and spacing);
    flag the others in the trace, each quoted in full (a shortened quote would hide the words that failed)."""
    texts = {h.snippet_id: f"{h.title}\n{h.text}" for h in hits}
    kept, items = [], []
    for span in spans:
        quote = quote_of(span.text)
        short = quote if len(quote) <= 80 else quote[:79] + "…"
        found = [i for i, t in texts.items() if verbatim_in(quote, t)]
        if span.doc_id in found:
            kept.append((span.doc_id, quote))
            items.append(VerdictItem(doc_id=span.doc_id, keep=True, reason=f'"{short}" verbatim in {span.doc_id}'))
        elif found:  # verbatim, but from another document than the one named
            kept.append((found[0], quote))
            items.append(
                VerdictItem(
                    doc_id=found[0],
                    keep=True,
                    reason=f'"{short}" verbatim in {found[0]}, not in {span.doc_id} as named',
                )
            )
        else:
            items.append(VerdictItem(doc_id=span.doc_id, keep=False, reason=f'"{quote}" not verbatim in {span.doc_id}'))
    ctx.emit(
        Names.SPAN_CHECK, "Extractor", Verdict(items=items, reason=f"{len(kept)} of {len(spans)} spans are verbatim")
    )
    return kept


def evidence_from_views(
    views: list[str], outputs: list[BaseModel], hits: list[Hit], ctx: RunContext
) -> tuple[dict[str, str], dict[str, list[str]]]:
    """Each view as the next agents read it (the Extractor's spans checked on the way), and the ids each rests on."""
    rendered, behind = {}, {}
    for view, out in zip(views, outputs):
        if view == "extractor":
            spans = check_spans(out.spans, hits, ctx)
            behind[view] = list(dict.fromkeys(doc_id for doc_id, _ in spans))
            rendered[view] = "\n".join(f'- [{doc_id}] "{quote}"' for doc_id, quote in spans) or "(no verbatim evidence)"
        else:
            text = (out.summary if view == "summarizer" else out.inference).strip() or "(nothing found)"
            behind[view] = list(dict.fromkeys(out.doc_ids))
            rendered[view] = f"{text} [{', '.join(out.doc_ids)}]" if out.doc_ids else text
    return rendered, behind


def followed_ids(followed: str, behind: dict[str, list[str]]) -> list[str]:
    """The documents behind the view the Synthesis Agent followed; every view's, in view order, when it combined
    them. The paper's answer rests on the views it reconciles, so an answer that names no document cites these."""
    views = [followed.lower()] if followed.lower() in behind else list(behind)
    return list(dict.fromkeys(i for view in views for i in behind[view]))


# -- answers and synthesis -------------------------------------------------------------------


def answer_view(
    question: Question, params: MassParams, lengths: MassLengths, ctx: RunContext, item: tuple[str, str]
) -> Answer:
    view, evidence = item
    text = prompt("mass_answer", view=view, evidence=evidence, question=question.render(), **lengths.reader.words())
    reply = ctx.ask(
        messages(system_prompt(lengths), text),
        stage=Names.CANDIDATE_ANSWERS,
        agent="Answer Agent",
        role=f"answerer ({view})",
        schema=answer_schema(question, reader=lengths.reader),
        max_tokens=params.max_tokens or lengths.reader.tokens,
    )
    return to_answer(reply.parsed, question)


def synthesis_schema(
    question: Question, views: list[str], order: AnswerFormat, reader: ReaderLengths
) -> type[BaseModel]:
    followed = Literal[tuple(v.title() for v in views) + ("combined",)]
    return create_model(
        "Synthesis",
        __base__=answer_schema(question, cite=True, order=order, reader=reader),
        followed_view=(followed, ...),
    )


def synthesize(
    question: Question,
    views: dict[str, str],
    candidates: dict[str, Answer],
    behind: dict[str, list[str]],
    params: MassParams,
    lengths: MassLengths,
    ctx: RunContext,
) -> Answer:
    """Reconcile the views (and their candidate answers, when the Answer Agent ran) into one answer."""
    lines = [f"- {v.title()} view: {a.choice or a.text} ({a.rationale})" for v, a in candidates.items()]
    text = prompt(
        "mass_synthesize",
        views="\n\n".join(f"{v.title()} view:\n{t}" for v, t in views.items()),
        candidates="\nCandidate answers:\n" + "\n".join(lines) + "\n" if lines else "",
        question=question.render(),
        compared="views and candidate answers" if lines else "views",
        **lengths.reader.words(),
    )
    reply = ctx.ask(
        messages(system_prompt(lengths), text),
        stage=Names.SYNTHESIS,
        agent="Synthesis Agent",
        role="synthesizer",
        schema=synthesis_schema(question, list(views), params.answer_format, lengths.reader),
        max_tokens=params.max_tokens or lengths.reader.tokens,
    )
    followed = reply.parsed.followed_view
    note = "combined the views" if followed == "combined" else f"followed the {followed} view"
    if candidates:
        note += "; candidates: " + ", ".join(f"{v.title()} {a.choice or a.text[:40]}" for v, a in candidates.items())
    answer = to_answer(reply.parsed, question, valid_ids={i for ids in behind.values() for i in ids})
    if not answer.cited:  # it named none of the views' documents: its answer rests on the views it followed
        cited = followed_ids(followed, behind)
        note += "; it named no document, so the answer cites those of the views it followed" if cited else ""
        answer = answer.model_copy(update={"cited": cited})
    return answer.model_copy(update={"note": note})


def run(question: Question, params: MassParams, ctx: RunContext) -> Answer:
    lengths = LENGTHS[ctx.llm.lengths]
    hits = ctx.retrieve(question.text, params.k, stage=Names.RETRIEVAL, agent="Retriever")
    if not hits:
        raise RuntimeError("retrieval returned no documents for this question, so there is nothing to filter")
    reply_tokens = max(view_tokens(view, params, lengths) for view in params.views)
    budget = ctx.reading_chars(params.max_doc_chars, tokens_of(question.render()) + reply_tokens)
    documents, shown = read_docs(hits, budget)
    read = [h for h in hits if h.snippet_id in shown]
    outputs = ctx.parallel(
        partial(filter_view, question, documents, shown, len(hits), params, lengths, ctx), params.views
    )
    rendered, behind = evidence_from_views(params.views, outputs, read, ctx)
    with_answers = params.answer_agent if params.answer_agent is not None else not question.is_multiple_choice
    candidates = (
        ctx.parallel(partial(answer_view, question, params, lengths, ctx), rendered.items()) if with_answers else []
    )
    return synthesize(question, rendered, dict(zip(rendered, candidates)), behind, params, lengths, ctx)


SPEC = MethodSpec(
    name="mass",
    label="MASS-RAG",
    description="Summarizer, Extractor (verbatim spans, checked) and Reasoner read the same documents in parallel; "
    "a Synthesis Agent reconciles the views or their candidate answers.",
    params=MassParams,
    run=run,
    stages=(
        Stage("Retrieve k documents", "retrieve", (Names.RETRIEVAL,)),
        Stage("Summarizer · Extractor · Reasoner views", "judge", (Names.VIEWS,), many="in parallel"),
        Stage("Span check (verbatim?)", "judge", (Names.SPAN_CHECK,)),
        Stage("Answer Agent per view (optional)", "answer", (Names.CANDIDATE_ANSWERS,)),
        Stage("Synthesis Agent reconciles", "answer", (Names.SYNTHESIS,)),
    ),
    stage_names=Names,
)
