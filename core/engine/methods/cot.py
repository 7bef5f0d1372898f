"""Chain-of-thought: the no-retrieval baseline every paper reports. Think step by step, then answer."""

from __future__ import annotations

from dataclasses import dataclass, replace

from core.engine.llm.answer_formats import AnswerFormat
from core.engine.llm.profiles import Lengths
from core.engine.methods.answer import READER, ReaderLengths, answer_schema, to_answer
from core.engine.methods.contract import MethodParams, MethodSpec, RunContext
from core.engine.methods.knobs import budget_knob
from core.engine.methods.templates import messages, prompt
from core.engine.question import Question
from core.engine.stages import Stage, StageNames
from core.engine.trace import Answer


class Names(StageNames):
    REASONING = "reasoning"


@dataclass(frozen=True)
class CoTLengths:
    reader: ReaderLengths  # the reasoning and the answer


LENGTHS: dict[Lengths, CoTLengths] = {
    # The 600-character reasoning and the answer fit in 256 tokens (no citations); more only lets a runaway reply
    # run on.
    "compact": CoTLengths(replace(READER["compact"], tokens=256)),
    # The toolkit sends no max_tokens (Teddy-XiongGZ/MedRAG src/medrag.py MedRAG.generate).
    "paper": CoTLengths(READER["paper"]),
}


class CoTParams(MethodParams):
    max_tokens: int | None = budget_knob(
        "the reasoning and answer", LENGTHS["compact"].reader.tokens, LENGTHS["paper"].reader.tokens, least=32
    )


def cot_messages(question: Question, reader: ReaderLengths) -> list[dict[str, str]]:
    return messages(
        prompt("cot_system", **reader.words()), prompt("cot_user", question=question.render(), **reader.words())
    )


def reason(
    question: Question,
    ctx: RunContext,
    *,
    stage: str,
    reader: ReaderLengths,
    order: AnswerFormat | None,
    max_tokens: int | None,
    temperature: float = 0.0,
    seed: int | None = None,
) -> Answer:
    """The chain of thought: CoT's run, and Discuss-RAG's fallback when its decision-maker rejects the snippets.
    ``max_tokens`` empty: the reader's own budget."""
    reply = ctx.ask(
        cot_messages(question, reader),
        stage=stage,
        agent="Clinician",
        role="reasoner",
        schema=answer_schema(question, order=order, reader=reader),
        max_tokens=max_tokens or reader.tokens,
        temperature=temperature,
        seed=seed,
    )
    return to_answer(reply.parsed, question)


def run(question: Question, params: CoTParams, ctx: RunContext) -> Answer:
    reader = LENGTHS[ctx.llm.lengths].reader
    return reason(
        question, ctx, stage=Names.REASONING, reader=reader, order=params.answer_format, max_tokens=params.max_tokens
    )


SPEC = MethodSpec(
    name="cot",
    label="CoT",
    description="Chain-of-thought baseline: reasons step by step with no retrieval.",
    params=CoTParams,
    run=run,
    uses_retrieval=False,
    stages=(Stage("Clinician reasons step by step and answers", "answer", (Names.REASONING,)),),
    stage_names=Names,
)
