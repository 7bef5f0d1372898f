"""What every method shares: its spec, the run context it emits through, prompt templates, answer schemas.

A method is one module exposing ``SPEC = MethodSpec(...)`` whose ``run(question, params, ctx)``
returns the final ``Answer``; everything it does on the way goes through ``ctx`` so the trace
records it.
"""

from __future__ import annotations

import builtins
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path
from string import Template
from typing import Any, Literal, Protocol, TypeVar, Union

from pydantic import BaseModel, ConfigDict, Field, RootModel, create_model

from core.call_queue import QUEUE, slots_of
from core.llm import LLM, LLMCancelled, LLMError, LLMParseError, LLMResponse
from core.llm.answer_formats import EMBEDDED_ANSWER_FORMAT, AnswerFormat
from core.llm.profiles import Lengths
from core.llm.tokens import CHARS_PER_TOKEN
from core.question import Question
from core.settings import ASSUMED_WINDOW
from core.stages import Stage, StageNames
from core.trace import AgentMessage, Answer, Event, Hit, Partial, Payload, Retrieval, Run, Usage

T = TypeVar("T")
R = TypeVar("R")
Sink = Callable[[Event], None]
StreamSink = Callable[[Partial], None]

PROMPTS_DIR = Path(__file__).parent / "prompts"

# Sizing what a call reads to the backend's context window (in characters, by ``core.llm.tokens``' rule); the
# overhead covers a call's fixed prompt text and chat markup.
PROMPT_TOKENS = 250


class MethodParams(BaseModel):
    """Base of each method's knobs; a subclass's defaults are its paper's."""

    model_config = ConfigDict(extra="forbid")

    # Every paper has its final reader reason, then answer; on a small model the order alone moves accuracy, so
    # the order is a knob of every method (the answer event says which one answered). Empty: the backend's
    # measured best (``LLM.answer_format``), which the runner writes into the run's knobs before it starts.
    answer_format: AnswerFormat | None = Field(
        None,
        description="the final reader's reply: its reasoning then the "
        "answer (the papers'), the answer then its reasoning, or the answer "
        "alone; automatic: the backend's best (on the embedded model "
        f"{EMBEDDED_ANSWER_FORMAT}, measured; on an endpoint reasoning first)",
    )


class Method(Protocol):
    def __call__(self, question: Question, params: Any, ctx: RunContext) -> Answer: ...


@dataclass(frozen=True)
class MethodSpec:
    name: str  # registry key, e.g. "sema"
    label: str  # shown to users, e.g. "SEMA-RAG"
    description: str  # one line: what it does
    params: type[MethodParams]
    run: Method
    uses_retrieval: bool = True
    stages: tuple[Stage, ...] = ()  # the pipeline as the paper draws it, for the method map and Compare
    stage_names: type[StageNames] = StageNames  # every stage name its events carry (``stages`` match them)


class Retriever(Protocol):
    """What methods need from retrieval (core.retrieval implements it)."""

    corpora: list[str]

    def search(
        self,
        query: str,
        k: int,
        *,
        corpora: list[str] | None = None,
        balanced: bool = False,
        exclude: frozenset[str] = frozenset(),
        pin: frozenset[str] = frozenset(),
        per_corpus: int | None = None,
    ) -> list[Hit]: ...

    def similarity(self, query: str, texts: list[str]) -> list[float]:
        """How well each text matches the query, on the scale a balanced search re-scores its pool with."""
        ...


class RunCancelled(Exception):
    pass


class RunContext:
    """The one door a method uses to think, retrieve and report. Thread-safe.

    ``stream_sinks`` see every reply as it is written (``Partial``); setting ``cancel_event`` (or the ``cancel``
    event given) stops the run within about a second, the call in flight included."""

    def __init__(
        self,
        run: Run,
        llm: LLM,
        retriever: Retriever | None = None,
        sinks: Iterable[Sink] = (),
        exclude: Iterable[str] = (),
        max_workers: int = 4,
        stream_sinks: Iterable[StreamSink] = (),
        cancel: threading.Event | None = None,
        pin: Iterable[str] = (),
    ):
        self.run = run
        self.llm = llm
        self.retriever = retriever
        self.sinks = list(sinks)
        self.stream_sinks = list(stream_sinks)
        self.exclude = frozenset(exclude)  # snippet ids a what-if re-run drops
        self.pin = frozenset(pin)  # and those it forces into every retrieval
        self.max_workers = max_workers
        self.cancel_event = cancel if cancel is not None else threading.Event()
        # Calls that failed with no reply to show: their cost goes on the run's last event, so totals count them.
        self.failed_usage = Usage()
        self._lock = threading.Lock()

    # -- trace ---------------------------------------------------------------------
    def emit(self, stage: str, agent: str, payload: Payload, usage: Usage | None = None) -> Event:
        with self._lock:
            event = Event(
                run_id=self.run.id,
                seq=len(self.run.events),
                stage=stage,
                agent=agent,
                payload=payload,
                usage=usage or Usage(),
            )
            self.run.events.append(event)
            for sink in self.sinks:
                sink(event)
        return event

    def check_cancelled(self) -> None:
        if self.cancel_event.is_set():
            raise RunCancelled("the run was cancelled")

    # -- thinking ------------------------------------------------------------------
    def ask(
        self,
        messages: list[dict[str, str]],
        *,
        stage: str,
        agent: str,
        role: str,
        schema: type[BaseModel] | None = None,
        temperature: float = 0.0,
        max_tokens: int = 512,
        turn: int | None = None,
        seed: int | None = None,
        top_p: float | None = None,
        presence_penalty: float | None = None,
        read: list[str] | None = None,
        offered: int | None = None,
    ) -> LLMResponse:
        """One LLM call, streamed to the stream sinks and recorded as an ``agent_message`` event with its usage,
        and, for a call that reads snippets, which it ``read`` of the ``offered`` ones.
        A cancelled call raises ``RunCancelled`` (not an ``LLMError``, so a method's fallback cannot swallow it).
        A ``seed`` makes a sampled call's reply cacheable, so a re-run of the same request reads the same reply."""
        self.check_cancelled()
        started = time.time()
        in_flight = QUEUE.call(
            self.run.id, stage, agent, backend=self.llm.backend, where=self.llm.where, slots=slots_of(self.llm)
        )

        def show(text: str, done: bool = False) -> None:
            partial = Partial(
                run_id=self.run.id, stage=stage, agent=agent, role=role, text=text, started=started, done=done
            )
            for sink in self.stream_sinks:
                sink(partial)

        try:
            with in_flight as call:  # screens see it waiting, reading its prompt, then writing

                def written(text: str) -> None:
                    call.writing = True
                    show(text)

                response = self.llm.complete(
                    messages,
                    schema=schema,
                    temperature=temperature,
                    max_tokens=max_tokens,
                    seed=seed,
                    top_p=top_p,
                    presence_penalty=presence_penalty,
                    on_text=written,
                    cancel=self.cancel_event,
                )
        except LLMError as exc:
            show(exc.raw, done=True)
            if exc.raw or isinstance(exc, LLMParseError):  # the unusable or unfinished reply stays in the trace
                self.emit(
                    stage,
                    agent,
                    AgentMessage(role=role, text=exc.raw, turn=turn, read=read, offered=offered),
                    exc.usage,
                )
            else:
                with self._lock:
                    self.failed_usage += exc.usage
            if isinstance(exc, LLMCancelled):
                raise RunCancelled("the run was cancelled") from exc
            raise
        show(response.text, done=True)
        data = response.parsed.model_dump() if response.parsed is not None else None
        self.emit(
            stage,
            agent,
            AgentMessage(
                role=role,
                text=response.text,
                data=data,
                turn=turn,
                read=read,
                offered=offered,
                cut=response.finish_reason == "length",
                mode=response.mode,
                notes=response.notes,
                reasoning=response.reasoning,
                unseeded=response.unseeded,
            ),
            response.usage,
        )
        return response

    # -- reading budgets ------------------------------------------------------------
    def window_chars(self, reserved_tokens: int) -> int:
        """Characters of documents that fit one call's context window once ``reserved_tokens`` (the rest of its
        prompt and its reply) are set aside."""
        window = self.llm.context_window or ASSUMED_WINDOW
        return max(window - PROMPT_TOKENS - reserved_tokens, 0) * CHARS_PER_TOKEN

    def reading_chars(self, cap: int | None, reserved_tokens: int) -> int:
        """Characters of documents one call reads: as many as the backend takes (its window once
        ``reserved_tokens`` are set aside, and at most its ``reading_tokens``), and at most ``cap`` when a method's
        knob sets one."""
        chars = self.window_chars(reserved_tokens)
        if (limit := self.llm.reading_tokens) is not None:
            chars = min(chars, limit * CHARS_PER_TOKEN)
        return chars if cap is None else min(cap, chars)

    # -- retrieving ----------------------------------------------------------------
    def retrieve(
        self,
        query: str,
        k: int,
        *,
        stage: str,
        agent: str,
        round: int | None = None,
        corpora: list[str] | None = None,
        balanced: bool = False,
        per_corpus: int | None = None,
    ) -> list[Hit]:
        """One retrieval, recorded as a ``retrieval`` event; excluded snippets never come back, pinned ones always do.
        ``per_corpus``: with ``balanced``, how many of each corpus's best are pooled before the k best are kept."""
        self.check_cancelled()
        if self.retriever is None:
            raise RuntimeError("this method needs a corpus, but none is configured")
        started = time.perf_counter()
        extra: dict[str, Any] = {"pin": self.pin} if self.pin else {}  # only a what-if re-run needs one that pins
        if per_corpus is not None:
            extra["per_corpus"] = per_corpus
        hits = self.retriever.search(query, k, corpora=corpora, balanced=balanced, exclude=self.exclude, **extra)
        usage = Usage(retrievals=1, seconds=builtins.round(time.perf_counter() - started, 3))  # `round` is the keyword
        self.emit(stage, agent, Retrieval(query=query, hits=hits, round=round), usage)
        return hits

    # -- concurrency ---------------------------------------------------------------
    def parallel(self, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
        """Calls the paper makes independently, made concurrently; results in input order."""
        items = list(items)
        if len(items) <= 1:
            return [fn(item) for item in items]
        # When all start at once, their first calls read the prompt prefix they share once (``LLM.fan_out``).
        group = self.llm.fan_out(len(items)) if self.max_workers >= len(items) else None
        with ThreadPoolExecutor(max_workers=min(self.max_workers, len(items))) as pool:
            return list(pool.map(partial(group.run, fn) if group else fn, items))


# -- prompts ---------------------------------------------------------------------------


@cache
def _template(name: str) -> Template:
    return Template((PROMPTS_DIR / f"{name}.txt").read_text(encoding="utf-8"))


def sample_seed(temperature: float, seed: int, offset: int = 0) -> int | None:
    """The run's seed for a sampled call, so the response cache can replay it; none for a greedy call. Calls that
    share a prompt add their offset to the seed spaced by 1,000, so runs with neighbouring seeds share no sample."""
    return seed * 1000 + offset if temperature > 0 else None


def sampling(temperature: float, seed: int, offset: int = 0) -> dict[str, Any]:
    """A call's temperature, with the run's seed when it samples (``sample_seed``)."""
    return {"temperature": temperature, "seed": sample_seed(temperature, seed, offset)}


def prompt(name: str, **values: Any) -> str:
    """Fill ``prompts/<name>.txt`` ($placeholders, so JSON braces need no escaping)."""
    return _template(name).substitute(**{k: str(v) for k, v in values.items()})


def messages(system: str, user: str, instructions: str = "") -> list[dict[str, str]]:
    """A system and a user message. Agents of one method share its system prompt and start their user text with
    what they share (documents, question, history), so the server reads that prefix once for all of them; a role's
    own standing instructions (``instructions``) go last, after the user text."""
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": f"{user.rstrip()}\n\n{instructions.strip()}" if instructions else user},
    ]


# -- documents and answers -------------------------------------------------------------


MIN_TAIL_CHARS = 300  # a shorter cut of the document that no longer fits says too little to be worth reading


def format_docs(hits: list[Hit], max_chars: int) -> str:
    """Numbered documents by snippet id, best first, filling a character budget:
    the first document that does not fit whole is cut to the room left, as long as that room is worth reading,
    so one long snippet cannot leave the budget mostly empty."""
    parts, used = [], 0
    for hit in hits:
        block = f"[{hit.snippet_id}] {hit.title}\n{hit.text}".strip()
        room = max_chars - used
        if len(block) > room:
            if room >= MIN_TAIL_CHARS or not parts:
                parts.append(block[: max(room - 1, 1)].rstrip() + "…")
            break
        parts.append(block)
        used += len(block) + 2
    return "\n\n".join(parts)


NO_DOCUMENTS = "(no documents were found)"


def read_docs(hits: list[Hit], max_chars: int) -> tuple[str, list[str]]:
    """The documents as the model reads them, and the ids of those that fit the budget."""
    text = format_docs(hits, max_chars)
    shown = [h.snippet_id for h in hits if f"[{h.snippet_id}]" in text]
    return text or NO_DOCUMENTS, shown


def budget_knob(what: str, compact: int, paper: int, *, least: int = 64, tail: str = "") -> Any:
    """A method's ``max_tokens`` knob: the tokens ``what`` may take; empty (the default) means the backend's lengths'
    (``compact`` on the embedded model, ``paper`` on an endpoint)."""
    return Field(
        None,
        ge=least,
        le=4096,
        description=f"budget for {what}; empty = the backend's ({compact:,} on the embedded model, {paper:,} on an "
        f"endpoint{tail})",
    )


def seed_knob(draws: str = "replies", each: str = "") -> Any:
    """A method's ``seed`` knob, where some of its agents sample: ``draws`` names what another seed draws anew,
    ``each`` what else has a seed of its own."""
    return Field(
        0,
        ge=0,
        description=f"sampling seed of the agents above temperature 0{each}: the same seed replays a saved run from "
        f"the response cache; another seed draws new {draws}",
    )


def reading_knob(reader: str) -> Any:
    """A method's ``max_doc_chars`` knob. The papers read as many snippets as their model's context holds, so
    empty (the default) means as many as the backend takes per call (``RunContext.reading_chars``)."""
    from core.llm.embedded import SHIPPED

    laptop = SHIPPED.read_tokens * CHARS_PER_TOKEN
    return Field(
        None,
        ge=500,
        le=600000,
        description=f"most characters of documents {reader} reads; empty = as "
        f"many as the backend takes per call (its context window; {laptop:,} characters on the embedded model)",
    )


MAX_CITED = 8
REASONING_CHARS = 600  # a final reply's reasoning on the compact lengths, as the grammar bounds it: about 130 tokens

# What an endpoint may write where the authors set no limit (their OpenAI calls send no max_tokens): the room the
# MedRAG toolkit leaves beside the documents for the rest of the prompt and the reply, 8,192 - 7,168 tokens for
# Llama-3-8B (Teddy-XiongGZ/MedRAG src/medrag.py, MedRAG.__init__: max_length - context_length).
PAPER_REPLY_TOKENS = 1024

NUMBERS = {2: "two", 3: "three", 4: "four", 5: "five", 7: "seven"}


def at_most(sentences: int) -> str:
    return f"at most {NUMBERS[sentences]} sentences"


def in_at_most(sentences: int | None) -> str:
    """What a prompt says of a step's length: " in at most three sentences", or nothing where it has no bound."""
    return f" in {at_most(sentences)}" if sentences else ""


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
# discuss_rag_system), or the project's, which MedRGAG's reader also has (ll0ruc/MedRGAG src/template.py rag_template).
DEFINITE_ANSWER = "Your responses will be used for research purposes only, so please have a definite answer."
OWN_KNOWLEDGE = "Where the documents do not help, rely on your own knowledge."


def reasoning_cut(text: str) -> bool:
    """Whether a reasoning ends at the grammar's bound mid-sentence (its JSON escapes count there, so a little
    short of it): the model had more to say, and a reader should see that it stops, not that it ends there. A longer
    one was written with no bound (the papers' lengths)."""
    return REASONING_CHARS * 0.95 <= len(text) <= REASONING_CHARS and not text.rstrip().endswith(
        (".", "!", "?", '"', ")", "]")
    )


def bounded(chars: int | None, description: str | None = None) -> Any:
    """A text field of at most ``chars`` characters (None: any length). The bound reaches the server's grammar only,
    so a longer text from a backend that does not hold to it still parses."""
    return Field(description=description, json_schema_extra={"maxLength": chars} if chars else None)


def one_of(name: str, *shapes: type[BaseModel]) -> type[BaseModel]:
    """A reply the model writes in one of several shapes, e.g. a decline that ends at the decision and an acceptance
    that goes on to say more: the grammar holds the model to one of them, and the parsed reply is that shape."""
    return type(name, (RootModel[Union[shapes]],), {"__module__": __name__})  # noqa: UP007 - shapes known at run time


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
