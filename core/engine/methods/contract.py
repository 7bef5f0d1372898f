"""The method contract, what a method author reads first: a method is one module exposing ``SPEC = MethodSpec(...)``
whose ``run(question, params, ctx)`` returns the final ``Answer``; its knobs are a ``MethodParams`` subclass whose
defaults are its paper's, and everything it does on the way (thinking, retrieving, reporting) goes through the
``RunContext`` so the trace records it.

The helpers a method builds its calls with live beside it: ``templates`` (prompt files and messages), ``documents``
(snippets as the model reads them), ``knobs`` (the knob fields every method shares), ``schemas`` (grammar-bounded
fields, and lists asked for by count: a backend may write them short, and the run goes on with what it wrote) and
``answer`` (the final reader's lengths and reply schema).
"""

from __future__ import annotations

import builtins
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from core.engine.call_queue import QUEUE, slots_of
from core.engine.llm import LLM, LLMCancelled, LLMError, LLMParseError, LLMResponse
from core.engine.llm.answer_formats import EMBEDDED_ANSWER_FORMAT, AnswerFormat
from core.engine.llm.tokens import CHARS_PER_TOKEN
from core.engine.question import Question
from core.engine.settings import ASSUMED_WINDOW
from core.engine.stages import Stage, StageNames
from core.engine.trace import AgentMessage, Answer, Event, Hit, Partial, Payload, Retrieval, Run, Usage

if TYPE_CHECKING:  # a protocol, named in annotations only: the methods need no search engine loaded
    from core.engine.retrieval.retriever import Retriever

T = TypeVar("T")
R = TypeVar("R")
Sink = Callable[[Event], None]
StreamSink = Callable[[Partial], None]

# Sizing what a call reads to the backend's context window (in characters, by ``core.engine.llm.tokens``' rule); the
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
                shortfalls=response.shortfalls,
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
