"""The final reader's reply: how long it reasons on each backend's lengths (``READER``), its schema (the answer an
enum of the option letters, the fields in the answer format's order) and the ``Answer`` event it becomes."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from core.engine.llm.answer_formats import AnswerFormat
from core.engine.llm.profiles import Lengths
from core.engine.methods.schemas import bounded
from core.engine.methods.templates import in_at_most
from core.engine.question import Question
from core.engine.trace import Answer

MAX_CITED = 8
REASONING_CHARS = 600  # a final reply's reasoning on the compact lengths, as the grammar bounds it: about 130 tokens

# What an endpoint may write where the authors set no limit (their OpenAI calls send no max_tokens): the room the
# MedRAG toolkit leaves beside the documents for the rest of the prompt and the reply, 8,192 - 7,168 tokens for
# Llama-3-8B (Teddy-XiongGZ/MedRAG src/medrag.py, MedRAG.__init__: max_length - context_length).
PAPER_REPLY_TOKENS = 1024


@dataclass(frozen=True)
class ReaderLengths:
    """How long a final reader reasons: the grammar's bound, the sentences its prompts ask for, and how its schema
    and system prompts describe the reasoning field (None and empty: step by step, with no bound); and the tokens its
    reply may take."""

    reasoning_chars: int | None
    sentences: int | None
    described: str
    cited: int | None = None  # most document ids it cites, each at most ``id_chars`` (None: no bound)
    id_chars: int | None = None
    tokens: int = PAPER_REPLY_TOKENS

    def words(self) -> dict[str, str]:
        """The reader prompts' placeholders: $within (after "Think step by step"), $shape (after "reasoning" in a
        system prompt's reply format) and $briefly (CoT's system prompt)."""
        return {
            "within": in_at_most(self.sentences),
            "shape": f" ({self.described})" if self.described else "",
            "briefly": ", briefly" if self.sentences else "",
        }


READER: dict[Lengths, ReaderLengths] = {
    # A small model's long free-text reasoning ran past its budget or never reached an answer; its citations are
    # bounded too, so it cannot loop on ids until the token budget cuts the JSON off. 320 tokens fit the longest
    # reply this allows: the reasoning, the answer and the cited ids.
    "compact": ReaderLengths(REASONING_CHARS, 3, "two or three short sentences", MAX_CITED, 80, tokens=320),
    # Every paper's reader thinks step by step with no bound (the MedRAG toolkit's JSON "step_by_step_thinking",
    # Teddy-XiongGZ/MedRAG src/template.py general_cot_system; Discuss-RAG's and MedRGAG's readers alike).
    "paper": ReaderLengths(None, None, ""),
}


# How a reader is told to commit to an answer the documents do not give: the MedRAG toolkit's words
# (Teddy-XiongGZ/MedRAG src/template.py general_medrag_system; LLM-VLM-GSL/Discuss-RAG src/template_discuss.py
# discuss_rag_system), MedRGAG's, which add its fallback on what the model knows (ll0ruc/MedRGAG src/template.py
# rag_template), or the project's for the embedded model.
DEFINITE_ANSWER = "Your responses will be used for research purposes only, so please have a definite answer."
RAG_TEMPLATE = (
    f"{DEFINITE_ANSWER} If the documents do not contain sufficient or relevant information to answer the question, "
    "rely on your own medical knowledge."
)
OWN_KNOWLEDGE = "Where the documents do not help, rely on your own knowledge."


def answer_schema(
    question: Question,
    cite: bool = False,
    order: AnswerFormat | None = "reasoning first",
    reader: ReaderLengths = READER["compact"],
) -> type[BaseModel]:
    """A reply schema whose answer field is an enum of the option letters when there are options, so a
    grammar-constrained server cannot answer anything else; its fields in the order ``order`` names (a
    grammar-constrained reply is written in field order). Reasoning as long as ``reader`` allows."""
    if order is None:
        raise ValueError("the answer format is automatic until the runner resolves it for the backend")
    answer_type: Any = Literal[tuple(question.options)] if question.options else str
    reasoning = (
        str,
        bounded(
            reader.reasoning_chars,
            f"{reader.described} (at most {reader.reasoning_chars} characters)"
            if reader.reasoning_chars
            else "step by step",
        ),
    )
    fields: dict[str, Any] = {"answer": (answer_type, ...)}
    if order == "reasoning first":
        fields = {"reasoning": reasoning, **fields}
    elif order == "answer first":
        fields["reasoning"] = reasoning
    if cite:
        # Bounded in the grammar only, as the reasoning is: a longer list from another backend still parses.
        bound = (
            {"maxItems": reader.cited, "items": {"type": "string", "maxLength": reader.id_chars}}
            if reader.cited
            else None
        )
        fields["cited_ids"] = (
            list[str],
            Field(
                default_factory=list,
                description="ids of the documents used" + (f" (at most {reader.cited})" if reader.cited else ""),
                json_schema_extra=bound,
            ),
        )
    return create_model("FinalAnswer", **fields)


def reply_format(schema: type[BaseModel]) -> AnswerFormat:
    """The order an answer schema asks for, read from its fields."""
    names = list(schema.model_fields)
    if "reasoning" not in names:
        return "answer only"
    return "reasoning first" if names.index("reasoning") < names.index("answer") else "answer first"


def to_answer(parsed: BaseModel, question: Question, valid_ids: Iterable[str] = ()) -> Answer:
    """The final answer event payload; citations restricted to ids the method actually showed."""
    data = parsed.model_dump()
    valid = set(valid_ids)
    cited = [i for i in data.get("cited_ids", []) if i in valid]
    said = {"rationale": data.get("reasoning", ""), "cited": cited, "answer_format": reply_format(type(parsed))}
    if question.options:
        choice = data["answer"]
        return Answer(choice=choice, text=question.options[choice], **said)
    return Answer(text=data["answer"], **said)
