"""Chain-of-thought: the no-retrieval baseline every paper reports. Think step by step, then answer."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import Field

from core.llm.profiles import Lengths
from core.methods.base import (PAPER_REPLY_TOKENS, READER, MethodParams, MethodSpec, ReaderLengths, RunContext,
    answer_schema, messages, prompt, to_answer)
from core.question import Question
from core.stages import Stage
from core.trace import Answer

@dataclass(frozen=True)
class CoTLengths:
    reader: ReaderLengths
    max_tokens: int  # the reasoning and the answer


LENGTHS: dict[Lengths, CoTLengths] = {
    # The 600-character reasoning and the answer fit; more only lets a runaway reply run on.
    "compact": CoTLengths(READER["compact"], 256),
    # The toolkit sends no max_tokens (Teddy-XiongGZ/MedRAG src/medrag.py MedRAG.generate).
    "paper": CoTLengths(READER["paper"], PAPER_REPLY_TOKENS),
}


class CoTParams(MethodParams):
    max_tokens: int | None = Field(None, ge=32, le=4096, description="budget for the reasoning and answer; empty = "
                                   f"the backend's ({LENGTHS['compact'].max_tokens} on the embedded model, "
                                   f"{LENGTHS['paper'].max_tokens:,} on an endpoint)")


def cot_messages(question: Question, reader: ReaderLengths) -> list[dict[str, str]]:
    """The CoT prompt (also Discuss-RAG's fallback when its decision-maker rejects the snippets)."""
    return messages(prompt("cot_system", **reader.words()), prompt("cot_user", question=question.render(),
                                                                   **reader.words()))


def run(question: Question, params: CoTParams, ctx: RunContext) -> Answer:
    lengths = LENGTHS[ctx.llm.lengths]
    reply = ctx.ask(
        cot_messages(question, lengths.reader), stage="reasoning", agent="Clinician", role="reasoner",
        schema=answer_schema(question, order=params.answer_format, reader=lengths.reader),
        max_tokens=params.max_tokens or lengths.max_tokens,
    )
    return to_answer(reply.parsed, question)


SPEC = MethodSpec(
    name="cot", label="CoT", description="Chain-of-thought baseline: reasons step by step with no retrieval.",
    params=CoTParams, run=run, uses_retrieval=False,
    stages=(Stage("Clinician reasons step by step and answers", "answer", ("reasoning",)),),
)
