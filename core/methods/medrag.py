"""MedRAG (Xiong et al., 2024): retrieve k snippets by hybrid search, show them as numbered documents
within a character budget, answer citing the documents used.

The authors fill the model's context with as many of the k=32 snippets as fit; here the budget is
``max_doc_chars``. 6,000 characters (~1,500 tokens) keeps a call to about half a minute of prompt
reading on the embedded model and leaves most of its 8k-token slot for a long question (up to ~1.5k
tokens) and the reply; a larger endpoint can raise it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from core.methods.base import MethodParams, MethodSpec, RunContext, answer_schema, format_docs, messages, prompt, to_answer
from core.question import Question
from core.stages import Stage
from core.trace import Answer, Hit

NO_DOCUMENTS = "(no documents were found)"


class MedRAGParams(MethodParams):
    k: int = Field(32, ge=1, le=128, description="snippets retrieved (hybrid BM25 + dense)")
    max_doc_chars: int = Field(6000, ge=500, le=60000, description="character budget for the documents shown")
    max_tokens: int = Field(320, ge=32, le=4096, description="budget for the reasoning and answer")
    query: Literal["question", "question and options"] = Field(
        "question", description="what is searched for: the question alone (the toolkit's), or with its options "
                                "(recall@5 of the teaching pack's key passages 0.49 → 0.74 on the default corpus)")


def read_docs(hits: list[Hit], max_chars: int) -> tuple[str, list[str]]:
    """The documents as the model reads them, and the ids of those that fit the budget."""
    text = format_docs(hits, max_chars)
    shown = [h.snippet_id for h in hits if f"[{h.snippet_id}]" in text]
    return text or NO_DOCUMENTS, shown


def run(question: Question, params: MedRAGParams, ctx: RunContext) -> Answer:
    query = question.text if params.query == "question" else question.render()
    hits = ctx.retrieve(query, params.k, stage="retrieval", agent="Retriever")
    documents, shown = read_docs(hits, params.max_doc_chars)
    reply = ctx.ask(
        messages(prompt("medrag_system"), prompt("medrag_user", documents=documents, question=question.render())),
        stage="answer", agent="Reader", role="reader",
        schema=answer_schema(question, cite=True, order=params.answer_format), max_tokens=params.max_tokens,
    )
    return to_answer(reply.parsed, question, valid_ids=shown)


SPEC = MethodSpec(
    name="medrag", label="MedRAG",
    description="Retrieval baseline: hybrid search for k=32 snippets, answer from the numbered documents with citations.",
    params=MedRAGParams, run=run,
    stages=(Stage("Retrieve k snippets (BM25 + dense)", "retrieve", ("retrieval",)),
            Stage("Reader answers, citing documents", "answer", ("answer",))),
)
