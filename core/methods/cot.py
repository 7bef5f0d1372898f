"""Chain-of-thought: the no-retrieval baseline every paper reports. Think step by step, then answer."""

from __future__ import annotations

from pydantic import Field

from core.methods.base import MethodParams, MethodSpec, RunContext, answer_schema, messages, prompt, to_answer
from core.question import Question
from core.stages import Stage
from core.trace import Answer


class CoTParams(MethodParams):
    max_tokens: int = Field(256, ge=32, le=4096, description="budget for the reasoning and answer")


def run(question: Question, params: CoTParams, ctx: RunContext) -> Answer:
    reply = ctx.ask(
        messages(prompt("cot_system"), prompt("cot_user", question=question.render())),
        stage="reasoning", agent="Clinician", role="reasoner",
        schema=answer_schema(question, order=params.answer_format), max_tokens=params.max_tokens,
    )
    return to_answer(reply.parsed, question)


SPEC = MethodSpec(
    name="cot", label="CoT", description="Chain-of-thought baseline: reasons step by step with no retrieval.",
    params=CoTParams, run=run, uses_retrieval=False,
    stages=(Stage("Clinician reasons step by step and answers", "answer", ("reasoning",)),),
)
