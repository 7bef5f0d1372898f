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

from core.engine.llm.profiles import Lengths
from core.engine.llm.tokens import tokens_of
from core.engine.methods import reader
from core.engine.methods.answer import DEFINITE_ANSWER, OWN_KNOWLEDGE, READER, ReaderLengths
from core.engine.methods.contract import MethodParams, MethodSpec, RunContext
from core.engine.methods.knobs import budget_knob, reading_knob
from core.engine.methods.reader import medrag_prompt, read_and_answer
from core.engine.question import Question
from core.engine.stages import RETRIEVAL, Stage, StageNames
from core.engine.trace import Answer


class Names(StageNames):
    RETRIEVAL = RETRIEVAL
    ANSWER = reader.ANSWER


@dataclass(frozen=True)
class MedRAGLengths:
    reader: ReaderLengths
    commit: str  # how the reader is told to commit to an answer the documents do not give


LENGTHS: dict[Lengths, MedRAGLengths] = {
    # Reasoning, the answer and up to 8 cited ids; a small model shown off-topic snippets is told to fall back on
    # what it knows, so it still commits.
    "compact": MedRAGLengths(READER["compact"], OWN_KNOWLEDGE),
    # The toolkit's reader: step by step, no max_tokens, "please have a definite answer" (Teddy-XiongGZ/MedRAG
    # src/template.py general_medrag_system, src/medrag.py MedRAG.generate).
    "paper": MedRAGLengths(READER["paper"], DEFINITE_ANSWER),
}


class MedRAGParams(MethodParams):
    k: int = Field(32, ge=1, le=128, description="snippets retrieved (hybrid BM25 + dense)")
    max_doc_chars: int | None = reading_knob("the reader")
    max_tokens: int | None = budget_knob(
        "the reasoning and answer", LENGTHS["compact"].reader.tokens, LENGTHS["paper"].reader.tokens, least=32
    )
    query: Literal["question", "question and options"] = Field(
        "question",
        description="what is searched for: the question alone (the toolkit's), or with its options "
        "(recall@5 of the teaching pack's key passages 0.69 → 0.87 on the default corpus)",
    )


def run(question: Question, params: MedRAGParams, ctx: RunContext) -> Answer:
    lengths = LENGTHS[ctx.llm.lengths]
    max_tokens = params.max_tokens or lengths.reader.tokens
    query = question.text if params.query == "question" else question.render()
    hits = ctx.retrieve(query, params.k, stage=Names.RETRIEVAL, agent="Retriever")
    budget = ctx.reading_chars(params.max_doc_chars, tokens_of(question.render()) + max_tokens)
    return read_and_answer(
        question,
        hits,
        ctx,
        write=medrag_prompt(question, lengths.reader, lengths.commit),
        budget=budget,
        reader=lengths.reader,
        order=params.answer_format,
        max_tokens=max_tokens,
    )


SPEC = MethodSpec(
    name="medrag",
    label="MedRAG",
    description="Retrieval baseline: hybrid search for k=32 snippets, answer from the numbered documents with citations.",
    params=MedRAGParams,
    run=run,
    stages=(
        Stage("Retrieve k snippets (BM25 + dense)", "retrieve", (Names.RETRIEVAL,)),
        Stage("Reader answers, citing documents", "answer", (Names.ANSWER,)),
    ),
    stage_names=Names,
)
