"""i-MedRAG (Xiong et al., 2024): for R rounds the model writes Q follow-up queries from the question and
the history so far; each query is answered by a small RAG step (retrieve, answer); the history keeps
query–answer pairs, not documents; the final answer comes from the question plus that history.

Defaults follow the authors' code (4 rounds × 3 queries, k=32 per query). Their queries are written as
free text and parsed by a second call; here one call returns them through a schema. Their follow-up
answers read the k snippets up to the model's context length (15,000 tokens for GPT-3.5-16k) and write
with no length limit; here each follow-up reads and writes as much as the backend's context window
allows once the final call must still hold every query–answer pair (``budgets``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial

from pydantic import BaseModel, Field, create_model

from core.engine.llm.profiles import Lengths
from core.engine.llm.tokens import CHARS_PER_TOKEN, tokens_of
from core.engine.methods.answer import READER, ReaderLengths, answer_schema, to_answer
from core.engine.methods.contract import PROMPT_TOKENS, MethodParams, MethodSpec, RunContext
from core.engine.methods.documents import read_docs
from core.engine.methods.knobs import budget_knob
from core.engine.methods.schemas import bounded, counted
from core.engine.methods.templates import in_at_most, messages, prompt
from core.engine.question import Question
from core.engine.settings import ASSUMED_WINDOW
from core.engine.stages import Numbered, Runner, Stage, StageNames
from core.engine.trace import Answer, Query

_BRACKETED = re.compile(r"\[([^\[\]\n]{1,80})\]")


class Names(StageNames):
    ROUND = Numbered("round {n}")  # a round's queries, their retrievals and answers
    FINAL_ANSWER = Runner.FINAL_ANSWER  # the Answerer's call carries the name of the runner's closing event


@dataclass(frozen=True)
class IMedRAGLengths:
    """What the questioner and the answerer write (None: no bound). The defaults are the toolkit's (the paper
    lengths)."""

    reader: ReaderLengths = READER["paper"]  # the final answer; the query-writing calls take its budget too
    analysis_chars: int | None = None  # the questioner's analysis
    analysis_sentences: int | None = None
    query_chars: int | None = None  # each follow-up query


LENGTHS: dict[Lengths, IMedRAGLengths] = {
    "compact": IMedRAGLengths(READER["compact"], 400, 3, 200),
    # The toolkit bounds neither its "## Analysis" nor its queries ("concise") and sends no max_tokens
    # (Teddy-XiongGZ/MedRAG src/template.py follow_up_instruction_ask, src/medrag.py MedRAG.i_medrag_answer).
    "paper": IMedRAGLengths(),
}


class IMedRAGParams(MethodParams):
    rounds: int = Field(4, ge=1, le=8, description="rounds of follow-up queries (R)")
    queries: int = Field(3, ge=1, le=6, description="follow-up queries per round (Q)")
    k: int = Field(32, ge=1, le=128, description="snippets retrieved per follow-up query")
    max_doc_chars: int = Field(
        60000,
        ge=500,
        le=600000,
        description="most characters of documents each follow-up answer reads (the authors' "
        "15,000 tokens); less when the backend's context window holds less",
    )
    answer_tokens: int | None = Field(
        None,
        ge=32,
        le=8192,
        description="most tokens each follow-up answer writes; empty (None) = as many as the "
        "context window leaves (the authors set no limit)",
    )
    max_tokens: int | None = budget_knob(
        "the query-writing and final calls", LENGTHS["compact"].reader.tokens, LENGTHS["paper"].reader.tokens, least=32
    )


QUERY_TOKENS = 80  # one history entry's query (at most 200 characters on the compact lengths, a line) and labels
# An answer takes at most this share of the window, the rest going to documents: the toolkit gives Llama-3's
# documents 7,168 of its 8,192 tokens, leaving 1,024 for the prompt's other parts and the answer.
ANSWER_SHARE = 1 / 8


class Budgets(BaseModel):
    """What each follow-up answer may read (characters of documents) and write (tokens)."""

    doc_chars: int
    answer_tokens: int


def budgets(
    params: IMedRAGParams,
    question: Question,
    window: int | None,
    reading_tokens: int | None = None,
    lengths: IMedRAGLengths = LENGTHS["paper"],
) -> Budgets:
    """The follow-up budgets for a context window of ``window`` tokens. The final call reads the question and all
    R × Q query–answer pairs and writes ``max_tokens``, so each answer gets an equal share of what that leaves (at
    most ``ANSWER_SHARE`` of the window); a follow-up then reads documents in whatever its answer leaves, and at
    most the backend's ``reading_tokens``. ``lengths`` give the final call's budget when the knob leaves it empty."""
    window = window or ASSUMED_WINDOW
    fixed = PROMPT_TOKENS + tokens_of(question.render()) + (params.max_tokens or lengths.reader.tokens)
    share = (window - fixed) // (params.rounds * params.queries) - QUERY_TOKENS
    answer = params.answer_tokens or max(min(share, int(window * ANSWER_SHARE)), 32)
    room = window - PROMPT_TOKENS - QUERY_TOKENS - answer
    if reading_tokens is not None:
        room = min(room, reading_tokens)
    return Budgets(doc_chars=max(min(params.max_doc_chars, room * CHARS_PER_TOKEN), 0), answer_tokens=answer)


class Lookup(BaseModel):
    """One history entry: a follow-up query, its brief answer, and the snippets that answer cites."""

    round: int
    query: str
    answer: str
    cited: list[str]

    def render(self) -> str:
        return f"Query: {self.query}\nAnswer: {self.answer}"


def queries_schema(n: int, lengths: IMedRAGLengths) -> type[BaseModel]:
    query = {"type": "string", "maxLength": lengths.query_chars} if lengths.query_chars else {"type": "string"}
    return create_model(
        "FollowUpQueries",
        analysis=(str, bounded(lengths.analysis_chars, "what is known so far and what is missing")),
        queries=counted(str, n, "queries", description=f"{n} short search queries", items=query),
    )


def lookup(query: str, round_no: int, params: IMedRAGParams, budget: Budgets, ctx: RunContext) -> Lookup:
    """The small RAG step: retrieve for the follow-up query and answer it (free text, never unparseable)."""
    stage = Names.ROUND(round_no)
    hits = ctx.retrieve(query, params.k, stage=stage, agent="Retriever", round=round_no)
    documents, shown = read_docs(hits, budget.doc_chars)
    reply = ctx.ask(
        messages(prompt("imedrag_lookup_system"), prompt("imedrag_lookup", documents=documents, query=query)),
        stage=stage,
        agent="Responder",
        role="responder",
        max_tokens=budget.answer_tokens,
        turn=round_no,
        read=shown,
        offered=len(hits),
    )
    answer = " ".join(reply.text.split())
    cited = [i for i in dict.fromkeys(_BRACKETED.findall(answer)) if i in shown]
    return Lookup(round=round_no, query=query, answer=answer, cited=cited)


def render_history(history: list[Lookup]) -> str:
    return "\n\n".join(entry.render() for entry in history) or "(no follow-up queries asked yet)"


def run(question: Question, params: IMedRAGParams, ctx: RunContext) -> Answer:
    system = prompt("imedrag_system")
    lengths = LENGTHS[ctx.llm.lengths]
    max_tokens = params.max_tokens or lengths.reader.tokens
    budget = budgets(params, question, ctx.llm.context_window, ctx.llm.reading_tokens, lengths)
    history: list[Lookup] = []
    for round_no in range(1, params.rounds + 1):
        reply = ctx.ask(
            messages(
                system,
                prompt(
                    "imedrag_queries",
                    history=render_history(history),
                    question=question.render(),
                    n=params.queries,
                    within=in_at_most(lengths.analysis_sentences),
                ),
            ),
            stage=Names.ROUND(round_no),
            agent="Questioner",
            role="questioner",
            schema=queries_schema(params.queries, lengths),
            temperature=0.0,
            max_tokens=max_tokens,
            turn=round_no,
        )
        queries = [q.strip() for q in reply.parsed.queries if q.strip()]
        for q in queries:
            ctx.emit(Names.ROUND(round_no), "Questioner", Query(text=q, purpose="follow-up", round=round_no))
        history += ctx.parallel(partial(lookup, round_no=round_no, params=params, budget=budget, ctx=ctx), queries)
    reply = ctx.ask(
        messages(
            system,
            prompt(
                "imedrag_final", history=render_history(history), question=question.render(), **lengths.reader.words()
            ),
        ),
        stage=Names.FINAL_ANSWER,
        agent="Answerer",
        role="answerer",
        schema=answer_schema(question, cite=True, order=params.answer_format, reader=lengths.reader),
        max_tokens=max_tokens,
    )
    return to_answer(reply.parsed, question, valid_ids={i for entry in history for i in entry.cited})


SPEC = MethodSpec(
    name="imedrag",
    label="i-MedRAG",
    description="Iterative follow-up queries: R rounds × Q queries, each answered by a RAG step; "
    "the final answer reads the query–answer history.",
    params=IMedRAGParams,
    run=run,
    stages=(
        Stage("Questioner writes Q follow-up queries", "query", (Names.ROUND,), agents=("Questioner",)),
        Stage("Retrieve for each query", "retrieve", (Names.ROUND,), agents=("Retriever",), many="× Q"),
        Stage(
            "Responder answers each query",
            "retrieve",
            (Names.ROUND,),
            agents=("Responder",),
            many="× Q",
            loop_to="Questioner writes Q follow-up queries",
            loop_label="next round (R rounds)",
        ),
        Stage("Answerer reads the query–answer history", "answer", (Names.FINAL_ANSWER,), agents=("Answerer",)),
    ),
    stage_names=Names,
)
