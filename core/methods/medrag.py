"""MedRAG (Xiong et al., 2024): retrieve k snippets by hybrid search, show them as numbered documents
within a character budget, answer citing the documents used.

The authors fill the model's context with as many of the k=32 snippets as fit; so does this reader, within
the backend's context window (an endpoint's setting), and on the embedded model within what two CPU cores read
in under a minute (6,000 characters, ``ServerConfig.read_tokens``); ``max_doc_chars`` caps it further.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from core.methods.base import (MethodParams, MethodSpec, RunContext, answer_schema, messages, prompt, read_docs,
    reading_knob, to_answer, tokens_of)
from core.question import Question
from core.stages import Stage
from core.trace import Answer


class MedRAGParams(MethodParams):
    k: int = Field(32, ge=1, le=128, description="snippets retrieved (hybrid BM25 + dense)")
    max_doc_chars: int | None = reading_knob("the reader")
    max_tokens: int = Field(320, ge=32, le=4096, description="budget for the reasoning and answer")
    query: Literal["question", "question and options"] = Field(
        "question", description="what is searched for: the question alone (the toolkit's), or with its options "
                                "(recall@5 of the teaching pack's key passages 0.69 → 0.85 on the default corpus)")


def run(question: Question, params: MedRAGParams, ctx: RunContext) -> Answer:
    query = question.text if params.query == "question" else question.render()
    hits = ctx.retrieve(query, params.k, stage="retrieval", agent="Retriever")
    budget = ctx.reading_chars(params.max_doc_chars, tokens_of(question.render()) + params.max_tokens)
    documents, shown = read_docs(hits, budget)
    reply = ctx.ask(
        messages(prompt("medrag_system"), prompt("medrag_user", documents=documents, question=question.render())),
        stage="answer", agent="Reader", role="reader",
        schema=answer_schema(question, cite=True, order=params.answer_format), max_tokens=params.max_tokens,
        read=shown, offered=len(hits),
    )
    return to_answer(reply.parsed, question, valid_ids=shown)


SPEC = MethodSpec(
    name="medrag", label="MedRAG",
    description="Retrieval baseline: hybrid search for k=32 snippets, answer from the numbered documents with citations.",
    params=MedRAGParams, run=run,
    stages=(Stage("Retrieve k snippets (BM25 + dense)", "retrieve", ("retrieval",)),
            Stage("Reader answers, citing documents", "answer", ("answer",))),
)
