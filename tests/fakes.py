"""A scripted LLM for control-flow tests: the real LLM class (parsing, repair, usage) with the HTTP call replaced."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from core.llm import LLM, Endpoint, LLMResponse
from core.trace import Hit, Usage

Reply = str | dict | Callable[[list[dict[str, str]]], str | dict]


class ScriptedLLM(LLM):
    """Replies come from rules (first rule whose text occurs in the prompt) or else from a queue.

    ``delay`` makes every call take that long, so tests can tell concurrent calls from sequential ones.
    """

    def __init__(self, delay: float = 0.0):
        super().__init__(Endpoint(base_url="http://scripted.invalid/v1", model="scripted"), cache_mode="off")
        self.delay = delay
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

    def _call(self, messages, schema, temperature, max_tokens, seed) -> LLMResponse:
        with self._lock:
            self.active += 1
            self.max_active = max(self.max_active, self.active)
            self.calls.append({"messages": messages, "schema": schema, "temperature": temperature})
        try:
            started = time.perf_counter()
            if self.delay:
                time.sleep(self.delay)
            reply = self._pick(messages)
            if callable(reply):
                reply = reply(messages)
            text = reply if isinstance(reply, str) else json.dumps(reply)
            usage = Usage(calls=1, prompt_tokens=sum(len(m["content"]) for m in messages) // 4,
                          completion_tokens=len(text) // 4, seconds=round(time.perf_counter() - started, 3))
            return LLMResponse(text=text, usage=usage, model="scripted")
        finally:
            with self._lock:
                self.active -= 1


class ListRetriever:
    """A retriever over a fixed list of hits, for control-flow tests (ranks by word overlap)."""

    def __init__(self, hits: list[Hit], delay: float = 0.0):
        self.hits = hits
        self.delay = delay
        self.corpora = sorted({h.corpus for h in hits})
        self.queries: list[str] = []

    def search(self, query: str, k: int, *, corpora=None, balanced=False, exclude=frozenset(),
               pin=frozenset()) -> list[Hit]:
        self.queries.append(query)
        if self.delay:
            time.sleep(self.delay)
        words = set(query.lower().split())
        pool = [h for h in self.hits if h.snippet_id not in exclude and (not corpora or h.corpus in corpora)]
        pool.sort(key=lambda h: (h.snippet_id not in pin, -len(words & set(h.text.lower().split()))))
        return [h.model_copy(update={"rank": i + 1, "pinned": h.snippet_id in pin}) for i, h in enumerate(pool[:k])]


def make_hits(n: int, corpus: str = "teaching") -> list[Hit]:
    return [Hit(snippet_id=f"{corpus}-{i}", corpus=corpus, title=f"Doc {i}", text=f"fact number {i} about disease {i % 3}",
                rank=i + 1, score=1.0 / (i + 1)) for i in range(n)]
