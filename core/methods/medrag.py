"""MedRAG (Xiong et al., 2024): retrieve k snippets by hybrid search, show them as numbered documents
within a character budget, answer citing the documents used.

The authors fill the model's context with as many of the k=32 snippets as fit; so does this reader, within
the backend's context window (an endpoint's setting), and on the embedded model within what two CPU cores read
in under a minute (6,000 characters, ``ServerConfig.read_tokens``); ``max_doc_chars`` caps it further.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from core.llm.profiles import Lengths
from core.methods.base import (DEFINITE_ANSWER, OWN_KNOWLEDGE, PAPER_REPLY_TOKENS, READER, MethodParams, MethodSpec,
    ReaderLengths, RunContext, answer_schema, messages, prompt, read_docs, reading_knob, to_answer, tokens_of)
from core.question import Question
from core.stages import Stage
from core.trace import Answer


@dataclass(frozen=True)
class MedRAGLengths:
    reader: ReaderLengths
    max_tokens: int  # the reply's budget
    commit: str  # how the reader is told to commit to an answer the documents do not give


LENGTHS: dict[Lengths, MedRAGLengths] = {
    # Reasoning, the answer and up to 8 cited ids; a small model shown off-topic snippets is told to fall back on
    # what it knows, so it still commits.
    "compact": MedRAGLengths(READER["compact"], 320, OWN_KNOWLEDGE),
    # The toolkit's reader: step by step, no max_tokens, "please have a definite answer" (Teddy-XiongGZ/MedRAG
    # src/template.py general_medrag_system, src/medrag.py MedRAG.generate).
    "paper": MedRAGLengths(READER["paper"], PAPER_REPLY_TOKENS, DEFINITE_ANSWER),
}


class MedRAGParams(MethodParams):
    k: int = Field(32, ge=1, le=128, description="snippets retrieved (hybrid BM25 + dense)")
    max_doc_chars: int | None = reading_knob("the reader")
    max_tokens: int | None = Field(None, ge=32, le=4096, description="budget for the reasoning and answer; empty = "
                                   f"the backend's ({LENGTHS['compact'].max_tokens} on the embedded model, "
                                   f"{LENGTHS['paper'].max_tokens:,} on an endpoint)")
    query: Literal["question", "question and options"] = Field(
        "question", description="what is searched for: the question alone (the toolkit's), or with its options "
                                "(recall@5 of the teaching pack's key passages 0.69 → 0.87 on the default corpus)")


def run(question: Question, params: MedRAGParams, ctx: RunContext) -> Answer:
    lengths = LENGTHS[ctx.llm.lengths]
    max_tokens = params.max_tokens or lengths.max_tokens
    query = question.text if params.query == "question" else question.render()
    hits = ctx.retrieve(query, params.k, stage="retrieval", agent="Retriever")
    budget = ctx.reading_chars(params.max_doc_chars, tokens_of(question.render()) + max_tokens)
    documents, shown = read_docs(hits, budget)
    words = lengths.reader.words()
    reply = ctx.ask(
        messages(prompt("medrag_system", commit=lengths.commit, **words),
                 prompt("medrag_user", documents=documents, question=question.render(), **words)),
        stage="answer", agent="Reader", role="reader",
        schema=answer_schema(question, cite=True, order=params.answer_format, reader=lengths.reader),
        max_tokens=max_tokens, read=shown, offered=len(hits),
    )
    return to_answer(reply.parsed, question, valid_ids=shown)


SPEC = MethodSpec(
    name="medrag", label="MedRAG",
    description="Retrieval baseline: hybrid search for k=32 snippets, answer from the numbered documents with citations.",
    params=MedRAGParams, run=run,
    stages=(Stage("Retrieve k snippets (BM25 + dense)", "retrieve", ("retrieval",)),
            Stage("Reader answers, citing documents", "answer", ("answer",))),
)
