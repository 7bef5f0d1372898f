"""A scripted LLM for control-flow tests: the real LLM class (parsing, repair, cache, usage) with the HTTP call
replaced by replies that stream in a few chunks and honour cancellation like the real client."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from core.engine.llm import LLM, Endpoint, LLMCancelled, LLMResponse
from core.engine.trace import Hit, Usage
from tests.waiting import Gate, patience, wait_until

if TYPE_CHECKING:  # imported where used: the provider matrix runs these fakes against older clients too
    from core.studio.eval.results import ItemResult

CHUNKS = 3  # pieces each scripted reply streams in

Reply = str | dict | Callable[[list[dict[str, str]]], str | dict]


class ScriptedLLM(LLM):
    """Replies come from rules (first rule whose text occurs in the prompt) or else from a queue.

    ``gate``: every call waits there until the test lets it on, after as many chunks as each of ``held_at`` says (0:
    before its first words, while it reads the prompt), so a test sees calls in flight for as long as it needs; a
    gate never opened holds a reply for good, so a call that ends anyway was cut. ``delay`` spreads a call over that
    many seconds where only the look of a working model matters (runs that record some time). A set cancel event
    ends the call with ``LLMCancelled`` at once, also while it waits at the gate.
    """

    def __init__(self, delay: float = 0.0, cache=None, gate: Gate | None = None, held_at: tuple[int, ...] = (0,)):
        super().__init__(
            Endpoint(base_url="http://scripted.invalid/v1", model="scripted"),
            cache=cache,
            cache_mode="auto" if cache is not None else "off",
        )
        self.delay = delay
        self.gate, self.held_at = gate, held_at
        self.rules: list[tuple[str, Reply]] = []
        self.queue: deque[Reply] = deque()
        self.calls: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self.active = 0
        self.max_active = 0

    def on(self, contains: str, reply: Reply) -> ScriptedLLM:
        self.rules.append((contains, reply))
        return self

    def enqueue(self, *replies: Reply) -> ScriptedLLM:
        self.queue.extend(replies)
        return self

    def _pick(self, messages: list[dict[str, str]]) -> Reply:
        prompt = "\n".join(m["content"] for m in messages)
        for contains, reply in self.rules:
            if contains in prompt:
                return reply
        with self._lock:
            if self.queue:
                return self.queue.popleft()
        raise AssertionError(f"ScriptedLLM has no reply for a prompt starting: {prompt[:300]!r}")

    def _request(self, messages, schema, params, on_text, cancel) -> LLMResponse:
        with self._lock:
            self.active += 1
            self.max_active = max(self.max_active, self.active)
            self.calls.append(
                {
                    "messages": messages,
                    "schema": schema,
                    "temperature": params["temperature"],
                    "seed": params.get("seed"),
                    "max_tokens": params["max_tokens"],
                    "params": dict(params),
                }
            )
        try:
            started = time.perf_counter()
            reply = self._pick(messages)
            if callable(reply):
                reply = reply(messages)
            text = reply if isinstance(reply, str) else json.dumps(reply)
            step = max(1, -(-len(text) // CHUNKS))
            for i, end in enumerate(range(step, len(text) + step, step)):
                if i in self.held_at and self.gate is not None:
                    self._hold(cancel, text[: end - step], started)
                if cancel is not None and cancel.wait(self.delay / CHUNKS):
                    raise LLMCancelled(
                        "the call was cancelled",
                        text[: end - step],
                        Usage(calls=1, seconds=round(time.perf_counter() - started, 3)),
                    )
                if self.delay and cancel is None:
                    time.sleep(self.delay / CHUNKS)
                if on_text is not None:
                    on_text(text[:end])
            usage = Usage(
                calls=1,
                prompt_tokens=sum(len(m["content"]) for m in messages) // 4,
                completion_tokens=len(text) // 4,
                seconds=round(time.perf_counter() - started, 3),
            )
            return LLMResponse(text=text, usage=usage, model="scripted", finish_reason="stop")
        finally:
            with self._lock:
                self.active -= 1

    def _hold(self, cancel: threading.Event | None, text: str, started: float) -> None:
        if not self.gate.wait(cancel):
            seconds = round(time.perf_counter() - started, 3)
            raise LLMCancelled("the call was cancelled", text, Usage(calls=1, seconds=seconds))


def together(parties: int) -> Callable[[Reply], Callable[[list[dict[str, str]]], str | dict]]:
    """Wraps replies so that each is given only once ``parties`` calls wait for theirs at the same moment: proof that
    they run concurrently. Calls made one after another never meet: the barrier breaks after the tests' patience
    and the calls fail. One meeting may wrap several rules' replies (three agents that work side by side)."""
    barrier = threading.Barrier(parties, timeout=patience())

    def wrap(reply: Reply) -> Callable[[list[dict[str, str]]], str | dict]:
        def meet(messages: list[dict[str, str]]) -> str | dict:
            barrier.wait()
            return reply(messages) if callable(reply) else reply

        return meet

    return wrap


def chunk_stream(text: str, prompt_tokens: int, completion_tokens: int, pieces: int = CHUNKS):
    """What the openai client's ``create(stream=True)`` gives: a closable iterable of chat completion chunks,
    the last one with usage only."""
    from contextlib import nullcontext

    from openai.types.chat import ChatCompletionChunk

    step = max(1, -(-len(text) // pieces))
    parts = [text[i : i + step] for i in range(0, len(text), step)] or [""]
    base = {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "fake"}
    chunks = [
        ChatCompletionChunk.model_validate(
            {
                **base,
                "choices": [
                    {"index": 0, "delta": {"content": part}, "finish_reason": "stop" if i == len(parts) - 1 else None}
                ],
            }
        )
        for i, part in enumerate(parts)
    ]
    chunks.append(
        ChatCompletionChunk.model_validate(
            {
                **base,
                "choices": [],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            }
        )
    )
    return nullcontext(chunks)


class ListRetriever:
    """A retriever over a fixed list of hits, for control-flow tests (ranks by word overlap). ``hold`` is called with
    each query (already in ``queries``) before it is answered: a gate's wait, so that a test acts mid-retrieval."""

    def __init__(self, hits: list[Hit], hold: Callable[[str], object] | None = None):
        self.hits = hits
        self.hold = hold
        self.corpora = sorted({h.corpus for h in hits})
        self.queries: list[str] = []

    def search(
        self, query: str, k: int, *, corpora=None, balanced=False, exclude=frozenset(), pin=frozenset(), per_corpus=None
    ) -> list[Hit]:
        self.queries.append(query)
        if self.hold is not None:
            self.hold(query)
        words = set(query.lower().split())
        pool = [h for h in self.hits if h.snippet_id not in exclude and (not corpora or h.corpus in corpora)]
        pool.sort(key=lambda h: (h.snippet_id not in pin, -len(words & set(h.text.lower().split()))))
        return [h.model_copy(update={"rank": i + 1, "pinned": h.snippet_id in pin}) for i, h in enumerate(pool[:k])]

    def similarity(self, query: str, texts: list[str]) -> list[float]:
        """Words shared with the query, as a share of the text's words."""
        words = set(query.lower().split())
        return [len(words & set(t.lower().split())) / max(len(t.split()), 1) for t in texts]


def make_hits(n: int, corpus: str = "teaching") -> list[Hit]:
    return [
        Hit(
            snippet_id=f"{corpus}-{i}",
            corpus=corpus,
            title=f"Doc {i}",
            text=f"fact number {i} about disease {i % 3}",
            rank=i + 1,
            score=1.0 / (i + 1),
        )
        for i in range(n)
    ]


def until_runs_end(at, timeout: float = 30.0):
    """Rerun an AppTest page once every run this server started has ended (a page no longer waits for its runs:
    a fragment redraws them, which AppTest does not tick)."""
    from core.engine.live_run import LiveRun
    from ui.common.jobs import runner

    if not runner().running(LiveRun):
        return at  # nothing was started (the page refused the input): what it said is on screen
    wait_until(lambda: not runner().running(LiveRun), "every run the page started to end", timeout)
    return at.run()


def item_result(**given: Any) -> ItemResult:
    """A benchmark result as ``eval_items`` holds it, with plain values for every column a test does not name."""
    from core.studio.eval.results import ItemResult

    plain: dict[str, Any] = {
        "config": "cot-0",
        "method": "cot",
        "dataset": "medqa",
        "qid": "q1",
        "run_id": "run-1",
        "model": "scripted",
        "params": "{}",
        "corpus": "[]",
        "gold": "A",
        "predicted": "A",
        "correct": 1,
        "status": "ok",
        "error_type": "",
        "calls": 1,
        "retrievals": 0,
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "seconds": 1.0,
        "finished": None,
        "asked": "q1",
        "preset": "",
    }
    return ItemResult(**{**plain, **given})
