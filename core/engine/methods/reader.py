"""The final reader: what every method that reads documents and answers ends with. It reads the documents within a
character budget, answers with its reasoning as long as the backend's lengths allow, cites the documents it used
(only ids it was shown count) and records which it read.

Its prompt is MedRAG's (the toolkit's answer prompt, which Discuss-RAG's and MedRGAG's readers reuse): the system
message of MedRAG itself, or the standing instructions after the user text where a method keeps its own system
prompt, so the reader continues the prefix the method's other agents read. SEMA-RAG without its Arbiter writes its
own (``Prompt``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from core.engine.llm.answer_formats import AnswerFormat
from core.engine.methods.answer import ReaderLengths, answer_schema, to_answer
from core.engine.methods.contract import RunContext
from core.engine.methods.documents import read_docs
from core.engine.methods.templates import messages, prompt
from core.engine.question import Question
from core.engine.trace import Answer, Hit

ANSWER = "answer"  # the reader's stage, in every method that ends with it
Prompt = Callable[[str], list[dict[str, str]]]  # the documents as the reader reads them -> the messages


def medrag_prompt(question: Question, reader: ReaderLengths, commit: str, system: str | None = None) -> Prompt:
    """MedRAG's reader prompt, told to commit to an answer as ``commit`` says; after ``system``, when a method keeps
    its own."""
    words = reader.words()
    instructions = prompt("medrag_system", commit=commit, **words)

    def write(documents: str) -> list[dict[str, str]]:
        user = prompt("medrag_user", documents=documents, question=question.render(), **words)
        return messages(instructions, user) if system is None else messages(system, user, instructions)

    return write


def read_and_answer(
    question: Question,
    hits: list[Hit],
    ctx: RunContext,
    *,
    write: Prompt,
    budget: int,
    reader: ReaderLengths,
    order: AnswerFormat | None,
    max_tokens: int,
    temperature: float = 0.0,
    seed: int | None = None,
    note: str = "",
    real_ids: Mapping[str, str] | None = None,
) -> Answer:
    """Answer from ``hits`` within ``budget`` characters, in the reply ``order`` names. ``real_ids`` maps the ids the
    reader sees documents under to their own, for the trace."""
    documents, shown = read_docs(hits, budget)
    reply = ctx.ask(
        write(documents),
        stage=ANSWER,
        agent="Reader",
        role="reader",
        schema=answer_schema(question, cite=True, order=order, reader=reader),
        temperature=temperature,
        seed=seed,
        max_tokens=max_tokens,
        read=[(real_ids or {}).get(i, i) for i in shown],
        offered=len(hits),
    )
    return to_answer(reply.parsed, question, valid_ids=shown).model_copy(update={"note": note})
